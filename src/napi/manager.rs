//! `class McpManager` for JS.

use std::sync::Arc;
use std::time::Duration;

use ::napi::bindgen_prelude::*;
use napi_derive::napi;

use super::logger::JsLogSink;
use super::settle::Settler;
use super::tool::{CallResult, ToolFactory};
use crate::bridge::NameScheme;
use crate::config;
use crate::log::{Log, LogSink, NullSink};
use crate::manager::{Manager, ManagerOptions};
use crate::policy::ToolPolicy;
use crate::secrets::Redactor;
use crate::secrets::{ProviderDefinitions, SecretResolver};
use crate::security::WrapFormat;

#[napi(object)]
pub struct McpServerStatusEntry {
    pub name: String,
    #[napi(ts_type = "McpServerStatus")]
    pub status: String,
    pub tool_count: u32,
    /// The transport of the last successful connection: `stdio`, `streamable-http` or `sse`.
    pub transport: Option<String>,
}

#[napi]
pub struct McpManager {
    inner: Arc<Manager>,
    /// `getAgentTools()`'s compiled builder for the current set of tools.
    tools: std::sync::Mutex<Option<Arc<ToolFactory>>>,
    /// Settles the promises of every tool call of this manager.
    settler: Arc<Settler<CallResult>>,
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
        let mut manager_options = ManagerOptions::default();
        let mut sink: Arc<dyn LogSink> = Arc::new(NullSink);
        let mut provider_definitions = ProviderDefinitions::default();
        if let Some(options) = options {
            if let Some(logger) = options.get::<Object>("logger")? {
                sink = Arc::new(JsLogSink::from_object(&logger)?);
            }
            if let Some(format) = options.get::<String>("wrapFormat")? {
                manager_options.wrap_format = match format.as_str() {
                    "id" => WrapFormat::Id,
                    "legacy" => WrapFormat::Legacy,
                    other => {
                        return Err(Error::new(
                            Status::InvalidArg,
                            format!("Invalid wrapFormat '{other}': expected 'id' or 'legacy'"),
                        ));
                    }
                };
            }
            if let Some(scheme) = options.get::<String>("toolNames")? {
                manager_options.name_scheme = NameScheme::parse(&scheme).ok_or_else(|| {
                    Error::new(
                        Status::InvalidArg,
                        format!("Invalid toolNames '{scheme}': expected 'compat' or 'openclaw'"),
                    )
                })?;
            }
            let allow = options.get::<Vec<String>>("allow")?.unwrap_or_default();
            let deny = options.get::<Vec<String>>("deny")?.unwrap_or_default();
            manager_options.policy = ToolPolicy::new(allow, deny);
            if let Some(providers) = options.get::<Unknown>("secretProviders")? {
                let providers = super::json_from_js(env, providers)?;
                provider_definitions = ProviderDefinitions::from_providers(&providers)
                    .map_err(|e| Error::new(Status::InvalidArg, format!("secretProviders: {e}")))?;
            }
            if let Some(ms) = options.get::<f64>("shutdownGraceMs")? {
                if !(0.0..=600_000.0).contains(&ms) {
                    return Err(Error::new(
                        Status::InvalidArg,
                        "Invalid shutdownGraceMs: expected a number of milliseconds from 0 to 600000",
                    ));
                }
                manager_options.runtime.shutdown_grace = Duration::from_millis(ms as u64);
            }
        }
        let log = Log::new(sink, Redactor::default());
        // The resolver masks what it substitutes (a `${TOKEN}` inside `Bearer ${TOKEN}`) with the
        // manager's redactor, on top of what the supervisor registers.
        let resolver = Arc::new(
            SecretResolver::with_default_providers()
                .with_provider_definitions(provider_definitions)
                .with_redactor(log.redactor().clone()),
        );
        Ok(Self {
            inner: Arc::new(Manager::new(
                validated.config,
                manager_options,
                log,
                resolver,
            )),
            tools: std::sync::Mutex::new(None),
            settler: Arc::new(Settler::new(env)?),
        })
    }

    /// Starts every enabled server in parallel; resolves once each has connected or failed its
    /// first attempt. Never rejects.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn start<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let manager = self.inner.clone();
        env.spawn_future(async move {
            manager.start().await;
            Ok(())
        })
    }

    /// The tools of every ready server, as pi-agent-core `AgentTool` objects (fresh each call).
    #[napi(ts_return_type = "AgentTool[]")]
    pub fn get_agent_tools<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        let tools = self.inner.agent_tools();
        if tools.is_empty() {
            return Ok(env.create_array(0)?.to_unknown());
        }
        // Never held while JS runs (a schema with `__proto__` calls the global `JSON.parse`,
        // which user code could have replaced with something that calls back in here).
        let cached = {
            let factory = self.tools.lock().unwrap_or_else(|p| p.into_inner());
            factory.as_ref().filter(|f| f.matches(&tools)).cloned()
        };
        let factory = match cached {
            Some(factory) => factory,
            None => {
                let factory = Arc::new(ToolFactory::new(env, &self.inner, &self.settler, tools)?);
                *self.tools.lock().unwrap_or_else(|p| p.into_inner()) = Some(factory.clone());
                factory
            }
        };
        factory.build(env)
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

    /// Stops every server and its process tree. Idempotent; never rejects.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn shutdown<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let manager = self.inner.clone();
        env.spawn_future(async move {
            manager.shutdown().await;
            Ok(())
        })
    }

    #[napi]
    pub fn get_status(&self) -> Vec<McpServerStatusEntry> {
        self.inner
            .status()
            .into_iter()
            .map(|s| McpServerStatusEntry {
                name: s.name,
                status: s.status.as_str().to_owned(),
                tool_count: s.tool_count as u32,
                transport: s.transport.map(str::to_owned),
            })
            .collect()
    }
}
