//! What an editor's prompt becomes before it reaches the agent: its text
//! blocks and the address of each linked resource, and each embedded
//! resource's contents judged as a file read is (a protected path, by its
//! address or by where it really leads, refuses the prompt) and redacted of
//! the secrets mino holds; the whole bounded by `[limits] prompt_bytes`.
//! It reads no file; it decides nothing else.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::v1::schema::ContentBlock;
use serde_json::Value;

use crate::policy::ProtectedPaths;
use crate::secrets::HeldSecrets;

/// A session's reading of its prompts.
pub struct PromptReader {
    /// The project's real path.
    pub root: PathBuf,
    pub protected: Arc<ProtectedPaths>,
    pub secrets: HeldSecrets,
    /// `[limits] prompt_bytes`.
    pub limit: usize,
}

impl PromptReader {
    /// The prompt's text, or why it is refused (a sentence for the editor).
    pub async fn read(&self, blocks: &[ContentBlock]) -> Result<String, String> {
        let mut parts = Vec::new();
        let mut size = 0usize;
        for block in blocks {
            let part = match block {
                ContentBlock::Text(t) => t.text.clone(),
                ContentBlock::ResourceLink(link) => link.uri.clone(),
                ContentBlock::Resource(resource) => {
                    let Ok(Value::Object(map)) = serde_json::to_value(&resource.resource) else {
                        continue;
                    };
                    let uri = map.get("uri").and_then(Value::as_str).unwrap_or_default();
                    if self.protected_uri(uri) {
                        return Err(format!(
                            "the embedded resource {uri} is a protected path (secrets, keys, mino's home): its contents are never sent to the model; remove it from the prompt"
                        ));
                    }
                    let text = map.get("text").and_then(Value::as_str).unwrap_or_default();
                    let said = format!("{uri}\n{text}");
                    // Counted before redaction: the bound is on what came.
                    size = size.saturating_add(said.len());
                    if size > self.limit {
                        return Err(self.too_long(size));
                    }
                    let secrets = self.secrets.get().await;
                    let redacted = secrets.redact_result(&said);
                    parts.push(redacted);
                    continue;
                }
                _ => continue,
            };
            size = size.saturating_add(part.len());
            if size > self.limit {
                return Err(self.too_long(size));
            }
            parts.push(part);
        }
        Ok(parts.join("\n"))
    }

    fn too_long(&self, size: usize) -> String {
        format!(
            "the prompt is more than {} bytes (at least {size}): [limits] prompt_bytes in config.toml accepts at most {} (1024 to 16777216)",
            self.limit, self.limit
        )
    }

    /// Whether `uri` names a protected path: by its words (as an MCP
    /// argument is judged), or, for a `file:` address, by where the file
    /// really is inside the project.
    fn protected_uri(&self, uri: &str) -> bool {
        if self.protected.names_protected(uri) {
            return true;
        }
        let Some(path) = reqwest::Url::parse(uri)
            .ok()
            .filter(|url| url.scheme() == "file")
            .and_then(|url| url.to_file_path().ok())
        else {
            return false;
        };
        let real = path.canonicalize().unwrap_or(path);
        inside(&self.root, &real).is_some_and(|relative| self.protected.is_protected(&relative))
    }
}

/// `path` relative to `root` with `/` separators, when it is inside.
fn inside(root: &Path, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(root).ok()?;
    let parts: Vec<&str> = relative
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect::<Option<_>>()?;
    Some(parts.join("/"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn reader() -> PromptReader {
        PromptReader {
            root: PathBuf::from("/nonexistent-project"),
            protected: Arc::new(ProtectedPaths::builtin()),
            secrets: HeldSecrets::default(),
            limit: 1024,
        }
    }

    #[test]
    fn protected_addresses_are_found_in_their_variants() {
        let r = reader();
        for uri in [
            "file:///nonexistent-project/.env",
            "file:///nonexistent-project/.ENV",
            "file:///nonexistent-project/%2Eenv",
            "file:///nonexistent-project/sub/../.env",
            "file:///elsewhere/.env",
            "file:///home/u/.ssh/id_rsa",
            ".env",
        ] {
            assert!(r.protected_uri(uri), "{uri}");
        }
        for uri in [
            "file:///nonexistent-project/notes.md",
            "untitled:Untitled-1",
        ] {
            assert!(!r.protected_uri(uri), "{uri}");
        }
    }
}
