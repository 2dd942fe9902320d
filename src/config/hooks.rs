//! `[hooks]` in the user's settings: Claude Code's hook events in TOML
//! (`[[hooks.EVENT]]`, each with a `matcher` and `hooks = [{ type =
//! "command", command, timeout }]`, so that format's examples translate line
//! by line), and the deprecated `pre_tool_call` argv. Validates every entry
//! and compiles matchers once; never runs a hook (`agent::hooks` does).

use std::collections::BTreeMap;
use std::time::Duration;

use regex::Regex;

use super::error::{ConfigError, KeyPath};
use super::raw::{RawHookGroup, RawHooks};
use super::source::SourceFile;

/// The Claude Code events mino tells hooks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookEvent {
    PreToolUse,
    PostToolUse,
    UserPromptSubmit,
    SessionStart,
    SessionEnd,
    Stop,
    PreCompact,
    Notification,
    PermissionRequest,
}

/// Every event, in the order the README lists them.
pub const HOOK_EVENTS: [HookEvent; 9] = [
    HookEvent::PreToolUse,
    HookEvent::PostToolUse,
    HookEvent::UserPromptSubmit,
    HookEvent::SessionStart,
    HookEvent::SessionEnd,
    HookEvent::Stop,
    HookEvent::PreCompact,
    HookEvent::Notification,
    HookEvent::PermissionRequest,
];

impl HookEvent {
    /// The event's name, as Claude Code writes it (and as the key is).
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::Stop => "Stop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::Notification => "Notification",
            HookEvent::PermissionRequest => "PermissionRequest",
        }
    }

    /// Whether the event's hooks decide something (a call, a prompt), so a
    /// hook that fails there fails closed; the others are only told.
    pub fn decides(self) -> bool {
        matches!(
            self,
            HookEvent::PreToolUse | HookEvent::UserPromptSubmit | HookEvent::PermissionRequest
        )
    }
}

/// How long a hook may take when its entry gives no `timeout`
/// (Claude Code's default).
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest `timeout` accepted, in seconds.
const MAX_TIMEOUT_SECS: i64 = 600;

const MATCHER_ACCEPTED: &str = "a tool name (mino's, such as bash, or Claude Code's, such as Bash, Read, Write, Edit, WebFetch, mcp__server__tool), names joined by | (Edit|Write), a regular expression (mcp__github__.*), or \"*\" or \"\" for every one";
const COMMAND_ACCEPTED: &str =
    "a non-empty shell command, run with /bin/sh -c in the project directory";
const LEGACY_ACCEPTED: &str = "a command as an array whose first element is an absolute path, such as [\"/usr/local/bin/check\", \"--strict\"]";

/// What a group's `matcher` selects, read as Claude Code reads it: empty
/// or `*` for everything, plain names (letters, digits, `_`, `|`) exactly,
/// anything else as an unanchored regular expression.
#[derive(Debug, Clone)]
pub enum Matcher {
    All,
    Names(Vec<String>),
    Pattern(Regex),
}

impl Matcher {
    pub fn parse(text: &str) -> Result<Matcher, regex::Error> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(Matcher::All);
        }
        let plain = text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|');
        if plain {
            return Ok(Matcher::Names(
                text.split('|')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(String::from)
                    .collect(),
            ));
        }
        regex::RegexBuilder::new(text)
            .size_limit(1 << 20)
            .build()
            .map(Matcher::Pattern)
    }

    /// Whether any of `names` (a tool's names in mino's and Claude Code's
    /// words, or an event's source) is selected.
    pub fn matches(&self, names: &[&str]) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(list) => names.iter().any(|n| list.iter().any(|l| l == n)),
            Matcher::Pattern(re) => names.iter().any(|n| re.is_match(n)),
        }
    }
}

/// One command a hook runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCommand {
    /// A shell command line, run with `/bin/sh -c`.
    pub command: String,
    pub timeout: Duration,
    /// Where it is written (`hooks.PreToolUse[0].hooks[1]`): what messages
    /// and the audit log call it.
    pub key: String,
}

