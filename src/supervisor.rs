//! One server's life: resolve its secrets, connect, list its tools, watch it, restart it with
//! backoff when it dies, and take it (and its whole process tree) down on shutdown.
//!
//! The supervisor task owns the connection. Everyone else reads a [`Snapshot`] through a `watch`
//! channel: status, the bridged tool list and the peer to send requests to.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, JsonObject, ServerResult,
};
use rmcp::service::{ClientCacheConfig, Peer, PeerRequestOptions, RoleClient, RunningService};
use secrecy::SecretString;
use tokio::sync::{Notify, mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use crate::bridge;
use crate::client_handler::{Progress, ProgressRouter, ProgressTap, SessionHandler};
use crate::config::{ServerConfig, TransportKind};
use crate::error::CallError;
use crate::log::Log;
use crate::secrets::SecretResolver;
use crate::transport::remote::{self, RemoteSpec};
use crate::transport::stdio::{self, ServerProcess, SpawnSpec};

/// A server's state, as the contract names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Disconnected,
    Connecting,
    Ready,
    Error,
    Closed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Disconnected => "disconnected",
            Status::Connecting => "connecting",
            Status::Ready => "ready",
            Status::Error => "error",
            Status::Closed => "closed",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A server tool as the agent sees it, built once per discovery.
#[derive(Debug, Clone)]
pub struct ToolEntry {
    /// The server's own name for the tool (what `tools/call` is sent with). The agent-facing
    /// name is assigned by the manager across all servers (`bridge::assign_tool_names`).
    pub mcp_name: String,
    pub label: String,
    pub description: String,
    /// The converted parameter schema (compat mode), serialised once per discovery: JS gets a
    /// fresh object per `getAgentTools()` from its own `JSON.parse`, far cheaper than building
    /// it value by value through napi.
    pub parameters_json: Arc<str>,
}

#[derive(Clone)]
pub struct Snapshot {
    pub status: Status,
    pub tools: Arc<Vec<ToolEntry>>,
    pub peer: Option<Peer<RoleClient>>,
    /// The transport of the last successful connection: `stdio`, `streamable-http` or `sse`.
    pub transport: Option<&'static str>,
}

/// Settings shared by every server of a manager.
#[derive(Clone, Debug)]
pub struct RuntimeOptions {
    /// Each of the two waits of a shutdown (after closing stdin, after SIGTERM).
    pub shutdown_grace: Duration,
    /// Largest JSON-RPC message accepted from a stdio server; a longer line is dropped.
    pub max_message_bytes: usize,
    /// A server that stayed ready this long gets its restart budget back.
    pub restart_budget_reset: Duration,
    /// Legacy SSE: the longest silence on the event stream before the session ends (a
    /// keep-alive ping is sent half-way through). Zero: unbounded.
    pub sse_idle_timeout: Duration,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        Self {
            shutdown_grace: Duration::from_secs(2),
            max_message_bytes: 64 * 1024 * 1024,
            restart_budget_reset: Duration::from_secs(60),
            sse_idle_timeout: Duration::from_secs(60),
        }
    }
}

/// One configured server: its config and its published state.
pub struct Server {
    pub config: ServerConfig,
    state: watch::Sender<Snapshot>,
    progress: Arc<ProgressRouter>,
    log: Log,
    options: Arc<RuntimeOptions>,
}

