//! The prompts typed in one project, kept in mino's home so Up brings them
//! back in the next run: one JSON string a line, appended and fsynced one
//! prompt at a time by a writer thread of its own (the async runtime never
//! waits for the disk), in a file created 0600 that refuses a symbolic
//! link. A prompt longer than `MAX_KEPT` bytes (a large paste) is never
//! written. Never reads or writes anything but that file.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use sha2::{Digest, Sha256};

use crate::home::{Home, create_private_file};

/// Prompts longer than this many bytes are not kept.
pub const MAX_KEPT: usize = 64 * 1024;
/// At most this many of the newest prompts are loaded.
pub const MAX_LOADED: usize = 1000;
/// Only this much of the file's end is read at start.
const MAX_READ: u64 = 4 * 1024 * 1024;

/// The history file of the project at `project` (an absolute path).
pub fn file_for(home: &Home, project: &Path) -> PathBuf {
    let digest = Sha256::digest(project.as_os_str().as_encoded_bytes());
    home.root()
        .join("history")
        .join(format!("{}.jsonl", &hex::encode(digest)[..32]))
}

/// The kept prompts, oldest first (the newest `MAX_LOADED`). A missing file
/// is an empty history; lines that do not parse are skipped.
pub fn load(path: &Path) -> io::Result<Vec<String>> {
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    let start = len.saturating_sub(MAX_READ);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(MAX_READ).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines();
    if start > 0 {
        // The first line read may be a part of one.
        lines.next();
    }
    let prompts: Vec<String> = lines
        .filter_map(|line| serde_json::from_str::<String>(line).ok())
        .collect();
    let skip = prompts.len().saturating_sub(MAX_LOADED);
    Ok(prompts.into_iter().skip(skip).collect())
}

/// Whether `prompt` may be kept.
pub fn keeps(prompt: &str) -> bool {
    !prompt.trim().is_empty() && prompt.len() <= MAX_KEPT
}

/// Appends one prompt and waits until it is on disk.
pub fn append(path: &Path, prompt: &str) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        builder.create(dir)?;
    }
    let mut file = create_private_file(path)?;
    let mut line = serde_json::to_string(prompt).map_err(io::Error::other)?;
    line.push('\n');
    file.write_all(line.as_bytes())?;
    file.sync_data()
}

/// The writer thread's sending end: each prompt sent is appended in order.
/// Dropping it lets the thread finish what was sent and end.
#[derive(Debug)]
pub struct Writer {
    prompts: mpsc::Sender<String>,
    thread: std::thread::JoinHandle<()>,
}

impl Writer {
    /// Starts the thread that appends to `path`.
    pub fn spawn(path: PathBuf) -> io::Result<Self> {
        let (prompts, rx) = mpsc::channel::<String>();
        let thread = std::thread::Builder::new()
            .name("mino-history".into())
            .spawn(move || {
                for prompt in rx {
                    if let Err(e) = append(&path, &prompt) {
                        tracing::warn!(path = %path.display(), error = %e, "could not keep a prompt");
                    }
                }
            })?;
        Ok(Self { prompts, thread })
    }

    /// Waits until every prompt sent is on disk. Blocking.
    pub fn finish(self) {
        drop(self.prompts);
        // A panic in the thread has already been reported by it.
        let _ = self.thread.join();
    }

    /// Keeps `prompt`, unless it is too long to keep.
    pub fn keep(&self, prompt: &str) {
        if keeps(prompt) {
            // A writer that has stopped keeps nothing more.
            let _ = self.prompts.send(prompt.to_string());
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn prompts_come_back_in_order_from_a_private_file() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path()).unwrap();
        let path = file_for(&home, Path::new("/home/u/project"));
        assert_ne!(path, file_for(&home, Path::new("/home/u/other")));
        assert_eq!(load(&path).unwrap(), Vec::<String>::new());
        for prompt in ["first", "two\nlines \"quoted\""] {
            append(&path, prompt).unwrap();
        }
        assert_eq!(load(&path).unwrap(), vec!["first", "two\nlines \"quoted\""]);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
    }

    #[test]
    fn a_large_paste_is_never_kept_and_a_planted_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path()).unwrap();
        let path = file_for(&home, Path::new("/p"));
        let writer = Writer::spawn(path.clone()).unwrap();
        writer.keep("short");
        writer.keep(&"x".repeat(MAX_KEPT + 1));
        writer.keep("after");
        writer.finish();
        assert_eq!(load(&path).unwrap(), vec!["short", "after"]);
        let target = dir.path().join("elsewhere");
        let linked = file_for(&home, Path::new("/q"));
        std::os::unix::fs::symlink(&target, &linked).unwrap();
        assert!(append(&linked, "x").is_err());
        assert!(!target.exists());
    }
}
