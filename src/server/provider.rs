//! What a source of tools gives the MCP server ([`super::handler`]): its tools, and a call of
//! one of them with a [`CallContext`] (cancellation, progress, log messages, the request id).
//! The JS tools of `McpServerHost` are one provider (`napi/server_host.rs`); anything else that
//! has tools (a gateway re-serving a manager's tools) can be another. Providers know nothing of
//! rmcp's transports or sessions; the handler validates arguments, bounds the call, applies the
//! response rules and sends what the context collected.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::model::{
    CallToolResult, CompleteRequestMethod, CompleteRequestParams, CompleteResult, ContentBlock,
    GetPromptRequestMethod, GetPromptResult, ListPromptsRequestMethod,
    ListResourceTemplatesRequestMethod, ListResourcesRequestMethod, Prompt,
    ReadResourceRequestMethod, ReadResourceResult, Resource, ResourceTemplate,
    SubscribeRequestMethod, Tool, UnsubscribeRequestMethod,
};
use serde_json::Value;

use super::catalog::{CatalogFuture, Offers, not_served};
use crate::config::values::kind_in_words;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub type JsonObject = serde_json::Map<String, Value>;

/// A call's outcome: a result (which may itself say `isError`), or why the tool failed (sent as
/// an `isError` result with that text).
pub type CallFuture = BoxFuture<'static, Result<CallToolResult, String>>;

pub trait ToolProvider: Send + Sync + 'static {
    /// Every tool, in the order `tools/list` gives them.
    fn tools(&self) -> Vec<Tool>;

    /// One tool by name.
    fn tool(&self, name: &str) -> Option<Tool> {
        self.tools().into_iter().find(|t| t.name == name)
    }

    /// This tool's own time limit, if it has one (else the server's).
    fn timeout(&self, _name: &str) -> Option<Duration> {
        None
    }

    /// Runs `name` with `args` (already checked against its `inputSchema`). Dropping the future
    /// abandons the call; `ctx.cancel` says why.
    fn call(&self, name: &str, args: JsonObject, ctx: CallContext) -> CallFuture;

    // Besides tools (see `super::catalog`): nothing, unless a provider says otherwise. A
    // method is called only while `offers()` says its capability is served.

    /// What else the provider serves now (asked at each `initialize` and each such request).
    fn offers(&self) -> Offers {
        Offers::default()
    }

    /// Every resource, in the order `resources/list` gives them.
    fn list_resources(&self) -> CatalogFuture<Vec<Resource>> {
        not_served::<ListResourcesRequestMethod, _>()
    }

    fn list_resource_templates(&self) -> CatalogFuture<Vec<ResourceTemplate>> {
        not_served::<ListResourceTemplatesRequestMethod, _>()
    }

    fn read_resource(&self, _uri: String) -> CatalogFuture<ReadResourceResult> {
        not_served::<ReadResourceRequestMethod, _>()
    }

    fn list_prompts(&self) -> CatalogFuture<Vec<Prompt>> {
        not_served::<ListPromptsRequestMethod, _>()
    }

    fn get_prompt(
        &self,
        _name: String,
        _arguments: Option<JsonObject>,
    ) -> CatalogFuture<GetPromptResult> {
        not_served::<GetPromptRequestMethod, _>()
    }

    fn complete(&self, _request: CompleteRequestParams) -> CatalogFuture<CompleteResult> {
        not_served::<CompleteRequestMethod, _>()
    }

    /// One more subscriber of `uri`'s updates (the handler calls it once per session and URI,
    /// and [`Self::unsubscribe`] once for each that succeeded, however the session ends). The
    /// provider then calls [`super::handler::Server::resource_updated`] when `uri` changes.
    fn subscribe(&self, _uri: String) -> CatalogFuture<()> {
        not_served::<SubscribeRequestMethod, _>()
    }

    /// One subscriber of `uri` fewer.
    fn unsubscribe(&self, _uri: String) -> CatalogFuture<()> {
        not_served::<UnsubscribeRequestMethod, _>()
    }
}

/// What a call gets besides its arguments.
pub struct CallContext {
    pub cancel: Cancel,
    /// The JSON-RPC id of the `tools/call` request, as JSON text (`7`, `"abc"`).
    pub request_id: String,
    pub notices: Notices,
}

/// A call's cancellation, with the reason it was cancelled.
#[derive(Clone, Debug, Default)]
pub struct Cancel {
    token: CancellationToken,
    reason: Arc<OnceLock<String>>,
}

impl Cancel {
    /// Cancelled with `parent` (the request's own token) as well as by [`Cancel::cancel`].
    pub fn child_of(parent: &CancellationToken) -> Self {
        Self {
            token: parent.child_token(),
            reason: Arc::default(),
        }
    }

