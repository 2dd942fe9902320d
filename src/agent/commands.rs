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
    /// `/sessions` lists this project's sessions; `/sessions --all` every
    /// project's.
    Sessions {
        all: bool,
    },
    Clear,
    Compact,
    Copy,
    /// `/mcp`: the MCP servers, their state, destination and tools.
    Mcp,
    /// `/mcp auth NAME`: authorize a remote server (OAuth, in the browser).
    McpAuth(String),
    /// `/mcp logout NAME`: forget a remote server's OAuth tokens.
    McpLogout(String),
    /// `/permissions` lists the remembered answers; `/permissions N`
    /// forgets the Nth of that list.
    Permissions(Option<usize>),
    /// `/permissions save N`: offers the Nth remembered answer as a saved
    /// rule appended to the user's settings, after a yes.
    SaveRule(usize),
    /// `/rewind` lists this session's prompts to go back to; `/rewind N`
    /// offers what going back to before prompt N would do.
    Rewind(Option<usize>),
    /// `/shells` lists the session's background processes, `/shells N`
    /// shows one's output, `/shells kill N` stops one.
    Shells(Option<ShellsAction>),
    /// `/model` lists the models to switch to; `/model NAME` switches the
    /// session (`PRESET` or `PRESET/MODEL` for a provider preset's).
    Model(Option<String>),
    /// `/diff`: what the session changed in the project's files.
    Diff,
    /// `/init`: a turn asking the model to write the project's `AGENTS.md`.
    Init,
    Help,
    Quit,
    /// `/ask-NAME QUESTION`: ask the configured agent NAME.
    Ask {
        agent: String,
        question: String,
    },
    /// `/SERVER:PROMPT [ARGUMENTS]`: an MCP server's prompt as a turn.
    McpPrompt {
        server: String,
        prompt: String,
        words: String,
    },
}

/// What `/shells N` or `/shells kill N` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellsAction {
    Show(u32),
    Kill(u32),
}

/// One slash command as the user sees it, and how its words become a
/// `Command`. The table below drives parsing, the unknown-command message,
/// completion and help.
#[derive(Debug, Clone, Copy)]
pub struct CommandSpec {
    pub name: &'static str,
    /// Other names that parse the same.
    pub aliases: &'static [&'static str],
    /// The one optional argument, as help names it (`NAME`, `ID`).
    pub argument: Option<&'static str>,
    pub help: &'static str,
    build: fn(Option<&str>) -> Result<Command, CommandError>,
}

impl CommandSpec {
    /// The spec of the command named `name` (or one of its aliases).
    pub fn find(name: &str) -> Option<&'static CommandSpec> {
        COMMANDS
            .iter()
            .find(|spec| spec.name == name || spec.aliases.contains(&name))
    }
}

