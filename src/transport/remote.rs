//! Remote servers: Streamable HTTP (rmcp's transport worker over our reqwest client, see
//! [`super::http`]) and the legacy HTTP+SSE transport of the 2024-11-05 spec (see
//! [`super::sse`]), with the fallback from one to the other.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use secrecy::SecretString;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::http::{HttpClient, InitialAnswer};
use super::net::{self, Target};
use super::sse::{self, SseOptions};
use crate::client_handler::{ProgressRouter, ProgressTap, SessionHandler};
use crate::config::TransportKind;
use crate::log::Log;

/// Everything needed to open a session with a remote server.
pub struct RemoteSpec<'a> {
    pub server: &'a str,
    pub url: &'a str,
    /// `Http` or `Sse`.
    pub transport: TransportKind,
    /// Resolved header values, sent on every request to the server's origin only.
    pub headers: &'a [(String, SecretString)],
    /// A PEM file of extra CA certificates, trusted on top of the system roots.
    pub ca_file: Option<&'a str>,
    /// `Http` only: retry as legacy SSE when the first POST gets an SSE-only server's 4xx.
    pub sse_fallback: bool,
    /// Bounds connecting and initialising.
    pub connect_timeout: Duration,
    /// Largest message (response body or SSE event) accepted.
    pub max_message_bytes: usize,
    /// Legacy SSE: the longest silence on the event stream before the session ends (a
    /// keep-alive ping is sent half-way). `None`: unbounded.
    pub idle_timeout: Option<Duration>,
    pub log: &'a Log,
}

