//! The typed MCP configuration model shared by the rest of the crate.
//!
//! The crate builds these values only through
//! [`crate::config::validate_mcp_config`], so they are checked and have their
//! defaults applied. The fields are public, and [`ServerConfig::with_defaults`]
//! gives the same defaults to code that builds a server by hand (tests); such
//! code answers for the values it sets.

use std::fmt;

use serde_json::Value;

pub use crate::policy::ToolFilter;

/// Default connect timeout (`timeout`), in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// Default per-call tool timeout (`toolTimeout`), in milliseconds.
pub const DEFAULT_TOOL_TIMEOUT_MS: u64 = 60_000;
/// Default `maxToolTimeout`: the most a call may run when progress keeps restarting its
/// `toolTimeout` (10 minutes).
pub const DEFAULT_MAX_TOOL_TIMEOUT_MS: u64 = 600_000;
/// Default `maxRestarts`.
pub const DEFAULT_MAX_RESTARTS: u32 = 5;
/// Default `resourceRefreshMs`.
pub const DEFAULT_RESOURCE_REFRESH_MS: u64 = 300_000;
/// Upper bound for every millisecond duration in the config (24 h).
pub const MAX_DURATION_MS: u64 = 86_400_000;
/// Upper bound for `maxRestarts`.
pub const MAX_RESTARTS_LIMIT: u32 = 1000;
/// Default `maxTools`: far more than any agent can use, few enough that a server listing
/// hundreds of thousands cannot take the host's memory or block its JS thread.
pub const DEFAULT_MAX_TOOLS: u32 = 10_000;
/// Upper bound for `maxTools`.
pub const MAX_TOOLS_LIMIT: u32 = 1_000_000;
/// Upper bound for the result caps (`maxResultChars`, `maxImages`, `maxImageBytes`,
/// `maxResultBytes`).
pub const MAX_RESULT_LIMIT: u64 = 1 << 32;

/// What a tool result becomes for the agent: the original's one text block (`compat`), or
/// text, images and structured content (`rich`; see `bridge::rich`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResultMode {
    #[default]
    Compat,
    Rich,
}

impl ResultMode {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "compat" => Some(Self::Compat),
            "rich" => Some(Self::Rich),
            _ => None,
        }
    }
}

/// How a tool's `inputSchema` becomes the agent tool's `parameters`: the original's lossy
/// conversion (`compat`) or kept as the server wrote it (`faithful`; see `bridge::faithful`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SchemaMode {
    #[default]
    Compat,
    Faithful,
}

impl SchemaMode {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "compat" => Some(Self::Compat),
            "faithful" => Some(Self::Faithful),
            _ => None,
        }
    }
}

/// A server's own `results` and result caps; `None` takes the manager's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResultOverrides {
    pub mode: Option<ResultMode>,
    pub max_result_chars: Option<u64>,
    pub max_images: Option<u64>,
    pub max_image_bytes: Option<u64>,
    pub max_result_bytes: Option<u64>,
}

/// Where a server default shows up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DefaultScope {
    /// A default of the original TypeScript module's schema (zod): filled into the
    /// `data` of `validateMcpConfig` when the key is absent, and applied to the typed model.
    Schema,
    /// A key of ours that the original schema never had: applied to the typed model
    /// only, so `data` stays exactly what the original returned (no key it never had).
    Extension,
}

/// One server key with a default.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerDefault {
    /// The JSON key, as written in the config.
    pub key: &'static str,
    /// The default, as a JSON value of that key.
    pub value: Value,
    pub scope: DefaultScope,
}