/// Every command, in the order help shows them.
pub const COMMANDS: [CommandSpec; 16] = [
    CommandSpec {
        name: "/mode",
        aliases: &[],
        argument: Some("NAME"),
        help: "show or (full screen) pick the mode; /mode NAME sets it",
        build: |arg| match arg {
            None => Ok(Command::Mode(None)),
            Some(name) => name
                .parse::<Mode>()
                .map(|m| Command::Mode(Some(m)))
                .map_err(|_| CommandError::UnknownMode {
                    given: name.to_string(),
                }),
        },
    },
    CommandSpec {
        name: "/new",
        aliases: &[],
        argument: None,
        help: "start a new session (in the start mode)",
        build: |_| Ok(Command::New),
    },
    CommandSpec {
        name: "/resume",
        aliases: &[],
        argument: Some("ID"),
        help: "resume a session: /resume ID (or the start of its id)",
        build: |arg| Ok(Command::Resume(arg.map(str::to_string))),
    },
    CommandSpec {
        name: "/sessions",
        aliases: &[],
        argument: Some("--all"),
        help: "list this project's saved sessions; /sessions --all lists every project's",
        build: |arg| match arg {
            None => Ok(Command::Sessions { all: false }),
            Some("--all") => Ok(Command::Sessions { all: true }),
            Some(other) => Err(CommandError::SessionsFlag {
                given: other.to_string(),
            }),
        },
    },
    CommandSpec {
        name: "/clear",
        aliases: &[],
        argument: None,
        help: "empty this session's history (same id, same mode)",
        build: |_| Ok(Command::Clear),
    },
    CommandSpec {
        name: "/compact",
        aliases: &[],
        argument: None,
        help: "summarise older history to free context",
        build: |_| Ok(Command::Compact),
    },
    CommandSpec {
        name: "/copy",
        aliases: &[],
        argument: None,
        help: "copy the last answer to the clipboard",
        build: |_| Ok(Command::Copy),
    },
    CommandSpec {
        name: "/mcp",
        aliases: &[],
        argument: Some("auth|logout NAME"),
        help: "list MCP servers, their state and tools; /mcp auth NAME authorizes a remote one in the browser, /mcp logout NAME forgets its tokens",
        build: |arg| {
            let Some(arg) = arg else {
                return Ok(Command::Mcp);
            };
            let mut words = arg.split_whitespace();
            match (words.next(), words.next(), words.next()) {
                (Some("auth"), Some(name), None) => Ok(Command::McpAuth(name.to_string())),
                (Some("logout"), Some(name), None) => Ok(Command::McpLogout(name.to_string())),
                _ => Err(CommandError::McpAction {
                    given: arg.to_string(),
                }),
            }
        },
    },
    CommandSpec {
        name: "/permissions",
        aliases: &[],
        argument: Some("N"),
        help: "list what this session allows and this run refuses; /permissions N revokes the Nth; /permissions save N saves it as a rule",
        build: |arg| match arg {
            None => Ok(Command::Permissions(None)),
            Some(save) if save.starts_with("save") => {
                let n = save["save".len()..].trim();
                match n.parse::<usize>() {
                    Ok(n) if n > 0 && save["save".len()..].starts_with(' ') => {
                        Ok(Command::SaveRule(n))
                    }
                    _ => Err(CommandError::BadNumber {
                        given: save.to_string(),
                    }),
                }
            }
            Some(n) => match n.parse::<usize>() {
                Ok(n) if n > 0 => Ok(Command::Permissions(Some(n))),
                _ => Err(CommandError::BadNumber {
                    given: n.to_string(),
                }),
            },
        },
    },
    CommandSpec {
        name: "/rewind",
        aliases: &[],
        argument: Some("N"),
        help: "go back to before one of this session's prompts: its code, its conversation or both (Esc twice)",
        build: |arg| match arg {
            None => Ok(Command::Rewind(None)),
            Some(n) => match n.parse::<usize>() {
                Ok(n) if n > 0 => Ok(Command::Rewind(Some(n))),
                _ => Err(CommandError::BadPrompt {
                    given: n.to_string(),
                }),
            },
        },
    },
    CommandSpec {
        name: "/shells",
        aliases: &[],
        argument: Some("N"),
        help: "list background processes (command, uptime, last line); /shells N shows one's output, /shells kill N stops it",
        build: |arg| {
            let Some(arg) = arg else {
                return Ok(Command::Shells(None));
            };
            let (kill, n) = match arg.strip_prefix("kill ") {
                Some(n) => (true, n.trim()),
                None => (false, arg),
            };
            match n.parse::<u32>() {
                Ok(n) if n > 0 && kill => Ok(Command::Shells(Some(ShellsAction::Kill(n)))),
                Ok(n) if n > 0 => Ok(Command::Shells(Some(ShellsAction::Show(n)))),
                _ => Err(CommandError::BadShell {
                    given: arg.to_string(),
                }),
            }
        },
    },
    CommandSpec {
        name: "/model",
        aliases: &[],
        argument: Some("NAME"),
        help: "list the models and provider presets to switch to; /model NAME (or PRESET, or PRESET/MODEL) switches this session",
        build: |arg| Ok(Command::Model(arg.map(str::to_string))),
    },
    CommandSpec {
        name: "/diff",
        aliases: &[],
        argument: None,
        help: "show what this session changed in the project's files (read-only)",
        build: |_| Ok(Command::Diff),
    },
    CommandSpec {
        name: "/init",
        aliases: &[],
        argument: None,
        help: "ask the model to write an AGENTS.md for this project (its write asks as any does)",
        build: |_| Ok(Command::Init),
    },
    CommandSpec {
        name: "/help",
        aliases: &[],
        argument: None,
        help: "show commands and keys",
        build: |_| Ok(Command::Help),
    },
    CommandSpec {
        name: "/quit",
        aliases: &["/exit"],
        argument: None,
        help: "leave mino",
        build: |_| Ok(Command::Quit),
    },
];

