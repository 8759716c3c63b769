//! One MCP session over any transport: the `initialize` handshake, what every connection
//! needs around its transport (only answers to our own requests, progress routing in wire
//! order, loss detection), and the live
//! session the supervisor holds until it ends.
//!
//! Transports only move messages (and, for stdio, own the server process); the session is the
//! one place that speaks the lifecycle of the protocol.

mod answers;
mod catalog_changes;
mod handler;
mod input_required;
mod listen;
mod loss;
mod progress;
mod requests;

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::service::{
    ClientCacheConfig, ClientLifecycleMode, ClientServiceExt, Peer, QuitReason, RoleClient,
    RunningServiceCancellationToken,
};
use rmcp::transport::Transport;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use answers::OwnAnswers;
pub use catalog_changes::{CatalogChange, CatalogChanges};
pub use handler::{
    CLIENT_NAME, CLIENT_VERSION, CatalogCallback, PROTOCOL_VERSION, SessionHandler,
    server_log_event,
};
pub use input_required::{
    MAX_INPUT_ROUNDS, get_prompt as get_prompt_in_rounds, next_round as next_input_round,
    read_resource as read_resource_in_rounds, too_many_rounds,
};
pub use listen::{ListChanges, follow as follow_list_changes};
pub use loss::EndOnLoss;
pub use progress::{Progress, ProgressRouter, ProgressTap};
pub use requests::{ClientRequests, RootsSource, parse_roots};

use crate::transport::call_lane::CallLane;
use crate::transport::stdio::ServerProcess;

/// Why `initialize` did not produce a session.
#[derive(Debug)]
pub enum InitFailure {
    /// The handshake failed (a closed transport, a malformed reply).
    Failed(String),
    /// The server answered the opening request with a JSON-RPC error: a legacy server refusing
    /// `server/discover`, or a server refusing the revision asked for, with the revisions it
    /// names in `data.supported` (if any).
    Refused {
        message: String,
        supported: Vec<String>,
    },
    /// No answer before the deadline.
    TimedOut,
}

impl InitFailure {
    /// The failure as one line, for a report.
    pub fn text(&self) -> String {
        match self {
            Self::Failed(text) => text.clone(),
            Self::Refused { message, .. } => message.clone(),
            Self::TimedOut => "no answer".to_owned(),
        }
    }

    fn from_rmcp(error: rmcp::service::ClientInitializeError) -> Self {
        use rmcp::service::ClientInitializeError as E;
        match &error {
            E::JsonRpcError(data) => {
                let supported = data
                    .data
                    .as_ref()
                    .and_then(|d| d.get("supported"))
                    .and_then(|s| s.as_array())
                    .map(|list| {
                        list.iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
                Self::Refused {
                    message: error.to_string(),
                    supported,
                }
            }
            E::NoCompatibleProtocolVersion {
                server_supported, ..
            } => Self::Refused {
                message: error.to_string(),
                supported: server_supported
                    .iter()
                    .map(|v| v.as_str().to_owned())
                    .collect(),
            },
            _ => Self::Failed(error.to_string()),
        }
    }
}

/// How a session opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lifecycle {
    /// The `initialize` handshake (2025-11-25 and older), asking for this revision.
    Initialize(ProtocolVersion),
    /// `server/discover`, then `_meta` on every request (2026-07-28, no handshake).
    Discover,
}

impl Lifecycle {
    /// The revision a server is asked for.
    pub fn revision(&self) -> &str {
        match self {
            Self::Initialize(version) => version.as_str(),
            Self::Discover => MODERN_REVISION,
        }
    }
}

/// The newest revision this client speaks: stateless, opened with `server/discover`.
pub const MODERN_REVISION: &str = "2026-07-28";

/// What a connection needs besides its transport.
#[derive(Clone)]
pub struct SessionSetup {
    pub handler: SessionHandler,
    pub progress: Arc<ProgressRouter>,
    /// Fires when the transport finds the server gone; the session then ends.
    pub lost: Option<CancellationToken>,
    /// Bounds the handshake.
    pub deadline: Instant,
    /// How the session opens.
    pub lifecycle: Lifecycle,
}

type ServiceDone = Pin<Box<dyn Future<Output = Result<QuitReason, tokio::task::JoinError>> + Send>>;

/// A live session: the peer to send requests to, the rmcp service behind it and, for a local
/// server, its process.
pub struct Session {
    peer: Peer<RoleClient>,
    cancel: RunningServiceCancellationToken,
    /// The rmcp service task; `None` once it has ended.
    done: Option<ServiceDone>,
    process: Option<ServerProcess>,
    /// Tool calls on a stdio session opened with `initialize` go this way (see `call_lane`).
    lane: Option<Arc<CallLane>>,
    /// What ends with the session (an HTTP client's open requests and streams).
    _closers: Vec<tokio_util::sync::DropGuard>,
    /// What `close` ends at once, before waiting for rmcp's service (an SSE event stream).
    hang_ups: Vec<tokio_util::sync::DropGuard>,
}

impl Session {
    /// Runs the `initialize` handshake (protocol [`PROTOCOL_VERSION`], asked for explicitly)
    /// over `transport`, wrapped for progress routing and loss detection. rmcp's response
    /// cache is turned off: tool lists must be fresh after every restart.
    pub async fn initialize<T>(transport: T, setup: SessionSetup) -> Result<Self, InitFailure>
    where
        T: Transport<RoleClient> + Send + 'static,
    {
        let SessionSetup {
            handler,
            progress,
            lost,
            deadline,
            lifecycle,
        } = setup;
        let handler = match &lifecycle {
            Lifecycle::Initialize(version) => handler.asking_for(version.clone()),
            Lifecycle::Discover => handler,
        };
        let mode = match lifecycle {
            Lifecycle::Initialize(_) => ClientLifecycleMode::Initialize,
            Lifecycle::Discover => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        };
        // Only a transport that can lose its server silently pays for the loss check.
        match lost {
            Some(lost) => {
                let transport = EndOnLoss::new(OwnAnswers::new(transport), lost);
                Self::serve(
                    ProgressTap::new(transport, progress),
                    handler,
                    mode,
                    deadline,
                )
                .await
            }
            None => {
                let transport = OwnAnswers::new(transport);
                Self::serve(
                    ProgressTap::new(transport, progress),
                    handler,
                    mode,
                    deadline,
                )
                .await
            }
        }
    }

