//! One server's life: the handle everyone reads ([`Server`]: config, published state, tool
//! calls), the loop that keeps it running ([`supervise`]: connect, watch, restart with backoff,
//! shut down) and connecting ([`connect`](connect::connect): secrets, transport, session,
//! first `tools/list`).

mod connect;
mod metrics;
mod server;
mod supervise;
mod task_call;
mod tool_cache;

pub use metrics::{LATENCY_WINDOW, MetricsReading, Outcome, ServerMetrics, StartupTimings};
pub use server::{Builtin, RuntimeOptions, Server, Snapshot, ToolEntry};
pub use supervise::{SuperviseContext, restart_delay, supervise};
