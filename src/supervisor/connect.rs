//! Connecting one server: resolve its secrets for this start, open the transport its config
//! names, run the session's handshake over it, and list its tools, all bounded by the server's
//! connect timeout and abandoned (the process tree stopped) when the manager shuts down.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::PaginatedRequestParams;
use rmcp::service::{Peer, RoleClient};
use secrecy::SecretString;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::metrics::StartupTimings;
use super::server::{Builtin, Server, ToolEntry};
use crate::bridge;
use crate::config::ProtocolChoice;
use crate::config::{SchemaMode, TransportKind};
use crate::error::{CallError, ConnectError};
use crate::secrets::{EnvSource, SecretResolver};
use crate::security::hygiene;
use crate::security::pinning::Pin;
use crate::session::{
    CatalogCallback, CatalogChange, InitFailure, Lifecycle, ListChanges, MODERN_REVISION,
    PROTOCOL_VERSION, Session, SessionHandler, SessionSetup,
};
use crate::transport::http::{self, HttpSpec, InitialAnswer};
use crate::transport::net::{self, Target};
use crate::transport::sse::{self, SseOptions};
use crate::transport::stdio::{self, SpawnSpec};
use crate::transport::task_hints::TaskSupport;
use rmcp::model::ProtocolVersion;

/// A live session with its first tool list.
pub(super) struct Connected {
    pub session: Session,
    pub tools: Vec<ToolEntry>,
    /// `stdio`, `streamable-http` or `sse`.
    pub transport: &'static str,
    /// How long each step took.
    pub startup: StartupTimings,
}

/// When an opening's transport was up (the process spawned, the HTTP transport set up, the
/// SSE stream open), marked by the step that got it there; the rest of the opening is the
/// handshake.
#[derive(Default)]
struct TransportUp(std::sync::Mutex<Option<Instant>>);

impl TransportUp {
    fn mark(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
    }

    /// `(connect, handshake)` in ms of an opening that began at `begun` and ends now.
    fn steps(&self, begun: Instant) -> (f64, f64) {
        let up = self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or(begun);
        (millis(up - begun), millis(up.elapsed()))
    }
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// What one connection attempt reads from outside: the host environment at this start, the
/// resolver, the manager's shutdown.
pub(super) struct Attempt<'a> {
    pub env: EnvSource,
    pub resolver: &'a Arc<SecretResolver>,
    pub shutdown: &'a CancellationToken,
    pub tools_changed: Arc<Notify>,
}

pub(super) async fn connect(
    server: &Server,
    attempt: Attempt<'_>,
) -> Result<Connected, ConnectError> {
    let config = &server.config;
    // A reason recorded for the last session says nothing about this one, nor do its resources.
    server.fault.clear();
    server.resource_cache.clear();
    // Resolution reads the same environment the server will inherit.
    let resolver = attempt.resolver.for_env(attempt.env.clone());
    let secrets = tokio::select! {
        secrets = resolve_secrets(server, &resolver) => secrets?,
        _ = attempt.shutdown.cancelled() => return Err(ConnectError::Shutdown),
    };
    let connect_timeout = Duration::from_millis(config.timeout_ms);
    let deadline = Instant::now() + connect_timeout;
    let setup = SessionSetup {
        handler: SessionHandler::new(
            &config.name,
            attempt.tools_changed.clone(),
            server.log.clone(),
        )
        .on_catalog_change(catalog_changed(server))
        .with_requests(
            server.options.client_requests.clone(),
            Duration::from_millis(config.tool_timeout_ms),
        ),
        progress: server.progress.clone(),
        lost: None,
        deadline,
        lifecycle: Lifecycle::Initialize(PROTOCOL_VERSION),
    };
    let (session, transport, (connect_ms, initialize_ms)) =
        open_session(server, &attempt, &secrets, setup).await?;
    // A 2026-07-28 session hears of list changes only on a stream it opens; the stream ends
    // with the session.
    let listening = CancellationToken::new();
    crate::session::follow_list_changes(
        config.name.clone(),
        session.peer().clone(),
        ListChanges {
            tools: attempt.tools_changed.clone(),
            catalog: Some(catalog_changed(server)),
        },
        server.log.clone(),
        listening.clone(),
    );
    let session = session.closing(listening.drop_guard());
    let grace = server.options.shutdown_grace;
    let listing = Instant::now();
    let listed = tokio::select! {
        listed = tokio::time::timeout(connect_timeout, list_tools(server, session.peer())) => listed,
        _ = attempt.shutdown.cancelled() => {
            session.close(grace).await;
            return Err(ConnectError::Shutdown);
        }
    };
    match listed {
        Ok(Ok(tools)) => {
            let startup = StartupTimings {
                connect_ms,
                initialize_ms,
                list_ms: millis(listing.elapsed()),
            };
            set_log_level(server, session.peer(), connect_timeout).await;
            Ok(Connected {
                session,
                tools,
                transport,
                startup,
            })
        }
        Ok(Err(error)) => {
            let stderr = session.close(grace).await;
            Err(ConnectError::ToolsList {
                cause: format!("tools/list failed: {error}"),
                stderr,
            })
        }
        Err(_) => {
            let stderr = session.close(grace).await;
            Err(ConnectError::ToolsList {
                cause: format!(
                    "no answer to tools/list within {} ms",
                    connect_timeout.as_millis()
                ),
                stderr,
            })
        }
    }
}

