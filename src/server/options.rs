//! `McpServerHost`'s options read from JSON in the core: the constructor's `{ name, version,
//! instructions?, limits?, toolTimeoutMs? }` and `serveHttp`'s `{ host?, port?, path?,
//! stateless?, allowedOrigins?, allowedHosts? }`. Errors name the option.

use std::time::Duration;

use serde_json::{Map, Value};

use super::http::HttpOptions;
use super::limits::ResponseLimits;

/// A tool's time limit unless it or the server says otherwise: 10 minutes.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(600);

/// The longest time limit a tool may have (what a JS timer takes: 2^31 - 1 ms, about 24 days).
pub const MAX_TIMEOUT_MS: u64 = (1 << 31) - 1;

#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub name: String,
    pub version: String,
    pub instructions: Option<String>,
    /// The response rules, if any.
    pub limits: Option<ResponseLimits>,
    pub tool_timeout: Duration,
}

impl ServerOptions {
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            instructions: None,
            limits: None,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
        }
    }

    /// The constructor's options.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let Value::Object(options) = value else {
            return Err(
                "options must be an object { name, version, instructions?, limits?, toolTimeoutMs? }"
                    .into(),
            );
        };
        known(options, "options", SERVER_KEYS)?;
        let name = required_string(options, "name")?;
        let version = required_string(options, "version")?;
        let mut parsed = Self::new(name, version);
        parsed.instructions = optional_string(options, "instructions")?;
        if let Some(limits) = options.get("limits") {
            parsed.limits = ResponseLimits::from_json(limits)?;
        }
        if let Some(ms) = timeout_ms(options.get("toolTimeoutMs"), "toolTimeoutMs")? {
            parsed.tool_timeout = ms;
        }
        Ok(parsed)
    }
}

/// A time limit in ms (`timeoutMs` of a tool, `toolTimeoutMs`): a positive integer up to
/// [`MAX_TIMEOUT_MS`]; `None` when absent.
pub fn timeout_ms(value: Option<&Value>, name: &str) -> Result<Option<Duration>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(ms) if (1..=MAX_TIMEOUT_MS).contains(&ms) => Ok(Some(Duration::from_millis(ms))),
            _ => Err(format!(
                "{name} must be a whole number of ms from 1 to {MAX_TIMEOUT_MS}"
            )),
        },
        Some(_) => Err(format!(
            "{name} must be a whole number of ms from 1 to {MAX_TIMEOUT_MS}"
        )),
    }
}

/// `serveHttp`'s options (`null` takes every default).
/// The options of `serveHttp` (and of `manager.serve` over HTTP).
pub const HTTP_KEYS: &[&str] = &[
    "host",
    "port",
    "path",
    "stateless",
    "allowedOrigins",
    "allowedHosts",
];

/// The options of a server: `McpServerHost`'s, and the gateway's besides its own.
pub const SERVER_KEYS: &[&str] = &["name", "version", "instructions", "limits", "toolTimeoutMs"];

pub fn http_options(value: &Value) -> Result<HttpOptions, String> {
    let mut parsed = HttpOptions::default();
    let options = match value {
        Value::Null => return Ok(parsed),
        Value::Object(options) => options,
        _ => {
            return Err(
                "options must be an object { host?, port?, path?, stateless?, allowedOrigins?, allowedHosts? }"
                    .into(),
            );
        }
    };
    known(options, "options", HTTP_KEYS)?;
    if let Some(host) = optional_string(options, "host")? {
        parsed.host = host;
    }
    match options.get("port") {
        None | Some(Value::Null) => {}
        Some(Value::Number(n)) => {
            parsed.port = n
                .as_u64()
                .and_then(|p| u16::try_from(p).ok())
                .ok_or("port must be a whole number from 0 to 65535")?;
        }
        Some(_) => return Err("port must be a whole number from 0 to 65535".into()),
    }
    if let Some(path) = optional_string(options, "path")? {
        parsed.path = path;
    }
    match options.get("stateless") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(b)) => parsed.stateless = *b,
        Some(_) => return Err("stateless must be a boolean".into()),
    }
    parsed.allowed_origins = strings(options, "allowedOrigins")?;
    for origin in &parsed.allowed_origins {
        if origin != "null" && !origin.contains("://") {
            return Err(format!(
                "allowedOrigins: '{origin}' is not an origin like 'https://app.example.com' (scheme://host[:port], ':*' for any port)"
            ));
        }
    }
    parsed.allowed_hosts = strings(options, "allowedHosts")?;
    if let Some(problem) = super::http::options_problem(&parsed) {
        return Err(problem);
    }
    Ok(parsed)
}