/// The one list of server defaults, in the original schema's order (the order in
/// which `validateMcpConfig` appends the missing ones to `data`), extensions last.
///
/// Both uses read it: [`ServerConfig::with_defaults`] runs every entry through the
/// validator's own per-key parser (so a typed default is exactly what the same
/// value in the input gives), and `validateMcpConfig` fills the
/// [`DefaultScope::Schema`] entries into `data`. Keys without an entry (`command`,
/// `args`, `env`, `cwd`, `url`, `headers`, `toolPrefix`, `toolFilter`, `caFile`)
/// default to absent / empty.
pub(crate) fn server_defaults() -> [ServerDefault; 16] {
    use DefaultScope::{Extension, Schema};
    let d = |key, value: Value, scope| ServerDefault { key, value, scope };
    [
        d("enabled", Value::Bool(true), Schema),
        d("lazy", Value::Bool(false), Schema),
        d("transport", Value::from("stdio"), Schema),
        d("timeout", Value::from(DEFAULT_TIMEOUT_MS), Schema),
        d("toolTimeout", Value::from(DEFAULT_TOOL_TIMEOUT_MS), Schema),
        d("restartOnCrash", Value::Bool(true), Schema),
        d("maxRestarts", Value::from(DEFAULT_MAX_RESTARTS), Schema),
        d("resources", Value::Bool(true), Schema),
        d("resourceFilter", Value::Array(Vec::new()), Schema),
        d(
            "resourceRefreshMs",
            Value::from(DEFAULT_RESOURCE_REFRESH_MS),
            Schema,
        ),
        d("sseFallback", Value::Bool(true), Extension),
        d("maxTools", Value::from(DEFAULT_MAX_TOOLS), Extension),
        d("resetTimeoutOnProgress", Value::Bool(false), Extension),
        d(
            "maxToolTimeout",
            Value::from(DEFAULT_MAX_TOOL_TIMEOUT_MS),
            Extension,
        ),
        d("resourceTools", Value::Bool(false), Extension),
        d("promptTools", Value::Bool(false), Extension),
    ]
}

/// How the client reaches a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransportKind {
    /// A child process speaking JSON-RPC over stdin/stdout.
    Stdio,
    /// The legacy HTTP+SSE transport.
    Sse,
    /// Streamable HTTP. Spelled `"http"` in PR #21530 and `"streamable-http"`
    /// in current OpenClaw; [`ServerConfig::transport_name`] keeps the spelling.
    Http,
}

impl TransportKind {
    /// Parses a transport name as accepted in the config.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "stdio" => Some(Self::Stdio),
            "sse" => Some(Self::Sse),
            "http" | "streamable-http" => Some(Self::Http),
            _ => None,
        }
    }

    /// The canonical name (`"stdio"`, `"sse"`, `"http"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Sse => "sse",
            Self::Http => "http",
        }
    }
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One validated server entry, defaults applied.
///
/// `Debug` is hand-written: `env` and `headers` may hold plaintext credentials
/// (the config allows them, with a warning), so only their keys are shown, and a
/// value is shown only when it is a `secret://` reference.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The config key. The server's identity for tool names, status and logs.
    pub name: String,
    pub enabled: bool,
    pub lazy: bool,
    pub transport: TransportKind,
    /// The transport as spelled in the input (`"http"` or `"streamable-http"` for
    /// [`TransportKind::Http`]); `"stdio"` when the field was absent.
    pub transport_name: String,
    pub command: Option<String>,
    pub args: Vec<String>,
    /// In input order. Values may be `secret://` references (resolved at start),
    /// including the canonical form of an OpenClaw SecretRef object
    /// (`secret://env/ID`, `secret://file/@PROVIDER#ID`, `secret://exec/PROVIDER#ID`,
    /// see [`crate::secrets::secret_ref_to_uri`]), and plain values may hold
    /// `${VAR}` references (substituted at start).
    pub env: Vec<(String, String)>,
    pub cwd: Option<String>,
    pub url: Option<String>,
    /// In input order. Values as in [`ServerConfig::env`].
    pub headers: Vec<(String, String)>,
    pub timeout_ms: u64,
    pub tool_timeout_ms: u64,
    pub restart_on_crash: bool,
    pub max_restarts: u32,
    /// `None` when absent; the effective prefix is then the server name
    /// (see [`ServerConfig::effective_tool_prefix`]). `Some("")` is kept as is.
    pub tool_prefix: Option<String>,
    pub resources: bool,
    pub resource_filter: Vec<String>,
    pub resource_refresh_ms: u64,
    /// `toolFilter { include, exclude }` over the server's own tool names;
    /// empty (the default) keeps every tool.
    pub tool_filter: ToolFilter,
    /// http / sse: a PEM file of extra CA certificates trusted for this server, on top of the
    /// system roots (a private server with its own CA).
    pub ca_file: Option<String>,
    /// http: retry as legacy SSE when the first POST gets a 4xx typical of an SSE-only server.
    pub sse_fallback: bool,
    /// The most tools taken from the server's listing (after `toolFilter`); the rest are
    /// dropped with a warning, and no further page is asked for.
    pub max_tools: u32,
    /// `results`, `maxResultChars`, `maxImages`, `maxImageBytes`, `maxResultBytes`.
    pub results: ResultOverrides,
    /// A progress notification restarts the call's `toolTimeout` (never past
    /// `max_tool_timeout_ms` from the start of the call).
    pub reset_timeout_on_progress: bool,
    pub max_tool_timeout_ms: u64,
    /// Offer the server's resources (`…_resources_list`, `…_resources_read`) and prompts
    /// (`…_prompts_list`, `…_prompts_get`) as tools.
    pub resource_tools: bool,
    pub prompt_tools: bool,
    /// `schemas`; `None` takes the manager's.
    pub schemas: Option<SchemaMode>,
    /// `logLevel`: sent as `logging/setLevel` after each connect to a server that declares
    /// logging (`debug` … `emergency`).
    pub log_level: Option<String>,
    /// stdio: which host variables the server inherits (`envPolicy`).
    pub env_policy: EnvPolicy,
    /// stdio: host variables passed whatever the policy (`envPassthrough`).
    pub env_passthrough: Vec<String>,
    /// `hygiene` (`'on'` / `'off'`); `None` takes the manager's.
    pub hygiene: Option<bool>,
    /// `pinning`; `None` takes the manager's.
    pub pinning: Option<PinPolicy>,
    /// `idleTimeoutMs`: a server with no call for this long is stopped (its tools stay
    /// offered; the next call starts it again). `None`: never.
    pub idle_timeout_ms: Option<u64>,
    /// `cacheDir`: where this server's tool list is kept between runs (`lazy` starts from it);
    /// `None` takes the manager's.
    pub cache_dir: Option<String>,
    /// `protocol`: the MCP revision to speak, or `auto` (the newest both sides speak).
    pub protocol: ProtocolChoice,
    /// `taskTimeout`: bounds a tool call run as a task (create, poll, result); `None` takes
    /// `toolTimeout`.
    pub task_timeout_ms: Option<u64>,
    /// `auth`: OAuth for an `http` or `sse` server (`None`: no OAuth, static headers only).
    pub auth: Option<OAuthConfig>,
}

