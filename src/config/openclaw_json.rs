//! Extracting an `McpConfig` value from the places it can live.
//!
//! Here: a plain `McpConfig` (`{ "servers": { … } }` or `{}`), returned as is,
//! and an `openclaw.json` per PR #21530's design: `agents.defaults.mcp` plus
//! per-agent `agents.list[].mcp` ([`mcp_config_from_openclaw`]).
//!
//! Every other shape (current OpenClaw's top-level `mcp.servers`, the
//! `mcpServers` files of Claude Desktop / Cursor / VS Code, ACP's `mcpServers`
//! array) is detected and converted by [`crate::config::extract_mcp_config`]
//! (`src/config/shapes/`). [`detect_shape`], [`detect_and_extract`] and
//! [`load_mcp_config_file`] are the original two-shape functions, kept
//! unchanged (their messages are pinned by tests): for the other shapes they
//! still answer "not supported yet". New callers use `extract_mcp_config`.
//!
//! The output is always a JSON value meant for
//! [`crate::config::validate_mcp_config`]; this module does not validate
//! server entries itself, it only checks the shapes it has to walk.

use std::path::Path;

use serde_json::{Map, Value};

use super::validate::{deeper_than, excerpt, type_name};

/// The deepest nesting accepted in an MCP config value that this module copies.
/// A valid `McpConfig` is 3 levels deep (`servers` → server → `env`); the limit
/// exists because copying (and dropping) a `serde_json::Value` is recursive, so
/// a hand-built value nested 100 000 levels deep would overflow the stack.
pub const MAX_CONFIG_DEPTH: usize = 32;

fn check_depth(path: &str, v: &Value) -> Result<(), String> {
    if deeper_than(v, MAX_CONFIG_DEPTH) {
        Err(format!(
            "{path}: Nested too deeply (more than {MAX_CONFIG_DEPTH} levels)"
        ))
    } else {
        Ok(())
    }
}

/// Which kind of document a config root is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigShape {
    /// `{ servers?: {...} }` (our own, strict). Option name `"mcp"`.
    McpConfig,
    /// `openclaw.json` with `agents.defaults.mcp` / `agents.list[].mcp`
    /// (PR #21530's design). Option name `"openclaw"`.
    OpenClawAgents,
    /// Current OpenClaw's top-level `mcp: { servers }` ("bundle-mcp").
    /// Option name `"openclaw-mcp"`.
    OpenClawMcp,
    /// `{ "mcpServers": {...} }` of Claude Desktop / Cursor / Claude Code, or
    /// VS Code's `{ "servers": {...} }` with `type`. Option name `"mcpServers"`.
    McpServers,
    /// ACP `session/new`'s `mcpServers` array (bare, or inside the params
    /// object). Option name `"acp"`.
    Acp,
}

impl ConfigShape {
    /// Every shape, in the order of the option names.
    pub const ALL: [ConfigShape; 5] = [
        Self::McpConfig,
        Self::OpenClawAgents,
        Self::OpenClawMcp,
        Self::McpServers,
        Self::Acp,
    ];

    /// The option name: `"mcp"`, `"openclaw"`, `"openclaw-mcp"`,
    /// `"mcpServers"` or `"acp"`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::McpConfig => "mcp",
            Self::OpenClawAgents => "openclaw",
            Self::OpenClawMcp => "openclaw-mcp",
            Self::McpServers => "mcpServers",
            Self::Acp => "acp",
        }
    }

    /// Parses an option name (exact spelling), or says which names exist.
    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| {
                format!(
                    "Unknown config shape '{}': expected 'mcp', 'openclaw', 'openclaw-mcp', \
                     'mcpServers' or 'acp'",
                    excerpt(name)
                )
            })
    }
}

fn expected(path: &str, what: &str, got: &Value) -> String {
    format!("{path}: Expected {what}, received {}", type_name(got))
}

