//! Response rules: what one tool result may carry to the client, applied to every result a
//! served tool returns (`McpServerHost`'s `limits`), whatever provider made it.
//!
//! | item | counts as | checked against |
//! |---|---|---|
//! | `image` | an image | `allowedImageTypes` (its MIME type, and for png/jpeg/gif/webp its bytes must be that type), `maxItemBytes` (decoded), `maxImages` |
//! | `resource` (embedded, `blob` or `text`) | a file | `allowedFileTypes` (its `mimeType`; none: `application/octet-stream` for a blob, `text/plain` for text), `maxItemBytes` (decoded blob / UTF-8 text), `maxFiles` |
//! | `resource_link` | a file | `allowedFileTypes` when it names a `mimeType` (it carries no bytes), `maxFiles` |
//! | `text` | — | `maxItemBytes` (UTF-8; a longer text is cut to it, not dropped) |
//! | `audio` | — | `maxItemBytes` (decoded) |
//! | every item, and `structuredContent` | — | `maxResponseBytes`: the serialised JSON of the kept items and `structuredContent`, in order (`structuredContent` first) |
//!
//! A file is anything in a result that stands for a file of its own, embedded or linked: an
//! embedded resource (its text or its bytes, with a URI and a type) or a link to one. Items are
//! taken in order; one that breaks a rule is dropped (a text is cut), and one notice is
//! appended as a last text item naming each dropped item by its index and why. Dropping
//! `structuredContent` (larger than the whole response may be) marks the result `isError`, since
//! the client can no longer check it against the tool's `outputSchema`.

use std::io::Write;

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

use crate::bridge::media;

const MIB: usize = 1024 * 1024;

/// The image types of the `'openclaw'` preset (what the major model providers accept).
pub const OPENCLAW_IMAGE_TYPES: [&str; 4] = media::IMAGE_TYPES;

/// The file types of the `'openclaw'` preset: documents, plain data and archives a chat channel
/// can pass on as an attachment, and the preset's image types sent as files. Left out: markup a
/// client might render or run (HTML, SVG, JavaScript), executables, and any type not named.
pub const OPENCLAW_FILE_TYPES: [&str; 20] = [
    "application/pdf",
    "application/json",
    "application/xml",
    "application/zip",
    "application/gzip",
    "application/msword",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.ms-excel",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "text/plain",
    "text/markdown",
    "text/csv",
    "text/tab-separated-values",
    "text/xml",
    "text/calendar",
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
];

/// What a notice may list before it only counts the rest.
const NOTICE_REASONS: usize = 20;

/// The limits of one server's responses; `None` is no limit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponseLimits {
    pub max_images: Option<usize>,
    pub max_files: Option<usize>,
    /// Bytes of one item (decoded for base64 data).
    pub max_item_bytes: Option<usize>,
    /// Bytes of the serialised content and `structuredContent` together.
    pub max_response_bytes: Option<usize>,
    /// MIME types (lower case, no parameters) an image may have.
    pub allowed_image_types: Option<Vec<String>>,
    /// MIME types a file may have.
    pub allowed_file_types: Option<Vec<String>>,
}

impl ResponseLimits {
    /// The `'openclaw'` preset: at most 10 images and 5 files, 15 MiB each, 50 MiB per
    /// response, the image types of [`OPENCLAW_IMAGE_TYPES`] and the file types of
    /// [`OPENCLAW_FILE_TYPES`].
    pub fn openclaw() -> Self {
        Self {
            max_images: Some(10),
            max_files: Some(5),
            max_item_bytes: Some(15 * MIB),
            max_response_bytes: Some(50 * MIB),
            allowed_image_types: Some(OPENCLAW_IMAGE_TYPES.iter().map(|t| t.to_string()).collect()),
            allowed_file_types: Some(OPENCLAW_FILE_TYPES.iter().map(|t| t.to_string()).collect()),
        }
    }

