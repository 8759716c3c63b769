//! ACP `session/new`'s `mcpServers` array, bare or inside the request params
//! (`{ "cwd": "…", "mcpServers": [ … ] }`; the params' other keys are not MCP
//! config and are ignored silently).
//!
//! ```json
//! [ { "name": "fs", "command": "/usr/bin/fs-mcp", "args": [], "env": [ { "name": "K", "value": "v" } ] },
//!   { "type": "http", "name": "docs", "url": "https://…/mcp", "headers": [ { "name": "Authorization", "value": "…" } ] } ]
//! ```
//!
//! | source field | our `McpConfig` |
//! |---|---|
//! | `name` (required, non-empty, unique) | the server key |
//! | `type`: absent or `stdio` → stdio; `http`; `sse` | `transport` |
//! | stdio: `command`, `args` | the same |
//! | stdio: `env: [{ name, value }]` | `env` (a repeated name: the last wins, with a warning) |
//! | http/sse: `url` | the same |
//! | http/sse: `headers: [{ name, value }]` | `headers` (same rule) |
//! | `_meta` | ignored silently (ACP's extension point) |
//! | a field of the other transport, anything else | warning, ignored (ACP implementations ignore unknown fields) |

use serde_json::{Map, Value};

use super::common::{Conv, ConvServer, Item, join};
use crate::config::values::{excerpt, type_name};

/// `[{ name, value }]` → `{ name: value }` at our key `ours`.
fn pairs(conv: &mut Conv, s: &mut ConvServer, ours: &str, v: &Value) {
    let Value::Array(items) = v else {
        s.expected(ours, "array", v);
        return;
    };
    let mut out = Map::new();
    let mut first_at: Map<String, Value> = Map::new();
    for (i, item) in items.iter().enumerate() {
        let item_key = format!("{ours}.{i}");
        let Value::Object(pair) = item else {
            s.expected(&item_key, "object", item);
            continue;
        };
        let mut name: Option<&str> = None;
        let mut value: Option<&str> = None;
        let mut ok = true;
        for (k, pv) in pair {
            match k.as_str() {
                "name" => match pv {
                    Value::String(n) => name = Some(n),
                    other => {
                        s.expected(&format!("{item_key}.name"), "string", other);
                        ok = false;
                    }
                },
                "value" => match pv {
                    Value::String(x) => value = Some(x),
                    other => {
                        s.expected(&format!("{item_key}.value"), "string", other);
                        ok = false;
                    }
                },
                "_meta" => {}
                other => conv.ignored_key(&s.path(&item_key), other),
            }
        }
        if ok && name.is_none() {
            s.issue(&item_key, "Required key 'name' is missing");
            ok = false;
        }
        if ok && value.is_none() {
            s.issue(&item_key, "Required key 'value' is missing");
            ok = false;
        }
        let (Some(n), Some(x), true) = (name, value, ok) else {
            continue;
        };
        if let Some(Value::String(prev)) = first_at.get(n) {
            conv.warn(format!(
                "{}: '{}' repeats {}; the last value wins",
                s.path(&format!("{item_key}.name")),
                excerpt(n),
                prev
            ));
        } else {
            first_at.insert(n.to_owned(), Value::String(s.path(&item_key)));
        }
        out.insert(n.to_owned(), Value::String(x.to_owned()));
        // Our `env.<name>` is the source's `env.<i>.value`.
        s.rename(&format!("{ours}.{n}"), &format!("{item_key}.value"));
    }
    s.obj.insert(ours.to_owned(), Value::Object(out));
}

fn server(conv: &mut Conv, seen: &mut Map<String, Value>, base: String, entry: &Value) {
    let Value::Object(obj) = entry else {
        conv.issue(super::common::expected(&base, "object", entry));
        return;
    };
    let name = match obj.get("name") {
        Some(Value::String(n)) if !n.is_empty() => n.clone(),
        Some(Value::String(_)) => {
            conv.issue(format!("{base}.name: Must not be empty"));
            return;
        }
        Some(other) => {
            conv.issue(super::common::expected(
                &format!("{base}.name"),
                "string",
                other,
            ));
            return;
        }
        None => {
            conv.issue(format!("{base}: Required key 'name' is missing"));
            return;
        }
    };
    if let Some(Value::String(first)) = seen.get(&name) {
        conv.issue(format!(
            "{base}.name: Duplicate server name '{}' (first at {first})",
            excerpt(&name)
        ));
        return;
    }
    seen.insert(name.clone(), Value::String(base.clone()));

    let mut s = ConvServer::new(&name, base);
    let kind = match obj.get("type") {
        None => "stdio",
        Some(Value::String(t)) => match t.as_str() {
            "stdio" => "stdio",
            "http" => "http",
            "sse" => "sse",
            other => {
                s.issue(
                    "type",
                    format_args!(
                        "Invalid type '{}': expected 'http' or 'sse' (or no type for stdio)",
                        excerpt(other)
                    ),
                );
                conv.items.push(Item::Server(s));
                return;
            }
        },
        Some(other) => {
            s.expected("type", "string", other);
            conv.items.push(Item::Server(s));
            return;
        }
    };
    let stdio = kind == "stdio";
    for (key, v) in obj {
        match key.as_str() {
            "name" | "_meta" => {}
            "type" => {
                if !stdio {
                    s.obj.insert("transport".to_owned(), Value::from(kind));
                    s.rename("transport", "type");
                }
            }
            "command" | "args" if stdio => s.copy(key, key, v),
            "env" if stdio => pairs(conv, &mut s, "env", v),
            "url" if !stdio => s.copy(key, key, v),
            "headers" if !stdio => pairs(conv, &mut s, "headers", v),
            "command" | "args" | "env" | "url" | "headers" => conv.warn(format!(
                "{}: Ignored for a{} {kind} server",
                s.path(key),
                if kind == "http" { "n" } else { "" }
            )),
            other => conv.ignored_key(&s.base, other),
        }
    }
    conv.items.push(Item::Server(s));
}

/// Converts the array `list` whose path is `base` (`""` for a bare array).
pub(super) fn convert(list: &Value, base: &str, conv: &mut Conv) {
    let Value::Array(items) = list else {
        conv.issue(format!(
            "{}: Expected array, received {}",
            if base.is_empty() { "(root)" } else { base },
            type_name(list)
        ));
        return;
    };
    let mut seen = Map::new();
    for (i, entry) in items.iter().enumerate() {
        server(conv, &mut seen, join(base, &i.to_string()), entry);
    }
}
