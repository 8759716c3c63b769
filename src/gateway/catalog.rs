//! The gateway's resources, prompts and completions: those of the manager's servers (or the
//! view's), re-served whole. `resources/list` and `resources/templates/list` join every
//! server's; `resources/read` goes to the server that listed the URI, else to the one whose
//! template the URI matches, else (when only one server offers resources) to that one.
//! `resources/subscribe` holds a subscription on that same server (one upstream per server and
//! URI however many subscribe downstream). `prompts/list` names prompts as the gateway names
//! tools ([`super::names`]); `prompts/get` and `completion/complete` go to the prompt's (or
//! the template's) server under its own name. Every string sent on (titles, descriptions,
//! texts, messages, error messages) passes the manager's redactor; base64 payloads (`blob`, and
//! `data` beside a `mimeType`) do not. Upstream errors keep their JSON-RPC code, with the
//! server named in the message.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::ErrorData;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, ErrorCode, GetPromptResult, Prompt, ReadResourceResult,
    Reference, Resource, ResourceTemplate,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::names::{ServedNames, served_names};
use super::uri_template::UriTemplate;
use crate::error::CallError;
use crate::manager::{Manager, View};
use crate::secrets::Redactor;
use crate::server::catalog::Offers;
use crate::server::provider::JsonObject;

/// What the gateway serves besides tools, and where each request goes.
pub struct Catalog {
    manager: Arc<Manager>,
    view: Option<Arc<View>>,
    names: ServedNames,
    routes: Mutex<Routes>,
    /// Each URI subscribed to through the gateway: the server of each subscription held
    /// (one per downstream subscriber), so the last to leave ends it where it was made.
    subscriptions: Mutex<HashMap<String, Vec<String>>>,
}

/// Where things were, as last listed.
#[derive(Default)]
struct Routes {
    /// A listed resource's URI → its server.
    uris: HashMap<String, String>,
    /// Each template (its text and parsed form) → its server, in listing order.
    templates: Vec<(String, UriTemplate, String)>,
    /// A served prompt name → (server, the server's own name for it).
    prompts: HashMap<String, (String, String)>,
}

impl Catalog {
    pub fn new(manager: Arc<Manager>, view: Option<Arc<View>>, names: ServedNames) -> Arc<Self> {
        Arc::new(Self {
            manager,
            view,
            names,
            routes: Mutex::default(),
            subscriptions: Mutex::default(),
        })
    }

    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the ready servers (of the view) offer now.
    pub fn offers(&self) -> Offers {
        let offers = self.manager.upstream_offers(self.view.as_deref());
        Offers {
            resources: offers.resources,
            subscribe: offers.subscribe,
            prompts: offers.prompts,
            completions: offers.completions,
            list_changed: true,
        }
    }

    /// Lists every server's resources and templates, remembering where each is.
    async fn list(&self) -> (Vec<(String, Resource)>, Vec<(String, ResourceTemplate)>) {
        let (resources, templates) = self.manager.upstream_resources(self.view.as_deref()).await;
        let mut routes = self.routes();
        routes.uris.clear();
        for (server, resource) in &resources {
            // The first server to list a URI has it (config order).
            (routes.uris)
                .entry(resource.uri.clone())
                .or_insert_with(|| server.clone());
        }
        routes.templates = templates
            .iter()
            .filter_map(|(server, t)| {
                let parsed = UriTemplate::parse(&t.uri_template)?;
                Some((t.uri_template.clone(), parsed, server.clone()))
            })
            .collect();
        drop(routes);
        (resources, templates)
    }

    pub async fn resources(self: Arc<Self>) -> Result<Vec<Resource>, ErrorData> {
        let (resources, _) = self.list().await;
        let redactor = self.manager.redactor();
        resources
            .into_iter()
            .map(|(_, r)| masked(&redactor, r))
            .collect()
    }

    pub async fn resource_templates(self: Arc<Self>) -> Result<Vec<ResourceTemplate>, ErrorData> {
        let (_, templates) = self.list().await;
        let redactor = self.manager.redactor();
        templates
            .into_iter()
            .map(|(_, t)| masked(&redactor, t))
            .collect()
    }

