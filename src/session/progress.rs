//! `notifications/progress` for calls in flight: a router from progress token to the waiting
//! call, and a transport wrapper that routes each notification as it is read. The server's
//! `notifications/message` are handed to its log hook the same way (the `serverLog` event, and
//! a gateway's relay of it to the call under way), so a message the server sent before a
//! result is out before the result is.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

#[allow(deprecated)] // servers on protocol versions before SEP-2577 still send logging
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{
    JsonRpcMessage, JsonRpcNotification, ProgressNotificationParam, ProgressToken,
    ServerNotification,
};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

/// One progress notification for a call in flight.
#[derive(Debug, Clone)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// What a server's log message is handed to, in wire order.
#[allow(deprecated)]
pub type LogHook = Box<dyn Fn(&LoggingMessageNotificationParam) + Send + Sync>;

/// Routes `notifications/progress` to the call that owns the token, and `notifications/message`
/// to the log hook, if one was set.
#[derive(Default)]
pub struct ProgressRouter {
    routes: Mutex<HashMap<ProgressToken, mpsc::UnboundedSender<Progress>>>,
    log_hook: OnceLock<LogHook>,
}

impl ProgressRouter {
    /// Hands every log message to `hook` from now on (the first hook set stays).
    pub fn on_log(&self, hook: LogHook) {
        let _ = self.log_hook.set(hook);
    }

    #[allow(deprecated)]
    fn log(&self, params: &LoggingMessageNotificationParam) {
        if let Some(hook) = self.log_hook.get() {
            hook(params);
        }
    }

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

    pub fn route(&self, params: &ProgressNotificationParam) {
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
        #[allow(deprecated)]
        if let JsonRpcMessage::Notification(JsonRpcNotification {
            notification: ServerNotification::LoggingMessageNotification(log),
            ..
        }) = &message
        {
            self.progress.log(&log.params);
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
