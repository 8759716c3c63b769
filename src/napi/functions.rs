//! The free functions of the package.

use std::collections::HashMap;

use ::napi::bindgen_prelude::*;
use napi_derive::napi;
use secrecy::ExposeSecret;
use serde_json::{Value, json};

use crate::config;
use crate::secrets::{self, SecretResolver};
use crate::security::{self, WrapFormat, WrapOptions};

/// `{ success: true, data }` with defaults filled in, or `{ success: false, error }`.
#[napi(
    ts_args_type = "input: unknown",
    ts_return_type = "McpConfigValidation"
)]
pub fn validate_mcp_config(env: &Env, input: Unknown) -> Result<Value> {
    let input = super::json_from_js(env, input)?;
    Ok(match config::validate_mcp_config(&input) {
        Ok(valid) => json!({ "success": true, "data": valid.data }),
        Err(error) => json!({ "success": false, "error": error }),
    })
}

/// A plain `McpConfig`, or an `openclaw.json` whose `agents.defaults.mcp` (merged with
/// `agents.list[].mcp` of `options.agent`) holds one; validated, defaults filled in.
#[napi(
    ts_args_type = "input: unknown, options?: { agent?: string }",
    ts_return_type = "McpConfig"
)]
pub fn load_mcp_config(env: &Env, input: Unknown, options: Option<LoadOptions>) -> Result<Value> {
    let input = super::json_from_js(env, input)?;
    let agent = options.and_then(|o| o.agent);
    let extracted = config::detect_and_extract(&input, agent.as_deref())
        .map_err(|e| Error::new(Status::InvalidArg, e))?;
    config::check_transports(&extracted).map_err(|e| Error::new(Status::InvalidArg, e))?;
    let valid = config::validate_mcp_config(&extracted)
        .map_err(|e| Error::new(Status::InvalidArg, format!("Invalid MCP config: {e}")))?;
    Ok(valid.data)
}

#[napi(object)]
pub struct LoadOptions {
    pub agent: Option<String>,
}

#[napi(object)]
pub struct WrapExternalContentOptions {
    pub source: String,
    pub sender: Option<String>,
    pub subject: Option<String>,
    pub task_name: Option<String>,
    pub include_warning: Option<bool>,
    #[napi(ts_type = "'id' | 'legacy'")]
    pub format: Option<String>,
}

fn wrap_format(format: Option<&str>) -> Result<WrapFormat> {
    match format {
        None | Some("id") => Ok(WrapFormat::Id),
        Some("legacy") => Ok(WrapFormat::Legacy),
        Some(other) => Err(Error::new(
            Status::InvalidArg,
            format!("Invalid format '{other}': expected 'id' or 'legacy'"),
        )),
    }
}

/// OpenClaw's untrusted-content block around `content` (id format by default).
#[napi]
pub fn wrap_external_content(content: String, opts: WrapExternalContentOptions) -> Result<String> {
    let options = WrapOptions {
        source: &opts.source,
        sender: opts.sender.as_deref(),
        subject: opts.subject.as_deref(),
        task_name: opts.task_name.as_deref(),
        include_warning: opts.include_warning.unwrap_or(true),
        format: wrap_format(opts.format.as_deref())?,
        mcp_server_label: true,
    };
    Ok(security::wrap_external_content(&content, &options))
}

/// The `source` of every suspicious-pattern regex that matches, in list order.
#[napi(ts_args_type = "content: string, format?: 'id' | 'legacy'")]
pub fn detect_suspicious_patterns(content: String, format: Option<String>) -> Result<Vec<String>> {
    let format = wrap_format(format.as_deref())?;
    Ok(security::detect_suspicious_patterns(&content, format)
        .into_iter()
        .map(str::to_owned)
        .collect())
}

#[napi(object)]
pub struct SecretReference {
    pub provider: String,
    pub path: String,
    pub field: Option<String>,
}

/// The parts of a `secret://provider/path[#field]` reference; `null` for a plain value.
#[napi]
pub fn parse_secret_uri(value: String) -> Result<Option<SecretReference>> {
    match secrets::parse_secret_uri(&value) {
        Ok(Some(r)) => Ok(Some(SecretReference {
            provider: r.provider,
            path: r.path,
            field: r.field,
        })),
        Ok(None) => Ok(None),
        Err(e) => Err(Error::new(Status::InvalidArg, e.to_string())),
    }
}

/// Resolves one reference (a plain value comes back unchanged).
#[napi(ts_return_type = "Promise<string>")]
pub async fn resolve_secret(value: String) -> Result<String> {
    let resolver = SecretResolver::with_default_providers();
    let secret = resolver
        .resolve(&value)
        .await
        .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))?;
    Ok(secret.expose_secret().to_owned())
}

/// Resolves every value of the record in parallel; any failure rejects the whole call.
#[napi(ts_return_type = "Promise<Record<string, string>>")]
pub async fn resolve_secrets(record: HashMap<String, String>) -> Result<HashMap<String, String>> {
    let resolver = SecretResolver::with_default_providers();
    let entries: Vec<(String, String)> = record.into_iter().collect();
    let resolved = resolver
        .resolve_all(&entries)
        .await
        .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))?;
    Ok(resolved
        .into_iter()
        .map(|(k, v)| (k, v.expose_secret().to_owned()))
        .collect())
}

/// The version of the native core (equals the package version).
#[napi]
pub fn native_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}
