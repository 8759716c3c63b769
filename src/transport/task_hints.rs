//! Tasks (SEP-1686, 2025-11-25) are announced in two places rmcp 3.9's types leave out when
//! they parse a message: the server's `capabilities.tasks.requests.tools.call` in its
//! `initialize` answer and each tool's `execution.taskSupport` in `tools/list`. The transports
//! show each incoming message's bytes here before rmcp parses them; only a message that looks
//! like one of those two answers (a cheap look at its first bytes, then a search for `"task`)
//! is parsed again, so a tool result costs a few hundred bytes of scanning.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

/// How far into a message its kind is looked for.
const HEAD: usize = 256;

/// A tool's `execution.taskSupport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskSupport {
    Forbidden,
    Optional,
    Required,
}

/// What one session's server said about tasks.
#[derive(Debug, Default)]
pub struct TaskHints {
    /// `capabilities.tasks.requests.tools.call` was declared.
    tool_calls: AtomicBool,
    /// `taskSupport` of each listed tool that has one other than `forbidden`.
    tools: Mutex<HashMap<String, TaskSupport>>,
}

impl TaskHints {
    /// Looks at one incoming message.
    pub fn observe(&self, message: &[u8]) {
        use memchr::memmem::Finder;
        use std::sync::LazyLock;
        // Built once: this runs on every line a server sends, tool results included.
        static VERSION: LazyLock<Finder<'static>> =
            LazyLock::new(|| Finder::new(b"\"protocolVersion\""));
        static TOOLS: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"tools\":["));
        static TOOLS_SPACED: LazyLock<Finder<'static>> =
            LazyLock::new(|| Finder::new(b"\"tools\": ["));
        static TASK: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"task"));
        let head = &message[..message.len().min(HEAD)];
        let initialize = VERSION.find(head).is_some();
        let listing = TOOLS.find(head).is_some() || TOOLS_SPACED.find(head).is_some();
        if !(initialize || listing) || TASK.find(message).is_none() {
            return;
        }
        let Ok(value) = serde_json::from_slice::<Value>(message) else {
            return;
        };
        let Some(result) = value.get("result") else {
            return;
        };
        if let Some(caps) = result.get("capabilities") {
            let declared = caps
                .pointer("/tasks/requests/tools/call")
                .is_some_and(Value::is_object);
            self.tool_calls.store(declared, Ordering::Relaxed);
        }
        if let Some(Value::Array(tools)) = result.get("tools") {
            let mut known = self.tools.lock().unwrap_or_else(|p| p.into_inner());
            for tool in tools {
                let Some(name) = tool.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let support = match tool
                    .pointer("/execution/taskSupport")
                    .and_then(Value::as_str)
                {
                    Some("required") => TaskSupport::Required,
                    Some("optional") => TaskSupport::Optional,
                    _ => TaskSupport::Forbidden,
                };
                if support == TaskSupport::Forbidden {
                    known.remove(name);
                } else {
                    known.insert(name.to_owned(), support);
                }
            }
        }
    }

    /// Whether the server can run `tools/call` as a task.
    pub fn server_runs_tool_tasks(&self) -> bool {
        self.tool_calls.load(Ordering::Relaxed)
    }

    /// The `taskSupport` of `tool` as last listed.
    pub fn support(&self, tool: &str) -> TaskSupport {
        self.tools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(tool)
            .copied()
            .unwrap_or(TaskSupport::Forbidden)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_capabilities_and_listings_only() {
        let hints = TaskHints::default();
        hints.observe(br#"{"result":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}}},"jsonrpc":"2.0","id":1}"#);
        assert!(hints.server_runs_tool_tasks());
        hints.observe(br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","execution":{"taskSupport":"required"}},{"name":"b","execution":{"taskSupport":"optional"}},{"name":"c"}]}}"#);
        assert_eq!(hints.support("a"), TaskSupport::Required);
        assert_eq!(hints.support("b"), TaskSupport::Optional);
        assert_eq!(hints.support("c"), TaskSupport::Forbidden);
        // A tool result that mentions tasks is not a listing.
        hints.observe(br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\"tools\":[ \"taskSupport\":\"forbidden\""}]}}"#);
        assert_eq!(hints.support("a"), TaskSupport::Required);
        hints.observe(br#"{"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"x":"task"},"jsonrpc":"2.0","id":1}"#);
        assert!(!hints.server_runs_tool_tasks());
    }
}
