//! PR #21530's `convertMcpSchema`: an MCP tool's `inputSchema` (JSON Schema) to
//! the agent's parameter schema, reproduced byte for byte as the TypeBox-built
//! result serialises with `JSON.stringify`.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::js_semantics::{JsEntries, clone_js, truthy, type_of};

/// Deepest schema node that is converted. The root object is level 0; every
/// step through `properties` or `items` adds one level. A node at a deeper level
/// converts to `{}` (accept anything, no description), so conversion recursion
/// is bounded whatever the input.
pub const MAX_DEPTH: usize = 64;

/// Above this many names a `required` array is looked up through a hash set
/// instead of a linear scan (keeps pathological schemas linear).
const LINEAR_REQUIRED_MAX: usize = 16;

/// PR #21530's `convertMcpSchema`. `None` = no `inputSchema` (same as `null` /
/// `undefined` in JS).
///
/// Output is byte-identical (with `serde_json` `preserve_order`) to
/// `JSON.stringify(convertMcpSchema(input))` for every input on which the
/// original did not throw and whose nesting is at most [`MAX_DEPTH`]; see
/// `tests/fixtures/vectors/schema-conversion.pr21530.json`. Among the reproduced
/// quirks: array-index-like property names enumerate first in ascending order,
/// `required` is rebuilt in property order (deduplicated, unknown names and
/// non-strings dropped, a string `required` acts as the set of its characters),
/// a `__proto__` property vanishes, `integer` becomes `number`, a one-value
/// string `enum` collapses to a bare literal, and any truthy `description` is
/// copied after the other keys.
///
/// Never panics. Leniencies where the original differs:
/// - a `null` property value (anywhere: root, nested, inside `items`) converts
///   like an unsupported property, `{}`; JS threw `TypeError: Cannot read
///   properties of null (reading 'description')`;
/// - a non-iterable `required` (number, boolean, object) is ignored; JS threw
///   `TypeError: … is not iterable`;
/// - a node nested deeper than [`MAX_DEPTH`] levels converts to `{}`; JS
///   recursed until its stack overflowed (`RangeError`) at some thousands of levels;
/// - numbers inside copied `description` / `enum` values: integral floats within
///   ±2^53 print as integers like JS (`1.0` → `1`), but integers beyond 2^53 keep
///   their exact value (JS would round them) and other floats use `serde_json`'s
///   formatting.
#[must_use]
pub fn convert_schema(input: Option<&Value>) -> Value {
    match input {
        Some(Value::Object(root)) if root.get("type").and_then(Value::as_str) == Some("object") => {
            // The root enumerates whatever `properties` holds (`?? {}`): a falsy or
            // non-enumerable value simply yields no properties. The root's own
            // `description`/`title` are dropped.
            Value::Object(object_schema(
                root.get("properties"),
                root.get("required"),
                0,
            ))
        }
        _ => {
            let mut out = Map::with_capacity(2);
            out.insert("type".into(), Value::String("object".into()));
            out.insert("properties".into(), Value::Object(Map::new()));
            Value::Object(out)
        }
    }
}

