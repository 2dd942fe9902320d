//! What the running servers offer the person, not the model: their prompts,
//! which become `/SERVER:PROMPT` commands, and their resources, which
//! `@SERVER:URI` in a prompt attaches (the composer completes both). Listed
//! once the servers have started, bounded in number and length, with
//! control characters taken out; and one prompt got (`prompts/get`) as the
//! text of a turn, its arguments read from the words after the command.
//! Never decides: the turn a prompt starts is decided like any other.

use rmcp::model::{GetPromptRequestParams, JsonObject, Prompt, Role};

use super::content::{block_text, cap};
use super::hub::McpHub;

/// At most this many prompts and resources are listed per server.
const PER_SERVER: usize = 200;
/// Names, URIs and descriptions are cut to this many characters.
const TEXT_CHARS: usize = 200;
/// A prompt's text is kept to this many bytes.
pub const PROMPT_BYTES: usize = 256 * 1024;

/// One prompt of a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptEntry {
    pub server: String,
    pub name: String,
    pub description: String,
    /// Its arguments' names, the required ones marked.
    pub arguments: Vec<(String, bool)>,
}

impl PromptEntry {
    /// The command that gets it: `/SERVER:PROMPT`.
    pub fn command(&self) -> String {
        format!("/{}:{}", self.server, self.name)
    }

