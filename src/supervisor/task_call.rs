//! A call to a tool the server runs only as a task (SEP-1686, 2025-11-25): `tools/call` with a
//! `task` creates it; `tasks/get` is polled at the server's `pollInterval`, its status messages
//! passed on as progress, until the task ends or needs input; `tasks/result` then gives the
//! tool's result (while the task needs input, the server's own requests reach the host's
//! callbacks as usual). `taskTimeout` (else `toolTimeout`) bounds the whole; on that deadline or
//! the caller's abort the task is cancelled with `tasks/cancel`.
//!
//! rmcp 3.9 types the 2026-07-28 tasks extension (SEP-2663), not these messages, so they go as
//! custom requests and their answers are read as JSON.

use std::time::Duration;

use rmcp::model::{
    CallToolResult, CancelledNotificationParam, ClientRequest, CustomRequest, JsonObject,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::server::Server;
use crate::error::CallError;
use crate::session::Progress;

/// Bounds on the wait between two `tasks/get` (the server's `pollInterval`, else a second).
const POLL_MIN: Duration = Duration::from_millis(50);
const POLL_MAX: Duration = Duration::from_secs(5);
const POLL_DEFAULT: Duration = Duration::from_secs(1);

impl Server {
    pub(super) async fn call_as_task(
        &self,
        peer: &Peer<RoleClient>,
        tool: &str,
        arguments: Option<JsonObject>,
        cancel: &CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> Result<CallToolResult, CallError> {
        let budget = Duration::from_millis(
            self.config
                .task_timeout_ms
                .unwrap_or(self.config.tool_timeout_ms),
        );
        let deadline = Instant::now() + budget;
        let mut params = json!({ "name": tool, "task": { "ttl": budget.as_millis() as u64 } });
        if let Some(arguments) = arguments {
            params["arguments"] = Value::Object(arguments);
        }
        let step = TaskStep {
            peer,
            deadline,
            budget,
            cancel,
        };
        let created = step
            .request("tools/call", params, progress.as_ref(), self)
            .await?;
        // A server may run it at once after all and answer with the result.
        let Some(mut task) = created.get("task").cloned() else {
            return tool_result(created);
        };
        let Some(id) = task
            .get("taskId")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Err(CallError::Protocol(
                "the server created a task without a taskId".to_owned(),
            ));
        };
        let outcome = async {
            let mut said: Option<String> = None;
            let mut polls = 0u32;
            loop {
                if let Some(sink) = &progress
                    && let Some(message) = task.get("statusMessage").and_then(Value::as_str)
                    && said.as_deref() != Some(message)
                {
                    said = Some(message.to_owned());
                    let _ = sink.send(Progress {
                        progress: f64::from(polls),
                        total: None,
                        message: Some(message.to_owned()),
                    });
                }
                match task.get("status").and_then(Value::as_str) {
                    Some("completed" | "failed" | "input_required") => break,
                    Some("cancelled") => {
                        return Err(CallError::Protocol(format!(
                            "the server cancelled the task{}",
                            said.as_deref()
                                .map(|m| format!(" ({m})"))
                                .unwrap_or_default()
                        )));
                    }
                    _ => {}
                }
                let wait = task
                    .get("pollInterval")
                    .and_then(Value::as_u64)
                    .map_or(POLL_DEFAULT, Duration::from_millis)
                    .clamp(POLL_MIN, POLL_MAX);
                step.pause(wait).await?;
                polls += 1;
                task = step
                    .request("tasks/get", json!({ "taskId": id }), None, self)
                    .await?;
            }
            let result = step
                .request("tasks/result", json!({ "taskId": id }), None, self)
                .await?;
            tool_result(result)
        }
        .await;
        if let Err(CallError::Timeout(_) | CallError::Aborted) = &outcome {
            // The server stops the work too (best effort; the caller is not held up).
            let peer = peer.clone();
            tokio::spawn(async move {
                let request = ClientRequest::CustomRequest(CustomRequest::new(
                    "tasks/cancel",
                    Some(json!({ "taskId": id })),
                ));
                let _ =
                    tokio::time::timeout(Duration::from_secs(5), peer.send_request(request)).await;
            });
        }
        outcome
    }
}

/// What every request of one task call shares: the peer, the deadline, the caller's abort.
struct TaskStep<'a> {
    peer: &'a Peer<RoleClient>,
    deadline: Instant,
    budget: Duration,
    cancel: &'a CancellationToken,
}

impl TaskStep<'_> {
    /// Waits `wait`, unless the deadline or the caller's abort comes first.
    async fn pause(&self, wait: Duration) -> Result<(), CallError> {
        tokio::select! {
            _ = tokio::time::sleep(wait) => Ok(()),
            _ = tokio::time::sleep_until(self.deadline) => Err(CallError::Timeout(self.budget)),
            _ = self.cancel.cancelled() => Err(CallError::Aborted),
        }
    }

    /// One request of the task's life, its answer as JSON. Progress for its token goes to
    /// `progress` while it is open.
    async fn request(
        &self,
        method: &str,
        params: Value,
        progress: Option<&mpsc::UnboundedSender<Progress>>,
        server: &Server,
    ) -> Result<Value, CallError> {
        let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
        let handle = self
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(CallError::from_service)?;
        let token = handle.progress_token.clone();
        if let Some(sink) = progress {
            server.progress.register(token.clone(), sink.clone());
        }
        let id = handle.id.clone();
        let answer = tokio::select! {
            answer = handle.rx => match answer {
                Ok(Ok(result)) => serde_json::to_value(result)
                    .map_err(|e| CallError::Protocol(format!("{method} answer: {e}"))),
                Ok(Err(error)) => Err(CallError::from_service(error)),
                Err(_) => Err(CallError::Closed),
            },
            _ = tokio::time::sleep_until(self.deadline) => Err(CallError::Timeout(self.budget)),
            _ = self.cancel.cancelled() => Err(CallError::Aborted),
        };
        server.progress.unregister(&token);
        if let Err(CallError::Timeout(_) | CallError::Aborted) = &answer {
            let peer = self.peer.clone();
            tokio::spawn(async move {
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(Some(id), None))
                    .await;
            });
        }
        answer
    }
}

fn tool_result(value: Value) -> Result<CallToolResult, CallError> {
    serde_json::from_value(value).map_err(|e| {
        CallError::Protocol(format!("the task's result is not a tools/call result: {e}"))
    })
}