/// The names a JS `new Set(required ?? [])` would hold, without building the set
/// when a scan is cheap.
enum Required<'a> {
    None,
    /// Array with few entries: linear scan; only string elements can match.
    Few(&'a [Value]),
    Many(HashSet<&'a str>),
    /// A string iterates by code point, so it is the set of its characters.
    Chars(&'a str),
    ManyChars(HashSet<char>),
}

impl<'a> Required<'a> {
    fn new(v: Option<&'a Value>) -> Self {
        match v {
            Some(Value::Array(a)) if a.len() <= LINEAR_REQUIRED_MAX => Required::Few(a),
            Some(Value::Array(a)) => Required::Many(a.iter().filter_map(Value::as_str).collect()),
            Some(Value::String(s)) if s.len() <= LINEAR_REQUIRED_MAX => Required::Chars(s),
            Some(Value::String(s)) => Required::ManyChars(s.chars().collect()),
            // null / missing: `?? []`. Number, boolean, object: JS throws; ignored.
            _ => Required::None,
        }
    }

    fn contains(&self, key: &str) -> bool {
        let single_char = || {
            let mut it = key.chars();
            match (it.next(), it.next()) {
                (Some(c), None) => Some(c),
                _ => None,
            }
        };
        match self {
            Required::None => false,
            Required::Few(a) => a.iter().any(|v| v.as_str() == Some(key)),
            Required::Many(set) => set.contains(key),
            Required::Chars(s) => single_char().is_some_and(|c| s.contains(c)),
            Required::ManyChars(set) => single_char().is_some_and(|c| set.contains(&c)),
        }
    }
}

/// `{"type":"object", "required"?: [...], "properties": {...}}` for an object
/// node at `depth` whose properties are enumerated as `Object.entries` would.
fn object_schema(
    properties: Option<&Value>,
    required: Option<&Value>,
    depth: usize,
) -> Map<String, Value> {
    let required = Required::new(required);
    let mut names: Vec<Value> = Vec::new();
    let child = depth + 1;

    let props = match properties {
        Some(Value::Object(m)) => {
            let mut out = Map::with_capacity(m.len());
            for (key, value) in JsEntries::new(m) {
                // Assigning `obj["__proto__"] = schema` sets the prototype instead
                // of an own property, so the property vanishes (and so does its
                // `required` entry).
                if key == "__proto__" {
                    continue;
                }
                if required.contains(key) {
                    names.push(Value::String(key.clone()));
                }
                out.insert(key.clone(), convert_property(value, child));
            }
            out
        }
        // `Object.entries(array)`: index keys in order.
        Some(Value::Array(a)) => {
            let mut out = Map::with_capacity(a.len());
            for (i, value) in a.iter().enumerate() {
                let key = i.to_string();
                if required.contains(&key) {
                    names.push(Value::String(key.clone()));
                }
                out.insert(key, convert_property(value, child));
            }
            out
        }
        // `Object.entries(string)`: one entry per UTF-16 unit, each value a
        // one-unit string, which converts to `{}`.
        Some(Value::String(s)) => {
            let n = s.encode_utf16().count();
            let mut out = Map::with_capacity(n);
            for i in 0..n {
                let key = i.to_string();
                if required.contains(&key) {
                    names.push(Value::String(key.clone()));
                }
                out.insert(key, Value::Object(Map::new()));
            }
            out
        }
        // Numbers, booleans, null, missing: no own enumerable properties.
        _ => Map::new(),
    };

    let mut out = Map::with_capacity(4);
    out.insert("type".into(), Value::String("object".into()));
    if !names.is_empty() {
        out.insert("required".into(), Value::Array(names));
    }
    out.insert("properties".into(), Value::Object(props));
    out
}

/// `Type.Record(Type.String(), Type.Unknown())`.
fn record_schema() -> Map<String, Value> {
    let mut pattern = Map::with_capacity(1);
    pattern.insert("^(.*)$".into(), Value::Object(Map::new()));
    let mut out = Map::with_capacity(3);
    out.insert("type".into(), Value::String("object".into()));
    out.insert("patternProperties".into(), Value::Object(pattern));
    out
}

fn type_only(t: &str) -> Map<String, Value> {
    let mut out = Map::with_capacity(2);
    out.insert("type".into(), Value::String(t.into()));
    out
}

/// `Type.Literal(v)`: `{"const": v, "type": typeof v}`.
fn literal(v: &Value) -> Map<String, Value> {
    let mut out = Map::with_capacity(3);
    out.insert("const".into(), clone_js(v));
    out.insert("type".into(), Value::String(type_of(v).into()));
    out
}

/// `Type.Union(values.map(Type.Literal))`: `{"not":{}}` when empty, the bare
/// literal for one value, `{"anyOf":[...]}` otherwise.
fn enum_schema(values: &[Value]) -> Map<String, Value> {
    match values {
        [] => {
            let mut out = Map::with_capacity(2);
            out.insert("not".into(), Value::Object(Map::new()));
            out
        }
        [one] => literal(one),
        many => {
            let lits = many.iter().map(|v| Value::Object(literal(v))).collect();
            let mut out = Map::with_capacity(2);
            out.insert("anyOf".into(), Value::Array(lits));
            out
        }
    }
}

/// One property (or `items`) schema at `depth`.
fn convert_property(prop: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Object(Map::new());
    }
    // Primitives and arrays have no `type`/`description` of their own: `{}`.
    // `null` made JS throw; leniently it converts to `{}` as well.
    let Value::Object(p) = prop else {
        return Value::Object(Map::new());
    };

    let mut out = match p.get("type").and_then(Value::as_str) {
        Some("string") => match p.get("enum") {
            Some(Value::Array(values)) => enum_schema(values),
            _ => type_only("string"),
        },
        Some("number" | "integer") => type_only("number"),
        Some("boolean") => type_only("boolean"),
        Some("array") => {
            let items = match p.get("items") {
                Some(items) if truthy(items) => convert_property(items, depth + 1),
                _ => Value::Object(Map::new()),
            };
            let mut out = Map::with_capacity(3);
            out.insert("type".into(), Value::String("array".into()));
            out.insert("items".into(), items);
            out
        }
        Some("object") => match p.get("properties") {
            Some(props) if truthy(props) => object_schema(Some(props), p.get("required"), depth),
            _ => record_schema(),
        },
        _ => Map::new(),
    };

    if let Some(description) = p.get("description").filter(|d| truthy(d)) {
        out.insert("description".into(), clone_js(description));
    }
    Value::Object(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// Drops a value of any depth without recursion (serde_json's own `Drop` is
    /// recursive and would overflow the test thread's stack at 100k levels).
    /// Builds an object by moving the values in (`json!` would deep-copy an
    /// interpolated value recursively).
    pub(crate) fn object(entries: impl IntoIterator<Item = (&'static str, Value)>) -> Value {
        Value::Object(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }

    pub(crate) fn drop_deep(v: Value) {
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            match v {
                Value::Array(a) => stack.extend(a),
                Value::Object(m) => stack.extend(m.into_iter().map(|(_, v)| v)),
                _ => {}
            }
        }
    }

    fn conv(s: &str) -> String {
        let v: Value = serde_json::from_str(s).unwrap();
        serde_json::to_string(&convert_schema(Some(&v))).unwrap()
    }

    fn obj(props: &str) -> String {
        format!(r#"{{"type":"object","properties":{props}}}"#)
    }

    #[test]
    fn root_fallbacks() {
        let empty = r#"{"type":"object","properties":{}}"#;
        assert_eq!(serde_json::to_string(&convert_schema(None)).unwrap(), empty);
        for s in [
            "null",
            "{}",
            "[]",
            r#""object""#,
            "0",
            "true",
            r#"{"type":"Object"}"#,
            r#"{"type":["object"]}"#,
        ] {
            assert_eq!(conv(s), empty, "{s}");
        }
        assert_eq!(conv(r#"{"type":"object","properties":null}"#), empty);
    }

    #[test]
    fn integer_like_keys_are_reordered_like_js() {
        let out = conv(
            r#"{"type":"object","properties":{"b":{},"10":{},"a":{},"2":{},"01":{},"-1":{},
                "4294967294":{},"4294967295":{},"1.5":{},"0":{}},"required":["a","10","0","-1","01"]}"#,
        );
        assert_eq!(
            out,
            r#"{"type":"object","required":["0","10","a","01","-1"],"properties":{"0":{},"2":{},"10":{},"4294967294":{},"b":{},"a":{},"01":{},"-1":{},"4294967295":{},"1.5":{}}}"#
        );
    }

    #[test]
    fn required_follows_property_order_and_dedupes() {
        assert_eq!(
            conv(
                r#"{"type":"object","properties":{"a":{},"b":{},"c":{}},"required":["c","a","c","zzz",1,null]}"#
            ),
            r#"{"type":"object","required":["a","c"],"properties":{"a":{},"b":{},"c":{}}}"#
        );
    }

    #[test]
    fn required_many_uses_same_semantics() {
        let names: Vec<String> = (0..40).map(|i| format!("p{i}")).collect();
        let props: Map<String, Value> = names.iter().map(|n| (n.clone(), json!({}))).collect();
        let mut req: Vec<Value> = names.iter().rev().step_by(3).map(|n| json!(n)).collect();
        req.push(json!(7));
        req.push(json!("p0"));
        let input = json!({"type":"object","properties":props,"required":req});
        let out = convert_schema(Some(&input));
        let want: Vec<&str> = names
            .iter()
            .filter(|n| req.iter().any(|r| r.as_str() == Some(n.as_str())))
            .map(String::as_str)
            .collect();
        let got: Vec<&str> = out["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn required_string_is_a_character_set() {
        assert_eq!(
            conv(
                r#"{"type":"object","properties":{"name":{},"n":{},"a":{},"x":{},"😀":{}},"required":"name😀"}"#
            ),
            r#"{"type":"object","required":["n","a","😀"],"properties":{"name":{},"n":{},"a":{},"x":{},"😀":{}}}"#
        );
        // Long string goes through the hash-set path with identical results.
        let long = format!("{}ab", "z".repeat(40));
        let input =
            json!({"type":"object","properties":{"a":{},"ab":{},"b":{},"c":{}},"required":long});
        assert_eq!(
            serde_json::to_string(&convert_schema(Some(&input))).unwrap(),
            r#"{"type":"object","required":["a","b"],"properties":{"a":{},"ab":{},"b":{},"c":{}}}"#
        );
        // Empty string: nothing required.
        assert_eq!(
            conv(r#"{"type":"object","properties":{"a":{}},"required":""}"#),
            obj(r#"{"a":{}}"#)
        );
    }

    #[test]
    fn non_iterable_required_is_ignored() {
        for r in ["5", "0", "true", "false", r#"{"a":true}"#, "null"] {
            assert_eq!(
                conv(&format!(
                    r#"{{"type":"object","properties":{{"a":{{}}}},"required":{r}}}"#
                )),
                obj(r#"{"a":{}}"#),
                "required {r}"
            );
        }
    }

    #[test]
    fn proto_property_vanishes() {
        assert_eq!(
            conv(
                r#"{"type":"object","properties":{"a":{},"__proto__":{"type":"string"},"b":{}},"required":["__proto__","b"]}"#
            ),
            r#"{"type":"object","required":["b"],"properties":{"a":{},"b":{}}}"#
        );
    }

    #[test]
    fn description_truthiness_and_placement() {
        for (d, kept) in [
            (r#""""#, false),
            ("0", false),
            ("0.0", false),
            ("false", false),
            ("null", false),
            (r#""x""#, true),
            ("5", true),
            ("true", true),
            ("[]", true),
            ("{}", true),
            (r#""0""#, true),
        ] {
            let out = conv(&format!(
                r#"{{"type":"object","properties":{{"s":{{"description":{d},"type":"string"}}}}}}"#
            ));
            let want = if kept {
                format!(
                    r#"{{"type":"object","properties":{{"s":{{"type":"string","description":{d}}}}}}}"#
                )
            } else {
                obj(r#"{"s":{"type":"string"}}"#)
            };
            assert_eq!(out, want, "description {d}");
        }
        // Description objects are emitted in JS key order.
        assert_eq!(
            conv(r#"{"type":"object","properties":{"s":{"description":{"b":1,"2":2,"1":1.0}}}}"#),
            obj(r#"{"s":{"description":{"1":1,"2":2,"b":1}}}"#)
        );
    }

    #[test]
    fn enum_shapes() {
        assert_eq!(
            conv(&obj(r#"{"e":{"type":"string","enum":[]}}"#)),
            obj(r#"{"e":{"not":{}}}"#)
        );
        assert_eq!(
            conv(&obj(
                r#"{"e":{"type":"string","enum":[null],"description":"d"}}"#
            )),
            obj(r#"{"e":{"const":null,"type":"object","description":"d"}}"#)
        );
        assert_eq!(
            conv(&obj(
                r#"{"e":{"type":"string","enum":[{"z":1,"0":2},false]}}"#
            )),
            obj(
                r#"{"e":{"anyOf":[{"const":{"0":2,"z":1},"type":"object"},{"const":false,"type":"boolean"}]}}"#
            )
        );
    }

    #[test]
    fn non_object_properties_enumerate_by_index() {
        assert_eq!(
            conv(r#"{"type":"object","properties":"a😀","required":"2"}"#),
            r#"{"type":"object","required":["2"],"properties":{"0":{},"1":{},"2":{}}}"#
        );
        assert_eq!(
            conv(r#"{"type":"object","properties":[null,{"type":"boolean"}],"required":["1"]}"#),
            r#"{"type":"object","required":["1"],"properties":{"0":{},"1":{"type":"boolean"}}}"#
        );
        // Nested: falsy `properties` gives a record, truthy non-enumerable gives none.
        assert_eq!(
            conv(&obj(
                r#"{"o":{"type":"object","properties":""},"p":{"type":"object","properties":3}}"#
            )),
            obj(
                r#"{"o":{"type":"object","patternProperties":{"^(.*)$":{}}},"p":{"type":"object","properties":{}}}"#
            )
        );
    }

    #[test]
    fn null_property_is_lenient() {
        assert_eq!(conv(&obj(r#"{"a":null}"#)), obj(r#"{"a":{}}"#));
        assert_eq!(
            conv(&obj(
                r#"{"t":{"type":"array","items":{"type":"object","properties":{"x":null}}}}"#
            )),
            obj(r#"{"t":{"type":"array","items":{"type":"object","properties":{"x":{}}}}}"#)
        );
    }

    /// `levels` nested objects below the root, each holding the next under "a".
    fn nested_objects(levels: usize) -> Value {
        let mut v = json!({"type":"string"});
        for _ in 0..levels {
            v = object([
                ("type", json!("object")),
                ("properties", object([("a", v)])),
                ("required", json!(["a"])),
            ]);
        }
        object([
            ("type", json!("object")),
            ("properties", object([("a", v)])),
        ])
    }

    /// Depth (in schema levels below the root) of the converted chain and its leaf.
    fn walk(out: &Value) -> (usize, &Value) {
        let mut cur = &out["properties"]["a"];
        let mut depth = 1;
        loop {
            if let Some(next) = cur.get("properties").and_then(|p| p.get("a")) {
                cur = next;
            } else if let Some(next) = cur.get("items") {
                cur = next;
            } else {
                return (depth, cur);
            }
            depth += 1;
        }
    }

    #[test]
    fn depth_cap_boundary() {
        // Leaf string at level MAX_DEPTH: converted in full.
        let input = nested_objects(MAX_DEPTH - 1);
        let out = convert_schema(Some(&input));
        assert_eq!(walk(&out), (MAX_DEPTH, &json!({"type":"string"})));
        // One level more: the node past the cap becomes `{}`.
        let input = nested_objects(MAX_DEPTH);
        let out = convert_schema(Some(&input));
        assert_eq!(walk(&out), (MAX_DEPTH + 1, &json!({})));
    }

    #[test]
    fn hundred_thousand_levels_do_not_overflow() {
        let input = nested_objects(100_000);
        let out = convert_schema(Some(&input));
        assert_eq!(walk(&out), (MAX_DEPTH + 1, &json!({})));
        drop_deep(input);

        let mut items = json!({"type":"integer"});
        for _ in 0..100_000 {
            items = object([
                ("type", json!("array")),
                ("items", items),
                ("description", json!("d")),
            ]);
        }
        let input = object([
            ("type", json!("object")),
            ("properties", object([("a", items)])),
        ]);
        let out = convert_schema(Some(&input));
        let (depth, leaf) = walk(&out);
        assert_eq!((depth, leaf), (MAX_DEPTH + 1, &json!({})));
        drop_deep(input);
    }

    #[test]
    fn deep_description_does_not_overflow() {
        let mut d = json!("x");
        for _ in 0..100_000 {
            d = Value::Array(vec![d]);
        }
        let a = object([("type", json!("string")), ("description", d)]);
        let input = object([
            ("type", json!("object")),
            ("properties", object([("a", a)])),
        ]);
        let out = convert_schema(Some(&input));
        assert_eq!(out["properties"]["a"]["type"], "string");
        drop_deep(input);
        drop_deep(out);
    }
}
