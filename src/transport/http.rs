//! Streamable HTTP: rmcp's transport worker over our own [`StreamableHttpClient`] built on
//! reqwest.
//!
//! Owning the HTTP layer (rather than using rmcp's reqwest client) gives us:
//! - the server's headers on every request and nowhere else (redirects stay within the origin);
//! - one byte limit (`max_message_bytes`) for JSON bodies and SSE events, failing the one
//!   request whose answer is too large with a JSON-RPC error instead of dropping the session;
//! - server-everything's `400 "No valid session ID"` mapped onto rmcp's session-expired path,
//!   like the spec's 404, so the session is re-initialised and the call retried once;
//! - a `lost` signal when the server cannot be reached any more (refused, reset, dropped
//!   stream), which ends the rmcp service so the supervisor's restart policy takes over;
//! - plain-language errors naming the URL without its query string.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{BoxStream, StreamExt};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, GetMeta, JsonRpcMessage, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use secrecy::SecretString;
use tokio_util::sync::CancellationToken;

use super::bearer::{Bearer, Unsent};
use super::json_peek;
use super::net::{self, Body, Target};
use super::sse_events::{Decoder, Event, TooLarge};
use crate::log::Log;

/// What a Streamable HTTP connection needs.
pub struct HttpSpec<'a> {
    pub server: &'a str,
    pub target: &'a Target,
    pub client: reqwest::Client,
    /// The server's own headers, sent on every request to its origin only.
    pub headers: HeaderMap,
    /// Largest message (response body or SSE event) accepted.
    pub max_message_bytes: usize,
    /// Bounds re-initialising an expired session.
    pub connect_timeout: Duration,
    pub log: Log,
    /// Shown every answer's bytes (what rmcp's types drop about tasks).
    pub task_hints: Arc<super::task_hints::TaskHints>,
    /// What a `tools/list` answer is cut down to before rmcp reads it (see `listing_bound`).
    pub listing: Option<Arc<super::listing_bound::ListingBound>>,
    /// Who gives each request its bearer token (OAuth), if anyone.
    pub bearer: Option<Arc<dyn Bearer>>,
}

/// The transport for one session: rmcp's Streamable HTTP worker over our client.
pub type HttpTransport = StreamableHttpClientTransport<HttpClient>;

/// Opens a Streamable HTTP transport (nothing is sent until the session's first message). The
/// returned client tells how the first exchange went (for the connect report and the legacy
/// SSE fallback) and when the server is gone.
pub fn open(spec: HttpSpec<'_>) -> (HttpTransport, HttpClient) {
    let http = HttpClient::new(
        spec.client,
        spec.target.clone(),
        spec.headers,
        spec.max_message_bytes,
        spec.server,
        spec.log,
    )
    .with_task_hints(spec.task_hints)
    .with_listing(spec.listing)
    .with_bearer(spec.bearer);
    let mut config = StreamableHttpClientTransportConfig::with_uri(spec.target.url.as_str());
    config.max_sse_event_size = spec.max_message_bytes;
    config.allow_stateless = true;
    config.reinit_on_expired_session = true;
    config.session_recovery_timeout = spec.connect_timeout.min(Duration::from_secs(5));
    // The standalone GET stream reconnects a few times, then gives up (POSTs still work; a
    // server that cannot be reached at all ends the session through `lost`).
    let mut backoff = ExponentialBackoff::default();
    backoff.max_times = Some(3);
    backoff.base_duration = Duration::from_millis(500);
    backoff.max_delay = Some(Duration::from_secs(4));
    config.retry_config = Arc::new(backoff);
    let worker = StreamableHttpClientTransport::with_client(http.clone(), config);
    (worker, http)
}

fn lose(lost: &CancellationToken, log: &Log, server: &str, why: &str) {
    if !lost.is_cancelled() {
        log.warn(&format!("MCP server '{server}' connection lost: {why}"));
        lost.cancel();
    }
}

