//! MCP servers' questions on the full screen: the open one (the text of
//! each field, which field has the keys, the last answer refused and why)
//! and those queued behind it, and what the keys do to them. Enter sends
//! the answers once they check out against the fields, Ctrl+D declines,
//! Esc cancels. The answers go to the server only: never into the chat,
//! the transcript or anything sent to the model. Never draws.

use std::collections::VecDeque;
use std::time::Instant;

use crate::mcp::question::{self, MAX_ANSWER, QuestionAnswer, ServerQuestion};

use super::app::App;
use super::arming::Arming;
use super::msg::Action;
use super::transcript::EntryKind;

/// What a key does to the open question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuestionMsg {
    Char(char),
    Backspace,
    NextField,
    PrevField,
    Accept,
    Decline,
    Cancel,
}

/// A question as the dialog holds it.
pub struct OpenQuestion {
    pub question: ServerQuestion,
    /// One text per field, starting with the field's default.
    pub texts: Vec<String>,
    /// The field that has the keys.
    pub focus: usize,
    /// Why the last Enter was refused.
    pub problem: Option<String>,
    pub arming: Arming,
}

impl std::fmt::Debug for OpenQuestion {
    /// The texts are the person's answers: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenQuestion")
            .field("question", &self.question)
            .field("focus", &self.focus)
            .finish_non_exhaustive()
    }
}

/// The open question and the ones waiting behind it.
#[derive(Debug, Default)]
pub struct QuestionQueue {
    items: VecDeque<OpenQuestion>,
}

impl QuestionQueue {
    pub fn push(&mut self, question: ServerQuestion, now: Instant, last_key: Option<Instant>) {
        let texts = question
            .fields
            .iter()
            .map(|f| f.default.clone().unwrap_or_default())
            .collect();
        self.items.push_back(OpenQuestion {
            question,
            texts,
            focus: 0,
            problem: None,
            arming: Arming::new(now, last_key),
        });
    }

    pub fn front(&self) -> Option<&OpenQuestion> {
        self.items.front()
    }

    pub fn front_mut(&mut self) -> Option<&mut OpenQuestion> {
        self.items.front_mut()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many wait behind the open one.
    pub fn waiting(&self) -> usize {
        self.items.len().saturating_sub(1)
    }

    /// Drops questions whose server stopped waiting (its call ended).
    pub fn prune_closed(&mut self, now: Instant, last_key: Option<Instant>) {
        let before = self.items.len();
        self.items.retain(|open| !open.question.reply.is_closed());
        if self.items.len() != before
            && let Some(next) = self.items.front_mut()
        {
            next.arming = Arming::new(now, last_key);
        }
    }

    fn pop_front(&mut self, now: Instant, last_key: Option<Instant>) -> Option<OpenQuestion> {
        let open = self.items.pop_front();
        if let Some(next) = self.items.front_mut() {
            next.arming = Arming::new(now, last_key);
        }
        open
    }
}

/// Applies `msg` to the open question.
pub fn update(app: &mut App, msg: QuestionMsg) -> Vec<Action> {
    let Some(open) = app.questions.front_mut() else {
        return Vec::new();
    };
    let count = open.texts.len();
    match msg {
        QuestionMsg::Char(c) => {
            if let Some(text) = open.texts.get_mut(open.focus)
                && text.chars().count() < MAX_ANSWER
                && !c.is_control()
            {
                text.push(c);
            }
        }
        QuestionMsg::Backspace => {
            if let Some(text) = open.texts.get_mut(open.focus) {
                text.pop();
            }
        }
        QuestionMsg::NextField if count > 0 => open.focus = (open.focus + 1) % count,
        QuestionMsg::PrevField if count > 0 => open.focus = (open.focus + count - 1) % count,
        QuestionMsg::NextField | QuestionMsg::PrevField => {}
        QuestionMsg::Accept => match question::answers(&open.question.fields, &open.texts) {
            Ok(content) => return finish(app, QuestionAnswer::Accept(content)),
            Err(problem) => open.problem = Some(problem.to_string()),
        },
        QuestionMsg::Decline => return finish(app, QuestionAnswer::Decline),
        QuestionMsg::Cancel => return finish(app, QuestionAnswer::Cancel),
    }
    Vec::new()
}

/// Sends `answer` and says in the chat what was chosen (never what was
/// typed).
fn finish(app: &mut App, answer: QuestionAnswer) -> Vec<Action> {
    let Some(open) = app.questions.pop_front(app.now, app.last_key) else {
        return Vec::new();
    };
    let server = open.question.server;
    let said = match &answer {
        QuestionAnswer::Accept(content) => format!(
            "Answered the MCP server {server}'s question ({} of {} fields filled; the answers went to the server only).",
            content.len(),
            open.texts.len()
        ),
        QuestionAnswer::Decline => format!("Declined the MCP server {server}'s question."),
        QuestionAnswer::Cancel => format!("Cancelled the MCP server {server}'s question."),
    };
    app.transcript.push(EntryKind::Notice(said));
    vec![Action::AnswerServer {
        reply: open.question.reply,
        answer,
    }]
}