/// `auth: { type: 'oauth', … }` (or `auth: 'oauth'`): how the client obtains tokens for a
/// remote server. Secrets (`clientSecret`) are kept as written (`secret://`, `${VAR}` or
/// plaintext) and resolved at each start like `headers`.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct OAuthConfig {
    /// A client id registered with the authorization server out of band.
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// Scopes to ask for; empty lets the server's challenge and metadata decide.
    pub scopes: Vec<String>,
    /// Where the authorization server sends the browser back (default
    /// [`OAuthConfig::DEFAULT_REDIRECT_URI`]).
    pub redirect_uri: Option<String>,
    pub grant: OAuthGrant,
    /// A PEM private key for `private_key_jwt` client authentication (client credentials).
    pub private_key_file: Option<String>,
    /// An HTTPS URL of this client's metadata document (SEP-991), used as its client id where
    /// the authorization server supports it.
    pub client_metadata_url: Option<String>,
    /// `jwt_bearer`: the file holding the workload's identity token (read at each grant).
    pub assertion_file: Option<String>,
    /// `enterprise`: the enterprise identity provider.
    pub idp: Option<IdpConfig>,
}

/// `auth.idp`: the enterprise identity provider whose identity token is exchanged for access
/// (SEP-990). `clientSecret` and `idToken` take the secret forms.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct IdpConfig {
    pub issuer: String,
    pub token_endpoint: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub id_token: String,
}

impl fmt::Debug for IdpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |s: &str| {
            if s.starts_with("secret://") {
                s.to_owned()
            } else {
                "***".to_owned()
            }
        };
        f.debug_struct("IdpConfig")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_deref().map(shown))
            .field("id_token", &shown(&self.id_token))
            .finish()
    }
}

impl OAuthConfig {
    /// The loopback redirect `login` listens on by default.
    pub const DEFAULT_REDIRECT_URI: &'static str = "http://127.0.0.1:8976/callback";

    pub fn redirect_uri(&self) -> &str {
        self.redirect_uri
            .as_deref()
            .unwrap_or(Self::DEFAULT_REDIRECT_URI)
    }
}

impl fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|s| {
                    if s.starts_with("secret://") {
                        s.as_str()
                    } else {
                        "***"
                    }
                }),
            )
            .field("scopes", &self.scopes)
            .field("redirect_uri", &self.redirect_uri)
            .field("grant", &self.grant)
            .field("private_key_file", &self.private_key_file)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("assertion_file", &self.assertion_file)
            .field("idp", &self.idp)
            .finish()
    }
}

