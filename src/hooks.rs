//! `hooks: { beforeToolCall?, afterToolCall? }`: a host's say over every tool call. The hooks
//! are given and answer JSON text (the binding turns them into JS objects and back, and makes a
//! sync hook, an async one and one that throws look the same: a settled future).
//!
//! The rules are the manager's (`Manager::execute_call`): each hook is bounded by the call's
//! `toolTimeout`; `beforeToolCall` may block the call (`{ block: reason }`; the server never
//! sees it) or replace its arguments (`{ params }`), and one that fails blocks (fail closed);
//! whatever `afterToolCall` returns is made a well-formed, wrapped result again.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};

/// The hook's answer as JSON text (`None` for `undefined`/`null`), or why it failed.
pub type HookAnswer = Pin<Box<dyn Future<Output = Result<Option<String>, String>> + Send>>;

/// One hook: called with its argument as JSON text.
pub type Hook = Arc<dyn Fn(String) -> HookAnswer + Send + Sync>;

/// The argument of a host callback (sampling, elicitation, roots, `authorize`, a store's
/// methods): `{ "server"?, "request" }`, which the binding hands the callback as `(request,
/// { server, signal })`.
pub fn callback_argument(server: Option<&str>, request: impl serde::Serialize) -> String {
    let mut argument = serde_json::json!({ "request": request });
    if let Some(server) = server {
        argument["server"] = Value::from(server);
    }
    argument.to_string()
}

#[derive(Clone, Default)]
pub struct Hooks {
    /// Called with `{ ctx }`.
    pub before: Option<Hook>,
    /// Called with `{ ctx, result }`.
    pub after: Option<Hook>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("before", &self.before.is_some())
            .field("after", &self.after.is_some())
            .finish()
    }
}

/// What `beforeToolCall` decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Before {
    Proceed,
    Block(String),
    Replace(Map<String, Value>),
}

/// Reads `beforeToolCall`'s answer; anything it cannot read blocks.
pub fn read_before(answer: Option<&str>) -> Before {
    let Some(text) = answer else {
        return Before::Proceed;
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(mut map)) => {
            if let Some(block) = map.remove("block") {
                return Before::Block(match block {
                    Value::String(reason) => reason,
                    other => other.to_string(),
                });
            }
            match map.remove("params") {
                Some(Value::Object(params)) => Before::Replace(params),
                Some(_) => Before::Block(
                    "beforeToolCall returned params that are not an object".to_owned(),
                ),
                None if map.is_empty() => Before::Proceed,
                None => Before::Block(
                    "beforeToolCall returned neither { block } nor { params }".to_owned(),
                ),
            }
        }
        _ => Before::Block("beforeToolCall returned neither { block } nor { params }".to_owned()),
    }
}

/// What `afterToolCall` returned in place of the result, read: its text parts joined, and
/// whether it says it failed (`details.error`). `None` when it is no result at all.
pub fn read_after(answer: &str) -> Option<(String, bool)> {
    let Value::Object(result) = serde_json::from_str::<Value>(answer).ok()? else {
        return None;
    };
    let parts = result.get("content")?.as_array()?;
    let text: Vec<&str> = parts
        .iter()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    let failed = result
        .get("details")
        .and_then(|d| d.get("error"))
        .and_then(Value::as_bool)
        == Some(true);
    Some((text.join("\n"), failed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_answers() {
        assert_eq!(read_before(None), Before::Proceed);
        assert_eq!(read_before(Some("{}")), Before::Proceed);
        assert_eq!(
            read_before(Some(r#"{"block":"no"}"#)),
            Before::Block("no".into())
        );
        assert!(
            matches!(read_before(Some(r#"{"params":{"a":1}}"#)), Before::Replace(p) if p["a"] == 1)
        );
        assert!(matches!(read_before(Some("42")), Before::Block(_)));
        assert!(matches!(
            read_before(Some(r#"{"params":[1]}"#)),
            Before::Block(_)
        ));
        assert!(matches!(
            read_before(Some(r#"{"other":1}"#)),
            Before::Block(_)
        ));
    }

    #[test]
    fn after_answers() {
        let r = r#"{"content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}],"details":{"error":true}}"#;
        assert_eq!(read_after(r), Some(("a\nb".into(), true)));
        assert_eq!(
            read_after(r#"{"content":[]}"#),
            Some((String::new(), false))
        );
        assert_eq!(read_after("[]"), None);
        assert_eq!(read_after(r#"{"text":"x"}"#), None);
    }
}