/// What a session does with the server's resource and prompt notifications: a changed
/// resource list empties the resource context's cache; every change goes to the manager's
/// followers (a gateway re-serving them).
fn catalog_changed(server: &Server) -> CatalogCallback {
    let cache = server.resource_cache.clone();
    let followers = server.options.catalog_changes.clone();
    Arc::new(move |change| {
        if matches!(change, CatalogChange::Resources { .. }) {
            cache.clear();
        }
        followers.report(|| change);
    })
}

/// Opens a session the way the server's `protocol` says. `auto` over HTTP probes with
/// `server/discover` and falls back to `initialize` on any refusal; `auto` over stdio opens
/// with `initialize` (what every server answers, and what an rmcp-based server needs first)
/// and restarts the process into `server/discover` only when the server refuses the handshake
/// naming a newer revision. Either way the way that worked is how the next start opens.
/// Returns the session, its transport, and how long the opening that worked took to get its
/// transport up and to run its handshake (ms).
async fn open_session(
    server: &Server,
    attempt: &Attempt<'_>,
    secrets: &ResolvedSecrets,
    setup: SessionSetup,
) -> Result<(Session, &'static str, (f64, f64)), ConnectError> {
    let config = &server.config;
    let remembered = server
        .opened_with
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let stdio = config.transport == TransportKind::Stdio;
    let (first, auto) = match config.protocol {
        ProtocolChoice::Fixed(MODERN_REVISION) => (Lifecycle::Discover, false),
        ProtocolChoice::Fixed(revision) => (
            Lifecycle::Initialize(
                ProtocolVersion::KNOWN_VERSIONS
                    .iter()
                    .find(|v| v.as_str() == revision)
                    .cloned()
                    .unwrap_or(PROTOCOL_VERSION),
            ),
            false,
        ),
        // Legacy SSE has no `server/discover`.
        ProtocolChoice::Auto if config.transport == TransportKind::Sse => {
            (setup.lifecycle.clone(), false)
        }
        ProtocolChoice::Auto => match remembered {
            Some(lifecycle) => (lifecycle, true),
            None if stdio => (setup.lifecycle.clone(), true),
            None => (Lifecycle::Discover, true),
        },
    };
    let inherit = match &attempt.env {
        EnvSource::Fixed(vars) => Some(&**vars),
        EnvSource::Process => None,
    };
    let open = |lifecycle: Lifecycle, probe: bool| {
        let mut setup = SessionSetup {
            lifecycle,
            ..setup.clone()
        };
        if probe && server.oauth.is_none() {
            // A legacy server answers a probe at once; one that does not answer is not waited
            // for long. (Not with OAuth: a sign-in may happen inside the probe, and a person
            // takes longer than that.)
            let remaining = setup.deadline.saturating_duration_since(Instant::now());
            setup.deadline = Instant::now() + (remaining / 2).min(DISCOVER_PROBE_LIMIT);
        }
        async move {
            let begun = Instant::now();
            let up = TransportUp::default();
            let opened = if stdio {
                connect_stdio(server, inherit, &secrets.env, setup, attempt.shutdown, &up)
                    .await
                    .map(|s| (s, "stdio"))
            } else {
                tokio::select! {
                    remote = connect_remote(server, &secrets.headers, setup, &up) => remote,
                    _ = attempt.shutdown.cancelled() => Err(Opening::from(ConnectError::Shutdown)),
                }
            };
            opened.map(|(session, transport)| (session, transport, up.steps(begun)))
        }
    };
    let probing = auto && first == Lifecycle::Discover && !stdio;
    let outcome = match open(first.clone(), probing).await {
        Ok(opened) => Ok(opened),
        Err(failure)
            if !auto || failure.signed_out || matches!(failure.error, ConnectError::Shutdown) =>
        {
            Err(failure)
        }
        // A session opened with `server/discover` that was refused (or, over HTTP, failed in
        // any way): the server speaks an older revision.
        Err(failure) if first == Lifecycle::Discover => {
            if stdio && failure.refused.is_none() {
                Err(failure)
            } else {
                log_fallback(server, &failure, "the initialize handshake");
                open(setup.lifecycle.clone(), false).await
            }
        }
        // `initialize` refused by a server that names the newer revision as one it speaks.
        Err(failure)
            if failure
                .refused
                .as_ref()
                .is_some_and(|supported| supported.iter().any(|v| v == MODERN_REVISION)) =>
        {
            log_fallback(server, &failure, "server/discover");
            open(Lifecycle::Discover, false).await
        }
        Err(failure) => Err(failure),
    };
    let (session, transport, steps) = outcome.map_err(|f| f.error)?;
    if auto {
        let modern = session
            .peer()
            .peer_info()
            .is_some_and(|info| !info.protocol_version.has_initialize());
        let lifecycle = if modern {
            Lifecycle::Discover
        } else {
            setup.lifecycle.clone()
        };
        *server.opened_with.lock().unwrap_or_else(|p| p.into_inner()) = Some(lifecycle);
    }
    Ok((session, transport, steps))
}

