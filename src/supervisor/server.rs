//! A configured server as everyone but its supervisor sees it: its config, the state the
//! supervisor publishes (status, tools, the peer to talk to) and tool calls against it.

use crate::events::{Event, Events};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, JsonObject, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::config::ServerConfig;
use crate::error::CallError;
use crate::log::Log;
use crate::session::{MAX_INPUT_ROUNDS, Progress, ProgressRouter};
use crate::status::Status;
use crate::transport::call_lane::{self, CallLane, LaneCall};
use crate::transport::call_reply::Reply;
use crate::transport::listing_bound::ListingBound;
use crate::transport::stdio::{StderrTail, StreamFault};
use crate::transport::task_hints::TaskHints;

use super::metrics::ServerMetrics;

/// A server tool as the agent sees it, built once per discovery.
#[derive(Debug, Clone)]
pub struct ToolEntry {
    /// The server's own name for the tool (what `tools/call` is sent with). The agent-facing
    /// name is assigned by the manager across all servers (`bridge::assign_tool_names`).
    pub mcp_name: String,
    pub label: String,
    pub description: String,
    /// The converted parameter schema (compat mode) as JSON text, made once per discovery;
    /// the binding builds `parameters` from it (see `docs/design.md`).
    pub parameters_json: Arc<str>,
    /// `parameters_json` after the text hygiene pass, when the pass changes it (what a server
    /// with hygiene on offers instead, and the `enum`/`const` values to give back in calls).
    pub hygienic: Option<Arc<crate::security::hygiene::schema::HygienicSchema>>,
    /// The tool's `outputSchema`, which rich results check `structuredContent` against.
    pub output_schema: Option<Arc<serde_json::Value>>,
    /// A tool this client makes of the server's resources or prompts (`resourceTools`,
    /// `promptTools`), answered by the manager instead of `tools/call`.
    pub builtin: Option<Builtin>,
    /// The hashes of the definition as the server listed it (`None` for built-ins).
    pub pin: Option<Arc<crate::security::pinning::Pin>>,
    /// The server runs it only as a task (`execution.taskSupport: "required"`): each call
    /// creates one and waits for its result.
    pub task: bool,
}

/// The tools made of what a server offers besides tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    ResourcesList,
    ResourcesRead,
    PromptsList,
    PromptsGet,
}

impl Builtin {
    /// The tool's own name (the agent name is made from it like any other).
    pub fn name(self) -> &'static str {
        match self {
            Builtin::ResourcesList => "resources_list",
            Builtin::ResourcesRead => "resources_read",
            Builtin::PromptsList => "prompts_list",
            Builtin::PromptsGet => "prompts_get",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Builtin::ResourcesList => {
                "List the resources (and resource templates) this server offers"
            }
            Builtin::ResourcesRead => "Read one resource of this server by its URI",
            Builtin::PromptsList => "List the prompts this server offers, with their arguments",
            Builtin::PromptsGet => "Get one prompt of this server, filled with its arguments",
        }
    }

    /// The input schema, as a server would send it.
    pub fn input_schema(self) -> serde_json::Value {
        match self {
            Builtin::ResourcesList | Builtin::PromptsList => {
                serde_json::json!({ "type": "object", "properties": {} })
            }
            Builtin::ResourcesRead => serde_json::json!({
                "type": "object",
                "properties": { "uri": { "type": "string", "description": "The resource's URI" } },
                "required": ["uri"],
            }),
            Builtin::PromptsGet => serde_json::json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "description": "The prompt's name" },
                    "arguments": { "type": "object", "description": "The prompt's arguments, each a string" },
                },
                "required": ["name"],
            }),
        }
    }
}

/// A server's last resource context block and until when it may be reused. Cleared when the
/// server says its resources changed and at every (re)connect.
#[derive(Clone, Default)]
pub struct ResourceCache(Arc<std::sync::Mutex<Option<(tokio::time::Instant, String)>>>);