    /// The server to read `uri` from: as last listed (listed again when that does not say).
    async fn resource_server(&self, uri: &str) -> Option<String> {
        let servers = self.manager.upstream_resource_servers(self.view.as_deref());
        if let [only] = servers.as_slice() {
            return Some(only.clone());
        }
        let find = |routes: &Routes| {
            let server = routes.uris.get(uri).or_else(|| {
                (routes.templates.iter())
                    .find(|(_, template, _)| template.matches(uri))
                    .map(|(_, _, server)| server)
            })?;
            servers.contains(server).then(|| server.clone())
        };
        if let Some(server) = find(&self.routes()) {
            return Some(server);
        }
        self.list().await;
        find(&self.routes())
    }

    pub async fn read_resource(
        self: Arc<Self>,
        uri: String,
    ) -> Result<ReadResourceResult, ErrorData> {
        let redactor = self.manager.redactor();
        let data = Some(json!({ "uri": uri }));
        let Some(server) = self.resource_server(&uri).await else {
            return Err(ErrorData::invalid_params(
                redactor
                    .redact(&format!("Resource not found: {uri}"))
                    .into_owned(),
                data,
            ));
        };
        match self.manager.upstream_read_resource(&server, &uri).await {
            Ok(result) => masked(&redactor, result),
            Err(e) => Err(upstream_error(&redactor, &server, e, data)),
        }
    }

    /// `resources/subscribe` for one downstream subscriber: held on the server `uri` is read
    /// from (an unknown URI is -32602, as for a read).
    pub async fn subscribe(self: Arc<Self>, uri: String) -> Result<(), ErrorData> {
        let redactor = self.manager.redactor();
        let Some(server) = self.resource_server(&uri).await else {
            return Err(ErrorData::invalid_params(
                redactor
                    .redact(&format!("Resource not found: {uri}"))
                    .into_owned(),
                Some(json!({ "uri": uri })),
            ));
        };
        if let Err(e) = self.manager.subscribe_resource(&server, &uri).await {
            return Err(upstream_error(&redactor, &server, e, None));
        }
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
        subscriptions.entry(uri).or_default().push(server);
        Ok(())
    }

    /// One downstream subscriber of `uri` leaves (see [`Manager::release_resource`]).
    pub async fn unsubscribe(self: Arc<Self>, uri: String) -> Result<(), ErrorData> {
        let server = {
            let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
            let Some(servers) = subscriptions.get_mut(&uri) else {
                return Ok(());
            };
            let server = servers.pop();
            if servers.is_empty() {
                subscriptions.remove(&uri);
            }
            server
        };
        if let Some(server) = server {
            self.manager.release_resource(&server, &uri).await;
        }
        Ok(())
    }

    /// Lists every server's prompts, under the names served, remembering where each is.
    pub async fn prompts(self: Arc<Self>) -> Result<Vec<Prompt>, ErrorData> {
        let listed = self.manager.upstream_prompts(self.view.as_deref()).await;
        // Per server (in order), its prompts' own names, for the manager's naming.
        let mut by_server: Vec<(String, Vec<String>)> = Vec::new();
        for (server, prompt) in &listed {
            match by_server.last_mut() {
                Some((s, names)) if s == server => names.push(prompt.name.clone()),
                _ => by_server.push((server.clone(), vec![prompt.name.clone()])),
            }
        }
        let own = (self.manager).upstream_prompt_names(self.view.as_deref(), &by_server);
        let own: Vec<&String> = own.iter().flatten().collect();
        let pairs: Vec<(&str, &str)> = (own.iter().zip(&listed))
            .map(|(own, (_, p))| (own.as_str(), p.name.as_str()))
            .collect();
        let served = served_names(&pairs, self.names);
        let redactor = self.manager.redactor();
        let mut routes = HashMap::new();
        let mut out = Vec::with_capacity(listed.len());
        for ((server, mut prompt), name) in listed.into_iter().zip(served) {
            routes.insert(name.clone(), (server, prompt.name.clone()));
            prompt.name = name;
            out.push(masked(&redactor, prompt)?);
        }
        self.routes().prompts = routes;
        Ok(out)
    }

    /// The server of the prompt served as `name`, and its own name for it.
    async fn prompt_route(self: &Arc<Self>, name: &str) -> Option<(String, String)> {
        if let Some(route) = self.routes().prompts.get(name) {
            return Some(route.clone());
        }
        let _ = self.clone().prompts().await;
        self.routes().prompts.get(name).cloned()
    }

