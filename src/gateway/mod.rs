//! The gateway: the manager's agent tools (or a view's) served as one MCP server. A
//! [`ManagerTools`] is the server side's [`ToolProvider`] over a [`Manager`]: `tools/list` gives
//! the agent tools under the names the manager assigns (policy, pinning and hygiene applied as
//! for an agent), `tools/call` runs them through `Manager::execute_call` (so hooks, policy,
//! redaction, detection, wrapping and the `toolCall` event all apply), with the downstream
//! client's cancellation and progress passed through, a change of the tool lists becomes
//! `notifications/tools/list_changed` ([`follow_tool_changes`]), the servers' resource and
//! prompt list changes and resource updates are relayed ([`relay_catalog_changes`]), and the
//! servers' log messages become the gateway's own, redacted, `logger` naming the server
//! ([`relay_server_logs`]); [`follow`] starts all three. The servers' resources, prompts and
//! completions are re-served by [`catalog`]; tools and prompts are served under the manager's
//! names or the servers' own ([`names`]).

pub mod catalog;
pub mod names;
pub mod options;
pub mod uri_template;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolResult, CompleteRequestParams, CompleteResult, ContentBlock, GetPromptResult, Prompt,
    ReadResourceResult, Resource, ResourceTemplate, Tool,
};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::manager::{AgentTool, CallRequest, Manager, ServerLog, View};
use crate::server::catalog::{CatalogFuture, Offers};
use crate::server::handler::Server;
use crate::server::provider::{CallContext, CallFuture, JsonObject, LogLevel, ToolProvider};
use crate::session::{CatalogChange, Progress};
use crate::tool_result::ToolCallResult;
use catalog::Catalog;
use names::{ServedNames, served_names};

/// The manager's tools (all of them, or what `view` shows) as a tool provider.
pub struct ManagerTools {
    manager: Arc<Manager>,
    view: Option<Arc<View>>,
    /// The tools as last listed: each MCP definition made once (so its schema is parsed, and
    /// compiled by the server, once), with the agent tool it routes to, for calls. Made again
    /// by every listing and every change [`follow_tool_changes`] sees; a call the manager no
    /// longer allows is refused by `execute_call` all the same.
    offered: Mutex<Option<Arc<Offered>>>,
    names: ServedNames,
    catalog: Arc<Catalog>,
    /// Results wrapped as untrusted content (the default), or (`wrap: false`) the server's
    /// content blocks and `isError` as it sent them, redacted.
    wrap: bool,
}

struct Offered {
    tools: Vec<Tool>,
    routes: HashMap<String, AgentTool>,
}

impl ManagerTools {
    pub fn new(manager: Arc<Manager>, view: Option<Arc<View>>) -> Arc<Self> {
        Self::serving(manager, view, ServedNames::default(), true)
    }

    /// [`Self::new`], tools and prompts served under `names`, results wrapped as untrusted
    /// content or (`wrap` false) not.
    pub fn serving(
        manager: Arc<Manager>,
        view: Option<Arc<View>>,
        names: ServedNames,
        wrap: bool,
    ) -> Arc<Self> {
        Arc::new(Self {
            catalog: Catalog::new(manager.clone(), view.clone(), names),
            manager,
            view,
            offered: Mutex::new(None),
            names,
            wrap,
        })
    }

    fn offered(&self) -> Arc<Offered> {
        let mut offered = self.offered.lock().unwrap_or_else(|p| p.into_inner());
        offered.get_or_insert_with(|| Arc::new(self.list())).clone()
    }

    /// Lists the tools again (after a change) and returns them.
    fn refresh(&self) -> Arc<Offered> {
        let fresh = Arc::new(self.list());
        *self.offered.lock().unwrap_or_else(|p| p.into_inner()) = Some(fresh.clone());
        fresh
    }

    fn list(&self) -> Offered {
        let agent = self.manager.agent_tools_in(self.view.as_deref());
        let pairs: Vec<(&str, &str)> = (agent.iter())
            .map(|t| (t.name.as_str(), t.tool.mcp_name.as_str()))
            .collect();
        let served = served_names(&pairs, self.names);
        Offered {
            tools: agent
                .iter()
                .zip(&served)
                .map(|(t, n)| mcp_tool(t, n))
                .collect(),
            routes: served.into_iter().zip(agent).collect(),
        }
    }
}

/// An agent tool as an MCP tool named `name`: its label as title, description and the schema
/// the agent sees.
fn mcp_tool(tool: &AgentTool, name: &str) -> Tool {
    let schema = match serde_json::from_str::<Value>(&tool.tool.parameters_json) {
        Ok(Value::Object(schema)) => schema,
        _ => JsonObject::from_iter([("type".to_owned(), Value::from("object"))]),
    };
    let mut out = Tool::new(
        name.to_owned(),
        tool.tool.description.clone(),
        Arc::new(schema),
    );
    out.title = Some(tool.tool.label.clone());
    out
}

