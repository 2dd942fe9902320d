//! Where the paths an MCP call's string arguments name really lead. A
//! server opens what it is given: it may strip a `file:` URI (any case,
//! with or without `localhost`), percent-decode it, expand `~`, normalise
//! `..` lexically, follow a link in any component, follow a dangling link
//! to create its target, or create a file below a linked directory. Each of
//! those readings is resolved here, link by link, as far as the path
//! exists, so the decision judges where the call would land. Reads only
//! link targets and file types; never opens a file and never decides.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// The most argument strings a call may hold that could name a path; a
/// call with more is refused rather than judged on part of them.
pub const RESOLVED_STRINGS: usize = 1024;
/// Longer strings cannot be opened as one path (PATH_MAX on Linux).
const RESOLVED_LENGTH: usize = 4096;
/// Links followed in one path before giving up (the kernel's own limit).
const MAX_HOPS: usize = 40;

/// More argument strings than [`RESOLVED_STRINGS`]: the call is refused.
#[derive(Debug, thiserror::Error)]
#[error(
    "the arguments hold {count} strings; mino checks at most {RESOLVED_STRINGS} for paths through links, so the call was not sent. Send fewer strings in one call."
)]
pub struct TooManyStrings {
    pub count: usize,
}

/// The real paths behind `strings` where one differs from the path as
/// written: a link in any component, a dangling link, or a file to be
/// created below a linked directory. `project` is where relative paths
/// start; `home` is what `~` means.
pub fn resolved_links(
    strings: &[String],
    project: &Path,
    home: Option<&Path>,
) -> Result<Vec<String>, TooManyStrings> {
    let mut candidates: Vec<&str> = strings
        .iter()
        .map(String::as_str)
        .filter(|s| !s.is_empty())
        .collect();
    candidates.sort_unstable();
    candidates.dedup();
    if candidates.len() > RESOLVED_STRINGS {
        return Err(TooManyStrings {
            count: candidates.len(),
        });
    }
    let mut found = Vec::new();
    for text in candidates {
        for path in readings(text, project, home) {
            let written = lexical(&path);
            if written.as_os_str().len() > RESOLVED_LENGTH {
                continue;
            }
            // Physically (`..` after a link goes up from its target), and
            // as a server that normalises first would open it.
            // Kept where it differs from the path as written (`..` and
            // links resolved): a relative `../.mino/x` names mino's home.
            for start in [&path, &written] {
                if let Some(real) = real_path(start)
                    && real != path
                {
                    let real = real.to_string_lossy().into_owned();
                    if !found.contains(&real) {
                        found.push(real);
                    }
                }
            }
        }
    }
    Ok(found)
}

