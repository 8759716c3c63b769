//! How the manager reaches a server: a local child process over stdio, or a remote server over
//! Streamable HTTP or legacy SSE.

pub mod http;
pub mod net;
pub mod orphan_guard;
pub mod remote;
pub mod sse;
pub mod sse_events;
pub mod stdio;
