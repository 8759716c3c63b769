//! What servers ask of their client — an LLM completion (`sampling/createMessage`), input from
//! the user (`elicitation/create`, form and URL modes), the workspace roots (`roots/list`) —
//! answered by the host's callbacks. A capability is declared to a server only when its
//! callback (or roots value) was given; without one a request is answered as the original
//! module's client (the TypeScript SDK) answered it: sampling and roots are method not found
//! (-32601), an elicitation is declined.
//!
//! Each callback is a host function called with JSON text and answering JSON text (the binding
//! makes sync, async and throwing JS functions look alike); dropping its future aborts it on
//! the host side (the JS `signal`). A callback is bounded by the server's `toolTimeout` and by
//! the request's own cancellation; one that throws, answers something that is not the result
//! the spec asks for, or runs out of time answers the server with an error. An accepted form
//! elicitation's content is checked against the request's `requestedSchema` first: content
//! that does not match is never sent.

// Sampling and roots are deprecated by SEP-2577 (2026-07-28); 2025-11-25 servers still ask.
#![allow(deprecated)]

use std::sync::{Arc, RwLock};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationAction, ListRootsResult, Root,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::hooks::Hook;

/// Where `roots/list` is answered from.
#[derive(Clone)]
pub enum RootsSource {
    List(Vec<Root>),
    /// Called with `{ server }`, answers an array of roots.
    Callback(Hook),
}

/// The host's answers to what servers ask, shared by every server of a manager.
#[derive(Clone, Default)]
pub struct ClientRequests {
    pub sampling: Option<Hook>,
    pub elicitation: Option<Hook>,
    /// `None`: no roots capability (`roots/list` is method not found). Replaced by `setRoots`.
    pub roots: Option<Arc<RwLock<RootsSource>>>,
}

impl std::fmt::Debug for ClientRequests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRequests")
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("roots", &self.roots.is_some())
            .finish()
    }
}

impl ClientRequests {
    /// What the client declares: only what the host can answer.
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut caps = serde_json::Map::new();
        if self.sampling.is_some() {
            caps.insert("sampling".into(), json!({}));
        }
        if self.elicitation.is_some() {
            caps.insert("elicitation".into(), json!({ "form": {}, "url": {} }));
        }
        if self.roots.is_some() {
            caps.insert("roots".into(), json!({ "listChanged": true }));
        }
        serde_json::from_value(Value::Object(caps)).unwrap_or_default()
    }

    /// `sampling/createMessage` for `server`.
    pub async fn create_message(
        &self,
        server: &str,
        params: CreateMessageRequestParams,
        deadline: Duration,
        cancelled: CancellationToken,
    ) -> Result<CreateMessageResult, McpError> {
        let Some(callback) = &self.sampling else {
            return Err(McpError::method_not_found::<
                rmcp::model::CreateMessageRequestMethod,
            >());
        };
        let request = serde_json::to_value(&params).map_err(internal)?;
        let answer = ask(callback, "sampling", server, request, deadline, cancelled).await?;
        serde_json::from_value::<CreateMessageResult>(answer).map_err(|e| {
            internal(format!(
                "the sampling callback's answer is not a CreateMessageResult: {e}"
            ))
        })
    }

    /// `elicitation/create` for `server`.
    pub async fn create_elicitation(
        &self,
        server: &str,
        params: ElicitRequestParams,
        deadline: Duration,
        cancelled: CancellationToken,
    ) -> Result<ElicitResult, McpError> {
        let Some(callback) = &self.elicitation else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let request = serde_json::to_value(&params).map_err(internal)?;
        let schema = request.get("requestedSchema").cloned();
        let answer = ask(
            callback,
            "elicitation",
            server,
            request,
            deadline,
            cancelled,
        )
        .await?;
        let result = serde_json::from_value::<ElicitResult>(answer).map_err(|e| {
            internal(format!(
                "the elicitation callback's answer is not {{ action: 'accept' | 'decline' | 'cancel', content? }}: {e}"
            ))
        })?;
        if result.action == ElicitationAction::Accept
            && let Some(schema) = &schema
        {
            let content = result
                .content
                .clone()
                .unwrap_or_else(|| Value::Object(Default::default()));
            // The place only: the server is not told what the user answered there.
            if let Some(problem) = crate::bridge::json_check::first_error_place(schema, &content) {
                return Err(McpError::invalid_params(
                    format!("the elicitation answer does not match requestedSchema: {problem}"),
                    None,
                ));
            }
        }
        Ok(result)
    }

    /// `roots/list` for `server`. Without the roots option the client never declared the
    /// capability, so the method is not found (-32601): a server must not be told "no roots"
    /// when it was never told about roots.
    pub async fn list_roots(
        &self,
        server: &str,
        deadline: Duration,
        cancelled: CancellationToken,
    ) -> Result<ListRootsResult, McpError> {
        let Some(source) = &self.roots else {
            return Err(McpError::method_not_found::<
                rmcp::model::ListRootsRequestMethod,
            >());
        };
        let source = source.read().unwrap_or_else(|p| p.into_inner()).clone();
        let roots = match source {
            RootsSource::List(roots) => roots,
            RootsSource::Callback(callback) => {
                let answer =
                    ask(&callback, "roots", server, Value::Null, deadline, cancelled).await?;
                parse_roots(&answer)
                    .map_err(|e| internal(format!("the roots callback's answer {e}")))?
            }
        };
        Ok(ListRootsResult::new(roots))
    }
}