/// The longest a `protocol: 'auto'` probe waits for an answer to `server/discover`.
const DISCOVER_PROBE_LIMIT: Duration = Duration::from_secs(3);

fn log_fallback(server: &Server, failure: &Opening, next: &str) {
    server.log.debug(&format!(
        "MCP server '{}': {}; trying {next}",
        server.config.name, failure.error
    ));
}

/// A failed opening, and whether it was the server refusing the revision asked for (with the
/// revisions it named).
pub(super) struct Opening {
    error: ConnectError,
    refused: Option<Vec<String>>,
    /// OAuth could not get a token the server takes: another revision would not change that
    /// (and would ask the user again).
    signed_out: bool,
}

impl From<ConnectError> for Opening {
    fn from(error: ConnectError) -> Self {
        Self {
            error,
            refused: None,
            signed_out: false,
        }
    }
}

/// A server's `env` and `headers` with every reference resolved, for one start.
struct ResolvedSecrets {
    env: Vec<(String, SecretString)>,
    headers: Vec<(String, SecretString)>,
}

async fn resolve_secrets(
    server: &Server,
    resolver: &SecretResolver,
) -> Result<ResolvedSecrets, ConnectError> {
    let config = &server.config;
    let env = resolve_entries(server, resolver, &config.env).await?;
    let headers = if config.transport == TransportKind::Stdio {
        Vec::new()
    } else {
        resolve_entries(server, resolver, &config.headers).await?
    };
    if let (Some(oauth), Some(auth)) = (&server.oauth, &config.auth) {
        oauth.set_secrets(oauth_secrets(server, resolver, auth).await?);
    }
    Ok(ResolvedSecrets { env, headers })
}

