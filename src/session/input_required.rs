//! Multi-round-trip requests (SEP-2322, 2026-07-28): a server that needs something from the
//! client (a sampling answer, an elicitation, the roots) answers a request with
//! `input_required`; the client fulfils every embedded request through the host's callbacks
//! and sends the request again with the answers and the server's `requestState`, unchanged.

use std::time::Duration;

use rmcp::model::{InputRequest, InputRequests, InputResponses};
use tokio_util::sync::CancellationToken;

use super::ClientRequests;

/// The most `input_required` rounds one request may take before it fails.
pub const MAX_INPUT_ROUNDS: usize = 8;

/// Answers each of `asked` through `requests` (the same callbacks a 2025-11-25 server's own
/// requests reach; a missing elicitation callback declines, missing roots are an empty list,
/// missing sampling fails the request). `deadline` bounds each callback.
pub async fn fulfil(
    requests: &ClientRequests,
    server: &str,
    asked: InputRequests,
    deadline: Duration,
    cancel: &CancellationToken,
) -> Result<InputResponses, String> {
    let answers = asked.into_iter().map(|(key, request)| async move {
        let answer = match request {
            InputRequest::CreateMessage(request) => requests
                .create_message(server, request.params, deadline, cancel.child_token())
                .await
                .and_then(|r| serde_json::to_value(r).map_err(internal)),
            InputRequest::Elicitation(request) => requests
                .create_elicitation(server, request.params, deadline, cancel.child_token())
                .await
                .and_then(|r| serde_json::to_value(r).map_err(internal)),
            InputRequest::ListRoots(_) => requests
                .list_roots(server, deadline, cancel.child_token())
                .await
                .and_then(|r| serde_json::to_value(r).map_err(internal)),
            _ => Err(rmcp::ErrorData::invalid_params(
                "a kind of input request this client does not know",
                None,
            )),
        };
        answer.map(|value| (key.clone(), value)).map_err(|e| {
            format!(
                "the server's input request '{key}' could not be answered: {}",
                e.message
            )
        })
    });
    futures::future::try_join_all(answers)
        .await
        .map(|pairs| pairs.into_iter().collect())
}

fn internal(e: serde_json::Error) -> rmcp::ErrorData {
    rmcp::ErrorData::internal_error(e.to_string(), None)
}
