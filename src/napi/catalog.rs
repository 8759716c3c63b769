//! Prompts and resources for JS: the objects `listPrompts`, `getPrompt`, `listResources` and
//! `readResource` resolve with, and the checks of their arguments (bad ones reject, never
//! throw).

use ::napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::manager::{PromptInfo, PromptOutcome, ResourceInfo};

#[napi(object)]
pub struct McpPromptArgument {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
}

#[napi(object)]
pub struct McpPrompt {
    pub server: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub arguments: Vec<McpPromptArgument>,
}

#[napi(object)]
pub struct McpTextContent {
    #[napi(js_name = "type", ts_type = "'text'")]
    pub kind: String,
    /// Wrapped as untrusted content from the server.
    pub text: String,
}

#[napi(object)]
pub struct McpPromptMessage {
    #[napi(ts_type = "'user' | 'assistant'")]
    pub role: String,
    pub content: McpTextContent,
}

#[napi(object)]
pub struct McpPromptResult {
    pub description: Option<String>,
    pub messages: Vec<McpPromptMessage>,
}

#[napi(object)]
pub struct McpResource {
    pub server: String,
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

#[napi(object)]
pub struct McpResourceTemplate {
    pub server: String,
    /// RFC 6570.
    pub uri_template: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

#[napi(object)]
pub struct McpResourceList {
    pub resources: Vec<McpResource>,
    pub templates: Vec<McpResourceTemplate>,
}

pub fn prompts(list: Vec<PromptInfo>) -> Vec<McpPrompt> {
    list.into_iter()
        .map(|p| McpPrompt {
            server: p.server,
            name: p.name,
            title: p.title,
            description: p.description,
            arguments: p
                .arguments
                .into_iter()
                .map(|a| McpPromptArgument {
                    name: a.name,
                    title: a.title,
                    description: a.description,
                    required: a.required,
                })
                .collect(),
        })
        .collect()
}

pub fn prompt_result(outcome: PromptOutcome) -> McpPromptResult {
    McpPromptResult {
        description: outcome.description,
        messages: outcome
            .messages
            .into_iter()
            .map(|(role, text)| McpPromptMessage {
                role: role.to_owned(),
                content: McpTextContent {
                    kind: "text".to_owned(),
                    text,
                },
            })
            .collect(),
    }
}

pub fn resource_list(list: Vec<ResourceInfo>) -> McpResourceList {
    let mut out = McpResourceList {
        resources: Vec::new(),
        templates: Vec::new(),
    };
    for r in list {
        if r.is_template {
            out.templates.push(McpResourceTemplate {
                server: r.server,
                uri_template: r.uri,
                name: r.name,
                title: r.title,
                description: r.description,
                mime_type: r.mime_type,
            });
        } else {
            out.resources.push(McpResource {
                server: r.server,
                uri: r.uri,
                name: r.name,
                title: r.title,
                description: r.description,
                mime_type: r.mime_type,
            });
        }
    }
    out
}

/// A string argument, or why not (naming the function and the argument).
pub fn string_arg(value: Unknown, what: &str) -> std::result::Result<String, String> {
    match value.get_type() {
        Ok(ValueType::String) => {
            String::from_unknown(value).map_err(|_| format!("{what} must be a string"))
        }
        _ => Err(format!(
            "{what} must be a string, got {}",
            super::type_name(&value)
        )),
    }
}
