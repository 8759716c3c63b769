//! Errors as values with a kind. The texts are the ones OpenClaw's TypeScript module produced
//! (through the TypeScript MCP SDK), so a gateway that matches on them keeps working.

use std::time::Duration;

use rmcp::service::ServiceError;

use crate::supervisor::Status;

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