/// The OAuth client secret and private key for this start, registered with the redactor.
async fn oauth_secrets(
    server: &Server,
    resolver: &SecretResolver,
    auth: &crate::config::OAuthConfig,
) -> Result<crate::oauth::ClientSecrets, ConnectError> {
    let mut secrets = crate::oauth::ClientSecrets::default();
    // Every secret of `auth`, resolved in one batch.
    let idp = auth.idp.as_ref();
    let entries: Vec<(String, String)> = [
        ("auth.clientSecret", auth.client_secret.as_ref()),
        (
            "auth.idp.clientSecret",
            idp.and_then(|i| i.client_secret.as_ref()),
        ),
        ("auth.idp.idToken", idp.map(|i| &i.id_token)),
    ]
    .into_iter()
    .filter_map(|(key, raw)| Some((key.to_owned(), raw?.clone())))
    .collect();
    if !entries.is_empty() {
        for (key, value) in resolver.resolve_all(&entries).await? {
            server.log.redactor().register(&value);
            let slot = match key.as_str() {
                "auth.clientSecret" => &mut secrets.client_secret,
                "auth.idp.clientSecret" => &mut secrets.idp_client_secret,
                _ => &mut secrets.id_token,
            };
            *slot = Some(value);
        }
    }
    if let Some(path) = &auth.private_key_file {
        let pem = tokio::fs::read_to_string(path).await.map_err(|e| {
            ConnectError::Config(format!(
                "auth.privateKeyFile '{path}' could not be read: {e}"
            ))
        })?;
        let pem = SecretString::from(pem);
        server.log.redactor().register(&pem);
        secrets.private_key = Some(pem);
    }
    Ok(secrets)
}

async fn resolve_entries(
    server: &Server,
    resolver: &SecretResolver,
    entries: &[(String, String)],
) -> Result<Vec<(String, SecretString)>, ConnectError> {
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let resolved = resolver.resolve_all(entries).await?;
    // Mask what came from a secret backend, and plaintext values under credential-like keys
    // too: a server that echoes its token back must not hand it to the model.
    for ((key, raw), (_, value)) in entries.iter().zip(&resolved) {
        if crate::secrets::is_secret_uri(raw) || crate::secrets::looks_like_credential_key(key) {
            server.log.redactor().register(value);
        }
    }
    Ok(resolved)
}

