//! The legacy HTTP+SSE transport of the 2024-11-05 MCP spec, as an rmcp client transport.
//!
//! 1. `GET <url>` with `Accept: text/event-stream` opens the event stream.
//! 2. The server's first `endpoint` event names (as a URI reference, resolved against the url)
//!    where to POST; an endpoint on another origin is refused, so messages and the server's
//!    headers only ever go to the configured origin.
//! 3. Every client message is POSTed there as JSON; answers and server messages arrive on the
//!    stream as `message` events.
//!
//! The stream is the session: when it ends (closed, broken, an oversized event, or idle past
//! the bound) `receive()` returns `None` and rmcp's service ends, which the supervisor sees.
//! An idle bound would end healthy sessions of servers that send no keep-alive comments (the
//! TypeScript SDK's `SSEServerTransport` sends none), so half-way through the bound the
//! transport POSTs its own `ping`; the answer (swallowed here, never shown to rmcp) is traffic.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{ACCEPT, CACHE_CONTROL, CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage, ServerResult};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::bearer::{Bearer, Unsent};
use super::net::{self, Target};
use super::sse_events::{Decoder, Event};
use super::stdio_lines::StreamFault;
use crate::log::Log;

/// The id prefix of the transport's own keep-alive pings.
const PROBE_ID_PREFIX: &str = "openclaw-keepalive-";
/// Messages decoded but not yet taken by rmcp.
const QUEUE: usize = 64;

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SseTransportError(pub String);

/// What the legacy transport needs to open a session.
pub struct SseOptions<'a> {
    pub server: &'a str,
    pub client: reqwest::Client,
    pub target: Target,
    pub headers: HeaderMap,
    /// Largest event accepted on the stream.
    pub max_message_bytes: usize,
    /// The stream may be silent this long (half of it before a keep-alive ping); `None`: no
    /// bound.
    pub idle_timeout: Option<Duration>,
    /// Bounds reaching the server and receiving the endpoint event.
    pub deadline: Instant,
    /// The configured connect timeout (for messages).
    pub connect_timeout: Duration,
    /// Bounds each POST of a message.
    pub post_timeout: Duration,
    pub log: Log,
    /// Where the reason goes when the session ends under its calls.
    pub fault: StreamFault,
    /// Who gives each request its bearer token (OAuth), if anyone.
    pub bearer: Option<Arc<dyn Bearer>>,
    /// What a `tools/list` answer is cut down to before rmcp reads it (see `listing_bound`).
    pub listing: Option<Arc<super::listing_bound::ListingBound>>,
}

struct Shared {
    server: String,
    client: reqwest::Client,
    target: Target,
    endpoint: Url,
    headers: HeaderMap,
    post_timeout: Duration,
    /// The negotiated protocol version, sent as `MCP-Protocol-Version` after initialisation.
    protocol_version: Mutex<Option<HeaderValue>>,
    /// The session is over (a POST found the server gone, or the stream ended).
    ended: CancellationToken,
    fault: StreamFault,
    probes: AtomicU64,
    log: Log,
    bearer: Option<Arc<dyn Bearer>>,
    listing: Option<Arc<super::listing_bound::ListingBound>>,
}

impl Shared {
    /// POSTs `body` with the bearer's token ([`super::bearer::send`]).
    async fn send_post(&self, body: Vec<u8>) -> Result<reqwest::Response, String> {
        let shown = net::show_url(&self.endpoint);
        let sent = super::bearer::send(
            self.bearer.as_ref(),
            "POST",
            self.endpoint.as_str(),
            || self.post(body.clone()),
            |request| async {
                match tokio::time::timeout(self.post_timeout, request.send()).await {
                    Err(_) => Err(format!(
                        "no answer from {shown} within {} ms",
                        self.post_timeout.as_millis()
                    )),
                    Ok(Err(error)) => {
                        let text = net::describe(&error, &self.target);
                        if net::is_unreachable(&error) {
                            self.end(&text);
                        }
                        Err(text)
                    }
                    Ok(Ok(response)) => Ok(response),
                }
            },
        )
        .await;
        sent.map_err(|unsent| match unsent {
            Unsent::Failed(text) | Unsent::Refused(text) => text,
        })
    }