    pub async fn get_prompt(
        self: Arc<Self>,
        name: String,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResult, ErrorData> {
        let redactor = self.manager.redactor();
        let Some((server, own)) = self.prompt_route(&name).await else {
            return Err(ErrorData::invalid_params(
                redactor
                    .redact(&format!("Unknown prompt: {name}"))
                    .into_owned(),
                None,
            ));
        };
        match self
            .manager
            .upstream_get_prompt(&server, &own, arguments)
            .await
        {
            Ok(result) => masked(&redactor, result),
            Err(e) => Err(upstream_error(&redactor, &server, e, None)),
        }
    }

    /// `completion/complete`: a prompt's argument at the prompt's server, a template's at the
    /// server that listed the template.
    pub async fn complete(
        self: Arc<Self>,
        mut request: CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        let redactor = self.manager.redactor();
        let server = match &mut request.r#ref {
            Reference::Prompt(prompt) => {
                let Some((server, own)) = self.prompt_route(&prompt.name).await else {
                    return Err(ErrorData::invalid_params(
                        redactor
                            .redact(&format!("Unknown prompt: {}", prompt.name))
                            .into_owned(),
                        None,
                    ));
                };
                prompt.name = own;
                server
            }
            Reference::Resource(resource) => {
                let uri = resource.uri.clone();
                let find = |routes: &Routes| {
                    (routes.templates.iter())
                        .find(|(text, _, _)| *text == uri)
                        .map(|(_, _, server)| server.clone())
                };
                let known = find(&self.routes());
                let found = match known {
                    Some(server) => Some(server),
                    None => {
                        self.list().await;
                        find(&self.routes())
                    }
                };
                match found {
                    Some(server) => server,
                    None => match self.resource_server(&uri).await {
                        Some(server) => server,
                        None => {
                            return Err(ErrorData::invalid_params(
                                redactor
                                    .redact(&format!("Unknown resource template: {uri}"))
                                    .into_owned(),
                                None,
                            ));
                        }
                    },
                }
            }
            _ => {
                return Err(ErrorData::invalid_params(
                    "completion/complete: ref must be ref/prompt or ref/resource",
                    None,
                ));
            }
        };
        match self.manager.upstream_complete(&server, request).await {
            Ok(result) => masked(&redactor, result),
            Err(e) => Err(upstream_error(&redactor, &server, e, None)),
        }
    }
}

/// An upstream failure as the JSON-RPC error sent downstream: a server's own error keeps its
/// code; anything else (not ready, timed out, connection lost) is -32603. The message names
/// the server and is redacted.
fn upstream_error(
    redactor: &Redactor,
    server: &str,
    error: CallError,
    data: Option<Value>,
) -> ErrorData {
    let code = match &error {
        CallError::Server { code, .. } => ErrorCode(*code),
        _ => ErrorCode::INTERNAL_ERROR,
    };
    let message = match error {
        CallError::Server { message, .. } => message,
        other => other.to_string(),
    };
    let message = format!("MCP server '{server}': {message}");
    ErrorData::new(code, redactor.redact(&message).into_owned(), data)
}

/// `value` with every string in it masked (see the module docs for what is not).
fn masked<T: Serialize + DeserializeOwned>(redactor: &Redactor, value: T) -> Result<T, ErrorData> {
    let mut json = serde_json::to_value(&value).map_err(unmaskable)?;
    if !mask(redactor, &mut json) {
        return Ok(value);
    }
    serde_json::from_value(json).map_err(unmaskable)
}

fn unmaskable(e: serde_json::Error) -> ErrorData {
    ErrorData::internal_error(format!("the gateway could not check an answer: {e}"), None)
}

/// Masks the strings in `value`; whether any changed.
fn mask(redactor: &Redactor, value: &mut Value) -> bool {
    match value {
        Value::String(text) => match redactor.redact(text) {
            std::borrow::Cow::Borrowed(_) => false,
            std::borrow::Cow::Owned(masked) => {
                *text = masked;
                true
            }
        },
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| mask(redactor, v) | changed),
        Value::Object(fields) => {
            let binary = fields.contains_key("mimeType");
            let mut changed = false;
            for (key, v) in fields.iter_mut() {
                if key == "blob" || (binary && key == "data" && v.is_string()) {
                    continue;
                }
                changed |= mask(redactor, v);
            }
            changed
        }
        _ => false,
    }
}
