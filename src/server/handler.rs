//! rmcp's `ServerHandler` over a [`ToolProvider`]: `tools/list`, `tools/call` (arguments checked
//! against the tool's `inputSchema`, the call bounded by its time limit and cancelled with the
//! request, its progress and log messages sent while it runs, the result checked and cut to the
//! response rules), `logging/setLevel`, `notifications/tools/list_changed` to every session
//! when the tools change (and, at 2026-07-28, to every `subscriptions/listen` stream that asked
//! for it), and the resources, prompts and completions the provider offers
//! ([`super::catalog`]; -32601 while it offers none). [`Server::close`] answers the calls in
//! flight before the transports stop.
//!
//! A [`Server`] is shared by every session; each session (the stdio one, each HTTP session)
//! gets its own [`Handler`] with its own log level.

// MCP's logging is deprecated by SEP-2577 in rmcp's 2026 types; 2025-11-25 clients use it.
#![allow(deprecated)]

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt as _;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestMethod,
    CompleteRequestParams, CompleteResult, ConstString, ContentBlock, GetPromptRequestMethod,
    GetPromptRequestParams, GetPromptResponse, Implementation, InitializeResult,
    ListPromptsRequestMethod, ListPromptsResult, ListResourceTemplatesRequestMethod,
    ListResourceTemplatesResult, ListResourcesRequestMethod, ListResourcesResult, ListToolsResult,
    LoggingLevel, LoggingMessageNotificationParam, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ReadResourceRequestMethod, ReadResourceRequestParams,
    ReadResourceResponse, ResourceUpdatedNotification, ResourceUpdatedNotificationParam,
    ResultType, ServerCapabilities, ServerConfig, ServerNotification, SetLevelRequestParams,
    SubscribeRequestMethod, SubscribeRequestParams, Tool, UnsubscribeRequestMethod,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::catalog::CatalogFuture;
use super::limits;
pub use super::options::{DEFAULT_TOOL_TIMEOUT, ServerOptions};
use super::provider::{CallContext, Cancel, JsonObject, LogLevel, Notice, Notices, ToolProvider};
use super::validate::InputSchemas;
use crate::bridge::json_check;

/// How long a finished call waits for its last notices to be sent before its answer goes.
const NOTICE_FLUSH: Duration = Duration::from_secs(5);

/// How long [`Server::close`] waits for the calls in flight to answer.
const CLOSE_ANSWERS: Duration = Duration::from_secs(5);

/// A session that finished its handshake.
struct Session<P: ToolProvider + ?Sized> {
    peer: Peer<RoleServer>,
    level: Arc<AtomicU8>,
    /// Its handler's (which releases them when the session ends and rmcp drops it).
    subscribed: std::sync::Weak<Subscribed<P>>,
}

impl<P: ToolProvider + ?Sized> Clone for Session<P> {
    fn clone(&self) -> Self {
        Self {
            peer: self.peer.clone(),
            level: self.level.clone(),
            subscribed: self.subscribed.clone(),
        }
    }
}

/// The resources one session (or one listen stream) is subscribed to; each is given back to
/// the provider when the session ends (when this is dropped) or the server closes.
struct Subscribed<P: ToolProvider + ?Sized> {
    provider: Arc<P>,
    uris: Mutex<std::collections::BTreeSet<String>>,
}

impl<P: ToolProvider + ?Sized> Subscribed<P> {
    fn new(provider: Arc<P>) -> Arc<Self> {
        Arc::new(Self {
            provider,
            uris: Mutex::default(),
        })
    }

    fn uris(&self) -> std::sync::MutexGuard<'_, std::collections::BTreeSet<String>> {
        self.uris.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn has(&self, uri: &str) -> bool {
        self.uris().contains(uri)
    }

    /// Unsubscribes from everything (in the background: this runs where nothing may wait).
    fn release_all(&self) {
        let uris = std::mem::take(&mut *self.uris());
        if uris.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let released: Vec<_> = uris
            .into_iter()
            .map(|uri| self.provider.unsubscribe(uri))
            .collect();
        runtime.spawn(async move {
            for release in released {
                let _ = release.await;
            }
        });
    }
}

impl<P: ToolProvider + ?Sized> Drop for Subscribed<P> {
    fn drop(&mut self) {
        self.release_all();
    }
}

