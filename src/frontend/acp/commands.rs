//! The slash commands an editor's prompt runs: the ones that work over ACP
//! (each answers in the editor's chat), advertised in
//! `available_commands_update`, and the verdict on a prompt that starts
//! with a command's name. The others (`/new`, `/resume`, `/sessions`,
//! `/quit`: the editor's own session methods do them; `/mode`: the
//! editor's mode selector; `/copy`, `/help` and `/permissions save`: the
//! full screen's; `/ask-NAME`) are refused with what works instead, never
//! sent to the model. The running MCP servers' prompts (`/SERVER:PROMPT`)
//! are commands too, advertised again when they change. A prompt whose
//! first word names no command is a prompt (a path such as `/etc/hosts`
//! stays text). Decides nothing.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionUpdate,
    UnstructuredCommandInput,
};

use crate::agent::commands::{self, Command, CommandSpec};
use crate::mcp::catalog::PromptEntry;

use super::session::update;

/// One command that works here: its name, what the editor shows about it
/// (the command table's help, unless its ACP form does less), and the hint
/// for its argument.
struct Offered {
    name: &'static str,
    help: Option<&'static str>,
    hint: Option<&'static str>,
}

/// Every command that works over ACP, in the order help shows them.
const OFFERED: [Offered; 9] = [
    Offered {
        name: "/clear",
        help: None,
        hint: None,
    },
    Offered {
        name: "/compact",
        help: None,
        hint: None,
    },
    Offered {
        name: "/mcp",
        help: None,
        hint: None,
    },
    Offered {
        name: "/permissions",
        help: Some(
            "list what this session allows and this run refuses; /permissions N revokes the Nth",
        ),
        hint: Some("the number of a remembered answer, as /permissions lists them"),
    },
    Offered {
        name: "/rewind",
        help: None,
        hint: Some("the number of a prompt, as /rewind lists them"),
    },
    Offered {
        name: "/shells",
        help: None,
        hint: Some("a background process's number, or kill and its number"),
    },
    Offered {
        name: "/model",
        help: None,
        hint: Some("a model or provider preset, as /model lists them"),
    },
    Offered {
        name: "/diff",
        help: None,
        hint: None,
    },
    Offered {
        name: "/init",
        help: None,
        hint: None,
    },
];