impl Server {
    pub fn new(config: ServerConfig, log: Log, options: Arc<RuntimeOptions>) -> Arc<Self> {
        let (state, _) = watch::channel(Snapshot {
            status: Status::Disconnected,
            tools: Arc::new(Vec::new()),
            peer: None,
            transport: None,
        });
        Arc::new(Self {
            config,
            state,
            progress: Arc::new(ProgressRouter::default()),
            log,
            options,
        })
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    pub fn snapshot(&self) -> Snapshot {
        self.state.borrow().clone()
    }

    pub fn status(&self) -> Status {
        self.state.borrow().status
    }

    pub fn subscribe(&self) -> watch::Receiver<Snapshot> {
        self.state.subscribe()
    }

    fn set_status(&self, status: Status) {
        self.state.send_modify(|s| {
            s.status = status;
            if status != Status::Ready {
                s.peer = None;
            }
        });
    }

    fn set_ready(&self, peer: Peer<RoleClient>, tools: Vec<ToolEntry>, transport: &'static str) {
        self.state.send_modify(|s| {
            s.status = Status::Ready;
            s.peer = Some(peer);
            s.tools = Arc::new(tools);
            s.transport = Some(transport);
        });
    }

    fn set_tools(&self, tools: Vec<ToolEntry>) {
        self.state.send_modify(|s| s.tools = Arc::new(tools));
    }

    /// The peer to talk to, or the contract's not-ready error.
    pub fn ready_peer(&self) -> Result<Peer<RoleClient>, CallError> {
        let state = self.state.borrow();
        match (&state.peer, state.status) {
            (Some(peer), Status::Ready) => Ok(peer.clone()),
            (_, status) => Err(CallError::NotReady {
                server: self.config.name.clone(),
                status,
            }),
        }
    }

    /// Sends `tools/call` and waits for the answer, the deadline or the caller's cancellation,
    /// whichever comes first. On a deadline or a cancellation the server is sent
    /// `notifications/cancelled` for the request.
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
        let peer = self.ready_peer()?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(CallError::from_service)?;
        let token = handle.progress_token.clone();
        if let Some(sink) = progress {
            self.progress.register(token.clone(), sink);
        }
        let id = handle.id.clone();
        let rx = handle.rx;
        let timeout = Duration::from_millis(self.config.tool_timeout_ms);
        let outcome = tokio::select! {
            answer = rx => match answer {
                Ok(Ok(ServerResult::CallToolResult(result))) => Ok(result),
                Ok(Ok(_)) => Err(CallError::Protocol("unexpected answer to tools/call".to_owned())),
                Ok(Err(error)) => Err(CallError::from_service(error)),
                Err(_) => Err(CallError::Closed),
            },
            _ = tokio::time::sleep(timeout) => Err(CallError::Timeout(timeout)),
            _ = cancel.cancelled() => Err(CallError::Aborted),
        };
        self.progress.unregister(&token);
        if let Err(CallError::Timeout(_) | CallError::Aborted) = &outcome {
            let reason = match &outcome {
                Err(CallError::Timeout(_)) => "Request timed out",
                _ => "Aborted by the caller",
            };
            let peer = peer.clone();
            // Do not hold the caller up for the notification.
            tokio::spawn(async move {
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(
                        Some(id),
                        Some(reason.to_owned()),
                    ))
                    .await;
            });
        }
        outcome
    }
}

/// Why a connected session ended.
enum SessionEnd {
    Shutdown,
    Exited(String),
}

/// A connected session: an rmcp service, and for a local server its process.
struct Session {
    peer: Peer<RoleClient>,
    cancel: rmcp::service::RunningServiceCancellationToken,
    /// The rmcp service task; `None` once it has ended.
    done: Option<ServiceDone>,
    process: Option<ServerProcess>,
}

type ServiceDone = std::pin::Pin<
    Box<dyn Future<Output = Result<rmcp::service::QuitReason, tokio::task::JoinError>> + Send>,
>;

impl Session {
    /// Resolves when the rmcp service ends (the transport closed); pending forever after that.
    async fn service_ended(done: &mut Option<ServiceDone>) {
        match done {
            Some(fut) => {
                let _ = fut.await;
                *done = None;
            }
            None => std::future::pending().await,
        }
    }

    fn new(
        running: RunningService<RoleClient, SessionHandler>,
        process: Option<ServerProcess>,
    ) -> Self {
        Self {
            peer: running.peer().clone(),
            cancel: running.cancellation_token(),
            done: Some(Box::pin(running.waiting())),
            process,
        }
    }

