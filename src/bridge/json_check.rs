//! JSON values checked against the JSON Schemas servers send (a result's `structuredContent`
//! against its tool's `outputSchema`), with the `jsonschema` crate: every draft, and no
//! network or file access, so a `$ref` outside the schema is never fetched (it fails instead).

use serde_json::Value;

/// The first place `value` breaks `schema`, as `at <JSON pointer>: <what>` (`at /` for the
/// value itself); `None` when it conforms.
pub fn first_error(schema: &Value, value: &Value) -> Option<String> {
    first_failure(schema, value).map(|(path, what)| match path {
        Some(path) => format!("at {path}: {what}"),
        None => what,
    })
}

/// Where `value` first breaks `schema`, as `at <JSON pointer>`, without saying what the value
/// there was (for answers that should not repeat what a user typed); `None` when it conforms.
pub fn first_error_place(schema: &Value, value: &Value) -> Option<String> {
    first_failure(schema, value).map(|(path, what)| match path {
        Some(path) => format!("at {path}"),
        None => what,
    })
}

/// The JSON pointer of the first failure (`None` when the schema itself is unusable) and the
/// validator's message.
fn first_failure(schema: &Value, value: &Value) -> Option<(Option<String>, String)> {
    let validator = match jsonschema::validator_for(schema) {
        Ok(validator) => validator,
        Err(error) => return Some((None, format!("the schema cannot be used: {error}"))),
    };
    first_failure_with(&validator, value)
}

/// [`first_error`] with a compiled validator (one made once and used for many values).
pub fn first_error_with(validator: &jsonschema::Validator, value: &Value) -> Option<String> {
    first_failure_with(validator, value).map(|(path, what)| match path {
        Some(path) => format!("at {path}: {what}"),
        None => what,
    })
}

/// A validator for `schema` (no remote `$ref` is ever fetched), or why the schema is unusable.
pub fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::validator_for(schema).map_err(|e| format!("the schema cannot be used: {e}"))
}

fn first_failure_with(
    validator: &jsonschema::Validator,
    value: &Value,
) -> Option<(Option<String>, String)> {
    let error = validator.iter_errors(value).next()?;
    let path = error.instance_path().to_string();
    let path = if path.is_empty() {
        "/".to_owned()
    } else {
        path
    };
    Some((Some(path), error.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_first_failing_path() {
        let schema = json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"type": "integer"}}},
            "required": ["items"]
        });
        assert_eq!(first_error(&schema, &json!({"items": [1, 2]})), None);
        let e = first_error(&schema, &json!({"items": [1, "x"]})).unwrap();
        assert!(e.starts_with("at /items/1: "), "{e}");
        let e = first_error(&schema, &json!({})).unwrap();
        assert!(e.starts_with("at /: ") && e.contains("items"), "{e}");
    }

    #[test]
    fn a_remote_ref_is_never_fetched() {
        let schema = json!({"$ref": "http://127.0.0.1:9/schema.json"});
        let e = first_error(&schema, &json!(1)).unwrap();
        assert!(e.starts_with("the schema cannot be used"), "{e}");
    }
}
