//! Small, allocation-lean models of the JavaScript semantics that PR #21530's
//! `convertMcpSchema` relied on implicitly: own-property enumeration order,
//! truthiness, `typeof`, and the way `JSON.stringify` prints numbers.

use serde_json::{Map, Number, Value};

/// Largest array index in ECMAScript (`2^32 - 2`).
pub(crate) const MAX_ARRAY_INDEX: u64 = 4_294_967_294;

/// Largest integer that an IEEE double represents exactly (`2^53`).
const MAX_SAFE_FLOAT_INT: f64 = 9_007_199_254_740_992.0;

/// `Some(n)` when `key` is a canonical ECMAScript array index: the canonical
/// decimal form of an integer in `0..=4294967294` ("0", "7", "10", but not
/// "01", "-1", "+1", "1.5", " 1" or "4294967295").
pub(crate) fn array_index(key: &str) -> Option<u32> {
    let bytes = key.as_bytes();
    match bytes {
        [] => None,
        [b'0'] => Some(0),
        [b'0', ..] => None,
        _ if bytes.len() > 10 => None,
        _ => {
            let mut n: u64 = 0;
            for &b in bytes {
                if !b.is_ascii_digit() {
                    return None;
                }
                n = n * 10 + u64::from(b - b'0');
            }
            u32::try_from(n)
                .ok()
                .filter(|&i| u64::from(i) <= MAX_ARRAY_INDEX)
        }
    }
}

/// Iterates a JSON object's entries in the order JavaScript enumerates the own
/// properties of the object `JSON.parse` would build (`Object.entries`,
/// `JSON.stringify`): array-index keys first in ascending numeric order, then
/// every other key in insertion order.
///
/// Allocates only when the object actually has array-index keys.
pub(crate) struct JsEntries<'a> {
    indexed: std::vec::IntoIter<(u32, &'a String, &'a Value)>,
    rest: serde_json::map::Iter<'a>,
    has_indexed: bool,
    remaining: usize,
}

impl<'a> JsEntries<'a> {
    pub(crate) fn new(map: &'a Map<String, Value>) -> Self {
        let has_indexed = map.keys().any(|k| array_index(k).is_some());
        let indexed = if has_indexed {
            let mut v: Vec<_> = map
                .iter()
                .filter_map(|(k, v)| array_index(k).map(|i| (i, k, v)))
                .collect();
            // Canonical index strings are unique per number, so an unstable
            // (allocation-free) sort is exact.
            v.sort_unstable_by_key(|e| e.0);
            v
        } else {
            Vec::new()
        };
        JsEntries {
            indexed: indexed.into_iter(),
            rest: map.iter(),
            has_indexed,
            remaining: map.len(),
        }
    }
}

impl<'a> Iterator for JsEntries<'a> {
    type Item = (&'a String, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        let item = if let Some((_, k, v)) = self.indexed.next() {
            Some((k, v))
        } else {
            loop {
                let (k, v) = self.rest.next()?;
                if self.has_indexed && array_index(k).is_some() {
                    continue;
                }
                break Some((k, v));
            }
        };
        self.remaining -= 1;
        item
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for JsEntries<'_> {}

/// JavaScript truthiness of a JSON value (`0`, `-0`, `""`, `false`, `null` are
/// falsy; every array and object is truthy).
pub(crate) fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// JavaScript `typeof` of a JSON value (`null`, arrays and objects are all
/// `"object"`).
pub(crate) fn type_of(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Null | Value::Array(_) | Value::Object(_) => "object",
    }
}

/// A number as `JSON.stringify` would print it, as far as `serde_json` can say so:
/// an integral float within ±2^53 becomes an integer (`1.0` → `1`, `-0.0` → `0`).
/// Other numbers are kept as they are.
fn js_number(n: &Number) -> Number {
    if n.is_f64()
        && let Some(f) = n.as_f64()
        && f.fract() == 0.0
        && f.abs() <= MAX_SAFE_FLOAT_INT
    {
        return Number::from(f as i64);
    }
    n.clone()
}

fn clone_scalar(v: &Value) -> Value {
    match v {
        Value::Number(n) => Value::Number(js_number(n)),
        other => other.clone(),
    }
}

enum Frame<'a> {
    Arr {
        src: std::slice::Iter<'a, Value>,
        out: Vec<Value>,
    },
    Obj {
        src: JsEntries<'a>,
        out: Map<String, Value>,
        key: Option<&'a String>,
    },
}

impl<'a> Frame<'a> {
    fn open(v: &'a Value) -> Option<Self> {
        match v {
            Value::Array(a) => Some(Frame::Arr {
                src: a.iter(),
                out: Vec::with_capacity(a.len()),
            }),
            Value::Object(m) => Some(Frame::Obj {
                src: JsEntries::new(m),
                out: Map::with_capacity(m.len()),
                key: None,
            }),
            _ => None,
        }
    }

    fn next_child(&mut self) -> Option<&'a Value> {
        match self {
            Frame::Arr { src, .. } => src.next(),
            Frame::Obj { src, key, .. } => src.next().map(|(k, v)| {
                *key = Some(k);
                v
            }),
        }
    }

    fn push(&mut self, v: Value) {
        match self {
            Frame::Arr { out, .. } => out.push(v),
            Frame::Obj { out, key, .. } => {
                if let Some(k) = key.take() {
                    out.insert(k.clone(), v);
                }
            }
        }
    }

    fn finish(self) -> Value {
        match self {
            Frame::Arr { out, .. } => Value::Array(out),
            Frame::Obj { out, .. } => Value::Object(out),
        }
    }
}

