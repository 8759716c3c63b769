//! The Node.js binding: converts between JS values and the core's types and holds no logic of
//! its own. Nothing in it may panic into JS: closures called from JS catch unwinds, and futures
//! handed to JS are built so a failure becomes a value, never a crash.

mod functions;
mod host_env;
mod logger;
mod manager;
mod settle;
mod text;
mod tool;

use ::napi::bindgen_prelude::{
    Env, Error, Function, JsObjectValue, Object, Result, Status, Unknown, ValueType,
};

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