const SESSION_HEADER: &str = "mcp-session-id";
const LAST_EVENT_ID_HEADER: &str = "last-event-id";
/// Why a request ended when its client was closed.
const CLOSED: &str = "the connection was closed";
/// How long a session DELETE at close may take.
const DELETE_TIMEOUT: Duration = Duration::from_secs(2);

/// A failure with a message fit for the user (no header values, no query strings).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HttpError(pub String);

type HttpResult<T> = Result<T, StreamableHttpError<HttpError>>;

/// Why a request got no response.
enum Sent {
    /// It could not be sent or its answer not read.
    Failed(reqwest::Error),
    /// The server refused its token and no new one could be had (a message for the user).
    Refused(String),
}

/// How the server answered the `initialize` POST, for the decision to fall back to legacy SSE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitialAnswer {
    /// An answer an SSE-only server gives to a POST on its SSE url: 404, 405, or a 400 that
    /// is not a JSON-RPC message.
    SseOnly(u16),
    Other,
}

struct Shared {
    client: reqwest::Client,
    target: Target,
    headers: HeaderMap,
    max_body: usize,
    /// The server is gone: the session must end.
    lost: CancellationToken,
    /// The connection attempt failed or its session ended: every request and stream still
    /// open stops (rmcp's worker can outlive both, reading an endless stream).
    closed: CancellationToken,
    /// `initialize` succeeded; from now on failures end the session instead of the connect.
    established: AtomicBool,
    /// The first failure before the session was established: the connect error to report.
    first_failure: Mutex<Option<String>>,
    initial_answer: Mutex<Option<InitialAnswer>>,
    server: String,
    log: Log,
    task_hints: Option<Arc<super::task_hints::TaskHints>>,
    listing: Option<Arc<super::listing_bound::ListingBound>>,
    bearer: Option<Arc<dyn Bearer>>,
    /// The bearer's holder could not get a token the server takes.
    signed_out: AtomicBool,
}

/// Our reqwest-based [`StreamableHttpClient`]. Cheap to clone (rmcp clones it per request).
#[derive(Clone)]
pub struct HttpClient(Arc<Shared>);

impl HttpClient {
    pub fn new(
        client: reqwest::Client,
        target: Target,
        headers: HeaderMap,
        max_body: usize,
        server: &str,
        log: Log,
    ) -> Self {
        Self(Arc::new(Shared {
            client,
            target,
            headers,
            max_body,
            lost: CancellationToken::new(),
            closed: CancellationToken::new(),
            established: AtomicBool::new(false),
            first_failure: Mutex::new(None),
            initial_answer: Mutex::new(None),
            server: server.to_owned(),
            log,
            task_hints: None,
            listing: None,
            bearer: None,
            signed_out: AtomicBool::new(false),
        }))
    }

    /// Gives every request the token `bearer` holds, and tells it of each refusal.
    fn with_bearer(self, bearer: Option<Arc<dyn Bearer>>) -> Self {
        let mut shared = Arc::try_unwrap(self.0).unwrap_or_else(|_| unreachable!("not shared yet"));
        shared.bearer = bearer;
        Self(Arc::new(shared))
    }

    /// The bearer token for the next request, or why there is none.
    async fn token(&self) -> Result<Option<SecretString>, String> {
        match &self.0.bearer {
            Some(bearer) => bearer.token().await,
            None => Ok(None),
        }
    }

    /// Sends what `build` makes with the bearer's token ([`super::bearer::send`]), unless the
    /// client is closed first (`Ok(None)`). A token no one could get marks the client signed
    /// out.
    async fn send_authorized(
        &self,
        method: &str,
        url: &str,
        build: impl FnMut() -> reqwest::RequestBuilder,
    ) -> Result<Option<reqwest::Response>, Sent> {
        let sent = super::bearer::send(
            self.0.bearer.as_ref(),
            method,
            url,
            build,
            |builder| async move {
                match self.unless_closed(builder.send()).await {
                    Some(Ok(response)) => Ok(response),
                    Some(Err(error)) => Err(Some(error)),
                    None => Err(None),
                }
            },
        )
        .await;
        match sent {
            Ok(response) => Ok(Some(response)),
            Err(Unsent::Failed(Some(error))) => Err(Sent::Failed(error)),
            Err(Unsent::Failed(None)) => Ok(None),
            Err(Unsent::Refused(why)) => {
                self.0.signed_out.store(true, Ordering::SeqCst);
                Err(Sent::Refused(why))
            }
        }
    }

