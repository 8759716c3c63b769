//! The server side: tools served as an MCP server (`McpServerHost`), a second data flow beside
//! the client manager's: a [`provider::ToolProvider`] (the host's JS tools, or anything else
//! with tools) → [`handler`] (rmcp's `ServerHandler`: argument checks, time limits,
//! cancellation, progress and log notices, [`limits`]) → a transport ([`stdio`] over any byte
//! streams, this process's own through [`process_stdio`]; [`http`] Streamable HTTP on hyper). Nothing here knows Node or the client manager.

pub mod catalog;
pub mod handler;
pub mod http;
pub mod limits;
pub mod options;
pub mod process_stdio;
pub mod provider;
pub mod stdio;
pub mod validate;

#[cfg(test)]
mod tests;
