//! Reading a session file through its open (locked) descriptor, never
//! moving its position: the records, parsed a chunk at a time so a large
//! file is never held whole beside the records read from it, and the end
//! of the file from its last complete line on, which is all an append
//! needs to know after a failed write.

use std::fs::File;
use std::io::{self, ErrorKind};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::SessionError;
use super::format::{FileParser, Loaded, Tail};

/// What one read asks for.
const CHUNK: usize = 64 * 1024;

/// The first `len` bytes of `file` (the size seen when it was opened) read
/// and parsed a chunk at a time.
pub(super) fn read_parsed(
    file: &File,
    path: &Path,
    len: u64,
) -> Result<(Loaded, Tail), SessionError> {
    let read_error = |error| SessionError::Read {
        path: path.to_owned(),
        error,
    };
    let mut parser = FileParser::new(path);
    let mut chunk = vec![0u8; CHUNK];
    // The line read so far, when it goes on past a chunk's end.
    let mut line: Vec<u8> = Vec::new();
    let mut offset = 0u64;
    while offset < len {
        let want = usize::try_from(len - offset).map_or(CHUNK, |left| left.min(CHUNK));
        let Some(buffer) = chunk.get_mut(..want) else {
            break;
        };
        let read = match file.read_at(buffer, offset) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) => return Err(read_error(error)),
        };
        offset += read as u64;
        let mut pieces = buffer
            .get(..read)
            .unwrap_or_default()
            .split(|b| *b == b'\n');
        let mut current = pieces.next().unwrap_or_default();
        for next in pieces {
            if line.is_empty() {
                parser.line(current)?;
            } else {
                line.extend_from_slice(current);
                parser.line(&line)?;
                line.clear();
            }
            current = next;
        }
        line.extend_from_slice(current);
    }
    parser.finish(&line)
}

/// The end of the first `len` bytes of `file`, from before its last
/// complete line on (or from the start): what [`super::format::tail_of`]
/// reads, without reading the rest of the file.
pub(super) fn read_end(file: &File, len: u64) -> io::Result<Vec<u8>> {
    let mut size = CHUNK as u64;
    loop {
        let start = len.saturating_sub(size);
        let bytes = read_range(file, start, len)?;
        let known = match bytes.split_last() {
            None => true,
            // Torn: the last byte says it all.
            Some((last, _)) if *last != b'\n' => true,
            // The last line starts after a newline read here.
            Some((_, body)) => body.contains(&b'\n'),
        };
        if known || start == 0 {
            return Ok(bytes);
        }
        size = size.saturating_mul(2);
    }
}

/// The bytes from `start` to `end`, fewer when the file is shorter.
fn read_range(file: &File, start: u64, end: u64) -> io::Result<Vec<u8>> {
    let len = usize::try_from(end.saturating_sub(start)).map_err(io::Error::other)?;
    let mut bytes = vec![0u8; len];
    let mut filled = 0;
    while filled < bytes.len() {
        let Some(rest) = bytes.get_mut(filled..) else {
            break;
        };
        match file.read_at(rest, start + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    bytes.truncate(filled);
    Ok(bytes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::session::format::{parse_file, tail_of};
    use std::fs;

    #[test]
    fn a_file_read_in_chunks_or_from_its_end_reads_as_it_does_whole() {
        let dir = tempfile::TempDir::new().unwrap();
        let header = r#"{"type":"session","id":"0123456789abcdef0123456789abcdef","started":1,"project":"/p","model":"m"}"#;
        let user = |text: &str| format!(r#"{{"type":"user","text":"{text}"}}"#);
        // Lines past a chunk's end, and one of several chunks.
        let long = user(&"x".repeat(70_000));
        let longer = user(&"y".repeat(200_000));
        let files: Vec<String> = vec![
            String::new(),
            format!("{header}\n"),
            format!("{header}\n{}\n{long}\n{longer}\n", user("one")),
            format!("{header}\n{long}\n{{\"ty"),
            format!("{header}\n{long}\n{{\"ty\n"),
            format!("{header}\n{{\"ty\n{{\"type\":\"torn\"}}\n{longer}\n"),
            format!("{header}\n{{\"ty\n\n{{\"type\":\"torn\"}}\n"),
            format!("{header}\nnot json\n{}\n", user("two")),
            format!("{header}\nnot json\n\n  \n"),
            format!("{header}\nnot json\n{{\"ty"),
            format!("{header}\n{header}\n"),
            format!("{}\n{header}\n", user("first")),
            "{\"type\":\"sess".to_string(),
            format!("{header}\n   "),
            // A last line longer than a chunk: invalid, then valid.
            format!("{header}\n{}\n", "z".repeat(150_000)),
            format!("{header}\n{}\n{longer}\n", "z".repeat(10)),
        ];
        for (n, text) in files.iter().enumerate() {
            let path = dir.path().join(format!("{n}.jsonl"));
            fs::write(&path, text).unwrap();
            let file = File::open(&path).unwrap();
            let chunked = read_parsed(&file, &path, text.len() as u64).map_err(|e| e.to_string());
            let whole = parse_file(&path, text.as_bytes())
                .map(|loaded| (loaded, tail_of(text.as_bytes())))
                .map_err(|e| e.to_string());
            assert_eq!(chunked, whole, "file {n}");
            // The end alone tells how the file ends, as the whole does.
            let end = read_end(&file, text.len() as u64).unwrap();
            assert!(text.as_bytes().ends_with(&end), "file {n}");
            assert_eq!(tail_of(&end), tail_of(text.as_bytes()), "file {n}");
        }
    }
}