    /// Resolves when the local server process exits (never for a remote server).
    async fn process_exited(process: &mut Option<ServerProcess>) -> String {
        match process {
            Some(process) => process.exited().await,
            None => std::future::pending().await,
        }
    }

    /// Closes the session (a local server's stdin closes with it) and stops the process tree.
    /// Returns the server's last stderr lines (none for a remote server).
    async fn close(self, grace: Duration) -> Vec<String> {
        self.cancel.cancel();
        if let Some(done) = self.done {
            let _ = tokio::time::timeout(grace, done).await;
        }
        match self.process {
            Some(process) => process.terminate(grace).await.lines(),
            None => Vec::new(),
        }
    }
}

/// Runs one server until shutdown. `first_attempt` fires once the first connection attempt has
/// ended either way, which is what `start()` waits for.
pub async fn supervise(
    server: Arc<Server>,
    resolver: Arc<SecretResolver>,
    shutdown: CancellationToken,
    first_attempt: oneshot::Sender<()>,
) {
    let mut first_attempt = Some(first_attempt);
    let mut signal_first = || {
        if let Some(tx) = first_attempt.take() {
            let _ = tx.send(());
        }
    };
    let name = server.config.name.clone();
    let log = server.log.clone();
    let mut restarts: u32 = 0;
    let tools_changed = Arc::new(Notify::new());

    'life: loop {
        if shutdown.is_cancelled() {
            break;
        }
        server.set_status(Status::Connecting);

        let secrets = match resolve_secrets(&server, &resolver).await {
            Ok(secrets) => secrets,
            Err(message) => {
                // A secret problem is a configuration problem: no restart loop for it.
                log.error(&format!("MCP server '{name}' failed to start: {message}"));
                server.set_status(Status::Disconnected);
                signal_first();
                shutdown.cancelled().await;
                break 'life;
            }
        };

        let attempt = tokio::select! {
            attempt = connect(&server, &secrets, tools_changed.clone()) => attempt,
            _ = shutdown.cancelled() => break 'life,
        };
        let failure = match attempt {
            Ok((mut session, tools, transport)) => {
                let count = tools.len();
                server.set_ready(session.peer.clone(), tools, transport);
                log.info(&format!("MCP server '{name}' connected ({count} tools)"));
                signal_first();
                let ready_at = Instant::now();
                let end = watch_session(&server, &mut session, &shutdown, &tools_changed).await;
                server.set_status(match end {
                    SessionEnd::Shutdown => Status::Closed,
                    SessionEnd::Exited(_) => Status::Error,
                });
                let grace = server.options.shutdown_grace;
                match end {
                    SessionEnd::Shutdown => {
                        session.close(grace).await;
                        break 'life;
                    }
                    SessionEnd::Exited(why) => {
                        log.warn(&format!("MCP server '{name}' exited unexpectedly: {why}"));
                        session.close(grace).await;
                        if ready_at.elapsed() >= server.options.restart_budget_reset {
                            restarts = 0;
                        }
                    }
                }
                None
            }
            Err(message) => Some(message),
        };
        // The status is `error` before `start()` is released, so the caller sees the outcome.
        server.set_status(Status::Error);
        if let Some(message) = failure {
            log.error(&format!("MCP server '{name}' failed to start: {message}"));
            signal_first();
        }

        let max = server.config.max_restarts;
        if !server.config.restart_on_crash || restarts >= max {
            shutdown.cancelled().await;
            break 'life;
        }
        let delay = restart_delay(restarts);
        restarts += 1;
        log.info(&format!(
            "MCP server '{name}' restarting in {} ms (attempt {restarts}/{max})",
            delay.as_millis()
        ));
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = shutdown.cancelled() => break 'life,
        }
    }
    signal_first();
    server.set_status(Status::Closed);
    log.info(&format!("MCP server '{name}' stopped"));
}

/// `min(1000 * 2^n, 30000)` ms before restart number `n` (counted from 0).
pub fn restart_delay(restarts_so_far: u32) -> Duration {
    let ms = 1000u64.saturating_mul(1u64 << restarts_so_far.min(15));
    Duration::from_millis(ms.min(30_000))
}