/// Spawns the server and runs the handshake over its stdio. On failure or shutdown the process
/// tree is stopped before this returns.
async fn connect_stdio(
    server: &Server,
    inherit: Option<&std::collections::BTreeMap<String, String>>,
    env: &[(String, SecretString)],
    setup: SessionSetup,
    shutdown: &CancellationToken,
    up: &TransportUp,
) -> Result<Session, Opening> {
    let config = &server.config;
    let command = config
        .command
        .as_deref()
        .ok_or_else(|| ConnectError::Config("stdio transport requires 'command'".to_owned()))?;
    let grace = server.options.shutdown_grace;
    let withhold = withheld_env(server, inherit, env);
    let spec = SpawnSpec {
        server: &config.name,
        command,
        args: &config.args,
        inherit,
        withhold: &withhold,
        env,
        cwd: config.cwd.as_deref(),
        max_message_bytes: server.options.max_message_bytes,
        fault: server.fault.clone(),
        grace,
        task_hints: server.fresh_task_hints(),
        history: server.stderr.clone(),
        output: server.options.output_watcher.clone(),
        listing: Some(server.fresh_listing_bound()),
    };
    let (mut process, transport, lane) =
        stdio::spawn(&spec, &server.log).map_err(ConnectError::Spawn)?;
    up.mark();
    let router = server.progress.clone();
    lane.route_progress(Arc::new(move |p| router.route(p)));
    let connect_timeout = Duration::from_millis(config.timeout_ms);
    let opening = setup.lifecycle.clone();
    let initialized = tokio::select! {
        initialized = Session::initialize(transport, setup) => initialized,
        _ = shutdown.cancelled() => {
            process.terminate(grace).await;
            return Err(ConnectError::Shutdown.into());
        }
    };
    let mut refused = None;
    let cause = match initialized {
        // A 2026-07-28 session puts the revision's `_meta` on every request: rmcp sends those.
        Ok(session) => {
            let session = session.with_process(process);
            return Ok(match opening {
                Lifecycle::Initialize(_) => session.with_lane(lane),
                Lifecycle::Discover => session,
            });
        }
        Err(InitFailure::Refused { message, supported }) => {
            refused = Some(supported);
            match opening {
                Lifecycle::Discover => format!("server/discover failed: {message}"),
                Lifecycle::Initialize(_) => format!("initialize failed: {message}"),
            }
        }
        Err(InitFailure::Failed(error)) => {
            // The process is to blame only when the connection closed under the handshake (it
            // may take a moment to be seen exiting); after a protocol error the closed stdin
            // makes a well-behaved server exit too, which says nothing.
            let wait = if error.starts_with("connection closed") {
                Duration::from_millis(200)
            } else {
                Duration::ZERO
            };
            match process.exit_within(wait).await {
                Some(how) => format!("server process {how} during initialization"),
                None => format!("initialize failed: {error}"),
            }
        }
        Err(InitFailure::TimedOut) => format!(
            "no answer to initialize within {} ms",
            connect_timeout.as_millis()
        ),
    };
    let stderr = process.terminate(grace).await.lines();
    Err(Opening {
        error: ConnectError::Initialize { cause, stderr },
        refused,
        signed_out: false,
    })
}

/// The host variables `server` must not inherit (its `envPolicy`; loader-hijack variables
/// under any policy unless its `env` or `envPassthrough` names them). The first start that
/// withholds loader-hijack variables says which, once per server.
fn withheld_env(
    server: &Server,
    inherit: Option<&std::collections::BTreeMap<String, String>>,
    env: &[(String, SecretString)],
) -> Vec<String> {
    use crate::config::EnvPolicy;
    use crate::transport::child_env;
    let config = &server.config;
    let keep: Vec<&str> = env
        .iter()
        .map(|(k, _)| k.as_str())
        .chain(config.env_passthrough.iter().map(String::as_str))
        .collect();
    let minimal = config.env_policy == EnvPolicy::Minimal;
    let withheld = match inherit {
        Some(vars) => child_env::withheld(vars.keys().map(String::as_str), minimal, &keep),
        None => {
            let names: Vec<String> = std::env::vars_os()
                .map(|(k, _)| k.to_string_lossy().into_owned())
                .collect();
            child_env::withheld(names.iter().map(String::as_str), minimal, &keep)
        }
    };
    let hijack: Vec<&str> = withheld
        .iter()
        .map(String::as_str)
        .filter(|n| child_env::is_loader_hijack(n))
        .collect();
    if !hijack.is_empty()
        && !server
            .env_warned
            .swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        server.log.warn(&format!(
            "MCP server '{}': not passing {} from the host environment (variables that make a \
             program load extra code); name them in the server's env or envPassthrough to pass them",
            config.name,
            hijack.join(", ")
        ));
    }
    withheld
}

