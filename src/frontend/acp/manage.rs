//! The session methods that start no agent: `session/list` (the saved
//! sessions that got a prompt, as `/sessions` and `--resume` list them,
//! from the same store), `session/close` (the session's agent stops as at
//! `/quit`; its file stays), `session/delete` (its file removed, by a
//! whole id only), and `authenticate` (the key variable checked).

use std::path::Path;

use agent_client_protocol::v1::schema::{
    AuthenticateResponse, CloseSessionResponse, DeleteSessionResponse, ListSessionsResponse,
    SessionInfo,
};

use crate::config::Settings;
use crate::session::{SessionId, SessionStore, SessionSummary};

use super::{Server, auth, invalid};

type Answer<T> = Result<T, agent_client_protocol::Error>;

impl Server {
    fn store(&self) -> SessionStore {
        SessionStore::new(self.home.sessions_dir())
    }

    /// The settings as they hold where mino was started (the project's
    /// file included, when that directory is one).
    fn settings_here(&self) -> Result<Settings, String> {
        let here = std::env::current_dir().map_err(|e| e.to_string())?;
        Settings::load_with_user_file(&self.home, &self.user_file, &here, &self.env, &self.cli)
            .map_err(|e| e.to_string())
    }

    /// The variable `[model] api_key_env` names, when the settings read.
    pub(super) fn key_variable(&self) -> Option<String> {
        self.settings_here().ok().map(|s| s.model.api_key_env)
    }

    /// `authenticate`: the model service has its key (or needs none).
    pub(super) fn authenticate(&self, method: &str) -> Answer<AuthenticateResponse> {
        if method != auth::METHOD {
            return Err(invalid(
                auth::AuthError::UnknownMethod(method.to_string()).to_string(),
            ));
        }
        let settings = self
            .settings_here()
            .map_err(|e| invalid(auth::AuthError::Settings(e).to_string()))?;
        auth::check(&settings.model, &self.user_file)
            .map_err(|e| agent_client_protocol::Error::auth_required().data(e.to_string()))?;
        Ok(AuthenticateResponse::new())
    }

    /// `session/list`: newest first; only those started in `cwd` when it
    /// is given.
    pub(super) async fn list(&self, cwd: Option<&Path>) -> Answer<ListSessionsResponse> {
        let store = self.store();
        let cwd = cwd.map(Path::to_path_buf);
        let listed = tokio::task::spawn_blocking(move || {
            let list = store.list()?;
            let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
            let here = cwd.as_deref().map(canonical);
            Ok::<_, crate::session::SessionError>(
                list.into_iter()
                    .filter(|s| s.first_prompt.is_some())
                    .filter(|s| here.as_ref().is_none_or(|h| canonical(&s.project) == *h))
                    .map(|s| info(&store, s))
                    .collect::<Vec<_>>(),
            )
        })
        .await
        .map_err(|e| agent_client_protocol::Error::internal_error().data(e.to_string()))?
        .map_err(|e| agent_client_protocol::Error::internal_error().data(e.to_string()))?;
        Ok(ListSessionsResponse::new(listed))
    }

    /// `session/close`: stops the session's agent (a running turn is
    /// interrupted, its prompt answered `cancelled`); its file stays for
    /// `session/load` or `session/resume`.
    pub(super) async fn close(&self, id: &str) -> Answer<CloseSessionResponse> {
        if !self.stop_one(id).await {
            return Err(invalid(format!(
                "session {id:?} is not open in this connection; nothing was closed"
            )));
        }
        Ok(CloseSessionResponse::new())
    }

    /// `session/delete`: the session (closed first, when it is open here)
    /// loses its file. Only a whole id is taken: a prefix, a path or a
    /// name of anything else is refused before any file is touched.
    pub(super) async fn delete(&self, id: &str) -> Answer<DeleteSessionResponse> {
        let id = SessionId::parse(id).map_err(|e| invalid(e.to_string()))?;
        self.stop_one(id.as_str()).await;
        let store = self.store();
        tokio::task::spawn_blocking(move || store.delete(&id))
            .await
            .map_err(|e| agent_client_protocol::Error::internal_error().data(e.to_string()))?
            .map_err(|e| invalid(e.to_string()))?;
        Ok(DeleteSessionResponse::new())
    }
}

/// One saved session as the editor lists it: its first prompt as its
/// title, the directory it was started in, and when its file was last
/// written.
fn info(store: &SessionStore, summary: SessionSummary) -> SessionInfo {
    let updated = std::fs::metadata(store.path_of(&summary.id))
        .and_then(|m| m.modified())
        .ok()
        .map(|t| humantime::format_rfc3339_seconds(t).to_string());
    SessionInfo::new(summary.id.to_string(), summary.project)
        .title(summary.first_prompt)
        .updated_at(updated)
}
