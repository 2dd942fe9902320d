//! The state of permission questions: the open one (its focus and scroll)
//! and the ones queued behind it, in arrival order. It only collects an
//! answer; it never decides and never draws.

use std::collections::VecDeque;

use crate::agent::ConsentRequest;
use crate::policy::ConsentAnswer;

/// The four answers, in the order the dialog shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    AllowOnce,
    AllowForSession,
    Reject,
    Never,
}

impl Choice {
    pub const ALL: [Choice; 4] = [
        Choice::AllowOnce,
        Choice::AllowForSession,
        Choice::Reject,
        Choice::Never,
    ];

    pub fn answer(self) -> ConsentAnswer {
        match self {
            Choice::AllowOnce => ConsentAnswer::AllowOnce,
            Choice::AllowForSession => ConsentAnswer::AllowForSession,
            Choice::Reject => ConsentAnswer::Reject,
            Choice::Never => ConsentAnswer::NeverThisSession,
        }
    }

    /// The fixed letter key.
    pub fn key(self) -> char {
        match self {
            Choice::AllowOnce => 'y',
            Choice::AllowForSession => 'a',
            Choice::Reject => 'n',
            Choice::Never => 'v',
        }
    }

    /// What the choice says, for `tool`.
    pub fn label(self, tool: &str) -> String {
        match self {
            Choice::AllowOnce => "allow once".into(),
            Choice::AllowForSession => format!("allow {tool} for this session"),
            Choice::Reject => "reject".into(),
            Choice::Never => "never".into(),
        }
    }

    fn index(self) -> usize {
        Self::ALL.iter().position(|c| *c == self).unwrap_or(2)
    }

    pub fn next(self) -> Choice {
        Self::ALL[(self.index() + 1) % Self::ALL.len()]
    }

    pub fn prev(self) -> Choice {
        Self::ALL[(self.index() + Self::ALL.len() - 1) % Self::ALL.len()]
    }
}

/// A question as the dialog holds it.
#[derive(Debug)]
pub struct OpenConsent {
    pub request: ConsentRequest,
    /// Starts on reject, so Enter alone never allows anything.
    pub focus: Choice,
    /// First body line shown.
    pub scroll: u16,
}

/// The open question and the ones waiting behind it.
#[derive(Debug, Default)]
pub struct ConsentQueue {
    items: VecDeque<OpenConsent>,
}

impl ConsentQueue {
    pub fn push(&mut self, request: ConsentRequest) {
        self.items.push_back(OpenConsent {
            request,
            focus: Choice::Reject,
            scroll: 0,
        });
    }

    pub fn front(&self) -> Option<&OpenConsent> {
        self.items.front()
    }

    pub fn front_mut(&mut self) -> Option<&mut OpenConsent> {
        self.items.front_mut()
    }

    pub fn pop_front(&mut self) -> Option<OpenConsent> {
        self.items.pop_front()
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
    pub fn prune_closed(&mut self) -> usize {
        let before = self.items.len();
        self.items.retain(|item| !item.request.reply.is_closed());
        before - self.items.len()
    }
}