fn quoted_keys<'a>(keys: impl Iterator<Item = &'a String>) -> String {
    keys.take(20)
        .map(|k| format!("'{}'", excerpt(k)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Classifies a config root as one of the two original shapes (our
/// `McpConfig` or the design's `openclaw.json`), or says why it is not one of
/// them. Every shape: [`crate::config::detect_config_shape`].
pub fn detect_shape(root: &Value) -> Result<ConfigShape, String> {
    let Value::Object(obj) = root else {
        return Err(format!(
            "Expected a JSON object (an MCP config or an openclaw.json), received {}",
            type_name(root)
        ));
    };
    let has_servers = obj.contains_key("servers");
    let has_agents = obj.contains_key("agents");
    match (has_servers, has_agents) {
        (true, true) => Err(
            "Ambiguous config: found both 'servers' (MCP config) and 'agents' \
                             (openclaw.json) at the top level"
                .to_owned(),
        ),
        (true, false) => Ok(ConfigShape::McpConfig),
        (false, true) => Ok(ConfigShape::OpenClawAgents),
        (false, false) if obj.is_empty() => Ok(ConfigShape::McpConfig),
        (false, false) if obj.contains_key("mcp") => Err(
            "Top-level 'mcp' (the bundle-mcp config of current OpenClaw) is not supported yet; \
             put the servers under 'agents.defaults.mcp.servers'"
                .to_owned(),
        ),
        (false, false) if obj.contains_key("mcpServers") => Err(
            "'mcpServers' (Claude Desktop config) is not supported yet; use an MCP config with \
             'servers'"
                .to_owned(),
        ),
        (false, false) => Err(format!(
            "Unrecognized config shape: expected an MCP config with 'servers' or an openclaw.json \
             with 'agents'; found top-level keys {}",
            quoted_keys(obj.keys())
        )),
    }
}

/// The `McpConfig` of an `openclaw.json` root, for the defaults (`agent: None`)
/// or for one agent.
///
/// With an agent id, the agent is the first `agents.list[]` entry whose `id`
/// equals it, and its server map is `{...defaults.servers, ...agent.mcp.servers}`:
/// an agent entry replaces the default entry of the same key wholesale (keeping
/// that key's position); new agent keys follow the defaults' keys. Other keys of
/// the two `mcp` objects are merged shallowly (agent wins) and left for the
/// validator to judge.
pub fn mcp_config_from_openclaw(root: &Value, agent: Option<&str>) -> Result<Value, String> {
    let Value::Object(root) = root else {
        return Err(expected("(root)", "object", root));
    };
    let agents = match root.get("agents") {
        None => None,
        Some(Value::Object(a)) => Some(a),
        Some(other) => return Err(expected("agents", "object", other)),
    };
    let defaults_mcp: Option<&Map<String, Value>> = match agents.and_then(|a| a.get("defaults")) {
        None => None,
        Some(Value::Object(d)) => match d.get("mcp") {
            None => None,
            Some(Value::Object(m)) => Some(m),
            Some(other) => return Err(expected("agents.defaults.mcp", "object", other)),
        },
        Some(other) => return Err(expected("agents.defaults", "object", other)),
    };

    if let Some(m) = defaults_mcp {
        for (k, v) in m {
            check_depth(&format!("agents.defaults.mcp.{k}"), v)?;
        }
    }

    let Some(agent_id) = agent else {
        return Ok(Value::Object(defaults_mcp.cloned().unwrap_or_default()));
    };

    let list: &[Value] = match agents.and_then(|a| a.get("list")) {
        None => &[],
        Some(Value::Array(l)) => l,
        Some(other) => return Err(expected("agents.list", "array", other)),
    };
    let found = list
        .iter()
        .enumerate()
        .find(|(_, e)| e.get("id").and_then(Value::as_str) == Some(agent_id));
    let Some((index, entry)) = found else {
        let known: Vec<&str> = list
            .iter()
            .filter_map(|e| e.get("id").and_then(Value::as_str))
            .collect();
        return Err(if known.is_empty() {
            format!(
                "Unknown agent '{}': no agents are defined in agents.list",
                excerpt(agent_id)
            )
        } else {
            format!(
                "Unknown agent '{}': known agents are {}",
                excerpt(agent_id),
                known
                    .iter()
                    .take(50)
                    .map(|k| format!("'{}'", excerpt(k)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        });
    };
    let agent_mcp: Option<&Map<String, Value>> = match entry.get("mcp") {
        None => None,
        Some(Value::Object(m)) => Some(m),
        Some(other) => {
            return Err(expected(
                &format!("agents.list.{index}.mcp"),
                "object",
                other,
            ));
        }
    };

    if let Some(m) = agent_mcp {
        for (k, v) in m {
            check_depth(&format!("agents.list.{index}.mcp.{k}"), v)?;
        }
    }

    let servers_of = |mcp: Option<&Map<String, Value>>,
                      path: &str|
     -> Result<Option<Map<String, Value>>, String> {
        match mcp.and_then(|m| m.get("servers")) {
            None => Ok(None),
            Some(Value::Object(s)) => Ok(Some(s.clone())),
            Some(other) => Err(expected(path, "object", other)),
        }
    };
    let default_servers = servers_of(defaults_mcp, "agents.defaults.mcp.servers")?;
    let agent_servers = servers_of(agent_mcp, &format!("agents.list.{index}.mcp.servers"))?;

    let mut out: Map<String, Value> = defaults_mcp.cloned().unwrap_or_default();
    if let Some(m) = agent_mcp {
        for (k, v) in m {
            if k != "servers" {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    let merged = match (default_servers, agent_servers) {
        (None, None) => None,
        (Some(d), None) => Some(d),
        (None, Some(a)) => Some(a),
        (Some(mut d), Some(a)) => {
            // With `preserve_order`, `insert` on an existing key keeps its position.
            for (k, v) in a {
                d.insert(k, v);
            }
            Some(d)
        }
    };
    if let Some(servers) = merged {
        out.insert("servers".to_owned(), Value::Object(servers));
    }
    Ok(Value::Object(out))
}

/// Accepts any supported config root and returns the `McpConfig` value to
/// validate: a plain MCP config is returned unchanged (`agent` does not apply to
/// it and is ignored); an `openclaw.json` goes through
/// [`mcp_config_from_openclaw`]; anything else is a clear error.
pub fn detect_and_extract(root: &Value, agent: Option<&str>) -> Result<Value, String> {
    let options = crate::config::ExtractOptions { agent, shape: None };
    crate::config::extract_mcp_config(root, &options).map(|extracted| extracted.config)
}

/// Reads a config file (strict JSON; OpenClaw's JSON5 extensions such as
/// comments and trailing commas are not accepted) and runs
/// [`detect_and_extract`] on it.
pub fn load_mcp_config_file(path: impl AsRef<Path>, agent: Option<&str>) -> Result<Value, String> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("Cannot read {}: {e}", path.display()))?;
    let root: Value = serde_json::from_str(&text)
        .map_err(|e| format!("Invalid JSON in {}: {e}", path.display()))?;
    detect_and_extract(&root, agent)
}
