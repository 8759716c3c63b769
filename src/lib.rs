//! `@openclaw/mcp-native`: connects an agent gateway to MCP servers and hands it their tools,
//! with every result wrapped as untrusted content.
//!
//! Everything here but `napi` (the binding) is plain Rust (`cargo test --no-default-features`
//! runs it without Node). Data flows one way: [`config`] → [`manager`] → one [`supervisor`] per
//! server → its [`session`] → [`transport`] → rmcp; a tool call comes back through [`bridge`]
//! (result text), the [redactor](secrets::Redactor) (no secret reaches the model),
//! [`security`] (the untrusted-content wrapper) and [`tool_result`] (the contract's shapes).

pub mod atomic_file;
pub mod bridge;
pub mod config;
pub mod digest;
pub mod doctor;
pub mod error;
pub mod events;
pub mod gateway;
pub mod heap;
pub mod hooks;
pub mod host_env;
pub mod http_client;
pub mod js_text;
pub mod log;
pub mod manager;
pub mod oauth;
pub mod options;
pub mod parallel;
pub mod policy;
pub mod runtime;
pub mod secrets;
pub mod security;
pub mod server;
pub mod session;
pub mod status;
pub mod supervisor;
pub mod tool_result;
pub mod transport;

#[cfg(feature = "node")]
mod napi;

#[cfg(feature = "node")]
mod allocator;

/// See [`allocator`]: mimalloc for small blocks, the system allocator for large ones.
#[cfg(feature = "node")]
#[global_allocator]
static ALLOCATOR: allocator::AddonAllocator = allocator::AddonAllocator;
