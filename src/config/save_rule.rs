//! A remembered answer saved as a `[[rules]]` entry of the user's settings
//! (`/permissions save N`): the rule's TOML, the whole file with it
//! appended and checked to load exactly as mino would load it, and the
//! atomic write. The only place mino writes a settings file, and only
//! after the person said yes to the text shown.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::policy::shell::list::literal_list;
use crate::policy::{Grant, GrantScope};
use crate::small_file::{Links, SETTINGS_LIMIT, read_text};

use super::settings::Settings;
use super::source::SourceFile;

fn quoted(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// The `[[rules]]` entry that says for good what `grant` says for now, or
/// why it cannot be one.
pub fn rule_for(grant: &Grant) -> Result<String, String> {
    let tool = grant.tool.as_str();
    if tool.contains('/') {
        return Err(format!(
            "{tool} is an asked agent's tool; its rules belong in that agent's own settings"
        ));
    }
    if tool == crate::policy::PRIVATE_FETCH_KEY {
        return Err(
            "a fetch to a private address asks every time; no rule can allow it".to_string(),
        );
    }
    let decision = match grant.scope {
        GrantScope::Session => "allow",
        GrantScope::Run => "deny",
    };
    let mut text = format!("[[rules]]\ntool = {}\n", quoted(tool));
    match (&grant.command, grant.scope) {
        (Some(command), GrantScope::Session) => {
            let Some(list) = literal_list(command) else {
                return Err(format!(
                    "the command {command:?} is not one plain command a rule can match (no pipes, substitutions, redirections or globs)"
                ));
            };
            let [argv] = list.as_slice() else {
                return Err(format!(
                    "the command {command:?} is a list; save each of its commands as a rule of its own"
                ));
            };
            let words: Vec<String> = argv.iter().map(|w| quoted(w)).collect();
            text.push_str(&format!("command = [{}]\n", words.join(", ")));
            text.push_str(&format!("decision = \"{decision}\"\n"));
            text.push_str(&format!("match = [{}]\n", quoted(command)));
        }
        (None, GrantScope::Session) if tool == "bash" => {
            return Err(
                "bash allowed for the whole session names no command; a rule that allows bash needs the words of the command it allows (command = [\"cargo\", \"test\"])"
                    .to_string(),
            );
        }
        _ => text.push_str(&format!("decision = \"{decision}\"\n")),
    }
    Ok(text)
}

/// The settings file `file` with `rule` appended, checked to load as the
/// user's settings; the error names what would not load.
pub fn appended(file: &Path, rule: &str) -> Result<String, String> {
    let current = read_text(file, SETTINGS_LIMIT, Links::Follow)
        .map_err(|e| e.to_string())?
        .unwrap_or_default();
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(rule);
    let src = SourceFile::parse(file, text.clone()).map_err(|e| e.to_string())?;
    super::validate::apply_user(&mut Settings::default(), &src).map_err(|e| e.to_string())?;
    Ok(text)
}

/// Writes `text` to `file` atomically: a new file beside it, synced, then
/// renamed over it. A settings file that is a link (dotfiles) is written
/// where it leads, so the link stays.
pub fn write(file: &Path, text: &str) -> std::io::Result<PathBuf> {
    let target = match std::fs::canonicalize(file) {
        Ok(target) => target,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => file.to_path_buf(),
        Err(e) => return Err(e),
    };
    let dir = target.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::Builder::new()
        .prefix(".config.toml.")
        .tempfile_in(dir)?;
    temp.write_all(text.as_bytes())?;
    temp.as_file().sync_all()?;
    if let Ok(meta) = std::fs::metadata(&target) {
        temp.as_file().set_permissions(meta.permissions())?;
    }
    temp.persist(&target).map_err(|e| e.error)?;
    std::fs::File::open(dir)?.sync_all()?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ToolKey;

    fn grant(tool: &str, command: Option<&str>, scope: GrantScope) -> Grant {
        Grant {
            scope,
            tool: ToolKey::new(tool),
            command: command.map(str::to_string),
        }
    }

    #[test]
    fn a_command_grant_becomes_a_rule_with_its_words_and_itself_as_example() {
        let rule = rule_for(&grant(
            "bash",
            Some("cargo test -p 'my crate'"),
            GrantScope::Session,
        ));
        assert_eq!(
            rule.unwrap(),
            "[[rules]]\ntool = \"bash\"\ncommand = [\"cargo\", \"test\", \"-p\", \"my crate\"]\ndecision = \"allow\"\nmatch = [\"cargo test -p 'my crate'\"]\n"
        );
        assert_eq!(
            rule_for(&grant("write_file", None, GrantScope::Session)).unwrap(),
            "[[rules]]\ntool = \"write_file\"\ndecision = \"allow\"\n"
        );
        assert!(
            rule_for(&grant("bash", None, GrantScope::Run))
                .unwrap()
                .contains("\"deny\"")
        );
    }

    #[test]
    fn what_no_rule_can_say_is_refused_with_why() {
        for (g, why) in [
            (grant("bash", None, GrantScope::Session), "needs the words"),
            (
                grant("bash", Some("ls | sh"), GrantScope::Session),
                "not one plain command",
            ),
            (
                grant("bash", Some("ls && pwd"), GrantScope::Session),
                "is a list",
            ),
            (grant("jan/bash", None, GrantScope::Run), "asked agent"),
        ] {
            let err = rule_for(&g).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
    }

    #[test]
    fn the_rule_is_appended_checked_and_written_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.toml");
        std::fs::write(&real, "default_mode = \"manual\"").unwrap();
        let link = dir.path().join("config.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let rule = rule_for(&grant("bash", Some("cargo test"), GrantScope::Session)).unwrap();
        let text = appended(&link, &rule).unwrap();
        assert!(text.starts_with("default_mode = \"manual\"\n\n[[rules]]"));
        assert_eq!(write(&link, &text).unwrap(), real.canonicalize().unwrap());
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), text);
        // A file that would not load is never written.
        std::fs::write(&real, "[sandbox]\nnetwork = \"sideways\"\n").unwrap();
        let err = appended(&link, &rule).unwrap_err();
        assert!(err.contains("network"), "{err}");
    }
}