/// The names of the commands that work here, as a sentence's list.
fn offered_names() -> String {
    OFFERED
        .iter()
        .map(|o| o.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The commands the editor is told about: mino's, then each MCP prompt
/// of `prompts`.
pub fn available(prompts: &[PromptEntry]) -> Vec<AvailableCommand> {
    let mut out = Vec::new();
    for offered in &OFFERED {
        let Some(spec) = CommandSpec::find(offered.name) else {
            continue;
        };
        let help = offered.help.unwrap_or(spec.help);
        let mut command = AvailableCommand::new(spec.name.trim_start_matches('/'), help);
        if let Some(hint) = offered.hint {
            command = command.input(AvailableCommandInput::Unstructured(
                UnstructuredCommandInput::new(hint),
            ));
        }
        out.push(command);
    }
    for prompt in prompts {
        let name = prompt.command().trim_start_matches('/').to_string();
        let description = if prompt.description.is_empty() {
            format!("the MCP server {}'s prompt {}", prompt.server, prompt.name)
        } else {
            prompt.description.clone()
        };
        let mut command = AvailableCommand::new(name, description);
        if !prompt.arguments.is_empty() {
            command = command.input(AvailableCommandInput::Unstructured(
                UnstructuredCommandInput::new(prompt.argument_words()),
            ));
        }
        out.push(command);
    }
    out
}

/// Tells the editor which commands this session runs, with the MCP
/// servers' `prompts`.
pub fn advertise(cx: &ConnectionTo<Client>, session: &str, prompts: &[PromptEntry]) {
    update(
        cx,
        session,
        SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(available(prompts))),
    );
}

/// Whether `word` is an MCP prompt's command (`/SERVER:PROMPT`).
fn names_mcp_prompt(word: &str) -> bool {
    word.trim_start_matches('/')
        .split_once(':')
        .is_some_and(|(server, prompt)| !server.is_empty() && !prompt.is_empty())
}

/// Why a command prompt is refused: the sentence the editor shows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("{0}")]
    Parse(String),
    #[error("{name} is not available in an editor: {instead}; commands here: {list}", list = offered_names())]
    Elsewhere { name: String, instead: &'static str },
}

/// What a prompt's text is: `Ok(None)` a prompt for the model,
/// `Ok(Some(command))` a command that works here, `Err` a command refused.
pub fn of_prompt(text: &str) -> Result<Option<Command>, Refused> {
    if !commands::is_command(text) {
        return Ok(None);
    }
    let first = text.split_whitespace().next().unwrap_or_default();
    if CommandSpec::find(first).is_none() && !first.starts_with("/ask-") && !names_mcp_prompt(first)
    {
        return Ok(None);
    }
    let command = commands::parse(text).map_err(|e| Refused::Parse(e.to_string()))?;
    let instead = match &command {
        Command::New | Command::Resume(_) | Command::Sessions { .. } | Command::Quit => {
            "the editor starts, lists, resumes and closes sessions"
        }
        Command::Mode(_) => "choose the mode in the editor's mode selector",
        Command::SaveRule(_) => "a rule is saved from the full screen, where its y/N is asked",
        Command::Copy => "select the text in the editor",
        Command::Help => "the editor lists this session's commands",
        Command::Ask { .. } => {
            "an asked agent's work is shown only on the full screen and in line mode"
        }
        _ => return Ok(Some(command)),
    };
    Err(Refused::Elsewhere {
        name: first.to_string(),
        instead,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_advertised_command_parses_and_runs_here() {
        let names: Vec<String> = available(&[]).iter().map(|c| c.name.clone()).collect();
        assert_eq!(
            names,
            [
                "clear",
                "compact",
                "mcp",
                "permissions",
                "rewind",
                "shells",
                "model",
                "diff",
                "init"
            ]
        );
        for name in names {
            let command = of_prompt(&format!("/{name}")).unwrap();
            assert!(command.is_some(), "/{name}");
        }
    }

    #[test]
    fn the_others_are_refused_and_text_stays_a_prompt() {
        for refused in [
            "/new",
            "/resume",
            "/sessions",
            "/quit",
            "/mode bypass",
            "/copy",
            "/help",
            "/permissions save 1",
            "/ask-jan hi",
        ] {
            let e = of_prompt(refused).unwrap_err().to_string();
            assert!(e.contains("not available in an editor"), "{refused}: {e}");
            assert!(e.contains("/rewind"), "{e}");
        }
        assert!(matches!(of_prompt("/rewind x"), Err(Refused::Parse(_))));
        assert_eq!(of_prompt("/etc/hosts looks wrong"), Ok(None));
        assert_eq!(of_prompt("hello /new"), Ok(None));
        assert_eq!(of_prompt("/rewind 2"), Ok(Some(Command::Rewind(Some(2)))));
        assert!(matches!(
            of_prompt("/everything:args-prompt city=Oslo"),
            Ok(Some(Command::McpPrompt { .. }))
        ));
    }

    #[test]
    fn the_servers_prompts_are_advertised_with_their_arguments() {
        let prompt = PromptEntry {
            server: "everything".into(),
            name: "args-prompt".into(),
            description: String::new(),
            arguments: vec![("city".into(), true), ("state".into(), false)],
        };
        let listed = available(&[prompt]);
        let last = listed.last().unwrap();
        assert_eq!(last.name, "everything:args-prompt");
        let json = serde_json::to_value(last).unwrap();
        assert_eq!(json["input"]["hint"], "city=VALUE [state=VALUE]", "{json}");
    }
}