/// Streamable HTTP (falling back to legacy SSE when the server answers like an SSE-only one
/// and the config allows it) or legacy SSE. Returns the session and the transport in use.
async fn connect_remote(
    server: &Server,
    headers: &[(String, SecretString)],
    setup: SessionSetup,
    up: &TransportUp,
) -> Result<(Session, &'static str), Opening> {
    let config = &server.config;
    let url = config.url.as_deref().ok_or_else(|| {
        ConnectError::Config(format!(
            "{} transport requires 'url'",
            config.transport_name
        ))
    })?;
    let connect_timeout = Duration::from_millis(config.timeout_ms);
    let target = Target::parse(url).map_err(ConnectError::Http)?;
    let headers = net::user_headers(headers).map_err(ConnectError::Http)?;
    let client = net::build_client(config.ca_file.as_deref(), connect_timeout)
        .map_err(ConnectError::Http)?;
    if config.transport == TransportKind::Sse {
        let session = connect_sse(server, &target, client, headers, setup, up).await?;
        return Ok((session, "sse"));
    }
    let opening = setup.lifecycle.clone();
    let step = match opening {
        Lifecycle::Discover => "server/discover",
        Lifecycle::Initialize(_) => "initialize",
    };
    let fallback = setup.clone();
    let (worker, http) = http::open(HttpSpec {
        server: &config.name,
        target: &target,
        client: client.clone(),
        headers: headers.clone(),
        max_message_bytes: server.options.max_message_bytes,
        connect_timeout,
        log: server.log.clone(),
        task_hints: server.fresh_task_hints(),
        listing: Some(server.fresh_listing_bound()),
        bearer: server
            .oauth
            .clone()
            .map(|o| o as Arc<dyn crate::transport::bearer::Bearer>),
    });
    up.mark();
    let setup = SessionSetup {
        lost: Some(http.lost()),
        ..setup
    };
    // Dropped on any failure below: rmcp's worker may still be reading the answer to
    // `initialize` (an endless or stalled stream), which must not outlive the attempt.
    let closer = http.closer();
    let mut refused = None;
    let (message, sse_only) = match Session::initialize(worker, setup).await {
        Ok(session) => {
            http.mark_established();
            return Ok((session.closing(closer), "streamable-http"));
        }
        Err(failure @ (InitFailure::Failed(_) | InitFailure::Refused { .. })) => {
            let sse_only = match http.initial_answer() {
                Some(InitialAnswer::SseOnly(status)) if step == "initialize" => Some(status),
                _ => None,
            };
            let error = failure.text();
            if let InitFailure::Refused { supported, .. } = failure {
                refused = Some(supported);
            }
            let message = http
                .first_failure()
                .unwrap_or_else(|| format!("{step} with {} failed: {error}", target.shown));
            (message, sse_only)
        }
        Err(InitFailure::TimedOut) => {
            let message = http.first_failure().unwrap_or_else(|| {
                format!(
                    "no answer to {step} from {} within {} ms",
                    target.shown,
                    connect_timeout.as_millis()
                )
            });
            (message, None)
        }
    };
    drop(closer);
    let Some(status) = sse_only else {
        return Err(Opening {
            error: ConnectError::Http(message),
            refused,
            signed_out: http.signed_out(),
        });
    };
    if !config.sse_fallback {
        return Err(Opening::from(ConnectError::Http(format!(
            "{message} (HTTP {status} to the initialize POST is what a legacy SSE-only server \
             answers; sseFallback is off for this server)"
        ))));
    }
    server.log.info(&format!(
        "MCP server '{}': {} answered HTTP {status} to Streamable HTTP; trying the legacy SSE \
         transport",
        config.name, target.shown
    ));
    let session = connect_sse(server, &target, client, headers, fallback, up)
        .await
        .map_err(|e| {
            ConnectError::Http(format!(
                "{message}; the legacy SSE fallback failed too: {e}"
            ))
        })?;
    Ok((session, "sse"))
}

async fn connect_sse(
    server: &Server,
    target: &Target,
    client: reqwest::Client,
    headers: reqwest::header::HeaderMap,
    setup: SessionSetup,
    up: &TransportUp,
) -> Result<Session, ConnectError> {
    let config = &server.config;
    let connect_timeout = Duration::from_millis(config.timeout_ms);
    let idle = server.options.sse_idle_timeout;
    let transport = sse::connect(SseOptions {
        server: &config.name,
        client,
        target: target.clone(),
        headers,
        max_message_bytes: server.options.max_message_bytes,
        idle_timeout: Some(idle).filter(|d| !d.is_zero()),
        deadline: setup.deadline,
        connect_timeout,
        post_timeout: connect_timeout,
        log: server.log.clone(),
        fault: server.fault.clone(),
        bearer: server
            .oauth
            .clone()
            .map(|o| o as Arc<dyn crate::transport::bearer::Bearer>),
        listing: Some(server.fresh_listing_bound()),
    })
    .await
    .map_err(ConnectError::Http)?;
    up.mark();
    let hang_up = transport.hang_up();
    match Session::initialize(transport, setup).await {
        Ok(session) => Ok(session.hanging_up(hang_up)),
        Err(failure @ (InitFailure::Failed(_) | InitFailure::Refused { .. })) => {
            Err(ConnectError::Http(format!(
                "initialize over SSE with {} failed: {}",
                target.shown,
                failure.text()
            )))
        }
        Err(InitFailure::TimedOut) => Err(ConnectError::Http(format!(
            "no answer to initialize from {} within {} ms",
            target.shown,
            connect_timeout.as_millis()
        ))),
    }
}

