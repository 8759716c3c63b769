//! The free functions of the package.

use std::borrow::Cow;

use ::napi::JsString;
use ::napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Value, json};

use super::text::{concat, js_string, rust_string};
use crate::config;
use crate::js_text::JsText;
use crate::options::{Detection, parse_wrap_format};
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

/// Any supported config document as a validated `McpConfig` (defaults filled in): our own
/// `McpConfig`, an `openclaw.json` (`agents.defaults.mcp` merged with `agents.list[].mcp` of
/// `options.agent`, or current OpenClaw's top-level `mcp.servers`), a Claude Desktop / Cursor /
/// VS Code `mcpServers` file, or an ACP `session/new` `mcpServers` array. The shape is detected
/// unless `options.shape` names it. Throws an `Error` naming the path and the problem.
#[napi(
    ts_args_type = "input: unknown, options?: LoadMcpConfigOptions",
    ts_return_type = "McpConfig"
)]
pub fn load_mcp_config(
    env: &Env,
    input: Unknown,
    options: Option<LoadMcpConfigOptions>,
) -> Result<Value> {
    Ok(inspect(env, input, options)?.config)
}

/// Like `loadMcpConfig`, and also says which shape it read and what it ignored or changed.
#[napi(ts_args_type = "input: unknown, options?: LoadMcpConfigOptions")]
pub fn inspect_mcp_config(
    env: &Env,
    input: Unknown,
    options: Option<LoadMcpConfigOptions>,
) -> Result<InspectedMcpConfig> {
    inspect(env, input, options)
}

/// One `McpConfig` per agent of an `openclaw.json`, each its own copy, for a gateway that runs one
/// manager per agent.
#[napi(ts_args_type = "input: unknown")]
pub fn manager_configs_for_openclaw(env: &Env, input: Unknown) -> Result<Vec<AgentMcpConfig>> {
    let input = super::json_from_js(env, input)?;
    let configs = config::manager_configs_for_openclaw(&input)
        .map_err(|e| Error::new(Status::InvalidArg, e))?;
    configs
        .into_iter()
        .map(|(agent, raw)| {
            Ok(AgentMcpConfig {
                agent,
                config: validated(&raw)?,
            })
        })
        .collect()
}

/// One `McpConfig` for every agent of an `openclaw.json`, each distinct server definition once,
/// and per agent the view spec (`{ servers }`) to pass to `manager.view()`: one process per
/// server instead of one per server and agent.
#[napi(
    ts_args_type = "input: unknown",
    ts_return_type = "{ config: McpConfig; agents: { agent: string; view: { servers: string[] } }[] }"
)]
pub fn shared_manager_config_for_openclaw(env: &Env, input: Unknown) -> Result<Value> {
    let input = super::json_from_js(env, input)?;
    let shared = config::shared_config_for_openclaw(&input)
        .map_err(|e| Error::new(Status::InvalidArg, e))?;
    let agents: Vec<Value> = shared
        .agents
        .into_iter()
        .map(|(agent, servers)| json!({ "agent": agent, "view": { "servers": servers } }))
        .collect();
    Ok(json!({ "config": shared.config, "agents": agents }))
}

fn inspect(
    env: &Env,
    input: Unknown,
    options: Option<LoadMcpConfigOptions>,
) -> Result<InspectedMcpConfig> {
    let input = super::json_from_js(env, input)?;
    let options = options.unwrap_or(LoadMcpConfigOptions {
        agent: None,
        shape: None,
    });
    let shape = match options.shape.as_deref() {
        Some(name) => {
            Some(config::ConfigShape::parse(name).map_err(|e| Error::new(Status::InvalidArg, e))?)
        }
        None => None,
    };
    let extracted = config::extract_mcp_config(
        &input,
        &config::ExtractOptions {
            agent: options.agent.as_deref(),
            shape,
        },
    )
    .map_err(|e| Error::new(Status::InvalidArg, e))?;
    Ok(InspectedMcpConfig {
        shape: extracted.shape.name().to_owned(),
        config: validated(&extracted.config)?,
        warnings: extracted.warnings,
    })
}

fn validated(raw: &Value) -> Result<Value> {
    config::parse_manager_config(raw)
        .map(|v| v.data)
        .map_err(|e| Error::new(Status::InvalidArg, e))
}

