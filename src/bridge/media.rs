//! Checks on the media a server sends: which image types may reach the model, whether the bytes
//! are what the MIME type says, and how large base64 data is once decoded.

use base64::Engine as _;

/// The image types passed to the model (what the major model providers accept).
pub const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The image type the bytes start with, by their magic number.
pub fn sniff_image(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// The MIME type as compared: lower case, parameters dropped (`image/PNG; x=y` → `image/png`).
pub fn essence(mime: &str) -> String {
    mime.split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Decodes standard base64 (padding optional, whitespace ignored, as servers send it).
pub fn decode_base64(data: &str) -> Option<Vec<u8>> {
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    if data.bytes().any(|b| b.is_ascii_whitespace()) {
        let compact: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        engine.decode(compact).ok()
    } else {
        engine.decode(data).ok()
    }
}

/// The decoded size of base64 `data`, without decoding it (whitespace and padding ignored).
pub fn base64_len(data: &str) -> usize {
    let symbols = data
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
        .count();
    symbols / 4 * 3 + (symbols % 4).saturating_sub(1)
}

/// Why an image may not be shown to the model, if it may not.
pub fn image_problem(mime: &str, bytes: &[u8]) -> Option<String> {
    let declared = essence(mime);
    if !IMAGE_TYPES.contains(&declared.as_str()) {
        return Some(format!("type {declared} is not allowed"));
    }
    match sniff_image(bytes) {
        Some(actual) if actual == declared => None,
        Some(actual) => Some(format!("the data is {actual}, not {declared}")),
        None => Some(format!("the data is not {declared}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_each_allowed_type_and_nothing_else() {
        assert_eq!(sniff_image(b"\x89PNG\r\n\x1a\nrest"), Some("image/png"));
        assert_eq!(sniff_image(b"\xff\xd8\xff\xe0"), Some("image/jpeg"));
        assert_eq!(sniff_image(b"GIF89a..."), Some("image/gif"));
        assert_eq!(sniff_image(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff_image(b"<svg xmlns="), None);
        assert_eq!(sniff_image(b""), None);
    }

    #[test]
    fn problems_name_the_mismatch() {
        let png = b"\x89PNG\r\n\x1a\n....";
        assert_eq!(image_problem("image/png", png), None);
        assert_eq!(image_problem("IMAGE/PNG; q=1", png), None);
        assert_eq!(
            image_problem("image/svg+xml", png).unwrap(),
            "type image/svg+xml is not allowed"
        );
        assert_eq!(
            image_problem("image/png", b"\xff\xd8\xff\xe0").unwrap(),
            "the data is image/jpeg, not image/png"
        );
        assert_eq!(
            image_problem("image/gif", b"nope").unwrap(),
            "the data is not image/gif"
        );
    }

    #[test]
    fn base64_sizes() {
        for n in 0..10usize {
            let data = base64::engine::general_purpose::STANDARD.encode(vec![7u8; n]);
            assert_eq!(base64_len(&data), n);
            assert_eq!(decode_base64(&data).unwrap().len(), n);
            let unpadded = data.trim_end_matches('=');
            assert_eq!(decode_base64(unpadded).unwrap().len(), n);
        }
        assert_eq!(decode_base64("QUJD\nREVG").unwrap(), b"ABCDEF");
        assert_eq!(decode_base64("not base64!"), None);
    }
}
