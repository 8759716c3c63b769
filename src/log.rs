//! Where the manager's messages go.
//!
//! The core never prints: every message goes to a [`LogSink`] (the napi layer forwards it to the
//! JS `logger`), after passing through the manager's [`Redactor`] so that no resolved secret value
//! reaches a log line. Each message is also emitted as a `tracing` event for Rust embedders.

use std::sync::Arc;

use crate::secrets::Redactor;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// Receives finished, already-redacted log lines.
pub trait LogSink: Send + Sync {
    fn log(&self, level: Level, message: &str);

    /// Whether lines of `level` go anywhere; lets hot paths skip formatting them.
    fn wants(&self, _level: Level) -> bool {
        true
    }
}

/// Discards everything (the default when the host passes no logger).
pub struct NullSink;

impl LogSink for NullSink {
    fn log(&self, _level: Level, _message: &str) {}

    fn wants(&self, _level: Level) -> bool {
        false
    }
}

/// A sink plus the redactor every line goes through. Cheap to clone.
#[derive(Clone)]
pub struct Log {
    sink: Arc<dyn LogSink>,
    redactor: Redactor,
}

impl Log {
    pub fn new(sink: Arc<dyn LogSink>, redactor: Redactor) -> Self {
        Self { sink, redactor }
    }

    pub fn null() -> Self {
        Self::new(Arc::new(NullSink), Redactor::default())
    }

    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    pub fn emit(&self, level: Level, message: &str) {
        let message = self.redactor.redact(message);
        match level {
            Level::Debug => tracing::debug!(target: "openclaw_mcp_native", "{message}"),
            Level::Info => tracing::info!(target: "openclaw_mcp_native", "{message}"),
            Level::Warn => tracing::warn!(target: "openclaw_mcp_native", "{message}"),
            Level::Error => tracing::error!(target: "openclaw_mcp_native", "{message}"),
        }
        self.sink.log(level, &message);
    }

    pub fn debug(&self, message: &str) {
        self.emit(Level::Debug, message)
    }

    /// A debug line built only when something listens (the sink or a tracing subscriber):
    /// for per-call lines on the tool-call path.
    pub fn debug_with(&self, message: impl FnOnce() -> String) {
        if self.sink.wants(Level::Debug)
            || tracing::enabled!(target: "openclaw_mcp_native", tracing::Level::DEBUG)
        {
            self.emit(Level::Debug, &message())
        }
    }
    pub fn info(&self, message: &str) {
        self.emit(Level::Info, message)
    }
    pub fn warn(&self, message: &str) {
        self.emit(Level::Warn, message)
    }
    pub fn error(&self, message: &str) {
        self.emit(Level::Error, message)
    }
}