    fn post(&self, body: Vec<u8>) -> reqwest::RequestBuilder {
        let mut builder = self
            .client
            .post(self.endpoint.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .headers(self.headers.clone());
        let version = self
            .protocol_version
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(version) = version {
            builder = builder.header("mcp-protocol-version", version);
        }
        builder.body(body)
    }

    /// Ends the session once, saying why.
    fn end(&self, why: &str) {
        if !self.ended.is_cancelled() {
            self.log.warn(&format!(
                "MCP server '{}' SSE session ended: {why}",
                self.server
            ));
            // The calls this ends fail naming why, not just "connection closed".
            self.fault.set(why.to_owned());
            self.ended.cancel();
        }
    }
}

pub struct SseTransport {
    shared: Arc<Shared>,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    /// Stops the reader: cancelled when the transport is dropped, or earlier through
    /// [`hang_up`](Self::hang_up).
    stop: CancellationToken,
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl SseTransport {
    /// Stops reading the event stream (and so closes it) when dropped, without waiting for
    /// rmcp to close the transport: on a cancel, rmcp first drains in-flight handler answers
    /// for up to 2 s, and a flooding stream would be read all that while.
    pub fn hang_up(&self) -> DropGuard {
        self.stop.clone().drop_guard()
    }
}

/// Opens the event stream, waits for the endpoint event and starts reading messages.
pub async fn connect(options: SseOptions<'_>) -> Result<SseTransport, String> {
    let SseOptions {
        server,
        client,
        target,
        headers,
        max_message_bytes,
        idle_timeout,
        deadline,
        connect_timeout,
        post_timeout,
        log,
        fault,
        bearer,
        listing,
    } = options;
    fault.clear();
    let shown = target.shown.clone();
    let budget = connect_timeout;
    let late = || format!("no answer from {shown} within {} ms", budget.as_millis());
    let build = || {
        client
            .get(target.url.clone())
            .header(ACCEPT, "text/event-stream")
            .header(CACHE_CONTROL, "no-cache")
            .headers(headers.clone())
    };
    let sent = super::bearer::send(
        bearer.as_ref(),
        "GET",
        target.url.as_str(),
        build,
        |request| async { request.send().await.map_err(|e| net::describe(&e, &target)) },
    );
    let response = match tokio::time::timeout_at(deadline, sent).await {
        Err(_) => return Err(late()),
        Ok(Err(Unsent::Failed(text) | Unsent::Refused(text))) => return Err(text),
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if status.is_redirection() {
        return Err(net::redirect_refused(&response, &target));
    }
    if status != StatusCode::OK {
        let auth = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
        return Err(format!(
            "{shown} answered HTTP {}{} to the event stream request{}",
            status.as_u16(),
            status
                .canonical_reason()
                .map(|r| format!(" {r}"))
                .unwrap_or_default(),
            if auth && bearer.is_some() {
                " (the OAuth token was refused)"
            } else if auth {
                " (check the credentials in the server's headers)"
            } else {
                ""
            }
        ));
    }
    let kind = net::content_type(&response);
    if kind.as_deref() != Some("text/event-stream") {
        return Err(format!(
            "{shown} answered with Content-Type {}, not an SSE event stream (is this the \
             server's SSE endpoint?)",
            kind.as_deref().unwrap_or("(none)")
        ));
    }

    let mut body = response.bytes_stream().boxed();
    let mut decoder = Decoder::new(max_message_bytes);
    let mut queue: VecDeque<Event> = VecDeque::new();
    let endpoint = 'found: loop {
        while let Some(event) = queue.pop_front() {
            if event.event.as_deref() == Some("endpoint") {
                break 'found event.data;
            }
        }
        match tokio::time::timeout_at(deadline, body.next()).await {
            Err(_) => {
                return Err(format!(
                    "{shown} sent no endpoint event within {} ms (is this a legacy SSE endpoint?)",
                    budget.as_millis()
                ));
            }
            Ok(None) => {
                return Err(format!(
                    "{shown} closed the event stream before sending the endpoint event"
                ));
            }
            Ok(Some(Err(error))) => return Err(net::describe(&error, &target)),
            Ok(Some(Ok(chunk))) => {
                decoder
                    .feed(&chunk, &mut queue)
                    .map_err(|too_large| format!("{too_large} (from {shown})"))?;
            }
        }
    };
    let endpoint = target
        .url
        .join(endpoint.trim())
        .map_err(|e| format!("{shown} sent an endpoint event that is not a valid url: {e}"))?;
    if endpoint.origin() != target.url.origin() {
        return Err(format!(
            "{shown} sent an endpoint on another origin ({}); refused: messages and headers \
             go only to the configured server",
            net::show_url(&endpoint)
        ));
    }

    let shared = Arc::new(Shared {
        server: server.to_owned(),
        client,
        target,
        endpoint,
        headers,
        post_timeout,
        protocol_version: Mutex::new(None),
        ended: CancellationToken::new(),
        fault,
        probes: AtomicU64::new(0),
        log,
        bearer,
        listing,
    });
    let (tx, incoming) = mpsc::channel(QUEUE);
    let stop = CancellationToken::new();
    tokio::spawn(read_stream(
        shared.clone(),
        body,
        decoder,
        queue,
        tx,
        idle_timeout,
        stop.clone(),
    ));
    Ok(SseTransport {
        shared,
        incoming,
        stop,
    })
}

/// Reads the stream until it ends, the session ends or the transport is dropped.
async fn read_stream<S, B>(
    shared: Arc<Shared>,
    mut body: S,
    mut decoder: Decoder,
    mut queue: VecDeque<Event>,
    tx: mpsc::Sender<ServerJsonRpcMessage>,
    idle_timeout: Option<Duration>,
    stop: CancellationToken,
) where
    S: futures::Stream<Item = Result<B, reqwest::Error>> + Unpin + Send,
    B: AsRef<[u8]>,
{
    let half = idle_timeout.map(|d| d / 2);
    let mut probed = false;
    let why = loop {
        while let Some(event) = queue.pop_front() {
            if !event.is_message() || event.data.trim().is_empty() {
                continue;
            }
            let cut = shared
                .listing
                .as_deref()
                .and_then(|listing| listing.answered(event.data.as_bytes()));
            let data = match &cut {
                // Cut from the event's text at element boundaries: still UTF-8.
                Some(cut) => std::str::from_utf8(cut).unwrap_or(&event.data),
                None => &event.data,
            };
            let Some(message) = parse_message(data) else {
                continue;
            };
            tokio::select! {
                _ = stop.cancelled() => return,
                sent = tx.send(message) => if sent.is_err() { return },
            }
        }
        let next = async {
            match half {
                Some(half) => tokio::time::timeout(half, body.next()).await.ok(),
                None => Some(body.next().await),
            }
        };
        let next = tokio::select! {
            _ = stop.cancelled() => return,
            _ = shared.ended.cancelled() => return,
            next = next => next,
        };
        match next {
            None if !probed => {
                probed = true;
                probe(&shared);
            }
            None => {
                break format!(
                    "no data on the event stream of {} for {} ms",
                    shared.target.shown,
                    idle_timeout.unwrap_or_default().as_millis()
                );
            }
            Some(None) => {
                break format!("{} closed the event stream", shared.target.shown);
            }
            Some(Some(Err(error))) => break net::describe(&error, &shared.target),
            Some(Some(Ok(chunk))) => {
                probed = false;
                if let Err(too_large) = decoder.feed(chunk.as_ref(), &mut queue) {
                    break format!("{too_large} (from {})", shared.target.shown);
                }
            }
        }
    };
    shared.end(&why);
}

/// A server message from an event's data; the transport's own ping answers are dropped.
fn parse_message(data: &str) -> Option<ServerJsonRpcMessage> {
    let value: serde_json::Value = serde_json::from_str(data).ok()?;
    if value
        .get("id")
        .and_then(|id| id.as_str())
        .is_some_and(|id| id.starts_with(PROBE_ID_PREFIX))
    {
        return None;
    }
    serde_json::from_value(value).ok()
}

/// POSTs a `ping` whose answer, arriving on the stream, proves the stream alive.
fn probe(shared: &Arc<Shared>) {
    let n = shared.probes.fetch_add(1, Ordering::Relaxed);
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": format!("{PROBE_ID_PREFIX}{n}"),
        "method": "ping",
    });
    let request = shared.post(body.to_string().into_bytes());
    let timeout = shared.post_timeout;
    tokio::spawn(async move {
        let _ = tokio::time::timeout(timeout, request.send()).await;
    });
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseTransportError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let shared = self.shared.clone();
        async move {
            if shared.ended.is_cancelled() {
                return Err(SseTransportError("the SSE session has ended".to_owned()));
            }
            let body = serde_json::to_vec(&item)
                .map_err(|e| SseTransportError(format!("cannot encode a message: {e}")))?;
            if let Some(listing) = &shared.listing {
                listing.sent(&body);
            }
            let shown = net::show_url(&shared.endpoint);
            let response = shared.send_post(body).await.map_err(SseTransportError)?;
            let status = response.status();
            if status.is_success() {
                // The answer comes on the stream; the body is a bare "Accepted".
                return Ok(());
            }
            let body = match net::read_bounded(response, net::MAX_ERROR_BODY).await {
                Ok(net::Body::Complete(body)) => net::preview(&body, shared.log.redactor()),
                _ => String::new(),
            };
            // The session is gone on the server (it restarted, or forgot us): end ours so the
            // supervisor reconnects.
            if matches!(status, StatusCode::NOT_FOUND | StatusCode::GONE) {
                shared.end(&format!(
                    "{shown} answered HTTP {} (the server no longer knows this session)",
                    status.as_u16()
                ));
            }
            let mut text = format!("{shown} answered HTTP {}", status.as_u16());
            if !body.is_empty() {
                text.push_str(&format!(": {body}"));
            }
            Err(SseTransportError(text))
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let message = tokio::select! {
            biased;
            message = self.incoming.recv() => message?,
            _ = self.shared.ended.cancelled() => return None,
        };
        if let JsonRpcMessage::Response(response) = &message
            && let ServerResult::InitializeResult(init) = &response.result
            && let Ok(value) = HeaderValue::from_str(init.protocol_version.as_str())
        {
            *self
                .shared
                .protocol_version
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = Some(value);
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.incoming.close();
        self.shared.ended.cancel();
        std::future::ready(Ok(()))
    }
}