#[napi(object)]
pub struct LoadMcpConfigOptions {
    /// The agent whose servers to use, with an `openclaw.json`.
    pub agent: Option<String>,
    /// Skip detection: 'mcp', 'openclaw', 'openclaw-mcp', 'mcpServers' or 'acp'.
    #[napi(ts_type = "'mcp' | 'openclaw' | 'openclaw-mcp' | 'mcpServers' | 'acp'")]
    pub shape: Option<String>,
}

#[napi(object)]
pub struct InspectedMcpConfig {
    #[napi(ts_type = "'mcp' | 'openclaw' | 'openclaw-mcp' | 'mcpServers' | 'acp'")]
    pub shape: String,
    #[napi(ts_type = "McpConfig")]
    pub config: Value,
    /// What was ignored or changed on the way (unknown keys, unsupported fields...).
    pub warnings: Vec<String>,
}

#[napi(object)]
pub struct AgentMcpConfig {
    pub agent: String,
    #[napi(ts_type = "McpConfig")]
    pub config: Value,
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
    parse_wrap_format("format", format).map_err(|e| Error::new(Status::InvalidArg, e))
}

/// The wrap options object; a missing or mistyped member is an error that says which.
fn options_arg(function: &str, opts: Unknown) -> Result<WrapExternalContentOptions> {
    let invalid = |why: String| Error::new(Status::InvalidArg, format!("{function}: {why}"));
    if opts.get_type()? != ValueType::Object {
        return Err(invalid(format!(
            "opts must be an object with a string `source`, got {}",
            super::type_name(&opts)
        )));
    }
    let object: Object = unsafe { opts.cast()? };
    let string = |name: &str| -> Result<Option<String>> {
        super::optional_string_arg(
            function,
            &format!("opts.{name}"),
            object.get::<Unknown>(name)?,
        )
    };
    let source =
        string("source")?.ok_or_else(|| invalid("opts.source must be a string".to_owned()))?;
    let include_warning = match object.get::<Unknown>("includeWarning")? {
        None => None,
        Some(value) => match value.get_type()? {
            ValueType::Undefined | ValueType::Null => None,
            ValueType::Boolean => Some(unsafe { value.cast::<bool>()? }),
            _ => {
                return Err(invalid(format!(
                    "opts.includeWarning must be a boolean, got {}",
                    super::type_name(&value)
                )));
            }
        },
    };
    Ok(WrapExternalContentOptions {
        source,
        sender: string("sender")?,
        subject: string("subject")?,
        task_name: string("taskName")?,
        include_warning,
        format: string("format")?,
    })
}

fn wrap_options(opts: &WrapExternalContentOptions) -> Result<WrapOptions<'_>> {
    Ok(WrapOptions {
        source: &opts.source,
        sender: opts.sender.as_deref(),
        subject: opts.subject.as_deref(),
        task_name: opts.task_name.as_deref(),
        include_warning: opts.include_warning.unwrap_or(true),
        format: wrap_format(opts.format.as_deref())?,
        mcp_server_label: true,
    })
}

/// Below this size the wrapped text is simply converted; above it, unchanged content is the
/// caller's own JS string joined with the new head and tail.
const REUSE_CONTENT_FROM: usize = 4096;

/// The wrapped block for `content`, which JS holds as `original`.
fn wrapped<'env>(
    env: &'env Env,
    original: JsString<'env>,
    content: &str,
    exact: bool,
    options: &WrapOptions,
) -> Result<JsString<'env>> {
    if exact && content.len() >= REUSE_CONTENT_FROM {
        let parts = security::wrap_external_content_parts(content, options);
        if let Cow::Borrowed(_) = parts.body {
            return concat(
                env,
                JsText::new(parts.head),
                original,
                JsText::new(parts.tail),
            );
        }
        return js_string(env, JsText::new(parts.into_string()));
    }
    js_string(
        env,
        JsText::new(security::wrap_external_content(content, options)),
    )
}

