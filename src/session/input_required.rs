//! Multi-round-trip requests (SEP-2322, 2026-07-28): a server that needs something from the
//! client (a sampling answer, an elicitation, the roots) answers a request with
//! `input_required`; the client fulfils every embedded request through the host's callbacks
//! and sends the request again with the answers and the server's `requestState`, unchanged.

use std::time::Duration;

use rmcp::model::{
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult,
};
use rmcp::service::{Peer, RoleClient};
use tokio_util::sync::CancellationToken;

use super::ClientRequests;
use crate::error::CallError;

/// The most `input_required` rounds one request may take before it fails.
pub const MAX_INPUT_ROUNDS: usize = 8;

/// Answers each of `asked` through `requests` (the same callbacks a 2025-11-25 server's own
/// requests reach; a missing elicitation callback declines; missing sampling or roots fail the
/// request, as the TypeScript SDK's client does). `deadline` bounds each callback.
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
            let not_found = if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND {
                "Method not found: "
            } else {
                ""
            };
            format!(
                "the server's input request '{key}' could not be answered: {not_found}{}",
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

/// `prompts/get` through its `input_required` rounds (2026-07-28), each round's requests
/// answered by `requests` within `deadline`.
pub async fn get_prompt(
    peer: &Peer<RoleClient>,
    requests: &ClientRequests,
    server: &str,
    mut params: GetPromptRequestParams,
    deadline: Duration,
) -> Result<GetPromptResult, CallError> {
    let cancel = CancellationToken::new();
    for _ in 0..=MAX_INPUT_ROUNDS {
        match peer
            .get_prompt_once(params.clone())
            .await
            .map_err(CallError::from_service)?
        {
            GetPromptResponse::Complete(result) => return Ok(result),
            GetPromptResponse::InputRequired(asked) => {
                let (responses, state) =
                    next_round(requests, server, asked, deadline, &cancel).await?;
                params.input_responses = responses;
                params.request_state = state;
            }
            _ => {
                return Err(CallError::Protocol(
                    "unexpected answer to prompts/get".to_owned(),
                ));
            }
        }
    }
    Err(too_many_rounds())
}

/// `resources/read` through its `input_required` rounds, as [`get_prompt`].
pub async fn read_resource(
    peer: &Peer<RoleClient>,
    requests: &ClientRequests,
    server: &str,
    mut params: ReadResourceRequestParams,
    deadline: Duration,
) -> Result<ReadResourceResult, CallError> {
    let cancel = CancellationToken::new();
    for _ in 0..=MAX_INPUT_ROUNDS {
        match peer
            .read_resource_once(params.clone())
            .await
            .map_err(CallError::from_service)?
        {
            ReadResourceResponse::Complete(result) => return Ok(result),
            ReadResourceResponse::InputRequired(asked) => {
                let (responses, state) =
                    next_round(requests, server, asked, deadline, &cancel).await?;
                params.input_responses = responses;
                params.request_state = state;
            }
            _ => {
                return Err(CallError::Protocol(
                    "unexpected answer to resources/read".to_owned(),
                ));
            }
        }
    }
    Err(too_many_rounds())
}

/// The answers and the state to send the request again with.
pub async fn next_round(
    requests: &ClientRequests,
    server: &str,
    asked: InputRequiredResult,
    deadline: Duration,
    cancel: &CancellationToken,
) -> Result<(Option<InputResponses>, Option<String>), CallError> {
    if asked.input_requests.as_ref().is_none_or(|r| r.is_empty()) && asked.request_state.is_none() {
        return Err(CallError::Protocol(
            "input_required answer with neither inputRequests nor requestState".to_owned(),
        ));
    }
    let responses = fulfil(
        requests,
        server,
        asked.input_requests.unwrap_or_default(),
        deadline,
        cancel,
    )
    .await
    .map_err(CallError::Protocol)?;
    Ok((
        (!responses.is_empty()).then_some(responses),
        asked.request_state,
    ))
}

pub fn too_many_rounds() -> CallError {
    CallError::Protocol(format!(
        "the server asked for input {MAX_INPUT_ROUNDS} times without finishing"
    ))
}

// Roots are deprecated by SEP-2577 (2026-07-28); 2025-11-25 servers still ask.
#[cfg(test)]
#[allow(deprecated)]
mod tests {
    use std::sync::{Arc, RwLock};

    use rmcp::model::Root;
    use serde_json::json;

    use super::*;
    use crate::session::RootsSource;

    /// `requests`' answers to a server asking for roots.
    async fn roots_asked(requests: &ClientRequests) -> Result<InputResponses, String> {
        let asked: InputRequests =
            serde_json::from_value(json!({ "r": { "method": "roots/list" } })).unwrap();
        let cancel = CancellationToken::new();
        fulfil(requests, "s", asked, Duration::from_secs(5), &cancel).await
    }

    #[tokio::test]
    async fn roots_asked_without_the_capability_fail_the_request() {
        let error = roots_asked(&ClientRequests::default()).await.unwrap_err();
        assert_eq!(
            error,
            "the server's input request 'r' could not be answered: Method not found: roots/list"
        );
        let given = ClientRequests {
            roots: Some(Arc::new(RwLock::new(RootsSource::List(vec![Root::new(
                "file:///a",
            )])))),
            ..Default::default()
        };
        let answers = roots_asked(&given).await.unwrap();
        assert_eq!(answers["r"], json!({ "roots": [{ "uri": "file:///a" }] }));
    }
}