impl ResourceCache {
    pub fn get(&self) -> Option<String> {
        let slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        slot.as_ref()
            .filter(|(until, _)| tokio::time::Instant::now() < *until)
            .map(|(_, block)| block.clone())
    }

    pub fn put(&self, block: String, keep: Duration) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((tokio::time::Instant::now() + keep, block));
    }

    pub fn clear(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

#[derive(Clone)]
pub struct Snapshot {
    pub status: Status,
    pub tools: Arc<Vec<ToolEntry>>,
    pub peer: Option<Peer<RoleClient>>,
    /// The session's call lane (stdio sessions opened with `initialize`): how tool calls go.
    pub lane: Option<Arc<CallLane>>,
    /// The transport of the last successful connection: `stdio`, `streamable-http` or `sse`.
    pub transport: Option<&'static str>,
    /// A session is up (false while an idle or lazy server has no process, whatever `status`).
    pub running: bool,
    /// The protocol revision the last session negotiated (`2025-11-25`, …).
    pub protocol_version: Option<String>,
    /// When the current session became ready (`None` while no session is up).
    pub ready_since: Option<std::time::Instant>,
}

/// How often the timer anchor wakes (see `Server::arm_timer_anchor`): shorter than the usual
/// tool timeouts (60 s by default), rare enough to cost nothing.
const ANCHOR_PERIOD: Duration = Duration::from_secs(20);

/// A `tools/call` request waiting for its answer.
enum Waiting {
    Rmcp(tokio::sync::oneshot::Receiver<Result<ServerResult, rmcp::ServiceError>>),
    Lane(LaneCall),
}

impl Waiting {
    /// The answer (cancel-safe): a tool result, or another round's questions (2026-07-28).
    async fn answer(
        &mut self,
    ) -> Result<Result<CallToolResult, rmcp::model::InputRequiredResult>, CallError> {
        let answer = match self {
            Waiting::Rmcp(rx) => rx.await,
            Waiting::Lane(call) => (&mut call.answer).await.map(|reply| match reply {
                Reply::Call(result) => Ok(ServerResult::CallToolResult(result)),
                Reply::Result(result) => Ok(result),
                Reply::Error(error) => Err(rmcp::ServiceError::McpError(error)),
            }),
        };
        match answer {
            Ok(Ok(ServerResult::CallToolResult(result))) => Ok(Ok(result)),
            Ok(Ok(ServerResult::InputRequiredResult(asked))) => Ok(Err(asked)),
            Ok(Ok(_)) => Err(CallError::Protocol(
                "unexpected answer to tools/call".to_owned(),
            )),
            Ok(Err(error)) => Err(CallError::from_service(error)),
            Err(_) => Err(CallError::Closed),
        }
    }
}

/// A live session as a call uses it: the peer, and the call lane of the same session.
struct Live {
    peer: Peer<RoleClient>,
    lane: Option<Arc<CallLane>>,
}

impl Live {
    fn of(snap: &Snapshot) -> Option<Self> {
        snap.peer.as_ref().map(|peer| Live {
            peer: peer.clone(),
            lane: snap.lane.clone(),
        })
    }
}

/// A call under way, as the idle timer counts it.
struct CallActivity<'a>(&'a Server);

impl Drop for CallActivity<'_> {
    fn drop(&mut self) {
        self.0
            .in_flight
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        self.0.activity.notify_waiters();
    }
}