/// OpenClaw's untrusted-content block around `content` (id format by default).
#[napi(
    ts_args_type = "content: string, opts: WrapExternalContentOptions",
    ts_return_type = "string"
)]
pub fn wrap_external_content<'env>(
    env: &'env Env,
    content: Unknown<'env>,
    opts: Unknown<'env>,
) -> Result<JsString<'env>> {
    let content = super::string_arg("wrapExternalContent", "content", content)?;
    let opts = options_arg("wrapExternalContent", opts)?;
    let options = wrap_options(&opts)?;
    let (text, exact) = rust_string(content)?;
    wrapped(env, content, &text, exact, &options)
}

/// The `source` of every suspicious-pattern regex that matches, in list order.
#[napi(ts_args_type = "content: string, format?: 'id' | 'legacy'")]
pub fn detect_suspicious_patterns(
    content: Unknown,
    format: Option<Unknown>,
) -> Result<Vec<&'static str>> {
    let content = super::string_arg("detectSuspiciousPatterns", "content", content)?;
    let format = super::optional_string_arg("detectSuspiciousPatterns", "format", format)?;
    let format = wrap_format(format.as_deref())?;
    let (content, _) = rust_string(content)?;
    Ok(security::detect_suspicious_patterns(&content, format))
}

/// What a detector finds in `content`: with `detection: 'openclaw'` (the default) the
/// `source` of every OpenClaw pattern that matches (as `detectSuspiciousPatterns`); with
/// `'enhanced'` the name of every rule of the enhanced detector that fires. Empty: nothing.
#[napi(ts_args_type = "content: string, options?: { detection?: 'openclaw' | 'enhanced' }")]
pub fn detect_injection(
    env: &Env,
    content: Unknown,
    options: Option<Unknown>,
) -> Result<Vec<&'static str>> {
    let content = super::string_arg("detectInjection", "content", content)?;
    let detection = match options {
        None => None,
        Some(value) => match super::json_from_js(env, value)? {
            serde_json::Value::Null => None,
            serde_json::Value::Object(map) => match map.get("detection") {
                None | Some(serde_json::Value::Null) => None,
                Some(serde_json::Value::String(d)) => Some(d.clone()),
                Some(other) => {
                    return Err(Error::new(
                        Status::InvalidArg,
                        format!(
                            "detectInjection: detection must be 'openclaw' or 'enhanced', got {other}"
                        ),
                    ));
                }
            },
            _ => {
                return Err(Error::new(
                    Status::InvalidArg,
                    "detectInjection: options must be an object { detection? }",
                ));
            }
        },
    };
    let detection = match detection.as_deref() {
        None => Detection::default(),
        Some(name) => Detection::parse(name).ok_or_else(|| {
            Error::new(
                Status::InvalidArg,
                format!(
                    "detectInjection: detection must be 'openclaw' or 'enhanced', got '{name}'"
                ),
            )
        })?,
    };
    let (content, _) = rust_string(content)?;
    Ok(detection.detect(&content, security::WrapFormat::default()))
}

#[napi(object, object_from_js = false)]
pub struct ScannedExternalContent<'env> {
    /// `wrapExternalContent(content, opts)`.
    #[napi(ts_type = "string")]
    pub wrapped: JsString<'env>,
    /// `detectSuspiciousPatterns(content, opts.format)`.
    pub suspicious: Vec<&'static str>,
}

/// `detectSuspiciousPatterns` and `wrapExternalContent` of the same content in one call (what
/// a tool result goes through), so the text crosses from JS once.
#[napi(ts_args_type = "content: string, opts: WrapExternalContentOptions")]
pub fn scan_and_wrap_external_content<'env>(
    env: &'env Env,
    content: Unknown<'env>,
    opts: Unknown<'env>,
) -> Result<ScannedExternalContent<'env>> {
    let content = super::string_arg("scanAndWrapExternalContent", "content", content)?;
    let opts = options_arg("scanAndWrapExternalContent", opts)?;
    let options = wrap_options(&opts)?;
    let (text, exact) = rust_string(content)?;
    let (suspicious, wrapped) = security::detect_alongside(&text, options.format, || {
        wrapped(env, content, &text, exact, &options)
    });
    Ok(ScannedExternalContent {
        suspicious,
        wrapped: wrapped?,
    })
}

#[napi(object)]
pub struct SecretReference {
    pub provider: String,
    pub path: String,
    pub field: Option<String>,
}

