//! How the manager reaches a server: a local child process over stdio, or a remote server over
//! Streamable HTTP or legacy SSE. A transport only moves messages (and, for stdio, owns the
//! server process); the [session](crate::session) speaks the protocol over it. Each transport
//! takes its own small spec, never the config model.

pub mod bearer;
pub mod call_lane;
pub mod call_reply;
pub mod child_env;
pub mod header_params;
pub mod http;
#[cfg(windows)]
pub mod job_object;
pub mod json_peek;
pub mod listing_bound;
pub mod net;
pub mod orphan_guard;
#[cfg(unix)]
pub mod pipe_reader;
pub mod sse;
pub mod sse_events;
pub mod stdin_writer;
pub mod stdio;
pub mod stdio_lines;
pub mod task_hints;
pub mod woken_here;
