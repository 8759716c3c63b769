//! Errors as values with a kind. The texts are the ones OpenClaw's TypeScript module produced
//! (through the TypeScript MCP SDK), so a gateway that matches on them keeps working.

use std::time::Duration;

use rmcp::service::ServiceError;

use crate::secrets::SecretError;
use crate::status::Status;

/// Why a tool call (or another request to a server) did not produce a result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CallError {
    #[error("MCP server '{server}' is not ready (status: {status})")]
    NotReady { server: String, status: Status },
    /// The request hit its deadline; the server was sent `notifications/cancelled`.
    #[error("MCP error -32001: Request timed out")]
    Timeout(Duration),
    /// The caller's AbortSignal fired; the server was sent `notifications/cancelled`.
    #[error("Tool call aborted by the caller")]
    Aborted,
    #[error("MCP error -32000: Connection closed")]
    Closed,
    /// The connection was ended because the server broke its stream (a message over the size
    /// limit); the text says how.
    #[error("MCP error -32000: Connection closed: {0}")]
    Broken(String),
    /// A JSON-RPC error answer from the server.
    #[error("MCP error {code}: {message}")]
    Server { code: i32, message: String },
    /// The server answered with something that is not the result we asked for.
    #[error("MCP error -32603: {0}")]
    Protocol(String),
    /// Tool policy (`toolFilter`, `allow`/`deny`) forbids the call.
    #[error("{0}")]
    Refused(String),
}

impl CallError {
    pub fn from_service(error: ServiceError) -> Self {
        match error {
            ServiceError::McpError(data) => CallError::Server {
                code: data.code.0,
                message: data.message.to_string(),
            },
            ServiceError::TransportClosed => CallError::Closed,
            ServiceError::Timeout { timeout } => CallError::Timeout(timeout),
            ServiceError::Cancelled { .. } => CallError::Aborted,
            ServiceError::TransportSend(_) => CallError::Closed,
            ServiceError::UnexpectedResponse => {
                CallError::Protocol("unexpected response type".to_owned())
            }
            other => CallError::Protocol(other.to_string()),
        }
    }
}

/// Why connecting to a server failed. `Display` gives the texts the package has always logged
/// (`MCP server '<name>' failed to start: <this>`); the variants keep the cause apart for code
/// that needs it.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// A `secret://`, `${VAR}` or SecretRef value could not be resolved. A configuration
    /// problem: the server is not restarted for it.
    #[error("{0}")]
    Secret(#[from] SecretError),
    /// The server's config cannot be used as it is (a missing command or url).
    #[error("{0}")]
    Config(String),
    /// The server process could not be started.
    #[error("{0}")]
    Spawn(#[source] std::io::Error),
    /// The `initialize` handshake failed or timed out; `stderr` holds the server's last lines.
    #[error("{}", with_stderr(cause, stderr))]
    Initialize { cause: String, stderr: Vec<String> },
    /// The first `tools/list` failed or timed out.
    #[error("{}", with_stderr(cause, stderr))]
    ToolsList { cause: String, stderr: Vec<String> },
    /// A remote server could not be reached or refused the session (the message names the URL
    /// without its query and says what happened).
    #[error("{0}")]
    Http(String),
    /// The manager shut down while the connection was being made.
    #[error("shut down while connecting")]
    Shutdown,
}

impl ConnectError {
    /// Whether the restart policy applies (a secret problem waits for a config change).
    pub fn retryable(&self) -> bool {
        !matches!(self, ConnectError::Secret(_) | ConnectError::Shutdown)
    }
}

fn with_stderr(cause: &str, lines: &[String]) -> String {
    if lines.is_empty() {
        return cause.to_owned();
    }
    format!("{cause}\nLast stderr lines:\n{}", lines.join("\n"))
}