/// `logLevel`, sent to a server that declares logging; a failure is only a warning.
#[allow(deprecated)] // logging is deprecated by SEP-2577, but servers still offer it
async fn set_log_level(server: &Server, peer: &Peer<RoleClient>, timeout: Duration) {
    let Some(level) = server.config.log_level.as_deref() else {
        return;
    };
    let declares = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.logging.is_some());
    if !declares {
        return;
    }
    let Ok(level) = serde_json::from_value::<rmcp::model::LoggingLevel>(level.into()) else {
        return;
    };
    let params = rmcp::model::SetLevelRequestParams::new(level);
    match tokio::time::timeout(timeout, peer.set_level(params)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => server.log.warn(&format!(
            "MCP server '{}': logging/setLevel failed: {}",
            server.config.name,
            CallError::from_service(e)
        )),
        Err(_) => server.log.warn(&format!(
            "MCP server '{}': no answer to logging/setLevel within {} ms",
            server.config.name,
            timeout.as_millis()
        )),
    }
}

/// Tools the server runs only as tasks (`execution.taskSupport: "required"`) are called as
/// tasks where the session can (a 2025-11-25 server that declares task-augmented
/// `tools/call`); elsewhere they are left out, with a warning naming them: every call would
/// fail. `optional` tools are called directly, as before.
fn mark_task_tools(server: &Server, peer: &Peer<RoleClient>, entries: &mut Vec<ToolEntry>) {
    let hints = server.task_hints();
    let modern = peer
        .peer_info()
        .is_some_and(|info| !info.protocol_version.has_initialize());
    let why_not = if modern {
        Some("the 2026-07-28 revision has no task-augmented tools/call without the tasks extension")
    } else if !hints.server_runs_tool_tasks() {
        Some("the server does not declare tasks for tools/call")
    } else {
        None
    };
    entries.retain_mut(|entry| {
        if hints.support(&entry.mcp_name) != TaskSupport::Required {
            return true;
        }
        match why_not {
            None => {
                entry.task = true;
                true
            }
            Some(why) => {
                server.log.warn(&format!(
                    "MCP server '{}': tool '{}' is left out: it runs only as a task, and {why}",
                    server.config.name, entry.mcp_name
                ));
                false
            }
        }
    });
}

/// A listing of this many tools or more leaves enough freed memory behind to hand back.
const LARGE_LISTING: usize = 1000;