/// What every session of one server shares.
pub struct Server<P: ToolProvider + ?Sized> {
    provider: Arc<P>,
    options: ServerOptions,
    schemas: InputSchemas,
    /// The sessions that finished their handshake (with each one's log level and resource
    /// subscriptions), told when the tools change and sent [`Server::log`]'s messages.
    peers: Mutex<Vec<Session<P>>>,
    /// The open `subscriptions/listen` streams (2026-07-28), told when the tools change.
    listeners: Mutex<Vec<(u64, SubscriptionSink)>>,
    next_listener: std::sync::atomic::AtomicU64,
    /// Cancelled by [`Server::close`], with why.
    closing: CancellationToken,
    closing_reason: std::sync::OnceLock<String>,
    /// `tools/call` requests not yet answered.
    calls: tokio::sync::watch::Sender<usize>,
}

impl<P: ToolProvider + ?Sized> Server<P> {
    pub fn new(provider: Arc<P>, options: ServerOptions) -> Arc<Self> {
        Arc::new(Self {
            provider,
            options,
            schemas: InputSchemas::default(),
            peers: Mutex::default(),
            listeners: Mutex::default(),
            next_listener: Default::default(),
            closing: CancellationToken::new(),
            closing_reason: std::sync::OnceLock::new(),
            calls: tokio::sync::watch::Sender::new(0),
        })
    }