    /// Shows every answer to `hints` before rmcp parses it.
    fn with_task_hints(self, hints: Arc<super::task_hints::TaskHints>) -> Self {
        let mut shared = Arc::try_unwrap(self.0).unwrap_or_else(|_| unreachable!("not shared yet"));
        shared.task_hints = Some(hints);
        Self(Arc::new(shared))
    }

    /// Large answers to `tools/list` are cut down to what `listing` keeps.
    fn with_listing(self, listing: Option<Arc<super::listing_bound::ListingBound>>) -> Self {
        let mut shared = Arc::try_unwrap(self.0).unwrap_or_else(|_| unreachable!("not shared yet"));
        shared.listing = listing;
        Self(Arc::new(shared))
    }

    /// Cancelled once the server cannot be reached any more.
    pub fn lost(&self) -> CancellationToken {
        self.0.lost.clone()
    }

    /// Closes every request and stream of this client when dropped: held by the connect
    /// attempt, then by the session.
    pub fn closer(&self) -> tokio_util::sync::DropGuard {
        self.0.closed.clone().drop_guard()
    }

    /// `work`, unless the client is closed first.
    async fn unless_closed<F: Future>(&self, work: F) -> Option<F::Output> {
        tokio::select! {
            done = work => Some(done),
            _ = self.0.closed.cancelled() => None,
        }
    }

    /// Whether a request failed because no token the server takes could be had.
    pub fn signed_out(&self) -> bool {
        self.0.signed_out.load(Ordering::SeqCst)
    }

    pub fn mark_established(&self) {
        self.0.established.store(true, Ordering::SeqCst);
    }

    pub fn first_failure(&self) -> Option<String> {
        self.0
            .first_failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn initial_answer(&self) -> Option<InitialAnswer> {
        *self
            .0
            .initial_answer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn loss(&self) -> Loss {
        Loss {
            lost: self.0.lost.clone(),
            log: self.0.log.clone(),
            server: self.0.server.clone(),
        }
    }

    fn established(&self) -> bool {
        self.0.established.load(Ordering::SeqCst)
    }

    fn target(&self) -> &Target {
        &self.0.target
    }

    /// A request's headers: rmcp's protocol headers, then the server's own.
    fn request(
        &self,
        builder: reqwest::RequestBuilder,
        session_id: Option<&str>,
        protocol_headers: HashMap<HeaderName, HeaderValue>,
    ) -> reqwest::RequestBuilder {
        let mut headers = HeaderMap::new();
        for (name, value) in protocol_headers {
            // rmcp sends MCP-Protocol-Version (and, on newer protocol versions, Mcp-Method
            // and friends) here; anything it calls reserved we set ourselves.
            if matches!(
                name.as_str(),
                "accept" | SESSION_HEADER | LAST_EVENT_ID_HEADER
            ) {
                continue;
            }
            headers.insert(name, value);
        }
        for (name, value) in &self.0.headers {
            headers.append(name.clone(), value.clone());
        }
        if let Some(id) = session_id
            && let Ok(value) = HeaderValue::from_str(id)
        {
            headers.insert(SESSION_HEADER, value);
        }
        builder.headers(headers)
    }

    /// A request could not be made or its answer not read.
    fn unreachable(&self, error: &reqwest::Error) -> String {
        let text = net::describe(error, self.target());
        if self.established() && net::is_unreachable(error) {
            self.lose(&text);
        }
        text
    }

    /// Fails one message: before the session exists the error is recorded for the connect
    /// report; afterwards a request gets a JSON-RPC error answer (so its caller sees the
    /// reason), anything else a transport error.
    fn fail(
        &self,
        request_id: Option<&RequestId>,
        text: String,
    ) -> HttpResult<StreamableHttpPostResponse> {
        if !self.established() {
            let mut first = self
                .0
                .first_failure
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if first.is_none() {
                *first = Some(text.clone());
            }
            return Err(StreamableHttpError::Client(HttpError(text)));
        }
        match request_id {
            Some(id) => Ok(StreamableHttpPostResponse::Json(
                error_answer(id.clone(), text),
                None,
            )),
            None => Err(StreamableHttpError::Client(HttpError(text))),
        }
    }

    /// Ends the session once, saying why.
    fn lose(&self, why: &str) {
        lose(&self.0.lost, &self.0.log, &self.0.server, why);
    }

    /// Warns about each listed tool rmcp will drop for invalid `x-mcp-header` annotations.
    fn name_dropped_tools(&self, answer: &ServerJsonRpcMessage) {
        let JsonRpcMessage::Response(response) = answer else {
            return;
        };
        let rmcp::model::ServerResult::ListToolsResult(list) = &response.result else {
            return;
        };
        for tool in &list.tools {
            if let Some(why) = super::header_params::invalid_annotations(&tool.input_schema) {
                self.0.log.warn(&format!(
                    "MCP server '{}': tool '{}' is left out: its x-mcp-header annotations are \
                     invalid ({why})",
                    self.0.server, tool.name
                ));
            }
        }
    }

    fn record_initial_answer(&self, answer: InitialAnswer) {
        let mut slot = self
            .0
            .initial_answer
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(answer);
        }
    }
}

/// What a stream needs to end the session when its connection breaks.
struct Loss {
    lost: CancellationToken,
    log: Log,
    server: String,
}

fn error_answer(id: RequestId, text: String) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::error(ErrorData::internal_error(text, None), Some(id))
}

