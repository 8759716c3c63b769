//! What one server has done since the manager started, for `getMetrics()`: its tool calls by
//! outcome, the durations of the last [`LATENCY_WINDOW`] of them, its restarts, its last error
//! and the timings of its last successful connect. Bounded: counters, a fixed ring, one string.
//! (The stderr lines are the transport's [`StderrTail`](crate::transport::stdio::StderrTail),
//! kept by the server across restarts.)

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many of the latest call durations the percentiles are taken over.
pub const LATENCY_WINDOW: usize = 1024;

/// The last [`LATENCY_WINDOW`] durations (ms), oldest overwritten first.
#[derive(Debug, Clone)]
pub struct LatencyRing {
    values: Vec<u64>,
    capacity: usize,
    /// Where the next value goes once the ring is full.
    next: usize,
}

impl Default for LatencyRing {
    fn default() -> Self {
        Self::with_capacity(LATENCY_WINDOW)
    }
}

impl LatencyRing {
    /// A ring keeping the last `capacity` values (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            // Grown as calls come: an idle server (the RSS bench's row) pays nothing for it.
            values: Vec::new(),
            capacity,
            next: 0,
        }
    }

    pub fn push(&mut self, value: u64) {
        if self.values.len() < self.capacity {
            self.values.push(value);
        } else {
            self.values[self.next] = value;
            self.next = (self.next + 1) % self.capacity;
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.values.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The `q` quantiles (each 0..=1) of the values kept, by nearest rank (the smallest value
    /// with at least `q` of the values at or below it); `None` when empty.
    pub fn quantiles<const N: usize>(&self, qs: [f64; N]) -> Option<[u64; N]> {
        if self.values.is_empty() {
            return None;
        }
        let mut sorted = self.values.clone();
        sorted.sort_unstable();
        Some(qs.map(|q| nearest_rank(&sorted, q)))
    }
}

/// The nearest-rank `q` quantile of `sorted` (not empty).
fn nearest_rank(sorted: &[u64], q: f64) -> u64 {
    let n = sorted.len();
    let rank = (q.clamp(0.0, 1.0) * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

/// How long each step of a successful connect took, in ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StartupTimings {
    /// The process spawned (stdio), the HTTP client and transport set up (Streamable HTTP: its
    /// TCP/TLS connection is made by the first request, so it counts in `initialize_ms`), or
    /// the event stream open (legacy SSE).
    pub connect_ms: f64,
    /// The opening handshake: `initialize` (and `notifications/initialized`) or
    /// `server/discover`.
    pub initialize_ms: f64,
    /// The first `tools/list`, every page.
    pub list_ms: f64,
}

/// A call's outcome, as the `toolCall` event names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Error,
    Timeout,
    Aborted,
    Denied,
}

impl Outcome {
    /// The event's word for it (`ok`, `error`, `timeout`, `aborted`, `denied`); anything else
    /// is an error.
    pub fn from_event(outcome: &str) -> Self {
        match outcome {
            "ok" => Outcome::Ok,
            "timeout" => Outcome::Timeout,
            "aborted" => Outcome::Aborted,
            "denied" => Outcome::Denied,
            _ => Outcome::Error,
        }
    }
}

/// A server's metrics as they stand (see [`ServerMetrics::read`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricsReading {
    pub calls: u64,
    pub errors: u64,
    pub timeouts: u64,
    pub aborts: u64,
    pub denied: u64,
    /// Median and 99th percentile of the last [`LATENCY_WINDOW`] call durations (ms).
    pub p50_ms: Option<u64>,
    pub p99_ms: Option<u64>,
    pub restarts: u64,
    /// As recorded (masked when recorded; the reader masks again with what is known now).
    pub last_error: Option<String>,
    pub startup: Option<StartupTimings>,
}

/// One server's live counters. Every method is short and never waits on I/O.
#[derive(Debug, Default)]
pub struct ServerMetrics {
    calls: AtomicU64,
    errors: AtomicU64,
    timeouts: AtomicU64,
    aborts: AtomicU64,
    denied: AtomicU64,
    restarts: AtomicU64,
    durations: Mutex<LatencyRing>,
    last_error: Mutex<Option<String>>,
    startup: Mutex<Option<StartupTimings>>,
}

impl ServerMetrics {
    /// One tool call ended with `outcome` after `duration_ms`.
    pub fn record_call(&self, outcome: Outcome, duration_ms: u64) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let counter = match outcome {
            Outcome::Ok => None,
            Outcome::Error => Some(&self.errors),
            Outcome::Timeout => Some(&self.timeouts),
            Outcome::Aborted => Some(&self.aborts),
            Outcome::Denied => Some(&self.denied),
        };
        if let Some(counter) = counter {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        self.durations
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(duration_ms);
    }

    /// The supervisor started the server again (after a crash, a lost connection or a failed
    /// start).
    pub fn record_restart(&self) {
        self.restarts.fetch_add(1, Ordering::Relaxed);
    }

    /// `message`, already masked, is the server's latest error.
    pub fn record_error(&self, message: String) {
        *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(message);
    }

    pub fn record_startup(&self, timings: StartupTimings) {
        *self.startup.lock().unwrap_or_else(|p| p.into_inner()) = Some(timings);
    }

    pub fn read(&self) -> MetricsReading {
        let quantiles = self
            .durations
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .quantiles([0.5, 0.99]);
        MetricsReading {
            calls: self.calls.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            timeouts: self.timeouts.load(Ordering::Relaxed),
            aborts: self.aborts.load(Ordering::Relaxed),
            denied: self.denied.load(Ordering::Relaxed),
            p50_ms: quantiles.map(|[p50, _]| p50),
            p99_ms: quantiles.map(|[_, p99]| p99),
            restarts: self.restarts.load(Ordering::Relaxed),
            last_error: self
                .last_error
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            startup: *self.startup.lock().unwrap_or_else(|p| p.into_inner()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_ring_has_no_quantiles() {
        let ring = LatencyRing::default();
        assert!(ring.is_empty());
        assert_eq!(ring.quantiles([0.5, 0.99]), None);
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let mut ring = LatencyRing::default();
        for v in (1..=100).rev() {
            ring.push(v);
        }
        assert_eq!(
            ring.quantiles([0.5, 0.99, 1.0, 0.0]),
            Some([50, 99, 100, 1])
        );
        let mut one = LatencyRing::default();
        one.push(7);
        assert_eq!(one.quantiles([0.5, 0.99]), Some([7, 7]));
        let mut two = LatencyRing::default();
        two.push(10);
        two.push(1);
        assert_eq!(two.quantiles([0.5, 0.99]), Some([1, 10]));
    }

    #[test]
    fn the_ring_keeps_only_the_latest_values() {
        let mut ring = LatencyRing::with_capacity(4);
        for v in [100, 100, 100, 100, 1, 2, 3] {
            ring.push(v);
        }
        assert_eq!(ring.len(), 4);
        // One 100 is left: 1, 2, 3, 100.
        assert_eq!(ring.quantiles([0.5, 1.0]), Some([2, 100]));
        ring.push(4);
        assert_eq!(ring.quantiles([1.0]), Some([4]));
    }

    #[test]
    fn the_default_ring_is_bounded_at_the_window() {
        let mut ring = LatencyRing::default();
        for v in 0..(LATENCY_WINDOW as u64 * 3) {
            ring.push(v);
        }
        assert_eq!(ring.len(), LATENCY_WINDOW);
        let low = LATENCY_WINDOW as u64 * 2;
        assert_eq!(ring.quantiles([0.0]), Some([low]));
    }

    #[test]
    fn calls_are_counted_by_outcome() {
        let metrics = ServerMetrics::default();
        for (outcome, ms) in [
            ("ok", 5),
            ("ok", 1),
            ("error", 3),
            ("timeout", 300),
            ("aborted", 2),
            ("denied", 0),
            ("something else", 4),
        ] {
            metrics.record_call(Outcome::from_event(outcome), ms);
        }
        metrics.record_restart();
        metrics.record_error("boom".to_owned());
        let read = metrics.read();
        assert_eq!(
            (
                read.calls,
                read.errors,
                read.timeouts,
                read.aborts,
                read.denied
            ),
            (7, 2, 1, 1, 1)
        );
        assert_eq!((read.p50_ms, read.p99_ms), (Some(3), Some(300)));
        assert_eq!(read.restarts, 1);
        assert_eq!(read.last_error.as_deref(), Some("boom"));
        assert_eq!(read.startup, None);
    }

    #[test]
    fn no_calls_no_percentiles() {
        let read = ServerMetrics::default().read();
        assert_eq!((read.calls, read.p50_ms, read.p99_ms), (0, None, None));
    }
}
