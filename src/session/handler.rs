//! What we tell a server about ourselves, and where its notifications go that are not routed
//! on the wire (list changes to the supervisor and the catalog followers, log messages to the
//! log).

// Sampling and roots are deprecated by SEP-2577 (2026-07-28); 2025-11-25 servers still ask.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::ErrorData as McpError;
#[allow(deprecated)] // the same
use rmcp::model::LoggingLevel;
#[allow(deprecated)] // servers on protocol versions before SEP-2577 still send logging
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{
    ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, Implementation, ListRootsResult, ProtocolVersion,
    ResourceUpdatedNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use tokio::sync::Notify;

use super::ClientRequests;
use super::catalog_changes::CatalogChange;
use crate::events::Event;
use crate::log::Log;

/// The protocol version we ask for; servers negotiate down to 2025-06-18, 2025-03-26 or
/// 2024-11-05. (rmcp's own default would put 2026-07-28 inside a legacy `initialize`.)
pub const PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// What the original client called itself.
pub const CLIENT_NAME: &str = "openclaw-mcp";
pub const CLIENT_VERSION: &str = "1.0.0";

/// What a server's resource and prompt notifications are given to.
pub type CatalogCallback = Arc<dyn Fn(CatalogChange) + Send + Sync>;

#[derive(Clone)]
pub struct SessionHandler {
    server: String,
    tools_changed: Arc<Notify>,
    catalog_changed: Option<CatalogCallback>,
    log: Log,
    /// The host's answers to sampling, elicitation and roots requests, and how long each may
    /// take (the server's `toolTimeout`).
    requests: ClientRequests,
    request_deadline: std::time::Duration,
    /// The revision `initialize` asks for.
    protocol: ProtocolVersion,
}

impl SessionHandler {
    pub fn new(server: &str, tools_changed: Arc<Notify>, log: Log) -> Self {
        Self {
            server: server.to_owned(),
            tools_changed,
            catalog_changed: None,
            log,
            requests: ClientRequests::default(),
            request_deadline: std::time::Duration::from_secs(60),
            protocol: PROTOCOL_VERSION,
        }
    }

    /// `initialize` asks for `version` instead of [`PROTOCOL_VERSION`].
    pub fn asking_for(mut self, version: ProtocolVersion) -> Self {
        self.protocol = version;
        self
    }

    /// The host's answers to what the server asks (also used for `input_required` rounds).
    pub fn requests(&self) -> &ClientRequests {
        &self.requests
    }

    /// Answers what the server asks of its client with `requests`, each within `deadline`.
    pub fn with_requests(
        mut self,
        requests: ClientRequests,
        deadline: std::time::Duration,
    ) -> Self {
        self.requests = requests;
        self.request_deadline = deadline;
        self
    }

    /// Gives `f` what the server says of its resources and prompts changing.
    pub fn on_catalog_change(mut self, f: CatalogCallback) -> Self {
        self.catalog_changed = Some(f);
        self
    }

    fn catalog_change(&self, change: impl FnOnce(String) -> CatalogChange) {
        if let Some(f) = &self.catalog_changed {
            f(change(self.server.clone()));
        }
    }
}

impl SessionHandler {
    /// Logs why a request of the server's was answered with an error (not for a capability we
    /// never declared: that is the spec's answer, not a failure).
    fn refused<T>(&self, what: &str, answer: Result<T, McpError>) -> Result<T, McpError> {
        if let Err(error) = &answer
            && error.code != rmcp::model::ErrorCode::METHOD_NOT_FOUND
        {
            self.log.warn(&format!(
                "MCP server '{}' {what} request answered with an error: {}",
                self.server, error.message
            ));
        }
        answer
    }
}

impl ClientHandler for SessionHandler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            self.requests.capabilities(),
            Implementation::new(CLIENT_NAME, CLIENT_VERSION),
        )
        .with_protocol_version(self.protocol.clone())
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, McpError> {
        let answer = self
            .requests
            .create_message(&self.server, params, self.request_deadline, context.ct)
            .await;
        self.refused("sampling", answer)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        let answer = self
            .requests
            .create_elicitation(&self.server, request, self.request_deadline, context.ct)
            .await;
        self.refused("elicitation", answer)
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, McpError> {
        let answer = self
            .requests
            .list_roots(&self.server, self.request_deadline, context.ct)
            .await;
        self.refused("roots", answer)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.catalog_change(|server| CatalogChange::Resources { server });
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.catalog_change(|server| CatalogChange::Prompts { server });
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.catalog_change(|server| CatalogChange::Updated {
            server,
            uri: params.uri,
        });
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
        // (The `serverLog` event is emitted in wire order by the transport's tap:
        // `server_log_event`.)
    }
}

/// The `serverLog` event of `server`'s log message: data and logger masked by `redactor`.
#[allow(deprecated)]
pub fn server_log_event(
    server: &str,
    params: &LoggingMessageNotificationParam,
    redactor: &crate::secrets::Redactor,
) -> Event {
    let text = params.data.to_string();
    let data = match redactor.redact(&text) {
        std::borrow::Cow::Borrowed(_) => params.data.clone(),
        std::borrow::Cow::Owned(masked) => {
            serde_json::from_str(&masked).unwrap_or(serde_json::Value::String(masked))
        }
    };
    Event::ServerLog {
        server: server.to_owned(),
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
}
