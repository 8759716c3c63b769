//! The loop that keeps one server running: connect, publish, watch the session, restart with
//! backoff when it dies, and take it down on shutdown.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Notify, oneshot};
use tokio_util::sync::CancellationToken;

use super::connect::{self, Attempt, Connected};
use super::server::Server;
use super::tool_cache::ToolCache;
use crate::error::ConnectError;
use crate::host_env::HostEnvironment;
use crate::secrets::{EnvSource, SecretResolver};
use crate::session::Session;
use crate::status::Status;

/// What a supervisor reads from its manager.
pub struct SuperviseContext {
    pub resolver: Arc<SecretResolver>,
    /// Where restarts read the host environment.
    pub host_env: Arc<dyn HostEnvironment>,
    /// The host environment when `start()` was called: the first attempt's.
    pub start_env: EnvSource,
    pub shutdown: CancellationToken,
}

/// `tools/list_changed` notices closer together than this are one change.
const LIST_CHANGED_QUIET: Duration = Duration::from_millis(50);
/// During a flood of notices, the tools are still re-listed this often.
const LIST_CHANGED_MAX_DELAY: Duration = Duration::from_secs(1);

/// Why a connected session ended.
enum SessionEnd {
    Shutdown,
    Exited(String),
    /// No call for `idleTimeoutMs`, or a `lazy` server's discovery run is done.
    Idle,
}

/// Runs one server until shutdown. `first_attempt` fires once the first connection attempt has
/// ended either way, which is what `start()` waits for.
pub async fn supervise(
    server: Arc<Server>,
    context: SuperviseContext,
    first_attempt: oneshot::Sender<()>,
) {
    let SuperviseContext {
        resolver,
        host_env,
        start_env,
        shutdown,
    } = context;
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
    let mut start_env = Some(start_env);
    let cache = ToolCache::of(&server);
    // A start a call asked for (an idle or lazy server): the status stays `ready`.
    let mut waking = false;
    // A lazy server's first start is a discovery run: it idles right after listing.
    let mut discovery = server.config.lazy;

    // Lazy, with a cached list: no process until the first call.
    if server.config.lazy
        && let Some(tools) = cache.as_ref().and_then(|c| c.load(&server))
    {
        log.info(&format!(
            "MCP server '{name}' offers {} cached tools (lazy: no process until the first call)",
            tools.len()
        ));
        server.set_idle(Some(tools));
        signal_first();
        discovery = false;
        tokio::select! {
            _ = server.wake.notified() => waking = true,
            _ = shutdown.cancelled() => {}
        }
    }

    'life: loop {
        if shutdown.is_cancelled() {
            break;
        }
        if !waking {
            server.set_status(Status::Connecting);
        }
        let env = match start_env.take() {
            Some(env) => env,
            None => tokio::select! {
                env = host_env.current() => env,
                _ = shutdown.cancelled() => break 'life,
            },
        };
        let attempt = Attempt {
            env,
            resolver: &resolver,
            shutdown: &shutdown,
            tools_changed: tools_changed.clone(),
        };
        let failure = match connect::connect(&server, attempt).await {
            Ok(Connected {
                mut session,
                tools,
                transport,
                startup,
            }) => {
                let count = tools.len();
                server.metrics().record_startup(startup);
                if let Some(cache) = &cache {
                    cache.store(&server, &tools);
                }
                server.set_ready(
                    session.peer().clone(),
                    session.lane().cloned(),
                    tools,
                    transport,
                );
                log.info(&format!("MCP server '{name}' connected ({count} tools)"));
                signal_first();
                let ready_at = Instant::now();
                let end = if std::mem::take(&mut discovery) {
                    SessionEnd::Idle
                } else {
                    watch_session(&server, &mut session, &shutdown, &tools_changed, &cache).await
                };
                match &end {
                    SessionEnd::Shutdown => server.set_status(Status::Closed),
                    SessionEnd::Exited(why) => server.set_error(why),
                    SessionEnd::Idle => {}
                }
                let grace = server.options.shutdown_grace;
                match end {
                    SessionEnd::Shutdown => {
                        session.close(grace).await;
                        break 'life;
                    }
                    SessionEnd::Idle => {
                        // Its tools stay offered; the next call starts it again.
                        session.close(grace).await;
                        server.set_idle(None);
                        log.info(&format!(
                            "MCP server '{name}' stopped while idle (its tools stay offered; the next call starts it)"
                        ));
                        restarts = 0;
                        tokio::select! {
                            _ = server.wake.notified() => waking = true,
                            _ = shutdown.cancelled() => break 'life,
                        }
                        continue 'life;
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
            Err(ConnectError::Shutdown) => break 'life,
            Err(error) if !error.retryable() => {
                // A secret problem is a configuration problem: no restart loop for it.
                log.error(&format!("MCP server '{name}' failed to start: {error}"));
                server.record_start_failure(&error.to_string());
                server.set_status(Status::Disconnected);
                signal_first();
                shutdown.cancelled().await;
                break 'life;
            }
            Err(error) => Some(error),
        };
        waking = false;
        // The status is `error` before `start()` is released, so the caller sees the outcome.
        match &failure {
            Some(error) => server.set_error(&error.to_string()),
            None => server.set_status(Status::Error),
        }
        if let Some(error) = failure {
            log.error(&format!("MCP server '{name}' failed to start: {error}"));
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
        // Counted as it happens, and never reset (unlike the backoff's count).
        server.metrics().record_restart();
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

/// Waits for the session to end; re-lists tools when the server says they changed.
async fn watch_session(
    server: &Server,
    session: &mut Session,
    shutdown: &CancellationToken,
    tools_changed: &Notify,
    cache: &Option<ToolCache>,
) -> SessionEnd {
    let peer = session.peer().clone();
    let idle = server.config.idle_timeout_ms.map(Duration::from_millis);
    loop {
        let idled = async {
            match idle {
                Some(idle) => server.idle_for(idle).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = shutdown.cancelled() => return SessionEnd::Shutdown,
            _ = idled => return SessionEnd::Idle,
            how = session.ended() => return SessionEnd::Exited(how),
            _ = tools_changed.notified() => {
                // Coalesce a burst of notices: re-list once they pause, and during a flood at
                // most once per LIST_CHANGED_MAX_DELAY.
                let first = Instant::now();
                loop {
                    tokio::select! {
                        _ = tokio::time::sleep(LIST_CHANGED_QUIET) => break,
                        _ = tools_changed.notified() => {
                            if first.elapsed() >= LIST_CHANGED_MAX_DELAY {
                                break;
                            }
                        }
                        _ = shutdown.cancelled() => return SessionEnd::Shutdown,
                        how = session.ended() => return SessionEnd::Exited(how),
                    }
                }
                let timeout = Duration::from_millis(server.config.timeout_ms);
                match tokio::time::timeout(timeout, connect::list_tools(server, &peer)).await {
                    Ok(Ok(tools)) => {
                        server.log.info(&format!(
                            "MCP server '{}' tools changed ({} tools)",
                            server.config.name,
                            tools.len()
                        ));
                        if let Some(cache) = cache {
                            cache.store(server, &tools);
                        }
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
