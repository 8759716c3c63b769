//! Remote servers: Streamable HTTP (rmcp's client) and the legacy HTTP+SSE transport of the
//! 2024-11-05 spec, with the fallback from one to the other.

use std::sync::Arc;
use std::time::Duration;

use rmcp::service::{RoleClient, RunningService};
use secrecy::SecretString;

use crate::client_handler::{ProgressRouter, SessionHandler};
use crate::config::TransportKind;

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
}

/// An initialised session and the name of the transport it runs on
/// (`"streamable-http"` or `"sse"`).
pub type RemoteSession = (RunningService<RoleClient, SessionHandler>, &'static str);

/// Opens and initialises a session. Progress notifications must be routed through
/// [`crate::client_handler::ProgressTap`] around the transport.
pub async fn connect(
    spec: &RemoteSpec<'_>,
    handler: SessionHandler,
    progress: Arc<ProgressRouter>,
) -> Result<RemoteSession, String> {
    let _ = (handler, progress);
    Err(format!(
        "{} transport is not supported yet",
        spec.transport.as_str()
    ))
}
