//! `results: 'rich'`: what the agent gets from a tool result when it is given more than text.
//!
//! | content | becomes |
//! |---|---|
//! | text | joined with `\n` into the one wrapped block, as in compat |
//! | image | an image part `{ type: 'image', data, mimeType }` after the text part, when its type is allowed and its bytes are that type and it is within the caps; otherwise a line `[Image: <mime>, <n> bytes, not shown: <why>]` |
//! | audio | a line `[Audio: <mime>, <n> bytes]` |
//! | embedded text resource | `[Resource: <uri>]` and its text |
//! | embedded blob resource | `[Resource: <uri>, <mime>, <n> bytes]` |
//! | resource link | `[Resource link: <name>, <uri>, <mime>]` (never fetched) |
//! | `structuredContent` | checked against the tool's `outputSchema` (a mismatch fails the call naming the path); its JSON text added to the block when no text part carries it; the value in `details.structuredContent` |
//! | `isError: true` | `details.error: true` |
//!
//! The text is cut to `maxResultChars` (head and tail kept, a notice between).

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

use super::media;

/// Bounds on what one result may carry to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultLimits {
    /// Characters of text (the block before wrapping).
    pub max_result_chars: usize,
    /// Image parts.
    pub max_images: usize,
    /// Decoded bytes of one image.
    pub max_image_bytes: usize,
    /// Decoded bytes of all image parts together.
    pub max_result_bytes: usize,
}

impl Default for ResultLimits {
    fn default() -> Self {
        Self {
            max_result_chars: 1_000_000,
            max_images: 16,
            max_image_bytes: 10 << 20,
            max_result_bytes: 32 << 20,
        }
    }
}

/// An image part for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Base64, as the server sent it.
    pub data: String,
    pub mime_type: String,
}

/// A tool result in rich mode, before the text is redacted and wrapped.
#[derive(Debug, Clone, PartialEq)]
pub struct RichResult {
    pub text: String,
    pub images: Vec<Image>,
    pub structured: Option<Value>,
    pub is_error: bool,
}

/// Converts a result. `Err` (a message for the error result) when `structuredContent` does not
/// match `output_schema`.
pub fn rich_result(
    result: CallToolResult,
    output_schema: Option<&Value>,
    limits: &ResultLimits,
) -> Result<RichResult, String> {
    if let (Some(schema), Some(value)) = (output_schema, result.structured_content.as_ref()) {
        if let Some(problem) = super::json_check::first_error(schema, value) {
            return Err(format!(
                "structuredContent does not match the tool's outputSchema: {problem}"
            ));
        }
    }
    let mut lines: Vec<String> = Vec::with_capacity(result.content.len() + 1);
    let mut images = Vec::new();
    let mut media_bytes = 0usize;
    let mut texts_carry_structured = false;
    for block in result.content {
        match block {
            ContentBlock::Text(text) => {
                if text.text.is_empty() {
                    continue;
                }
                if let Some(structured) = &result.structured_content {
                    texts_carry_structured |= carries(&text.text, structured);
                }
                lines.push(text.text);
            }
            ContentBlock::Image(image) => {
                let mime = media::essence(&image.mime_type);
                let shown = match media::decode_base64(&image.data) {
                    None => Err("the data is not base64".to_owned()),
                    Some(bytes) => match media::image_problem(&mime, &bytes) {
                        Some(problem) => {
                            Err(format!("{} bytes, not shown: {problem}", bytes.len()))
                        }
                        None if images.len() >= limits.max_images => Err(format!(
                            "{} bytes, not shown: more than {} images (maxImages)",
                            bytes.len(),
                            limits.max_images
                        )),
                        None if bytes.len() > limits.max_image_bytes => Err(format!(
                            "{} bytes, not shown: over {} bytes (maxImageBytes)",
                            bytes.len(),
                            limits.max_image_bytes
                        )),
                        None if media_bytes + bytes.len() > limits.max_result_bytes => {
                            Err(format!(
                                "{} bytes, not shown: the result's media would pass {} bytes (maxResultBytes)",
                                bytes.len(),
                                limits.max_result_bytes
                            ))
                        }
                        None => {
                            media_bytes += bytes.len();
                            Ok(())
                        }
                    },
                };
                match shown {
                    Ok(()) => images.push(Image {
                        data: image.data,
                        mime_type: mime,
                    }),
                    Err(why) => lines.push(format!("[Image: {}, {why}]", shown_mime(&mime))),
                }
            }
            other => lines.push(describe(other)),
        }
    }
    if let Some(structured) = &result.structured_content {
        if !texts_carry_structured {
            lines.push(structured.to_string());
        }
    }
    // The usual single text part is moved, not copied (results can be megabytes).
    let text = if lines.len() == 1 {
        lines.pop().unwrap_or_default()
    } else {
        lines.join("\n")
    };
    let text = cut_text(text, limits.max_result_chars);
    Ok(RichResult {
        text,
        images,
        structured: result.structured_content,
        is_error: result.is_error == Some(true),
    })
}

/// A content block as a line of text: text as it is, everything else described (an image by
/// its type; see the table above for the rest). What a prompt message becomes.
pub fn describe(block: ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text,
        ContentBlock::Image(image) => {
            format!("[Image: {}]", shown_mime(&media::essence(&image.mime_type)))
        }
        ContentBlock::Audio(audio) => format!(
            "[Audio: {}, {} bytes]",
            shown_mime(&media::essence(&audio.mime_type)),
            media::base64_len(&audio.data)
        ),
        ContentBlock::Resource(embedded) => match embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[Resource: {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[Resource: {uri}, {}, {} bytes]",
                shown_mime(mime_type.as_deref().unwrap_or("")),
                media::base64_len(&blob)
            ),
            // A kind of resource content newer than this client: named, not shown.
            _ => "[Resource: unsupported content]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => match link.mime_type.as_deref() {
            Some(mime) if !mime.is_empty() => {
                format!("[Resource link: {}, {}, {mime}]", link.name, link.uri)
            }
            _ => format!("[Resource link: {}, {}]", link.name, link.uri),
        },
        _ => "[Content: a type this client does not know]".to_owned(),
    }
}