/// `[{ uri, name? }]` with every `uri` a `file://` URI (what the spec allows a root to be).
pub fn parse_roots(value: &Value) -> Result<Vec<Root>, String> {
    let Value::Array(items) = value else {
        return Err("must be an array of { uri, name? }".to_owned());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let uri = item
                .get("uri")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("roots[{i}].uri must be a string"))?;
            if !uri.starts_with("file://") {
                return Err(format!("roots[{i}].uri must be a file:// URI, got '{uri}'"));
            }
            let mut root = Root::new(uri);
            match item.get("name") {
                None | Some(Value::Null) => {}
                Some(Value::String(name)) => root = root.with_name(name.clone()),
                Some(_) => return Err(format!("roots[{i}].name must be a string")),
            }
            Ok(root)
        })
        .collect()
}

/// Calls `callback` with `{ server, request }`, bounded by `deadline` and `cancelled`; its
/// answer as JSON. Dropping the call (on either bound) aborts it on the host side.
async fn ask(
    callback: &Hook,
    what: &str,
    server: &str,
    request: Value,
    deadline: Duration,
    cancelled: CancellationToken,
) -> Result<Value, McpError> {
    let argument = crate::hooks::callback_argument(Some(server), request);
    let answer = tokio::select! {
        answer = tokio::time::timeout(deadline, callback(argument)) => answer,
        _ = cancelled.cancelled() => {
            return Err(internal(format!("the {what} request was cancelled")));
        }
    };
    match answer {
        Err(_) => Err(internal(format!(
            "the {what} callback did not answer within {} ms",
            deadline.as_millis()
        ))),
        Ok(Err(why)) => Err(internal(format!("the {what} callback failed: {why}"))),
        Ok(Ok(None)) => Err(internal(format!("the {what} callback answered nothing"))),
        Ok(Ok(Some(text))) => serde_json::from_str(&text)
            .map_err(|e| internal(format!("the {what} callback's answer is not JSON: {e}"))),
    }
}

fn internal(message: impl std::fmt::Display) -> McpError {
    McpError::internal_error(message.to_string(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answering(answer: Value) -> Hook {
        Arc::new(move |_| {
            let answer = answer.clone();
            Box::pin(async move { Ok(Some(answer.to_string())) })
        })
    }

    #[test]
    fn only_what_is_given_is_declared() {
        let none = ClientRequests::default().capabilities();
        assert_eq!(serde_json::to_value(none).unwrap(), json!({}));
        let all = ClientRequests {
            sampling: Some(answering(Value::Null)),
            elicitation: Some(answering(Value::Null)),
            roots: Some(Arc::new(RwLock::new(RootsSource::List(Vec::new())))),
        };
        assert_eq!(
            serde_json::to_value(all.capabilities()).unwrap(),
            json!({ "sampling": {}, "elicitation": { "form": {}, "url": {} }, "roots": { "listChanged": true } })
        );
    }

    #[tokio::test]
    async fn an_accepted_answer_that_breaks_the_schema_is_never_sent() {
        let schema = json!({ "type": "object", "properties": { "age": { "type": "integer", "minimum": 0 } }, "required": ["age"] });
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "message": "age?", "requestedSchema": schema,
        }))
        .unwrap();
        let requests = ClientRequests {
            elicitation: Some(answering(
                json!({ "action": "accept", "content": { "age": -7 } }),
            )),
            ..Default::default()
        };
        let error = requests
            .create_elicitation(
                "s",
                params.clone(),
                Duration::from_secs(5),
                CancellationToken::new(),
            )
            .await
            .unwrap_err();
        assert!(
            error
                .message
                .contains("does not match requestedSchema: at /age"),
            "{}",
            error.message
        );
        assert!(!error.message.contains("-7"), "{}", error.message);
        // Absent: declined, as before.
        let declined = ClientRequests::default()
            .create_elicitation(
                "s",
                params,
                Duration::from_secs(5),
                CancellationToken::new(),
            )
            .await
            .unwrap();
        assert_eq!(declined.action, ElicitationAction::Decline);
    }

    #[test]
    fn roots_must_be_file_uris() {
        assert_eq!(
            parse_roots(&json!([{ "uri": "file:///a", "name": "a" }]))
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            parse_roots(&json!([{ "uri": "/a" }])).unwrap_err(),
            "roots[0].uri must be a file:// URI, got '/a'"
        );
        assert_eq!(
            parse_roots(&json!({})).unwrap_err(),
            "must be an array of { uri, name? }"
        );
    }
}
