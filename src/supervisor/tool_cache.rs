//! A server's tool list kept between runs under `cacheDir`, so a `lazy` server offers its
//! tools at `start()` without a process. One file per server definition: its name holds a
//! SHA-256 over what decides the listing — transport, command, args, cwd, URL, the names (never
//! the values) of its `env` and `headers`, and the settings that shape the tools — so a changed
//! definition reads no stale list. Secret values never reach the file: tools are stored as the
//! bridge made them (labels, descriptions and schemas already passed the redactor). Written
//! atomically, mode 0600; a file that cannot be read is ignored with a warning.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};

use super::server::{Builtin, Server, ToolEntry};
use crate::security::pinning::{Pin, canonical};

const VERSION: u64 = 1;

pub(super) struct ToolCache {
    path: PathBuf,
    key: String,
}

impl ToolCache {
    /// The cache of `server`, when it or its manager has a `cacheDir`.
    pub fn of(server: &Server) -> Option<Self> {
        let dir = server
            .config
            .cache_dir
            .as_ref()
            .map(PathBuf::from)
            .or_else(|| server.options.cache_dir.clone())?;
        let key = definition_key(server);
        let safe: String = server
            .config
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        Some(Self {
            path: dir.join(format!("{safe}-{}.json", &key[..16])),
            key,
        })
    }

    /// The cached tools, when there is a file for this definition and it reads.
    pub fn load(&self, server: &Server) -> Option<Vec<ToolEntry>> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                self.ignored(server, &e.to_string());
                return None;
            }
        };
        let tools = serde_json::from_str::<Value>(&text)
            .ok()
            .filter(|v| v["version"] == VERSION && v["key"] == self.key.as_str())
            .and_then(|v| {
                v["tools"]
                    .as_array()?
                    .iter()
                    .map(tool_from_json)
                    .collect::<Option<Vec<_>>>()
            });
        if tools.is_none() {
            self.ignored(server, "not a tool cache of this server's definition");
        }
        tools
    }

    pub fn store(&self, server: &Server, tools: &[ToolEntry]) {
        let text = json!({
            "version": VERSION,
            "key": self.key,
            "server": server.config.name,
            "tools": tools.iter().map(tool_to_json).collect::<Vec<_>>(),
        })
        .to_string();
        if let Err(e) = crate::atomic_file::write(&self.path, text.as_bytes()) {
            server.log.warn(&format!(
                "MCP server '{}': cannot write its tool cache {}: {e}",
                server.config.name,
                self.path.display()
            ));
        }
    }

    fn ignored(&self, server: &Server, why: &str) {
        server.log.warn(&format!(
            "MCP server '{}': tool cache {} ignored ({why})",
            server.config.name,
            self.path.display()
        ));
    }
}

/// Hex SHA-256 over what decides a server's listing; secret values are not part of it.
fn definition_key(server: &Server) -> String {
    let c = &server.config;
    let keys =
        |pairs: &[(String, String)]| pairs.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    let definition = json!({
        "transport": c.transport.as_str(),
        "command": c.command,
        "args": c.args,
        "cwd": c.cwd,
        "url": c.url,
        "env": keys(&c.env),
        "headers": keys(&c.headers),
        "toolFilter": format!("{:?}", c.tool_filter),
        "maxTools": c.max_tools,
        "schemas": format!("{:?}", c.schemas.unwrap_or(server.options.schemas)),
        "resourceTools": c.resource_tools && c.resources,
        "promptTools": c.prompt_tools,
        "name": c.name,
    });
    crate::digest::sha256_hex(canonical(&definition).as_bytes())
}

fn tool_to_json(tool: &ToolEntry) -> Value {
    json!({
        "name": tool.mcp_name,
        "label": tool.label,
        "description": tool.description,
        "parameters": &*tool.parameters_json,
        "outputSchema": tool.output_schema.as_deref(),
        "builtin": tool.builtin.map(Builtin::name),
        "pin": tool.pin.as_ref().map(|p| p.to_json()),
        "task": tool.task,
    })
}

fn tool_from_json(value: &Value) -> Option<ToolEntry> {
    let text = |key: &str| value.get(key)?.as_str().map(str::to_owned);
    let builtin = match value.get("builtin") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => Some(
            [
                Builtin::ResourcesList,
                Builtin::ResourcesRead,
                Builtin::PromptsList,
                Builtin::PromptsGet,
            ]
            .into_iter()
            .find(|b| b.name() == name)?,
        ),
        Some(_) => return None,
    };
    let parameters = text("parameters")?;
    Some(ToolEntry {
        mcp_name: text("name")?,
        label: text("label")?,
        description: text("description")?,
        hygienic: crate::security::hygiene::schema::clean_schema(&parameters).map(Arc::new),
        parameters_json: Arc::from(parameters),
        output_schema: match value.get("outputSchema") {
            None | Some(Value::Null) => None,
            Some(schema) => Some(Arc::new(schema.clone())),
        },
        builtin,
        pin: match value.get("pin") {
            None | Some(Value::Null) => None,
            Some(pin) => Some(Arc::new(Pin::from_json(pin)?)),
        },
        task: value.get("task").and_then(Value::as_bool).unwrap_or(false),
    })
}
