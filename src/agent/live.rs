//! The session in use: its log, its history, and what lives only in this
//! run (mode, remembered answers, last context use). Every item is on disk
//! before it joins history; the append and its fsync run on the blocking
//! pool, never on an async worker. A new session has no file until its
//! first item: a session that never got a prompt leaves nothing behind (a
//! `/model` switch before it is written with the header).

use std::sync::{Arc, Mutex, PoisonError};

use crate::model::Item;

use super::budget::Calibration;
use crate::policy::{Mode, SessionConsent};
use std::path::PathBuf;

use crate::session::{
    LogEntry, ModelChoice, Plan, SessionError, SessionId, SessionLog, SessionStore,
};

use super::error::AgentError;

pub struct LiveSession {
    pub id: String,
    /// Shared with the blocking task that appends; nothing else locks it.
    log: Arc<Mutex<LogSlot>>,
    /// Shared with a front end that shows it (a resumed session's replay),
    /// so showing it copies nothing; written through `Arc::make_mut`.
    pub history: Arc<Vec<Item>>,
    pub mode: Mode,
    pub consent: SessionConsent,
    /// Input tokens of the last response, as the service reported them.
    pub input_tokens: u64,
    /// What the context budget learnt from the service's counts.
    pub calibration: Calibration,
    /// Calls acknowledged as interrupted when the session was opened, to be
    /// told after its banner.
    pub recovered: usize,
    /// The session's plan (the `plan` tool's), as its file last recorded it.
    pub plan: Plan,
    /// What its requests spent in this run.
    pub spent: super::spent::Spent,
    /// The model `/model` put it on, as its file last recorded it; `None`
    /// is the settings' start model.
    pub model: Option<ModelChoice>,
}

/// The session's file, or what it takes to write it at the first item.
enum LogSlot {
    Open(SessionLog),
    Unwritten {
        store: SessionStore,
        id: SessionId,
        project: PathBuf,
        model: String,
        /// A `/model` switch before the first prompt, written after the
        /// header when the file is created.
        switched: Option<ModelChoice>,
    },
}

impl LogSlot {
    /// The open log, its file created (with its header) when it has none yet.
    fn open(&mut self) -> Result<&mut SessionLog, SessionError> {
        if let LogSlot::Unwritten {
            store,
            id,
            project,
            model,
            switched,
        } = self
        {
            let mut log = store.create_as(id, project, model)?;
            if let Some(choice) = switched.take() {
                log.append(&LogEntry::Model(choice))?;
            }
            *self = LogSlot::Open(log);
        }
        match self {
            LogSlot::Open(log) => Ok(log),
            LogSlot::Unwritten { store, .. } => Err(SessionError::Create {
                path: store.dir().to_path_buf(),
                error: std::io::Error::other("the session file was not created"),
            }),
        }
    }
}

impl LiveSession {
    /// A new session whose file `store` writes at its first item.
    pub fn unwritten(
        store: SessionStore,
        id: SessionId,
        project: PathBuf,
        model: String,
        mode: Mode,
    ) -> Self {
        Self::with_slot(
            id.to_string(),
            LogSlot::Unwritten {
                store,
                id,
                project,
                model,
                switched: None,
            },
            Vec::new(),
            mode,
        )
    }

    pub fn new(log: SessionLog, history: Vec<Item>, mode: Mode) -> Self {
        Self::with_slot(log.id().to_string(), LogSlot::Open(log), history, mode)
    }

    fn with_slot(id: String, slot: LogSlot, history: Vec<Item>, mode: Mode) -> Self {
        Self {
            id,
            log: Arc::new(Mutex::new(slot)),
            history: Arc::new(history),
            mode,
            consent: SessionConsent::default(),
            input_tokens: 0,
            calibration: Calibration::default(),
            recovered: 0,
            plan: Plan::default(),
            spent: Default::default(),
            model: None,
        }
    }

    /// Whether the session has a file (it got its first record).
    pub fn is_written(&self) -> bool {
        matches!(
            *self.log.lock().unwrap_or_else(PoisonError::into_inner),
            LogSlot::Open(_)
        )
    }

    /// Appends `item` to the log (fsync) and then to history.
    pub async fn save(&mut self, item: Item) -> Result<(), AgentError> {
        self.save_all(vec![item]).await
    }

    /// Appends `items` to the log with one fsync, then to history; the
    /// items are moved, never copied (an answer may be megabytes). No items write nothing (nor create the file).
    pub async fn save_all(&mut self, items: Vec<Item>) -> Result<(), AgentError> {
        if items.is_empty() {
            return Ok(());
        }
        let log = Arc::clone(&self.log);
        let items = tokio::task::spawn_blocking(move || {
            let mut slot = log.lock().unwrap_or_else(PoisonError::into_inner);
            slot.open()?.append_items(&items)?;
            Ok::<_, SessionError>(items)
        })
        .await
        .map_err(|e| AgentError::Blocking(e.to_string()))??;
        Arc::make_mut(&mut self.history).extend(items);
        Ok(())
    }

    /// Records `plan` as the session's plan (fsync), then holds it.
    pub async fn save_plan(&mut self, plan: Plan) -> Result<(), AgentError> {
        self.append_entry(LogEntry::Plan(plan.clone())).await?;
        self.plan = plan;
        Ok(())
    }

    /// Runs `work` on the session's open log, on the blocking pool; `None`
    /// when the session has no file yet (it never got a prompt).
    pub async fn with_log<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut SessionLog) -> T + Send + 'static,
    ) -> Result<Option<T>, AgentError> {
        let log = Arc::clone(&self.log);
        tokio::task::spawn_blocking(move || {
            let mut slot = log.lock().unwrap_or_else(PoisonError::into_inner);
            match &mut *slot {
                LogSlot::Open(log) => Some(work(log)),
                LogSlot::Unwritten { .. } => None,
            }
        })
        .await
        .map_err(|e| AgentError::Blocking(e.to_string()))
    }

    /// Appends one record to the log and waits until it is on disk.
    pub async fn append_entry(&self, entry: LogEntry) -> Result<(), AgentError> {
        let log = Arc::clone(&self.log);
        tokio::task::spawn_blocking(move || {
            let mut slot = log.lock().unwrap_or_else(PoisonError::into_inner);
            // Clearing a session that has no file yet leaves nothing to say;
            // a switch of model waits for its first prompt.
            if let LogSlot::Unwritten { switched, .. } = &mut *slot {
                match entry {
                    LogEntry::Clear => return Ok(()),
                    LogEntry::Model(choice) => {
                        *switched = Some(choice);
                        return Ok(());
                    }
                    _ => {}
                }
            }
            slot.open()?.append(&entry)
        })
        .await
        .map_err(|e| AgentError::Blocking(e.to_string()))??;
        Ok(())
    }
}