fn known(options: &Map<String, Value>, what: &str, keys: &[&str]) -> Result<(), String> {
    match options.keys().find(|k| !keys.contains(&k.as_str())) {
        Some(unknown) => Err(format!(
            "{what}.{unknown} is not an option ({})",
            keys.join(", ")
        )),
        None => Ok(()),
    }
}

fn required_string(options: &Map<String, Value>, key: &str) -> Result<String, String> {
    match options.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(format!("{key} must be a non-empty string")),
    }
}

fn optional_string(options: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{key} must be a string")),
    }
}

fn strings(options: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("{key} must be an array of strings"))
            })
            .collect(),
        Some(_) => Err(format!("{key} must be an array of strings")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_options() {
        let o = ServerOptions::from_json(&json!({ "name": "n", "version": "1" })).unwrap();
        assert_eq!(o.tool_timeout, DEFAULT_TOOL_TIMEOUT);
        assert!(o.limits.is_none());
        let o = ServerOptions::from_json(&json!({
            "name": "n", "version": "1", "instructions": "hi", "limits": "openclaw", "toolTimeoutMs": 50,
        }))
        .unwrap();
        assert_eq!(o.tool_timeout, Duration::from_millis(50));
        assert_eq!(o.limits, Some(ResponseLimits::openclaw()));
        for (bad, says) in [
            (json!(null), "options must be"),
            (json!({ "version": "1" }), "name must be"),
            (json!({ "name": "", "version": "1" }), "name must be"),
            (json!({ "name": "n" }), "version must be"),
            (
                json!({ "name": "n", "version": "1", "toolTimeoutMs": 0 }),
                "toolTimeoutMs must be",
            ),
            (
                json!({ "name": "n", "version": "1", "toolTimeoutMs": 1e12 }),
                "toolTimeoutMs must be",
            ),
            (
                json!({ "name": "n", "version": "1", "limits": 3 }),
                "limits must be",
            ),
            (
                json!({ "name": "n", "version": "1", "instructions": 3 }),
                "instructions must be",
            ),
            (
                json!({ "name": "n", "version": "1", "timeout": 3 }),
                "options.timeout is not",
            ),
        ] {
            let e = ServerOptions::from_json(&bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn http_options_read() {
        let o = http_options(&json!(null)).unwrap();
        assert_eq!(
            (o.host.as_str(), o.port, o.path.as_str(), o.stateless),
            ("127.0.0.1", 0, "/mcp", false)
        );
        let o = http_options(&json!({
            "host": "::1", "port": 8080, "path": "/", "stateless": true,
            "allowedOrigins": ["https://app.example.com"], "allowedHosts": ["me.local"],
        }))
        .unwrap();
        assert_eq!(o.port, 8080);
        assert!(o.stateless);
        assert_eq!(o.allowed_origins, ["https://app.example.com"]);
        for (bad, says) in [
            (json!({ "port": 70000 }), "port must be"),
            (json!({ "port": "80" }), "port must be"),
            (json!({ "path": "mcp" }), "path must start"),
            (json!({ "stateless": 1 }), "stateless must be"),
            (json!({ "allowedOrigins": "x" }), "allowedOrigins must be"),
            (
                json!({ "allowedOrigins": ["example.com"] }),
                "allowedOrigins: 'example.com'",
            ),
            (json!({ "hots": "x" }), "options.hots is not"),
        ] {
            let e = http_options(&bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
