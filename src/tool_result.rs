//! What an agent tool's `execute` resolves with, and what its `onUpdate` receives: the
//! contract's shapes, built here once so every path (a result, a failure, a refused argument,
//! a panic caught in the binding) says the same thing.
//!
//! ```text
//! success:  { content: [{ type: "text", text }],
//!             details: { externalContent: { untrusted: true, source: "mcp_server", server, tool, wrapped: true } } }
//! failure:  { content: [{ type: "text", text: "MCP tool error (<server>/<tool>): <message>" }],
//!             details: { error: true } }
//! progress: { content: [{ type: "text", text }],
//!             details: { progress, total, externalContent: { … as on success } } }
//! ```

use std::fmt::Display;

use serde_json::{Map, Value, json};

/// `source` of every wrapped MCP text.
pub const EXTERNAL_SOURCE: &str = "mcp_server";

/// The contract's failure text.
pub fn tool_error_text(server: &str, tool: &str, message: impl Display) -> String {
    format!("MCP tool error ({server}/{tool}): {message}")
}

/// `execute`'s `params` from the JSON text `JSON.stringify` made of it (`None`: it made none,
/// or `params` was not an object): the arguments object, or why there is none.
pub fn tool_arguments(json: Option<&str>) -> Result<Map<String, Value>, String> {
    const NOT_AN_OBJECT: &str = "must be an object";
    match json.map(serde_json::from_str::<Value>) {
        Some(Ok(Value::Object(map))) => Ok(map),
        Some(Ok(_)) | None => Err(NOT_AN_OBJECT.to_owned()),
        Some(Err(e)) => Err(e.to_string()),
    }
}

/// The failure of a call whose arguments could not be sent.
pub fn bad_arguments(server: &str, tool: &str, why: impl Display) -> ToolCallResult {
    ToolCallResult::error(server, tool, format_args!("tool arguments {why}"))
}

/// Where a wrapped text came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalContent {
    pub server: String,
    pub tool: String,
}

impl ExternalContent {
    pub fn to_json(&self) -> Value {
        json!({
            "untrusted": true,
            "source": EXTERNAL_SOURCE,
            "server": self.server,
            "tool": self.tool,
            "wrapped": true,
        })
    }
}

/// A tool call's outcome: one text part, and either where it came from or that it failed;
/// in rich mode also image parts, the structured content and the server's `isError`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallResult {
    /// The wrapped untrusted-content text, or the failure text.
    pub text: String,
    /// `Some` on success (`details.externalContent`), `None` on failure (`details.error`).
    pub external: Option<ExternalContent>,
    /// Rich mode: what only rich results carry (empty in compat mode).
    pub rich: RichParts,
}

/// The parts of a rich result beyond its wrapped text.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RichParts {
    /// `{ type: 'image', data, mimeType }` parts, after the text part.
    pub images: Vec<crate::bridge::rich::Image>,
    /// `details.structuredContent`.
    pub structured: Option<Value>,
    /// The server flagged the result `isError`: `details.error: true` beside the wrapped text.
    pub server_error: bool,
    /// What the hygiene pass removed, when it removed anything (`details.hygiene`).
    pub hygiene: Option<crate::security::hygiene::Hygiene>,
    /// The enhanced detector's findings (`details.suspicious`), when it runs and finds any.
    pub suspicious: Vec<&'static str>,
    /// The server's result as MCP content, redacted and not wrapped, when the call asked for it
    /// (`CallRequest::passthrough`: a gateway with `wrap: false`) and the server answered.
    pub passthrough: Option<rmcp::model::CallToolResult>,
}

impl ToolCallResult {
    /// A wrapped result of `server`'s `tool`.
    pub fn ok(text: String, server: &str, tool: &str) -> Self {
        Self {
            text,
            external: Some(ExternalContent {
                server: server.to_owned(),
                tool: tool.to_owned(),
            }),
            rich: RichParts::default(),
        }
    }