    /// Its arguments as they are written after the command: `NAME=VALUE`,
    /// an optional one in brackets.
    pub fn argument_words(&self) -> String {
        self.arguments
            .iter()
            .map(|(name, required)| {
                if *required {
                    format!("{name}=VALUE")
                } else {
                    format!("[{name}=VALUE]")
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One resource of a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceEntry {
    pub server: String,
    pub uri: String,
    pub name: String,
}

impl ResourceEntry {
    /// The mention that attaches it: `@SERVER:URI`.
    pub fn mention(&self) -> String {
        format!("@{}:{}", self.server, self.uri)
    }
}

/// The prompts and resources of the running servers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    pub prompts: Vec<PromptEntry>,
    pub resources: Vec<ResourceEntry>,
}

/// `text` on one line, without control characters, cut to `TEXT_CHARS`.
fn clean(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .take(TEXT_CHARS)
        .collect()
}

/// A name usable in a command or a mention: no whitespace, no control
/// characters, not empty.
fn usable(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= TEXT_CHARS
        && !name.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Lists what every running server offers. A server that fails to list is
/// left out (its tools still work); each list is bounded by the server's
/// tool timeout.
pub async fn catalog(hub: &McpHub) -> Catalog {
    let mut out = Catalog::default();
    for server in hub.all() {
        let Ok(super::hub::Connection { peer, .. }) = server.peer() else {
            continue;
        };
        let caps = peer
            .peer_info()
            .map(|info| info.capabilities.clone())
            .unwrap_or_default();
        let timeout = server.config.tool_timeout;
        if caps.prompts.is_some()
            && let Ok(Ok(prompts)) = tokio::time::timeout(timeout, peer.list_all_prompts()).await
        {
            out.prompts.extend(
                prompts
                    .iter()
                    .filter(|p| usable(&p.name))
                    .take(PER_SERVER)
                    .map(|p| prompt_entry(&server.name, p)),
            );
        }
        if caps.resources.is_some()
            && let Ok(Ok(resources)) =
                tokio::time::timeout(timeout, peer.list_all_resources()).await
        {
            out.resources.extend(
                resources
                    .iter()
                    .filter(|r| usable(&r.uri))
                    .take(PER_SERVER)
                    .map(|r| ResourceEntry {
                        server: server.name.clone(),
                        uri: r.uri.clone(),
                        name: clean(&r.name),
                    }),
            );
        }
    }
    out
}

fn prompt_entry(server: &str, prompt: &Prompt) -> PromptEntry {
    PromptEntry {
        server: server.to_string(),
        name: prompt.name.clone(),
        description: clean(
            prompt
                .description
                .as_deref()
                .or(prompt.title.as_deref())
                .unwrap_or(""),
        ),
        arguments: prompt
            .arguments
            .iter()
            .flatten()
            .map(|a| (clean(&a.name), a.required.unwrap_or(false)))
            .collect(),
    }
}

/// Why a `/SERVER:PROMPT` command did not become a turn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    #[error("/{server}:{prompt}: no MCP server is named {server:?}; servers: {known}")]
    NoServer {
        server: String,
        prompt: String,
        known: String,
    },
    #[error("/{server}:{prompt}: the MCP server {server} is {state}")]
    NotRunning {
        server: String,
        prompt: String,
        state: String,
    },
    #[error("/{server}:{prompt}: {server} has no prompt named {prompt:?}; its prompts: {known}")]
    NoPrompt {
        server: String,
        prompt: String,
        known: String,
    },
    #[error("/{server}:{prompt}: {problem}; it takes {usage}")]
    Arguments {
        server: String,
        prompt: String,
        problem: String,
        usage: String,
    },
    #[error("/{server}:{prompt}: the MCP server answered with an error: {message}")]
    Failed {
        server: String,
        prompt: String,
        message: String,
    },
}

/// How `entry`'s arguments are written after its command.
fn usage(entry: &PromptEntry) -> String {
    if entry.arguments.is_empty() {
        return "no arguments".to_string();
    }
    format!(
        "{} (a prompt with one argument also takes the words alone)",
        entry.argument_words()
    )
}

/// The words after the command as the prompt's arguments: `NAME=VALUE`
/// pairs, or, for a prompt with one argument, the words themselves.
pub fn arguments(declared: &[(String, bool)], words: &str) -> Result<JsonObject, String> {
    let words = words.trim();
    let mut out = JsonObject::new();
    let pairs: Vec<&str> = words.split_whitespace().collect();
    let all_pairs = !pairs.is_empty() && pairs.iter().all(|w| w.contains('='));
    if !words.is_empty() && !all_pairs {
        match declared {
            [(name, _)] => {
                out.insert(name.clone(), words.into());
            }
            [] => return Err(format!("it takes no arguments; got {words:?}")),
            _ => return Err(format!("write its arguments as NAME=VALUE; got {words:?}")),
        }
    } else {
        for pair in pairs {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if !declared.iter().any(|(d, _)| d == name) {
                return Err(format!("it has no argument named {name:?}"));
            }
            out.insert(name.to_string(), value.into());
        }
    }
    if let Some((missing, _)) = declared
        .iter()
        .find(|(name, required)| *required && !out.contains_key(name))
    {
        return Err(format!("the argument {missing} is required"));
    }
    Ok(out)
}

/// Gets `/SERVER:PROMPT` with `words` as its arguments, as the text of a
/// turn: each message's content as text (an assistant's marked as such),
/// answers typed for that server hidden, kept to `PROMPT_BYTES`.
pub async fn get(
    hub: &McpHub,
    (server, prompt): (&str, &str),
    words: &str,
) -> Result<String, PromptError> {
    let Some(live) = hub.server(server) else {
        return Err(PromptError::NoServer {
            server: server.into(),
            prompt: prompt.into(),
            known: hub.server_names().join(", "),
        });
    };
    let connection = live.peer().map_err(|state| PromptError::NotRunning {
        server: server.into(),
        prompt: prompt.into(),
        state,
    })?;
    let failed = |message: String| PromptError::Failed {
        server: server.into(),
        prompt: prompt.into(),
        message: live.typed.hide(&message),
    };
    let peer = connection.peer.clone();
    let timeout = live.config.tool_timeout;
    let listed = tokio::time::timeout(timeout, peer.list_all_prompts())
        .await
        .map_err(|_| {
            failed(format!(
                "listing its prompts took longer than {} s",
                timeout.as_secs()
            ))
        })?
        .map_err(|e| failed(e.to_string()))?;
    let Some(found) = listed.iter().find(|p| p.name == prompt) else {
        let known: Vec<&str> = listed.iter().map(|p| p.name.as_str()).collect();
        return Err(PromptError::NoPrompt {
            server: server.into(),
            prompt: prompt.into(),
            known: if known.is_empty() {
                "none".into()
            } else {
                known.join(", ")
            },
        });
    };
    let entry = prompt_entry(server, found);
    let args = arguments(&entry.arguments, words).map_err(|problem| PromptError::Arguments {
        server: server.into(),
        prompt: prompt.into(),
        problem,
        usage: usage(&entry),
    })?;
    let mut params = GetPromptRequestParams::new(prompt);
    if !args.is_empty() {
        params = params.with_arguments(args);
    }
    // Its questions (an `input_required` answer) are put to the person
    // while the prompt is fetched.
    let _calling = live.window.calling();
    let got = tokio::time::timeout(
        timeout,
        super::rounds::get_prompt(&peer, &connection.handler, params),
    )
    .await
    .map_err(|_| failed(format!("it did not answer within {} s", timeout.as_secs())))?
    .map_err(|e| failed(e.to_string()))?;
    Ok(cap(&live.typed.hide(&text(&got.messages)), PROMPT_BYTES))
}

fn text(messages: &[rmcp::model::PromptMessage]) -> String {
    let parts: Vec<String> = messages
        .iter()
        .map(|message| {
            let body = block_text(&message.content);
            match message.role {
                Role::Assistant => format!("[assistant]\n{body}"),
                _ => body,
            }
        })
        .collect();
    parts.join("\n\n")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn declared(names: &[(&str, bool)]) -> Vec<(String, bool)> {
        names.iter().map(|(n, r)| (n.to_string(), *r)).collect()
    }

    #[test]
    fn arguments_come_as_pairs_or_as_the_one_arguments_words() {
        let city = declared(&[("city", true), ("state", false)]);
        let got = arguments(&city, "city=Oslo state=Viken").unwrap();
        assert_eq!(got.get("city").unwrap(), "Oslo");
        assert_eq!(got.get("state").unwrap(), "Viken");
        assert!(
            arguments(&city, "state=Viken")
                .unwrap_err()
                .contains("city is required")
        );
        assert!(arguments(&city, "Oslo").unwrap_err().contains("NAME=VALUE"));
        assert!(
            arguments(&city, "town=Oslo")
                .unwrap_err()
                .contains("no argument named")
        );
        let one = declared(&[("topic", true)]);
        assert_eq!(
            arguments(&one, " the weather in Oslo ")
                .unwrap()
                .get("topic")
                .unwrap(),
            "the weather in Oslo"
        );
        assert!(arguments(&[], "x").unwrap_err().contains("no arguments"));
        assert!(arguments(&[], "").unwrap().is_empty());
        assert!(arguments(&one, "").unwrap_err().contains("required"));
    }

    #[test]
    fn names_with_spaces_or_controls_are_not_offered() {
        assert!(usable("simple-prompt"));
        assert!(!usable("two words"));
        assert!(!usable("bell\u{7}"));
        assert!(!usable(""));
        assert_eq!(clean("a\u{1b}[31m  b\nc"), "a[31m b c");
    }
}
