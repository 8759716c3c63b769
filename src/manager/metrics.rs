//! `getMetrics()`, `metricsText()` and `ping(server)`: what each configured server has done, as
//! the host's dashboards and health checks read it.

use super::Manager;
use crate::error::CallError;
use crate::status::Status;
use crate::supervisor::MetricsReading;

/// One configured server's metrics (`getMetrics()[i]`), every text masked.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsEntry {
    pub server: String,
    pub status: Status,
    /// The transport of the last successful connection.
    pub transport: Option<&'static str>,
    pub tool_count: usize,
    /// The counters, percentiles, restarts, last error (masked) and connect timings.
    pub counts: MetricsReading,
    /// Since the current session became ready; 0 without a session.
    pub uptime_ms: u64,
    /// Stdio servers: the last lines of stderr, oldest first; remote servers: none.
    pub stderr_tail: Vec<String>,
}

impl MetricsEntry {
    /// The server is ready (its tools are offered; an idle server's too).
    pub fn up(&self) -> bool {
        self.status == Status::Ready
    }
}

impl Manager {
    /// Every configured server's metrics, in config order (as `status()`).
    pub fn metrics(&self) -> Vec<MetricsEntry> {
        let redactor = self.log.redactor();
        // Masked again with every secret known now (a later start may have registered more).
        let mask = |text: String| match redactor.redact(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(masked) => masked,
        };
        self.roster()
            .current()
            .map(|(_, server)| {
                let snap = server.snapshot();
                let mut counts = server.metrics().read();
                counts.last_error = counts.last_error.map(mask);
                let uptime_ms = match snap.ready_since {
                    Some(since) if snap.running && snap.status == Status::Ready => {
                        since.elapsed().as_millis() as u64
                    }
                    _ => 0,
                };
                MetricsEntry {
                    server: server.name().to_owned(),
                    status: snap.status,
                    transport: snap.transport,
                    tool_count: snap.tools.len(),
                    counts,
                    uptime_ms,
                    stderr_tail: server.stderr_tail().into_iter().map(mask).collect(),
                }
            })
            .collect()
    }

    /// [`Self::metrics`] in the Prometheus text format (see [`super::prometheus`]).
    pub fn metrics_text(&self) -> String {
        super::prometheus::render(&self.metrics())
    }

    /// `ping(server)`: the round trip of an MCP `ping` in ms. An idle or lazy server with no
    /// process is started for it, as a tool call starts it. The error names the server and
    /// says why (unknown, not ready, no answer), masked.
    pub async fn ping(&self, server: &str) -> Result<f64, String> {
        let Some((_, found)) = self.roster().named(server).map(|(s, f)| (s, f.clone())) else {
            return Err(format!("ping: no MCP server named '{server}'"));
        };
        let masked = |text: String| self.log.redactor().redact(&text).into_owned();
        // Ends with the manager's shutdown.
        let cancel = self.shutdown.child_token();
        match found.ping(&cancel).await {
            Ok(ms) => Ok(ms),
            Err(error @ CallError::NotReady { .. }) => Err(masked(format!("ping: {error}"))),
            Err(CallError::Aborted) => Err(format!(
                "ping: MCP server '{server}': the manager was shut down"
            )),
            Err(error) => Err(masked(format!("ping: MCP server '{server}': {error}"))),
        }
    }
}