/// The pages of `tools/list`, minus what the server's `toolFilter` leaves out, bridged into
/// agent tools (schema, label, description; the name is the manager's to assign), at most
/// `maxTools` of them: past that no further page is asked for and a warning says what was
/// dropped. What the model will read (label, description, schema) passes the redactor, as
/// results do: a server may describe a tool with a secret it was started with.
pub(super) async fn list_tools(
    server: &Server,
    peer: &Peer<RoleClient>,
) -> Result<Vec<ToolEntry>, CallError> {
    let config = &server.config;
    let max = config.max_tools as usize;
    let redactor = server.log.redactor();
    let schemas = config.schemas.unwrap_or(server.options.schemas);
    let bridged = |tool: &rmcp::model::Tool| {
        let schema = serde_json::Value::Object((*tool.input_schema).clone());
        let parameters = match schemas {
            SchemaMode::Compat => bridge::convert_schema(Some(&schema)).to_string(),
            SchemaMode::Faithful => bridge::faithful::faithful_schema(Some(&schema)).to_string(),
        };
        let label = bridge::tool_label(&config.name, &tool.name);
        let description = bridge::tool_description(&config.name, tool.description.as_deref());
        let parameters = redactor.redact(&parameters);
        ToolEntry {
            mcp_name: tool.name.to_string(),
            label: redactor.redact(&label).into_owned(),
            description: redactor.redact(&description).into_owned(),
            hygienic: hygiene::schema::clean_schema(&parameters).map(Arc::new),
            parameters_json: Arc::from(parameters.as_ref()),
            output_schema: tool
                .output_schema
                .as_ref()
                .map(|schema| Arc::new(serde_json::Value::Object((**schema).clone()))),
            builtin: None,
            pin: serde_json::to_value(tool)
                .ok()
                .map(|raw| Arc::new(Pin::of(&raw))),
            task: false,
        }
    };
    let mut entries = Vec::new();
    let mut listed = 0usize;
    let mut cursor: Option<String> = None;
    let mut pages = 0usize;
    let more_pages = loop {
        let page = peer
            .list_tools(Some(
                PaginatedRequestParams::default().with_cursor(cursor.clone()),
            ))
            .await
            .map_err(CallError::from_service)?;
        pages += 1;
        for tool in page
            .tools
            .iter()
            .filter(|t| config.tool_filter.allows(&t.name))
        {
            listed += 1;
            if entries.len() < max {
                entries.push(bridged(tool));
            }
        }
        // Tools the transport left out of a large page before rmcp read it (past `maxTools`)
        // still count as listed.
        listed += server.listing_beyond();
        match page.next_cursor {
            None => break false,
            Some(_) if entries.len() >= max => break true,
            // Each page must move on; a list of only empty pages ends at the same bound.
            Some(next) if cursor.as_ref() == Some(&next) || pages > max => {
                return Err(CallError::Protocol(format!(
                    "tools/list pagination does not advance (cursor '{}' after {pages} pages)",
                    next.chars().take(40).collect::<String>()
                )));
            }
            next => cursor = next,
        }
    };
    if more_pages || listed > max {
        let count = if more_pages {
            format!("more than {max}")
        } else {
            listed.to_string()
        };
        server.log.warn(&format!(
            "MCP server '{}' lists {count} tools, more than its maxTools ({max}): only the first {max} are offered",
            config.name
        ));
    }
    mark_task_tools(server, peer, &mut entries);
    // Resources and prompts as tools, where the config asks and the server offers them (a
    // server tool of the same name keeps it).
    let capabilities = peer.peer_info().map(|info| info.capabilities.clone());
    let offers_resources = capabilities.as_ref().is_some_and(|c| c.resources.is_some());
    let offers_prompts = capabilities.as_ref().is_some_and(|c| c.prompts.is_some());
    let mut builtins = Vec::new();
    if config.resource_tools && config.resources && offers_resources {
        builtins.extend([Builtin::ResourcesList, Builtin::ResourcesRead]);
    }
    if config.prompt_tools && offers_prompts {
        builtins.extend([Builtin::PromptsList, Builtin::PromptsGet]);
    }
    for builtin in builtins {
        if entries.iter().any(|t| t.mcp_name == builtin.name()) {
            continue;
        }
        let schema = builtin.input_schema();
        entries.push(ToolEntry {
            mcp_name: builtin.name().to_owned(),
            label: bridge::tool_label(&config.name, builtin.name()),
            description: bridge::tool_description(&config.name, Some(builtin.description())),
            parameters_json: Arc::from(bridge::convert_schema(Some(&schema)).to_string()),
            hygienic: None,
            task: false,
            output_schema: None,
            builtin: Some(builtin),
            pin: None,
        });
    }
    entries.shrink_to_fit();
    if listed >= LARGE_LISTING {
        crate::heap::release_free_memory();
    }
    Ok(entries)
}
