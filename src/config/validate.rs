//! `validateMcpConfig`: strict schema check, defaults, and the transport check.
//!
//! Error format: every schema issue as `<path>: <message>`, joined by `"; "`, in
//! input order (root keys in order, servers in order, each server's keys in
//! order). Only when the schema passes, the first enabled server whose transport
//! lacks its `command`/`url` is reported. Root-level issues use the path `(root)`.
//!
//! No input can make this panic: every branch matches on the JSON type, numbers
//! are checked for finiteness and range before any conversion, and the validator
//! recurses only into the fixed levels of the schema (never into arbitrary depth).

use serde_json::{Map, Value};

use super::model::{
    DefaultScope, EnvPolicy, IdpConfig, MAX_DURATION_MS, MAX_RESTARTS_LIMIT, MAX_RESULT_LIMIT,
    MAX_TOOLS_LIMIT, McpConfig, OAuthConfig, OAuthGrant, PinPolicy, ProtocolChoice, ResultMode,
    SchemaMode, ServerConfig, TransportKind, ValidatedConfig, server_defaults,
};
use super::values::{display_value, excerpt, type_name};

#[derive(Default)]
struct Issues(Vec<String>);

impl Issues {
    fn push(&mut self, path: &str, message: impl std::fmt::Display) {
        self.0.push(format!("{path}: {message}"));
    }

    fn expected(&mut self, path: &str, expected: &str, got: &Value) {
        self.push(
            path,
            format_args!("Expected {expected}, received {}", type_name(got)),
        );
    }
}

fn check_bool(path: &str, v: &Value, issues: &mut Issues) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        other => {
            issues.expected(path, "boolean", other);
            None
        }
    }
}

fn check_string(path: &str, v: &Value, issues: &mut Issues) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        other => {
            issues.expected(path, "string", other);
            None
        }
    }
}

