//! `class McpManager` for JS.

use std::sync::Arc;

use ::napi::bindgen_prelude::*;
use napi_derive::napi;

use super::catalog;
use super::events;
use super::host_env::{self, JsEnvironment};
use super::logger::JsLogSink;
use super::settle::Settler;
use super::tool::{AgentTools, CallResult};
use crate::config;
use crate::log::{LogSink, NullSink};
use crate::manager::{Manager, ManagerOptions};

#[napi(object)]
pub struct McpServerStatusEntry {
    pub name: String,
    #[napi(ts_type = "McpServerStatus")]
    pub status: String,
    pub tool_count: u32,
    /// The transport of the last successful connection: `stdio`, `streamable-http` or `sse`.
    pub transport: Option<String>,
    /// A session is up: false while an idle (`idleTimeoutMs`) or lazy server has no process,
    /// whatever its status.
    pub running: bool,
    /// The protocol revision the last session negotiated (`2025-11-25`, `2025-06-18`, …).
    pub protocol_version: Option<String>,
    /// OAuth servers only: `pending`, `authorized`, `login-required` or `error`.
    pub auth: Option<String>,
}

/// What `reconfigure` did, by server name.
#[napi(object)]
pub struct McpReloadReport {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub restarted: Vec<String>,
    pub unchanged: Vec<String>,
}

#[napi]
pub struct McpManager {
    inner: Arc<Manager>,
    /// Reads `process.env` on the JS thread.
    read_env: FunctionRef<(), String>,
    host_env: Arc<JsEnvironment>,
    /// `getAgentTools()`'s compiled builder for the current set of tools.
    tools: AgentTools,
    /// Settles the promises of every tool call of this manager.
    settler: Arc<Settler<CallResult>>,
    listeners: events::Listeners,
}