    /// The `limits` option: `'openclaw'` or `{ maxImages?, maxFiles?, maxItemBytes?,
    /// maxResponseBytes?, allowedImageTypes?, allowedFileTypes? }`; `null` is none. Errors name
    /// the member.
    pub fn from_json(value: &Value) -> Result<Option<Self>, String> {
        let object = match value {
            Value::Null => return Ok(None),
            Value::String(preset) if preset == "openclaw" => return Ok(Some(Self::openclaw())),
            Value::Object(object) => object,
            _ => {
                return Err(
                    "limits must be 'openclaw' or an object { maxImages?, maxFiles?, maxItemBytes?, maxResponseBytes?, allowedImageTypes?, allowedFileTypes? }"
                        .to_owned(),
                );
            }
        };
        const KEYS: [&str; 6] = [
            "maxImages",
            "maxFiles",
            "maxItemBytes",
            "maxResponseBytes",
            "allowedImageTypes",
            "allowedFileTypes",
        ];
        if let Some(unknown) = object.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!("limits.{unknown} is not a known limit"));
        }
        let count = |key: &str| -> Result<Option<usize>, String> {
            match object.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) => n
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .map(Some)
                    .ok_or_else(|| format!("limits.{key} must be a non-negative integer")),
                Some(_) => Err(format!("limits.{key} must be a non-negative integer")),
            }
        };
        let types = |key: &str| -> Result<Option<Vec<String>>, String> {
            match object.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| match item.as_str() {
                        Some(t) if t.contains('/') => Ok(media::essence(t)),
                        _ => Err(format!(
                            "limits.{key} must be an array of MIME types like 'image/png'"
                        )),
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(Some),
                Some(_) => Err(format!(
                    "limits.{key} must be an array of MIME types like 'image/png'"
                )),
            }
        };
        Ok(Some(Self {
            max_images: count("maxImages")?,
            max_files: count("maxFiles")?,
            max_item_bytes: count("maxItemBytes")?,
            max_response_bytes: count("maxResponseBytes")?,
            allowed_image_types: types("allowedImageTypes")?,
            allowed_file_types: types("allowedFileTypes")?,
        }))
    }
}

/// One item left out of a result, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// The item's index in the content as the tool returned it; `None` for `structuredContent`.
    pub index: Option<usize>,
    /// `image`, `file`, `audio`, `text`, `structuredContent`.
    pub what: &'static str,
    pub why: String,
    /// A text cut to fit rather than dropped.
    pub cut: bool,
}

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verb = if self.cut { "cut" } else { "dropped" };
        match self.index {
            Some(i) => write!(f, "{verb} {} (item {}): {}", self.what, i + 1, self.why),
            None => write!(f, "{verb} structuredContent: {}", self.why),
        }
    }
}

