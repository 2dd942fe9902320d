//! Where the OAuth tokens of remote MCP servers live: mino's home, one file
//! per issuer (`mcp-oauth/ISSUER.json`, mode 0600, written whole through a
//! temporary file and a rename), each holding, per resource (a server's
//! URL), what `rmcp` stores: the client id, the token response, the scopes
//! granted, when it was received, the issuer. mino's home is out of the
//! model's file tools and masked in the sandbox. Every token value read or
//! written is told to `TokenValues`, which hides it from the servers'
//! results. Never shows a token.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The folder of mino's home that holds the token files.
pub const TOKEN_DIR: &str = "mcp-oauth";

/// The issuer a token file is named after when the metadata named none.
const NO_ISSUER: &str = "unknown-issuer";

/// One issuer's file.
#[derive(Default, Serialize, Deserialize)]
struct IssuerFile {
    issuer: String,
    /// Per resource (the server's URL).
    resources: BTreeMap<String, StoredCredentials>,
}

/// The token files in mino's home.
#[derive(Debug, Clone)]
pub struct TokenDir {
    dir: PathBuf,
}

impl TokenDir {
    pub fn new(home: &Path) -> Self {
        Self {
            dir: home.join(TOKEN_DIR),
        }
    }

    /// Every issuer file, read (a file that does not parse is left alone).
    fn files(&self) -> Vec<(PathBuf, IssuerFile)> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .filter_map(|p| {
                let text = std::fs::read_to_string(&p).ok()?;
                let file = serde_json::from_str(&text).ok()?;
                Some((p, file))
            })
            .collect()
    }

    /// What is stored for `resource`.
    pub fn load(&self, resource: &str) -> Option<StoredCredentials> {
        self.files()
            .into_iter()
            .find_map(|(_, mut f)| f.resources.remove(resource))
    }

    /// Stores `credentials` for `resource` in its issuer's file, and takes
    /// the resource out of any other issuer's.
    pub fn save(&self, resource: &str, credentials: StoredCredentials) -> std::io::Result<()> {
        let issuer = credentials
            .issuer
            .clone()
            .unwrap_or_else(|| NO_ISSUER.to_string());
        let target = self.dir.join(file_name(&issuer));
        self.remove_except(resource, Some(&target))?;
        let mut file = self
            .files()
            .into_iter()
            .find(|(p, _)| *p == target)
            .map(|(_, f)| f)
            .unwrap_or_default();
        file.issuer = issuer;
        file.resources.insert(resource.to_string(), credentials);
        self.write(&target, &file)
    }

    /// Forgets `resource`; whether anything was stored for it.
    pub fn remove(&self, resource: &str) -> std::io::Result<bool> {
        self.remove_except(resource, None)
    }

    fn remove_except(&self, resource: &str, keep: Option<&Path>) -> std::io::Result<bool> {
        let mut removed = false;
        for (path, mut file) in self.files() {
            if Some(path.as_path()) == keep || file.resources.remove(resource).is_none() {
                continue;
            }
            removed = true;
            if file.resources.is_empty() {
                std::fs::remove_file(&path)?;
            } else {
                self.write(&path, &file)?;
            }
        }
        Ok(removed)
    }

    /// Writes `file` whole: a temporary file (0600) in the same folder,
    /// renamed over the old one.
    fn write(&self, path: &Path, file: &IssuerFile) -> std::io::Result<()> {
        crate::home::create_private_dir(&self.dir).map_err(std::io::Error::other)?;
        let bytes = serde_json::to_vec_pretty(file).map_err(std::io::Error::other)?;
        let mut temp = tempfile::NamedTempFile::new_in(&self.dir)?;
        temp.write_all(&bytes)?;
        temp.as_file().sync_all()?;
        temp.persist(path).map_err(|e| e.error)?;
        Ok(())
    }

    /// Every token value stored, for the run's secrets.
    pub fn values(&self) -> Vec<String> {
        self.files()
            .iter()
            .flat_map(|(_, f)| f.resources.values())
            .flat_map(token_values)
            .collect()
    }
}