/// Settings shared by every server of a manager.
#[derive(Clone, Debug)]
pub struct RuntimeOptions {
    /// Each of the two waits of a shutdown (after closing stdin, after SIGTERM).
    pub shutdown_grace: Duration,
    /// Largest JSON-RPC message accepted from a server (a longer stdio line ends the session).
    pub max_message_bytes: usize,
    /// A server that stayed ready this long gets its restart budget back.
    pub restart_budget_reset: Duration,
    /// Legacy SSE: the longest silence on the event stream before the session ends (a
    /// keep-alive ping is sent half-way through). Zero: unbounded.
    pub sse_idle_timeout: Duration,
    /// `schemas` of the manager (a server's own wins).
    pub schemas: crate::config::SchemaMode,
    /// The host's answers to sampling, elicitation and roots requests.
    pub client_requests: crate::session::ClientRequests,
    /// `cacheDir` of the manager (a server's own wins).
    pub cache_dir: Option<std::path::PathBuf>,
    /// The host's part in OAuth (its `authorize` step and its token store).
    pub oauth: crate::oauth::OAuthHost,
    /// Given each stdio session's output as it opens (the addon's JS thread reads it while it
    /// waits for a lone call).
    pub output_watcher: crate::transport::stdio_lines::OutputWatcher,
    /// Where the sessions report the servers' resource and prompt changes.
    pub catalog_changes: crate::session::CatalogChanges,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        Self {
            shutdown_grace: Duration::from_secs(2),
            max_message_bytes: 64 * 1024 * 1024,
            restart_budget_reset: Duration::from_secs(60),
            sse_idle_timeout: Duration::from_secs(60),
            schemas: crate::config::SchemaMode::Compat,
            client_requests: crate::session::ClientRequests::default(),
            cache_dir: None,
            oauth: crate::oauth::OAuthHost::default(),
            output_watcher: Default::default(),
            catalog_changes: Default::default(),
        }
    }
}

/// One configured server: its config and its published state.
pub struct Server {
    pub config: ServerConfig,
    state: watch::Sender<Snapshot>,
    pub(super) progress: Arc<ProgressRouter>,
    /// Why the current stdio session's output could no longer be trusted, if it could not.
    pub(super) fault: StreamFault,
    pub(super) resource_cache: ResourceCache,
    pub(super) events: Events,
    published: tokio::sync::Notify,
    /// The loader-hijack variables it was not given were reported (once per server).
    pub(super) env_warned: std::sync::atomic::AtomicBool,
    /// Tool calls under way, and a wake for the idle timer at each start and end of one.
    pub(super) in_flight: std::sync::atomic::AtomicUsize,
    pub(super) activity: tokio::sync::Notify,
    /// A call asks an idle server's supervisor to start it again.
    pub(super) wake: tokio::sync::Notify,
    pub(super) log: Log,
    pub(super) options: Arc<RuntimeOptions>,
    /// How the last session opened (`protocol: 'auto'` starts the next one the same way).
    pub(super) opened_with: std::sync::Mutex<Option<crate::session::Lifecycle>>,
    /// What the current session's server said about tasks (rmcp's types drop it).
    pub(super) task_hints: std::sync::Mutex<Arc<TaskHints>>,
    /// What the current session (stdio, Streamable HTTP or SSE) cuts its large `tools/list`
    /// answers down to.
    listing_bound: std::sync::Mutex<Option<Arc<ListingBound>>>,
    /// OAuth for a remote server with `auth` (kept across restarts: its tokens live on).
    pub(super) oauth: Option<Arc<crate::oauth::Authorizer>>,
    /// Keeps a timer armed on the runtime once calls start (see [`Self::arm_timer_anchor`]);
    /// stops with the server.
    timer_anchor: std::sync::OnceLock<tokio_util::sync::DropGuard>,
    /// Calls, restarts, the last error and connect timings (`getMetrics()`).
    metrics: ServerMetrics,
    /// The last lines the server wrote to stderr, across its restarts.
    pub(super) stderr: StderrTail,
}

