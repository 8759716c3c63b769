//! Every config shape users have, turned into our `McpConfig` value.
//!
//! | shape ([`ConfigShape`], option name) | document | file |
//! |---|---|---|
//! | `McpConfig`, `"mcp"` | `{ "servers": { … } }` (ours, strict) | passed through |
//! | `OpenClawAgents`, `"openclaw"` | `openclaw.json` with `agents.defaults.mcp` / `agents.list[].mcp` | `openclaw_agents.rs` |
//! | `OpenClawMcp`, `"openclaw-mcp"` | current OpenClaw's top-level `mcp.servers` | `openclaw_current.rs` |
//! | `McpServers`, `"mcpServers"` | Claude Desktop / Cursor / Claude Code `mcpServers`, VS Code `servers` + `type` | `mcp_servers.rs` |
//! | `Acp`, `"acp"` | ACP `session/new` `mcpServers` array | `acp.rs` |
//!
//! [`extract_mcp_config`] detects the shape ([`detect_config_shape`]) unless
//! one is given, and [`load_config_file`] runs it on a file. Our own two shapes
//! (`mcp`, `openclaw`) are returned unvalidated: the caller runs
//! `check_transports` + `validate_mcp_config` (as
//! [`crate::config::parse_manager_config`] does) and gets the contract's
//! messages. The three converted shapes are validated here, every server
//! through [`crate::config::validate_mcp_config`], with errors naming the
//! source document's paths (`mcpServers.fs.args: Expected array, received
//! string`, `mcp.servers.docs.connectionTimeoutMs: Must be a positive number`),
//! joined by `"; "`; on success their value always passes `validate_mcp_config`.
//!
//! Unknown keys: our own shape rejects them (strict); the converted shapes
//! accept them with a warning, as their own tools ignore them (see each file's
//! table). `${VAR}` strings are left as they are (the secret resolver expands
//! them at start).
//!
//! Detection, for an object root (an array root is ACP):
//! `servers` → ours, or VS Code when the root has `inputs` or an entry has a
//! `type`; `mcpServers` → an object is the `mcpServers` shape, an array is ACP;
//! `agents` with `defaults.mcp` or a `list[].mcp` → `openclaw`; top-level `mcp`
//! → `openclaw-mcp`. More than one of these is an error that asks for the
//! shape option (except `servers` + `agents`, which keeps the original
//! message); none of them: `agents` alone → `openclaw` (no servers), `{}` →
//! ours, anything else an error listing the top-level keys.
//!
//! No input panics, and nothing recurses deeper than
//! [`crate::config::MAX_CONFIG_DEPTH`] levels (deeper values are an error).

mod acp;
mod common;
mod mcp_servers;
mod openclaw_agents;
mod openclaw_current;

use std::path::Path;

use serde_json::{Map, Value};

use super::values::{deeper_than, excerpt, type_name};
use common::{Conv, quoted_keys};

/// The deepest nesting accepted in a value that extraction copies.
/// A valid `McpConfig` is at most 4 levels deep (`servers` → server → `env` →
/// a SecretRef object, or → `toolFilter` → `include`); the limit exists because copying (and dropping) a `serde_json::Value` is recursive, so
/// a hand-built value nested 100 000 levels deep would overflow the stack.
pub const MAX_CONFIG_DEPTH: usize = 32;

pub(super) fn check_depth(path: &str, v: &Value) -> Result<(), String> {
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

/// What [`extract_mcp_config`] needs besides the document.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExtractOptions<'a> {
    /// The agent whose servers an `openclaw.json` (design shape) gives; other
    /// shapes have no per-agent config (a warning says it was ignored).
    pub agent: Option<&'a str>,
    /// Skip detection and read the document as this shape.
    pub shape: Option<ConfigShape>,
}

/// The result of [`extract_mcp_config`].
#[derive(Debug, Clone, PartialEq)]
pub struct ExtractedConfig {
    /// The shape the document was read as.
    pub shape: ConfigShape,
    /// The `McpConfig` value. Validated for the converted shapes; for `mcp` and
    /// `openclaw` the caller validates it.
    pub config: Value,
    /// `<path>: <message>` lines about accepted-but-ignored input, in document
    /// order (unknown keys, OAuth servers disabled, unsupported options).
    pub warnings: Vec<String>,
    /// Per server name, the source fields accepted that our model has no place
    /// for, as given: `supportsParallelToolCalls`, `auth` (current OpenClaw).
    pub recorded: Map<String, Value>,
}

