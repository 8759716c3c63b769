//! The servers' resources, prompts and completions as MCP gives them, for re-serving (the
//! gateway): listings and answers passed on whole (annotations, blobs, embedded resources,
//! images), not turned into wrapped text as [`super::catalog`] does for an agent. Nothing here
//! redacts: the caller masks what it sends on, and the errors' texts.

use std::sync::Arc;

use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResult, Prompt,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate,
};
use rmcp::service::{Peer, RoleClient};
use serde_json::{Map, Value};

use super::catalog::{declares_prompts, declares_resources, declares_subscribe};
use super::{Manager, View};
use crate::bridge::{self, NameScheme, ServerTools};
use crate::error::CallError;
use crate::supervisor::Server;

/// What the servers `view` shows offer now, besides tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpstreamOffers {
    pub resources: bool,
    /// One of the servers that offer resources offers subscriptions to them.
    pub subscribe: bool,
    pub prompts: bool,
    pub completions: bool,
}

impl Manager {
    /// The ready servers that offer resources: they declare them and their config has
    /// `resources` on.
    fn resource_servers(&self, view: Option<&View>) -> Vec<(Arc<Server>, Peer<RoleClient>)> {
        self.offering(view, declares_resources)
            .into_iter()
            .filter(|(s, _)| s.config.resources)
            .collect()
    }

    /// Whether any ready server `view` shows offers resources, prompts, completions.
    pub fn upstream_offers(&self, view: Option<&View>) -> UpstreamOffers {
        let resources = self.resource_servers(view);
        UpstreamOffers {
            resources: !resources.is_empty(),
            subscribe: resources.iter().any(|(_, peer)| declares_subscribe(peer)),
            prompts: !self.offering(view, declares_prompts).is_empty(),
            completions: !self.offering(view, declares_completions).is_empty(),
        }
    }

    /// The names of the ready servers `view` shows that offer resources, in config order.
    pub fn upstream_resource_servers(&self, view: Option<&View>) -> Vec<String> {
        (self.resource_servers(view).into_iter())
            .map(|(s, _)| s.name().to_owned())
            .collect()
    }

    /// The names of the ready servers `view` shows that offer prompts, in config order.
    pub fn upstream_prompt_servers(&self, view: Option<&View>) -> Vec<String> {
        (self.offering(view, declares_prompts).into_iter())
            .map(|(s, _)| s.name().to_owned())
            .collect()
    }

    /// Every resource and every resource template of those servers, with the server's name,
    /// in config order. A server whose listing fails is left out with a warning (templates
    /// are optional: a failure to list them is no warning).
    pub async fn upstream_resources(
        &self,
        view: Option<&View>,
    ) -> (Vec<(String, Resource)>, Vec<(String, ResourceTemplate)>) {
        let (mut resources, mut templates) = (Vec::new(), Vec::new());
        for (server, peer) in self.resource_servers(view) {
            let timeout = server.request_timeout();
            let name = server.name().to_owned();
            match tokio::time::timeout(timeout, peer.list_all_resources()).await {
                Ok(Ok(list)) => resources.extend(list.into_iter().map(|r| (name.clone(), r))),
                Ok(Err(e)) => {
                    self.listing_failed(&server, "resources", &CallError::from_service(e));
                    continue;
                }
                Err(_) => {
                    self.listing_failed(&server, "resources", &CallError::Timeout(timeout));
                    continue;
                }
            }
            if let Ok(Ok(list)) =
                tokio::time::timeout(timeout, peer.list_all_resource_templates()).await
            {
                templates.extend(list.into_iter().map(|t| (name.clone(), t)));
            }
        }
        (resources, templates)
    }

    /// Every prompt of the ready servers `view` shows that declare prompts, with the server's
    /// name, in config order (a failed listing: a warning and none of that server's).
    pub async fn upstream_prompts(&self, view: Option<&View>) -> Vec<(String, Prompt)> {
        let mut out = Vec::new();
        for (server, peer) in self.offering(view, declares_prompts) {
            let timeout = server.request_timeout();
            match tokio::time::timeout(timeout, peer.list_all_prompts()).await {
                Ok(Ok(list)) => out.extend(list.into_iter().map(|p| (server.name().to_owned(), p))),
                Ok(Err(e)) => self.listing_failed(&server, "prompts", &CallError::from_service(e)),
                Err(_) => self.listing_failed(&server, "prompts", &CallError::Timeout(timeout)),
            }
        }
        out
    }

