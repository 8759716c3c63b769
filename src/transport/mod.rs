//! How the manager reaches a server: a local child process over stdio, or a remote server over
//! Streamable HTTP or legacy SSE.

pub mod orphan_guard;
pub mod remote;
pub mod stdio;
