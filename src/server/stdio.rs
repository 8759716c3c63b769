//! MCP over a byte stream pair: the host's stdin and stdout under Node, a duplex pipe in tests.
//! Only JSON-RPC lines are written to `write`; nothing else in the crate writes to stdout.

use std::sync::Arc;

use rmcp::service::{ServerInitializeError, serve_server_with_ct};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use super::handler::Server;
use super::provider::ToolProvider;

/// Serves one session over `read`/`write` until the client closes its side (EOF) or `stop` is
/// cancelled. A client that goes away before or during the handshake ends the session too;
/// `Err` is a handshake the client got wrong.
pub async fn serve<P, R, W>(
    server: &Arc<Server<P>>,
    read: R,
    write: W,
    stop: CancellationToken,
) -> Result<(), String>
where
    P: ToolProvider + ?Sized,
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    match serve_server_with_ct(server.handler(), (read, write), stop).await {
        Ok(running) => {
            let _ = running.waiting().await;
            Ok(())
        }
        Err(ServerInitializeError::Cancelled | ServerInitializeError::ConnectionClosed(_)) => {
            Ok(())
        }
        Err(e) => Err(format!("the MCP session could not start: {e}")),
    }
}