/// Which shape a document is (see the module docs for the rules).
pub fn detect_config_shape(root: &Value) -> Result<ConfigShape, String> {
    let obj = match root {
        Value::Array(_) => return Ok(ConfigShape::Acp),
        Value::Object(o) => o,
        other => {
            return Err(format!(
                "Expected a JSON object or array (an MCP config, openclaw.json, mcpServers file \
                 or ACP mcpServers list), received {}",
                type_name(other)
            ));
        }
    };
    let servers = obj.get("servers");
    let agents = obj.get("agents");
    if servers.is_some() && agents.is_some() {
        return Err(
            "Ambiguous config: found both 'servers' (MCP config) and 'agents' (openclaw.json) \
             at the top level"
                .to_owned(),
        );
    }
    let mut found: Vec<(ConfigShape, &str)> = Vec::new();
    if let Some(s) = servers {
        let vscode = obj.contains_key("inputs")
            || s.as_object()
                .is_some_and(|m| m.values().any(|e| e.get("type").is_some()));
        found.push(if vscode {
            (ConfigShape::McpServers, "'servers' with 'type' (VS Code)")
        } else {
            (ConfigShape::McpConfig, "'servers' (MCP config)")
        });
    }
    if let Some(m) = obj.get("mcpServers") {
        found.push(if m.is_array() {
            (ConfigShape::Acp, "an 'mcpServers' array (ACP)")
        } else {
            (
                ConfigShape::McpServers,
                "'mcpServers' (Claude Desktop, Cursor)",
            )
        });
    }
    if agents_have_mcp(agents) {
        found.push((
            ConfigShape::OpenClawAgents,
            "'agents' with 'mcp' (openclaw.json)",
        ));
    }
    if obj.contains_key("mcp") {
        found.push((
            ConfigShape::OpenClawMcp,
            "top-level 'mcp' (current OpenClaw)",
        ));
    }
    match found.as_slice() {
        [(shape, _)] => Ok(*shape),
        [] if agents.is_some() => Ok(ConfigShape::OpenClawAgents),
        [] if obj.is_empty() => Ok(ConfigShape::McpConfig),
        [] => Err(format!(
            "Unrecognized config shape: expected 'servers' (MCP config, VS Code), 'mcpServers' \
             (Claude Desktop, Cursor, ACP), 'mcp' (current OpenClaw) or 'agents' (openclaw.json); \
             found top-level keys {}",
            quoted_keys(obj.keys())
        )),
        many => Err(format!(
            "Ambiguous config: found {} at the top level; pass the shape option ('mcp', \
             'openclaw', 'openclaw-mcp', 'mcpServers' or 'acp')",
            many.iter()
                .map(|(_, what)| *what)
                .collect::<Vec<_>>()
                .join(" and ")
        )),
    }
}

fn agents_have_mcp(agents: Option<&Value>) -> bool {
    let Some(Value::Object(a)) = agents else {
        return false;
    };
    a.get("defaults").and_then(|d| d.get("mcp")).is_some()
        || a.get("list")
            .and_then(Value::as_array)
            .is_some_and(|l| l.iter().any(|e| e.get("mcp").is_some()))
}

fn converted(
    shape: ConfigShape,
    conv: Conv,
    mut warnings: Vec<String>,
) -> Result<ExtractedConfig, String> {
    let (config, mut w, recorded) = common::finish(conv)?;
    warnings.append(&mut w);
    Ok(ExtractedConfig {
        shape,
        config,
        warnings,
        recorded,
    })
}

/// Reads any supported document as an `McpConfig` value (module docs).
pub fn extract_mcp_config(
    root: &Value,
    options: &ExtractOptions<'_>,
) -> Result<ExtractedConfig, String> {
    let shape = match options.shape {
        Some(s) => s,
        None => detect_config_shape(root)?,
    };
    let mut pre = Vec::new();
    if let Some(agent) = options.agent
        && shape != ConfigShape::OpenClawAgents
    {
        pre.push(format!(
            "(options): agent '{}' ignored: a '{}' config has no per-agent servers",
            excerpt(agent),
            shape.name()
        ));
    }
    let mut conv = Conv::default();
    match shape {
        ConfigShape::McpConfig => {
            check_depth("(root)", root)?;
            Ok(ExtractedConfig {
                shape,
                config: root.clone(),
                warnings: pre,
                recorded: Map::new(),
            })
        }
        ConfigShape::OpenClawAgents => Ok(ExtractedConfig {
            shape,
            config: openclaw_agents::extract(root, options.agent)?,
            warnings: pre,
            recorded: Map::new(),
        }),
        ConfigShape::OpenClawMcp => {
            match root {
                Value::Object(o) if o.contains_key("mcp") => {
                    openclaw_current::convert(&o["mcp"], "mcp", &mut conv);
                }
                // With the shape given, the root may be the `mcp` object itself.
                other => openclaw_current::convert(other, "", &mut conv),
            }
            converted(shape, conv, pre)
        }
        ConfigShape::McpServers => {
            mcp_servers::convert(root, &mut conv);
            converted(shape, conv, pre)
        }
        ConfigShape::Acp => {
            match root {
                Value::Object(o) => match o.get("mcpServers") {
                    Some(list) => acp::convert(list, "mcpServers", &mut conv),
                    None => conv.issue(
                        "(root): Expected an array of MCP servers or an object with 'mcpServers'"
                            .to_owned(),
                    ),
                },
                other => acp::convert(other, "", &mut conv),
            }
            converted(shape, conv, pre)
        }
    }
}