/// `ISSUER.json`: the issuer's host and path in safe characters, and a
/// short digest of the whole issuer so two never share a file.
fn file_name(issuer: &str) -> String {
    let readable: String = issuer
        .split_once("://")
        .map_or(issuer, |(_, rest)| rest)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let digest = hex::encode(Sha256::digest(issuer.as_bytes()));
    format!("{}-{}.json", readable.trim_matches('_'), &digest[..12])
}

/// The access and refresh tokens of `credentials`.
pub fn token_values(credentials: &StoredCredentials) -> Vec<String> {
    let Some(response) = &credentials.token_response else {
        return Vec::new();
    };
    let json = serde_json::to_value(response).unwrap_or_default();
    ["access_token", "refresh_token"]
        .iter()
        .filter_map(|key| json.get(key).and_then(|v| v.as_str()))
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .collect()
}

/// The token values this run has seen; cloning shares them.
#[derive(Clone, Default)]
pub struct TokenValues(Arc<Mutex<Vec<String>>>);

impl TokenValues {
    pub fn add(&self, values: Vec<String>) {
        let mut held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        for value in values {
            if !held.contains(&value) {
                held.push(value);
            }
        }
    }

    /// `text` with every token replaced.
    pub fn hide(&self, text: &str) -> String {
        let held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        held.iter().fold(text.to_string(), |out, token| {
            out.replace(
                token.as_str(),
                "[an OAuth token of an MCP server, not shown]",
            )
        })
    }
}

/// `rmcp`'s credential store for one server: its entry in the token files.
pub struct ResourceStore {
    pub dir: TokenDir,
    pub resource: String,
    pub values: TokenValues,
}

fn store_error(e: std::io::Error) -> AuthError {
    AuthError::CredentialStoreError(format!("the OAuth token file in mino's home: {e}"))
}

#[async_trait::async_trait]
impl CredentialStore for ResourceStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let found = self.dir.load(&self.resource);
        if let Some(credentials) = &found {
            self.values.add(token_values(credentials));
        }
        Ok(found)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.values.add(token_values(&credentials));
        self.dir
            .save(&self.resource, credentials)
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.dir
            .remove(&self.resource)
            .map(|_| ())
            .map_err(store_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credentials(issuer: &str, token: &str) -> StoredCredentials {
        let response = serde_json::from_value(serde_json::json!({
            "access_token": token, "token_type": "bearer", "refresh_token": format!("r-{token}")
        }))
        .unwrap();
        StoredCredentials::new("client".into(), Some(response), vec![], None)
            .with_issuer(Some(issuer.into()))
    }

    #[test]
    fn one_private_file_per_issuer_and_a_resource_moves_with_its_issuer() {
        let home = tempfile::tempdir().unwrap();
        let dir = TokenDir::new(home.path());
        dir.save("https://a/mcp", credentials("https://issuer.one/", "t1"))
            .unwrap();
        dir.save("https://b/mcp", credentials("https://issuer.one/", "t2"))
            .unwrap();
        let files: Vec<_> = std::fs::read_dir(home.path().join(TOKEN_DIR))
            .unwrap()
            .flatten()
            .collect();
        assert_eq!(files.len(), 1);
        use std::os::unix::fs::PermissionsExt;
        let mode = files[0].metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        dir.save("https://a/mcp", credentials("https://issuer.two/", "t3"))
            .unwrap();
        assert_eq!(
            std::fs::read_dir(home.path().join(TOKEN_DIR))
                .unwrap()
                .count(),
            2
        );
        assert_eq!(
            token_values(&dir.load("https://a/mcp").unwrap()),
            ["t3", "r-t3"]
        );
        let mut all = dir.values();
        all.sort();
        assert_eq!(all, ["r-t2", "r-t3", "t2", "t3"]);
        assert!(dir.remove("https://a/mcp").unwrap());
        assert!(dir.remove("https://b/mcp").unwrap());
        assert_eq!(
            std::fs::read_dir(home.path().join(TOKEN_DIR))
                .unwrap()
                .count(),
            0
        );
        assert!(dir.load("https://a/mcp").is_none());
    }

    #[test]
    fn tokens_are_hidden() {
        let values = TokenValues::default();
        values.add(vec!["secret-token".into()]);
        assert_eq!(
            values.hide("x secret-token y"),
            "x [an OAuth token of an MCP server, not shown] y"
        );
    }
}