/// The absolute paths `text` may stand for: as written and percent-decoded,
/// without a `file:` scheme, with `~` expanded, relative to `project`.
fn readings(text: &str, project: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let decoded = percent_encoding::percent_decode_str(text).decode_utf8_lossy();
    let mut out = Vec::new();
    for reading in [text, decoded.as_ref()] {
        let path = without_scheme(reading);
        let mut paths = vec![path];
        // A URI's query and fragment are not part of the file's path.
        if path.len() != reading.len()
            && let Some(end) = path.find(['?', '#'])
        {
            paths.push(&path[..end]);
        }
        for path in paths {
            let path = absolute(path, project, home);
            if !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

/// `path` as an absolute path: `~` is `home`, relative starts at `project`.
fn absolute(path: &str, project: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => project.join(path),
    }
}

/// The path of a `file:` URI (`file:///p`, `file://localhost/p`,
/// `file:/p`, any case), or `text` itself.
fn without_scheme(text: &str) -> &str {
    let Some(head) = text.get(..5) else {
        return text;
    };
    if !head.eq_ignore_ascii_case("file:") {
        return text;
    }
    let rest = &text[5..];
    let Some(after) = rest.strip_prefix("//") else {
        return rest;
    };
    match after.get(..9) {
        Some(host) if host.eq_ignore_ascii_case("localhost") => &after[9..],
        _ => after,
    }
}

/// `path` with `.` dropped and `..` taking away the component before it,
/// without looking at the disk.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Where the absolute `path` leads: every link followed, `..` taken
/// physically, as far as components exist; the missing rest is appended
/// as written. `None` when the links loop or cannot be read.
fn real_path(path: &Path) -> Option<PathBuf> {
    let mut pending: Vec<OsString> = components(path);
    let mut current = PathBuf::from("/");
    let mut hops = 0;
    let mut missing = false;
    while let Some(name) = pending.pop() {
        if name == ".." {
            current.pop();
            continue;
        }
        if name == "." {
            continue;
        }
        let next = current.join(&name);
        if missing {
            current = next;
            continue;
        }
        match std::fs::symlink_metadata(&next) {
            Err(_) => {
                missing = true;
                current = next;
            }
            Ok(meta) if meta.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_HOPS {
                    return None;
                }
                let target = std::fs::read_link(&next).ok()?;
                if target.is_absolute() {
                    current = PathBuf::from("/");
                }
                pending.extend(components(&target));
            }
            Ok(_) => current = next,
        }
    }
    Some(current)
}

/// The components of `path` after its root, last first (a stack).
fn components(path: &Path) -> Vec<OsString> {
    let mut parts: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect();
    parts.reverse();
    parts
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    struct Tree {
        _dir: tempfile::TempDir,
        project: PathBuf,
        home: PathBuf,
    }

    /// A project with `.env`, `notes.md -> .env`, `keys -> HOME/.mino`
    /// and a dangling `later.md -> .env.local`.
    fn tree() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let project = root.join("proj");
        let home = root.join("home");
        std::fs::create_dir_all(project.join("docs")).unwrap();
        std::fs::create_dir_all(home.join(".mino")).unwrap();
        std::fs::write(project.join(".env"), "SECRET=1").unwrap();
        symlink(".env", project.join("notes.md")).unwrap();
        symlink(home.join(".mino"), project.join("keys")).unwrap();
        symlink(".env.local", project.join("later.md")).unwrap();
        Tree {
            _dir: dir,
            project,
            home,
        }
    }

    fn resolve(tree: &Tree, items: &[&str]) -> Vec<String> {
        resolved_links(&strings(items), &tree.project, Some(&tree.home)).unwrap()
    }

    #[test]
    fn every_spelling_of_a_link_to_env_leads_to_env() {
        let t = tree();
        let env = t.project.join(".env").display().to_string();
        let abs = t.project.join("notes.md").display().to_string();
        let in_home = t.home.join("link.md");
        symlink(t.project.join(".env"), &in_home).unwrap();
        for given in [
            "notes.md".to_string(),
            "./docs/../notes.md".to_string(),
            "notes%2Emd".to_string(),
            "notes.md/".to_string(),
            abs.clone(),
            format!("file://{abs}"),
            format!("FILE://{abs}"),
            format!("file://localhost{abs}"),
            format!("file:{abs}"),
            format!("file://{}", abs.replace(".md", "%2Emd")),
            format!("file://{abs}?raw=1#top"),
            "~/link.md".to_string(),
            format!("{}notes.md", "./".repeat(2100)),
        ] {
            assert_eq!(
                resolve(&t, &[&given]),
                std::slice::from_ref(&env),
                "{given}"
            );
        }
    }

    #[test]
    fn a_file_to_be_created_through_a_link_is_judged_where_it_lands() {
        let t = tree();
        assert_eq!(
            resolve(&t, &["keys/config.toml"]),
            [t.home.join(".mino/config.toml").display().to_string()]
        );
        assert_eq!(
            resolve(&t, &["later.md"]),
            [t.project.join(".env.local").display().to_string()]
        );
        assert!(resolve(&t, &["docs/new.md", "plain text", ".env"]).is_empty());
        assert_eq!(
            resolve(&t, &["../home/.mino/config.toml"]),
            [t.home.join(".mino/config.toml").display().to_string()]
        );
    }

    #[test]
    fn a_link_after_many_other_strings_is_still_resolved_or_the_call_refused() {
        let t = tree();
        let mut items: Vec<String> = (0..300).map(|n| format!("filler {n}")).collect();
        items.push("notes.md".into());
        assert_eq!(
            resolved_links(&items, &t.project, Some(&t.home)).unwrap(),
            [t.project.join(".env").display().to_string()]
        );
        let many: Vec<String> = (0..=RESOLVED_STRINGS).map(|n| n.to_string()).collect();
        let refused = resolved_links(&many, &t.project, Some(&t.home)).unwrap_err();
        assert_eq!(refused.count, RESOLVED_STRINGS + 1);
    }

    #[test]
    fn a_link_loop_is_left_alone() {
        let t = tree();
        symlink("b", t.project.join("a")).unwrap();
        symlink("a", t.project.join("b")).unwrap();
        assert!(resolve(&t, &["a"]).is_empty());
    }
}