fn check_string_array(path: &str, v: &Value, issues: &mut Issues) -> Option<Vec<String>> {
    let Value::Array(items) = v else {
        issues.expected(path, "array", v);
        return None;
    };
    let mut out = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::String(s) => out.push(s.clone()),
            other => {
                issues.expected(&format!("{path}.{i}"), "string", other);
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

/// An `env`/`headers` map: each value a string, or an OpenClaw SecretRef object
/// (an object with a `source` key: `{ source, provider, id }`), which becomes
/// its canonical `secret://` string in the typed model (see
/// [`crate::secrets::secret_ref_to_uri`]); the JSON `data` keeps the object as
/// written. Any other object is `Expected string, received object`.
fn check_value_map(path: &str, v: &Value, issues: &mut Issues) -> Option<Vec<(String, String)>> {
    let Value::Object(map) = v else {
        issues.expected(path, "object", v);
        return None;
    };
    let mut out = Vec::with_capacity(map.len());
    let mut ok = true;
    for (k, item) in map {
        match item {
            Value::String(s) => out.push((k.clone(), s.clone())),
            Value::Object(obj) if obj.contains_key("source") => {
                match crate::secrets::secret_ref_to_uri(obj) {
                    Ok(uri) => out.push((k.clone(), uri)),
                    Err(message) => {
                        issues.push(&format!("{path}.{k}"), message);
                        ok = false;
                    }
                }
            }
            other => {
                issues.expected(&format!("{path}.{k}"), "string", other);
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

/// A positive number of milliseconds, at most 24 h. Fractions are accepted (the
/// schema says "number") and rounded up for the typed model.
fn check_duration(path: &str, v: &Value, issues: &mut Issues) -> Option<u64> {
    let Value::Number(n) = v else {
        issues.expected(path, "number", v);
        return None;
    };
    if let Some(u) = n.as_u64() {
        if u == 0 {
            issues.push(path, "Must be a positive number");
            return None;
        }
        if u > MAX_DURATION_MS {
            issues.push(
                path,
                format_args!("Must be at most {MAX_DURATION_MS} (24 h), received {n}"),
            );
            return None;
        }
        return Some(u);
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    if !f.is_finite() {
        issues.push(path, "Must be a finite number");
        None
    } else if f <= 0.0 {
        issues.push(path, "Must be a positive number");
        None
    } else if f > MAX_DURATION_MS as f64 {
        issues.push(
            path,
            format_args!("Must be at most {MAX_DURATION_MS} (24 h), received {n}"),
        );
        None
    } else {
        // 0 < f <= 86_400_000, so the cast is exact after ceil.
        Some(f.ceil() as u64)
    }
}

/// A non-negative integer, at most [`MAX_RESTARTS_LIMIT`]. `5.0` counts as an
/// integer (JS has one number type).
fn check_count(path: &str, v: &Value, issues: &mut Issues) -> Option<u32> {
    let Value::Number(n) = v else {
        issues.expected(path, "number", v);
        return None;
    };
    let f = n.as_f64().unwrap_or(f64::NAN);
    if !f.is_finite() {
        issues.push(path, "Must be a finite number");
        None
    } else if f < 0.0 || f.fract() != 0.0 {
        issues.push(path, "Must be a non-negative integer");
        None
    } else if f > f64::from(MAX_RESTARTS_LIMIT) {
        issues.push(
            path,
            format_args!("Must be at most {MAX_RESTARTS_LIMIT}, received {n}"),
        );
        None
    } else {
        Some(f as u32)
    }
}

/// An integer from `min` to `max` (`5.0` counts as 5).
fn check_int(path: &str, v: &Value, min: u64, max: u64, issues: &mut Issues) -> Option<u64> {
    let Value::Number(n) = v else {
        issues.expected(path, "number", v);
        return None;
    };
    let f = n.as_f64().unwrap_or(f64::NAN);
    if !f.is_finite() || f.fract() != 0.0 || f < min as f64 {
        let what = if min == 0 {
            "a non-negative"
        } else {
            "a positive"
        };
        issues.push(path, format_args!("Must be {what} integer"));
        None
    } else if f > max as f64 {
        issues.push(path, format_args!("Must be at most {max}, received {n}"));
        None
    } else {
        Some(f as u64)
    }
}

/// Checks the value of one server key at `path` and sets its field of `s`;
/// `false` when `key` is not a server key. A bad value leaves the field as it was.
fn set_key(s: &mut ServerConfig, key: &str, val: &Value, p: &str, issues: &mut Issues) -> bool {
    match key {
        "enabled" => s.enabled = check_bool(p, val, issues).unwrap_or(s.enabled),
        "lazy" => s.lazy = check_bool(p, val, issues).unwrap_or(s.lazy),
        "restartOnCrash" => {
            s.restart_on_crash = check_bool(p, val, issues).unwrap_or(s.restart_on_crash)
        }
        "resources" => s.resources = check_bool(p, val, issues).unwrap_or(s.resources),
        "transport" => {
            if let Some(t) = check_string(p, val, issues) {
                match TransportKind::parse(&t) {
                    Some(kind) => {
                        s.transport = kind;
                        s.transport_name = t;
                    }
                    None => issues.push(
                        p,
                        format_args!(
                            "Invalid transport '{}': expected 'stdio', 'sse', 'http' or 'streamable-http'",
                            excerpt(&t)
                        ),
                    ),
                }
            }
        }
        "command" => s.command = check_string(p, val, issues),
        "cwd" => s.cwd = check_string(p, val, issues),
        "url" => s.url = check_string(p, val, issues),
        "toolPrefix" => s.tool_prefix = check_string(p, val, issues),
        "caFile" => s.ca_file = check_string(p, val, issues),
        "sseFallback" => s.sse_fallback = check_bool(p, val, issues).unwrap_or(s.sse_fallback),
        "args" => s.args = check_string_array(p, val, issues).unwrap_or_default(),
        "resourceFilter" => {
            s.resource_filter = check_string_array(p, val, issues).unwrap_or_default()
        }
        "env" => s.env = check_value_map(p, val, issues).unwrap_or_default(),
        "headers" => s.headers = check_value_map(p, val, issues).unwrap_or_default(),
        "timeout" => s.timeout_ms = check_duration(p, val, issues).unwrap_or(s.timeout_ms),
        "toolTimeout" => {
            s.tool_timeout_ms = check_duration(p, val, issues).unwrap_or(s.tool_timeout_ms)
        }
        "resourceRefreshMs" => {
            s.resource_refresh_ms = check_duration(p, val, issues).unwrap_or(s.resource_refresh_ms)
        }
        "maxRestarts" => s.max_restarts = check_count(p, val, issues).unwrap_or(s.max_restarts),
        "maxTools" => {
            s.max_tools = check_int(p, val, 1, MAX_TOOLS_LIMIT.into(), issues)
                .map_or(s.max_tools, |n| n as u32)
        }
        "logLevel" => {
            const LEVELS: [&str; 8] = [
                "debug",
                "info",
                "notice",
                "warning",
                "error",
                "critical",
                "alert",
                "emergency",
            ];
            if let Some(level) = check_string(p, val, issues) {
                if LEVELS.contains(&level.as_str()) {
                    s.log_level = Some(level);
                } else {
                    issues.push(
                        p,
                        format_args!(
                            "Invalid logLevel '{}': expected one of {}",
                            excerpt(&level),
                            LEVELS.join(", ")
                        ),
                    );
                }
            }
        }
        "schemas" => {
            if let Some(t) = check_string(p, val, issues) {
                match SchemaMode::parse(&t) {
                    Some(mode) => s.schemas = Some(mode),
                    None => issues.push(
                        p,
                        format_args!(
                            "Invalid schemas '{}': expected 'compat' or 'faithful'",
                            excerpt(&t)
                        ),
                    ),
                }
            }
        }
        "envPolicy" => {
            if let Some(t) = check_string(p, val, issues) {
                match EnvPolicy::parse(&t) {
                    Some(policy) => s.env_policy = policy,
                    None => issues.push(
                        p,
                        format_args!(
                            "Invalid envPolicy '{}': expected 'inherit' or 'minimal'",
                            excerpt(&t)
                        ),
                    ),
                }
            }
        }
        "idleTimeoutMs" => s.idle_timeout_ms = check_duration(p, val, issues),
        "taskTimeout" => s.task_timeout_ms = check_duration(p, val, issues),
        "protocol" => {
            if let Some(t) = check_string(p, val, issues) {
                match ProtocolChoice::parse(&t) {
                    Some(choice) => s.protocol = choice,
                    None => issues.push(
                        p,
                        format_args!(
                            "Invalid protocol '{}': expected 'auto', {}",
                            excerpt(&t),
                            ProtocolChoice::REVISIONS
                                .map(|r| format!("'{r}'"))
                                .join(", ")
                        ),
                    ),
                }
            }
        }
        "cacheDir" => match check_string(p, val, issues) {
            Some(dir) if dir.is_empty() => issues.push(p, "Must be a directory path, not empty"),
            dir => s.cache_dir = dir,
        },
        "pinning" => {
            if let Some(t) = check_string(p, val, issues) {
                match PinPolicy::parse(&t) {
                    Some(policy) => s.pinning = Some(policy),
                    None => issues.push(
                        p,
                        format_args!(
                            "Invalid pinning '{}': expected 'off', 'warn' or 'enforce'",
                            excerpt(&t)
                        ),
                    ),
                }
            }
        }
        "hygiene" => {
            if let Some(t) = check_string(p, val, issues) {
                match t.as_str() {
                    "on" => s.hygiene = Some(true),
                    "off" => s.hygiene = Some(false),
                    _ => issues.push(
                        p,
                        format_args!("Invalid hygiene '{}': expected 'off' or 'on'", excerpt(&t)),
                    ),
                }
            }
        }
        "envPassthrough" => {
            s.env_passthrough = check_string_array(p, val, issues).unwrap_or_default()
        }
        "resourceTools" => {
            s.resource_tools = check_bool(p, val, issues).unwrap_or(s.resource_tools)
        }
        "promptTools" => s.prompt_tools = check_bool(p, val, issues).unwrap_or(s.prompt_tools),
        "resetTimeoutOnProgress" => {
            s.reset_timeout_on_progress =
                check_bool(p, val, issues).unwrap_or(s.reset_timeout_on_progress)
        }
        "maxToolTimeout" => {
            s.max_tool_timeout_ms = check_duration(p, val, issues).unwrap_or(s.max_tool_timeout_ms)
        }
        "results" => {
            if let Some(t) = check_string(p, val, issues) {
                match ResultMode::parse(&t) {
                    Some(mode) => s.results.mode = Some(mode),
                    None => issues.push(
                        p,
                        format_args!(
                            "Invalid results '{}': expected 'compat' or 'rich'",
                            excerpt(&t)
                        ),
                    ),
                }
            }
        }
        "maxResultChars" => {
            s.results.max_result_chars = check_int(p, val, 1, MAX_RESULT_LIMIT, issues)
        }
        "maxImages" => s.results.max_images = check_int(p, val, 0, MAX_RESULT_LIMIT, issues),
        "maxImageBytes" => {
            s.results.max_image_bytes = check_int(p, val, 1, MAX_RESULT_LIMIT, issues)
        }
        "maxResultBytes" => {
            s.results.max_result_bytes = check_int(p, val, 1, MAX_RESULT_LIMIT, issues)
        }
        "auth" => s.auth = check_auth(p, val, issues),
        "toolFilter" => match super::tool_filter::parse_tool_filter(p, val) {
            Ok(filter) => s.tool_filter = filter,
            Err(found) => issues.0.extend(found),
        },
        _ => return false,
    }
    true
}

/// `auth`: `'oauth'`, or `{ type: 'oauth', clientId?, clientSecret?, scopes?, redirectUri?,
/// grant?, privateKeyFile?, clientMetadataUrl? }`. `clientSecret` may be a SecretRef object.
fn check_auth(path: &str, v: &Value, issues: &mut Issues) -> Option<OAuthConfig> {
    let obj = match v {
        Value::String(t) if t == "oauth" => return Some(OAuthConfig::default()),
        Value::String(t) => {
            issues.push(
                path,
                format_args!("Invalid auth '{}': expected 'oauth'", excerpt(t)),
            );
            return None;
        }
        Value::Object(obj) => obj,
        other => {
            issues.expected(path, "object", other);
            return None;
        }
    };
    let before = issues.0.len();
    let mut auth = OAuthConfig::default();
    match obj.get("type") {
        Some(Value::String(t)) if t == "oauth" => {}
        Some(Value::String(t)) => issues.push(
            &format!("{path}.type"),
            format_args!("Invalid type '{}': expected 'oauth'", excerpt(t)),
        ),
        Some(other) => issues.expected(&format!("{path}.type"), "string", other),
        None => issues.push(path, "Missing 'type' (expected 'oauth')"),
    }
    for (key, val) in obj {
        let p = format!("{path}.{key}");
        let non_empty = |issues: &mut Issues| match check_string(&p, val, issues) {
            Some(t) if t.is_empty() => {
                issues.push(&p, "Must not be empty");
                None
            }
            t => t,
        };
        match key.as_str() {
            "type" => {}
            "clientId" => auth.client_id = non_empty(issues),
            "clientSecret" => auth.client_secret = check_secret(&p, val, issues),
            "scopes" => auth.scopes = check_string_array(&p, val, issues).unwrap_or_default(),
            "redirectUri" => {
                auth.redirect_uri = non_empty(issues);
                if let Some(uri) = &auth.redirect_uri
                    && !(uri.starts_with("http://") || uri.starts_with("https://"))
                {
                    issues.push(&p, "Must be an http:// or https:// URL");
                }
            }
            "grant" => {
                if let Some(t) = check_string(&p, val, issues) {
                    match OAuthGrant::parse(&t) {
                        Some(grant) => auth.grant = grant,
                        None => issues.push(
                            &p,
                            format_args!(
                                "Invalid grant '{}': expected {}",
                                excerpt(&t),
                                OAuthGrant::NAMES
                            ),
                        ),
                    }
                }
            }
            "privateKeyFile" => auth.private_key_file = non_empty(issues),
            "clientMetadataUrl" => {
                auth.client_metadata_url = non_empty(issues);
                if let Some(url) = &auth.client_metadata_url
                    && !url.starts_with("https://")
                {
                    issues.push(&p, "Must be an https:// URL");
                }
            }
            "assertionFile" => auth.assertion_file = non_empty(issues),
            "idp" => auth.idp = check_idp(&p, val, issues),
            other => issues.push(path, format_args!("Unrecognized key '{}'", excerpt(other))),
        }
    }
    if auth.grant == OAuthGrant::JwtBearer && auth.assertion_file.is_none() {
        issues.push(path, "grant 'jwt_bearer' needs 'assertionFile'");
    }
    if auth.grant == OAuthGrant::Enterprise && (auth.idp.is_none() || auth.client_id.is_none()) {
        issues.push(path, "grant 'enterprise' needs 'clientId' and 'idp'");
    }
    if auth.client_secret.is_some() && auth.client_id.is_none() {
        issues.push(path, "'clientSecret' needs 'clientId'");
    }
    if auth.grant == OAuthGrant::ClientCredentials
        && (auth.client_id.is_none()
            || (auth.client_secret.is_none() && auth.private_key_file.is_none()))
    {
        issues.push(
            path,
            "grant 'client_credentials' needs 'clientId' and 'clientSecret' or 'privateKeyFile'",
        );
    }
    (issues.0.len() == before).then_some(auth)
}

/// A secret-form value: a string, or a SecretRef object (its `secret://` URI).
fn check_secret(path: &str, v: &Value, issues: &mut Issues) -> Option<String> {
    match v {
        Value::Object(r) if r.contains_key("source") => {
            match crate::secrets::secret_ref_to_uri(r) {
                Ok(uri) => Some(uri),
                Err(message) => {
                    issues.push(path, message);
                    None
                }
            }
        }
        _ => match check_string(path, v, issues) {
            Some(t) if t.is_empty() => {
                issues.push(path, "Must not be empty");
                None
            }
            t => t,
        },
    }
}

/// `auth.idp`: `{ issuer, tokenEndpoint, clientId, clientSecret?, idToken }`.
fn check_idp(path: &str, v: &Value, issues: &mut Issues) -> Option<IdpConfig> {
    let Value::Object(obj) = v else {
        issues.expected(path, "object", v);
        return None;
    };
    let before = issues.0.len();
    let mut idp = IdpConfig::default();
    for (key, val) in obj {
        let p = format!("{path}.{key}");
        match key.as_str() {
            "issuer" => idp.issuer = check_string(&p, val, issues).unwrap_or_default(),
            "tokenEndpoint" => {
                idp.token_endpoint = check_string(&p, val, issues).unwrap_or_default()
            }
            "clientId" => idp.client_id = check_string(&p, val, issues).unwrap_or_default(),
            "clientSecret" => idp.client_secret = check_secret(&p, val, issues),
            "idToken" => idp.id_token = check_secret(&p, val, issues).unwrap_or_default(),
            other => issues.push(path, format_args!("Unrecognized key '{}'", excerpt(other))),
        }
    }
    for (name, value) in [
        ("issuer", &idp.issuer),
        ("tokenEndpoint", &idp.token_endpoint),
        ("clientId", &idp.client_id),
        ("idToken", &idp.id_token),
    ] {
        if value.is_empty() {
            issues.push(path, format_args!("Missing '{name}'"));
        }
    }
    (issues.0.len() == before).then_some(idp)
}

impl ServerConfig {
    /// A server with every default applied (stdio, no command): the crate's one
    /// table of server defaults, parsed as if each entry were the input.
    pub fn with_defaults(name: impl Into<String>) -> Self {
        let mut s = Self::unset(name.into());
        apply_server_defaults(&mut s);
        s
    }
}

/// Sets every field that has a default from [`server_defaults`], through
/// [`set_key`] (for [`ServerConfig::with_defaults`]).
fn apply_server_defaults(s: &mut ServerConfig) {
    let mut issues = Issues::default();
    for d in server_defaults() {
        let known = set_key(s, d.key, &d.value, d.key, &mut issues);
        debug_assert!(known, "default for unknown key '{}'", d.key);
    }
    debug_assert!(issues.0.is_empty(), "invalid defaults: {:?}", issues.0);
}

fn validate_server(name: &str, v: &Value, issues: &mut Issues) -> Option<ServerConfig> {
    let base = format!("servers.{name}");
    let Value::Object(obj) = v else {
        issues.expected(&base, "object", v);
        return None;
    };
    let before = issues.0.len();
    let mut s = ServerConfig::with_defaults(name);
    for (key, val) in obj {
        let path = format!("{base}.{key}");
        if !set_key(&mut s, key, val, &path, issues) {
            issues.push(&base, format_args!("Unrecognized key '{}'", excerpt(key)));
        }
    }
    if s.auth.is_some() && s.transport == TransportKind::Stdio {
        issues.push(
            &format!("{base}.auth"),
            "OAuth applies to remote servers: set transport 'http' or 'sse'",
        );
    }
    (issues.0.len() == before).then_some(s)
}

/// The first enabled server whose transport lacks its endpoint, as the original
/// reports it. An empty `command`/`url` counts as missing (JS falsiness).
fn transport_requirement_error(config: &McpConfig) -> Option<String> {
    config.enabled_servers().find_map(|s| {
        let missing = |o: &Option<String>| o.as_deref().is_none_or(str::is_empty);
        match s.transport {
            TransportKind::Stdio if missing(&s.command) => Some(format!(
                "servers.{}: stdio transport requires 'command'",
                s.name
            )),
            TransportKind::Sse | TransportKind::Http if missing(&s.url) => Some(format!(
                "servers.{}: {} transport requires 'url'",
                s.name, s.transport_name
            )),
            _ => None,
        }
    })
}

/// The JSON `data` of a successful validation: the input with every missing
/// [`DefaultScope::Schema`] default of [`server_defaults`] appended to its server
/// object, in that order. Our extensions (`sseFallback`) are not filled: `data`
/// is what the original module returned.
fn fill_defaults(input: &Map<String, Value>) -> Value {
    let mut out = input.clone();
    if let Some(Value::Object(servers)) = out.get_mut("servers") {
        for server in servers.values_mut() {
            let Value::Object(obj) = server else { continue };
            for d in server_defaults() {
                if d.scope == DefaultScope::Schema {
                    obj.entry(d.key).or_insert(d.value);
                }
            }
        }
    }
    Value::Object(out)
}

/// Validates an `McpConfig` value (`{ servers?: Record<string, McpServerConfig> }`).
///
/// On success returns the typed model (servers in insertion order, disabled ones
/// included, defaults applied) and the input with defaults filled in. On failure
/// returns the contract's error string (see the module docs).
pub fn validate_mcp_config(input: &Value) -> Result<ValidatedConfig, String> {
    let Value::Object(root) = input else {
        return Err(format!(
            "(root): Expected object, received {}",
            type_name(input)
        ));
    };
    let mut issues = Issues::default();
    let mut servers = Vec::new();
    for (key, val) in root {
        match key.as_str() {
            "servers" => match val {
                Value::Object(map) => {
                    for (name, sv) in map {
                        if let Some(s) = validate_server(name, sv, &mut issues) {
                            servers.push(s);
                        }
                    }
                }
                other => issues.expected("servers", "object", other),
            },
            other => issues.push(
                "(root)",
                format_args!("Unrecognized key '{}'", excerpt(other)),
            ),
        }
    }
    if !issues.0.is_empty() {
        return Err(issues.0.join("; "));
    }
    let config = McpConfig { servers };
    if let Some(err) = transport_requirement_error(&config) {
        return Err(err);
    }
    Ok(ValidatedConfig {
        config,
        data: fill_defaults(root),
    })
}

/// The manager's constructor-time check: the first server (in order, skipping
/// entries with `enabled: false`, which the manager ignores entirely) whose
/// `transport` is not a known name gives
/// `Unknown transport '<value>' for server '<name>'`. Anything else about the
/// input is left to [`validate_mcp_config`]; this never fails on odd shapes.
pub fn check_transports(input: &Value) -> Result<(), String> {
    let Some(servers) = input.get("servers").and_then(Value::as_object) else {
        return Ok(());
    };
    for (name, server) in servers {
        let Some(obj) = server.as_object() else {
            continue;
        };
        if obj.get("enabled") == Some(&Value::Bool(false)) {
            continue;
        }
        match obj.get("transport") {
            None => {}
            Some(Value::String(t)) if TransportKind::parse(t).is_some() => {}
            Some(other) => {
                return Err(format!(
                    "Unknown transport '{}' for server '{}'",
                    display_value(other),
                    name
                ));
            }
        }
    }
    Ok(())
}

/// What the manager's constructor accepts: the contract's unknown-transport message first (as
/// the original threw it), then full validation as `Invalid MCP config: <problems>`.
pub fn parse_manager_config(input: &Value) -> Result<ValidatedConfig, String> {
    check_transports(input)?;
    validate_mcp_config(input).map_err(|e| format!("Invalid MCP config: {e}"))
}
