//! The call lane: `tools/call` on a stdio session without rmcp in the way.
//!
//! rmcp spawns a task for every message it sends, queues it to its service task, writes it
//! under its transport's lock, and reads every answer through buffered untagged enums before
//! handing it to the waiting call. A tool call is the one request on the hot path, so the lane
//! sends it itself: the request is written by the thread making the call (straight into the
//! pipe when it takes it, see [`StdinWriter`]), and the line that answers it is taken out of
//! the server's output before rmcp sees it, read once ([`call_reply`](super::call_reply)) and
//! handed to the call. Progress for the call is routed from the same place, so it still
//! arrives before the answer. Lane ids start at [`LANE_BASE`]; everything else (the handshake,
//! other requests, notifications, the server's own requests, cancellation) stays with rmcp.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, NumberOrString, ProgressNotificationParam, ProgressToken,
    RequestMetaObject,
};
use tokio::sync::oneshot;

use super::call_reply::{self, LANE_BASE, Line, Reply};
use super::stdin_writer::StdinWriter;

/// Where progress for a lane call goes.
pub type ProgressSink = Arc<dyn Fn(&ProgressNotificationParam) + Send + Sync>;

/// The lane of one stdio session.
pub struct CallLane {
    writer: StdinWriter,
    waiting: Mutex<Waiting>,
    /// Calls waiting (read without the lock: with none, no line is looked at).
    in_flight: AtomicUsize,
    next: AtomicU64,
    progress: Mutex<Option<ProgressSink>>,
}

#[derive(Default)]
struct Waiting {
    calls: HashMap<u64, oneshot::Sender<Reply>>,
    /// The session's output ended: no answer can come.
    closed: bool,
}

/// The session is over: nothing can be sent or answered.
#[derive(Debug)]
pub struct LaneClosed;

/// A request sent on the lane; dropping it gives the call up (a late answer is dropped).
pub struct LaneCall {
    lane: Arc<CallLane>,
    pub id: u64,
    pub answer: oneshot::Receiver<Reply>,
}

impl Drop for LaneCall {
    fn drop(&mut self) {
        self.lane.forget(self.id);
    }
}

impl CallLane {
    pub fn new(writer: StdinWriter) -> Arc<Self> {
        Arc::new(Self {
            writer,
            waiting: Mutex::default(),
            in_flight: AtomicUsize::new(0),
            next: AtomicU64::new(LANE_BASE),
            progress: Mutex::new(None),
        })
    }

    /// Progress for lane calls goes to `sink` from now on.
    pub fn route_progress(&self, sink: ProgressSink) {
        *self.progress.lock().unwrap_or_else(|p| p.into_inner()) = Some(sink);
    }