/// The prompt `/init` sends: the model looks at the project and writes
/// `AGENTS.md` with its write tool, so the write is decided (and, as an
/// execution surface, asked) like any other.
pub const INIT_PROMPT: &str = "Write an AGENTS.md file at the root of this project for coding agents that work on it: look at the project first (its layout, build and test commands, conventions), then write a short file (at most about 60 lines) with how to build, test and lint, how the code is laid out, and the conventions to keep. If an AGENTS.md exists already, improve it instead of starting over. Write it with your file tool.";

/// The command names, as the unknown-command message lists them.
fn names() -> String {
    COMMANDS
        .iter()
        .map(|spec| spec.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("unknown command {0}; commands: {names}", names = names())]
    Unknown(String),
    #[error("{command} takes no arguments; got {extra:?}")]
    Extra { command: String, extra: String },
    #[error("unknown permission mode {given:?}; accepted: {MODE_NAMES}")]
    UnknownMode { given: String },
    #[error(
        "/permissions takes the number of a grant as /permissions lists it (1, 2, ...), or save and that number; got {given:?}"
    )]
    BadNumber { given: String },
    #[error(
        "/rewind takes the number of a prompt as /rewind lists it (1 is the session's first); got {given:?}"
    )]
    BadPrompt { given: String },
    #[error(
        "/shells takes a background process's number as /shells lists it (/shells N), or kill and the number (/shells kill N); got {given:?}"
    )]
    BadShell { given: String },
    #[error("/sessions takes only --all (every project's sessions); got {given:?}")]
    SessionsFlag { given: String },
    #[error("/mcp takes auth NAME or logout NAME (a remote server's name); got {given:?}")]
    McpAction { given: String },
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
    if let Some((server, prompt)) = name.trim_start_matches('/').split_once(':')
        && !server.is_empty()
        && !prompt.is_empty()
    {
        return Ok(Command::McpPrompt {
            server: server.to_string(),
            prompt: prompt.to_string(),
            words: words.collect::<Vec<_>>().join(" "),
        });
    }
    let mut args: Vec<&str> = words.collect();
    // `/shells kill N`: the one command whose argument is two words.
    let joined;
    if name == "/shells" && args.len() == 2 && args[0] == "kill" {
        joined = format!("kill {}", args[1]);
        args = vec![joined.as_str()];
    }
    let Some(spec) = CommandSpec::find(name) else {
        return Err(CommandError::Unknown(name.to_string()));
    };
    let joined = args.join(" ");
    let (arg, extra) = match (spec.argument, args.as_slice()) {
        (_, []) => (None, None),
        (Some(_), [arg]) => (Some(*arg), None),
        // `/permissions save N`: two words, one argument.
        (Some(_), ["save", _]) if spec.name == "/permissions" => (Some(joined.as_str()), None),
        // `/mcp auth NAME`, `/mcp logout NAME`: two words, one argument.
        (Some(_), [_, _]) if spec.name == "/mcp" => (Some(joined.as_str()), None),
        (Some(argument), [_, rest @ ..]) => {
            (None, Some((format!("{} {argument}", spec.name), rest)))
        }
        (None, rest) => (None, Some((spec.name.to_string(), rest))),
    };
    if let Some((command, rest)) = extra {
        return Err(CommandError::Extra {
            command,
            extra: rest.join(" "),
        });
    }
    (spec.build)(arg)
}

