//! The MCP config: typed model, `validateMcpConfig`, and extraction from the
//! documents a config can live in (our own `McpConfig`, `openclaw.json` in both
//! OpenClaw layouts, `mcpServers` files, ACP's `mcpServers` array; see
//! [`extract_mcp_config`]). No I/O except [`load_config_file`].

mod model;
mod shapes;
mod shared;
mod tool_filter;
mod validate;
pub(crate) mod values;

pub use model::{
    DEFAULT_MAX_RESTARTS, DEFAULT_MAX_TOOLS, DEFAULT_RESOURCE_REFRESH_MS, DEFAULT_TIMEOUT_MS,
    DEFAULT_TOOL_TIMEOUT_MS, EnvPolicy, IdpConfig, MAX_DURATION_MS, MAX_RESTARTS_LIMIT,
    MAX_RESULT_LIMIT, MAX_TOOLS_LIMIT, McpConfig, OAuthConfig, OAuthGrant, PinPolicy,
    ProtocolChoice, ResultMode, ResultOverrides, SchemaMode, ServerConfig, ToolFilter,
    TransportKind, ValidatedConfig,
};
pub use shapes::{
    ConfigShape, ExtractOptions, ExtractedConfig, MAX_CONFIG_DEPTH, detect_config_shape,
    extract_mcp_config, load_config_file, manager_configs_for_openclaw,
};
pub use shared::{SharedConfig, shared_config_for_openclaw};
pub use validate::{check_transports, parse_manager_config, validate_mcp_config};
