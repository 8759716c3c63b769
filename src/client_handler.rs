//! The client side of one MCP session, as rmcp sees it: what we tell the server about ourselves,
//! and where its notifications go (progress to the waiting call, list changes to the supervisor).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::ClientHandler;
#[allow(deprecated)] // servers on protocol versions before SEP-2577 still send logging
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, JsonRpcMessage, JsonRpcNotification,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, ServerNotification,
};
use rmcp::service::{NotificationContext, RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
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

    fn route(&self, params: &ProgressNotificationParam) {
        let routes = self.routes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(sink) = routes.get(&params.progress_token) {
            let _ = sink.send(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message.clone(),
            });
        }
    }
}

/// Wraps a transport so progress notifications are routed in wire order, as they are read.
///
/// rmcp hands notifications to the handler on tasks of their own, so a handler-side route can
/// lose the race against the response that follows the last progress notification. Routing in
/// `receive()` puts every progress update in the call's channel before the response is even
/// seen by rmcp.
pub struct ProgressTap<T> {
    inner: T,
    progress: Arc<ProgressRouter>,
}

impl<T> ProgressTap<T> {
    pub fn new(inner: T, progress: Arc<ProgressRouter>) -> Self {
        Self { inner, progress }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for ProgressTap<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(JsonRpcNotification {
            notification: ServerNotification::ProgressNotification(progress),
            ..
        }) = &message
        {
            self.progress.route(&progress.params);
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[derive(Clone)]
pub struct SessionHandler {
    server: String,
    tools_changed: Arc<Notify>,
    log: Log,
}

impl SessionHandler {
    pub fn new(server: &str, tools_changed: Arc<Notify>, log: Log) -> Self {
        Self {
            server: server.to_owned(),
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
