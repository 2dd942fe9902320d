//! The state of permission questions: the open one (its focus and scroll)
//! and the ones queued behind it, in arrival order. It only collects an
//! answer; it never decides and never draws.

use std::collections::VecDeque;
use std::time::Instant;

use crate::agent::ConsentRequest;
use crate::policy::ConsentAnswer;

use super::arming::Arming;
/// A question as the dialog holds it.
#[derive(Debug)]
pub struct OpenConsent {
    pub request: ConsentRequest,
    /// Starts on reject, so Enter alone never allows anything.
    pub focus: ConsentAnswer,
    /// First body line shown.
    pub scroll: u16,
    /// When its keys arm (reset when it comes to the front).
    pub arming: Arming,
    /// A session-wide answer given to a hurried question, waiting for its
    /// `[y/N]`.
    pub confirming: Option<ConsentAnswer>,
    /// The rejection's note being typed (`n` or Tab opened it).
    pub note: Option<String>,
}

impl OpenConsent {
    /// The question `Allow bash for the rest of this session? [y/N]` asks
    /// before a hurried session-wide answer counts.
    pub fn confirm_question(&self, answer: ConsentAnswer) -> String {
        let tool = &self.request.tool;
        match answer {
            ConsentAnswer::NeverThisRun => {
                format!("Never allow {tool} again while mino runs? [y/N]")
            }
            _ => format!("Allow {tool} for the rest of this session? [y/N]"),
        }
    }
}

/// The open question and the ones waiting behind it.
#[derive(Debug, Default)]
pub struct ConsentQueue {
    items: VecDeque<OpenConsent>,
}

impl ConsentQueue {
    /// Queues `request`; shown now when nothing else is open.
    pub fn push(&mut self, request: ConsentRequest, now: Instant, last_key: Option<Instant>) {
        self.items.push_back(OpenConsent {
            request,
            focus: ConsentAnswer::Reject,
            scroll: 0,
            arming: Arming::new(now, last_key),
            confirming: None,
            note: None,
        });
    }

    pub fn front(&self) -> Option<&OpenConsent> {
        self.items.front()
    }

    pub fn front_mut(&mut self) -> Option<&mut OpenConsent> {
        self.items.front_mut()
    }

    /// Takes the open question; the next one comes on screen at `now`.
    pub fn pop_front(&mut self, now: Instant, last_key: Option<Instant>) -> Option<OpenConsent> {
        let open = self.items.pop_front();
        if let Some(next) = self.items.front_mut() {
            next.arming = Arming::new(now, last_key);
        }
        open
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many wait behind the open one.
    pub fn waiting(&self) -> usize {
        self.items.len().saturating_sub(1)
    }

    /// Drops questions the agent no longer waits for (an interrupted turn
    /// drops its receiver). Returns how many were dropped.
    pub fn prune_closed(&mut self, now: Instant, last_key: Option<Instant>) -> usize {
        let before = self.items.len();
        let front_closed = self
            .items
            .front()
            .is_some_and(|item| item.request.reply.is_closed());
        self.items.retain(|item| !item.request.reply.is_closed());
        if front_closed && let Some(next) = self.items.front_mut() {
            next.arming = Arming::new(now, last_key);
        }
        before - self.items.len()
    }
}
