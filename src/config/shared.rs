//! One manager for every agent of an `openclaw.json`: the servers of all agents, each distinct
//! definition once, and per agent the servers its view shows. What used to be a manager per
//! agent (12 agents × 10 servers = 120 processes) becomes one process per distinct server.

use serde_json::{Map, Value};

use super::{manager_configs_for_openclaw, parse_manager_config};

/// The shared config and, per agent (in `openclaw.json` order), the server keys of its view.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedConfig {
    /// A validated `McpConfig` (`{ servers: { key: definition } }`).
    pub config: Value,
    pub agents: Vec<(String, Vec<String>)>,
}

/// Builds the [`SharedConfig`] of an `openclaw.json` (any shape `managerConfigsForOpenclaw`
/// reads). Two agents' servers are one server when their definitions are the same once
/// defaults are filled in, including the tool prefix (the server key when none is given), so
/// each view names the tools as that agent's own manager did. A key that two different
/// definitions use is kept by the first agent; the others' become `<key>@<agent>` with
/// `toolPrefix` set to what their names were made from.
pub fn shared_config_for_openclaw(root: &Value) -> Result<SharedConfig, String> {
    let mut servers: Map<String, Value> = Map::new();
    let mut agents = Vec::new();
    for (agent, raw) in manager_configs_for_openclaw(root)? {
        let data = parse_manager_config(&raw)
            .map_err(|e| format!("agent '{agent}': {e}"))?
            .data;
        let mut keys = Vec::new();
        let own = data.get("servers").and_then(Value::as_object).cloned();
        for (key, definition) in own.unwrap_or_default() {
            if definition.get("enabled") == Some(&Value::Bool(false)) {
                continue;
            }
            let normalized = with_prefix(&key, definition);
            let same = servers
                .iter()
                .find(|(_, existing)| **existing == normalized)
                .map(|(k, _)| k.clone());
            let shared = match same {
                Some(existing) => existing,
                None => {
                    let mut shared = key.clone();
                    if servers.contains_key(&shared) {
                        shared = format!("{key}@{agent}");
                        let mut n = 2;
                        while servers.contains_key(&shared) {
                            shared = format!("{key}@{agent}-{n}");
                            n += 1;
                        }
                    }
                    servers.insert(shared.clone(), normalized);
                    shared
                }
            };
            keys.push(shared);
        }
        agents.push((agent, keys));
    }
    // Drop the prefixes that only repeat the key (the default), so the config reads as written.
    for (key, definition) in servers.iter_mut() {
        if let Some(object) = definition.as_object_mut()
            && object.get("toolPrefix").and_then(Value::as_str) == Some(key.as_str())
        {
            object.remove("toolPrefix");
        }
    }
    let config = parse_manager_config(&Value::Object(
        [("servers".to_owned(), Value::Object(servers))]
            .into_iter()
            .collect(),
    ))?
    .data;
    Ok(SharedConfig { config, agents })
}

/// `definition` with its tool prefix explicit (the key when it has none).
fn with_prefix(key: &str, mut definition: Value) -> Value {
    if let Some(object) = definition.as_object_mut()
        && !object.get("toolPrefix").is_some_and(Value::is_string)
    {
        object.insert("toolPrefix".to_owned(), Value::String(key.to_owned()));
    }
    definition
}