    /// The names the manager would give `prompts` (per server, in order) as it names tools:
    /// `view`'s scheme, else the manager's, over these servers (`mcp_<prefix>_<prompt>` in
    /// compat, `<server>__<prompt>` in openclaw).
    pub fn upstream_prompt_names(
        &self,
        view: Option<&View>,
        prompts: &[(String, Vec<String>)],
    ) -> Vec<Vec<String>> {
        let roster = self.roster();
        let inputs: Vec<ServerTools<'_>> = prompts
            .iter()
            .map(|(server, names)| ServerTools {
                server,
                prefix: roster
                    .named(server)
                    .and_then(|(_, s)| s.config.tool_prefix.as_deref()),
                tools: names.iter().map(String::as_str).collect(),
            })
            .collect();
        let scheme: NameScheme = view.and_then(|v| v.scheme).unwrap_or(self.name_scheme);
        bridge::assign_tool_names(&inputs, scheme)
            .into_iter()
            .map(|names| names.into_iter().map(|n| n.name).collect())
            .collect()
    }

    /// `resources/read` of `uri` on `server` (started if idle), through any `input_required`
    /// rounds, within its request timeout.
    pub async fn upstream_read_resource(
        &self,
        server: &str,
        uri: &str,
    ) -> Result<ReadResourceResult, CallError> {
        let server = self.server_named(server).map_err(CallError::Refused)?;
        self.read_resource_on(&server, uri).await
    }

    /// `resources/read` of `uri` on `server` (started if idle), through any `input_required`
    /// rounds, within its request timeout: what the gateway re-serves and what the resource
    /// tools and `getResourceContext()` read.
    pub(super) async fn read_resource_on(
        &self,
        server: &Server,
        uri: &str,
    ) -> Result<ReadResourceResult, CallError> {
        let peer = self.awake(server).await?;
        if !declares_resources(&peer) {
            return Err(CallError::Refused(format!(
                "MCP server '{}' does not offer resources",
                server.name()
            )));
        }
        let timeout = server.request_timeout();
        let rounds = crate::session::read_resource_in_rounds(
            &peer,
            server.client_requests(),
            server.name(),
            ReadResourceRequestParams::new(uri.to_owned()),
            timeout,
        );
        tokio::time::timeout(timeout, rounds)
            .await
            .map_err(|_| CallError::Timeout(timeout))?
    }

    /// `prompts/get` of `name` (the server's own name for it) on `server`, as
    /// [`Self::upstream_read_resource`].
    pub async fn upstream_get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<GetPromptResult, CallError> {
        let server = self.server_named(server).map_err(CallError::Refused)?;
        self.get_prompt_on(&server, name, arguments).await
    }

    /// `prompts/get` of `name` on `server` (started if idle), through any `input_required`
    /// rounds, within its request timeout: what the gateway re-serves and what `getPrompt()`
    /// and the prompt tools wrap.
    pub(super) async fn get_prompt_on(
        &self,
        server: &Server,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<GetPromptResult, CallError> {
        let peer = self.awake(server).await?;
        let mut params = GetPromptRequestParams::new(name);
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let timeout = server.request_timeout();
        let rounds = crate::session::get_prompt_in_rounds(
            &peer,
            server.client_requests(),
            server.name(),
            params,
            timeout,
        );
        tokio::time::timeout(timeout, rounds)
            .await
            .map_err(|_| CallError::Timeout(timeout))?
    }

    /// `completion/complete` on `server` (references already in its own names). A server that
    /// does not declare completions has none: an empty list.
    pub async fn upstream_complete(
        &self,
        server: &str,
        params: CompleteRequestParams,
    ) -> Result<CompleteResult, CallError> {
        let server = self.server_named(server).map_err(CallError::Refused)?;
        let peer = self.awake(&server).await?;
        if !declares_completions(&peer) {
            return Ok(CompleteResult::default());
        }
        answer_within(server.request_timeout(), peer.complete(params)).await
    }

    /// The server's connection, started first if it is idle (within its connect timeout).
    pub(super) async fn awake(&self, server: &Server) -> Result<Peer<RoleClient>, CallError> {
        server
            .awake_peer(&tokio_util::sync::CancellationToken::new())
            .await
    }
}

/// `request`'s answer within `timeout`; its failure, or the timeout, as a [`CallError`].
pub(super) async fn answer_within<T>(
    timeout: std::time::Duration,
    request: impl std::future::Future<Output = Result<T, rmcp::service::ServiceError>>,
) -> Result<T, CallError> {
    tokio::time::timeout(timeout, request)
        .await
        .map_err(|_| CallError::Timeout(timeout))?
        .map_err(CallError::from_service)
}

fn declares_completions(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.capabilities.completions.is_some())
}