impl Server {
    pub fn new(
        config: ServerConfig,
        log: Log,
        options: Arc<RuntimeOptions>,
        events: Events,
    ) -> Arc<Self> {
        let (state, _) = watch::channel(Snapshot {
            status: Status::Disconnected,
            tools: Arc::new(Vec::new()),
            peer: None,
            lane: None,
            transport: None,
            running: false,
            protocol_version: None,
            ready_since: None,
        });
        let oauth = match (&config.auth, &config.url) {
            (Some(auth), Some(url)) => crate::oauth::Authorizer::new(
                &config.name,
                url,
                auth.clone(),
                options.oauth.clone(),
                log.clone(),
            )
            .inspect_err(|e| log.warn(e))
            .ok(),
            _ => None,
        };
        // The server's log messages become `serverLog` events as they are read (in wire order,
        // before the result they precede).
        let progress = Arc::new(ProgressRouter::default());
        progress.on_log({
            let (server, events, redactor) =
                (config.name.clone(), events.clone(), log.redactor().clone());
            Box::new(move |params| {
                events.emit_with(crate::events::EventKind::ServerLog, || {
                    crate::session::server_log_event(&server, params, &redactor)
                })
            })
        });
        Arc::new(Self {
            oauth,
            config,
            state,
            progress,
            fault: StreamFault::default(),
            resource_cache: ResourceCache::default(),
            log,
            options,
            events,
            published: tokio::sync::Notify::new(),
            env_warned: std::sync::atomic::AtomicBool::new(false),
            in_flight: std::sync::atomic::AtomicUsize::new(0),
            activity: tokio::sync::Notify::new(),
            wake: tokio::sync::Notify::new(),
            opened_with: std::sync::Mutex::new(None),
            task_hints: std::sync::Mutex::new(Arc::default()),
            listing_bound: std::sync::Mutex::new(None),
            timer_anchor: std::sync::OnceLock::new(),
            metrics: ServerMetrics::default(),
            stderr: StderrTail::default(),
        })
    }

    /// What the server has done since the manager started (see [`ServerMetrics`]).
    pub fn metrics(&self) -> &ServerMetrics {
        &self.metrics
    }