    /// Starts closing: every call in flight is cancelled (its provider told `reason`) and
    /// answered with an `isError` result saying so, a call that comes later is answered the
    /// same way at once, and listen streams end. Resolves once every call has answered (at
    /// most [`CLOSE_ANSWERS`]); stop the transports after, so the answers reach the clients.
    pub async fn close(&self, reason: &str) {
        let _ = self.closing_reason.set(reason.to_owned());
        self.closing.cancel();
        for session in self.peers.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            if let Some(subscribed) = session.subscribed.upgrade() {
                subscribed.release_all();
            }
        }
        let mut calls = self.calls.subscribe();
        let _ = tokio::time::timeout(CLOSE_ANSWERS, calls.wait_for(|n| *n == 0)).await;
    }

    /// How many `tools/call` requests are not yet answered, as it changes.
    pub fn calls_in_flight(&self) -> tokio::sync::watch::Receiver<usize> {
        self.calls.subscribe()
    }

    fn closing_reason(&self) -> &str {
        self.closing_reason
            .get()
            .map_or("the server is closing", String::as_str)
    }

    /// A handler for one session.
    pub fn handler(self: &Arc<Self>) -> Handler<P> {
        Handler {
            server: self.clone(),
            level: Arc::new(AtomicU8::new(LogLevel::Debug as u8)),
            subscribed: Subscribed::new(self.provider.clone()),
        }
    }

    pub fn provider(&self) -> &Arc<P> {
        &self.provider
    }

    pub fn options(&self) -> &ServerOptions {
        &self.options
    }

    /// What `initialize` answers: the tools capability (with `listChanged`), logging, and
    /// resources (with `subscribe`, `listChanged`), prompts (with `listChanged`) and
    /// completions as the provider offers them.
    pub fn info(&self) -> ServerConfig {
        let mut capabilities = json!({ "tools": { "listChanged": true }, "logging": {} });
        let offers = self.provider.offers();
        for (offered, name) in [
            (offers.resources, "resources"),
            (offers.prompts, "prompts"),
            (offers.completions, "completions"),
        ] {
            if offered {
                capabilities[name] = json!({});
            }
        }
        if offers.subscriptions() {
            capabilities["resources"]["subscribe"] = json!(true);
        }
        if offers.list_changed {
            for name in ["resources", "prompts"] {
                if let Some(capability) = capabilities.get_mut(name) {
                    capability["listChanged"] = json!(true);
                }
            }
        }
        let capabilities: ServerCapabilities =
            serde_json::from_value(capabilities).unwrap_or_default();
        let mut info = InitializeResult::new(capabilities).with_server_info(Implementation::new(
            &self.options.name,
            &self.options.version,
        ));
        if let Some(instructions) = &self.options.instructions {
            info = info.with_instructions(instructions);
        }
        info
    }

    /// Sends `notifications/tools/list_changed` to every live session; `name` (a tool removed
    /// or replaced) forgets its compiled schema.
    pub async fn tools_changed(&self, name: Option<&str>) {
        if let Some(name) = name {
            self.schemas.forget(name);
        }
        let changed = ServerNotification::ToolListChangedNotification(Default::default());
        self.announce(changed, |_| true).await;
    }

    /// Sends `notifications/resources/list_changed` to every live session and every listen
    /// stream that asked for it.
    pub async fn resources_changed(&self) {
        let changed = ServerNotification::ResourceListChangedNotification(Default::default());
        self.announce(changed, |_| true).await;
    }

    /// Sends `notifications/prompts/list_changed`, as [`Self::resources_changed`].
    pub async fn prompts_changed(&self) {
        let changed = ServerNotification::PromptListChangedNotification(Default::default());
        self.announce(changed, |_| true).await;
    }

    /// Sends `notifications/resources/updated` of `uri` to the sessions and listen streams
    /// subscribed to it.
    pub async fn resource_updated(&self, uri: &str) {
        let param = ResourceUpdatedNotificationParam::new(uri.to_owned());
        let updated = ServerNotification::ResourceUpdatedNotification(
            ResourceUpdatedNotification::new(param),
        );
        self.announce(updated, |session| {
            (session.subscribed.upgrade()).is_some_and(|s| s.has(uri))
        })
        .await;
    }

    /// Sends `notification` to the live sessions `to` picks and to every open listen stream (a
    /// stream that did not ask for this kind, or this resource, refuses it: nothing is sent).
    async fn announce(&self, notification: ServerNotification, to: impl Fn(&Session<P>) -> bool) {
        for session in self.live_peers().iter().filter(|s| to(s)) {
            let _ = session.peer.send_notification(notification.clone()).await;
        }
        let listeners: Vec<SubscriptionSink> = {
            let listeners = self.listeners.lock().unwrap_or_else(|p| p.into_inner());
            listeners.iter().map(|(_, l)| l.clone()).collect()
        };
        for listener in listeners {
            let _ = listener.send(notification.clone()).await;
        }
    }

    /// A log message of the server's own (not of a call: a gateway relays its upstream
    /// servers' logs this way) to every session whose `logging/setLevel` lets `level` through.
    /// Sessions of 2026-07-28 clients (no `initialize`) get none: they ask for logs per request.
    pub async fn log(&self, level: LogLevel, logger: Option<String>, data: Value) {
        for Session {
            peer,
            level: threshold,
            ..
        } in self.live_peers()
        {
            if (level as u8) < threshold.load(Ordering::Relaxed) {
                continue;
            }
            let mut param =
                LoggingMessageNotificationParam::new(to_rmcp_level(level), data.clone());
            if let Some(logger) = &logger {
                param = param.with_logger(logger.clone());
            }
            let _ = peer.notify_logging_message(param).await;
        }
    }

    /// Sessions that finished their handshake and are still open.
    pub fn session_count(&self) -> usize {
        self.live_peers().len()
    }

    /// The sessions still open (those closed are forgotten).
    fn live_peers(&self) -> Vec<Session<P>> {
        let mut peers = self.peers.lock().unwrap_or_else(|p| p.into_inner());
        peers.retain(|s| !s.peer.is_transport_closed());
        peers.clone()
    }

    fn add_peer(&self, session: Session<P>) {
        let mut peers = self.peers.lock().unwrap_or_else(|p| p.into_inner());
        peers.retain(|s| !s.peer.is_transport_closed());
        peers.push(session);
    }

    /// One `tools/call`: `Err` only for an unknown tool (a protocol error, -32602); every other
    /// failure is an `isError` result saying what happened. `request` is the request's own
    /// cancellation (the client's `notifications/cancelled`, the session ending).
    pub async fn call_tool(
        &self,
        name: &str,
        args: Option<JsonObject>,
        request: &CancellationToken,
        request_id: String,
        notices: Notices,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(tool) = self.provider.tool(name) else {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {name}"),
                None,
            ));
        };
        if self.closing.is_cancelled() {
            return Ok(error_result(format!(
                "Tool '{name}' was not run: {}",
                self.closing_reason()
            )));
        }
        let args = args.unwrap_or_default();
        if let Some(problem) = self.schemas.problem(&tool, &args) {
            return Ok(error_result(format!(
                "Invalid arguments for tool '{name}': {problem}"
            )));
        }
        let limit = self
            .provider
            .timeout(name)
            .unwrap_or(self.options.tool_timeout);
        let cancel = Cancel::child_of(request);
        let ctx = CallContext {
            cancel: cancel.clone(),
            request_id,
            notices,
        };
        let mut call = AssertUnwindSafe(self.provider.call(name, args, ctx)).catch_unwind();
        let deadline = tokio::time::sleep(limit);
        let outcome = tokio::select! {
            answer = &mut call => match answer {
                Ok(answer) => answer,
                Err(_) => Err(format!("Tool '{name}' failed unexpectedly")),
            },
            _ = deadline => {
                let ms = limit.as_millis();
                cancel.cancel(format!("the tool timed out after {ms} ms"));
                Err(format!("Tool '{name}' timed out after {ms} ms"))
            }
            _ = cancel.cancelled() => Err(format!("Tool '{name}' was cancelled: {}", cancel.reason())),
            _ = self.closing.cancelled() => {
                let reason = self.closing_reason();
                cancel.cancel(reason);
                Err(format!("Tool '{name}' was cancelled: {reason}"))
            }
        };
        // Dropped after the reason is set, so the provider can tell its tool why.
        drop(call);
        let mut result = match outcome {
            Ok(result) => result,
            Err(message) => return Ok(error_result(message)),
        };
        if result.is_error != Some(true)
            && let Some(problem) = output_problem(&tool, &result)
        {
            return Ok(error_result(format!(
                "Tool '{name}' returned a result that breaks its outputSchema: {problem}"
            )));
        }
        if result.content.is_empty()
            && let Some(structured) = &result.structured_content
        {
            // For clients that read only content (MCP: SHOULD also be given as text).
            result
                .content
                .push(ContentBlock::text(structured.to_string()));
        }
        if let Some(rules) = &self.options.limits {
            limits::apply(&mut result, rules);
        }
        // A result passed through from elsewhere (a gateway's `wrap: false` serves the upstream
        // server's own, read at an older revision) may lack it; 2026-07-28 requires it, and the
        // results made here carry it at every revision.
        result.result_type.get_or_insert(ResultType::COMPLETE);
        Ok(result)
    }
}