/// The id a response or error answers.
fn answer_id(message: &ServerJsonRpcMessage) -> Option<&RequestId> {
    match message {
        JsonRpcMessage::Response(response) => Some(&response.id),
        JsonRpcMessage::Error(error) => error.id.as_ref(),
        _ => None,
    }
}

/// Whether two ids name the same request (a number and a string of its digits do).
fn same_request(a: &RequestId, b: &RequestId) -> bool {
    shown_id(a) == shown_id(b)
}

fn shown_id(id: &RequestId) -> String {
    match id {
        rmcp::model::NumberOrString::Number(n) => n.to_string(),
        rmcp::model::NumberOrString::String(s) => s.to_string(),
    }
}

fn status_text(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("HTTP {} {reason}", status.as_u16()),
        None => format!("HTTP {}", status.as_u16()),
    }
}

/// SEP-2243's request headers, which mirror the body for intermediaries: `Mcp-Method` on every
/// POST, and `Mcp-Name` on `tools/call` and `prompts/get` (the name) and `resources/read` (the
/// URI). A value that is not a valid header value (outside visible ASCII) is left out.
fn standard_headers(
    message: &ClientJsonRpcMessage,
    body: &[u8],
) -> Vec<(&'static str, HeaderValue)> {
    let (method, name): (Option<&str>, Option<&str>) = match message {
        JsonRpcMessage::Request(request) => {
            let name = match &request.request {
                ClientRequest::CallToolRequest(r) => Some(r.params.name.as_ref()),
                ClientRequest::GetPromptRequest(r) => Some(r.params.name.as_str()),
                ClientRequest::ReadResourceRequest(r) => Some(r.params.uri.as_str()),
                _ => None,
            };
            (Some(request.request.method()), name)
        }
        // A notification's method is the first `"method"` member our serializer writes.
        JsonRpcMessage::Notification(_) => (first_method(body), None),
        _ => (None, None),
    };
    let mut out = Vec::with_capacity(2);
    for (header, value) in [("mcp-method", method), ("mcp-name", name)] {
        if let Some(value) = value.and_then(|v| HeaderValue::from_str(v).ok()) {
            out.push((header, value));
        }
    }
    out
}

