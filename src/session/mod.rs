//! One MCP session over any transport: the `initialize` handshake, what every connection
//! needs around its transport (only answers to our own requests, progress routing in wire
//! order, loss detection), and the live
//! session the supervisor holds until it ends.
//!
//! Transports only move messages (and, for stdio, own the server process); the session is the
//! one place that speaks the lifecycle of the protocol.

mod answers;
mod handler;
mod loss;
mod progress;
mod requests;

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::service::{
    ClientCacheConfig, Peer, QuitReason, RoleClient, RunningServiceCancellationToken,
};
use rmcp::transport::Transport;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use answers::OwnAnswers;
pub use handler::{CLIENT_NAME, CLIENT_VERSION, PROTOCOL_VERSION, SessionHandler};
pub use loss::EndOnLoss;
pub use progress::{Progress, ProgressRouter, ProgressTap};
pub use requests::{ClientRequests, RootsSource, parse_roots};

use crate::transport::stdio::ServerProcess;

/// Why `initialize` did not produce a session.
#[derive(Debug)]
pub enum InitFailure {
    /// The handshake failed (an error answer, a closed transport, a malformed reply).
    Failed(String),
    /// No answer before the deadline.
    TimedOut,
}

/// What a connection needs besides its transport.
#[derive(Clone)]
pub struct SessionSetup {
    pub handler: SessionHandler,
    pub progress: Arc<ProgressRouter>,
    /// Fires when the transport finds the server gone; the session then ends.
    pub lost: Option<CancellationToken>,
    /// Bounds the handshake.
    pub deadline: Instant,
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
    /// What ends with the session (an HTTP client's open requests and streams).
    _closers: Vec<tokio_util::sync::DropGuard>,
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
        } = setup;
        // Only a transport that can lose its server silently pays for the loss check.
        match lost {
            Some(lost) => {
                let transport = EndOnLoss::new(OwnAnswers::new(transport), lost);
                Self::serve(ProgressTap::new(transport, progress), handler, deadline).await
            }
            None => {
                let transport = OwnAnswers::new(transport);
                Self::serve(ProgressTap::new(transport, progress), handler, deadline).await
            }
        }
    }

    async fn serve<T>(
        transport: T,
        handler: SessionHandler,
        deadline: Instant,
    ) -> Result<Self, InitFailure>
    where
        T: Transport<RoleClient> + Send + 'static,
    {
        let running = match tokio::time::timeout_at(deadline, handler.serve(transport)).await {
            Ok(Ok(running)) => running,
            Ok(Err(error)) => return Err(InitFailure::Failed(error.to_string())),
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
            _closers: Vec::new(),
        })
    }

    /// `closer` is dropped when the session is: what it closes ends with the session.
    pub fn closing(mut self, closer: tokio_util::sync::DropGuard) -> Self {
        self._closers.push(closer);
        self
    }

    /// The session now owns the server's process: it ends with the session.
    pub fn with_process(mut self, process: ServerProcess) -> Self {
        self.process = Some(process);
        self
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
    pub async fn close(self, grace: Duration) -> Vec<String> {
        let first = tokio::time::Instant::now() + grace;
        self.cancel.cancel();
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
