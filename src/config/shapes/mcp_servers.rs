//! The `mcpServers` files of Claude Desktop (`claude_desktop_config.json`),
//! Cursor (`mcp.json`), Claude Code (`.mcp.json`), and VS Code's
//! `.vscode/mcp.json` (`servers` + `type`).
//!
//! ```json
//! { "mcpServers": { "fs": { "command": "npx", "args": ["-y", "server-fs"], "env": {} },
//!                   "docs": { "url": "https://…/mcp", "headers": { "Authorization": "…" } } } }
//! { "servers": { "gh": { "type": "http", "url": "https://…" } }, "inputs": [] }
//! ```
//!
//! | source field | our `McpConfig` |
//! |---|---|
//! | `command`, `args`, `cwd`, `url`, `enabled` | the same |
//! | `env`, `headers` | the same; number and boolean values become strings |
//! | `type` or `transport`: `stdio` \| `http` \| `streamable-http` \| `sse` | `transport` (both given and different: error) |
//! | neither | `http` when `url` is given without `command`, else `stdio` |
//! | `disabled` (Cline, Roo, Windsurf) | `enabled: !disabled` |
//! | `envFile` (VS Code) | warning, ignored |
//! | anything else (`autoApprove`, `timeout`, `description`…) | warning, ignored (these tools ignore unknown keys) |
//!
//! Other top-level keys (the host application's own settings) are ignored
//! with one warning; VS Code's `inputs` gets its own warning when it is not
//! empty (`${input:…}` strings are passed on unchanged).

use serde_json::Value;

use super::common::{Conv, ConvServer, Item, quoted_keys};
use crate::config::values::{excerpt, type_name};

fn transport_of(t: &str) -> Option<&'static str> {
    match t.to_lowercase().as_str() {
        "stdio" => Some("stdio"),
        "http" => Some("http"),
        "streamable-http" => Some("streamable-http"),
        "sse" => Some("sse"),
        _ => None,
    }
}

fn server(conv: &mut Conv, name: &str, base: String, entry: &Value) {
    let Value::Object(obj) = entry else {
        conv.issue(super::common::expected(&base, "object", entry));
        return;
    };
    let mut s = ConvServer::new(name, base);
    let mut transport: Option<(&'static str, &str)> = None;
    let mut transport_bad = false;
    for (key, v) in obj {
        match key.as_str() {
            "command" | "args" | "cwd" | "url" | "enabled" => s.copy(key, key, v),
            "env" | "headers" => s.string_record(key, key, v),
            "type" | "transport" => match v {
                Value::String(t) => match transport_of(t) {
                    Some(kind) => match transport {
                        Some((prev, prev_key)) if prev != kind => {
                            s.issue(
                                key,
                                format_args!(
                                    "'{key}' is '{}' but '{prev_key}' is '{prev}'",
                                    excerpt(t)
                                ),
                            );
                            transport_bad = true;
                        }
                        Some(_) => {}
                        None => {
                            transport =
                                Some((kind, if key == "type" { "type" } else { "transport" }))
                        }
                    },
                    None => {
                        s.issue(
                            key,
                            format_args!(
                                "Invalid {key} '{}': expected 'stdio', 'http', 'streamable-http' or 'sse'",
                                excerpt(t)
                            ),
                        );
                        transport_bad = true;
                    }
                },
                other => {
                    s.expected(key, "string", other);
                    transport_bad = true;
                }
            },
            "disabled" => match v {
                // `true` is applied after the loop (it wins over `enabled`).
                Value::Bool(_) => {}
                other => s.expected(key, "boolean", other),
            },
            "envFile" => conv.warn(format!(
                "{}: Not supported by this package; ignored",
                s.path(key)
            )),
            other => conv.ignored_key(&s.base, other),
        }
    }
    // `disabled: true` wins over an `enabled` that came earlier or later.
    if obj.get("disabled") == Some(&Value::Bool(true)) {
        s.obj.insert("enabled".to_owned(), Value::Bool(false));
    }
    match transport {
        Some((kind, key)) => {
            s.obj.insert("transport".to_owned(), Value::from(kind));
            if key == "type" {
                s.rename("transport", "type");
            }
        }
        None if !transport_bad && obj.contains_key("url") && !obj.contains_key("command") => {
            s.obj.insert("transport".to_owned(), Value::from("http"));
        }
        None => {}
    }
    conv.items.push(Item::Server(s));
}

/// Converts a root with `mcpServers` (or VS Code's `servers`).
pub(super) fn convert(root: &Value, conv: &mut Conv) {
    let Value::Object(obj) = root else {
        conv.issue(format!(
            "(root): Expected object, received {}",
            type_name(root)
        ));
        return;
    };
    let key = match (obj.contains_key("mcpServers"), obj.contains_key("servers")) {
        (true, true) => {
            conv.issue(
                "(root): Found both 'mcpServers' and 'servers'; keep one of them".to_owned(),
            );
            return;
        }
        (true, false) => "mcpServers",
        (false, true) => "servers",
        (false, false) => {
            conv.issue(
                "(root): Expected 'mcpServers' (Claude Desktop, Cursor) or 'servers' (VS Code)"
                    .to_owned(),
            );
            return;
        }
    };
    let others: Vec<&String> = obj
        .keys()
        .filter(|k| k.as_str() != key && k.as_str() != "inputs")
        .collect();
    if !others.is_empty() {
        conv.warn(format!(
            "(root): Ignored keys {}",
            quoted_keys(others.into_iter())
        ));
    }
    match obj.get("inputs") {
        Some(Value::Array(a)) if a.is_empty() => {}
        Some(_) => conv.warn(
            "inputs: VS Code input variables are not supported; '${input:…}' strings are passed on unchanged"
                .to_owned(),
        ),
        None => {}
    }
    let Some(map) = obj.get(key) else { return };
    let Value::Object(servers) = map else {
        conv.issue(super::common::expected(key, "object", map));
        return;
    };
    for (name, entry) in servers {
        server(conv, name, format!("{key}.{name}"), entry);
    }
}
