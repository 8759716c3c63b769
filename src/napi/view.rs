//! `class McpView` for JS: `manager.view(spec)`.

use std::sync::Arc;

use ::napi::bindgen_prelude::*;
use napi_derive::napi;

use super::catalog;
use super::settle::Settler;
use super::tool::{AgentTools, CallResult};
use crate::manager::{Manager, View};

/// What one agent sees of a manager (`manager.view(spec)`). Views share the manager's
/// connections, cost a few sets each and end with the manager.
#[napi]
pub struct McpView {
    manager: Arc<Manager>,
    settler: Arc<Settler<CallResult>>,
    view: Arc<View>,
    tools: AgentTools,
}

impl McpView {
    pub(super) fn new(
        manager: Arc<Manager>,
        settler: Arc<Settler<CallResult>>,
        view: Arc<View>,
    ) -> Self {
        Self {
            manager,
            settler,
            view,
            tools: AgentTools::default(),
        }
    }
}

#[napi]
impl McpView {
    /// The tools of the view's ready servers that its allow/deny (and the manager's) allow,
    /// named over the view's servers alone.
    #[napi(ts_return_type = "AgentTool[]")]
    pub fn get_agent_tools<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        let tools = self.manager.agent_tools_in(Some(&self.view));
        self.tools
            .build(env, &self.manager, &self.settler, tools, Some(&self.view))
    }

    /// The PR's name for `getAgentTools()`.
    #[napi(ts_return_type = "AgentTool[]")]
    pub fn get_tools<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        self.get_agent_tools(env)
    }

    /// The resources of the view's ready servers, read and wrapped as untrusted content.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn get_resource_context<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, String>> {
        let (manager, view) = (self.manager.clone(), self.view.clone());
        env.spawn_future(async move { Ok(manager.resource_context_in(Some(&view)).await) })
    }

    /// The prompts of the view's ready servers that declare prompts.
    #[napi(ts_return_type = "Promise<McpPrompt[]>")]
    pub fn list_prompts<'env>(
        &self,
        env: &'env Env,
    ) -> Result<PromiseRaw<'env, Vec<catalog::McpPrompt>>> {
        let (manager, view) = (self.manager.clone(), self.view.clone());
        env.spawn_future(
            async move { Ok(catalog::prompts(manager.list_prompts_in(Some(&view)).await)) },
        )
    }
}
