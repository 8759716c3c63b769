//! What the agent gets from a tool result: the text the original module extracted from it.

use rmcp::model::{CallToolResult, ContentBlock};

/// Text parts as they are, images as `[Image: <mime>]`, everything else dropped; joined with
/// `\n`. `isError` does not change the text (the original ignored it too). Takes the result by
/// value so the usual single text part is moved out, not copied (results can be megabytes).
pub fn result_text(result: CallToolResult) -> String {
    let mut parts: Vec<String> = Vec::with_capacity(result.content.len());
    for block in result.content {
        match block {
            ContentBlock::Text(text) if !text.text.is_empty() => parts.push(text.text),
            ContentBlock::Image(image) => {
                let mime = if image.mime_type.is_empty() {
                    "unknown"
                } else {
                    image.mime_type.as_str()
                };
                parts.push(format!("[Image: {mime}]"));
            }
            _ => {}
        }
    }
    if parts.len() == 1 {
        return parts.pop().unwrap_or_default();
    }
    parts.join("\n")
}