/// Deep copy of an opaque value (a `description`, an `enum` literal) as
/// `JSON.stringify` would emit it: object keys in JavaScript enumeration order at
/// every level, integral floats printed as integers. Own `__proto__` keys are
/// kept (`JSON.parse` makes them ordinary own properties).
///
/// Iterative (explicit stack), so an arbitrarily deep value cannot overflow the
/// call stack.
pub(crate) fn clone_js(v: &Value) -> Value {
    let Some(root) = Frame::open(v) else {
        return clone_scalar(v);
    };
    let mut stack = vec![root];
    loop {
        let Some(top) = stack.last_mut() else {
            // Unreachable: the loop returns when the root frame finishes.
            return Value::Null;
        };
        match top.next_child() {
            Some(child) => match Frame::open(child) {
                Some(frame) => stack.push(frame),
                None => top.push(clone_scalar(child)),
            },
            None => {
                let done = stack.pop().map_or(Value::Null, Frame::finish);
                match stack.last_mut() {
                    Some(parent) => parent.push(done),
                    None => return done,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn array_index_accepts_canonical_indices_only() {
        for (k, want) in [
            ("0", Some(0)),
            ("1", Some(1)),
            ("10", Some(10)),
            ("4294967294", Some(4_294_967_294)),
            ("4294967295", None), // 2^32 - 1 is not an array index
            ("4294967296", None),
            ("99999999999", None),
            ("01", None),
            ("00", None),
            ("-1", None),
            ("-0", None),
            ("+1", None),
            ("1.5", None),
            ("1e3", None),
            (" 1", None),
            ("1 ", None),
            ("", None),
            ("a", None),
            ("\u{0661}", None), // Arabic-Indic digit one
            ("\u{FF11}", None), // fullwidth digit one
        ] {
            assert_eq!(array_index(k), want, "key {k:?}");
        }
    }

    #[test]
    fn js_entries_puts_indices_first_ascending() {
        let v: Value = serde_json::from_str(
            r#"{"b":1,"10":2,"a":3,"2":4,"01":5,"-1":6,"4294967294":7,"4294967295":8,"1.5":9,"0":10}"#,
        )
        .unwrap();
        let keys: Vec<&str> = JsEntries::new(v.as_object().unwrap())
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                "0",
                "2",
                "10",
                "4294967294",
                "b",
                "a",
                "01",
                "-1",
                "4294967295",
                "1.5"
            ]
        );
        let it = JsEntries::new(v.as_object().unwrap());
        assert_eq!(it.len(), 10);
    }

    #[test]
    fn js_entries_without_indices_keeps_insertion_order() {
        let v: Value = serde_json::from_str(r#"{"z":1,"y":2,"01":3,"x":4}"#).unwrap();
        let keys: Vec<&str> = JsEntries::new(v.as_object().unwrap())
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(keys, ["z", "y", "01", "x"]);
    }

    #[test]
    fn truthiness_matches_js() {
        for v in [
            json!(null),
            json!(false),
            json!(0),
            json!(0.0),
            json!(-0.0),
            json!(""),
        ] {
            assert!(!truthy(&v), "{v} should be falsy");
        }
        for v in [
            json!(true),
            json!(1),
            json!(-1),
            json!(0.5),
            json!(" "),
            json!("0"),
            json!([]),
            json!({}),
        ] {
            assert!(truthy(&v), "{v} should be truthy");
        }
    }

    #[test]
    fn type_of_matches_js() {
        assert_eq!(type_of(&json!("x")), "string");
        assert_eq!(type_of(&json!(1.5)), "number");
        assert_eq!(type_of(&json!(false)), "boolean");
        assert_eq!(type_of(&json!(null)), "object");
        assert_eq!(type_of(&json!([1])), "object");
        assert_eq!(type_of(&json!({})), "object");
    }

    #[test]
    fn clone_js_reorders_nested_keys_and_normalises_numbers() {
        let v: Value = serde_json::from_str(
            r#"[{"b":{"z":1,"3":2,"1":[1.0,-0.0,2.5]},"7":null,"__proto__":1}]"#,
        )
        .unwrap();
        let c = clone_js(&v);
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"[{"7":null,"b":{"1":[1,0,2.5],"3":2,"z":1},"__proto__":1}]"#
        );
    }

    #[test]
    fn clone_js_is_iterative() {
        let depth = 100_000;
        let mut v = json!("leaf");
        for i in 0..depth {
            // Built by moving `v` in: `json!` would deep-copy (and recurse into) it.
            v = if i % 2 == 0 {
                Value::Array(vec![v])
            } else {
                Value::Object(Map::from_iter([("k".to_string(), v)]))
            };
        }
        let c = clone_js(&v);
        // Walk down to the leaf without recursion.
        let mut cur = &c;
        let mut n = 0;
        loop {
            match cur {
                Value::Array(a) => cur = &a[0],
                Value::Object(m) => cur = &m["k"],
                _ => break,
            }
            n += 1;
        }
        assert_eq!(n, depth);
        assert_eq!(cur, &json!("leaf"));
        crate::bridge::schema::tests::drop_deep(v);
        crate::bridge::schema::tests::drop_deep(c);
    }
}