/// Reads a file (strict JSON: no comments or trailing commas, so JSON5 /
/// JSONC files must be plain JSON) and runs [`extract_mcp_config`] on it.
pub fn load_config_file(
    path: impl AsRef<Path>,
    options: &ExtractOptions<'_>,
) -> Result<ExtractedConfig, String> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("Cannot read {}: {e}", path.display()))?;
    let root: Value = serde_json::from_str(&text)
        .map_err(|e| format!("Invalid JSON in {}: {e}", path.display()))?;
    extract_mcp_config(&root, options)
}

/// The agent ids of `agents.list`, in order (entries without a string `id`
/// are skipped); a repeated id is an error.
fn agent_ids(root: &Value) -> Result<Vec<String>, String> {
    let list = match root.get("agents").and_then(|a| a.get("list")) {
        None => return Ok(Vec::new()),
        Some(Value::Array(l)) => l,
        Some(other) => return Err(common::expected("agents.list", "array", other)),
    };
    let mut ids: Vec<(String, usize)> = Vec::new();
    for (i, entry) in list.iter().enumerate() {
        let Some(id) = entry.get("id").and_then(Value::as_str) else {
            continue;
        };
        if let Some((_, first)) = ids.iter().find(|(known, _)| known == id) {
            return Err(format!(
                "agents.list.{i}.id: Duplicate agent id '{}' (also agents.list.{first}.id)",
                excerpt(id)
            ));
        }
        ids.push((id.to_owned(), i));
    }
    Ok(ids.into_iter().map(|(id, _)| id).collect())
}

/// One `McpConfig` value per agent of an `openclaw.json`, for one manager per
/// agent: `(agent id, config)` in `agents.list` order, each its own deep copy.
///
/// - Design shape (`agents.defaults.mcp` / `agents.list[].mcp`): each agent's
///   servers are `{...defaults, ...agent}`, as [`extract_mcp_config`] gives them
///   for that agent; unvalidated, like that result. No agent with an id: one
///   `"default"` entry with the defaults when `agents.defaults.mcp` exists,
///   else nothing.
/// - Current shape (top-level `mcp`): the converted (validated) config, the same
///   for every agent (OpenClaw's servers are global); no agents: one
///   `"default"` entry. Use [`extract_mcp_config`] for its warnings.
/// - Any other shape: an error.
pub fn manager_configs_for_openclaw(root: &Value) -> Result<Vec<(String, Value)>, String> {
    let shape = detect_config_shape(root)?;
    match shape {
        ConfigShape::OpenClawAgents => {
            // Also checks the types of `agents` and `agents.defaults(.mcp)`.
            let defaults = openclaw_agents::extract(root, None)?;
            let ids = agent_ids(root)?;
            if ids.is_empty() {
                let has_defaults = root
                    .get("agents")
                    .and_then(|a| a.get("defaults"))
                    .and_then(|d| d.get("mcp"))
                    .is_some();
                return Ok(if has_defaults {
                    vec![("default".to_owned(), defaults)]
                } else {
                    Vec::new()
                });
            }
            ids.into_iter()
                .map(|id| {
                    let config = openclaw_agents::extract(root, Some(&id))?;
                    Ok((id, config))
                })
                .collect()
        }
        ConfigShape::OpenClawMcp => {
            let extracted = extract_mcp_config(
                root,
                &ExtractOptions {
                    agent: None,
                    shape: Some(shape),
                },
            )?;
            let ids = agent_ids(root)?;
            if ids.is_empty() {
                return Ok(vec![("default".to_owned(), extracted.config)]);
            }
            Ok(ids
                .into_iter()
                .map(|id| (id, extracted.config.clone()))
                .collect())
        }
        other => Err(format!(
            "Expected an openclaw.json (with 'agents' or a top-level 'mcp'), found a '{}' config",
            other.name()
        )),
    }
}
