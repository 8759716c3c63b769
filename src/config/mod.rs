//! The MCP config: typed model, `validateMcpConfig`, and extraction from the
//! documents a config can live in. No I/O except [`load_mcp_config_file`].

mod model;
mod openclaw_json;
mod validate;

pub use model::{
    DEFAULT_MAX_RESTARTS, DEFAULT_RESOURCE_REFRESH_MS, DEFAULT_TIMEOUT_MS, DEFAULT_TOOL_TIMEOUT_MS,
    MAX_DURATION_MS, MAX_RESTARTS_LIMIT, McpConfig, ServerConfig, TransportKind, ValidatedConfig,
};
pub use openclaw_json::{
    ConfigShape, MAX_CONFIG_DEPTH, detect_and_extract, detect_shape, load_mcp_config_file,
    mcp_config_from_openclaw,
};
pub use validate::{check_transports, validate_mcp_config};