/// `auth.grant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OAuthGrant {
    /// A user signs in (through the host's `authorize`, or `login`).
    #[default]
    AuthorizationCode,
    /// A machine client: `clientId` with `clientSecret` or `privateKeyFile`.
    ClientCredentials,
    /// Workload identity federation: the jwt-bearer grant with `assertionFile`'s token.
    JwtBearer,
    /// Enterprise-managed authorization: `idp`'s identity token exchanged for access.
    Enterprise,
}

impl OAuthGrant {
    pub const NAMES: &'static str =
        "'authorization_code', 'client_credentials', 'jwt_bearer' or 'enterprise'";

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "authorization_code" => Some(Self::AuthorizationCode),
            "client_credentials" => Some(Self::ClientCredentials),
            "jwt_bearer" => Some(Self::JwtBearer),
            "enterprise" => Some(Self::Enterprise),
            _ => None,
        }
    }
}

/// `protocol`: which MCP revision a server is spoken to in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProtocolChoice {
    /// The newest revision the server supports (how it is found: docs/design.md).
    #[default]
    Auto,
    /// One revision, asked for and nothing else.
    Fixed(&'static str),
}

impl ProtocolChoice {
    /// Every revision this client speaks, newest first.
    pub const REVISIONS: [&'static str; 5] = [
        "2026-07-28",
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
        "2024-11-05",
    ];

    pub fn parse(name: &str) -> Option<Self> {
        if name == "auto" {
            return Some(Self::Auto);
        }
        Self::REVISIONS
            .iter()
            .find(|r| **r == name)
            .map(|r| Self::Fixed(r))
    }
}

/// `pinning`: what a tool whose definition changed since it was approved gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PinPolicy {
    /// Definitions are not tracked.
    Off,
    /// Reported (a warning and a `toolDefinitionChanged` event), still offered.
    #[default]
    Warn,
    /// Reported and withheld until `approveTools` accepts it.
    Enforce,
}

impl PinPolicy {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "off" => Some(Self::Off),
            "warn" => Some(Self::Warn),
            "enforce" => Some(Self::Enforce),
            _ => None,
        }
    }
}

/// `envPolicy`: what a stdio server inherits from the host environment. Under both, the
/// loader-hijack variables are withheld unless `env` or `envPassthrough` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EnvPolicy {
    /// Everything else (the original's behaviour).
    #[default]
    Inherit,
    /// Only a small allowlist (PATH, HOME, locale, temp dirs…).
    Minimal,
}

impl EnvPolicy {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "inherit" => Some(Self::Inherit),
            "minimal" => Some(Self::Minimal),
            _ => None,
        }
    }
}

impl ServerConfig {
    /// Every field as if its key were absent and had no default. Not a server
    /// anyone should use: [`ServerConfig::with_defaults`] (in `validate.rs`, which
    /// parses the defaults table) overwrites the fields that have a default.
    pub(super) fn unset(name: String) -> Self {
        Self {
            name,
            enabled: false,
            lazy: false,
            transport: TransportKind::Stdio,
            transport_name: String::new(),
            command: None,
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            url: None,
            headers: Vec::new(),
            timeout_ms: 0,
            tool_timeout_ms: 0,
            restart_on_crash: false,
            max_restarts: 0,
            tool_prefix: None,
            resources: false,
            resource_filter: Vec::new(),
            resource_refresh_ms: 0,
            tool_filter: ToolFilter::default(),
            ca_file: None,
            sse_fallback: false,
            max_tools: 0,
            results: ResultOverrides::default(),
            reset_timeout_on_progress: false,
            max_tool_timeout_ms: 0,
            resource_tools: false,
            prompt_tools: false,
            schemas: None,
            log_level: None,
            env_policy: EnvPolicy::Inherit,
            env_passthrough: Vec::new(),
            hygiene: None,
            pinning: None,
            idle_timeout_ms: None,
            cache_dir: None,
            protocol: ProtocolChoice::Auto,
            task_timeout_ms: None,
            auth: None,
        }
    }

    /// `toolPrefix ?? name`, as the original computes it (`""` stays `""`).
    pub fn effective_tool_prefix(&self) -> &str {
        self.tool_prefix.as_deref().unwrap_or(&self.name)
    }
}

struct MaskedPairs<'a>(&'a [(String, String)]);