/// Why `result` breaks `tool`'s `outputSchema`, if it has one and does.
fn output_problem(tool: &Tool, result: &CallToolResult) -> Option<String> {
    let schema = tool.output_schema.as_ref()?;
    let Some(structured) = &result.structured_content else {
        return Some("no structuredContent".to_owned());
    };
    json_check::first_error(&Value::Object((**schema).clone()), structured)
}

/// An `isError` result with one text item.
pub fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// One session's view of a [`Server`].
pub struct Handler<P: ToolProvider + ?Sized> {
    server: Arc<Server<P>>,
    /// The least severe level `notifications/message` sends (`logging/setLevel`; all at first).
    level: Arc<AtomicU8>,
    /// The resources this session subscribed to.
    subscribed: Arc<Subscribed<P>>,
}

impl<P: ToolProvider + ?Sized> ServerHandler for Handler<P> {
    fn get_info(&self) -> ServerConfig {
        self.server.info()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.server.provider.tools(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.server.provider.tool(name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Counted until answered, for `Server::close`.
        self.server.calls.send_modify(|n| *n += 1);
        let _answered = scopeguard(|| self.server.calls.send_modify(|n| *n -= 1));
        let (notices, mut rx) = Notices::channel();
        let mut out = NoticeSender {
            peer: context.peer.clone(),
            progress_token: context.meta.get_progress_token(),
            level: self.level.clone(),
            request_level: request_log_level(&context.meta),
            last: None,
        };
        let request_id = serde_json::to_string(&context.id).unwrap_or_default();
        let call = self.server.call_tool(
            &request.name,
            request.arguments,
            &context.ct,
            request_id,
            notices.clone(),
        );
        tokio::pin!(call);
        // The call's notices are sent from this task as they come (no task of their own to
        // wake and wait for on every call), each before the answer.
        let result = loop {
            tokio::select! {
                biased;
                Some(notice) = rx.recv() => out.send(notice).await,
                result = &mut call => break result,
            }
        };
        notices.close();
        let _ = tokio::time::timeout(NOTICE_FLUSH, async {
            while let Some(notice) = rx.recv().await {
                out.send(notice).await;
            }
        })
        .await;
        result.map(CallToolResponse::from)
    }

    // What the server does not declare is not a method here (rmcp's defaults answer empty
    // lists, which tells a client the capability exists and is empty). A provider's answer is
    // a complete result (2026-07-28 requires `resultType`; one read from an older server has
    // none; rmcp drops it again for older clients).
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let provider = &self.server.provider;
        served::<ListPromptsRequestMethod, _>(provider.offers().prompts, &context.ct, || {
            provider.list_prompts()
        })
        .await
        .map(ListPromptsResult::with_all_items)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let provider = &self.server.provider;
        served::<GetPromptRequestMethod, _>(provider.offers().prompts, &context.ct, || {
            provider.get_prompt(request.name, request.arguments)
        })
        .await
        .map(|mut result| {
            result.result_type = Some(ResultType::COMPLETE);
            GetPromptResponse::from(result)
        })
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let provider = &self.server.provider;
        served::<ListResourcesRequestMethod, _>(provider.offers().resources, &context.ct, || {
            provider.list_resources()
        })
        .await
        .map(ListResourcesResult::with_all_items)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let provider = &self.server.provider;
        served::<ListResourceTemplatesRequestMethod, _>(
            provider.offers().resources,
            &context.ct,
            || provider.list_resource_templates(),
        )
        .await
        .map(ListResourceTemplatesResult::with_all_items)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let provider = &self.server.provider;
        served::<ReadResourceRequestMethod, _>(provider.offers().resources, &context.ct, || {
            provider.read_resource(request.uri)
        })
        .await
        .map(|mut result| {
            result.result_type = Some(ResultType::COMPLETE);
            ReadResourceResponse::from(result)
        })
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let provider = &self.server.provider;
        served::<CompleteRequestMethod, _>(provider.offers().completions, &context.ct, || {
            provider.complete(request)
        })
        .await
        .map(|mut result| {
            result.result_type = Some(ResultType::COMPLETE);
            result
        })
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.level
            .store(from_rmcp_level(request.level) as u8, Ordering::Relaxed);
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.server.add_peer(Session {
            peer: context.peer,
            level: self.level.clone(),
            subscribed: Arc::downgrade(&self.subscribed),
        });
    }

    /// `resources/subscribe`: once per session and URI (again: nothing more), while the
    /// provider offers subscriptions.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let provider = &self.server.provider;
        let offers = provider.offers();
        if self.subscribed.has(&request.uri) {
            return Ok(());
        }
        let uri = request.uri;
        served::<SubscribeRequestMethod, _>(offers.subscriptions(), &context.ct, || {
            provider.subscribe(uri.clone())
        })
        .await?;
        if !self.subscribed.uris().insert(uri.clone()) {
            // The same URI twice at once in one session: one subscription is enough.
            let _ = provider.unsubscribe(uri).await;
        }
        Ok(())
    }

