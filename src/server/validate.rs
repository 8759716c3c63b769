//! The checks of served tools: a definition as a host gives it (name, schemas), and a call's
//! arguments against the tool's `inputSchema` (JSON Schema through `bridge::json_check`, never
//! fetching a remote `$ref`; each schema compiled once).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::Tool;
use serde_json::{Map, Value};

use super::provider::JsonObject;
use crate::bridge::json_check;

/// The longest tool name (MCP 2025-11-25, "Tool names").
pub const MAX_TOOL_NAME: usize = 128;

/// Why `name` breaks MCP's tool-name rules (1–128 characters of `A-Z a-z 0-9 _ - .`), if it does.
pub fn tool_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("must not be empty".to_owned());
    }
    let length = name.chars().count();
    if length > MAX_TOOL_NAME {
        return Some(format!(
            "is {length} characters long; at most {MAX_TOOL_NAME} are allowed"
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Some(format!(
            "contains {bad:?}; only A-Z, a-z, 0-9, '_', '-' and '.' are allowed"
        ));
    }
    None
}

const DEFINITION_KEYS: [&str; 8] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
    "_meta",
];

/// A tool definition `{ name, title?, description?, inputSchema, outputSchema?, annotations?,
/// icons?, _meta? }` read into a [`Tool`]; an error names the field (`name`, `inputSchema`, …)
/// first, then what is wrong with it.
pub fn tool_definition(value: Value) -> Result<Tool, (String, String)> {
    let Value::Object(fields) = value else {
        return Err(("definition".into(), "must be an object".into()));
    };
    if let Some(unknown) = fields
        .keys()
        .find(|k| !DEFINITION_KEYS.contains(&k.as_str()))
    {
        return Err((
            unknown.clone(),
            format!(
                "is not a field of a tool definition ({}, handler, timeoutMs)",
                DEFINITION_KEYS.join(", ")
            ),
        ));
    }
    match fields.get("name") {
        Some(Value::String(name)) => {
            if let Some(problem) = tool_name_problem(name) {
                return Err(("name".into(), problem));
            }
        }
        _ => return Err(("name".into(), "must be a string".into())),
    }
    for key in ["title", "description"] {
        if !matches!(fields.get(key), None | Some(Value::Null | Value::String(_))) {
            return Err((key.into(), "must be a string".into()));
        }
    }
    for key in ["inputSchema", "outputSchema"] {
        match fields.get(key) {
            None | Some(Value::Null) if key == "outputSchema" => {}
            Some(schema @ Value::Object(object)) => {
                if object.get("type") != Some(&Value::from("object")) {
                    return Err((key.into(), "must have type: 'object'".into()));
                }
                json_check::compile(schema).map_err(|e| (key.to_owned(), e))?;
            }
            _ => {
                return Err((
                    key.into(),
                    "must be a JSON Schema object with type: 'object'".into(),
                ));
            }
        }
    }
    if !matches!(
        fields.get("annotations"),
        None | Some(Value::Null | Value::Object(_))
    ) {
        return Err(("annotations".into(), "must be an object".into()));
    }
    let fields: Map<String, Value> = fields.into_iter().filter(|(_, v)| !v.is_null()).collect();
    serde_json::from_value(Value::Object(fields)).map_err(|e| {
        let text = e.to_string();
        let field = DEFINITION_KEYS
            .iter()
            .find(|k| text.contains(*k))
            .unwrap_or(&"definition");
        ((*field).to_owned(), text)
    })
}

/// Compiled `inputSchema`s by tool name, made again when a tool's schema changes.
#[derive(Default)]
pub struct InputSchemas {
    compiled: Mutex<HashMap<String, (Arc<JsonObject>, Arc<jsonschema::Validator>)>>,
}

impl InputSchemas {
    /// Where `args` first breaks `tool`'s `inputSchema` (`at /path: what`), if it does.
    pub fn problem(&self, tool: &Tool, args: &JsonObject) -> Option<String> {
        let validator = match self.validator(tool) {
            Ok(validator) => validator,
            Err(e) => return Some(format!("the tool's inputSchema cannot be used: {e}")),
        };
        // A borrowed object is not a `Value`; the arguments are small next to the call.
        json_check::first_error_with(&validator, &Value::Object(args.clone()))
    }

