//! The session in use: its log, its history, and what lives only in this
//! run (mode, remembered answers, last context use). Every item is on disk
//! before it joins history; the append and its fsync run on the blocking
//! pool, never on an async worker.

use std::sync::{Arc, Mutex, PoisonError};

use crate::model::Item;

use super::budget::Calibration;
use crate::policy::{Mode, SessionConsent};
use crate::session::{LogEntry, SessionLog};

use super::error::AgentError;

pub struct LiveSession {
    pub id: String,
    /// Shared with the blocking task that appends; nothing else locks it.
    log: Arc<Mutex<SessionLog>>,
    pub history: Vec<Item>,
    pub mode: Mode,
    pub consent: SessionConsent,
    /// Input tokens of the last response, as the service reported them.
    pub input_tokens: u64,
    /// What the context budget learnt from the service's counts.
    pub calibration: Calibration,
    /// Calls acknowledged as interrupted when the session was opened, to be
    /// told after its banner.
    pub recovered: usize,
}

impl LiveSession {
    pub fn new(log: SessionLog, history: Vec<Item>, mode: Mode) -> Self {
        Self {
            id: log.id().to_string(),
            log: Arc::new(Mutex::new(log)),
            history,
            mode,
            consent: SessionConsent::default(),
            input_tokens: 0,
            calibration: Calibration::default(),
            recovered: 0,
        }
    }

    /// Appends `item` to the log (fsync) and then to history.
    pub async fn save(&mut self, item: Item) -> Result<(), AgentError> {
        self.append_entry(LogEntry::Item(item.clone())).await?;
        self.history.push(item);
        Ok(())
    }

    /// Appends one record to the log and waits until it is on disk.
    pub async fn append_entry(&self, entry: LogEntry) -> Result<(), AgentError> {
        let log = Arc::clone(&self.log);
        tokio::task::spawn_blocking(move || {
            log.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .append(&entry)
        })
        .await
        .map_err(|e| AgentError::Blocking(e.to_string()))??;
        Ok(())
    }
}
