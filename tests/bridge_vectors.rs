//! Golden vectors for the tool bridge's pure parts (OpenClaw PR #21530):
//! `convert_schema` and the tool name/label/description, compared byte for byte
//! (compact `serde_json` with `preserve_order`, so key order is checked).

use std::path::PathBuf;

use openclaw_mcp_native::bridge::{compat_tool_name, convert_schema, tool_description, tool_label};
use serde_json::{Value, json};

fn load(name: &str) -> Value {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "fixtures",
        "vectors",
        name,
    ]
    .iter()
    .collect();
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).expect("serialise")
}

fn opt_str<'a>(v: Option<&'a Value>, what: &str, case: &str) -> Option<&'a str> {
    match v {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(other) => panic!("{case}: unexpected {what} {other}"),
    }
}

#[test]
fn schema_conversion_vectors() {
    let file = load("schema-conversion.pr21530.json");
    let cases = file["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 121, "case count");

    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let input = case.get("input").expect("input");
        let got = compact(&convert_schema(Some(input)));
        let want = compact(&case["output"]);
        if got != want {
            failures.push(format!("{name}\n   got: {got}\n  want: {want}"));
        }
    }
    println!(
        "schema-conversion: {}/{} passed",
        cases.len() - failures.len(),
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The original threw on these inputs; the port is lenient (see `convert_schema`'s
/// docs): a `null` property converts to `{}`, a non-iterable `required` is ignored.
#[test]
fn schema_conversion_throwing_cases_are_lenient() {
    let file = load("schema-conversion.pr21530.json");
    let cases = file["throwingCases"].as_array().expect("throwingCases");
    assert_eq!(cases.len(), 7, "throwing case count");

    let expected = [
        (
            "throws/property-null",
            json!({"type":"object","properties":{"a":{}}}),
        ),
        (
            "throws/nested-property-null",
            json!({"type":"object","properties":{"o":{"type":"object","properties":{"b":{}}}}}),
        ),
        (
            "throws/array-items-object-with-null-prop",
            json!({"type":"object","properties":{"t":{"type":"array","items":{"type":"object","properties":{"x":{}}}}}}),
        ),
        (
            "throws/required-number",
            json!({"type":"object","properties":{"a":{"type":"string"}}}),
        ),
        (
            "throws/required-object",
            json!({"type":"object","properties":{"a":{"type":"string"}}}),
        ),
        (
            "throws/required-true",
            json!({"type":"object","properties":{}}),
        ),
        (
            "throws/nested-required-number",
            json!({"type":"object","properties":{"o":{"type":"object","properties":{"a":{"type":"string"}}}}}),
        ),
    ];

    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().expect("name");
        assert!(
            case["throws"]
                .as_str()
                .is_some_and(|t| t.starts_with("TypeError")),
            "{name}: throws"
        );
        let Some((_, want)) = expected.iter().find(|(n, _)| *n == name) else {
            failures.push(format!("{name}: no documented lenient output"));
            continue;
        };
        let got = compact(&convert_schema(Some(&case["input"])));
        let want = compact(want);
        if got != want {
            failures.push(format!("{name}\n   got: {got}\n  want: {want}"));
        }
    }
    println!(
        "schema-conversion throwingCases: {}/{} lenient as documented",
        cases.len() - failures.len(),
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn tool_bridge_vectors() {
    let file = load("tool-bridge.pr21530.json");
    let cases = file["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 42, "case count");

    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().expect("name");
        let server = case["server"].as_str().expect("server");
        let prefix = opt_str(case.get("toolPrefix"), "toolPrefix", name);
        let tool = &case["tool"];
        let tool_name = tool["name"].as_str().expect("tool.name");
        let description = opt_str(tool.get("description"), "description", name);
        let expected = &case["expected"];

        let got = json!({
            "name": compat_tool_name(server, prefix, tool_name),
            "label": tool_label(server, tool_name),
            "description": tool_description(server, description),
            "parameters": convert_schema(tool.get("inputSchema")),
        });
        let mut bad = Vec::new();
        for field in ["name", "label", "description", "parameters"] {
            let (g, w) = (compact(&got[field]), compact(&expected[field]));
            if g != w {
                bad.push(format!("  {field}: got {g}, want {w}"));
            }
        }
        if !bad.is_empty() {
            failures.push(format!("{name}\n{}", bad.join("\n")));
        }
    }
    println!(
        "tool-bridge: {}/{} passed",
        cases.len() - failures.len(),
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Recursion safety on a hostile schema: 100k nested objects convert without
/// overflowing the stack; nodes past `MAX_DEPTH` levels become `{}`.
#[test]
fn hostile_depth_is_capped() {
    use openclaw_mcp_native::bridge::MAX_DEPTH;

    // Built by moving values in: `json!` would deep-copy an interpolated value
    // recursively.
    fn object(entries: impl IntoIterator<Item = (&'static str, Value)>) -> Value {
        Value::Object(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }
    let mut v = json!({"type":"boolean"});
    for _ in 0..=100_000 {
        v = object([
            ("type", json!("object")),
            ("properties", object([("k", v)])),
        ]);
    }
    let input = v;
    let out = convert_schema(Some(&input));

    let mut cur = &out["properties"]["k"];
    let mut level = 1;
    while let Some(next) = cur.get("properties").and_then(|p| p.get("k")) {
        cur = next;
        level += 1;
    }
    assert_eq!(level, MAX_DEPTH + 1);
    assert_eq!(cur, &json!({}));

    // serde_json drops values recursively; dismantle the 100k-deep input by hand.
    let mut stack = vec![input];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => stack.extend(m.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}