    /// Cancels with `reason` (the first reason given is kept).
    pub fn cancel(&self, reason: impl Into<String>) {
        let _ = self.reason.set(reason.into());
        self.token.cancel();
    }

    pub fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }

    pub async fn cancelled(&self) {
        self.token.cancelled().await
    }

    /// Why it was cancelled: the reason given, or else the request's own end (the client's
    /// `notifications/cancelled`, its HTTP request closed, its session ended).
    pub fn reason(&self) -> String {
        self.reason
            .get()
            .cloned()
            .unwrap_or_else(|| "the client cancelled the request or went away".to_owned())
    }

    pub fn token(&self) -> &CancellationToken {
        &self.token
    }
}

/// The levels of `notifications/message`, least severe first (RFC 5424's, as MCP names them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    pub const NAMES: [&str; 8] = [
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ];
    const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    pub fn parse(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .position(|n| *n == name)
            .map(|i| Self::ALL[i])
    }

    pub fn from_index(index: u8) -> Option<Self> {
        Self::ALL.get(index as usize).copied()
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// What a call reports while it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    Log {
        level: LogLevel,
        data: Value,
    },
    /// A log message that is not the tool's own but came in during the call (a gateway's
    /// upstream server's). Only a 2026-07-28 request that asked for logs at its level gets it:
    /// sessions get such messages through `Server::log` already.
    Relayed {
        level: LogLevel,
        logger: Option<String>,
        data: Value,
    },
}

/// Where a call's notices go: in order, from any thread, without waiting (the handler sends
/// them to the client). After the call ends they are dropped.
#[derive(Clone, Debug)]
pub struct Notices {
    tx: Arc<Mutex<Option<mpsc::UnboundedSender<Notice>>>>,
}

impl Notices {
    pub fn channel() -> (Self, mpsc::UnboundedReceiver<Notice>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Self {
                tx: Arc::new(Mutex::new(Some(tx))),
            },
            rx,
        )
    }

    /// Notices that go nowhere.
    pub fn none() -> Self {
        Self {
            tx: Arc::new(Mutex::new(None)),
        }
    }

    /// `false` once the call has ended.
    pub fn send(&self, notice: Notice) -> bool {
        let tx = self.tx.lock().unwrap_or_else(|p| p.into_inner());
        tx.as_ref().is_some_and(|tx| tx.send(notice).is_ok())
    }

    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        self.send(Notice::Progress {
            progress,
            total,
            message,
        })
    }

    pub fn log(&self, level: LogLevel, data: Value) -> bool {
        self.send(Notice::Log { level, data })
    }

    pub fn relayed_log(&self, level: LogLevel, logger: Option<String>, data: Value) -> bool {
        self.send(Notice::Relayed {
            level,
            logger,
            data,
        })
    }

    /// Ends the call's notices: later ones are dropped, and the receiver ends once it has taken
    /// those already sent.
    pub fn close(&self) {
        self.tx.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

/// What a tool handler returned, read as a result: a string is one text item; an object is
/// `{ content?: ContentBlock[], structuredContent?: object, isError?: boolean }` (one of them at
/// least). Anything else is an error naming what was wrong.
pub fn result_from_json(value: Value) -> Result<CallToolResult, String> {
    const EXPECTED: &str = "expected { content: [...], structuredContent?, isError? } or a string";
    let mut object = match value {
        Value::String(text) => return Ok(CallToolResult::success(vec![ContentBlock::text(text)])),
        Value::Object(object) => object,
        Value::Null => return Err(format!("the tool returned nothing; {EXPECTED}")),
        other => {
            return Err(format!(
                "the tool returned {}; {EXPECTED}",
                kind_in_words(&other)
            ));
        }
    };
    let content = match object.remove("content") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(items),
        Some(other) => {
            return Err(format!(
                "the tool returned content that is {}, not an array",
                kind_in_words(&other)
            ));
        }
    };
    let structured = match object.remove("structuredContent") {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(Value::Object(o)),
        Some(other) => {
            return Err(format!(
                "the tool returned structuredContent that is {}, not an object",
                kind_in_words(&other)
            ));
        }
    };
    let is_error = match object.remove("isError") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(b),
        Some(other) => {
            return Err(format!(
                "the tool returned isError that is {}, not a boolean",
                kind_in_words(&other)
            ));
        }
    };
    if content.is_none() && structured.is_none() {
        return Err(format!(
            "the tool returned an object without content or structuredContent; {EXPECTED}"
        ));
    }
    let mut blocks = Vec::new();
    for (i, item) in content.unwrap_or_default().into_iter().enumerate() {
        blocks.push(content_block(item).map_err(|why| format!("content[{i}]: {why}"))?);
    }
    let mut result = if is_error == Some(true) {
        CallToolResult::error(blocks)
    } else {
        CallToolResult::success(blocks)
    };
    result.structured_content = structured;
    Ok(result)
}

