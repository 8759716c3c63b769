//! How a user's value appears in a message (its JS type name, a bounded excerpt) and how deep
//! it nests: shared by validation and every shape reader.

use serde_json::Value;

/// Longest excerpt of a user value quoted in a message.
const MAX_QUOTED_CHARS: usize = 80;

/// What a value is, in words for a message: `null`, `a boolean`, `a number`, `a string`, `an
/// array`, `an object`.
pub(crate) fn kind_in_words(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The JavaScript-style type name used in `Expected X, received Y`.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Quotes a user-supplied string for a message, cut at [`MAX_QUOTED_CHARS`]
/// characters so a pathological input cannot produce a pathological message.
pub(crate) fn excerpt(s: &str) -> String {
    match s.char_indices().nth(MAX_QUOTED_CHARS) {
        None => s.to_owned(),
        Some((cut, _)) => format!("{}…", &s[..cut]),
    }
}

/// Renders a JSON value for a message the way a JS template literal roughly
/// would: strings raw (shortened), scalars as JSON; containers are not
/// serialised (they can be arbitrarily large or deep).
pub(crate) fn display_value(v: &Value) -> String {
    match v {
        Value::String(s) => excerpt(s),
        Value::Null | Value::Bool(_) | Value::Number(_) => v.to_string(),
        Value::Array(_) => "[array]".to_owned(),
        Value::Object(_) => "[object Object]".to_owned(),
    }
}

/// Whether `v` nests containers deeper than `limit` levels. Iterative, so it is
/// safe on any input.
pub(crate) fn deeper_than(v: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(v, 0)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(a) => Box::new(a.iter()),
            Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        if depth >= limit {
            return true;
        }
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    false
}