/// Applies `limits` to `result` in place: items that break a rule are dropped (texts cut), and
/// when anything was, a notice is appended as a last text item. Returns what was left out.
pub fn apply(result: &mut CallToolResult, limits: &ResponseLimits) -> Vec<Dropped> {
    let mut dropped = Vec::new();
    let mut total = 0usize;
    if let Some(structured) = &result.structured_content {
        let size = json_size(structured);
        if limits.max_response_bytes.is_some_and(|max| size > max) {
            dropped.push(Dropped {
                index: None,
                what: "structuredContent",
                why: format!(
                    "{size} bytes, over maxResponseBytes {}",
                    limits.max_response_bytes.unwrap_or_default()
                ),
                cut: false,
            });
            result.structured_content = None;
            result.is_error = Some(true);
        } else {
            total = size;
        }
    }
    let (mut images, mut files) = (0usize, 0usize);
    let content = std::mem::take(&mut result.content);
    let mut kept = Vec::with_capacity(content.len());
    for (index, mut item) in content.into_iter().enumerate() {
        let kind = Kind::of(&item);
        let drop = |why: String| Dropped {
            index: Some(index),
            what: kind.name(),
            why,
            cut: false,
        };
        if let Some(why) = type_problem(&item, kind, limits) {
            dropped.push(drop(why));
            continue;
        }
        if let Some(max) = limits.max_item_bytes {
            let bytes = item_bytes(&item);
            if bytes > max {
                if let ContentBlock::Text(text) = &mut item {
                    cut_text(&mut text.text, max);
                    dropped.push(Dropped {
                        cut: true,
                        ..drop(format!("{bytes} bytes, cut to maxItemBytes {max}"))
                    });
                } else {
                    dropped.push(drop(format!("{bytes} bytes, over maxItemBytes {max}")));
                    continue;
                }
            }
        }
        match kind {
            Kind::Image if limits.max_images.is_some_and(|max| images >= max) => {
                dropped.push(drop(format!(
                    "more than maxImages {}",
                    limits.max_images.unwrap_or_default()
                )));
                continue;
            }
            Kind::File if limits.max_files.is_some_and(|max| files >= max) => {
                dropped.push(drop(format!(
                    "more than maxFiles {}",
                    limits.max_files.unwrap_or_default()
                )));
                continue;
            }
            _ => {}
        }
        if let Some(max) = limits.max_response_bytes {
            let size = json_size(&item);
            if total.saturating_add(size) > max {
                let room = max - total;
                // A text is cut to what is left (its JSON escapes make the room a bound, not
                // an exact fit); anything else goes.
                if let ContentBlock::Text(text) = &mut item
                    && room > 64
                {
                    let before = text.text.len();
                    cut_text(&mut text.text, room - 64);
                    while json_size(&item) > room {
                        let ContentBlock::Text(text) = &mut item else {
                            unreachable!()
                        };
                        let half = text.text.len() / 2;
                        cut_text(&mut text.text, half);
                    }
                    dropped.push(Dropped {
                        index: Some(index),
                        what: "text",
                        why: format!("{before} bytes, cut to fit maxResponseBytes {max}"),
                        cut: true,
                    });
                } else {
                    dropped.push(drop(format!(
                        "{size} more bytes would pass maxResponseBytes {max}"
                    )));
                    continue;
                }
            }
            total += json_size(&item);
        }
        match kind {
            Kind::Image => images += 1,
            Kind::File => files += 1,
            _ => {}
        }
        kept.push(item);
    }
    result.content = kept;
    if !dropped.is_empty() {
        result.content.push(ContentBlock::text(notice(&dropped)));
    }
    dropped
}

/// The text item that says what was left out.
pub fn notice(dropped: &[Dropped]) -> String {
    let mut text = String::from("[The server's response limits changed this result: ");
    let listed: Vec<String> = dropped
        .iter()
        .take(NOTICE_REASONS)
        .map(|d| d.to_string())
        .collect();
    text.push_str(&listed.join("; "));
    if dropped.len() > NOTICE_REASONS {
        text.push_str(&format!("; and {} more", dropped.len() - NOTICE_REASONS));
    }
    text.push(']');
    text
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Image,
    Audio,
    File,
}

impl Kind {
    fn of(item: &ContentBlock) -> Self {
        match item {
            ContentBlock::Text(_) => Kind::Text,
            ContentBlock::Image(_) => Kind::Image,
            ContentBlock::Audio(_) => Kind::Audio,
            ContentBlock::Resource(_) | ContentBlock::ResourceLink(_) => Kind::File,
            #[allow(unreachable_patterns)]
            _ => Kind::Text,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Image => "image",
            Kind::Audio => "audio",
            Kind::File => "file",
        }
    }
}

/// Why the item's type is not allowed, if it is not.
fn type_problem(item: &ContentBlock, kind: Kind, limits: &ResponseLimits) -> Option<String> {
    match (item, kind) {
        (ContentBlock::Image(image), _) => {
            let allowed = limits.allowed_image_types.as_ref()?;
            let declared = media::essence(&image.mime_type);
            if !allowed.contains(&declared) {
                return Some(format!("type {declared} is not an allowed image type"));
            }
            // The types whose bytes can be told apart must be what they say.
            if media::IMAGE_TYPES.contains(&declared.as_str()) {
                let head = base64_head(&image.data);
                return match media::sniff_image(&head) {
                    Some(actual) if actual == declared => None,
                    Some(actual) => Some(format!("the data is {actual}, not {declared}")),
                    None => Some(format!("the data is not {declared}")),
                };
            }
            None
        }
        (ContentBlock::Resource(resource), _) => {
            let allowed = limits.allowed_file_types.as_ref()?;
            let declared = match &resource.resource {
                ResourceContents::BlobResourceContents { mime_type, .. } => mime_type
                    .as_deref()
                    .map(media::essence)
                    .unwrap_or_else(|| "application/octet-stream".to_owned()),
                ResourceContents::TextResourceContents { mime_type, .. } => mime_type
                    .as_deref()
                    .map(media::essence)
                    .unwrap_or_else(|| "text/plain".to_owned()),
                _ => "application/octet-stream".to_owned(),
            };
            (!allowed.contains(&declared))
                .then(|| format!("type {declared} is not an allowed file type"))
        }
        (ContentBlock::ResourceLink(link), _) => {
            let allowed = limits.allowed_file_types.as_ref()?;
            let declared = media::essence(link.mime_type.as_deref()?);
            (!allowed.contains(&declared))
                .then(|| format!("type {declared} is not an allowed file type"))
        }
        _ => None,
    }
}