    /// `MCP tool error (<server>/<tool>): <message>`. The caller redacts `message` when it
    /// may hold a server's words.
    pub fn error(server: &str, tool: &str, message: impl Display) -> Self {
        Self {
            text: tool_error_text(server, tool, message),
            external: None,
            rich: RichParts::default(),
        }
    }

    pub fn is_error(&self) -> bool {
        self.external.is_none()
    }

    /// The JS object, as JSON (the binding builds the same object directly).
    pub fn to_json(&self) -> Value {
        let mut details = match &self.external {
            Some(external) => json!({ "externalContent": external.to_json() }),
            None => json!({ "error": true }),
        };
        if let Some(structured) = &self.rich.structured {
            details["structuredContent"] = structured.clone();
        }
        if self.rich.server_error {
            details["error"] = Value::Bool(true);
        }
        if let Some(hygiene) = &self.rich.hygiene {
            details["hygiene"] = hygiene.to_json();
        }
        if !self.rich.suspicious.is_empty() {
            details["suspicious"] = json!(self.rich.suspicious);
        }
        let mut content = vec![json!({ "type": "text", "text": self.text })];
        for image in &self.rich.images {
            content
                .push(json!({ "type": "image", "data": image.data, "mimeType": image.mime_type }));
        }
        json!({ "content": content, "details": details })
    }
}

/// One `onUpdate` call for a progress notification.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    /// The server's message (or `progress <n>[/<total>]`), wrapped as untrusted content.
    pub text: String,
    pub progress: f64,
    pub total: Option<f64>,
    pub external: ExternalContent,
}

impl ProgressUpdate {
    /// The text a progress notification shows before it is wrapped.
    pub fn raw_text(progress: f64, total: Option<f64>, message: Option<&str>) -> String {
        match (message, total) {
            (Some(message), _) => message.to_owned(),
            (None, Some(total)) => format!("progress {progress}/{total}"),
            (None, None) => format!("progress {progress}"),
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "content": [{ "type": "text", "text": self.text }],
            "details": {
                "progress": self.progress,
                "total": self.total,
                "externalContent": self.external.to_json(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let ok = ToolCallResult::ok("w".into(), "s", "t");
        assert_eq!(
            ok.to_json().to_string(),
            r#"{"content":[{"type":"text","text":"w"}],"details":{"externalContent":{"untrusted":true,"source":"mcp_server","server":"s","tool":"t","wrapped":true}}}"#
        );
        let err = ToolCallResult::error("s", "t", "boom");
        assert!(err.is_error());
        assert_eq!(
            err.to_json().to_string(),
            r#"{"content":[{"type":"text","text":"MCP tool error (s/t): boom"}],"details":{"error":true}}"#
        );
    }

    #[test]
    fn arguments() {
        assert_eq!(tool_arguments(Some(r#"{"a":1}"#)).unwrap()["a"], 1);
        assert_eq!(
            tool_arguments(Some("[1]")).unwrap_err(),
            "must be an object"
        );
        assert_eq!(tool_arguments(None).unwrap_err(), "must be an object");
        assert_eq!(
            bad_arguments("s", "t", "must be an object").text,
            "MCP tool error (s/t): tool arguments must be an object"
        );
    }

    #[test]
    fn progress_text() {
        assert_eq!(
            ProgressUpdate::raw_text(1.0, Some(4.0), None),
            "progress 1/4"
        );
        assert_eq!(ProgressUpdate::raw_text(0.5, None, None), "progress 0.5");
        assert_eq!(ProgressUpdate::raw_text(1.0, None, Some("m")), "m");
        let update = ProgressUpdate {
            text: "x".into(),
            progress: 1.0,
            total: None,
            external: ExternalContent {
                server: "s".into(),
                tool: "t".into(),
            },
        };
        assert_eq!(
            update.to_json().to_string(),
            r#"{"content":[{"type":"text","text":"x"}],"details":{"progress":1.0,"total":null,"externalContent":{"untrusted":true,"source":"mcp_server","server":"s","tool":"t","wrapped":true}}}"#
        );
    }
}