/// A server's `env` and `headers` with every reference resolved, for one start.
struct ResolvedSecrets {
    env: Vec<(String, SecretString)>,
    headers: Vec<(String, SecretString)>,
}

async fn resolve_secrets(
    server: &Server,
    resolver: &SecretResolver,
) -> Result<ResolvedSecrets, String> {
    let config = &server.config;
    let env = resolve_entries(server, resolver, &config.env).await?;
    let headers = if config.transport == TransportKind::Stdio {
        Vec::new()
    } else {
        resolve_entries(server, resolver, &config.headers).await?
    };
    Ok(ResolvedSecrets { env, headers })
}

async fn resolve_entries(
    server: &Server,
    resolver: &SecretResolver,
    entries: &[(String, String)],
) -> Result<Vec<(String, SecretString)>, String> {
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let resolved = resolver
        .resolve_all(entries)
        .await
        .map_err(|e| e.to_string())?;
    // Mask what came from a secret backend, and plaintext values under credential-like keys
    // too: a server that echoes its token back must not hand it to the model.
    for ((key, raw), (_, value)) in entries.iter().zip(&resolved) {
        if crate::secrets::is_secret_uri(raw) || crate::secrets::looks_like_credential_key(key) {
            server.log.redactor().register(value);
        }
    }
    Ok(resolved)
}

/// Connects (spawning a local server), initialises and lists tools, all within the server's
/// connect timeout.
async fn connect(
    server: &Server,
    secrets: &ResolvedSecrets,
    tools_changed: Arc<Notify>,
) -> Result<(Session, Vec<ToolEntry>, &'static str), String> {
    let config = &server.config;
    let handler = SessionHandler::new(&config.name, tools_changed, server.log.clone());
    let connect_timeout = Duration::from_millis(config.timeout_ms);
    let grace = server.options.shutdown_grace;
    let (session, transport) = match config.transport {
        TransportKind::Stdio => (connect_stdio(server, &secrets.env, handler).await?, "stdio"),
        TransportKind::Http | TransportKind::Sse => {
            let url = config
                .url
                .as_deref()
                .ok_or_else(|| format!("{} transport requires 'url'", config.transport_name))?;
            let spec = RemoteSpec {
                server: &config.name,
                url,
                transport: config.transport,
                headers: &secrets.headers,
                ca_file: config.ca_file.as_deref(),
                sse_fallback: config.sse_fallback,
                connect_timeout,
                max_message_bytes: server.options.max_message_bytes,
                idle_timeout: Some(server.options.sse_idle_timeout).filter(|d| !d.is_zero()),
                log: &server.log,
            };
            let (running, used) = remote::connect(&spec, handler, server.progress.clone()).await?;
            (Session::new(running, None), used)
        }
    };
    // Tool lists must be fresh after every restart; the cache would serve stale ones.
    session
        .peer
        .set_response_cache_config(ClientCacheConfig::disabled())
        .await;
    let listed = tokio::time::timeout(connect_timeout, list_tools(server, &session.peer)).await;
    match listed {
        Ok(Ok(tools)) => Ok((session, tools, transport)),
        Ok(Err(error)) => {
            let lines = session.close(grace).await;
            Err(with_stderr(format!("tools/list failed: {error}"), &lines))
        }
        Err(_) => {
            let lines = session.close(grace).await;
            let cause = format!(
                "no answer to tools/list within {} ms",
                connect_timeout.as_millis()
            );
            Err(with_stderr(cause, &lines))
        }
    }
}

