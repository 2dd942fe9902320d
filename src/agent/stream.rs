//! The one loop that collects a model request's stream into a response and
//! stops at once when the turn is cancelled; an answer whose output tokens
//! reach the request's cap is cut off on every wire. Used by the turn's
//! requests and by compaction. Never decides and never saves.

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::model::{ModelError, Provider, Request, Response, StreamEvent};

/// How a stream ended. Each carries what had arrived by then.
#[derive(Debug)]
pub enum Collected {
    Done(Response),
    Failed(ModelError, Response),
    /// `cancel` fired; the request was dropped.
    Interrupted(Response),
}

/// Streams `request`, calling `seen` on every event as it arrives.
pub async fn collect(
    provider: &dyn Provider,
    request: Request,
    cancel: &CancellationToken,
    mut seen: impl FnMut(&StreamEvent),
) -> Collected {
    let cap = provider.output_cap(request.kind);
    let stream_cancel = cancel.child_token();
    let mut stream = provider.stream(request, stream_cancel.clone());
    let mut response = Response::default();
    loop {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                stream_cancel.cancel();
                return Collected::Interrupted(response);
            }
            next = stream.next() => match next {
                Some(Ok(StreamEvent::Done)) | None => {
                    response.check_cap(cap);
                    response.unique_call_ids();
                    return Collected::Done(response);
                }
                Some(Ok(event)) => {
                    seen(&event);
                    response.apply(&event);
                }
                Some(Err(error)) => return Collected::Failed(error, response),
            }
        }
    }
}