/// The text of `/help`.
pub fn help_text() -> String {
    let mut out = String::from("Commands:\n");
    for spec in COMMANDS {
        out.push_str(&format!("  {:<10} {}\n", spec.name, spec.help));
    }
    out.push_str(&format!(
        "  {:<10} ask the agent NAME of [agents.NAME]: /ask-NAME QUESTION\n",
        "/ask-NAME"
    ));
    out.push_str(&format!(
        "  {:<10} send an MCP server's prompt: /SERVER:PROMPT [NAME=VALUE ...] (the full screen completes them after /)\n",
        "/S:PROMPT"
    ));
    let answers: Vec<String> = crate::policy::ConsentAnswer::ALL
        .iter()
        .map(|answer| {
            let enter = if *answer == crate::policy::ConsentAnswer::Reject {
                " (Enter)"
            } else {
                ""
            };
            format!("{} {}{enter}", answer.key(), answer.label())
        })
        .collect();
    out.push_str(&format!("Questions: {}.", answers.join(", ")));
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_mcp_prompt_is_server_colon_prompt_with_its_words() {
        assert_eq!(
            parse("/everything:args-prompt city=Oslo  state=Viken").unwrap(),
            Command::McpPrompt {
                server: "everything".into(),
                prompt: "args-prompt".into(),
                words: "city=Oslo state=Viken".into()
            }
        );
        assert!(matches!(
            parse("/everything:simple-prompt"),
            Ok(Command::McpPrompt { words, .. }) if words.is_empty()
        ));
        assert!(matches!(parse("/:x"), Err(CommandError::Unknown(_))));
        assert!(matches!(parse("/x:"), Err(CommandError::Unknown(_))));
    }

    #[test]
    fn parses_every_command() {
        assert_eq!(parse("/mode"), Ok(Command::Mode(None)));
        assert_eq!(
            parse("/mode accept-edits"),
            Ok(Command::Mode(Some(Mode::AcceptEdits)))
        );
        assert_eq!(parse("/mode yolo"), Ok(Command::Mode(Some(Mode::Bypass))));
        assert_eq!(parse("/mode plan"), Ok(Command::Mode(Some(Mode::Plan))));
        assert_eq!(parse("/new"), Ok(Command::New));
        assert_eq!(parse("/resume"), Ok(Command::Resume(None)));
        assert_eq!(
            parse("/resume abc"),
            Ok(Command::Resume(Some("abc".into())))
        );
        assert_eq!(parse("  /clear  "), Ok(Command::Clear));
        assert_eq!(parse("/mcp"), Ok(Command::Mcp));
        assert_eq!(
            parse("/mcp auth remote"),
            Ok(Command::McpAuth("remote".into()))
        );
        assert_eq!(
            parse("/mcp logout remote"),
            Ok(Command::McpLogout("remote".into()))
        );
        assert!(parse("/mcp auth").is_err());
        assert!(parse("/mcp frob x").is_err());
        assert_eq!(parse("/quit"), Ok(Command::Quit));
        assert_eq!(parse("/permissions"), Ok(Command::Permissions(None)));
        assert_eq!(parse("/permissions 2"), Ok(Command::Permissions(Some(2))));
        assert_eq!(parse("/permissions save 3"), Ok(Command::SaveRule(3)));
        assert!(parse("/permissions save").is_err());
        assert!(parse("/permissions savex 3").is_err());
        assert_eq!(parse("/rewind"), Ok(Command::Rewind(None)));
        assert_eq!(parse("/rewind 3"), Ok(Command::Rewind(Some(3))));
        assert!(matches!(
            parse("/rewind 0"),
            Err(CommandError::BadPrompt { .. })
        ));
        assert!(matches!(
            parse("/rewind -1"),
            Err(CommandError::BadPrompt { .. })
        ));
        for bad in ["0", "-1", "bash", "1.5"] {
            assert!(matches!(
                parse(&format!("/permissions {bad}")),
                Err(CommandError::BadNumber { .. })
            ));
        }
    }

    #[test]
    fn unknown_names_and_extra_words_are_errors() {
        assert_eq!(
            parse("/mode bypass now"),
            Err(CommandError::Extra {
                command: "/mode NAME".into(),
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
        assert_eq!(
            parse("/frobnicate").unwrap_err().to_string(),
            "unknown command /frobnicate; commands: /mode, /new, /resume, /sessions, /clear, /compact, /copy, /mcp, /permissions, /rewind, /shells, /model, /diff, /init, /help, /quit"
        );
        assert_eq!(parse("/shells"), Ok(Command::Shells(None)));
        assert_eq!(
            parse("/shells 2"),
            Ok(Command::Shells(Some(ShellsAction::Show(2))))
        );
        assert_eq!(
            parse("/shells kill 3"),
            Ok(Command::Shells(Some(ShellsAction::Kill(3))))
        );
        assert!(matches!(
            parse("/shells kill"),
            Err(CommandError::BadShell { .. })
        ));
        assert!(matches!(
            parse("/shells 0"),
            Err(CommandError::BadShell { .. })
        ));
        assert!(matches!(
            parse("/shells kill 3 4"),
            Err(CommandError::Extra { .. })
        ));
        assert_eq!(parse("/exit"), Ok(Command::Quit));
        assert_eq!(parse("/diff"), Ok(Command::Diff));
        assert_eq!(parse("/init"), Ok(Command::Init));
        assert_eq!(parse("/model"), Ok(Command::Model(None)));
        assert_eq!(
            parse("/model gpt-5"),
            Ok(Command::Model(Some("gpt-5".into())))
        );
        assert!(matches!(
            parse("/diff HEAD~1"),
            Err(CommandError::Extra { .. })
        ));
        assert!(is_command("/mode"));
        assert!(!is_command("//not a command"));
        assert!(!is_command("hello /mode"));
    }
}