    /// The id of the next call (and its progress token: see [`token`]), to route its
    /// progress before it is sent.
    pub fn reserve(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends `tools/call` with `params` as request `id` (from [`Self::reserve`]; its progress
    /// token is the id, in `_meta`). The call is registered before the request is written: a quick answer
    /// cannot go astray.
    pub fn call(
        self: &Arc<Self>,
        id: u64,
        params: &mut CallToolRequestParams,
    ) -> Result<LaneCall, LaneClosed> {
        let mut line = request_line(id, params).map_err(|_| LaneClosed)?;
        line.push(b'\n');
        let (tx, answer) = oneshot::channel();
        {
            let mut waiting = self.lock();
            if waiting.closed {
                return Err(LaneClosed);
            }
            waiting.calls.insert(id, tx);
            self.in_flight.fetch_add(1, Ordering::Release);
        }
        let call = LaneCall {
            lane: self.clone(),
            id,
            answer,
        };
        self.writer.write_lines(&line).map_err(|_| LaneClosed)?;
        Ok(call)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn forget(&self, id: u64) {
        let mut waiting = self.lock();
        if waiting.calls.remove(&id).is_some() {
            self.in_flight.fetch_sub(1, Ordering::Release);
        }
    }

    /// Takes `line` (no newline) when it is for the lane: an answer to a lane request or
    /// progress for a lane call. False: it is rmcp's.
    pub fn take(&self, line: &[u8]) -> bool {
        if self.in_flight.load(Ordering::Acquire) == 0 {
            return false;
        }
        match call_reply::read(line) {
            Line::Reply(id, reply) => {
                let waiter = {
                    let mut waiting = self.lock();
                    let waiter = waiting.calls.remove(&id);
                    if waiter.is_some() {
                        self.in_flight.fetch_sub(1, Ordering::Release);
                    }
                    waiter
                };
                // No waiter: the call was given up, or the id answered twice; dropped, as
                // rmcp's side drops answers nobody asked for.
                if let Some(waiter) = waiter {
                    let _ = waiter.send(reply);
                }
                true
            }
            Line::Progress(progress) => {
                let sink = self
                    .progress
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone();
                if let Some(sink) = sink {
                    sink(&progress);
                }
                true
            }
            Line::Other => false,
        }
    }

    /// The session's output ended: every waiting call fails as closed, and no new one starts.
    pub fn close(&self) {
        let calls = {
            let mut waiting = self.lock();
            waiting.closed = true;
            self.in_flight.store(0, Ordering::Release);
            std::mem::take(&mut waiting.calls)
        };
        drop(calls);
    }
}

/// The line (without its newline) of `tools/call` request `id` with `params`, its progress
/// token the id.
fn request_line(id: u64, params: &mut CallToolRequestParams) -> serde_json::Result<Vec<u8>> {
    match &params.meta {
        // The common case: `_meta` holds the token alone, written as it is, without a
        // map built for it.
        None => serde_json::to_vec(&Request {
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: Params {
                meta: TokenOnly { progress_token: id },
                name: &params.name,
                arguments: params.arguments.as_ref(),
                input_responses: params.input_responses.as_ref(),
                request_state: params.request_state.as_deref(),
            },
        }),
        Some(_) => with_rmcps_types(id, params),
    }
}

/// [`request_line`] through rmcp's own types: the token set in `params`' `_meta`, then the
/// params serialised.
fn with_rmcps_types(id: u64, params: &mut CallToolRequestParams) -> serde_json::Result<Vec<u8>> {
    params
        .meta
        .get_or_insert_with(RequestMetaObject::new)
        .set_progress_token(token(id));
    serde_json::to_vec(&Request {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: &*params,
    })
}

/// The progress token of lane request `id`.
pub fn token(id: u64) -> ProgressToken {
    ProgressToken(NumberOrString::Number(id as i64))
}

#[derive(serde::Serialize)]
struct Request<P> {
    jsonrpc: &'static str,
    id: u64,
    method: &'static str,
    params: P,
}

/// `CallToolRequestParams` with no `_meta` of its own, written with the lane's token as its
/// `_meta`: the same members in the same order as rmcp writes them.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Params<'a> {
    #[serde(rename = "_meta")]
    meta: TokenOnly,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<&'a rmcp::model::JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_responses: Option<&'a rmcp::model::InputResponses>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_state: Option<&'a str>,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct TokenOnly {
    progress_token: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_written_as_rmcps_types_write_it() {
        let arguments = serde_json::json!({"text": "hi \u{2028} \"q\"", "n": [1, 2.5, null]});
        let mut all = CallToolRequestParams::new("echo");
        all.arguments = arguments.as_object().cloned();
        all.request_state = Some("state \n 1".into());
        all.input_responses =
            serde_json::from_value(serde_json::json!({"a": {"action": "cancel"}})).ok();
        assert!(all.input_responses.is_some());
        let mut with_meta = CallToolRequestParams::new("echo");
        let mut meta = RequestMetaObject::new();
        meta.insert("other".into(), serde_json::json!(1));
        with_meta.meta = Some(meta);
        for params in [CallToolRequestParams::new("t"), all, with_meta] {
            let id = LANE_BASE + 7;
            let expected = with_rmcps_types(id, &mut params.clone()).unwrap();
            let mut given = params;
            assert_eq!(
                String::from_utf8(request_line(id, &mut given).unwrap()).unwrap(),
                String::from_utf8(expected).unwrap()
            );
        }
    }
}