/// The item's own bytes: decoded base64 data, UTF-8 text; a link carries none.
fn item_bytes(item: &ContentBlock) -> usize {
    match item {
        ContentBlock::Text(text) => text.text.len(),
        ContentBlock::Image(image) => media::base64_len(&image.data),
        ContentBlock::Audio(audio) => media::base64_len(&audio.data),
        ContentBlock::Resource(resource) => match &resource.resource {
            ResourceContents::BlobResourceContents { blob, .. } => media::base64_len(blob),
            ResourceContents::TextResourceContents { text, .. } => text.len(),
            _ => 0,
        },
        _ => 0,
    }
}

/// The first bytes of base64 `data`, enough to sniff an image type.
fn base64_head(data: &str) -> Vec<u8> {
    let head: String = data
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .take(32)
        .collect();
    let whole = head.len() / 4 * 4;
    media::decode_base64(&head[..whole]).unwrap_or_default()
}

/// Cuts `text` to at most `max` bytes, on a character boundary.
fn cut_text(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
}

/// Bytes of `value` serialised as JSON, counted without building the text.
pub fn json_size(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use rmcp::model::{EmbeddedResource, Resource};
    use serde_json::json;

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    fn png(size: usize) -> ContentBlock {
        let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
        bytes.resize(size.max(8), 0);
        ContentBlock::image(b64(&bytes), "image/png")
    }

    fn blob(mime: Option<&str>, size: usize) -> ContentBlock {
        let mut contents = ResourceContents::blob(b64(&vec![7u8; size]), "file:///x.bin");
        if let Some(mime) = mime {
            contents = contents.with_mime_type(mime);
        }
        ContentBlock::Resource(EmbeddedResource::new(contents))
    }

    fn link(mime: Option<&str>) -> ContentBlock {
        let mut resource = Resource::new("file:///report.pdf", "report");
        resource.mime_type = mime.map(str::to_owned);
        ContentBlock::resource_link(resource)
    }

    fn result(content: Vec<ContentBlock>) -> CallToolResult {
        CallToolResult::success(content)
    }

    fn last_text(result: &CallToolResult) -> &str {
        &result.content.last().unwrap().as_text().unwrap().text
    }

    #[test]
    fn nothing_changes_within_the_limits() {
        let mut r = result(vec![
            ContentBlock::text("hi"),
            png(100),
            blob(Some("application/pdf"), 10),
        ]);
        let before = r.clone();
        assert!(apply(&mut r, &ResponseLimits::openclaw()).is_empty());
        assert_eq!(r, before);
        // No limits at all: nothing is even looked at.
        let mut r = result(vec![ContentBlock::image("not base64!", "image/bmp")]);
        assert!(apply(&mut r, &ResponseLimits::default()).is_empty());
    }

    #[test]
    fn images_past_max_images_are_dropped_with_a_notice() {
        let mut r = result((0..12).map(|_| png(50)).collect());
        let dropped = apply(&mut r, &ResponseLimits::openclaw());
        assert_eq!(dropped.len(), 2);
        assert_eq!(dropped[0].index, Some(10));
        assert_eq!(r.content.len(), 11);
        assert_eq!(
            r.content.iter().filter(|c| c.as_image().is_some()).count(),
            10
        );
        let notice = last_text(&r);
        assert!(
            notice.contains("dropped image (item 11): more than maxImages 10"),
            "{notice}"
        );
        assert!(notice.contains("item 12"), "{notice}");
    }

    #[test]
    fn image_types_and_bytes_are_checked() {
        let gif_as_png = ContentBlock::image(b64(b"GIF89a......"), "image/png");
        let junk_png = ContentBlock::image(b64(b"hello world!"), "image/png");
        let svg = ContentBlock::image(b64(b"<svg/>"), "image/svg+xml");
        let upper = ContentBlock::image(b64(b"\x89PNG\r\n\x1a\nxxxx"), "IMAGE/PNG; q=1");
        let mut r = result(vec![gif_as_png, junk_png, svg, upper]);
        let dropped = apply(&mut r, &ResponseLimits::openclaw());
        let whys: Vec<&str> = dropped.iter().map(|d| d.why.as_str()).collect();
        assert_eq!(
            whys,
            [
                "the data is image/gif, not image/png",
                "the data is not image/png",
                "type image/svg+xml is not an allowed image type"
            ]
        );
        // The upper-case type with a parameter is png all the same, and kept.
        assert_eq!(r.content.len(), 2);
        assert!(r.content[0].as_image().is_some());
    }

    #[test]
    fn a_type_the_bytes_cannot_tell_is_allowed_when_listed() {
        let limits = ResponseLimits {
            allowed_image_types: Some(vec!["image/avif".into()]),
            ..Default::default()
        };
        let mut r = result(vec![ContentBlock::image(b64(b"anything"), "image/avif")]);
        assert!(apply(&mut r, &limits).is_empty());
    }

    #[test]
    fn files_are_embedded_resources_and_links() {
        let text_resource = ContentBlock::Resource(EmbeddedResource::new(
            ResourceContents::text("a,b", "file:///a.csv").with_mime_type("text/csv"),
        ));
        let mut r = result(vec![
            blob(Some("application/pdf"), 10),
            link(Some("application/pdf")),
            text_resource,
            link(None),
            blob(Some("application/pdf"), 10),
            blob(Some("application/pdf"), 10),
            link(Some("application/pdf")),
        ]);
        let dropped = apply(&mut r, &ResponseLimits::openclaw());
        assert_eq!(dropped.len(), 2, "{dropped:?}");
        assert!(
            dropped
                .iter()
                .all(|d| d.what == "file" && d.why == "more than maxFiles 5")
        );
        assert_eq!(dropped[0].index, Some(5));
    }

    #[test]
    fn file_types_are_checked_with_defaults_for_missing_types() {
        let mut r = result(vec![
            blob(None, 4),
            blob(Some("text/html"), 4),
            blob(Some("application/x-msdownload"), 4),
            link(Some("image/svg+xml")),
            ContentBlock::Resource(EmbeddedResource::new(
                ResourceContents::TextResourceContents {
                    uri: "file:///n.txt".into(),
                    mime_type: None,
                    text: "plain".into(),
                    meta: None,
                },
            )),
        ]);
        let dropped = apply(&mut r, &ResponseLimits::openclaw());
        let whys: Vec<&str> = dropped.iter().map(|d| d.why.as_str()).collect();
        assert_eq!(
            whys,
            [
                "type application/octet-stream is not an allowed file type",
                "type text/html is not an allowed file type",
                "type application/x-msdownload is not an allowed file type",
                "type image/svg+xml is not an allowed file type",
            ]
        );
        // The text resource without a type is text/plain, allowed.
        assert_eq!(r.content.len(), 2);
    }

    #[test]
    fn items_over_max_item_bytes_are_dropped_and_texts_cut() {
        let limits = ResponseLimits {
            max_item_bytes: Some(100),
            ..Default::default()
        };
        let mut r = result(vec![
            png(101),
            png(100),
            ContentBlock::text("é".repeat(60)),
            ContentBlock::audio(b64(&[1u8; 150]), "audio/wav"),
            blob(Some("application/pdf"), 101),
        ]);
        let dropped = apply(&mut r, &limits);
        assert_eq!(dropped.len(), 4, "{dropped:?}");
        assert_eq!(dropped[0].why, "101 bytes, over maxItemBytes 100");
        assert!(dropped[1].cut && dropped[1].what == "text");
        assert_eq!(dropped[2].what, "audio");
        assert_eq!(dropped[3].what, "file");
        // Kept: the 100-byte image, the text cut to 100 bytes on a char boundary, the notice.
        assert_eq!(r.content.len(), 3);
        assert_eq!(r.content[1].as_text().unwrap().text, "é".repeat(50));
        assert!(last_text(&r).contains("cut text (item 3)"));
    }

    #[test]
    fn the_response_total_keeps_items_in_order_until_full() {
        let limits = ResponseLimits {
            max_response_bytes: Some(1000),
            ..Default::default()
        };
        let mut r = result(vec![
            png(300),
            png(300),
            png(300),
            ContentBlock::text("small"),
        ]);
        let dropped = apply(&mut r, &limits);
        // 300 bytes are 400 in base64: two images fit, the third does not, the text does.
        assert_eq!(dropped.len(), 1);
        assert_eq!(dropped[0].index, Some(2));
        assert_eq!(r.content.len(), 4);
        let kept: usize = r.content[..3].iter().map(json_size).sum();
        assert!(kept <= 1000);
    }

    #[test]
    fn a_long_text_is_cut_to_fit_the_response() {
        let limits = ResponseLimits {
            max_response_bytes: Some(1000),
            ..Default::default()
        };
        let mut r = result(vec![ContentBlock::text("\"x\n".repeat(1000))]);
        let dropped = apply(&mut r, &limits);
        assert_eq!(dropped.len(), 1);
        assert!(dropped[0].cut);
        assert!(json_size(&r.content[0]) <= 1000);
        assert!(!r.content[0].as_text().unwrap().text.is_empty());
    }

    #[test]
    fn oversized_structured_content_is_dropped_and_the_result_flagged() {
        let limits = ResponseLimits {
            max_response_bytes: Some(100),
            ..Default::default()
        };
        let mut r = result(vec![ContentBlock::text("summary")]);
        r.structured_content = Some(json!({ "rows": "x".repeat(200) }));
        let dropped = apply(&mut r, &limits);
        assert_eq!(dropped[0].what, "structuredContent");
        assert!(r.structured_content.is_none());
        assert_eq!(r.is_error, Some(true));
        assert!(last_text(&r).contains("dropped structuredContent"));
        // Within the limit, it counts toward the total.
        let mut r = result(vec![ContentBlock::text("y".repeat(100))]);
        r.structured_content = Some(json!({ "a": "x".repeat(20) }));
        let dropped = apply(&mut r, &limits);
        assert!(r.structured_content.is_some());
        assert!(dropped[0].cut, "{dropped:?}");
    }

    #[test]
    fn the_notice_lists_twenty_and_counts_the_rest() {
        let limits = ResponseLimits {
            max_images: Some(0),
            ..Default::default()
        };
        let mut r = result((0..25).map(|_| png(10)).collect());
        assert_eq!(apply(&mut r, &limits).len(), 25);
        assert_eq!(r.content.len(), 1);
        assert!(last_text(&r).ends_with("; and 5 more]"));
    }

    #[test]
    fn options_are_read_and_bad_ones_named() {
        assert_eq!(ResponseLimits::from_json(&json!(null)), Ok(None));
        assert_eq!(
            ResponseLimits::from_json(&json!("openclaw")),
            Ok(Some(ResponseLimits::openclaw()))
        );
        let limits = ResponseLimits::from_json(&json!({
            "maxImages": 2, "allowedImageTypes": ["Image/PNG"]
        }))
        .unwrap()
        .unwrap();
        assert_eq!(limits.max_images, Some(2));
        assert_eq!(limits.allowed_image_types, Some(vec!["image/png".into()]));
        assert_eq!(limits.max_files, None);
        for (bad, named) in [
            (json!("strict"), "limits must be"),
            (json!({"maxImages": -1}), "limits.maxImages"),
            (json!({"maxFiles": 1.5}), "limits.maxFiles"),
            (json!({"maxItemBytes": "1"}), "limits.maxItemBytes"),
            (
                json!({"allowedFileTypes": ["pdf"]}),
                "limits.allowedFileTypes",
            ),
            (
                json!({"allowedImageTypes": "image/png"}),
                "limits.allowedImageTypes",
            ),
            (json!({"maxImage": 1}), "limits.maxImage is not"),
        ] {
            let e = ResponseLimits::from_json(&bad).unwrap_err();
            assert!(e.contains(named), "{bad}: {e}");
        }
    }
}