    /// The last lines the server wrote to stderr (masked as they were logged), oldest first,
    /// kept across restarts.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr.lines()
    }

    /// What the current session's server said about tasks.
    pub(super) fn task_hints(&self) -> Arc<TaskHints> {
        self.task_hints
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A session starts: nothing is known about its tasks yet.
    pub(super) fn fresh_task_hints(&self) -> Arc<TaskHints> {
        let hints = Arc::new(TaskHints::default());
        *self.task_hints.lock().unwrap_or_else(|p| p.into_inner()) = hints.clone();
        hints
    }

    /// A session starts (any transport): its large `tools/list` answers keep at most
    /// `maxTools` of the tools `toolFilter` lets through before rmcp reads them (see
    /// `transport::listing_bound`).
    pub(super) fn fresh_listing_bound(&self) -> Arc<ListingBound> {
        let filter = self.config.tool_filter.clone();
        let bound = ListingBound::new(
            self.config.max_tools as usize,
            Arc::new(move |name: &str| filter.allows(name)),
        );
        *self.listing_bound.lock().unwrap_or_else(|p| p.into_inner()) = Some(bound.clone());
        bound
    }

    /// How many tools `toolFilter` lets through the answer to the session's last `tools/list`
    /// request had past `maxTools`, left out before rmcp read it (0 when none were).
    pub(super) fn listing_beyond(&self) -> usize {
        self.listing_bound
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map_or(0, |bound| bound.take_beyond())
    }

    /// Where the server's OAuth sign-in stands (`None`: no `auth`).
    pub fn auth_state(&self) -> Option<crate::oauth::AuthState> {
        self.oauth.as_ref().map(|o| o.state())
    }

    /// Deletes the server's stored OAuth tokens. `Ok(false)`: none were stored.
    pub async fn sign_out(&self) -> Result<bool, String> {
        match &self.oauth {
            Some(oauth) => oauth.sign_out().await,
            None => Err(format!(
                "MCP server '{}' does not use OAuth",
                self.config.name
            )),
        }
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// The last resource context block of this server, reused for `resourceRefreshMs`.
    pub fn resource_cache(&self) -> &ResourceCache {
        &self.resource_cache
    }

    pub fn resource_refresh(&self) -> Duration {
        Duration::from_millis(self.config.resource_refresh_ms)
    }

    /// How long one request other than a tool call may take (the connect `timeout`).
    pub fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.config.timeout_ms)
    }

    pub fn snapshot(&self) -> Snapshot {
        self.state.borrow().clone()
    }

    pub fn status(&self) -> Status {
        self.state.borrow().status
    }

    pub(super) fn set_status(&self, status: Status) {
        self.set_status_because(status, None);
    }

    /// `error`, saying why (the reason goes to `status` listeners, redacted).
    pub(super) fn set_error(&self, why: &str) {
        self.set_status_because(Status::Error, Some(why));
    }

    fn set_status_because(&self, status: Status, why: Option<&str>) {
        let mut previous = status;
        self.state.send_modify(|s| {
            previous = s.status;
            s.status = status;
            if status != Status::Ready {
                s.peer = None;
                s.lane = None;
                s.running = false;
                s.ready_since = None;
            }
        });
        // Masked as the status event masks it, once for both.
        let why = why.map(|w| self.log.redactor().redact(w).into_owned());
        if let Some(why) = &why {
            self.metrics.record_error(why.clone());
        }
        self.emit_status(status, previous, why);
        // Its tools are no longer offered: whoever follows the offered tools (a gateway's
        // `tools/list_changed`) looks again.
        if previous == Status::Ready && status != Status::Ready {
            self.published.notify_waiters();
        }
    }

    /// The server failed to start for a reason a restart would not change (`why`, masked
    /// here): its last error, without a status event of its own.
    pub(super) fn record_start_failure(&self, why: &str) {
        self.metrics
            .record_error(self.log.redactor().redact(why).into_owned());
    }

    fn emit_status(&self, status: Status, previous: Status, why: Option<String>) {
        if previous == status {
            return;
        }
        self.events
            .emit_with(crate::events::EventKind::Status, || Event::Status {
                server: self.config.name.clone(),
                status,
                previous,
                error: why,
            });
    }

    pub(super) fn set_ready(
        &self,
        peer: Peer<RoleClient>,
        lane: Option<Arc<CallLane>>,
        tools: Vec<ToolEntry>,
        transport: &'static str,
    ) {
        let mut previous = Status::Ready;
        self.state.send_modify(|s| {
            previous = s.status;
            s.status = Status::Ready;
            s.protocol_version = peer.peer_info().map(|i| i.protocol_version.to_string());
            s.peer = Some(peer);
            s.lane = lane;
            s.tools = Arc::new(tools);
            s.transport = Some(transport);
            s.running = true;
            s.ready_since = Some(std::time::Instant::now());
        });
        self.emit_status(Status::Ready, previous, None);
        self.published.notify_waiters();
    }

    pub(super) fn set_tools(&self, tools: Vec<ToolEntry>) {
        self.state.send_modify(|s| s.tools = Arc::new(tools));
        self.published.notify_waiters();
    }

    /// Starts out knowing `tools` (not offered until the server is ready): a server that
    /// replaces another of the same name keeps its tool names stable while it connects.
    pub(crate) fn remember_tools(&self, tools: Arc<Vec<ToolEntry>>) {
        self.state.send_modify(|s| s.tools = tools);
    }

    /// An idle server: `ready` (its tools are offered) with no session; the next call starts
    /// it. `tools`, when given, are what it offers meanwhile (a lazy start's cached list).
    pub(super) fn set_idle(&self, tools: Option<Vec<ToolEntry>>) {
        let mut previous = Status::Ready;
        let published = tools.is_some();
        self.state.send_modify(|s| {
            previous = s.status;
            s.status = Status::Ready;
            s.peer = None;
            s.lane = None;
            s.running = false;
            s.ready_since = None;
            if let Some(tools) = tools {
                s.tools = Arc::new(tools);
            }
        });
        self.emit_status(Status::Ready, previous, None);
        if published {
            self.published.notify_waiters();
        }
    }

    /// Every tool call arms its deadline on tokio's timer. With no other timer armed, the
    /// runtime's driver sleeps with no timeout, and arming one wakes it (an eventfd write, and
    /// the caller and the driver contending for the timer's lock): on every sequential call,
    /// from the JS thread that starts it. A timer that is always armed, nearer than any call's
    /// deadline, means a call's deadline never has to wake the driver. It costs one wake-up
    /// every [`ANCHOR_PERIOD`] while the server exists.
    fn arm_timer_anchor(&self) {
        self.timer_anchor.get_or_init(|| {
            let stop = CancellationToken::new();
            let stopped = stop.clone();
            tokio::spawn(async move {
                loop {
                    tokio::select! {
                        _ = stopped.cancelled() => break,
                        _ = tokio::time::sleep(ANCHOR_PERIOD) => {}
                    }
                }
            });
            stop.drop_guard()
        });
    }

    /// The idle timer's view of a call: counted while it runs.
    fn begin_call(&self) -> CallActivity<'_> {
        self.in_flight
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.activity.notify_waiters();
        CallActivity(self)
    }

    /// Resolves once `idle` has passed with no call under way and none started or ended.
    pub(super) async fn idle_for(&self, idle: Duration) {
        loop {
            let activity = self.activity.notified();
            tokio::pin!(activity);
            activity.as_mut().enable();
            if self.in_flight.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                tokio::select! {
                    _ = tokio::time::sleep(idle) => return,
                    _ = &mut activity => {}
                }
            } else {
                activity.await;
            }
        }
    }

    /// The peer for a call: the live one, or, for an idle server, the one its supervisor
    /// starts for this call, waited for within the connect `timeout` (and the caller's
    /// cancellation).
    pub(crate) async fn awake_peer(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Peer<RoleClient>, CallError> {
        self.awake(cancel).await.map(|live| live.peer)
    }

    /// [`Self::awake_peer`], with the same session's call lane.
    async fn awake(&self, cancel: &CancellationToken) -> Result<Live, CallError> {
        let mut state = self.state.subscribe();
        {
            let snap = state.borrow_and_update();
            match (Live::of(&snap), snap.status, snap.running) {
                (Some(live), Status::Ready, _) => return Ok(live),
                (None, Status::Ready, false)
                    if self.config.idle_timeout_ms.is_some() || self.config.lazy => {}
                _ => return self.ready_live(),
            }
        }
        self.wake.notify_one();
        let timeout = Duration::from_millis(self.config.timeout_ms);
        let woke = async {
            loop {
                if state.changed().await.is_err() {
                    return self.ready_live();
                }
                let snap = state.borrow_and_update();
                match (Live::of(&snap), snap.status) {
                    (Some(live), Status::Ready) => return Ok(live),
                    (None, Status::Ready) => continue,
                    _ => {
                        drop(snap);
                        return self.ready_live();
                    }
                }
            }
        };
        tokio::select! {
            live = tokio::time::timeout(timeout, woke) => live.map_err(|_| CallError::Timeout(timeout))?,
            _ = cancel.cancelled() => Err(CallError::Aborted),
        }
    }

    /// Wakes when the server publishes a tool list, and when it stops offering its tools (it
    /// left `ready`).
    pub fn tools_published(&self) -> &tokio::sync::Notify {
        &self.published
    }

    /// For a server whose supervisor never ran (shutdown before start).
    pub(crate) fn mark_closed(&self) {
        self.set_status(Status::Closed);
    }

    /// The peer to talk to, or the contract's not-ready error.
    pub fn ready_peer(&self) -> Result<Peer<RoleClient>, CallError> {
        self.ready_live().map(|live| live.peer)
    }

    /// Sends `ping` and returns the round trip in ms. An idle or lazy server with no process is
    /// started for it, as a call starts it (and, like a call, it counts as activity for
    /// `idleTimeoutMs`); the answer is waited for within the connect `timeout`.
    pub async fn ping(&self, cancel: &CancellationToken) -> Result<f64, CallError> {
        let _active = self.begin_call();
        let peer = self.awake_peer(cancel).await?;
        let timeout = self.request_timeout();
        let request = ClientRequest::PingRequest(rmcp::model::PingRequest::default());
        let started = std::time::Instant::now();
        tokio::select! {
            answer = tokio::time::timeout(timeout, peer.send_request(request)) => match answer {
                Ok(Ok(_)) => Ok(started.elapsed().as_secs_f64() * 1000.0),
                Ok(Err(error)) => Err(CallError::from_service(error)),
                Err(_) => Err(CallError::Timeout(timeout)),
            },
            _ = cancel.cancelled() => Err(CallError::Aborted),
        }
    }

    fn ready_live(&self) -> Result<Live, CallError> {
        let state = self.state.borrow();
        match (Live::of(&state), state.status) {
            (Some(live), Status::Ready) => Ok(live),
            (_, status) => Err(CallError::NotReady {
                server: self.config.name.clone(),
                status,
            }),
        }
    }

    /// Sends `tools/call` and waits for the answer, the deadline or the caller's cancellation,
    /// whichever comes first. On a deadline or a cancellation the server is sent
    /// `notifications/cancelled` for the request.
    /// The `outputSchema` of the server's tool `tool` in its current listing.
    /// Which builtin tool `tool` is, if it is one.
    pub fn builtin(&self, tool: &str) -> Option<Builtin> {
        self.state
            .borrow()
            .tools
            .iter()
            .find(|t| t.mcp_name == tool)
            .and_then(|t| t.builtin)
    }

    /// What answers this server's requests of its client (and `input_required` rounds).
    pub fn client_requests(&self) -> &crate::session::ClientRequests {
        &self.options.client_requests
    }

    /// Whether the server runs `tool` only as a task.
    fn runs_as_task(&self, tool: &str) -> bool {
        self.state
            .borrow()
            .tools
            .iter()
            .any(|t| t.mcp_name == tool && t.task)
    }

    /// `tool`'s schema after the hygiene pass, when the pass changed it.
    pub fn hygienic_schema(
        &self,
        tool: &str,
    ) -> Option<Arc<crate::security::hygiene::schema::HygienicSchema>> {
        self.listed(tool, |t| t.hygienic.clone())
    }

    pub fn output_schema(&self, tool: &str) -> Option<Arc<serde_json::Value>> {
        self.listed(tool, |t| t.output_schema.clone())
    }

    /// `read` of the listed tool named `tool` (the server's own name), if there is one.
    fn listed<T>(&self, tool: &str, read: impl FnOnce(&ToolEntry) -> Option<T>) -> Option<T> {
        self.state
            .borrow()
            .tools
            .iter()
            .find(|t| t.mcp_name == tool)
            .and_then(read)
    }

    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        cancel: &CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> Result<CallToolResult, CallError> {
        if cancel.is_cancelled() {
            return Err(CallError::Aborted);
        }
        if !self.config.tool_filter.allows(tool) {
            return Err(CallError::Refused(format!(
                "tool '{tool}' is excluded by servers.{}.toolFilter",
                self.config.name
            )));
        }
        let _active = self.begin_call();
        self.arm_timer_anchor();
        let Live { peer, lane } = self.awake(cancel).await?;
        if self.runs_as_task(tool) {
            return self
                .call_as_task(&peer, tool, arguments, cancel, progress)
                .await;
        }
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        let started = tokio::time::Instant::now();
        let timeout = Duration::from_millis(self.config.tool_timeout_ms);
        // With resetTimeoutOnProgress the call watches its own progress (passing it on to the
        // caller's sink) to move its deadline, never past maxToolTimeout from the start.
        let reset = self.config.reset_timeout_on_progress;
        let cap = Duration::from_millis(self.config.max_tool_timeout_ms).max(timeout);
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        // One request per `input_required` round (2026-07-28); the deadline spans them all.
        let mut rounds = 0;
        let outcome = loop {
            // Progress is routed from before the request is written.
            let (watch_tx, mut watched) = if reset {
                let (tx, rx) = mpsc::unbounded_channel();
                (Some(tx), Some(rx))
            } else {
                (None, None)
            };
            let route = |token: &rmcp::model::ProgressToken| match (&watch_tx, &progress) {
                (Some(watch), _) => self.progress.register(token.clone(), watch.clone()),
                (None, Some(sink)) => self.progress.register(token.clone(), sink.clone()),
                (None, None) => {}
            };
            let forward = if reset { progress.clone() } else { None };
            let (id, token, mut waiting) = match &lane {
                Some(lane) => {
                    let id = lane.reserve();
                    let token = call_lane::token(id);
                    route(&token);
                    match lane.call(id, &mut params) {
                        Ok(call) => (
                            rmcp::model::RequestId::Number(id as i64),
                            token,
                            Waiting::Lane(call),
                        ),
                        Err(_) => {
                            self.progress.unregister(&token);
                            break Err(CallError::Closed);
                        }
                    }
                }
                None => {
                    let request =
                        ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
                    let handle = peer
                        .send_cancellable_request(request, PeerRequestOptions::no_options())
                        .await
                        .map_err(CallError::from_service)?;
                    route(&handle.progress_token);
                    (handle.id, handle.progress_token, Waiting::Rmcp(handle.rx))
                }
            };
            let answer = loop {
                tokio::select! {
                    answer = waiting.answer() => break answer,
                    Some(update) = async { watched.as_mut()?.recv().await }, if reset => {
                        if let Some(sink) = &forward {
                            let _ = sink.send(update);
                        }
                        let next = (tokio::time::Instant::now() + timeout).min(started + cap);
                        deadline.as_mut().reset(next);
                    }
                    _ = &mut deadline => {
                        break Err(CallError::Timeout(started.elapsed().max(timeout).min(cap)));
                    }
                    _ = cancel.cancelled() => break Err(CallError::Aborted),
                }
            };
            drop(waiting);
            self.progress.unregister(&token);
            if let Err(CallError::Timeout(_) | CallError::Aborted) = &answer {
                self.send_cancelled(&peer, id, &answer);
            }
            let asked = match answer {
                Ok(Ok(result)) => break Ok(result),
                Ok(Err(asked)) => asked,
                Err(error) => break Err(error),
            };
            rounds += 1;
            if rounds > MAX_INPUT_ROUNDS {
                break Err(crate::session::too_many_rounds());
            }
            let remaining = deadline
                .deadline()
                .saturating_duration_since(tokio::time::Instant::now());
            let answered = tokio::select! {
                answered = crate::session::next_input_round(
                    &self.options.client_requests,
                    &self.config.name,
                    asked,
                    remaining,
                    cancel,
                ) => answered,
                _ = &mut deadline => break Err(CallError::Timeout(started.elapsed().max(timeout).min(cap))),
                _ = cancel.cancelled() => break Err(CallError::Aborted),
            };
            match answered {
                Ok((responses, state)) => {
                    params.input_responses = responses;
                    params.request_state = state;
                }
                Err(error) => break Err(error),
            }
        };
        // A connection that closed because the server broke its stream says how.
        match outcome {
            Err(CallError::Closed) => match self.fault.get() {
                Some(why) => Err(CallError::Broken(why)),
                None => Err(CallError::Closed),
            },
            other => other,
        }
    }

    /// Tells the server a request of ours was given up (a deadline or the caller's abort),
    /// without holding the caller up.
    fn send_cancelled<T>(
        &self,
        peer: &Peer<RoleClient>,
        id: rmcp::model::RequestId,
        why: &Result<T, CallError>,
    ) {
        let reason = match why {
            Err(CallError::Timeout(_)) => "Request timed out",
            _ => "Aborted by the caller",
        };
        let peer = peer.clone();
        tokio::spawn(async move {
            let _ = peer
                .notify_cancelled(CancelledNotificationParam::new(
                    Some(id),
                    Some(reason.to_owned()),
                ))
                .await;
        });
    }
}