/// One content item, checked the way a client will read it.
fn content_block(item: Value) -> Result<ContentBlock, String> {
    let Value::Object(fields) = &item else {
        return Err(format!("{} is not a content item", kind_in_words(&item)));
    };
    let kind = match fields.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        _ => return Err("no type (text, image, audio, resource or resource_link)".to_owned()),
    };
    if !matches!(
        kind.as_str(),
        "text" | "image" | "audio" | "resource" | "resource_link"
    ) {
        return Err(format!(
            "unknown type '{kind}' (text, image, audio, resource or resource_link)"
        ));
    }
    serde_json::from_value::<ContentBlock>(item).map_err(|e| format!("{kind} item: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_and_content_are_results() {
        let r = result_from_json(json!("hello")).unwrap();
        assert_eq!(r.content[0].as_text().unwrap().text, "hello");
        assert_eq!(r.is_error, Some(false));
        let r = result_from_json(json!({
            "content": [{ "type": "text", "text": "a" }, { "type": "image", "data": "AA==", "mimeType": "image/png" }],
            "isError": true,
        }))
        .unwrap();
        assert_eq!(r.content.len(), 2);
        assert_eq!(r.is_error, Some(true));
        let r = result_from_json(json!({ "structuredContent": { "n": 1 } })).unwrap();
        assert!(r.content.is_empty());
        assert_eq!(r.structured_content, Some(json!({ "n": 1 })));
    }

    #[test]
    fn garbage_is_named() {
        for (value, says) in [
            (json!(null), "returned nothing"),
            (json!(42), "returned a number"),
            (json!([1]), "returned an array"),
            (
                json!({ "text": "x" }),
                "without content or structuredContent",
            ),
            (json!({ "content": "x" }), "content that is a string"),
            (
                json!({ "content": [1] }),
                "content[0]: a number is not a content item",
            ),
            (
                json!({ "content": [{ "text": "x" }] }),
                "content[0]: no type",
            ),
            (
                json!({ "content": [{ "type": "video" }] }),
                "content[0]: unknown type 'video'",
            ),
            (
                json!({ "content": [{ "type": "text" }] }),
                "content[0]: text item: ",
            ),
            (
                json!({ "content": [{ "type": "text", "text": "a" }, { "type": "image", "data": "x" }] }),
                "content[1]: image item",
            ),
            (
                json!({ "content": [], "isError": "yes" }),
                "isError that is a string",
            ),
            (
                json!({ "structuredContent": [1] }),
                "structuredContent that is an array",
            ),
        ] {
            let e = result_from_json(value.clone()).unwrap_err();
            assert!(e.contains(says), "{value}: {e}");
        }
    }

    #[test]
    fn notices_go_in_order_until_closed() {
        let (notices, mut rx) = Notices::channel();
        let other = notices.clone();
        assert!(notices.progress(1.0, Some(2.0), None));
        assert!(other.log(LogLevel::Info, json!("x")));
        notices.close();
        assert!(!other.progress(2.0, None, None));
        assert!(matches!(rx.try_recv(), Ok(Notice::Progress { .. })));
        assert!(matches!(rx.try_recv(), Ok(Notice::Log { .. })));
        assert!(rx.try_recv().is_err());
        assert!(!Notices::none().progress(1.0, None, None));
    }

    #[test]
    fn cancel_keeps_the_first_reason() {
        let parent = CancellationToken::new();
        let cancel = Cancel::child_of(&parent);
        cancel.cancel("timed out");
        cancel.cancel("other");
        assert!(cancel.is_cancelled());
        assert_eq!(cancel.reason(), "timed out");
        let cancel = Cancel::child_of(&parent);
        parent.cancel();
        assert!(cancel.is_cancelled());
        assert_eq!(
            cancel.reason(),
            "the client cancelled the request or went away"
        );
    }

    #[test]
    fn levels_order_and_parse() {
        assert!(LogLevel::Debug < LogLevel::Emergency);
        assert_eq!(LogLevel::parse("warning"), Some(LogLevel::Warning));
        assert_eq!(LogLevel::parse("warn"), None);
        assert_eq!(LogLevel::from_index(7), Some(LogLevel::Emergency));
        assert_eq!(LogLevel::Notice.name(), "notice");
    }
}