/// The value of the first `"method":"…"` in `body` (JSON this client serialised: the
/// envelope's members come before `params`, and method names need no escapes).
fn first_method(body: &[u8]) -> Option<&str> {
    const KEY: &[u8] = b"\"method\":\"";
    let at = body.windows(KEY.len()).position(|w| w == KEY)? + KEY.len();
    let len = body[at..].iter().position(|&b| b == b'"' || b == b'\\')?;
    std::str::from_utf8(&body[at..at + len]).ok()
}

impl StreamableHttpClient for HttpClient {
    type Error = HttpError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let max = self.0.max_body;
        self.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            max,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let (request_id, is_initialize, is_discover) = match &message {
            JsonRpcMessage::Request(request) => (
                Some(request.id.clone()),
                matches!(request.request, ClientRequest::InitializeRequest(_)),
                matches!(request.request, ClientRequest::DiscoverRequest(_)),
            ),
            _ => (None, false, false),
        };
        let first_post = is_initialize && !self.established() && session_id.is_none();
        // On 2026-07-28 rmcp drops a listed tool whose x-mcp-header annotations are invalid;
        // the user's log is told which.
        let lists_tools = match &message {
            JsonRpcMessage::Request(request) => {
                matches!(request.request, ClientRequest::ListToolsRequest(_))
                    && request
                        .request
                        .get_meta()
                        .protocol_version()
                        .is_some_and(|v| v >= rmcp::model::ProtocolVersion::STANDARD_HEADERS)
            }
            _ => false,
        };
        let body = serde_json::to_vec(&message)?;
        if let Some(listing) = &self.0.listing {
            listing.sent(&body);
        }
        let standard = standard_headers(&message, &body);
        // Sent once without a bearer (moved, not copied); with one it may be sent again.
        let resend = self.0.bearer.is_some();
        let (mut body, mut custom_headers) = (Some(body), Some(custom_headers));
        let build = || {
            let mut builder = self
                .0
                .client
                .post(uri.as_ref())
                .header(ACCEPT, "application/json, text/event-stream")
                .header(CONTENT_TYPE, "application/json");
            for (header, value) in &standard {
                builder = builder.header(*header, value.clone());
            }
            let (payload, headers) = if resend {
                (body.clone(), custom_headers.clone())
            } else {
                (body.take(), custom_headers.take())
            };
            self.request(builder, session_id.as_deref(), headers.unwrap_or_default())
                .body(payload.unwrap_or_default())
        };
        let response = match self.send_authorized("POST", &uri, build).await {
            Ok(Some(response)) => response,
            Ok(None) => return self.fail(request_id.as_ref(), CLOSED.to_owned()),
            Err(Sent::Failed(error)) => {
                let text = self.unreachable(&error);
                return self.fail(request_id.as_ref(), text);
            }
            Err(Sent::Refused(text)) => return self.fail(request_id.as_ref(), text),
        };
        let status = response.status();
        let new_session = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if status.is_redirection() {
            let text = net::redirect_refused(&response, self.target());
            return self.fail(request_id.as_ref(), text);
        }
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if !status.is_success() {
            if status == StatusCode::NOT_FOUND && session_id.is_some() {
                return Err(StreamableHttpError::SessionExpired);
            }
            let html = net::content_type(&response).is_some_and(|t| t.contains("html"));
            let body = match self
                .unless_closed(net::read_bounded(response, net::MAX_ERROR_BODY))
                .await
            {
                Some(Ok(Body::Complete(body))) => body,
                Some(Ok(Body::TooLarge)) => Vec::new(),
                Some(Err(error)) => {
                    let text = self.unreachable(&error);
                    return self.fail(request_id.as_ref(), text);
                }
                None => return self.fail(request_id.as_ref(), CLOSED.to_owned()),
            };
            let answer = serde_json::from_slice::<ServerJsonRpcMessage>(&body).ok();
            let shown_body = net::preview(&body, self.0.log.redactor());
            // server-everything (and the TypeScript SDK's examples) answer an unknown session
            // with 400 "Bad Request: No valid session ID provided" instead of 404.
            if status == StatusCode::BAD_REQUEST
                && session_id.is_some()
                && shown_body.to_ascii_lowercase().contains("session")
            {
                return Err(StreamableHttpError::SessionExpired);
            }
            if first_post {
                let sse_only = matches!(
                    status,
                    StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
                ) || (status == StatusCode::BAD_REQUEST && answer.is_none());
                self.record_initial_answer(if sse_only {
                    InitialAnswer::SseOnly(status.as_u16())
                } else {
                    InitialAnswer::Other
                });
            }
            let auth = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
            if !auth && let Some(JsonRpcMessage::Error(mut error)) = answer {
                // The session layer reads a refused `server/discover` (a legacy server, or a
                // revision to retry with) from the error itself.
                if self.established() || is_discover {
                    // Correlate an id-less error with the request it answers.
                    if error.id.is_none() {
                        error.id = request_id.clone();
                    }
                    return Ok(StreamableHttpPostResponse::Json(
                        JsonRpcMessage::Error(error),
                        new_session,
                    ));
                }
                let text = format!(
                    "{} answered {}: {} (JSON-RPC error {})",
                    self.target().shown,
                    status_text(status),
                    error.error.message,
                    error.error.code.0
                );
                return self.fail(request_id.as_ref(), text);
            }
            let mut text = format!("{} answered {}", self.target().shown, status_text(status));
            if auth && self.0.bearer.is_some() {
                text.push_str(" (the OAuth token was refused)");
            } else if auth {
                text.push_str(" (check the credentials in the server's headers)");
            } else if html {
                text.push_str(" (an HTML page)");
            } else if !shown_body.is_empty() {
                text.push_str(&format!(": {shown_body}"));
            }
            return self.fail(request_id.as_ref(), text);
        }
        if first_post {
            self.record_initial_answer(InitialAnswer::Other);
        }
        let kind = net::content_type(&response);
        match kind.as_deref() {
            Some("text/event-stream") => {
                let lost = self.established().then(|| self.loss());
                let stream = event_stream(
                    response,
                    max_sse_event_size.min(self.0.max_body),
                    request_id,
                    self.target().clone(),
                    lost,
                    self.0.closed.clone(),
                );
                let stream = match self.0.listing.clone() {
                    Some(listing) => stream
                        .map(move |event| {
                            let mut event = event?;
                            let cut = event
                                .data
                                .as_deref()
                                .and_then(|data| listing.answered(data.as_bytes()));
                            // Cut from the event's text at element boundaries: still UTF-8.
                            if let Some(data) = cut.and_then(|cut| String::from_utf8(cut).ok()) {
                                event.data = Some(data);
                            }
                            Ok(event)
                        })
                        .boxed(),
                    None => stream,
                };
                let stream = if lists_tools || self.0.task_hints.is_some() {
                    let this = self.clone();
                    stream
                        .inspect(move |event| {
                            let Ok(event) = event else { return };
                            let Some(data) = &event.data else { return };
                            if let Some(hints) = &this.0.task_hints {
                                hints.observe(data.as_bytes());
                            }
                            if lists_tools && let Ok(answer) = serde_json::from_str(data) {
                                this.name_dropped_tools(&answer);
                            }
                        })
                        .boxed()
                } else {
                    stream
                };
                Ok(StreamableHttpPostResponse::Sse(stream, new_session))
            }
            Some("application/json") => {
                let body = match self
                    .unless_closed(net::read_bounded(response, self.0.max_body))
                    .await
                {
                    None => return self.fail(request_id.as_ref(), CLOSED.to_owned()),
                    Some(Ok(Body::Complete(body))) => body,
                    Some(Ok(Body::TooLarge)) => {
                        let text = format!(
                            "the answer from {} exceeds the {}-byte message limit",
                            self.target().shown,
                            self.0.max_body
                        );
                        return self.fail(request_id.as_ref(), text);
                    }
                    Some(Err(error)) => {
                        let text = self.unreachable(&error);
                        return self.fail(request_id.as_ref(), text);
                    }
                };
                let body = match self.0.listing.as_deref().and_then(|l| l.answered(&body)) {
                    Some(cut) => cut,
                    None => body,
                };
                if let Some(hints) = &self.0.task_hints {
                    hints.observe(&body);
                }
                match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                    Ok(answer) => match (answer_id(&answer), request_id.as_ref()) {
                        // An answer to another request answers nobody: the call would wait
                        // for its deadline.
                        (Some(got), Some(want)) if !same_request(got, want) => {
                            let text = format!(
                                "{} answered with id {}, not the request's id {}",
                                self.target().shown,
                                shown_id(got),
                                shown_id(want)
                            );
                            self.fail(request_id.as_ref(), text)
                        }
                        _ => {
                            if lists_tools {
                                self.name_dropped_tools(&answer);
                            }
                            Ok(StreamableHttpPostResponse::Json(answer, new_session))
                        }
                    },
                    Err(_) if request_id.is_none() => Ok(StreamableHttpPostResponse::Accepted),
                    Err(_) => {
                        let text = format!(
                            "{} answered with JSON that is not a JSON-RPC message: {}",
                            self.target().shown,
                            net::preview(&body, self.0.log.redactor())
                        );
                        self.fail(request_id.as_ref(), text)
                    }
                }
            }
            // An empty 200 for a notification is common enough.
            _ if request_id.is_none() => Ok(StreamableHttpPostResponse::Accepted),
            other => {
                let text = format!(
                    "{} answered {} with Content-Type {}, not an MCP response (is this the \
                     server's MCP endpoint?)",
                    self.target().shown,
                    status_text(status),
                    other.unwrap_or("(none)")
                );
                self.fail(request_id.as_ref(), text)
            }
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        if self.0.lost.is_cancelled() {
            return Ok(());
        }
        let token = self.token().await.ok().flatten();
        let builder = super::bearer::authorize(
            self.request(
                self.0.client.delete(uri.as_ref()),
                Some(&session_id),
                custom_headers,
            ),
            self.0.bearer.as_ref(),
            "DELETE",
            &uri,
            token.as_ref(),
        );
        // Best effort: the session is over either way.
        let _ = tokio::time::timeout(DELETE_TIMEOUT, builder.send()).await;
        Ok(())
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<BoxStream<'static, Result<sse_stream::Sse, SseError>>> {
        let max = self.0.max_body;
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<BoxStream<'static, Result<sse_stream::Sse, SseError>>> {
        let build = || {
            let mut builder = self
                .0
                .client
                .get(uri.as_ref())
                .header(ACCEPT, "text/event-stream");
            if let Some(last) = last_event_id.as_deref()
                && let Ok(value) = HeaderValue::from_str(last)
            {
                builder = builder.header(LAST_EVENT_ID_HEADER, value);
            }
            self.request(builder, session_id.as_deref(), custom_headers.clone())
        };
        let response = match self.send_authorized("GET", &uri, build).await {
            Ok(Some(response)) => response,
            Ok(None) => return Err(StreamableHttpError::Client(HttpError(CLOSED.to_owned()))),
            Err(Sent::Failed(error)) => {
                let text = self.unreachable(&error);
                return Err(StreamableHttpError::Client(HttpError(text)));
            }
            Err(Sent::Refused(text)) => return Err(StreamableHttpError::Client(HttpError(text))),
        };
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if session_id.is_some() && matches!(status, StatusCode::NOT_FOUND | StatusCode::BAD_REQUEST)
        {
            return Err(StreamableHttpError::SessionExpired);
        }
        if !status.is_success() {
            return Err(StreamableHttpError::Client(HttpError(format!(
                "the event stream at {} answered {}",
                self.target().shown,
                status_text(status)
            ))));
        }
        if net::content_type(&response).as_deref() != Some("text/event-stream") {
            return Err(StreamableHttpError::UnexpectedContentType(
                net::content_type(&response),
            ));
        }
        let lost = self.established().then(|| self.loss());
        Ok(event_stream(
            response,
            max_sse_event_size.min(self.0.max_body),
            None,
            self.target().clone(),
            lost,
            self.0.closed.clone(),
        ))
    }
}