/// Spawns the server and initialises the session over its stdio.
async fn connect_stdio(
    server: &Server,
    env: &[(String, SecretString)],
    handler: SessionHandler,
) -> Result<Session, String> {
    let config = &server.config;
    let command = config
        .command
        .as_deref()
        .ok_or_else(|| "stdio transport requires 'command'".to_owned())?;
    let spec = SpawnSpec {
        server: &config.name,
        command,
        args: &config.args,
        env,
        cwd: config.cwd.as_deref(),
    };
    let (mut process, transport) =
        stdio::spawn(&spec, server.options.max_message_bytes, &server.log)
            .map_err(|e| e.to_string())?;
    let transport = ProgressTap::new(transport, server.progress.clone());
    let connect_timeout = Duration::from_millis(config.timeout_ms);
    let cause = match tokio::time::timeout(connect_timeout, handler.serve(transport)).await {
        Ok(Ok(running)) => return Ok(Session::new(running, Some(process))),
        Ok(Err(error)) => match process.exit_within(Duration::from_millis(200)).await {
            Some(how) => format!("server process {how} during initialization"),
            None => format!("initialize failed: {error}"),
        },
        Err(_) => format!(
            "no answer to initialize within {} ms",
            connect_timeout.as_millis()
        ),
    };
    let tail = process.terminate(server.options.shutdown_grace).await;
    Err(with_stderr(cause, &tail.lines()))
}

fn with_stderr(cause: String, lines: &[String]) -> String {
    if lines.is_empty() {
        return cause;
    }
    format!("{cause}\nLast stderr lines:\n{}", lines.join("\n"))
}

/// Every page of `tools/list`, minus what the server's `toolFilter` leaves out, bridged into
/// agent tools (schema, label, description; the name is the manager's to assign).
async fn list_tools(server: &Server, peer: &Peer<RoleClient>) -> Result<Vec<ToolEntry>, CallError> {
    let tools = peer
        .list_all_tools()
        .await
        .map_err(CallError::from_service)?;
    let config = &server.config;
    Ok(tools
        .iter()
        .filter(|tool| config.tool_filter.allows(&tool.name))
        .map(|tool| {
            let schema = serde_json::Value::Object((*tool.input_schema).clone());
            let parameters = bridge::convert_schema(Some(&schema));
            ToolEntry {
                mcp_name: tool.name.to_string(),
                label: bridge::tool_label(&config.name, &tool.name),
                description: bridge::tool_description(&config.name, tool.description.as_deref()),
                parameters_json: Arc::from(parameters.to_string()),
            }
        })
        .collect())
}

/// Waits for the session to end; re-lists tools when the server says they changed.
async fn watch_session(
    server: &Server,
    session: &mut Session,
    shutdown: &CancellationToken,
    tools_changed: &Notify,
) -> SessionEnd {
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return SessionEnd::Shutdown,
            how = Session::process_exited(&mut session.process) => {
                return SessionEnd::Exited(format!("process {how}"));
            }
            _ = Session::service_ended(&mut session.done) => {
                // A local server is usually exiting; say how, if it does so promptly.
                let how = match session.process.as_mut() {
                    Some(process) => process.exit_within(Duration::from_millis(250)).await,
                    None => None,
                };
                return SessionEnd::Exited(match (how, &session.process) {
                    (Some(how), _) => format!("process {how}"),
                    (None, Some(_)) => "the server closed its output".to_owned(),
                    (None, None) => "the connection closed".to_owned(),
                });
            }
            _ = tools_changed.notified() => {
                let timeout = Duration::from_millis(server.config.timeout_ms);
                match tokio::time::timeout(timeout, list_tools(server, &session.peer)).await {
                    Ok(Ok(tools)) => {
                        server.log.info(&format!(
                            "MCP server '{}' tools changed ({} tools)",
                            server.config.name,
                            tools.len()
                        ));
                        server.set_tools(tools);
                    }
                    Ok(Err(e)) => server.log.warn(&format!(
                        "MCP server '{}' tools/list after a change failed: {e}",
                        server.config.name
                    )),
                    Err(_) => server.log.warn(&format!(
                        "MCP server '{}' tools/list after a change timed out",
                        server.config.name
                    )),
                }
            }
        }
    }
}

impl Server {
    /// For a server whose supervisor never ran (shutdown before start).
    pub(crate) fn mark_closed(&self) {
        self.set_status(Status::Closed);
    }
}
