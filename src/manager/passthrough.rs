//! A server's tool result kept as MCP content for a caller that serves it onward (the gateway
//! with `wrap: false`): every content block as the server sent it, with every string in it
//! masked by the redactor (texts, resource texts, URIs, names, `structuredContent`, `_meta`)
//! except the base64 payloads of images, audio and blob resources, and texts cleaned by the
//! hygiene pass when that is on for the server. Not wrapped as untrusted content: the caller
//! asked for the content itself.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

use super::Manager;
use crate::secrets::Redactor;
use crate::security::hygiene;

impl Manager {
    /// `result` redacted (and cleaned when `clean`), for serving onward as MCP.
    pub(super) fn passthrough_result(&self, result: CallToolResult, clean: bool) -> CallToolResult {
        let redactor = self.log.redactor();
        let mut out = result;
        out.content = std::mem::take(&mut out.content)
            .into_iter()
            .map(|block| masked_block(block, redactor, clean))
            .collect();
        if let Some(structured) = out.structured_content.as_mut() {
            mask(structured, redactor, false, false);
        }
        if let Some(meta) = out.meta.take() {
            let mut value = serde_json::to_value(&meta).unwrap_or(Value::Null);
            mask(&mut value, redactor, false, false);
            out.meta = serde_json::from_value(value).ok();
        }
        out
    }

    /// A text the caller replaced the result with (an `afterToolCall` hook), as MCP content.
    pub(super) fn passthrough_text(&self, text: &str) -> CallToolResult {
        let text = self.log.redactor().redact(text).into_owned();
        CallToolResult::success(vec![ContentBlock::text(text)])
    }
}

/// One content block with its strings masked; media payloads kept as sent.
fn masked_block(block: ContentBlock, redactor: &Redactor, clean: bool) -> ContentBlock {
    let Ok(mut value) = serde_json::to_value(&block) else {
        return block;
    };
    mask(&mut value, redactor, true, clean);
    match serde_json::from_value::<ContentBlock>(value.clone()) {
        Ok(block) => block,
        // (Masking only changes strings; a block that no longer reads is given as its text.)
        Err(_) => ContentBlock::text(value.to_string()),
    }
}

/// Masks every string in `value`. `media`: the value is a content block, whose `data` and
/// `blob` strings are base64 payloads and stay as they are. `clean`: `text` strings also go
/// through the hygiene pass.
fn mask(value: &mut Value, redactor: &Redactor, media: bool, clean: bool) {
    match value {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(masked) = redactor.redact(s) {
                *s = masked;
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| mask(v, redactor, media, clean)),
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if media && matches!(key.as_str(), "data" | "blob") && v.is_string() {
                    continue;
                }
                mask(v, redactor, media, clean);
                if clean
                    && key == "text"
                    && let Value::String(s) = v
                    && let std::borrow::Cow::Owned(cleaned) = hygiene::clean(s).text
                {
                    *s = cleaned;
                }
            }
        }
        _ => {}
    }
}
