//! What we tell a server about ourselves, and where its notifications go that are not routed
//! on the wire (list changes to the supervisor, log messages to the log).

use std::sync::Arc;

use rmcp::ClientHandler;
#[allow(deprecated)] // the same
use rmcp::model::LoggingLevel;
#[allow(deprecated)] // servers on protocol versions before SEP-2577 still send logging
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::Notify;

use crate::events::{Event, Events};
use crate::log::Log;

/// The protocol version we ask for; servers negotiate down to 2025-06-18, 2025-03-26 or
/// 2024-11-05. (rmcp's own default would put 2026-07-28 inside a legacy `initialize`.)
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// What the original client called itself.
pub const CLIENT_NAME: &str = "openclaw-mcp";
pub const CLIENT_VERSION: &str = "1.0.0";

type Callback = Arc<dyn Fn() + Send + Sync>;

#[derive(Clone)]
pub struct SessionHandler {
    server: String,
    tools_changed: Arc<Notify>,
    resources_changed: Option<Callback>,
    events: Events,
    log: Log,
}

impl SessionHandler {
    pub fn new(server: &str, tools_changed: Arc<Notify>, log: Log) -> Self {
        Self {
            server: server.to_owned(),
            tools_changed,
            resources_changed: None,
            events: Events::default(),
            log,
        }
    }

    /// Sends the server's log messages to `serverLog` listeners too.
    pub fn with_events(mut self, events: Events) -> Self {
        self.events = events;
        self
    }

    /// Runs `f` when the server says its resources changed.
    pub fn on_resources_changed(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.resources_changed = Some(Arc::new(f));
        self
    }
}

impl ClientHandler for SessionHandler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new(CLIENT_NAME, CLIENT_VERSION),
        )
        .with_protocol_version(PROTOCOL_VERSION)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(f) = &self.resources_changed {
            f();
        }
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let data = match &params.data {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        // The server's severity, mapped onto the logger's four levels (notice is info; critical,
        // alert and emergency are errors).
        let message = format!("MCP server '{}' log: {data}", self.server);
        match params.level {
            LoggingLevel::Debug => self.log.debug(&message),
            LoggingLevel::Info | LoggingLevel::Notice => self.log.info(&message),
            LoggingLevel::Warning => self.log.warn(&message),
            _ => self.log.error(&message),
        }
        self.events.emit_with(|| {
            let redactor = self.log.redactor();
            let text = params.data.to_string();
            let data = match redactor.redact(&text) {
                std::borrow::Cow::Borrowed(_) => params.data.clone(),
                std::borrow::Cow::Owned(masked) => {
                    serde_json::from_str(&masked).unwrap_or(serde_json::Value::String(masked))
                }
            };
            Event::ServerLog {
                server: self.server.clone(),
                level: serde_json::to_value(params.level)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                logger: params
                    .logger
                    .as_deref()
                    .map(|l| redactor.redact(l).into_owned()),
                data,
            }
        });
    }
}
