//! SEP-2243 (2026-07-28): a tool parameter annotated `x-mcp-header: "Name"` is mirrored into
//! an `Mcp-Param-Name` request header. rmcp's Streamable HTTP worker does the mirroring and
//! drops a tool whose annotations break the rules, saying so only to `tracing`; this check
//! names those tools for the user's log.

use serde_json::Value;

/// Why the `x-mcp-header` annotations of `input_schema` are invalid, if they are: each must be
/// a non-empty HTTP token, unique regardless of case, on a `string`, `integer` or `boolean`
/// property reached from the root through `properties` alone.
pub fn invalid_annotations(input_schema: &serde_json::Map<String, Value>) -> Option<String> {
    if input_schema.contains_key("x-mcp-header") {
        return Some("x-mcp-header on the schema itself, not on a property".to_owned());
    }
    let mut seen = std::collections::HashSet::new();
    let mut problem = None;
    walk_properties(input_schema, &mut Vec::new(), &mut |path, property| {
        if problem.is_some() {
            return;
        }
        let Some(header) = property.get("x-mcp-header") else {
            return;
        };
        let at = path.join(".");
        problem = match header.as_str() {
            None => Some(format!("'{at}': x-mcp-header is not a string")),
            Some("") => Some(format!("'{at}': x-mcp-header is empty")),
            Some(h) if !h.chars().all(is_token_char) => {
                Some(format!("'{at}': x-mcp-header is not an HTTP token"))
            }
            Some(h) if !seen.insert(h.to_ascii_lowercase()) => {
                Some(format!("'{at}': x-mcp-header '{h}' appears twice"))
            }
            Some(_) => match property.get("type").and_then(Value::as_str) {
                Some("string" | "integer" | "boolean") => None,
                _ => Some(format!(
                    "'{at}': x-mcp-header on a property that is not a string, integer or boolean"
                )),
            },
        };
    });
    problem.or_else(|| {
        elsewhere(&Value::Object(input_schema.clone()), true)
            .then(|| "x-mcp-header outside the properties of the schema".to_owned())
    })
}

fn walk_properties<'a>(
    schema: &'a serde_json::Map<String, Value>,
    path: &mut Vec<&'a str>,
    visit: &mut dyn FnMut(&[&str], &serde_json::Map<String, Value>),
) {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return;
    };
    for (name, property) in properties {
        let Value::Object(property) = property else {
            continue;
        };
        path.push(name);
        visit(path, property);
        walk_properties(property, path, visit);
        path.pop();
    }
}

/// Whether an annotation sits anywhere but on a `properties` chain from the root.
fn elsewhere(value: &Value, on_chain: bool) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(key, v)| match key.as_str() {
            "x-mcp-header" => !on_chain,
            "properties" => v
                .as_object()
                .is_some_and(|m| m.values().any(|p| elsewhere(p, on_chain))),
            "default" | "const" | "enum" | "examples" => false,
            _ => elsewhere(v, false),
        }),
        Value::Array(items) => items.iter().any(|v| elsewhere(v, false)),
        _ => false,
    }
}

/// RFC 9110 `tchar`.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

#[cfg(test)]
mod tests {
    use super::invalid_annotations;
    use serde_json::json;

    fn check(schema: serde_json::Value) -> Option<String> {
        invalid_annotations(schema.as_object().unwrap())
    }

    #[test]
    fn valid_and_invalid() {
        let ok = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "n":{"type":"integer","x-mcp-header":"N"},
            "deep":{"type":"object","properties":{"b":{"type":"boolean","x-mcp-header":"B"}}}}});
        assert_eq!(check(ok), None);
        for bad in [
            json!({"x-mcp-header":"Root","type":"object"}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":""}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":"has space"}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":"Ünï"}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":"a:b"}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":7}}}),
            json!({"properties":{"a":{"type":"number","x-mcp-header":"N"}}}),
            json!({"properties":{"a":{"type":"object","x-mcp-header":"O"}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}),
            json!({"properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"I"}}}}),
        ] {
            assert!(check(bad.clone()).is_some(), "{bad}");
        }
    }
}
