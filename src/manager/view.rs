//! A view: what one agent sees of a manager's servers (a subset of them, its own allow/deny,
//! its own naming scheme), sharing the manager's connections. Cheap: a few sets and a cached
//! name table, nothing running.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::names::NameTable;
use crate::bridge::NameScheme;
use crate::options::string_list;
use crate::policy::ToolPolicy;

/// `manager.view(spec)`'s spec, checked.
#[derive(Debug, Clone)]
pub struct ViewSpec {
    /// The servers the view shows (all when absent).
    pub servers: Option<Vec<String>>,
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    /// The view's naming scheme (the manager's when absent).
    pub tool_names: Option<NameScheme>,
}

impl ViewSpec {
    const KEYS: &[&str] = &["servers", "allow", "deny", "toolNames"];

    /// `{ servers?, allow?, deny?, toolNames? }`; absent or `null` members keep their defaults.
    pub fn from_json(spec: &Map<String, Value>) -> Result<Self, String> {
        if let Some(key) = spec.keys().find(|k| !Self::KEYS.contains(&k.as_str())) {
            return Err(format!(
                "Invalid view: unknown option '{key}' (expected {})",
                Self::KEYS.join(", ")
            ));
        }
        let get = |key: &str| spec.get(key).filter(|v| !v.is_null());
        let invalid = |e: String| format!("Invalid view: {e}");
        let servers = match get("servers") {
            None => None,
            Some(v) => Some(string_list("servers", Some(v)).map_err(invalid)?),
        };
        let tool_names = match get("toolNames") {
            None => None,
            Some(v) => Some(v.as_str().and_then(NameScheme::parse).ok_or_else(|| {
                format!("Invalid view: toolNames {v} (expected 'compat' or 'openclaw')")
            })?),
        };
        Ok(Self {
            servers,
            allow: string_list("allow", get("allow")).map_err(invalid)?,
            deny: string_list("deny", get("deny")).map_err(invalid)?,
            tool_names,
        })
    }
}

pub struct View {
    servers: Option<HashSet<String>>,
    pub(super) policy: ToolPolicy,
    pub(super) scheme: Option<NameScheme>,
    pub(super) names: Mutex<Option<Arc<NameTable>>>,
}

impl View {
    pub(super) fn new(spec: ViewSpec) -> Self {
        Self {
            servers: spec.servers.map(|s| s.into_iter().collect()),
            policy: ToolPolicy::new(spec.allow, spec.deny),
            scheme: spec.tool_names,
            names: Mutex::new(None),
        }
    }

    /// Whether the view shows the server named `server`.
    pub fn shows(&self, server: &str) -> bool {
        self.servers.as_ref().is_none_or(|s| s.contains(server))
    }
}
