//! The Node.js binding: converts between JS values and the core's types and holds no logic of
//! its own. Nothing in it may panic into JS: closures called from JS catch unwinds, and futures
//! handed to JS are built so a failure becomes a value, never a crash.

mod catalog;
mod client_requests;
mod env_teardown;
mod events;
mod execute_js;
mod functions;
mod gateway;
mod hooks;
mod host_env;
mod logger;
mod manager;
mod metrics;
mod oauth;
#[cfg(unix)]
mod output_poll;
mod pin_store;
mod result_shape;
mod server_host;
mod settle;
mod text;
mod tool;
mod view;

use ::napi::bindgen_prelude::{
    Env, Error, Function, JsObjectValue, Object, Result, Status, Unknown, ValueType,
};

/// The addon's tokio runtime ([`crate::runtime`]), handed to napi-rs when the addon is loaded
/// (it would otherwise make one with a worker per core). If it cannot be built, napi-rs's own
/// is used.
#[napi_derive::module_init]
fn init() {
    if let Ok(runtime) = crate::runtime::build() {
        ::napi::bindgen_prelude::create_custom_tokio_runtime(runtime);
    }
}

/// A JS value as JSON, serialised by V8's `JSON.stringify` (so `toJSON` applies and `undefined`
/// members are dropped, as anywhere else in JS); `undefined` itself becomes `null` so validators
/// report it. A cycle or a BigInt is V8's TypeError, a clear error instead of a crash.
fn json_from_js(env: &Env, value: Unknown) -> Result<serde_json::Value> {
    match value.get_type()? {
        ValueType::Undefined | ValueType::Null => Ok(serde_json::Value::Null),
        _ => {
            let invalid = |why: String| {
                Error::new(
                    Status::InvalidArg,
                    format!("expected a JSON-compatible value: {why}"),
                )
            };
            let text = json_text(env, value)
                .map_err(|e| invalid(e.reason))?
                .ok_or_else(|| invalid("JSON.stringify gave undefined".to_owned()))?;
            serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))
        }
    }
}

/// `JSON.stringify(value)`; `None` where JSON has no text for it (a function, a symbol).
fn json_text(env: &Env, value: Unknown) -> Result<Option<String>> {
    let json: Object = env.get_global()?.get_named_property("JSON")?;
    let stringify: Function<Unknown, Option<String>> = json.get_named_property("stringify")?;
    stringify.call(value)
}

/// `typeof` as a message says it (`null` apart from other objects).
fn type_name(value: &Unknown) -> &'static str {
    match value.get_type() {
        Ok(ValueType::Undefined) => "undefined",
        Ok(ValueType::Null) => "null",
        Ok(ValueType::Boolean) => "a boolean",
        Ok(ValueType::Number) => "a number",
        Ok(ValueType::String) => "a string",
        Ok(ValueType::Symbol) => "a symbol",
        Ok(ValueType::Object) => "an object",
        Ok(ValueType::Function) => "a function",
        Ok(ValueType::BigInt) => "a bigint",
        _ => "a value of another kind",
    }
}

/// An argument that must be a string; anything else is an error naming the function, the
/// argument and what it got (napi's own conversion error has an empty message).
fn string_arg<'env>(
    function: &str,
    name: &str,
    value: Unknown<'env>,
) -> Result<::napi::JsString<'env>> {
    if value.get_type()? == ValueType::String {
        return unsafe { value.cast() };
    }
    Err(Error::new(
        Status::InvalidArg,
        format!(
            "{function}: {name} must be a string, got {}",
            type_name(&value)
        ),
    ))
}

/// An optional string argument: `undefined` and `null` are absent.
fn optional_string_arg(
    function: &str,
    name: &str,
    value: Option<Unknown>,
) -> Result<Option<String>> {
    match value {
        Some(value) if !matches!(value.get_type()?, ValueType::Undefined | ValueType::Null) => {
            let text = string_arg(function, name, value)?;
            Ok(Some(text::rust_string(text)?.0))
        }
        _ => Ok(None),
    }
}
