//! Slash commands: parsing only. A command that does not parse changes
//! nothing; its error says what is accepted.

use crate::policy::{MODE_NAMES, Mode};

/// One slash command, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/mode` alone shows the mode; `/mode NAME` selects one.
    Mode(Option<Mode>),
    New,
    Resume(Option<String>),
    Sessions,
    Clear,
    Compact,
    Copy,
    /// `/mcp`: the MCP servers, their state, destination and tools.
    Mcp,
    Help,
    Quit,
    /// `/ask-NAME QUESTION`: ask the configured agent NAME.
    Ask {
        agent: String,
        question: String,
    },
}

/// The names, for completion and `/help`.
pub const COMMANDS: [(&str, &str); 10] = [
    (
        "/mode",
        "show the permission mode, or /mode NAME to change it",
    ),
    ("/new", "start a new session (in the start mode)"),
    ("/resume", "resume a session: /resume ID"),
    ("/sessions", "list saved sessions"),
    (
        "/clear",
        "empty this session's history (same id, same mode)",
    ),
    ("/compact", "summarise older history to free context"),
    ("/copy", "copy the last answer to the clipboard"),
    ("/mcp", "list MCP servers, their state and tools"),
    ("/help", "show commands and keys"),
    ("/quit", "leave mino"),
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error(
        "unknown command {0}; commands: /mode, /new, /resume, /sessions, /clear, /compact, /copy, /mcp, /help, /quit"
    )]
    Unknown(String),
    #[error("{command} takes no arguments; got {extra:?}")]
    Extra {
        command: &'static str,
        extra: String,
    },
    #[error("unknown permission mode {given:?}; accepted: {MODE_NAMES}")]
    UnknownMode { given: String },
    #[error("{command} needs a question: {command} QUESTION")]
    NoQuestion { command: String },
}

/// Whether a line is a command at all (`/` first, not `//`).
pub fn is_command(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with('/') && !line.starts_with("//")
}

/// Parses one command line.
pub fn parse(line: &str) -> Result<Command, CommandError> {
    let line = line.trim();
    if let Some(rest) = line.strip_prefix("/ask-") {
        let (agent, question) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let question = question.trim();
        if !agent.is_empty() {
            if question.is_empty() {
                return Err(CommandError::NoQuestion {
                    command: format!("/ask-{agent}"),
                });
            }
            return Ok(Command::Ask {
                agent: agent.to_string(),
                question: question.to_string(),
            });
        }
    }
    let mut words = line.split_whitespace();
    let name = words.next().unwrap_or_default();
    let args: Vec<&str> = words.collect();
    let none = |command: &'static str, cmd: Command| {
        if args.is_empty() {
            Ok(cmd)
        } else {
            Err(CommandError::Extra {
                command,
                extra: args.join(" "),
            })
        }
    };
    match name {
        "/mode" => match args.as_slice() {
            [] => Ok(Command::Mode(None)),
            [name] => name
                .parse::<Mode>()
                .map(|m| Command::Mode(Some(m)))
                .map_err(|_| CommandError::UnknownMode {
                    given: (*name).to_string(),
                }),
            [_, rest @ ..] => Err(CommandError::Extra {
                command: "/mode NAME",
                extra: rest.join(" "),
            }),
        },
        "/resume" => match args.as_slice() {
            [] => Ok(Command::Resume(None)),
            [id] => Ok(Command::Resume(Some((*id).to_string()))),
            [_, rest @ ..] => Err(CommandError::Extra {
                command: "/resume ID",
                extra: rest.join(" "),
            }),
        },
        "/new" => none("/new", Command::New),
        "/sessions" => none("/sessions", Command::Sessions),
        "/clear" => none("/clear", Command::Clear),
        "/compact" => none("/compact", Command::Compact),
        "/copy" => none("/copy", Command::Copy),
        "/mcp" => none("/mcp", Command::Mcp),
        "/help" => none("/help", Command::Help),
        "/quit" | "/exit" => none("/quit", Command::Quit),
        other => Err(CommandError::Unknown(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_command() {
        assert_eq!(parse("/mode"), Ok(Command::Mode(None)));
        assert_eq!(
            parse("/mode accept-edits"),
            Ok(Command::Mode(Some(Mode::AcceptEdits)))
        );
        assert_eq!(parse("/mode yolo"), Ok(Command::Mode(Some(Mode::Bypass))));
        assert_eq!(parse("/new"), Ok(Command::New));
        assert_eq!(parse("/resume"), Ok(Command::Resume(None)));
        assert_eq!(
            parse("/resume abc"),
            Ok(Command::Resume(Some("abc".into())))
        );
        assert_eq!(parse("  /clear  "), Ok(Command::Clear));
        assert_eq!(parse("/quit"), Ok(Command::Quit));
    }

    #[test]
    fn unknown_names_and_extra_words_are_errors() {
        assert_eq!(
            parse("/mode bypass now"),
            Err(CommandError::Extra {
                command: "/mode NAME",
                extra: "now".into()
            })
        );
        assert!(matches!(
            parse("/mode sudo"),
            Err(CommandError::UnknownMode { .. })
        ));
        assert!(matches!(
            parse("/new please"),
            Err(CommandError::Extra { .. })
        ));
        assert!(matches!(
            parse("/frobnicate"),
            Err(CommandError::Unknown(_))
        ));
        assert_eq!(
            parse("/ask-jan  what is in  notes.md? "),
            Ok(Command::Ask {
                agent: "jan".into(),
                question: "what is in  notes.md?".into()
            })
        );
        assert!(matches!(
            parse("/ask-jan"),
            Err(CommandError::NoQuestion { .. })
        ));
        assert!(is_command("/mode"));
        assert!(!is_command("//not a command"));
        assert!(!is_command("hello /mode"));
    }
}