/// The parts of a `secret://provider/path[#field]` reference; `null` for a plain value.
#[napi(ts_args_type = "value: string")]
pub fn parse_secret_uri(value: Unknown) -> Result<Option<SecretReference>> {
    let value = super::string_arg("parseSecretUri", "value", value)?;
    let (value, _) = rust_string(value)?;
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

/// The argument as JSON and a resolver reading `process.env` as it is now (the JS object, as
/// the original did); a failure here becomes the promise's rejection, never a throw.
fn call_input(env: &Env, value: Unknown) -> Result<(Value, SecretResolver)> {
    let value = super::json_from_js(env, value)?;
    let read = super::host_env::reader(env)?;
    let resolver = SecretResolver::with_default_providers_in(super::host_env::read_now(&read));
    Ok((value, resolver))
}

/// Resolves one reference (a plain value comes back unchanged). Never throws: bad input
/// rejects.
#[napi(ts_args_type = "value: string", ts_return_type = "Promise<string>")]
pub fn resolve_secret<'env>(env: &'env Env, value: Unknown) -> Result<PromiseRaw<'env, String>> {
    let input = call_input(env, value);
    env.spawn_future(async move {
        let (value, resolver) = input?;
        secrets::resolve_value(&resolver, &value)
            .await
            .map_err(|e| Error::new(Status::GenericFailure, e))
    })
}

/// Resolves every value of the record in parallel, keys in the record's order; any failure
/// rejects the whole call. `null`/`undefined` resolve `{}`. Never throws: bad input rejects.
#[napi(
    ts_args_type = "record: Record<string, string>",
    ts_return_type = "Promise<Record<string, string>>"
)]
pub fn resolve_secrets<'env>(env: &'env Env, record: Unknown) -> Result<PromiseRaw<'env, Value>> {
    let input = call_input(env, record);
    env.spawn_future(async move {
        let (record, resolver) = input?;
        secrets::resolve_record(&resolver, &record)
            .await
            .map_err(|e| Error::new(Status::GenericFailure, e))
    })
}

/// The version of the native core (equals the package version).
#[napi]
pub fn native_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Lints a config of any shape the package reads (`loadMcpConfig`'s), resolving its secret
/// references and, with `network: true`, probing its remote servers. Resolves to the findings;
/// a config that does not load is one `config-invalid` finding. Rejects only for options of the
/// wrong type (naming the option); never throws.
#[napi(
    ts_args_type = "input: unknown, options?: DoctorOptions",
    ts_return_type = "Promise<DoctorFinding[]>"
)]
pub fn doctor_mcp_config<'env>(
    env: &'env Env,
    input: Unknown,
    options: Option<Unknown>,
) -> Result<PromiseRaw<'env, Value>> {
    let prepared = doctor_input(env, input, options);
    env.spawn_future(async move {
        let (input, options) = prepared?;
        let findings = match input {
            Ok(input) => crate::doctor::run(&input, &options).await,
            // Not JSON at all (a function, a cycle, a BigInt): a config that does not load.
            Err(why) => vec![crate::doctor::Finding::config_invalid(why)],
        };
        serde_json::to_value(findings)
            .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))
    })
}

/// The input (or why it is not JSON) and the options, `process.env` standing in for an absent
/// `options.env`. An error here is the promise's rejection.
fn doctor_input(
    env: &Env,
    input: Unknown,
    options: Option<Unknown>,
) -> Result<(
    std::result::Result<Value, String>,
    crate::doctor::DoctorOptions,
)> {
    let invalid = |why: String| Error::new(Status::InvalidArg, format!("doctorMcpConfig: {why}"));
    let options = match options {
        None => Value::Null,
        Some(value) => super::json_from_js(env, value)
            .map_err(|e| invalid(format!("options: {}", e.reason)))?,
    };
    let mut options = crate::doctor::DoctorOptions::from_json(&options).map_err(invalid)?;
    if options.env.is_none() {
        let read = super::host_env::reader(env)?;
        if let crate::secrets::EnvSource::Fixed(vars) = super::host_env::read_now(&read) {
            options.env = Some((*vars).clone());
            options.env_is_host = true;
        }
    }
    let input = super::json_from_js(env, input).map_err(|e| e.reason.clone());
    Ok((input, options))
}
