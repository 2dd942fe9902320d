//! The system prompt: the SOUL (the user's `SOUL.md` in mino's home, else
//! the built-in one), the project's `AGENTS.md`, and the list of project
//! skills, and one sentence on where shell commands run (the sandbox's own
//! summary, so the model is told what the record line and `mino sandbox
//! check` say). Reads files only through the confined project access.

use super::error::AgentError;
use crate::policy::{BashConfinement, ProtectedPaths};
use crate::tools::fs::confine::{ConfineError, Project};
use crate::tools::skill_view::{SkillInfo, discover_with};

/// The built-in SOUL, used unless the user's home has its own.
pub const DEFAULT_SOUL: &str = include_str!("../../assets/SOUL.md");

/// The built-in SOUL of the small profile: a small model's room is
/// short, so it says only how to act through the tools, what stays closed
/// and how a turn ends. A user's own SOUL.md replaces it as it replaces the
/// default one.
pub const SMALL_SOUL: &str = include_str!("../../assets/SOUL-small.md");

/// The sentence on paths every system prompt carries.
pub const PATHS_SENTENCE: &str = "Tool paths are relative to the project root, as list_dir shows \
     them, never absolute.";

/// The largest `AGENTS.md` included, in bytes.
const AGENTS_LIMIT: u64 = 64 * 1024;

/// The project file read as project instructions.
const AGENTS_FILE: &str = "AGENTS.md";

/// Where shell commands run, in one sentence of the sandbox's own summary.
pub fn shell_sentence(bash: &BashConfinement) -> String {
    match bash {
        BashConfinement::Unconfined => {
            "Shell commands run with the user's account permissions; there is no sandbox.".into()
        }
        BashConfinement::Sandboxed { summary, .. } => {
            format!("Shell commands run in a sandbox: {summary}.")
        }
    }
}

/// What the system prompt took from the project, for the line said at start.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// `AGENTS.md`'s bytes, when it was included.
    pub agents_bytes: Option<usize>,
    /// The skills listed, by name.
    pub skills: Vec<String>,
    /// Every file of the project the prompt took in: `AGENTS.md` and each
    /// skill's `SKILL.md`.
    pub files: Vec<super::instructions_seen::Seen>,
}

impl Loaded {
    /// `Project instructions: AGENTS.md (1234 bytes). Skills: a, b.`, or
    /// `None` when the project gave nothing.
    pub fn notice(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(bytes) = self.agents_bytes {
            parts.push(format!("Project instructions: AGENTS.md ({bytes} bytes)."));
        }
        if !self.skills.is_empty() {
            parts.push(format!("Skills: {}.", self.skills.join(", ")));
        }
        (!parts.is_empty()).then(|| parts.join(" "))
    }
}

/// Builds the system prompt. `user_soul` is the user's `SOUL.md`, if any;
/// `shell` is `shell_sentence` when the bash tool exists; `listing` adds
/// the project's top-level entries (the small profile: a small model
/// otherwise invents a path of its own). A protected
/// `AGENTS.md` or skill is left out: its bytes never reach the model
/// service.
pub fn system_prompt(
    user_soul: Option<String>,
    project: &Project,
    protected: &ProtectedPaths,
    shell: Option<&str>,
    listing: bool,
) -> Result<(String, Loaded), AgentError> {
    let mut loaded = Loaded::default();
    let mut prompt = user_soul.unwrap_or_else(|| DEFAULT_SOUL.to_string());
    prompt.push_str("\n\n## Project\n\n");
    prompt.push_str(PATHS_SENTENCE);
    prompt.push('\n');
    if listing {
        let top = crate::tools::fs::near::top_level(project, protected);
        if !top.is_empty() {
            prompt.push_str(&format!("Its top level holds: {}.\n", top.join(", ")));
        }
    }
    if let Some(shell) = shell {
        prompt.push_str(shell);
        prompt.push('\n');
    }
    if protected.is_protected(AGENTS_FILE) {
        // Never opened, like any protected file.
    } else {
        // Read through the confined open: never through a link, a regular
        // file only, without blocking, capped.
        match project.read(AGENTS_FILE, AGENTS_LIMIT) {
            Ok(agents) => {
                loaded.agents_bytes = Some(agents.bytes.len());
                loaded.files.push(super::instructions_seen::Seen {
                    path: AGENTS_FILE.to_string(),
                    bytes: agents.bytes.len(),
                    digest: crate::checkpoint::store::digest_bytes(&agents.bytes),
                });
                prompt.push_str("\n## Project instructions (AGENTS.md)\n\n");
                prompt.push_str(&String::from_utf8_lossy(&agents.bytes));
                prompt.push('\n');
            }
            Err(ConfineError::NotFound { .. }) => {}
            Err(e) => return Err(AgentError::Instructions(e)),
        }
    }
    let skills = discover_with(project, protected);
    if !skills.is_empty() {
        prompt.push_str(&skills_section(&skills));
    }
    loaded.skills = skills.iter().map(|s| s.name.clone()).collect();
    loaded
        .files
        .extend(skills.iter().map(|s| super::instructions_seen::Seen {
            path: crate::tools::skill_view::skill_path(&s.name),
            bytes: s.bytes,
            digest: s.digest.clone(),
        }));
    Ok((prompt, loaded))
}

fn skills_section(skills: &[SkillInfo]) -> String {
    let mut out = String::from(
        "\n## Skills\n\nRead a skill's instructions with the skill_view tool before using it.\n\n",
    );
    for skill in skills {
        out.push_str(&format!("- {}: {}\n", skill.name, skill.description));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_sentence_says_what_the_sandbox_is() {
        let sandboxed = BashConfinement::Sandboxed {
            summary: "project writable, secrets masked, network on".into(),
            outside_asks: true,
        };
        assert_eq!(
            shell_sentence(&sandboxed),
            "Shell commands run in a sandbox: project writable, secrets masked, network on."
        );
        assert!(shell_sentence(&BashConfinement::Unconfined).contains("there is no sandbox"));
        assert!(!DEFAULT_SOUL.contains("sandbox"));
    }

    #[test]
    fn the_start_names_only_what_the_project_gave() {
        assert_eq!(Loaded::default().notice(), None);
        let skills = Loaded {
            agents_bytes: None,
            skills: vec!["a".into(), "b".into()],
            files: Vec::new(),
        };
        assert_eq!(skills.notice().as_deref(), Some("Skills: a, b."));
    }
}
