//! The intents some bindings make from the key itself (an answer's
//! letter, a character typed into a note or a server question's field),
//! for the table. Never changes state.

use crossterm::event::{KeyCode, KeyEvent};

use crate::policy::ConsentAnswer;

use super::super::msg::Msg;
use super::super::server_question::QuestionMsg as Q;
use super::binding::Does;

pub(super) fn answer(key: &KeyEvent) -> Option<Msg> {
    match key.code {
        KeyCode::Char(c) => ConsentAnswer::from_key(c).map(Msg::Answer),
        _ => None,
    }
}

pub(super) fn field_char(key: &KeyEvent) -> Option<Msg> {
    match key.code {
        KeyCode::Char(c) => Some(Msg::Question(Q::Char(c))),
        _ => None,
    }
}

/// What a binding of a server's question does.
pub(super) const fn question(msg: Q) -> Does {
    match msg {
        Q::Accept => Does::Msg(|| Msg::Question(Q::Accept)),
        Q::NextField => Does::Msg(|| Msg::Question(Q::NextField)),
        Q::PrevField => Does::Msg(|| Msg::Question(Q::PrevField)),
        Q::Decline => Does::Msg(|| Msg::Question(Q::Decline)),
        Q::Cancel => Does::Msg(|| Msg::Question(Q::Cancel)),
        Q::Backspace => Does::Msg(|| Msg::Question(Q::Backspace)),
        Q::Char(_) => Does::Key(field_char),
    }
}

pub(super) fn note_char(key: &KeyEvent) -> Option<Msg> {
    match key.code {
        KeyCode::Char(c) => Some(Msg::NoteChar(c)),
        _ => None,
    }
}