    /// `resources/unsubscribe`: ends this session's subscription; a URI it is not subscribed
    /// to is no error (while the provider offers subscriptions).
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let provider = &self.server.provider;
        if self.subscribed.uris().remove(&request.uri) {
            return provider.unsubscribe(request.uri).await;
        }
        if provider.offers().subscriptions() {
            Ok(())
        } else {
            Err(ErrorData::method_not_found::<UnsubscribeRequestMethod>())
        }
    }

    /// 2026-07-28 `subscriptions/listen`: tool list changes, the resource and prompt list
    /// changes and resource updates the provider offers (rmcp narrows the filter to what the
    /// client asked for and acknowledges it).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let offers = self.server.provider.offers();
        let mut filter = SubscriptionFilter::builder().tools_list_changed();
        if offers.list_changed && offers.resources {
            filter = filter.resources_list_changed();
        }
        if offers.list_changed && offers.prompts {
            filter = filter.prompts_list_changed();
        }
        if offers.subscriptions()
            && let Some(uris) = &requested.resource_subscriptions
        {
            filter = filter.resource_subscriptions(uris.iter().cloned());
        }
        Some(filter.build())
    }

    /// Holds the stream open, told of tool changes (and of what else it accepted), until the
    /// client ends it or the server closes (then it ends with the final result). The resources
    /// it subscribes to are subscribed while it is open.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let server = &self.server;
        let subscribed = Subscribed::new(server.provider.clone());
        for uri in (context.sink().accepted().resource_subscriptions.iter()).flatten() {
            if server.provider.subscribe(uri.clone()).await.is_ok() {
                subscribed.uris().insert(uri.clone());
            }
        }
        let id = server.next_listener.fetch_add(1, Ordering::Relaxed);
        let forget = |listeners: &Mutex<Vec<(u64, SubscriptionSink)>>| {
            let mut listeners = listeners.lock().unwrap_or_else(|p| p.into_inner());
            listeners.retain(|(n, _)| *n != id);
        };
        (server.listeners.lock().unwrap_or_else(|p| p.into_inner()))
            .push((id, context.sink().clone()));
        let _forget = scopeguard(|| forget(&server.listeners));
        tokio::select! {
            _ = context.cancelled() => {}
            _ = self.server.closing.cancelled() => {}
        }
        Ok(())
    }
}