impl fmt::Debug for MaskedPairs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut m = f.debug_map();
        for (k, v) in self.0 {
            if v.starts_with("secret://") {
                m.entry(k, v);
            } else {
                m.entry(k, &format_args!("<{} bytes>", v.len()));
            }
        }
        m.finish()
    }
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerConfig")
            .field("name", &self.name)
            .field("enabled", &self.enabled)
            .field("lazy", &self.lazy)
            .field("transport", &self.transport)
            .field("transport_name", &self.transport_name)
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &MaskedPairs(&self.env))
            .field("cwd", &self.cwd)
            .field("url", &self.url)
            .field("headers", &MaskedPairs(&self.headers))
            .field("timeout_ms", &self.timeout_ms)
            .field("tool_timeout_ms", &self.tool_timeout_ms)
            .field("restart_on_crash", &self.restart_on_crash)
            .field("max_restarts", &self.max_restarts)
            .field("tool_prefix", &self.tool_prefix)
            .field("resources", &self.resources)
            .field("resource_filter", &self.resource_filter)
            .field("resource_refresh_ms", &self.resource_refresh_ms)
            .field("tool_filter", &self.tool_filter)
            .field("ca_file", &self.ca_file)
            .field("sse_fallback", &self.sse_fallback)
            .field("max_tools", &self.max_tools)
            .field("results", &self.results)
            .field("reset_timeout_on_progress", &self.reset_timeout_on_progress)
            .field("max_tool_timeout_ms", &self.max_tool_timeout_ms)
            .field("resource_tools", &self.resource_tools)
            .field("prompt_tools", &self.prompt_tools)
            .field("schemas", &self.schemas)
            .field("log_level", &self.log_level)
            .field("env_policy", &self.env_policy)
            .field("env_passthrough", &self.env_passthrough)
            .field("hygiene", &self.hygiene)
            .field("pinning", &self.pinning)
            .field("idle_timeout_ms", &self.idle_timeout_ms)
            .field("cache_dir", &self.cache_dir)
            .field("protocol", &self.protocol)
            .field("task_timeout_ms", &self.task_timeout_ms)
            .field("auth", &self.auth)
            .finish()
    }
}

/// The whole validated config.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpConfig {
    /// In insertion order; disabled servers are INCLUDED (the manager filters).
    pub servers: Vec<ServerConfig>,
}

impl McpConfig {
    /// The enabled servers, in config order.
    pub fn enabled_servers(&self) -> impl Iterator<Item = &ServerConfig> {
        self.servers.iter().filter(|s| s.enabled)
    }

    /// Looks a server up by its config key.
    pub fn server(&self, name: &str) -> Option<&ServerConfig> {
        self.servers.iter().find(|s| s.name == name)
    }
}

/// The result of a successful [`crate::config::validate_mcp_config`].
///
/// `Debug` shows the typed model (masked) but not `data`, which holds the raw
/// `env`/`headers` values.
#[derive(Clone, PartialEq)]
pub struct ValidatedConfig {
    /// The typed model.
    pub config: McpConfig,
    /// The input with the original schema's defaults filled in (JS `{ success: true,
    /// data }`): our extensions such as `sseFallback` are not added (the original
    /// never had them), and `toolPrefix` is not filled (the original computes
    /// `toolPrefix ?? name` at use).
    pub data: serde_json::Value,
}

impl fmt::Debug for ValidatedConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValidatedConfig")
            .field("config", &self.config)
            .field("data", &format_args!("<json>"))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_defaults_table_for_model_and_data() {
        let table = server_defaults();
        for (i, d) in table.iter().enumerate() {
            assert!(
                table[..i].iter().all(|e| e.key != d.key),
                "'{}' listed twice",
                d.key
            );
        }
        let s = ServerConfig::with_defaults("a");
        assert!(s.enabled && !s.lazy && s.restart_on_crash && s.resources && s.sse_fallback);
        assert_eq!(
            (s.transport, s.transport_name.as_str()),
            (TransportKind::Stdio, "stdio")
        );
        assert_eq!(
            (
                s.timeout_ms,
                s.tool_timeout_ms,
                s.max_restarts,
                s.resource_refresh_ms
            ),
            (30_000, 60_000, 5, 300_000)
        );
        // The extension is applied to the model but never added to `data`.
        let v = crate::config::validate_mcp_config(
            &serde_json::json!({"servers": {"a": {"command": "x"}}}),
        )
        .unwrap();
        assert!(v.config.servers[0].sse_fallback);
        let data = v.data["servers"]["a"].as_object().unwrap();
        assert!(!data.contains_key("sseFallback"));
        let filled: Vec<&str> = table
            .iter()
            .filter(|d| d.scope == DefaultScope::Schema)
            .map(|d| d.key)
            .collect();
        let keys: Vec<&str> = data.keys().skip(1).map(String::as_str).collect();
        assert_eq!(keys, filled);
    }
}
