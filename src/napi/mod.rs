//! The Node.js binding: converts between JS values and the core's types and holds no logic of
//! its own. Nothing in it may panic into JS: closures called from JS catch unwinds, and futures
//! handed to JS are built so a failure becomes a value, never a crash.

mod functions;
mod logger;
mod manager;
mod text;
mod tool;

use ::napi::bindgen_prelude::{Env, Error, Result, Status, Unknown, ValueType};

/// A JS value as JSON; `undefined` becomes `null` so validators report it instead of napi
/// throwing a conversion error. What JSON cannot hold (functions, symbols, BigInt) is a clear
/// error.
fn json_from_js(env: &Env, value: Unknown) -> Result<serde_json::Value> {
    match value.get_type()? {
        ValueType::Undefined | ValueType::Null => Ok(serde_json::Value::Null),
        _ => env.from_js_value(value).map_err(|e| {
            Error::new(
                Status::InvalidArg,
                format!("expected a JSON-compatible value: {}", e.reason),
            )
        }),
    }
}
