//! `openclaw.json` per PR #21530's design: `agents.defaults.mcp` plus per-agent
//! `agents.list[].mcp`, read for the defaults or for one agent.
//!
//! The result is returned unvalidated (the caller runs `check_transports` +
//! `validate_mcp_config` and gets the contract's messages); only the shapes this
//! walks are checked here, and every copied value against
//! [`crate::config::MAX_CONFIG_DEPTH`].

use serde_json::{Map, Value};

use super::check_depth;
use super::common::expected;
use crate::config::values::excerpt;

/// The `McpConfig` of an `openclaw.json` root, for the defaults (`agent: None`)
/// or for one agent.
///
/// With an agent id, the agent is the first `agents.list[]` entry whose `id`
/// equals it, and its server map is `{...defaults.servers, ...agent.mcp.servers}`:
/// an agent entry replaces the default entry of the same key wholesale (keeping
/// that key's position); new agent keys follow the defaults' keys. Other keys of
/// the two `mcp` objects are merged shallowly (agent wins) and left for the
/// validator to judge.
pub(super) fn extract(root: &Value, agent: Option<&str>) -> Result<Value, String> {
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
