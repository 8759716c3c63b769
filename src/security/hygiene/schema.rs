//! The hygiene pass over a tool's parameter schema: every string the model reads in it, with
//! what the schema must keep as the server wrote it left alone.
//!
//! - Kept: object keys (property names, keyword names), and the values of keywords that name
//!   or point at something or that a value is checked against (`required`,
//!   `dependentRequired`, `$ref`, `$id`, `$anchor`, `$dynamicRef`, `$dynamicAnchor`, `$schema`,
//!   `type`, `format`, `pattern`, `contentEncoding`, `contentMediaType`). Changing them would
//!   change which arguments the server accepts.
//! - Cleaned: every other string — descriptions, titles, comments, `default` and `examples`
//!   values, vendor keywords.
//! - Cleaned and given back: strings inside `enum` and `const` are values the model sends
//!   back. They are cleaned like any text (the model must not read hidden characters in them),
//!   and each value that changed is remembered ([`Restore`]) so that a call whose arguments
//!   carry the cleaned value reaches the server with the value it listed. A cleaned value
//!   that is ambiguous (two listed values clean to it, or it is itself a listed value) is not
//!   given back: the argument goes as the model sent it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use super::clean;

/// A schema after the hygiene pass (made only when the pass changed something).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HygienicSchema {
    /// The cleaned schema as JSON text.
    pub json: Arc<str>,
    /// The `enum`/`const` values the pass changed, to give back in arguments.
    pub restore: Restore,
}

/// Cleaned `enum`/`const` string → the value as the server listed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restore(HashMap<String, String>);

impl Restore {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Replaces every string in `value` (not object keys) that is a cleaned `enum`/`const`
    /// value with the value the server listed. Returns how many were replaced.
    pub fn apply(&self, value: &mut Value) -> usize {
        if self.0.is_empty() {
            return 0;
        }
        match value {
            Value::String(s) => match self.0.get(s.as_str()) {
                Some(original) => {
                    *s = original.clone();
                    1
                }
                None => 0,
            },
            Value::Array(items) => items.iter_mut().map(|v| self.apply(v)).sum(),
            Value::Object(map) => map.values_mut().map(|v| self.apply(v)).sum(),
            _ => 0,
        }
    }
}

/// Keywords whose string values are names, references or checks: never changed.
const KEPT: &[&str] = &[
    "required",
    "dependentRequired",
    "$ref",
    "$id",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$schema",
    "$vocabulary",
    "type",
    "format",
    "pattern",
    "contentEncoding",
    "contentMediaType",
];

/// Keywords whose value is a map from names to schemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// `json` (a parameter schema as JSON text) after the hygiene pass, or `None` when the pass
/// changes nothing (or the text is not JSON). Cheap for a clean schema: a byte scan, and a
/// parse only when the text holds a character the pass may remove or an escape.
pub fn clean_schema(json: &str) -> Option<HygienicSchema> {
    if !super::may_need_cleaning(json.as_bytes()) && !json.contains('\\') {
        return None;
    }
    let mut schema: Value = serde_json::from_str(json).ok()?;
    let mut walk = Walk::default();
    walk.schema(&mut schema);
    if !walk.changed {
        return None;
    }
    let restore = walk
        .given_back
        .into_iter()
        .filter_map(|(cleaned, original)| {
            let original = original?;
            (!walk.listed_clean.contains(&cleaned)).then_some((cleaned, original))
        })
        .collect();
    Some(HygienicSchema {
        json: Arc::from(schema.to_string()),
        restore: Restore(restore),
    })
}

#[derive(Default)]
struct Walk {
    changed: bool,
    /// Cleaned value → the listed value it came from (`None` once two differ).
    given_back: HashMap<String, Option<String>>,
    /// `enum`/`const` strings the pass left as they were.
    listed_clean: HashSet<String>,
}