    async fn serve<T>(
        transport: T,
        handler: SessionHandler,
        mode: ClientLifecycleMode,
        deadline: Instant,
    ) -> Result<Self, InitFailure>
    where
        T: Transport<RoleClient> + Send + 'static,
    {
        let opened = handler.serve_with_lifecycle(transport, mode);
        let running = match tokio::time::timeout_at(deadline, opened).await {
            Ok(Ok(running)) => running,
            Ok(Err(error)) => return Err(InitFailure::from_rmcp(error)),
            Err(_) => return Err(InitFailure::TimedOut),
        };
        let peer = running.peer().clone();
        peer.set_response_cache_config(ClientCacheConfig::disabled())
            .await;
        Ok(Self {
            peer,
            cancel: running.cancellation_token(),
            done: Some(Box::pin(running.waiting())),
            process: None,
            lane: None,
            _closers: Vec::new(),
            hang_ups: Vec::new(),
        })
    }

    /// `closer` is dropped when the session is: what it closes ends with the session.
    pub fn closing(mut self, closer: tokio_util::sync::DropGuard) -> Self {
        self._closers.push(closer);
        self
    }

    /// `hang_up` is dropped as soon as the session starts closing, before rmcp's service ends.
    pub fn hanging_up(mut self, hang_up: tokio_util::sync::DropGuard) -> Self {
        self.hang_ups.push(hang_up);
        self
    }

    /// The session now owns the server's process: it ends with the session.
    pub fn with_process(mut self, process: ServerProcess) -> Self {
        self.process = Some(process);
        self
    }

    /// Tool calls go through `lane` (it shares the session's stdio).
    pub fn with_lane(mut self, lane: Arc<CallLane>) -> Self {
        self.lane = Some(lane);
        self
    }

    /// The call lane, for a stdio session that has one.
    pub fn lane(&self) -> Option<&Arc<CallLane>> {
        self.lane.as_ref()
    }

    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// Resolves when the session ends by itself, with a description of how. Cancel-safe: a
    /// call dropped half-way picks up where it stopped.
    pub async fn ended(&mut self) -> String {
        if self.done.is_some() {
            tokio::select! {
                how = process_exited(&mut self.process) => return format!("process {how}"),
                _ = service_ended(&mut self.done) => {}
            }
        }
        // The service ended: a local server that broke its stream is why; otherwise it is
        // usually exiting: say how, if it does so promptly.
        if let Some(why) = self.process.as_ref().and_then(ServerProcess::fault) {
            return why;
        }
        match self.process.as_mut() {
            Some(process) => match process.exit_within(Duration::from_millis(250)).await {
                Some(how) => format!("process {how}"),
                None => "the server closed its output".to_owned(),
            },
            None => "the connection closed".to_owned(),
        }
    }

    /// Closes the session (a local server's stdin closes with it) and stops the process tree.
    /// Returns the server's last stderr lines (none for a remote server).
    ///
    /// The wait for rmcp's service to end is part of the first `grace` (the one after stdin
    /// closes), not a wait of its own: a server that stopped reading its stdin keeps rmcp's
    /// writer blocked on the full pipe, so the service cannot end, and the process would only
    /// get its SIGTERM after a third `grace`.
    pub async fn close(mut self, grace: Duration) -> Vec<String> {
        let first = tokio::time::Instant::now() + grace;
        self.cancel.cancel();
        self.hang_ups.clear();
        if let Some(done) = self.done {
            let _ = tokio::time::timeout_at(first, done).await;
        }
        match self.process {
            Some(process) => process.terminate_by(first, grace).await.lines(),
            None => Vec::new(),
        }
    }
}

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

/// Resolves when the local server process exits (never for a remote server).
async fn process_exited(process: &mut Option<ServerProcess>) -> String {
    match process {
        Some(process) => process.exited().await,
        None => std::future::pending().await,
    }
}
