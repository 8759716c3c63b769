//! What every converted shape shares: collecting issues and warnings with the
//! source document's paths, and running each converted server through
//! [`validate_mcp_config`] with its error paths translated back to the source.

use serde_json::{Map, Value};

use crate::config::validate_mcp_config;
use crate::config::values::{excerpt, type_name};

/// `base.key`, or `key` when `base` is empty.
pub(super) fn join(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_owned()
    } else {
        format!("{base}.{key}")
    }
}

/// The path used for messages about the root itself.
pub(super) fn at(base: &str) -> &str {
    if base.is_empty() { "(root)" } else { base }
}

pub(super) fn expected(path: &str, what: &str, got: &Value) -> String {
    format!("{path}: Expected {what}, received {}", type_name(got))
}

pub(super) fn quoted_keys<'a>(keys: impl Iterator<Item = &'a String>) -> String {
    keys.take(20)
        .map(|k| format!("'{}'", excerpt(k)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One server converted to our `McpConfig` server object.
pub(super) struct ConvServer {
    /// The key in our `servers` map.
    pub name: String,
    /// The entry's path in the source document (`mcpServers.fs`, `mcpServers.0`).
    pub base: String,
    /// Our server object.
    pub obj: Map<String, Value>,
    /// Renamed paths: (our path below the server, the source path below `base`).
    pub paths: Vec<(String, String)>,
    /// Problems found while converting, in key order.
    pub issues: Vec<String>,
}

impl ConvServer {
    pub fn new(name: &str, base: String) -> Self {
        Self {
            name: name.to_owned(),
            base,
            obj: Map::new(),
            paths: Vec::new(),
            issues: Vec::new(),
        }
    }

    /// `base.key` in the source.
    pub fn path(&self, key: &str) -> String {
        join(&self.base, key)
    }

    /// Copies `v` (from source key `src_key`) to our key `ours`, unless it is
    /// nested too deeply to copy safely.
    pub fn copy(&mut self, ours: &str, src_key: &str, v: &Value) {
        if let Some(v) = self.checked(src_key, v) {
            self.obj.insert(ours.to_owned(), v);
            if ours != src_key {
                self.rename(ours, src_key);
            }
        }
    }

    /// A deep copy of `v`, or an issue when it nests more than
    /// [`crate::config::MAX_CONFIG_DEPTH`] levels.
    pub fn checked(&mut self, src_key: &str, v: &Value) -> Option<Value> {
        match super::check_depth(&self.path(src_key), v) {
            Ok(()) => Some(v.clone()),
            Err(issue) => {
                self.issues.push(issue);
                None
            }
        }
    }

    pub fn rename(&mut self, ours: &str, src: &str) {
        self.paths.push((ours.to_owned(), src.to_owned()));
    }

    pub fn issue(&mut self, src_key: &str, message: impl std::fmt::Display) {
        self.issues
            .push(format!("{}: {message}", self.path(src_key)));
    }

    pub fn expected(&mut self, src_key: &str, what: &str, got: &Value) {
        self.issues.push(expected(&self.path(src_key), what, got));
    }

    /// A `Record<string, string | number | boolean>` (`env`, `headers`) of
    /// current OpenClaw and the `mcpServers` files: numbers and booleans become
    /// strings (as the host tools do); strings stay as they are (`${VAR}`
    /// included); anything else is copied for the validator to judge (a
    /// `SecretRef` object where the model accepts one, an error otherwise).
    pub fn string_record(&mut self, ours: &str, src_key: &str, v: &Value) {
        let Value::Object(map) = v else {
            self.copy(ours, src_key, v);
            return;
        };
        let mut out = Map::new();
        for (k, item) in map {
            let value = match item {
                Value::Number(n) => Value::String(n.to_string()),
                Value::Bool(b) => Value::String(b.to_string()),
                Value::String(_) => item.clone(),
                other => match self.checked(&format!("{src_key}.{k}"), other) {
                    Some(v) => v,
                    None => continue,
                },
            };
            out.insert(k.clone(), value);
        }
        self.obj.insert(ours.to_owned(), Value::Object(out));
        if ours != src_key {
            self.rename(ours, src_key);
        }
    }
}

/// One step of a converted document, in document order.
pub(super) enum Item {
    Issue(String),
    Server(ConvServer),
}

/// A converted document before validation.
#[derive(Default)]
pub(super) struct Conv {
    pub items: Vec<Item>,
    pub warnings: Vec<String>,
    /// Per server: accepted source fields our model has no place for.
    pub recorded: Map<String, Value>,
}

impl Conv {
    pub fn issue(&mut self, message: String) {
        self.items.push(Item::Issue(message));
    }

    pub fn warn(&mut self, message: String) {
        self.warnings.push(message);
    }

    pub fn ignored_key(&mut self, base: &str, key: &str) {
        self.warn(format!(
            "{}: Ignored unrecognized key '{}'",
            at(base),
            excerpt(key)
        ));
    }

    pub fn record(&mut self, server: &str, key: &str, v: Value) {
        let entry = self
            .recorded
            .entry(server.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = entry {
            m.insert(key.to_owned(), v);
        }
    }
}

/// Validates one server alone. With `schema_only`, an `enabled` that is a
/// boolean or absent is forced to `false`, so only schema issues are reported
/// (the transport requirement is checked for enabled servers only).
fn validate_one(name: &str, obj: &Map<String, Value>, schema_only: bool) -> Result<(), String> {
    let mut o = obj.clone();
    if schema_only && matches!(o.get("enabled"), None | Some(Value::Bool(_))) {
        o.insert("enabled".to_owned(), Value::Bool(false));
    }
    let mut servers = Map::new();
    servers.insert(name.to_owned(), Value::Object(o));
    let mut root = Map::new();
    root.insert("servers".to_owned(), Value::Object(servers));
    validate_mcp_config(&Value::Object(root)).map(|_| ())
}

/// Rewrites one `servers.<name>…: message` issue to the source's path.
fn translate_one(issue: &str, prefix: &str, server: &ConvServer) -> String {
    let Some(rest) = issue.strip_prefix(prefix) else {
        return issue.to_owned();
    };
    if let Some(sub) = rest.strip_prefix('.') {
        let best = server
            .paths
            .iter()
            .filter(|(ours, _)| {
                sub.starts_with(ours.as_str())
                    && matches!(sub[ours.len()..].chars().next(), Some('.' | ':'))
            })
            .max_by_key(|(ours, _)| ours.len());
        if let Some((ours, src)) = best {
            return format!("{}{}", join(&server.base, src), &sub[ours.len()..]);
        }
        return join(&server.base, sub);
    }
    format!("{}{rest}", at(&server.base))
}

/// Splits a joined validator message (`servers.<name>…; servers.<name>…`) into
/// its issues and translates each.
fn translate(err: &str, server: &ConvServer) -> Vec<String> {
    let prefix = format!("servers.{}", server.name);
    let sep = format!("; {prefix}");
    let mut out = Vec::new();
    let mut rest = err;
    loop {
        let skip = if rest.starts_with(&prefix) {
            prefix.len()
        } else {
            0
        };
        match rest[skip..].find(&sep) {
            Some(i) => {
                out.push(translate_one(&rest[..skip + i], &prefix, server));
                rest = &rest[skip + i + 2..];
            }
            None => {
                out.push(translate_one(rest, &prefix, server));
                break;
            }
        }
    }
    out
}

/// A converted document: the `McpConfig` value, the warnings, the recorded fields.
pub(super) type Finished = (Value, Vec<String>, Map<String, Value>);

/// The validated `McpConfig` value of a converted document, or every issue
/// joined by `"; "` (schema issues of all servers first; only when there are
/// none, the first enabled server lacking its `command`/`url`).
pub(super) fn finish(conv: Conv) -> Result<Finished, String> {
    let mut issues: Vec<String> = Vec::new();
    let mut servers: Vec<ConvServer> = Vec::new();
    for item in conv.items {
        match item {
            Item::Issue(i) => issues.push(i),
            Item::Server(s) => {
                issues.extend(s.issues.iter().cloned());
                if let Err(e) = validate_one(&s.name, &s.obj, true) {
                    issues.extend(translate(&e, &s));
                }
                servers.push(s);
            }
        }
    }
    if !issues.is_empty() {
        return Err(issues.join("; "));
    }
    for s in &servers {
        if let Err(e) = validate_one(&s.name, &s.obj, false) {
            return Err(translate(&e, s).join("; "));
        }
    }
    let mut map = Map::new();
    for s in servers {
        map.insert(s.name, Value::Object(s.obj));
    }
    let mut root = Map::new();
    root.insert("servers".to_owned(), Value::Object(map));
    let value = Value::Object(root);
    // Every server passed alone; the whole must pass too (a safety net).
    validate_mcp_config(&value)?;
    Ok((value, conv.warnings, conv.recorded))
}
