//! Pinned tool definitions: a SHA-256 over the canonical JSON (object keys sorted, no
//! whitespace) of each field of a tool the model reads — `name`, `title`, `description`,
//! `inputSchema`, `outputSchema` — and of its `annotations`, tracked apart. Reordering tools
//! or the keys of a schema never changes a pin; any change of content does, and the fields
//! that differ can be named.

use serde_json::Value;

/// The fields a definition is made of, in the order their hashes are kept.
pub const FIELDS: [&str; 5] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
];

/// The hashes of one tool's definition (hex SHA-256 per field) and of its annotations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub fields: [String; 5],
    pub annotations: String,
}

impl Pin {
    /// The pin of a tool as the server listed it (the JSON of its `tools/list` entry).
    pub fn of(tool: &Value) -> Self {
        let field = |key: &str| hash(&canonical(tool.get(key).unwrap_or(&Value::Null)));
        Self {
            fields: FIELDS.map(field),
            annotations: field("annotations"),
        }
    }

    /// The fields of the definition that differ from `other` (empty: the same definition).
    pub fn changed_fields(&self, other: &Pin) -> Vec<&'static str> {
        FIELDS
            .iter()
            .zip(self.fields.iter().zip(&other.fields))
            .filter(|(_, (a, b))| a != b)
            .map(|(name, _)| *name)
            .collect()
    }

    /// As stored: `{ name, title, description, inputSchema, outputSchema, annotations }`.
    pub fn to_json(&self) -> Value {
        let mut map = serde_json::Map::new();
        for (name, hash) in FIELDS.iter().zip(&self.fields) {
            map.insert((*name).to_owned(), Value::from(hash.as_str()));
        }
        map.insert(
            "annotations".to_owned(),
            Value::from(self.annotations.as_str()),
        );
        Value::Object(map)
    }

    /// What [`Self::to_json`] wrote, if it is that.
    pub fn from_json(value: &Value) -> Option<Self> {
        let get = |key: &str| value.get(key)?.as_str().map(str::to_owned);
        let mut fields: [String; 5] = Default::default();
        for (slot, name) in fields.iter_mut().zip(FIELDS) {
            *slot = get(name)?;
        }
        Some(Self {
            fields,
            annotations: get("annotations")?,
        })
    }
}

/// `value` as canonical JSON: object keys sorted by their UTF-16 code units (RFC 8785's
/// order), no whitespace, strings and numbers as serde_json writes them.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn hash(text: &str) -> String {
    crate::digest::sha256_hex(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_never_changes_a_pin_and_content_always_does() {
        let a = json!({"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}}});
        let b = json!({"inputSchema": {"properties": {"b": {"type": "number"}, "a": {"type": "string"}}, "type": "object"}, "description": "d", "name": "t"});
        assert_eq!(Pin::of(&a), Pin::of(&b));
        let c = json!({"name": "t", "description": "d!", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}});
        assert_eq!(
            Pin::of(&a).changed_fields(&Pin::of(&c)),
            ["description", "inputSchema"]
        );
        let annotated = json!({"name": "t", "description": "d", "inputSchema": a["inputSchema"], "annotations": {"readOnlyHint": true}});
        let pin = Pin::of(&annotated);
        assert!(pin.changed_fields(&Pin::of(&a)).is_empty());
        assert_ne!(pin.annotations, Pin::of(&a).annotations);
        assert_eq!(Pin::from_json(&pin.to_json()), Some(pin));
    }

    #[test]
    fn canonical_json() {
        assert_eq!(
            canonical(&json!({"b": [1, {"d": null, "c": "x"}], "a": true})),
            r#"{"a":true,"b":[1,{"c":"x","d":null}]}"#
        );
    }
}
