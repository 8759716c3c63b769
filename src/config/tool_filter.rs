//! The `toolFilter { include?: string[], exclude?: string[] }` server field of
//! our own `McpConfig` (strict: unknown keys rejected). Matching lives in
//! [`crate::policy::ToolFilter`].

use serde_json::Value;

use super::values::{excerpt, type_name};
use crate::policy::ToolFilter;

fn string_list(path: &str, v: &Value, issues: &mut Vec<String>) -> Vec<String> {
    let Value::Array(items) = v else {
        issues.push(format!("{path}: Expected array, received {}", type_name(v)));
        return Vec::new();
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::String(s) => out.push(s.clone()),
            other => issues.push(format!(
                "{path}.{i}: Expected string, received {}",
                type_name(other)
            )),
        }
    }
    out
}

/// Checks a `toolFilter` value at `path`; the issues are `<path>: <message>`
/// strings in input order.
pub(crate) fn parse_tool_filter(path: &str, v: &Value) -> Result<ToolFilter, Vec<String>> {
    let Value::Object(obj) = v else {
        return Err(vec![format!(
            "{path}: Expected object, received {}",
            type_name(v)
        )]);
    };
    let mut issues = Vec::new();
    let mut filter = ToolFilter::default();
    for (key, val) in obj {
        match key.as_str() {
            "include" => filter.include = string_list(&format!("{path}.include"), val, &mut issues),
            "exclude" => filter.exclude = string_list(&format!("{path}.exclude"), val, &mut issues),
            other => issues.push(format!("{path}: Unrecognized key '{}'", excerpt(other))),
        }
    }
    if issues.is_empty() {
        Ok(filter)
    } else {
        Err(issues)
    }
}