    fn validator(&self, tool: &Tool) -> Result<Arc<jsonschema::Validator>, String> {
        let mut compiled = self.compiled.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((schema, validator)) = compiled.get(tool.name.as_ref())
            && (Arc::ptr_eq(schema, &tool.input_schema) || **schema == *tool.input_schema)
        {
            return Ok(validator.clone());
        }
        let validator = Arc::new(json_check::compile(&Value::Object(
            (*tool.input_schema).clone(),
        ))?);
        compiled.insert(
            tool.name.to_string(),
            (tool.input_schema.clone(), validator.clone()),
        );
        Ok(validator)
    }

    /// Forgets a removed tool's schema.
    pub fn forget(&self, name: &str) {
        self.compiled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_names_follow_the_spec() {
        for good in ["echo", "a.b-c_D9", &"x".repeat(128)] {
            assert_eq!(tool_name_problem(good), None, "{good}");
        }
        assert!(tool_name_problem("").unwrap().contains("empty"));
        assert!(tool_name_problem(&"x".repeat(129)).unwrap().contains("129"));
        assert!(tool_name_problem("a b").unwrap().contains("' '"));
        assert!(tool_name_problem("a,b").unwrap().contains("','"));
        assert!(tool_name_problem("é").is_some());
    }

    #[test]
    fn definitions_are_read_and_faults_named() {
        let tool = tool_definition(json!({
            "name": "echo", "description": "Echoes", "title": null,
            "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } } },
            "annotations": { "readOnlyHint": true },
        }))
        .unwrap();
        assert_eq!(tool.name, "echo");
        assert_eq!(tool.annotations.unwrap().read_only_hint, Some(true));
        for (definition, field) in [
            (json!([]), "definition"),
            (json!({ "inputSchema": { "type": "object" } }), "name"),
            (
                json!({ "name": "a b", "inputSchema": { "type": "object" } }),
                "name",
            ),
            (json!({ "name": "a" }), "inputSchema"),
            (
                json!({ "name": "a", "inputSchema": { "type": "string" } }),
                "inputSchema",
            ),
            (
                json!({ "name": "a", "inputSchema": { "type": "object", "properties": 3 } }),
                "inputSchema",
            ),
            (
                json!({ "name": "a", "inputSchema": { "type": "object" }, "outputSchema": true }),
                "outputSchema",
            ),
            (
                json!({ "name": "a", "inputSchema": { "type": "object" }, "description": 1 }),
                "description",
            ),
            (
                json!({ "name": "a", "inputSchema": { "type": "object" }, "annotations": "x" }),
                "annotations",
            ),
            (
                json!({ "name": "a", "inputSchema": { "type": "object" }, "inputschema": {} }),
                "inputschema",
            ),
        ] {
            let (named, why) = tool_definition(definition.clone()).unwrap_err();
            assert_eq!(named, field, "{definition}: {why}");
        }
    }

    #[test]
    fn arguments_are_checked_against_the_schema() {
        let tool = tool_definition(json!({
            "name": "add",
            "inputSchema": {
                "type": "object",
                "properties": { "a": { "type": "number" } },
                "required": ["a"],
            },
        }))
        .unwrap();
        let schemas = InputSchemas::default();
        let args = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(schemas.problem(&tool, &args(json!({ "a": 1 }))), None);
        let e = schemas.problem(&tool, &args(json!({ "a": "x" }))).unwrap();
        assert!(e.starts_with("at /a: "), "{e}");
        let e = schemas.problem(&tool, &args(json!({}))).unwrap();
        assert!(e.contains("\"a\" is a required property"), "{e}");
        // A remote $ref is never fetched: the schema is unusable instead.
        let remote = tool_definition(json!({
            "name": "r", "inputSchema": { "type": "object", "$ref": "http://127.0.0.1:9/s.json" },
        }));
        assert_eq!(remote.unwrap_err().0, "inputSchema");
    }
}
