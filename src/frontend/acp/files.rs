//! The editor's files over ACP: `fs/read_text_file` and `fs/write_text_file`
//! sent to the client, when it said at `initialize` that it serves them.
//! Owns only the two requests. The file tools call these after mino's own
//! decision and confined checks (see `tools/editor.rs`); this file never
//! decides, and never reads or writes a file itself.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    FileSystemCapabilities, ReadTextFileRequest, WriteTextFileRequest,
};

use crate::tools::BoxFuture;
use crate::tools::editor::{EditorError, EditorFiles};

/// One session's view of the client's files.
pub struct AcpFiles {
    cx: ConnectionTo<Client>,
    /// The session the requests name; set once the agent has started.
    session: Arc<OnceLock<String>>,
    reads: bool,
    writes: bool,
}

impl std::fmt::Debug for AcpFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpFiles")
            .field("session", &self.session.get())
            .field("reads", &self.reads)
            .field("writes", &self.writes)
            .finish_non_exhaustive()
    }
}

impl AcpFiles {
    /// The client's files as its capabilities offer them, or `None` when it
    /// offers neither.
    pub fn offered(
        cx: &ConnectionTo<Client>,
        fs: &FileSystemCapabilities,
        session: Arc<OnceLock<String>>,
    ) -> Option<Self> {
        (fs.read_text_file || fs.write_text_file).then(|| Self {
            cx: cx.clone(),
            session,
            reads: fs.read_text_file,
            writes: fs.write_text_file,
        })
    }

    fn session(&self) -> Result<String, EditorError> {
        self.session
            .get()
            .cloned()
            .ok_or_else(|| EditorError("the session has not started".into()))
    }
}

impl EditorFiles for AcpFiles {
    fn reads(&self) -> bool {
        self.reads
    }

    fn writes(&self) -> bool {
        self.writes
    }

    fn read(&self, path: PathBuf) -> BoxFuture<Result<String, EditorError>> {
        let session = self.session();
        let cx = self.cx.clone();
        Box::pin(async move {
            let sent = cx.send_request(ReadTextFileRequest::new(session?, path));
            sent.block_task()
                .await
                .map(|response| response.content)
                .map_err(|e| EditorError(e.to_string()))
        })
    }

    fn write(&self, path: PathBuf, content: String) -> BoxFuture<Result<(), EditorError>> {
        let session = self.session();
        let cx = self.cx.clone();
        Box::pin(async move {
            let sent = cx.send_request(WriteTextFileRequest::new(session?, path, content));
            sent.block_task()
                .await
                .map(|_| ())
                .map_err(|e| EditorError(e.to_string()))
        })
    }
}
