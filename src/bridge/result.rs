//! What the agent gets from a tool result: the text the original module extracted from it.

use rmcp::model::{CallToolResult, ContentBlock};

/// Text parts as they are, images as `[Image: <mime>]`, everything else dropped; joined with
/// `\n`. `isError` does not change the text (the original ignored it too).
pub fn result_text(result: &CallToolResult) -> String {
    let mut parts: Vec<std::borrow::Cow<'_, str>> = Vec::with_capacity(result.content.len());
    for block in &result.content {
        match block {
            ContentBlock::Text(text) if !text.text.is_empty() => {
                parts.push(std::borrow::Cow::Borrowed(text.text.as_str()))
            }
            ContentBlock::Image(image) => {
                let mime = if image.mime_type.is_empty() {
                    "unknown"
                } else {
                    image.mime_type.as_str()
                };
                parts.push(std::borrow::Cow::Owned(format!("[Image: {mime}]")));
            }
            _ => {}
        }
    }
    if parts.len() == 1 {
        return parts.pop().map(|p| p.into_owned()).unwrap_or_default();
    }
    parts.join("\n")
}