/// Runs `f` when dropped (however the future holding it ends).
fn scopeguard<F: FnOnce()>(f: F) -> impl Drop {
    struct Guard<F: FnOnce()>(Option<F>);
    impl<F: FnOnce()> Drop for Guard<F> {
        fn drop(&mut self) {
            if let Some(f) = self.0.take() {
                f()
            }
        }
    }
    Guard(Some(f))
}

/// The provider's answer when it serves the capability now (given up when the request is
/// cancelled), else -32601 for method `M`: what is not declared is not a method.
async fn served<M: ConstString, T>(
    offered: bool,
    cancel: &CancellationToken,
    answer: impl FnOnce() -> CatalogFuture<T>,
) -> Result<T, ErrorData> {
    if !offered {
        return Err(ErrorData::method_not_found::<M>());
    }
    tokio::select! {
        answer = answer() => answer,
        _ = cancel.cancelled() => Err(ErrorData::internal_error(
            format!("{} was cancelled", M::VALUE),
            None,
        )),
    }
}

/// Sends a call's notices in order: progress when the request asked for it (a value not above
/// the last is not sent: MCP requires progress to increase), log messages at or above the
/// session's level.
struct NoticeSender {
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    level: Arc<AtomicU8>,
    /// A 2026-07-28 request says in its own `_meta` which log messages it wants (`None`: none);
    /// an older one leaves it to the session's `logging/setLevel`.
    request_level: Option<Option<u8>>,
    last: Option<f64>,
}

/// What a request's `_meta` asks of log messages: `None` for a request of a revision before
/// 2026-07-28 (no protocol version in `_meta`: the session's level applies); on 2026-07-28,
/// `Some(level)` from `io.modelcontextprotocol/logLevel`, `Some(None)` without it (none sent).
fn request_log_level(meta: &rmcp::model::RequestMetaObject) -> Option<Option<u8>> {
    meta.protocol_version()?;
    Some(meta.log_level().map(|l| from_rmcp_level(l) as u8))
}

impl NoticeSender {
    async fn send(&mut self, notice: Notice) {
        match notice {
            Notice::Progress {
                progress,
                total,
                message,
            } => {
                let Some(token) = &self.progress_token else {
                    return;
                };
                if !progress.is_finite() || self.last.is_some_and(|last| progress <= last) {
                    return;
                }
                self.last = Some(progress);
                let mut param = ProgressNotificationParam::new(token.clone(), progress);
                if let Some(total) = total.filter(|t| t.is_finite()) {
                    param = param.with_total(total);
                }
                if let Some(message) = message {
                    param = param.with_message(message);
                }
                let _ = self.peer.notify_progress(param).await;
            }
            Notice::Log { level: at, data } => {
                let threshold = match self.request_level {
                    Some(None) => return,
                    Some(Some(level)) => level,
                    None => self.level.load(Ordering::Relaxed),
                };
                if (at as u8) < threshold {
                    return;
                }
                let param = LoggingMessageNotificationParam::new(to_rmcp_level(at), data);
                let _ = self.peer.notify_logging_message(param).await;
            }
            Notice::Relayed {
                level: at,
                logger,
                data,
            } => {
                let Some(Some(threshold)) = self.request_level else {
                    return;
                };
                if (at as u8) < threshold {
                    return;
                }
                let mut param = LoggingMessageNotificationParam::new(to_rmcp_level(at), data);
                if let Some(logger) = logger {
                    param = param.with_logger(logger);
                }
                let _ = self.peer.notify_logging_message(param).await;
            }
        }
    }
}

fn to_rmcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

fn from_rmcp_level(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}
