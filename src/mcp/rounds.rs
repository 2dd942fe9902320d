//! The questions of a server that speaks the 2026-07-28 revision: its
//! `tools/call`, `resources/read` or `prompts/get` answer may be an `input_required`
//! result carrying requests (a form question, `elicitation/create`) and an
//! opaque `requestState`. mino answers each question as it answers
//! elicitation under the earlier revision (the same `Handler::ask`: the
//! dialog, or a decline where nobody can answer or the server is marked
//! `ask`) and sends the request again with the answers and the state, up
//! to `MAX_ROUNDS` times. `rmcp`'s `Peer::call_tool` treats such a result
//! as an unexpected response, so this drives the rounds itself with
//! `call_tool_once`, `read_resource_once` and `get_prompt_once`. Never shows anything and
//! never decides whether to ask.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, InputRequest, InputRequiredResult, InputResponses,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
};
use rmcp::service::Peer;
use rmcp::{RoleClient, ServiceError};

use super::server::Handler;

/// Most `input_required` answers one request may get before mino gives up
/// on it (a server that asks forever cannot hold a turn).
pub const MAX_ROUNDS: usize = 8;

/// Why a request with questions did not complete.
#[derive(Debug, thiserror::Error)]
pub enum RoundsError {
    #[error("{0}")]
    Service(#[from] ServiceError),
    #[error(
        "it asked again after {MAX_ROUNDS} rounds of answers (input_required), and mino stopped"
    )]
    TooManyRounds,
    #[error("it asked for {0}, which mino does not offer")]
    Unoffered(&'static str),
    #[error("it answered with an input_required result that asks nothing and carries no state")]
    Empty,
    #[error("it answered with a task or another kind of result mino does not follow")]
    Unexpected,
}

/// `tools/call`, answering the server's questions between rounds.
pub async fn call_tool(
    peer: &Peer<RoleClient>,
    handler: &Handler,
    mut params: CallToolRequestParams,
) -> Result<CallToolResult, RoundsError> {
    for round in 0..MAX_ROUNDS {
        match peer.call_tool_once(params.clone()).await? {
            CallToolResponse::Complete(result) => return Ok(result),
            CallToolResponse::InputRequired(asked) => {
                let (responses, state) = answer(handler, asked, round).await?;
                params.input_responses = responses;
                params.request_state = state;
            }
            // A task, or a kind of answer newer than this build.
            _ => return Err(RoundsError::Unexpected),
        }
    }
    Err(RoundsError::TooManyRounds)
}

/// `prompts/get`, answering the server's questions between rounds.
pub async fn get_prompt(
    peer: &Peer<RoleClient>,
    handler: &Handler,
    mut params: GetPromptRequestParams,
) -> Result<GetPromptResult, RoundsError> {
    for round in 0..MAX_ROUNDS {
        match peer.get_prompt_once(params.clone()).await? {
            GetPromptResponse::Complete(result) => return Ok(result),
            GetPromptResponse::InputRequired(asked) => {
                let (responses, state) = answer(handler, asked, round).await?;
                params.input_responses = responses;
                params.request_state = state;
            }
            _ => return Err(RoundsError::Unexpected),
        }
    }
    Err(RoundsError::TooManyRounds)
}

/// `resources/read`, answering the server's questions between rounds.
pub async fn read_resource(
    peer: &Peer<RoleClient>,
    handler: &Handler,
    mut params: ReadResourceRequestParams,
) -> Result<ReadResourceResult, RoundsError> {
    for round in 0..MAX_ROUNDS {
        match peer.read_resource_once(params.clone()).await? {
            ReadResourceResponse::Complete(result) => return Ok(result),
            ReadResourceResponse::InputRequired(asked) => {
                let (responses, state) = answer(handler, asked, round).await?;
                params.input_responses = responses;
                params.request_state = state;
            }
            _ => return Err(RoundsError::Unexpected),
        }
    }
    Err(RoundsError::TooManyRounds)
}

/// The answers to one `input_required` result, one question at a time
/// (mino keeps one question open), and the state to send back. A result
/// with state only (the server is still working) waits a little first, more
/// each round, as the revision asks of a client.
async fn answer(
    handler: &Handler,
    asked: InputRequiredResult,
    round: usize,
) -> Result<(Option<InputResponses>, Option<String>), RoundsError> {
    let requests = asked.input_requests.unwrap_or_default();
    if requests.is_empty() {
        if asked.request_state.is_none() {
            return Err(RoundsError::Empty);
        }
        let wait = 50u64.saturating_mul(1 << round.min(3)).min(250);
        tokio::time::sleep(Duration::from_millis(wait)).await;
        return Ok((None, asked.request_state));
    }
    let mut responses = InputResponses::new();
    for (key, request) in requests {
        let response = match request {
            InputRequest::Elicitation(question) => handler.ask(question.params).await,
            InputRequest::CreateMessage(_) => {
                return Err(RoundsError::Unoffered(
                    "a completion of the model (sampling)",
                ));
            }
            InputRequest::ListRoots(_) => {
                return Err(RoundsError::Unoffered("the client's roots"));
            }
            _ => {
                return Err(RoundsError::Unoffered(
                    "a kind of input newer than this build",
                ));
            }
        };
        responses.insert(key, serde_json::to_value(response).unwrap_or_default());
    }
    Ok((Some(responses), asked.request_state))
}