/// One `[[hooks.EVENT]]` table.
#[derive(Debug, Clone)]
pub struct HookGroup {
    pub matcher: Matcher,
    pub commands: Vec<HookCommand>,
}

/// The validated `[hooks]` of the user's settings.
#[derive(Debug, Clone, Default)]
pub struct HookSettings {
    groups: BTreeMap<HookEvent, Vec<HookGroup>>,
    /// The deprecated `pre_tool_call` argv; its first element is absolute.
    pub legacy: Option<Vec<String>>,
}

impl HookSettings {
    /// Whether any hook is configured for `event` (the legacy argv counts
    /// for PreToolUse).
    pub fn has(&self, event: HookEvent) -> bool {
        self.groups.get(&event).is_some_and(|g| !g.is_empty())
            || (event == HookEvent::PreToolUse && self.legacy.is_some())
    }

    /// The commands for `event` whose group selects `subject` (every group
    /// when the event has no subject), each command line once, in file order.
    pub fn commands(&self, event: HookEvent, subject: Option<&[&str]>) -> Vec<&HookCommand> {
        let mut out: Vec<&HookCommand> = Vec::new();
        for group in self.groups.get(&event).into_iter().flatten() {
            if subject.is_some_and(|names| !group.matcher.matches(names)) {
                continue;
            }
            for command in &group.commands {
                if !out.iter().any(|c| c.command == command.command) {
                    out.push(command);
                }
            }
        }
        out
    }

    /// Adds `group` for `event` (tests and the legacy key's successor).
    pub fn push(&mut self, event: HookEvent, group: HookGroup) {
        self.groups.entry(event).or_default().push(group);
    }
}

/// Validates `[hooks]`; a deprecation of the old key joins `warnings`.
pub(super) fn hook_settings(
    src: &SourceFile,
    raw: &RawHooks,
    warnings: &mut Vec<String>,
) -> Result<HookSettings, ConfigError> {
    let mut settings = HookSettings {
        legacy: legacy(src, raw)?,
        ..HookSettings::default()
    };
    if settings.legacy.is_some() {
        let key = KeyPath::of(&["hooks", "pre_tool_call"]);
        warnings.push(format!(
            "{}:{}: hooks.pre_tool_call is deprecated and still runs; write it as [[hooks.PreToolUse]] with hooks = [{{ type = \"command\", command = \"...\" }}] (Claude Code's hook format: JSON on stdin, exit 2 or a JSON answer to deny)",
            src.path.display(),
            src.line(&key)
        ));
    }
    let events = [
        (HookEvent::PreToolUse, &raw.pre_tool_use),
        (HookEvent::PostToolUse, &raw.post_tool_use),
        (HookEvent::UserPromptSubmit, &raw.user_prompt_submit),
        (HookEvent::SessionStart, &raw.session_start),
        (HookEvent::SessionEnd, &raw.session_end),
        (HookEvent::Stop, &raw.stop),
        (HookEvent::PreCompact, &raw.pre_compact),
        (HookEvent::Notification, &raw.notification),
        (HookEvent::PermissionRequest, &raw.permission_request),
    ];
    for (event, groups) in events {
        for (index, group) in groups.iter().flatten().enumerate() {
            let key = KeyPath::of(&["hooks", event.name()]).index(index);
            let group = hook_group(src, &key, group)?;
            settings.push(event, group);
        }
    }
    Ok(settings)
}