#[napi]
impl McpManager {
    /// Builds one client per enabled server (nothing starts until `start()`). Throws
    /// `Unknown transport '<t>' for server '<name>'`, or `Invalid MCP config: <problems>`.
    #[napi(
        constructor,
        ts_args_type = "config: McpConfig, options?: McpManagerOptions"
    )]
    pub fn new(env: &Env, config: Unknown, options: Option<Object>) -> Result<Self> {
        let config = super::json_from_js(env, config)?;
        let validated =
            config::parse_manager_config(&config).map_err(|e| Error::new(Status::InvalidArg, e))?;
        let mut sink: Arc<dyn LogSink> = Arc::new(NullSink);
        let mut json = serde_json::Map::new();
        let mut hooks = crate::hooks::Hooks::default();
        let mut client_requests = crate::session::ClientRequests::default();
        let mut oauth = crate::oauth::OAuthHost::default();
        let mut pin_store = None;
        if let Some(options) = options {
            client_requests = super::client_requests::from_options(env, &options)?;
            oauth = super::oauth::from_options(env, &options)?;
            if let Some(logger) = options.get::<Object>("logger")? {
                sink = Arc::new(JsLogSink::from_object(&logger)?);
            }
            if let Some(value) = options.get::<Unknown>("hooks")? {
                match value.get_type()? {
                    ValueType::Undefined | ValueType::Null => {}
                    ValueType::Object => {
                        let object: Object = unsafe { value.cast()? };
                        hooks = super::hooks::from_object(env, &object)?;
                    }
                    _ => {
                        return Err(Error::new(
                            Status::InvalidArg,
                            "Invalid hooks: expected an object { beforeToolCall?, afterToolCall? }",
                        ));
                    }
                }
            }
            for key in ManagerOptions::JSON_KEYS {
                if let Some(value) = options.get::<Unknown>(key)? {
                    if *key == "pinStore" && value.get_type()? == ValueType::Object {
                        pin_store = Some(super::pin_store::from_js(env, value)?);
                        continue;
                    }
                    json.insert((*key).to_owned(), super::json_from_js(env, value)?);
                }
            }
        }
        let mut manager_options =
            ManagerOptions::from_json(&json).map_err(|e| Error::new(Status::InvalidArg, e))?;
        let read_env = host_env::reader(env)?;
        let host_env = Arc::new(JsEnvironment::new(&read_env)?);
        manager_options.host_env = host_env.clone();
        let event_sink = Arc::new(events::JsEventSink::default());
        manager_options.events = crate::events::Events::new(event_sink.clone());
        manager_options.hooks = hooks;
        manager_options.runtime.client_requests = client_requests;
        manager_options.runtime.oauth = oauth;
        if pin_store.is_some() {
            manager_options.pin_store = pin_store;
        }
        let settler = Arc::new(Settler::new(env)?);
        manager_options.runtime.output_watcher = settler.output_watcher();
        let inner = Arc::new(Manager::with_sink(validated.config, manager_options, sink));
        super::env_teardown::cancel_on_teardown(env, inner.teardown_token())?;
        Ok(Self {
            inner,
            read_env: read_env.create_ref()?,
            host_env,
            tools: AgentTools::default(),
            settler,
            listeners: events::Listeners::new(event_sink),
        })
    }

    /// Starts every enabled server in parallel; resolves once each has connected or failed its
    /// first attempt. Never rejects.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn start<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let manager = self.inner.clone();
        // `process.env` as it is now: what the original's start read.
        let host_env = self.env_now(env);
        ::napi::bindgen_prelude::spawn(manager.clone().watch_tool_changes());
        env.spawn_future(async move {
            manager.start_in(host_env).await;
            Ok(())
        })
    }

    /// The tools of every ready server, as pi-agent-core `AgentTool` objects (fresh each call).
    #[napi(ts_return_type = "AgentTool[]")]
    pub fn get_agent_tools<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        let tools = self.inner.agent_tools();
        self.tools
            .build(env, &self.inner, &self.settler, tools, None)
    }

    /// The PR's name for `getAgentTools()`.
    #[napi(ts_return_type = "AgentTool[]")]
    pub fn get_tools<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        self.get_agent_tools(env)
    }

    /// Every ready server's resources, read and wrapped as untrusted content.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn get_resource_context<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, String>> {
        let manager = self.inner.clone();
        env.spawn_future(async move { Ok(manager.resource_context().await) })
    }

    /// Adds a listener for `event` (`status`, `toolsChanged`, `toolCall`, `serverLog`). A
    /// listener never keeps Node alive; one that throws is skipped.
    #[napi(ts_args_type = "event: McpManagerEvent, listener: (payload: any) => void")]
    pub fn on(&self, env: &Env, this: This, event: Unknown, listener: Unknown) -> Result<()> {
        self.listeners.change(env, *this, "on", event, listener)
    }

    /// Removes a listener added with `on` (the last one added, if it was added twice).
    #[napi(ts_args_type = "event: McpManagerEvent, listener: (payload: any) => void")]
    pub fn off(&self, env: &Env, this: This, event: Unknown, listener: Unknown) -> Result<()> {
        self.listeners.change(env, *this, "off", event, listener)
    }

    /// The prompts of every ready server that declares prompts (all pages), in config order.
    #[napi(ts_return_type = "Promise<McpPrompt[]>")]
    pub fn list_prompts<'env>(
        &self,
        env: &'env Env,
    ) -> Result<PromiseRaw<'env, Vec<catalog::McpPrompt>>> {
        let manager = self.inner.clone();
        env.spawn_future(async move { Ok(catalog::prompts(manager.list_prompts().await)) })
    }

    /// `prompts/get` on `server`, every message's text wrapped as untrusted content. Bad
    /// arguments or a failure reject with the reason; never throws.
    #[napi(
        ts_args_type = "server: string, name: string, args?: Record<string, string>",
        ts_return_type = "Promise<McpPromptResult>"
    )]
    pub fn get_prompt<'env>(
        &self,
        env: &'env Env,
        server: Unknown,
        name: Unknown,
        args: Option<Unknown>,
    ) -> Result<PromiseRaw<'env, catalog::McpPromptResult>> {
        let input = (|| {
            let server = catalog::string_arg(server, "getPrompt: server")?;
            let name = catalog::string_arg(name, "getPrompt: name")?;
            let args = match args {
                None => None,
                Some(value) => match super::json_from_js(env, value).map_err(|e| e.reason)? {
                    serde_json::Value::Null => None,
                    serde_json::Value::Object(map) => Some(map),
                    _ => return Err("getPrompt: args must be an object of strings".to_owned()),
                },
            };
            Ok((server, name, args))
        })();
        let manager = self.inner.clone();
        checked_promise(env, input, |(server, name, args)| async move {
            let outcome = manager.get_prompt(&server, &name, args).await?;
            Ok(catalog::prompt_result(outcome))
        })
    }

    /// The resources and resource templates of every ready server that declares resources.
    #[napi(ts_return_type = "Promise<McpResourceList>")]
    pub fn list_resources<'env>(
        &self,
        env: &'env Env,
    ) -> Result<PromiseRaw<'env, catalog::McpResourceList>> {
        let manager = self.inner.clone();
        env.spawn_future(async move { Ok(catalog::resource_list(manager.list_resources().await)) })
    }

    /// `resources/read` of `uri` on `server`, wrapped as untrusted content. Never throws.
    #[napi(
        ts_args_type = "server: string, uri: string",
        ts_return_type = "Promise<string>"
    )]
    pub fn read_resource<'env>(
        &self,
        env: &'env Env,
        server: Unknown,
        uri: Unknown,
    ) -> Result<PromiseRaw<'env, String>> {
        let input = catalog::string_arg(server, "readResource: server")
            .and_then(|s| Ok((s, catalog::string_arg(uri, "readResource: uri")?)));
        let manager = self.inner.clone();
        checked_promise(env, input, |(server, uri)| async move {
            manager.read_resource(&server, &uri).await
        })
    }

    /// Deletes an OAuth server's stored tokens, so its next start signs in again. Resolves
    /// `true` when tokens were stored; rejects naming an unknown server or one without OAuth.
    #[napi(ts_args_type = "server: string", ts_return_type = "Promise<boolean>")]
    pub fn logout<'env>(&self, env: &'env Env, server: Unknown) -> Result<PromiseRaw<'env, bool>> {
        let input = catalog::string_arg(server, "logout: server");
        let manager = self.inner.clone();
        checked_promise(
            env,
            input,
            |server| async move { manager.logout(&server).await },
        )
    }

    /// Stops every server and its process tree. Idempotent; never rejects.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn shutdown<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let manager = self.inner.clone();
        env.spawn_future(async move {
            manager.shutdown().await;
            Ok(())
        })
    }

    /// Applies a new config: servers whose definition is unchanged keep their process and
    /// in-flight calls; changed ones restart, removed ones stop, added ones start. Resolves to
    /// what happened per server name; an invalid config rejects and changes nothing.
    #[napi(
        ts_args_type = "config: McpConfig",
        ts_return_type = "Promise<McpReloadReport>"
    )]
    pub fn reconfigure<'env>(
        &self,
        env: &'env Env,
        config: Unknown,
    ) -> Result<PromiseRaw<'env, McpReloadReport>> {
        let validated = super::json_from_js(env, config)
            .map_err(|e| e.reason)
            .and_then(|config| config::parse_manager_config(&config));
        let host_env = self.env_now(env);
        let manager = self.inner.clone();
        checked_promise(env, validated, |validated| async move {
            let report = manager.reconfigure(validated.config, host_env).await?;
            Ok(McpReloadReport {
                added: report.added,
                removed: report.removed,
                restarted: report.restarted,
                unchanged: report.unchanged,
            })
        })
    }

    /// What one agent sees of this manager: a subset of its servers, its own allow/deny and
    /// naming, sharing the manager's connections. Throws a TypeError naming what is wrong in
    /// `spec`.
    #[napi(ts_args_type = "spec?: McpViewSpec")]
    pub fn view(&self, env: &Env, spec: Option<Unknown>) -> Result<super::view::McpView> {
        let spec = match spec {
            None => serde_json::Map::new(),
            Some(value) => match super::json_from_js(env, value)? {
                serde_json::Value::Null => serde_json::Map::new(),
                serde_json::Value::Object(map) => map,
                _ => {
                    return Err(Error::new(
                        Status::InvalidArg,
                        "Invalid view: expected an object { servers?, allow?, deny?, toolNames? }",
                    ));
                }
            },
        };
        let view = crate::manager::ViewSpec::from_json(&spec)
            .and_then(|spec| self.inner.view(spec))
            .map_err(|e| Error::new(Status::InvalidArg, e))?;
        Ok(super::view::McpView::new(
            self.inner.clone(),
            self.settler.clone(),
            view,
        ))
    }

    /// Replaces the roots (an array of `{ uri, name? }` with `file://` URIs, or a function
    /// returning one) and sends `notifications/roots/list_changed` to every ready server.
    /// Rejects, changing nothing, on bad roots or when the manager was created without `roots`.
    #[napi(
        ts_args_type = "roots: McpRoot[] | ((ctx: { server: string; signal: AbortSignal }) => McpRoot[] | Promise<McpRoot[]>)",
        ts_return_type = "Promise<void>"
    )]
    pub fn set_roots<'env>(&self, env: &'env Env, roots: Unknown) -> Result<PromiseRaw<'env, ()>> {
        let source = super::client_requests::roots_source(env, roots, "setRoots: roots")
            .map_err(|e| e.reason);
        let manager = self.inner.clone();
        checked_promise(env, source, |source| async move {
            manager.set_roots(source).await.map(|_| ())
        })
    }

    /// Accepts the current definitions of `server`'s tools (those named, by the server's own
    /// tool names, or all) as approved: tools withheld under `pinning: 'enforce'` are offered
    /// again. Returns the names approved; throws naming a bad argument or an unknown server.
    #[napi(ts_args_type = "server: string, names?: string[]")]
    pub fn approve_tools(
        &self,
        env: &Env,
        server: Unknown,
        names: Option<Unknown>,
    ) -> Result<Vec<String>> {
        let invalid = |e: String| Error::new(Status::InvalidArg, e);
        let server = catalog::string_arg(server, "approveTools: server").map_err(invalid)?;
        let names = match names {
            None => None,
            Some(value) => match super::json_from_js(env, value)? {
                serde_json::Value::Null => None,
                serde_json::Value::Array(items) => Some(
                    items
                        .into_iter()
                        .map(|v| match v {
                            serde_json::Value::String(s) => Ok(s),
                            _ => Err(invalid(
                                "approveTools: names must be an array of strings".to_owned(),
                            )),
                        })
                        .collect::<Result<Vec<_>>>()?,
                ),
                _ => {
                    return Err(invalid(
                        "approveTools: names must be an array of strings".to_owned(),
                    ));
                }
            },
        };
        self.inner
            .approve_tools(&server, names.as_deref())
            .map_err(invalid)
    }

    /// `process.env` as it is now (remembered for restarts).
    fn env_now(&self, env: &Env) -> crate::secrets::EnvSource {
        let host_env = match self.read_env.borrow_back(env) {
            Ok(read) => host_env::read_now(&read),
            Err(_) => crate::secrets::EnvSource::Process,
        };
        self.host_env.remember(&host_env);
        host_env
    }

    /// Every configured server's status. `running`, `protocolVersion` and `auth` are defined
    /// non-enumerable, so an entry compares, spreads and serialises as the contract's
    /// `{ name, status, toolCount, transport? }` (the original's shape) while `entry.running`
    /// and `entry.protocolVersion` read them.
    #[napi(ts_return_type = "McpServerStatusEntry[]")]
    pub fn get_status<'env>(&self, env: &'env Env) -> Result<Array<'env>> {
        let entries = self.inner.status();
        let mut out = env.create_array(entries.len() as u32)?;
        for (i, s) in entries.into_iter().enumerate() {
            let entry = McpServerStatusEntry {
                name: s.name,
                status: s.status.as_str().to_owned(),
                tool_count: s.tool_count as u32,
                transport: s.transport.map(str::to_owned),
                running: s.running,
                protocol_version: s.protocol_version,
                auth: s.auth.map(|a| a.as_str().to_owned()),
            };
            let mut object = Object::new(env)?;
            object.set_named_property("name", entry.name)?;
            object.set_named_property("status", entry.status)?;
            object.set_named_property("toolCount", entry.tool_count)?;
            if let Some(transport) = entry.transport {
                object.set_named_property("transport", transport)?;
            }
            let hidden = PropertyAttributes::Writable | PropertyAttributes::Configurable;
            let mut extra = vec![
                Property::new()
                    .with_utf8_name("running")?
                    .with_napi_value(env, entry.running)?
                    .with_property_attributes(hidden),
            ];
            if let Some(version) = entry.protocol_version {
                extra.push(
                    Property::new()
                        .with_utf8_name("protocolVersion")?
                        .with_napi_value(env, version)?
                        .with_property_attributes(hidden),
                );
            }
            if let Some(auth) = entry.auth {
                extra.push(
                    Property::new()
                        .with_utf8_name("auth")?
                        .with_napi_value(env, auth)?
                        .with_property_attributes(hidden),
                );
            }
            object.define_properties(&extra)?;
            out.set(i as u32, object)?;
        }
        Ok(out)
    }

    /// Every configured server's metrics, in config order (as `getStatus()`): tool calls by
    /// outcome, latency percentiles, restarts, uptime, last error, stderr tail, connect timings.
    #[napi(ts_return_type = "McpServerMetrics[]")]
    pub fn get_metrics<'env>(&self, env: &'env Env) -> Result<Array<'env>> {
        super::metrics::entries_to_js(env, self.inner.metrics())
    }

    /// `getMetrics()` in the Prometheus text exposition format 0.0.4.
    #[napi]
    pub fn metrics_text(&self) -> String {
        self.inner.metrics_text()
    }

    /// Sends MCP `ping` to `server`; resolves the round trip in ms. An idle or lazy server with
    /// no process is started for it, as a tool call starts it. Rejects (never throws) naming a
    /// bad argument, an unknown server, one that is not ready, or a failed ping.
    #[napi(ts_args_type = "server: string", ts_return_type = "Promise<number>")]
    pub fn ping<'env>(&self, env: &'env Env, server: Unknown) -> Result<PromiseRaw<'env, f64>> {
        let input = catalog::string_arg(server, "ping: server");
        let manager = self.inner.clone();
        checked_promise(
            env,
            input,
            |server| async move { manager.ping(&server).await },
        )
    }
}

/// A promise of `run(input)`, or rejected with the reason when the arguments were bad: a
/// method that returns a promise never throws for bad input.
fn checked_promise<'env, I, T, F>(
    env: &'env Env,
    input: std::result::Result<I, String>,
    run: impl FnOnce(I) -> F + Send + 'static,
) -> Result<PromiseRaw<'env, T>>
where
    I: Send + 'static,
    T: ToNapiValue + Send + 'static,
    F: std::future::Future<Output = std::result::Result<T, String>> + Send + 'static,
{
    env.spawn_future(async move {
        let failed = |e: String| Error::new(Status::GenericFailure, e);
        run(input.map_err(failed)?).await.map_err(failed)
    })
}

impl McpManager {
    /// The core manager (for the binding's other files: `manager.serve()`).
    pub(super) fn core(&self) -> &Arc<Manager> {
        &self.inner
    }
}
