//! What `doctorMcpConfig`'s options say, read from JSON with messages that name the option.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::config::values::kind_in_words;

use crate::bridge::NameScheme;
use crate::config::ConfigShape;
use crate::secrets::ProviderDefinitions;

/// The network probe's default deadline.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(5000);

/// The options of [`super::run`].
#[derive(Debug, Clone)]
pub struct DoctorOptions {
    /// The agent whose servers an `openclaw.json` gives.
    pub agent: Option<String>,
    /// Read the input as this shape instead of detecting it.
    pub shape: Option<ConfigShape>,
    /// The host environment (`PATH`, loader-hijack variables, what `secret://env/…` and
    /// `${VAR}` read); `None`: this process's.
    pub env: Option<BTreeMap<String, String>>,
    /// `env` is the host's own environment read for the caller (Node's `process.env`), so
    /// messages call it "the process environment", not `options.env`.
    pub env_is_host: bool,
    /// Probe each remote server's URL (off by default).
    pub network: bool,
    /// The deadline of each probe.
    pub timeout: Duration,
    /// Per server (config key), its tools' own names, in `tools/list` order: the tool-name
    /// lints run only when given.
    pub tools: Option<Vec<(String, Vec<String>)>>,
    pub tool_names: NameScheme,
    /// OpenClaw's `secrets.providers` for SecretRefs with `source: "file"` or `"exec"`; `None`:
    /// those of the input when it is an `openclaw.json`.
    pub secret_providers: Option<ProviderDefinitions>,
}

impl Default for DoctorOptions {
    fn default() -> Self {
        Self {
            agent: None,
            shape: None,
            env: None,
            env_is_host: false,
            network: false,
            timeout: DEFAULT_TIMEOUT,
            tools: None,
            tool_names: NameScheme::Compat,
            secret_providers: None,
        }
    }
}

impl DoctorOptions {
    /// The options object as JSON (`null`: all defaults). Errors name the option:
    /// `options.network must be a boolean, got a string`.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let mut out = Self::default();
        let map = match value {
            Value::Null => return Ok(out),
            Value::Object(map) => map,
            other => {
                return Err(format!(
                    "options must be an object, got {}",
                    kind_in_words(other)
                ));
            }
        };
        let wrong = |name: &str, what: &str, got: &Value| {
            format!("options.{name} must be {what}, got {}", kind_in_words(got))
        };
        for (key, value) in map {
            if value.is_null() {
                continue;
            }
            match key.as_str() {
                "agent" => {
                    out.agent = Some(
                        value
                            .as_str()
                            .ok_or_else(|| wrong(key, "a string", value))?
                            .to_owned(),
                    );
                }
                "shape" => {
                    let name = value
                        .as_str()
                        .ok_or_else(|| wrong(key, "a string", value))?;
                    out.shape =
                        Some(ConfigShape::parse(name).map_err(|e| format!("options.shape: {e}"))?);
                }
                "env" => {
                    let vars = value
                        .as_object()
                        .ok_or_else(|| wrong(key, "an object of strings", value))?;
                    let mut env = BTreeMap::new();
                    for (name, v) in vars {
                        match v {
                            Value::String(s) => {
                                env.insert(name.clone(), s.clone());
                            }
                            Value::Null => {}
                            other => {
                                return Err(format!(
                                    "options.env.{name} must be a string, got {}",
                                    kind_in_words(other)
                                ));
                            }
                        }
                    }
                    out.env = Some(env);
                }
                "network" => {
                    out.network = value
                        .as_bool()
                        .ok_or_else(|| wrong(key, "a boolean", value))?;
                }
                "timeoutMs" => {
                    let ms = value
                        .as_f64()
                        .filter(|ms| ms.is_finite() && *ms > 0.0)
                        .ok_or_else(|| wrong(key, "a positive number", value))?;
                    out.timeout = Duration::from_millis(ms.min(86_400_000.0).ceil() as u64);
                }
                "tools" => {
                    let servers = value
                        .as_object()
                        .ok_or_else(|| wrong(key, "an object of string arrays", value))?;
                    let mut tools = Vec::with_capacity(servers.len());
                    for (server, list) in servers {
                        let bad = || format!("options.tools.{server} must be an array of strings");
                        let names = list
                            .as_array()
                            .ok_or_else(bad)?
                            .iter()
                            .map(|n| n.as_str().map(str::to_owned).ok_or_else(bad))
                            .collect::<Result<Vec<_>, _>>()?;
                        tools.push((server.clone(), names));
                    }
                    out.tools = Some(tools);
                }
                "toolNames" => {
                    out.tool_names =
                        value.as_str().and_then(NameScheme::parse).ok_or_else(|| {
                            "options.toolNames must be 'compat' or 'openclaw'".to_owned()
                        })?;
                }
                "secretProviders" => {
                    out.secret_providers = Some(
                        ProviderDefinitions::from_providers(value)
                            .map_err(|e| format!("options.secretProviders: {e}"))?,
                    );
                }
                // Unknown members are ignored, as JS option bags usually are.
                _ => {}
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_every_option() {
        let o = DoctorOptions::from_json(&json!({
            "agent": "main", "shape": "mcpServers", "env": {"A": "1", "B": null},
            "network": true, "timeoutMs": 250, "tools": {"s": ["a", "b"]}, "toolNames": "openclaw",
        }))
        .unwrap();
        assert_eq!(o.agent.as_deref(), Some("main"));
        assert_eq!(o.shape, Some(ConfigShape::McpServers));
        assert_eq!(
            o.env.unwrap().into_iter().collect::<Vec<_>>(),
            [("A".to_owned(), "1".to_owned())]
        );
        assert!(o.network);
        assert_eq!(o.timeout, Duration::from_millis(250));
        assert_eq!(
            o.tools.unwrap(),
            [("s".to_owned(), vec!["a".to_owned(), "b".to_owned()])]
        );
        assert_eq!(o.tool_names, NameScheme::OpenClaw);
        assert!(!DoctorOptions::from_json(&Value::Null).unwrap().network);
    }

    #[test]
    fn a_wrong_type_names_the_option() {
        let err = |v: Value| DoctorOptions::from_json(&v).unwrap_err();
        assert_eq!(err(json!(3)), "options must be an object, got a number");
        assert_eq!(
            err(json!({"network": "yes"})),
            "options.network must be a boolean, got a string"
        );
        assert_eq!(
            err(json!({"timeoutMs": -1})),
            "options.timeoutMs must be a positive number, got a number"
        );
        assert_eq!(
            err(json!({"env": {"A": 1}})),
            "options.env.A must be a string, got a number"
        );
        assert_eq!(
            err(json!({"tools": {"s": [1]}})),
            "options.tools.s must be an array of strings"
        );
        assert_eq!(
            err(json!({"toolNames": "x"})),
            "options.toolNames must be 'compat' or 'openclaw'"
        );
        assert!(err(json!({"shape": "yaml"})).starts_with("options.shape: Unknown config shape"));
    }
}