fn hook_group(
    src: &SourceFile,
    key: &KeyPath,
    raw: &RawHookGroup,
) -> Result<HookGroup, ConfigError> {
    let matcher = Matcher::parse(raw.matcher.as_deref().unwrap_or("")).map_err(|e| {
        let first = e.to_string();
        let first = first.lines().last().unwrap_or("").trim().to_string();
        src.invalid(
            key.key("matcher"),
            format!("not a regular expression ({first})"),
            MATCHER_ACCEPTED,
        )
    })?;
    let list = key.key("hooks");
    let entries = match &raw.hooks {
        Some(entries) if !entries.is_empty() => entries,
        _ => {
            return Err(src.invalid(
                list,
                "missing or empty",
                "hooks = [{ type = \"command\", command = \"...\", timeout = 10 }]",
            ));
        }
    };
    let mut commands = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let key = list.index(index);
        match entry.kind.as_deref() {
            Some("command") => {}
            other => {
                let problem = match other {
                    Some(kind) => format!("type {kind:?} is not a kind of hook mino runs"),
                    None => "missing key type".to_string(),
                };
                return Err(src.invalid(key.key("type"), problem, "type = \"command\""));
            }
        }
        let command = match entry.command.as_deref().map(str::trim) {
            Some(command) if !command.is_empty() => command.to_string(),
            _ => {
                return Err(src.invalid(key.key("command"), "missing or empty", COMMAND_ACCEPTED));
            }
        };
        let timeout = match entry.timeout {
            Some(secs) => Duration::from_secs(super::validate::ranged(
                src,
                key.key("timeout"),
                secs,
                1,
                MAX_TIMEOUT_SECS,
                "seconds",
            )?),
            None => DEFAULT_HOOK_TIMEOUT,
        };
        commands.push(HookCommand {
            command,
            timeout,
            key: key.to_string(),
        });
    }
    Ok(HookGroup { matcher, commands })
}

fn legacy(src: &SourceFile, raw: &RawHooks) -> Result<Option<Vec<String>>, ConfigError> {
    let Some(argv) = &raw.pre_tool_call else {
        return Ok(None);
    };
    let key = KeyPath::of(&["hooks", "pre_tool_call"]);
    let Some(program) = argv.first() else {
        return Err(src.invalid(key, "an empty command", LEGACY_ACCEPTED));
    };
    super::validate::absolute(program)
        .map_err(|problem| src.invalid(key.index(0), problem, LEGACY_ACCEPTED))?;
    Ok(Some(argv.clone()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn matchers_read_as_claude_code_reads_them() {
        let all = Matcher::parse("").unwrap();
        assert!(all.matches(&["bash", "Bash"]));
        assert!(Matcher::parse("*").unwrap().matches(&["anything"]));
        let bash = Matcher::parse("Bash").unwrap();
        assert!(bash.matches(&["bash", "Bash"]));
        assert!(!bash.matches(&["bash_output", "BashOutput"]));
        let edits = Matcher::parse("Edit|Write").unwrap();
        assert!(edits.matches(&["write_file", "Write"]));
        assert!(!edits.matches(&["read_file", "Read"]));
        let mino = Matcher::parse("read_file").unwrap();
        assert!(mino.matches(&["read_file", "Read"]));
        let mcp = Matcher::parse("mcp__everything__.*").unwrap();
        assert!(mcp.matches(&["mcp_everything_echo", "mcp__everything__echo"]));
        assert!(!mcp.matches(&["mcp_other_echo", "mcp__other__echo"]));
        // Names are compared exactly, letter case included.
        assert!(!Matcher::parse("BASH").unwrap().matches(&["bash", "Bash"]));
        assert!(Matcher::parse("(").is_err());
    }

    #[test]
    fn every_event_has_its_claude_code_name() {
        let names: Vec<&str> = HOOK_EVENTS.iter().map(|e| e.name()).collect();
        assert_eq!(
            names,
            [
                "PreToolUse",
                "PostToolUse",
                "UserPromptSubmit",
                "SessionStart",
                "SessionEnd",
                "Stop",
                "PreCompact",
                "Notification",
                "PermissionRequest"
            ]
        );
        assert!(HookEvent::PreToolUse.decides() && HookEvent::UserPromptSubmit.decides());
        assert!(!HookEvent::PostToolUse.decides());
    }
}
