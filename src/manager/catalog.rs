//! What servers offer besides tools: prompts and resources, listed (every page) from the
//! servers that declare them and read with their text wrapped as untrusted content.

use rmcp::model::{ResourceContents, Role};
use rmcp::service::{Peer, RoleClient};
use serde_json::{Map, Value};

use crate::config::values::kind_in_words;

use std::sync::Arc;

use super::{Manager, View};
use crate::bridge;
use crate::error::CallError;
use crate::status::Status;
use crate::supervisor::{Builtin, Server};

/// A prompt a server offers.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptInfo {
    pub server: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgumentInfo>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PromptArgumentInfo {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
}

/// A prompt got from its server: each message's text wrapped as untrusted content.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptOutcome {
    pub description: Option<String>,
    /// `(role, wrapped text)`; role is `user` or `assistant`.
    pub messages: Vec<(&'static str, String)>,
}

/// A resource (or, with `uri_template`, a resource template) a server offers.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceInfo {
    pub server: String,
    /// The resource's URI, or the template's RFC 6570 URI template.
    pub uri: String,
    pub is_template: bool,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

impl Manager {
    /// The ready servers that declare `capability` (`prompts` or `resources`).
    pub(super) fn offering(
        &self,
        view: Option<&View>,
        capability: fn(&Peer<RoleClient>) -> bool,
    ) -> Vec<(Arc<Server>, Peer<RoleClient>)> {
        self.roster()
            .current()
            .map(|(_, s)| s)
            .filter(|s| view.is_none_or(|v| v.shows(s.name())))
            .filter(|s| s.status() == Status::Ready)
            .filter_map(|s| s.ready_peer().ok().map(|peer| (s.clone(), peer)))
            .filter(|(_, peer)| capability(peer))
            .collect()
    }

    /// Every prompt of every ready server that declares prompts, in config order; a server
    /// whose listing fails is left out with a warning.
    pub async fn list_prompts(&self) -> Vec<PromptInfo> {
        self.list_prompts_in(None).await
    }

    /// [`Self::list_prompts`] of the servers `view` shows.
    pub async fn list_prompts_in(&self, view: Option<&View>) -> Vec<PromptInfo> {
        let mut out = Vec::new();
        for (server, peer) in self.offering(view, declares_prompts) {
            out.extend(self.server_prompts(&server, &peer).await);
        }
        out
    }

    /// One server's prompts (a failed listing is a warning and none).
    pub(super) async fn server_prompts(
        &self,
        server: &Server,
        peer: &Peer<RoleClient>,
    ) -> Vec<PromptInfo> {
        let mut out = Vec::new();
        let text = |t: &str| self.model_text(server, t);
        {
            let timeout = server.request_timeout();
            match tokio::time::timeout(timeout, peer.list_all_prompts()).await {
                Ok(Ok(prompts)) => out.extend(prompts.into_iter().map(|p| {
                    PromptInfo {
                        server: server.name().to_owned(),
                        name: p.name,
                        title: p.title.map(|t| text(&t)),
                        description: p.description.map(|d| text(&d)),
                        arguments: p
                            .arguments
                            .unwrap_or_default()
                            .into_iter()
                            .map(|a| PromptArgumentInfo {
                                name: a.name,
                                title: a.title.map(|t| text(&t)),
                                description: a.description.map(|d| text(&d)),
                                required: a.required == Some(true),
                            })
                            .collect(),
                    }
                })),
                Ok(Err(e)) => self.listing_failed(server, "prompts", &CallError::from_service(e)),
                Err(_) => self.listing_failed(server, "prompts", &CallError::Timeout(timeout)),
            }
        }
        out
    }

