//! The client side of one MCP session, as rmcp sees it: what we tell the server about ourselves,
//! and where its notifications go (progress to the waiting call, list changes to the supervisor).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::ClientHandler;
#[allow(deprecated)] // servers on protocol versions before SEP-2577 still send logging
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
    ProtocolVersion,
};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::{Notify, mpsc};

use crate::log::Log;

/// The protocol version we ask for; servers negotiate down to 2025-06-18, 2025-03-26 or
/// 2024-11-05. (rmcp's own default would put 2026-07-28 inside a legacy `initialize`.)
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// What the original client called itself.
pub const CLIENT_NAME: &str = "openclaw-mcp";
pub const CLIENT_VERSION: &str = "1.0.0";

/// One progress notification for a call in flight.
#[derive(Debug, Clone)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Routes `notifications/progress` to the call that owns the token.
#[derive(Default)]
pub struct ProgressRouter {
    routes: Mutex<HashMap<ProgressToken, mpsc::UnboundedSender<Progress>>>,
}

impl ProgressRouter {
    pub fn register(&self, token: ProgressToken, sink: mpsc::UnboundedSender<Progress>) {
        self.routes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(token, sink);
    }

    pub fn unregister(&self, token: &ProgressToken) {
        self.routes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(token);
    }

    fn route(&self, params: ProgressNotificationParam) {
        let routes = self.routes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(sink) = routes.get(&params.progress_token) {
            let _ = sink.send(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }
}

pub struct SessionHandler {
    server: String,
    progress: Arc<ProgressRouter>,
    tools_changed: Arc<Notify>,
    log: Log,
}

impl SessionHandler {
    pub fn new(
        server: &str,
        progress: Arc<ProgressRouter>,
        tools_changed: Arc<Notify>,
        log: Log,
    ) -> Self {
        Self {
            server: server.to_owned(),
            progress,
            tools_changed,
            log,
        }
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

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.route(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
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
        self.log
            .debug(&format!("MCP server '{}' log: {data}", self.server));
    }
}