impl ToolProvider for ManagerTools {
    /// Listed afresh (a listing is rare, and must show a server that just failed as gone).
    fn tools(&self) -> Vec<Tool> {
        self.refresh().tools.clone()
    }

    fn tool(&self, name: &str) -> Option<Tool> {
        let find = |offered: &Offered| offered.tools.iter().find(|t| t.name == name).cloned();
        // A tool published a moment ago may not be in the last listing yet.
        find(&self.offered()).or_else(|| find(&self.refresh()))
    }

    fn call(&self, name: &str, args: JsonObject, ctx: CallContext) -> CallFuture {
        let manager = self.manager.clone();
        let view = self.view.clone();
        let wrap = self.wrap;
        let found = (self.offered().routes.get(name).cloned())
            .or_else(|| self.refresh().routes.get(name).cloned());
        let name = name.to_owned();
        Box::pin(async move {
            let Some(tool) = found else {
                return Err(format!("no tool named '{name}'"));
            };
            let (progress_tx, mut progress_rx) = mpsc::unbounded_channel::<Progress>();
            let redactor = manager.redactor();
            // Upstream progress goes downstream as it comes: the numbers as they are, the
            // message (a server's words) masked.
            let forward = |p: Progress| {
                let message = p.message.map(|m| redactor.redact(&m).into_owned());
                ctx.notices.progress(p.progress, p.total, message);
            };
            let call = manager.execute_call(CallRequest {
                tool_call_id: format!("gateway:{}", ctx.request_id),
                server_index: tool.server_index,
                tool: tool.tool.mcp_name.clone(),
                agent_name: tool.name.clone(),
                arguments: Some(args),
                cancel: ctx.cancel.token().clone(),
                progress: Some(progress_tx),
                view,
                passthrough: !wrap,
            });
            tokio::pin!(call);
            // The called server's log messages during the call, for a 2026-07-28 request that
            // asked for them (sessions get every server's through `relay_server_logs`).
            let mut logs = manager.server_logs();
            let relay = |log: ServerLog| {
                if log.server == tool.server {
                    let (level, logger) = relayed(&log);
                    ctx.notices.relayed_log(level, Some(logger), log.data);
                }
            };
            // In this task rather than a task of its own: no wake of another thread per call,
            // and every progress notice is sent before the result.
            let result = loop {
                tokio::select! {
                    biased;
                    Some(p) = progress_rx.recv() => forward(p),
                    Ok(log) = logs.recv() => relay(log),
                    result = &mut call => break result,
                }
            };
            while let Ok(p) = progress_rx.try_recv() {
                forward(p);
            }
            while let Ok(log) = logs.try_recv() {
                relay(log);
            }
            Ok(match result.rich.passthrough {
                Some(served) if !wrap => served,
                _ => call_result(result),
            })
        })
    }

    fn offers(&self) -> Offers {
        self.catalog.offers()
    }

    fn list_resources(&self) -> CatalogFuture<Vec<Resource>> {
        Box::pin(self.catalog.clone().resources())
    }

    fn list_resource_templates(&self) -> CatalogFuture<Vec<ResourceTemplate>> {
        Box::pin(self.catalog.clone().resource_templates())
    }

    fn read_resource(&self, uri: String) -> CatalogFuture<ReadResourceResult> {
        Box::pin(self.catalog.clone().read_resource(uri))
    }

    fn list_prompts(&self) -> CatalogFuture<Vec<Prompt>> {
        Box::pin(self.catalog.clone().prompts())
    }

    fn get_prompt(
        &self,
        name: String,
        arguments: Option<JsonObject>,
    ) -> CatalogFuture<GetPromptResult> {
        Box::pin(self.catalog.clone().get_prompt(name, arguments))
    }

    fn complete(&self, request: CompleteRequestParams) -> CatalogFuture<CompleteResult> {
        Box::pin(self.catalog.clone().complete(request))
    }

    fn subscribe(&self, uri: String) -> CatalogFuture<()> {
        Box::pin(self.catalog.clone().subscribe(uri))
    }

    fn unsubscribe(&self, uri: String) -> CatalogFuture<()> {
        Box::pin(self.catalog.clone().unsubscribe(uri))
    }
}