fn shown_mime(mime: &str) -> &str {
    if mime.is_empty() { "unknown" } else { mime }
}

/// Whether a text part is the structured content's JSON (the spec asks servers to send both).
fn carries(text: &str, structured: &Value) -> bool {
    let trimmed = text.trim_start();
    (trimmed.starts_with('{') || trimmed.starts_with('['))
        && serde_json::from_str::<Value>(text).is_ok_and(|v| &v == structured)
}

/// At most `max` characters: the head and the tail, with a notice of what was cut between.
pub fn cut_text(text: String, max: usize) -> String {
    // No more bytes than the cap means no more characters: nothing to count.
    if text.len() <= max {
        return text;
    }
    let total = text.chars().count();
    if total <= max {
        return text;
    }
    let head = max / 2;
    let tail = max - head;
    let head_end = text.char_indices().nth(head).map_or(text.len(), |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth(total - tail)
        .map_or(text.len(), |(i, _)| i);
    format!(
        "{}\n[… {} characters cut (maxResultChars {max}) …]\n{}",
        &text[..head_end],
        total - max,
        &text[tail_start..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    const JPEG: &str = "/9j/4AAQSkZJRgABAQ==";

    fn result(content: Value) -> CallToolResult {
        serde_json::from_value(content).unwrap()
    }

    #[test]
    fn every_content_type() {
        let r = result(json!({"content": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "alpha"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/octet-stream", "blob": "AAECAw=="}},
            {"type": "resource_link", "uri": "file:///c", "name": "c", "mimeType": "text/plain"},
            {"type": "image", "data": PNG, "mimeType": "image/svg+xml"},
            {"type": "image", "data": JPEG, "mimeType": "image/png"},
            {"type": "text", "text": "last"}
        ], "isError": true}));
        let rich = rich_result(r, None, &ResultLimits::default()).unwrap();
        assert_eq!(
            rich.text,
            "first\n[Audio: audio/wav, 3 bytes]\n[Resource: file:///a.txt]\nalpha\n\
             [Resource: file:///b.bin, application/octet-stream, 4 bytes]\n\
             [Resource link: c, file:///c, text/plain]\n\
             [Image: image/svg+xml, 70 bytes, not shown: type image/svg+xml is not allowed]\n\
             [Image: image/png, 13 bytes, not shown: the data is image/jpeg, not image/png]\nlast"
        );
        assert_eq!(
            rich.images,
            vec![Image {
                data: PNG.into(),
                mime_type: "image/png".into()
            }]
        );
        assert!(rich.is_error);
        assert_eq!(rich.structured, None);
    }

    #[test]
    fn caps_on_images() {
        let many: Vec<Value> = (0..5)
            .map(|_| json!({"type": "image", "data": PNG, "mimeType": "image/png"}))
            .collect();
        let limits = ResultLimits {
            max_images: 2,
            ..ResultLimits::default()
        };
        let rich = rich_result(result(json!({ "content": many })), None, &limits).unwrap();
        assert_eq!(rich.images.len(), 2);
        assert_eq!(
            rich.text
                .matches("not shown: more than 2 images (maxImages)")
                .count(),
            3
        );
        let limits = ResultLimits {
            max_result_bytes: 100,
            ..ResultLimits::default()
        };
        let rich = rich_result(result(json!({ "content": many })), None, &limits).unwrap();
        assert_eq!(rich.images.len(), 1);
        assert!(rich.text.contains("(maxResultBytes)"), "{}", rich.text);
        let limits = ResultLimits {
            max_image_bytes: 10,
            ..ResultLimits::default()
        };
        let rich = rich_result(result(json!({ "content": many })), None, &limits).unwrap();
        assert!(rich.images.is_empty());
        assert!(rich.text.contains("over 10 bytes (maxImageBytes)"));
    }

    #[test]
    fn structured_content_shown_once_and_checked() {
        let schema =
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
        let only = result(json!({"content": [], "structuredContent": {"n": 1}}));
        let rich = rich_result(only, Some(&schema), &ResultLimits::default()).unwrap();
        assert_eq!(rich.text, r#"{"n":1}"#);
        assert_eq!(rich.structured, Some(json!({"n": 1})));
        let both = result(
            json!({"content": [{"type": "text", "text": "{ \"n\": 1 }"}], "structuredContent": {"n": 1}}),
        );
        let rich = rich_result(both, Some(&schema), &ResultLimits::default()).unwrap();
        assert_eq!(rich.text, "{ \"n\": 1 }");
        let bad = result(json!({"content": [], "structuredContent": {"n": "x"}}));
        let err = rich_result(bad, Some(&schema), &ResultLimits::default()).unwrap_err();
        assert!(
            err.starts_with("structuredContent does not match the tool's outputSchema: at /n:"),
            "{err}"
        );
    }

    #[test]
    fn text_is_cut_in_the_middle() {
        assert_eq!(cut_text("abcdef".into(), 6), "abcdef");
        assert_eq!(
            cut_text("abcdefgh".into(), 4),
            "ab\n[… 4 characters cut (maxResultChars 4) …]\ngh"
        );
        assert_eq!(
            cut_text("ééééé".into(), 2),
            "é\n[… 3 characters cut (maxResultChars 2) …]\né"
        );
    }
}
