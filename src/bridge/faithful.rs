//! `schemas: 'faithful'`: a tool's `inputSchema` as the model should see it, instead of the
//! original module's lossy conversion (`schema.rs`).
//!
//! The schema is kept as the server wrote it: types and type arrays, `anyOf`/`oneOf`/`allOf`,
//! `not`, `if`/`then`/`else`, `enum`/`const`, formats, descriptions, titles, defaults,
//! `additionalProperties`, `$schema`, `$anchor`, and local `$ref`s with their `$defs` (or
//! `definitions`). References are kept, not inlined: every major provider accepts local refs,
//! a recursive definition stays finite, and the JSON Schema 2020-12 preservation check of the
//! MCP conformance suite asks for `$defs` to survive. What changes:
//!
//! - a `$ref` that does not start with `#` (another document, a URL) is never fetched: it is
//!   replaced by an empty schema (anything) whose description says what was referenced;
//! - the top level is always an object schema (`{"type":"object","properties":{}}` when the
//!   server sent none or something else), as tool parameters must be;
//! - nesting deeper than [`MAX_DEPTH`] becomes an empty schema, and a schema larger than
//!   [`MAX_NODES`] values becomes an open object saying so, so a hostile schema costs the
//!   model's context nothing unbounded.

use serde_json::{Map, Value};

/// Deepest nesting kept (JSON levels, not schema levels).
pub const MAX_DEPTH: usize = 64;
/// Most JSON values kept in one schema.
pub const MAX_NODES: usize = 20_000;

/// The faithful parameters of a tool whose `inputSchema` is `input`.
pub fn faithful_schema(input: Option<&Value>) -> Value {
    let Some(Value::Object(schema)) = input else {
        return empty_object();
    };
    let mut nodes = 0usize;
    let mut out = copy_object(schema, 0, &mut nodes);
    if nodes > MAX_NODES {
        return serde_json::json!({
            "type": "object",
            "properties": {},
            "description": format!("(the server's schema is larger than {MAX_NODES} values and is not shown)"),
        });
    }
    // Tool parameters are an object.
    match out.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        None if out.contains_key("properties") => {
            out.insert("type".to_owned(), Value::from("object"));
        }
        _ => return empty_object(),
    }
    out.entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    Value::Object(out)
}

fn empty_object() -> Value {
    serde_json::json!({ "type": "object", "properties": {} })
}

fn copy_object(object: &Map<String, Value>, depth: usize, nodes: &mut usize) -> Map<String, Value> {
    let mut out = Map::with_capacity(object.len());
    for (key, value) in object {
        *nodes += 1;
        if *nodes > MAX_NODES {
            break;
        }
        if key == "$ref"
            && let Value::String(target) = value
            && !target.starts_with('#')
        {
            // Never fetched: the model gets an open schema saying what it stood for.
            out.insert(
                "description".to_owned(),
                Value::from(format!("(an external schema, not fetched: {target})")),
            );
            continue;
        }
        out.insert(key.clone(), copy_value(value, depth + 1, nodes));
    }
    out
}

fn copy_value(value: &Value, depth: usize, nodes: &mut usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Object(Map::new());
    }
    match value {
        Value::Object(object) => Value::Object(copy_object(object, depth, nodes)),
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len().min(MAX_NODES));
            for item in items {
                *nodes += 1;
                if *nodes > MAX_NODES {
                    break;
                }
                out.push(copy_value(item, depth + 1, nodes));
            }
            Value::Array(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_what_compat_drops() {
        // mcp-server-git's git_create_branch (a Pydantic Optional) and sequential-thinking.
        let git = json!({
            "type": "object",
            "properties": {
                "repo_path": {"type": "string", "title": "Repo Path"},
                "branch_name": {"type": "string"},
                "base_branch": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}
            },
            "required": ["repo_path", "branch_name"]
        });
        assert_eq!(faithful_schema(Some(&git)), git);
        let thinking = json!({
            "type": "object",
            "properties": {"nextThoughtNeeded": {"type": "boolean", "description": "Whether another thought step is needed"},
                           "thoughtNumber": {"type": "integer", "minimum": 1}},
            "required": ["nextThoughtNeeded", "thoughtNumber"],
            "additionalProperties": false
        });
        assert_eq!(faithful_schema(Some(&thinking)), thinking);
    }

    #[test]
    fn local_refs_and_defs_survive_a_cycle_stays_finite() {
        let pydantic = json!({
            "$defs": {
                "Address": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}
            },
            "type": "object",
            "properties": {"home": {"$ref": "#/$defs/Address"}, "list": {"$ref": "#/$defs/Node"}},
            "required": ["home"]
        });
        assert_eq!(faithful_schema(Some(&pydantic)), pydantic);
    }

    #[test]
    fn the_2020_12_vocabulary_survives() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"id": {"$anchor": "ident", "type": "string", "pattern": "^[a-z]+$"}},
            "properties": {
                "kind": {"enum": ["a", "b"]},
                "value": {"type": ["string", "number"]},
                "both": {"allOf": [{"minLength": 1}, {"maxLength": 5}]},
                "one": {"oneOf": [{"const": 1}, {"const": "one"}]}
            },
            "if": {"properties": {"kind": {"const": "a"}}},
            "then": {"required": ["value"]},
            "else": {"required": ["both"]},
            "additionalProperties": false
        });
        assert_eq!(faithful_schema(Some(&schema)), schema);
    }

    #[test]
    fn an_external_ref_is_never_followed() {
        let schema =
            json!({"type": "object", "properties": {"p": {"$ref": "https://example.com/s.json"}}});
        assert_eq!(
            faithful_schema(Some(&schema)),
            json!({"type": "object", "properties": {"p": {"description": "(an external schema, not fetched: https://example.com/s.json)"}}})
        );
    }

    #[test]
    fn the_top_level_is_always_an_object() {
        assert_eq!(faithful_schema(None), empty_object());
        assert_eq!(faithful_schema(Some(&json!("x"))), empty_object());
        assert_eq!(
            faithful_schema(Some(&json!({"type": "string"}))),
            empty_object()
        );
        assert_eq!(
            faithful_schema(Some(&json!({"properties": {"a": {}}}))),
            json!({"properties": {"a": {}}, "type": "object"})
        );
        assert_eq!(
            faithful_schema(Some(&json!({"type": "object"}))),
            empty_object()
        );
    }

    #[test]
    fn hostile_schemas_stay_bounded() {
        let mut deep = json!({"type": "string"});
        for _ in 0..300 {
            deep = json!({"type": "object", "properties": {"x": deep}});
        }
        let out = faithful_schema(Some(&deep));
        let text = out.to_string();
        assert!(text.len() < 10_000, "{}", text.len());
        let huge: Vec<Value> = (0..100_000).map(Value::from).collect();
        let schema = json!({"type": "object", "properties": {"e": {"enum": huge}}});
        let out = faithful_schema(Some(&schema));
        assert!(out.to_string().len() < 200_000);
    }
}