/// A manager result as an MCP result (what a gateway that wraps serves, and a failed call
/// whatever the gateway): the wrapped (or error) text, a rich result's images and
/// structured content, `isError` for a failed call or a result the server flagged.
fn call_result(result: ToolCallResult) -> CallToolResult {
    let failed = result.is_error() || result.rich.server_error;
    let mut content = vec![ContentBlock::text(result.text)];
    for image in result.rich.images {
        content.push(ContentBlock::image(image.data, image.mime_type));
    }
    let mut out = if failed {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    out.structured_content = result.rich.structured;
    out
}

/// Keeps `server`'s clients told, until the manager shuts down: [`follow_tool_changes`],
/// [`relay_catalog_changes`] and [`relay_server_logs`], each a task of its own.
pub fn follow(server: &Arc<Server<ManagerTools>>) {
    tokio::spawn(follow_tool_changes(server.clone()));
    tokio::spawn(relay_catalog_changes(server.clone()));
    tokio::spawn(relay_server_logs(server.clone()));
}

/// Sends `notifications/tools/list_changed` to `server`'s clients whenever the tools the
/// gateway offers change (a server's list, a reload, a policy or pinning decision), and the
/// resources and prompts list changes when the servers offering them change (one became ready
/// or stopped being ready), until the manager shuts down. After each change the resource
/// subscriptions held are made again on servers that restarted.
pub async fn follow_tool_changes(server: Arc<Server<ManagerTools>>) {
    let tools = server.provider().clone();
    let manager = tools.manager.clone();
    // What was offered at the last look (nothing to compare with at the first).
    let mut last: Option<(Vec<Tool>, Vec<String>, Vec<String>)> = None;
    manager
        .each_tool_list_change(|| {
            let view = tools.view.as_deref();
            let now = (
                tools.refresh().tools.clone(),
                manager.upstream_resource_servers(view),
                manager.upstream_prompt_servers(view),
            );
            let (changed, resources, prompts) = match &last {
                Some(before) => (before.0 != now.0, before.1 != now.1, before.2 != now.2),
                None => (false, false, false),
            };
            last = Some(now);
            let server = server.clone();
            let manager = manager.clone();
            async move {
                // First, so a client told of a server's return finds its subscriptions there.
                manager.renew_resource_subscriptions().await;
                if changed {
                    server.tools_changed(None).await;
                }
                if resources {
                    server.resources_changed().await;
                }
                if prompts {
                    server.prompts_changed().await;
                }
            }
        })
        .await
}

/// Sends the servers' resource and prompt list changes and the updates of the resources
/// subscribed to (of the servers the view shows) to `server`'s clients, until the manager
/// shuts down.
pub async fn relay_catalog_changes(server: Arc<Server<ManagerTools>>) {
    let tools = server.provider().clone();
    let mut changes = tools.manager.catalog_changes();
    let ended = tools.manager.shutting_down();
    while let Some(change) = next_until(&mut changes, &ended).await {
        let from = match &change {
            CatalogChange::Resources { server }
            | CatalogChange::Prompts { server }
            | CatalogChange::Updated { server, .. } => server,
        };
        if tools.view.as_ref().is_some_and(|v| !v.shows(from)) {
            continue;
        }
        match change {
            CatalogChange::Resources { .. } => server.resources_changed().await,
            CatalogChange::Prompts { .. } => server.prompts_changed().await,
            CatalogChange::Updated { uri, .. } => server.resource_updated(&uri).await,
        }
    }
}

/// Sends the servers' log messages (those the view shows) to `server`'s sessions as the
/// gateway's own, at or above the level each session set: redacted (the manager masks them as
/// they arrive), `logger` the server's name, or `<server>/<logger>` when the server named one.
/// Until the manager shuts down.
pub async fn relay_server_logs(server: Arc<Server<ManagerTools>>) {
    let tools = server.provider().clone();
    let mut logs = tools.manager.server_logs();
    let ended = tools.manager.shutting_down();
    while let Some(log) = next_until(&mut logs, &ended).await {
        if tools.view.as_ref().is_some_and(|v| !v.shows(&log.server)) {
            continue;
        }
        let (level, logger) = relayed(&log);
        server.log(level, Some(logger), log.data).await;
    }
}

/// The next message of `messages` (a follower that fell behind goes on from the oldest it still
/// has), or `None` once `ended` fires or the channel closes.
async fn next_until<T: Clone>(
    messages: &mut tokio::sync::broadcast::Receiver<T>,
    ended: &tokio_util::sync::CancellationToken,
) -> Option<T> {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        tokio::select! {
            _ = ended.cancelled() => return None,
            message = messages.recv() => match message {
                Ok(message) => return Some(message),
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return None,
            },
        }
    }
}

/// A server's log message's level (an unknown one as `info`) and the gateway's `logger` for it:
/// the server's name, `<server>/<logger>` when it named one.
fn relayed(log: &ServerLog) -> (LogLevel, String) {
    let level = LogLevel::parse(&log.level).unwrap_or(LogLevel::Info);
    let logger = match &log.logger {
        Some(own) => format!("{}/{own}", log.server),
        None => log.server.clone(),
    };
    (level, logger)
}