/// An initialised session and the name of the transport it runs on
/// (`"streamable-http"` or `"sse"`).
pub type RemoteSession = (RunningService<RoleClient, SessionHandler>, &'static str);

/// Opens and initialises a session. Progress notifications are routed through
/// [`crate::client_handler::ProgressTap`] around the transport.
pub async fn connect(
    spec: &RemoteSpec<'_>,
    handler: SessionHandler,
    progress: Arc<ProgressRouter>,
) -> Result<RemoteSession, String> {
    let deadline = Instant::now() + spec.connect_timeout;
    let target = Target::parse(spec.url)?;
    let headers = net::user_headers(spec.headers)?;
    let client = net::build_client(spec.ca_file, spec.connect_timeout)?;
    match spec.transport {
        TransportKind::Sse => {
            let running =
                connect_sse(spec, &target, client, headers, deadline, handler, progress).await?;
            Ok((running, "sse"))
        }
        _ => {
            let attempt = connect_http(
                spec,
                &target,
                client.clone(),
                headers.clone(),
                deadline,
                handler.clone(),
                progress.clone(),
            )
            .await;
            match attempt {
                Ok(running) => Ok((running, "streamable-http")),
                Err(HttpFailure {
                    message,
                    sse_only: Some(status),
                }) => {
                    if !spec.sse_fallback {
                        return Err(format!(
                            "{message} (HTTP {status} to the initialize POST is what a legacy \
                             SSE-only server answers; sseFallback is off for this server)"
                        ));
                    }
                    spec.log.info(&format!(
                        "MCP server '{}': {} answered HTTP {status} to Streamable HTTP; trying \
                         the legacy SSE transport",
                        spec.server, target.shown
                    ));
                    let running =
                        connect_sse(spec, &target, client, headers, deadline, handler, progress)
                            .await
                            .map_err(|e| {
                                format!("{message}; the legacy SSE fallback failed too: {e}")
                            })?;
                    Ok((running, "sse"))
                }
                Err(HttpFailure { message, .. }) => Err(message),
            }
        }
    }
}

struct HttpFailure {
    message: String,
    /// The status of an SSE-only server's answer to the initialize POST.
    sse_only: Option<u16>,
}

async fn connect_http(
    spec: &RemoteSpec<'_>,
    target: &Target,
    client: reqwest::Client,
    headers: reqwest::header::HeaderMap,
    deadline: Instant,
    handler: SessionHandler,
    progress: Arc<ProgressRouter>,
) -> Result<RunningService<RoleClient, SessionHandler>, HttpFailure> {
    let http = HttpClient::new(
        client,
        target.clone(),
        headers,
        spec.max_message_bytes,
        spec.server,
        spec.log.clone(),
    );
    let mut config = StreamableHttpClientTransportConfig::with_uri(spec.url);
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
    let transport = ProgressTap::new(EndOnLoss::new(worker, http.lost()), progress);
    match tokio::time::timeout_at(deadline, handler.serve(transport)).await {
        Ok(Ok(running)) => {
            http.mark_established();
            Ok(running)
        }
        Ok(Err(error)) => {
            let sse_only = match http.initial_answer() {
                Some(InitialAnswer::SseOnly(status)) => Some(status),
                _ => None,
            };
            let message = http
                .first_failure()
                .unwrap_or_else(|| format!("initialize with {} failed: {error}", target.shown));
            Err(HttpFailure { message, sse_only })
        }
        Err(_) => Err(HttpFailure {
            message: match http.first_failure() {
                Some(failure) => failure,
                None => format!(
                    "no answer to initialize from {} within {} ms",
                    target.shown,
                    spec.connect_timeout.as_millis()
                ),
            },
            sse_only: None,
        }),
    }
}

async fn connect_sse(
    spec: &RemoteSpec<'_>,
    target: &Target,
    client: reqwest::Client,
    headers: reqwest::header::HeaderMap,
    deadline: Instant,
    handler: SessionHandler,
    progress: Arc<ProgressRouter>,
) -> Result<RunningService<RoleClient, SessionHandler>, String> {
    let transport = sse::connect(SseOptions {
        server: spec.server,
        client,
        target: target.clone(),
        headers,
        max_message_bytes: spec.max_message_bytes,
        idle_timeout: spec.idle_timeout,
        deadline,
        connect_timeout: spec.connect_timeout,
        post_timeout: spec.connect_timeout,
        log: spec.log.clone(),
    })
    .await?;
    let transport = ProgressTap::new(transport, progress);
    match tokio::time::timeout_at(deadline, handler.serve(transport)).await {
        Ok(Ok(running)) => Ok(running),
        Ok(Err(error)) => Err(format!(
            "initialize over SSE with {} failed: {error}",
            target.shown
        )),
        Err(_) => Err(format!(
            "no answer to initialize from {} within {} ms",
            target.shown,
            spec.connect_timeout.as_millis()
        )),
    }
}

/// Ends the session (`receive()` returns `None`, so rmcp's service stops) once `lost` fires:
/// rmcp's Streamable HTTP worker would otherwise outlive a server that is gone.
///
/// Messages already on their way when it fires (typically the error answer of the call that
/// found the server gone) are still handed over, each within a short grace.
pub struct EndOnLoss<T> {
    inner: T,
    lost: CancellationToken,
    /// Messages handed over since `lost` fired.
    drained: Option<usize>,
}

/// How long, once the server is gone, a message already on its way may take to arrive.
const DRAIN_GRACE: Duration = Duration::from_millis(100);
/// At most this many messages are handed over once the server is gone.
const DRAIN_MAX: usize = 64;

impl<T> EndOnLoss<T> {
    pub fn new(inner: T, lost: CancellationToken) -> Self {
        Self {
            inner,
            lost,
            drained: None,
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for EndOnLoss<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.drained.is_none() {
            tokio::select! {
                biased;
                message = self.inner.receive() => return message,
                _ = self.lost.cancelled() => self.drained = Some(0),
            }
        }
        let drained = self.drained.as_mut()?;
        if *drained >= DRAIN_MAX {
            return None;
        }
        *drained += 1;
        tokio::time::timeout(DRAIN_GRACE, self.inner.receive())
            .await
            .ok()
            .flatten()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
