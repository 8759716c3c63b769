//! What the manager tells a host as it happens: status changes, tool list changes, an audit
//! record of every tool call, and the servers' own log messages. A host listens through an
//! [`EventSink`] (the binding forwards to JS listeners); without one nothing is built.
//! Every text in an event has passed the redactor.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::status::Status;

/// One event, by the name a JS listener subscribes to.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `status`: a server's status changed.
    Status {
        server: String,
        status: Status,
        previous: Status,
        error: Option<String>,
    },
    /// `toolsChanged`: a server's offered tools changed, by agent tool name.
    ToolsChanged {
        server: String,
        added: Vec<String>,
        removed: Vec<String>,
        changed: Vec<String>,
    },
    /// `toolDefinitionChanged`: a tool's definition differs from the approved one (`pinning`).
    ToolDefinitionChanged {
        server: String,
        tool: String,
        /// The fields that differ: `name`, `title`, `description`, `inputSchema`,
        /// `outputSchema`.
        changed: Vec<String>,
        /// Withheld until approved (`pinning: 'enforce'`), or only reported.
        withheld: bool,
    },
    /// `toolFlagged`: the poisoning scan found instructions to the model or hidden text in a
    /// tool's definition (or, with no `tool`, in the server's instructions).
    ToolFlagged {
        server: String,
        tool: Option<String>,
        findings: Vec<String>,
        /// Withheld (`pinning: 'enforce'`), or only reported.
        withheld: bool,
    },
    /// `toolCall`: one tool call ended, whatever its outcome.
    ToolCall(ToolCallRecord),
    /// `serverLog`: a server's `notifications/message`.
    ServerLog {
        server: String,
        level: String,
        logger: Option<String>,
        data: Value,
    },
}

/// The audit record of one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRecord {
    pub server: String,
    pub tool: String,
    pub agent_tool: String,
    pub tool_call_id: String,
    pub duration_ms: u64,
    /// `ok`, `error`, `timeout`, `aborted` or `denied`.
    pub outcome: &'static str,
    pub error: Option<String>,
    /// The enhanced detector's findings in the result (`detection: 'enhanced'`).
    pub suspicious: Vec<&'static str>,
}

/// Which event, without its contents: what a sink is asked whether it wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Status,
    ToolsChanged,
    ToolDefinitionChanged,
    ToolFlagged,
    ToolCall,
    ServerLog,
}

impl EventKind {
    pub const ALL: [EventKind; 6] = [
        EventKind::Status,
        EventKind::ToolsChanged,
        EventKind::ToolCall,
        EventKind::ServerLog,
        EventKind::ToolDefinitionChanged,
        EventKind::ToolFlagged,
    ];

    /// The name listeners subscribe to.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Status => "status",
            EventKind::ToolsChanged => "toolsChanged",
            EventKind::ToolDefinitionChanged => "toolDefinitionChanged",
            EventKind::ToolFlagged => "toolFlagged",
            EventKind::ToolCall => "toolCall",
            EventKind::ServerLog => "serverLog",
        }
    }

    /// The kind listeners subscribe to by `name`.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.name() == name)
    }
}

impl Event {
    pub fn kind(&self) -> EventKind {
        match self {
            Event::Status { .. } => EventKind::Status,
            Event::ToolsChanged { .. } => EventKind::ToolsChanged,
            Event::ToolDefinitionChanged { .. } => EventKind::ToolDefinitionChanged,
            Event::ToolFlagged { .. } => EventKind::ToolFlagged,
            Event::ToolCall(_) => EventKind::ToolCall,
            Event::ServerLog { .. } => EventKind::ServerLog,
        }
    }

    /// The name listeners subscribe to.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// The listener's argument.
    pub fn payload(&self) -> Value {
        match self {
            Event::Status {
                server,
                status,
                previous,
                error,
            } => {
                let mut v = json!({ "server": server, "status": status.as_str(), "previous": previous.as_str() });
                if let Some(error) = error {
                    v["error"] = Value::from(error.as_str());
                }
                v
            }
            Event::ToolsChanged {
                server,
                added,
                removed,
                changed,
            } => {
                json!({ "server": server, "added": added, "removed": removed, "changed": changed })
            }
            Event::ToolDefinitionChanged {
                server,
                tool,
                changed,
                withheld,
            } => {
                json!({ "server": server, "tool": tool, "changed": changed, "withheld": withheld })
            }
            Event::ToolFlagged {
                server,
                tool,
                findings,
                withheld,
            } => {
                let mut v = json!({ "server": server, "findings": findings, "withheld": withheld });
                if let Some(tool) = tool {
                    v["tool"] = Value::from(tool.as_str());
                }
                v
            }
            Event::ToolCall(r) => {
                let kind = if r.outcome == "ok" {
                    "tool.executed"
                } else {
                    "tool.failed"
                };
                let mut v = json!({
                    "type": kind,
                    "server": r.server,
                    "tool": r.tool,
                    "agentTool": r.agent_tool,
                    "toolCallId": r.tool_call_id,
                    "durationMs": r.duration_ms,
                    "outcome": r.outcome,
                });
                if let Some(error) = &r.error {
                    v["error"] = Value::from(error.as_str());
                }
                if !r.suspicious.is_empty() {
                    v["suspicious"] = json!(r.suspicious);
                }
                v
            }
            Event::ServerLog {
                server,
                level,
                logger,
                data,
            } => {
                let mut v = json!({ "server": server, "level": level, "data": data });
                if let Some(logger) = logger {
                    v["logger"] = Value::from(logger.as_str());
                }
                v
            }
        }
    }
}

/// Where events go.
pub trait EventSink: Send + Sync {
    /// Whether anyone listens to `kind` now (when not, no such event is built).
    fn wants(&self, _kind: EventKind) -> bool {
        true
    }
    fn emit(&self, event: Event);
}

/// A manager's event sink, or none (then nothing is built or sent).
#[derive(Clone, Default)]
pub struct Events(Option<Arc<dyn EventSink>>);

impl Events {
    pub fn new(sink: Arc<dyn EventSink>) -> Self {
        Self(Some(sink))
    }

    pub fn enabled(&self) -> bool {
        self.0.is_some()
    }

    /// Whether an event of `kind` would be sent now (a sink that listens to it).
    pub fn wanted(&self, kind: EventKind) -> bool {
        self.0.as_ref().is_some_and(|sink| sink.wants(kind))
    }

    /// Sends the event of `kind` that `make` builds, if anyone listens to it.
    pub fn emit_with(&self, kind: EventKind, make: impl FnOnce() -> Event) {
        if let Some(sink) = &self.0
            && sink.wants(kind)
        {
            let event = make();
            debug_assert_eq!(event.kind(), kind);
            sink.emit(event);
        }
    }
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.enabled() {
            "Events(on)"
        } else {
            "Events(off)"
        })
    }
}