    /// `prompts/get` on `server`; every message's text wrapped as untrusted content from it.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<PromptOutcome, String> {
        let server = self.server_named(server)?;
        let (description, messages) = self.prompt_raw(&server, name, arguments).await?;
        let source = format!("prompt:{name}");
        Ok(PromptOutcome {
            description,
            messages: messages
                .into_iter()
                .map(|(role, text)| (role, self.wrap_untrusted(server.name(), &source, &text)))
                .collect(),
        })
    }

    /// `prompts/get`: the description and each message's role and text, not yet wrapped (a
    /// failure's text redacted: it may carry the server's stderr, and it goes to the model).
    pub(super) async fn prompt_raw(
        &self,
        server: &Server,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<(Option<String>, Vec<(&'static str, String)>), String> {
        let arguments = arguments
            .map(|args| {
                args.into_iter()
                    .map(|(k, v)| match v {
                        Value::String(s) => Ok((k, Value::String(s))),
                        other => Err(format!(
                            "getPrompt: argument '{k}' must be a string, got {}",
                            kind_in_words(&other)
                        )),
                    })
                    .collect::<Result<Map<String, Value>, String>>()
            })
            .transpose()?;
        let result = self
            .get_prompt_on(server, name, arguments)
            .await
            .map_err(|e| self.redact(&e.to_string()))?;
        Ok((
            result.description.map(|d| self.redact(&d)),
            result
                .messages
                .into_iter()
                .map(|m| {
                    let role = match m.role {
                        Role::Assistant => "assistant",
                        _ => "user",
                    };
                    (role, bridge::rich::describe(m.content))
                })
                .collect(),
        ))
    }

    /// Every resource and resource template of every ready server that declares resources
    /// (and has `resources` on in its config), in config order.
    pub async fn list_resources(&self) -> Vec<ResourceInfo> {
        let mut out = Vec::new();
        for (server, peer) in self.offering(None, declares_resources) {
            if server.config.resources {
                out.extend(self.server_resources_list(&server, &peer).await);
            }
        }
        out
    }

    /// One server's resources and templates (a failed listing is a warning and none).
    pub(super) async fn server_resources_list(
        &self,
        server: &Server,
        peer: &Peer<RoleClient>,
    ) -> Vec<ResourceInfo> {
        let mut out = Vec::new();
        let text = |t: &str| self.model_text(server, t);
        {
            let timeout = server.request_timeout();
            let name = server.name().to_owned();
            match tokio::time::timeout(timeout, peer.list_all_resources()).await {
                Ok(Ok(resources)) => out.extend(resources.into_iter().map(|r| ResourceInfo {
                    server: name.clone(),
                    uri: r.uri.clone(),
                    is_template: false,
                    name: self.hygienic(server, r.name.clone()),
                    title: r.title.as_deref().map(text),
                    description: r.description.as_deref().map(text),
                    mime_type: r.mime_type.clone(),
                })),
                Ok(Err(e)) => {
                    self.listing_failed(server, "resources", &CallError::from_service(e));
                    return out;
                }
                Err(_) => {
                    self.listing_failed(server, "resources", &CallError::Timeout(timeout));
                    return out;
                }
            }
            match tokio::time::timeout(timeout, peer.list_all_resource_templates()).await {
                Ok(Ok(templates)) => out.extend(templates.into_iter().map(|t| ResourceInfo {
                    server: name.clone(),
                    uri: t.uri_template.clone(),
                    is_template: true,
                    name: self.hygienic(server, t.name.clone()),
                    title: t.title.as_deref().map(text),
                    description: t.description.as_deref().map(text),
                    mime_type: t.mime_type.clone(),
                })),
                // Templates are optional: a server without them may answer "Method not found".
                Ok(Err(_)) | Err(_) => {}
            }
        }
        out
    }

    /// `resources/read` of `uri` on `server`: its text parts (blobs as a line) joined and
    /// wrapped as untrusted content.
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<String, String> {
        let server = self.server_named(server)?;
        let text = self.resource_raw(&server, uri).await?;
        Ok(self.wrap_untrusted(server.name(), uri, &text))
    }

    /// `resources/read`: the text, not yet wrapped (a failure's text redacted: it may carry
    /// the server's stderr, and it goes to the model).
    pub(super) async fn resource_raw(&self, server: &Server, uri: &str) -> Result<String, String> {
        let result = self
            .read_resource_on(server, uri)
            .await
            .map_err(|e| self.redact(&e.to_string()))?;
        Ok(resource_text(&result.contents))
    }

    /// Deletes `name`'s stored OAuth tokens (the next start signs in again). `Ok(false)`: none
    /// were stored.
    pub async fn logout(&self, name: &str) -> Result<bool, String> {
        self.server_named(name)?.sign_out().await
    }

    pub(super) fn server_named(&self, name: &str) -> Result<Arc<Server>, String> {
        self.roster()
            .named(name)
            .map(|(_, s)| s.clone())
            .ok_or_else(|| format!("no MCP server named '{name}'"))
    }

    fn redact(&self, text: &str) -> String {
        self.log.redactor().redact(text).into_owned()
    }

    /// A title or description of `server`'s bound for the model: redacted, and through the
    /// hygiene pass when that is on for the server. Names that identify something (a prompt's
    /// or an argument's name, a URI) never go through the pass: they must stay as sent.
    fn model_text(&self, server: &Server, text: &str) -> String {
        self.hygienic(server, self.redact(text))
    }

    /// `text` through the hygiene pass when that is on for `server`.
    fn hygienic(&self, server: &Server, text: String) -> String {
        if !self.hygiene_on(server) {
            return text;
        }
        match crate::security::hygiene::clean(&text).text {
            std::borrow::Cow::Owned(cleaned) => cleaned,
            std::borrow::Cow::Borrowed(_) => text,
        }
    }

    pub(super) fn listing_failed(&self, server: &Server, what: &str, error: &CallError) {
        self.log.warn(&format!(
            "Failed to list {what} of '{}': {}",
            server.name(),
            self.redact(&error.to_string())
        ));
    }
}

/// A read resource's parts as text: text parts as they are, blobs as a line (what the
/// resource context has always shown).
pub(super) fn resource_text(contents: &[ResourceContents]) -> String {
    contents
        .iter()
        .filter_map(|part| match part {
            ResourceContents::TextResourceContents { text, .. } => Some(text.clone()),
            ResourceContents::BlobResourceContents { mime_type, uri, .. } => Some(format!(
                "[Binary resource: {}, {uri}]",
                mime_type.as_deref().unwrap_or("unknown")
            )),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Manager {
    /// A builtin tool's call (`resourceTools`, `promptTools`): its text, not yet wrapped.
    pub(super) async fn run_builtin(
        &self,
        server: &Server,
        builtin: Builtin,
        arguments: Option<Map<String, Value>>,
    ) -> Result<String, String> {
        let arguments = arguments.unwrap_or_default();
        let text_arg = |key: &str| -> Result<String, String> {
            match arguments.get(key) {
                Some(Value::String(s)) => Ok(s.clone()),
                Some(other) => Err(format!(
                    "'{key}' must be a string, got {}",
                    kind_in_words(other)
                )),
                None => Err(format!("'{key}' is required")),
            }
        };
        // An idle server is started for this (within its connect timeout).
        let peer = server
            .awake_peer(&tokio_util::sync::CancellationToken::new())
            .await
            .map_err(|e| e.to_string())?;
        match builtin {
            Builtin::ResourcesList => {
                let list: Vec<Value> = self
                    .server_resources_list(server, &peer)
                    .await
                    .into_iter()
                    .map(|r| {
                        let mut v = serde_json::json!({ "name": r.name });
                        v[if r.is_template { "uriTemplate" } else { "uri" }] = Value::from(r.uri);
                        for (key, value) in [
                            ("title", r.title),
                            ("description", r.description),
                            ("mimeType", r.mime_type),
                        ] {
                            if let Some(value) = value {
                                v[key] = Value::from(value);
                            }
                        }
                        v
                    })
                    .collect();
                Ok(Value::Array(list).to_string())
            }
            Builtin::ResourcesRead => self.resource_raw(server, &text_arg("uri")?).await,
            Builtin::PromptsList => {
                let list: Vec<Value> = self
                    .server_prompts(server, &peer)
                    .await
                    .into_iter()
                    .map(|p| {
                        let mut v = serde_json::json!({ "name": p.name });
                        if let Some(d) = p.description {
                            v["description"] = Value::from(d);
                        }
                        v["arguments"] = p
                            .arguments
                            .into_iter()
                            .map(|a| {
                                let mut arg =
                                    serde_json::json!({ "name": a.name, "required": a.required });
                                if let Some(d) = a.description {
                                    arg["description"] = Value::from(d);
                                }
                                arg
                            })
                            .collect();
                        v
                    })
                    .collect();
                Ok(Value::Array(list).to_string())
            }
            Builtin::PromptsGet => {
                let name = text_arg("name")?;
                let prompt_args = match arguments.get("arguments") {
                    None | Some(Value::Null) => None,
                    Some(Value::Object(map)) => Some(map.clone()),
                    Some(other) => {
                        return Err(format!(
                            "'arguments' must be an object, got {}",
                            kind_in_words(other)
                        ));
                    }
                };
                let (description, messages) = self.prompt_raw(server, &name, prompt_args).await?;
                let mut parts: Vec<String> = description.into_iter().collect();
                parts.extend(
                    messages
                        .into_iter()
                        .map(|(role, text)| format!("[{role}]\n{text}")),
                );
                Ok(parts.join("\n\n"))
            }
        }
    }
}

pub(super) fn declares_resources(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.capabilities.resources.is_some())
}

pub(super) fn declares_prompts(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.capabilities.prompts.is_some())
}

/// The server offers subscriptions to its resources.
pub(super) fn declares_subscribe(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| {
        (info.capabilities.resources.as_ref()).is_some_and(|r| r.subscribe == Some(true))
    })
}