/// Decodes an SSE response body with the size limit. On a POST's stream (`request_id` set) an
/// oversized event becomes a JSON-RPC error for that request, and the stream ends. A broken
/// connection ends the stream with an error and, when `lost` is given, the session too.
fn event_stream(
    response: reqwest::Response,
    limit: usize,
    request_id: Option<RequestId>,
    target: Target,
    lost: Option<Loss>,
    closed: CancellationToken,
) -> BoxStream<'static, Result<sse_stream::Sse, SseError>> {
    let body = response
        .bytes_stream()
        .take_until(async move { closed.cancelled_owned().await });
    decode_events(body, limit, request_id, target, lost)
}

fn decode_events<S, B>(
    body: S,
    limit: usize,
    request_id: Option<RequestId>,
    target: Target,
    lost: Option<Loss>,
) -> BoxStream<'static, Result<sse_stream::Sse, SseError>>
where
    S: futures::Stream<Item = Result<B, reqwest::Error>> + Send + 'static,
    B: AsRef<[u8]> + Send + 'static,
{
    struct State<S> {
        body: std::pin::Pin<Box<S>>,
        decoder: Decoder,
        queue: VecDeque<Event>,
        done: bool,
        request_id: Option<RequestId>,
        /// On a POST's stream: the request's id as JSON text.
        own_id: Option<Vec<u8>>,
        target: Target,
        lost: Option<Loss>,
    }
    let own_id = request_id
        .as_ref()
        .and_then(|id| serde_json::to_vec(id).ok());
    let state = State {
        body: Box::pin(body),
        decoder: Decoder::new(limit),
        queue: VecDeque::new(),
        done: false,
        request_id,
        own_id,
        target,
        lost,
    };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.queue.pop_front() {
                if let Some(own) = &state.own_id
                    && answers_another(&event.data, own)
                {
                    // rmcp stops reading a POST's stream at the first answer of any id, so
                    // the real answer after a stray one would be lost.
                    continue;
                }
                let sse = sse_stream::Sse {
                    event: event.event,
                    data: (!event.data.is_empty()).then_some(event.data),
                    id: event.id,
                    retry: event.retry,
                };
                return Some((Ok(sse), state));
            }
            if state.done {
                return None;
            }
            match state.body.next().await {
                Some(Ok(chunk)) => {
                    if let Err(too_large) = state.decoder.feed(chunk.as_ref(), &mut state.queue) {
                        state.done = true;
                        state.queue.clear();
                        let text = too_large_text(too_large, &state.target);
                        match state.request_id.take() {
                            Some(id) => {
                                let answer = error_answer(id, text);
                                let data = serde_json::to_string(&answer).unwrap_or_default();
                                let sse = sse_stream::Sse {
                                    event: None,
                                    data: Some(data),
                                    id: None,
                                    retry: None,
                                };
                                return Some((Ok(sse), state));
                            }
                            None => {
                                return Some((
                                    Err(SseError::Body(Box::new(HttpError(text)))),
                                    state,
                                ));
                            }
                        }
                    }
                }
                Some(Err(error)) => {
                    state.done = true;
                    let text = net::describe(&error, &state.target);
                    if let Some(loss) = &state.lost {
                        lose(&loss.lost, &loss.log, &loss.server, &text);
                    }
                    return Some((Err(SseError::Body(Box::new(HttpError(text)))), state));
                }
                None => {
                    state.done = true;
                }
            }
        }
    })
    .boxed()
}

/// Whether an event's data is an answer (no `method`) to a request other than `own` (JSON text).
fn answers_another(data: &str, own: &[u8]) -> bool {
    let shape = json_peek::scan(data.as_bytes());
    !shape.has_method
        && shape
            .id
            .is_some_and(|id| !json_peek::same_id(&data.as_bytes()[id], own))
}

fn too_large_text(too_large: TooLarge, target: &Target) -> String {
    format!("{too_large} (from {})", target.shown)
}
