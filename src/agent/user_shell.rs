//! `!command`: a shell command the user runs themselves from the input box.
//! It is not a model call and asks no question (the person typed it), but
//! it goes through the turn machine as a bash call (`driver::
//! run_person_shell`), so the decision, the audit log, the checkpoints, the
//! sandbox, the timeout, the hidden variables and the output cap all apply.
//! Its output is shown like a tool result and added to the conversation as
//! a user message, so the model sees what the user saw. This file holds
//! how that message reads; it never decides and never starts a request.

use crate::model::ResultStatus;

/// The tool name the chat shows for a user's command.
pub const SHOWN_AS: &str = "bash";

/// The history item that tells the model what the user ran and saw.
pub fn history_text(command: &str, status: ResultStatus, output: &str) -> String {
    format!(
        "I ran this shell command myself in the project directory (not a tool call of yours; \
         it is here for context):\n$ {command}\nStatus: {}\n{output}",
        status.as_str()
    )
}