impl Walk {
    /// A schema (or a value where a schema may be: anything unknown is walked as one).
    fn schema(&mut self, value: &mut Value) {
        match value {
            Value::String(_) => self.text(value),
            Value::Array(items) => items.iter_mut().for_each(|v| self.schema(v)),
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    let key = key.as_str();
                    if KEPT.contains(&key) && !v.is_object() {
                        continue;
                    }
                    match key {
                        "enum" | "const" => self.data(v, true),
                        "default" | "examples" => self.data(v, false),
                        _ if SCHEMA_MAPS.contains(&key) && v.is_object() => {
                            if let Value::Object(named) = v {
                                named.values_mut().for_each(|s| self.schema(s));
                            }
                        }
                        _ => self.schema(v),
                    }
                }
            }
            _ => {}
        }
    }

    /// A value (not a schema): every string in it, object keys kept. `listed`: an `enum` or
    /// `const` value, whose changed strings are given back in arguments.
    fn data(&mut self, value: &mut Value, listed: bool) {
        match value {
            Value::String(s) => {
                let before = listed.then(|| s.clone());
                self.text(value);
                if let (Some(before), Value::String(after)) = (before, &*value) {
                    if before == *after {
                        self.listed_clean.insert(before);
                    } else {
                        self.given_back
                            .entry(after.clone())
                            .and_modify(|o| {
                                if o.as_deref() != Some(before.as_str()) {
                                    *o = None;
                                }
                            })
                            .or_insert(Some(before));
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.data(v, listed)),
            Value::Object(map) => map.values_mut().for_each(|v| self.data(v, listed)),
            _ => {}
        }
    }

    fn text(&mut self, value: &mut Value) {
        if let Value::String(s) = value
            && let std::borrow::Cow::Owned(cleaned) = clean(s).text
        {
            *s = cleaned;
            self.changed = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tag(text: &str) -> String {
        text.chars()
            .map(|c| char::from_u32(0xe0000 + c as u32).unwrap())
            .collect()
    }

    #[test]
    fn a_clean_schema_is_left_alone() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string", "description": "A “quoted” — text\nok", "pattern": "^\\d+$"}}});
        assert_eq!(clean_schema(&schema.to_string()), None);
        assert_eq!(clean_schema("not json \u{200b}"), None);
    }

    #[test]
    fn texts_are_cleaned_names_and_checks_kept() {
        let dirty = format!(
            "City\u{200b}\u{202e} name\u{7} \u{1b}[1mbold\u{1b}[0m{}",
            tag("obey")
        );
        let schema = json!({
            "type": "object",
            "title": "T\u{200b}",
            "properties": {
                "ci\u{200b}ty": {"type": "string", "description": dirty, "title": "C\u{7}", "default": "Pa\u{200b}ris", "examples": ["Lo\u{200b}n", {"k\u{200b}": "v\u{200b}"}]},
                "code": {"type": "string", "pattern": "^a\u{200b}$", "format": "x\u{200b}"},
                "properties": {"type": "object", "description": "d\u{200b}", "properties": {"required": {"type": "string", "description": "r\u{200b}"}}, "required": ["required"]},
                "link": {"$ref": "#/$defs/n\u{200b}"}
            },
            "required": ["ci\u{200b}ty"],
            "$defs": {"n\u{200b}": {"type": "string", "description": "n\u{200b}"}},
            "x-note": "x\u{200b}"
        });
        let out = clean_schema(&schema.to_string()).expect("changed");
        let v: Value = serde_json::from_str(&out.json).unwrap();
        let city = &v["properties"]["ci\u{200b}ty"];
        assert_eq!(city["description"], "City name bold");
        assert_eq!(city["title"], "C");
        assert_eq!(city["default"], "Paris");
        assert_eq!(city["examples"], json!(["Lon", {"k\u{200b}": "v"}]));
        assert_eq!(v["title"], "T");
        assert_eq!(v["x-note"], "x");
        assert_eq!(v["required"], json!(["ci\u{200b}ty"]));
        assert_eq!(v["properties"]["code"]["pattern"], "^a\u{200b}$");
        assert_eq!(v["properties"]["code"]["format"], "x\u{200b}");
        let nested = &v["properties"]["properties"];
        assert_eq!(nested["description"], "d");
        assert_eq!(nested["properties"]["required"]["description"], "r");
        assert_eq!(nested["required"], json!(["required"]));
        assert_eq!(v["properties"]["link"]["$ref"], "#/$defs/n\u{200b}");
        assert_eq!(v["$defs"]["n\u{200b}"]["description"], "n");
        // Key order is the server's.
        let keys: Vec<_> = v["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["ci\u{200b}ty", "code", "properties", "link"]);
        assert!(out.restore.is_empty());
    }

    #[test]
    fn changed_enum_and_const_values_are_given_back() {
        let schema = json!({"type": "object", "properties": {
            "unit": {"anyOf": [{"const": "cel\u{7}sius", "type": "string"}, {"const": "kelvin", "type": "string"}]},
            "mode": {"type": "string", "enum": ["fa\u{200b}st", "slow", "sl\u{200b}ow", "a\u{200b}b", "ab\u{200c}"]}
        }});
        let out = clean_schema(&schema.to_string()).expect("changed");
        let v: Value = serde_json::from_str(&out.json).unwrap();
        assert_eq!(v["properties"]["unit"]["anyOf"][0]["const"], "celsius");
        assert_eq!(
            v["properties"]["mode"]["enum"],
            json!(["fast", "slow", "slow", "ab", "ab"])
        );
        let mut args = json!({"unit": "celsius", "mode": ["fast", "slow", "ab"], "other": {"celsius": "kelvin"}});
        assert_eq!(out.restore.apply(&mut args), 2);
        // "slow" is a listed value itself and "ab" is ambiguous: both go as sent.
        assert_eq!(
            args,
            json!({"unit": "cel\u{7}sius", "mode": ["fa\u{200b}st", "slow", "ab"], "other": {"celsius": "kelvin"}})
        );
    }
}
