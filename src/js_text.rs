//! Text in the representations a JavaScript engine stores strings in: one byte per character
//! (Latin-1) or UTF-16 code units. Handing V8 UTF-8 makes it decode on the JS thread (a length
//! pass, then a decoding pass); text converted up front (on a tokio worker, where a result is
//! built there) is only copied. The binding turns a [`JsText`] into a JS string.

/// A string ready for V8: ASCII and Latin-1 text as one byte per character, anything else as
/// UTF-16 code units.
pub enum JsText {
    Ascii(String),
    Latin1(Vec<u8>),
    Utf16(Vec<u16>),
}

impl JsText {
    pub fn new(text: String) -> Self {
        if text.is_ascii() {
            return Self::Ascii(text);
        }
        let bytes = text.as_bytes();
        // Characters above U+00FF are the ones whose UTF-8 lead byte is 0xC4 or more.
        if bytes.iter().all(|&b| b < 0xC4) {
            let mut out = Vec::with_capacity(bytes.len());
            let mut i = 0;
            while i < bytes.len() {
                let b = bytes[i];
                if b < 0x80 {
                    out.push(b);
                    i += 1;
                } else {
                    out.push(((b & 0x1F) << 6) | (bytes[i + 1] & 0x3F));
                    i += 2;
                }
            }
            return Self::Latin1(out);
        }
        Self::Utf16(utf16(&text))
    }
}

/// How many leading bytes are ASCII; 16 at a time, which the compiler vectorises.
fn ascii_run(bytes: &[u8]) -> usize {
    let mut n = 0;
    for chunk in bytes.chunks_exact(16) {
        if chunk.iter().fold(0, |acc, &b| acc | b) >= 0x80 {
            break;
        }
        n += 16;
    }
    n + bytes[n..].iter().take_while(|&&b| b < 0x80).count()
}

/// How many leading UTF-16 code units are ASCII.
fn ascii_run_utf16(units: &[u16]) -> usize {
    let mut n = 0;
    for chunk in units.chunks_exact(16) {
        if chunk.iter().fold(0, |acc, &u| acc | u) >= 0x80 {
            break;
        }
        n += 16;
    }
    n + units[n..].iter().take_while(|&&u| u < 0x80).count()
}

/// UTF-8 to UTF-16. Runs of ASCII (most of any real text) are widened in bulk.
pub fn utf16(text: &str) -> Vec<u16> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let run = ascii_run(&bytes[i..]);
        out.extend(bytes[i..i + run].iter().map(|&b| u16::from(b)));
        i += run;
        if i >= bytes.len() {
            break;
        }
        let b = bytes[i];
        // `text` is valid UTF-8 and `b` is a lead byte, so its continuation bytes are there.
        let c1 = u32::from(bytes[i + 1] & 0x3F);
        if b < 0xE0 {
            out.push(((u32::from(b & 0x1F) << 6) | c1) as u16);
            i += 2;
            continue;
        }
        let c2 = u32::from(bytes[i + 2] & 0x3F);
        if b < 0xF0 {
            out.push(((u32::from(b & 0x0F) << 12) | (c1 << 6) | c2) as u16);
            i += 3;
            continue;
        }
        let c3 = u32::from(bytes[i + 3] & 0x3F);
        let scalar = (u32::from(b & 0x07) << 18) | (c1 << 12) | (c2 << 6) | c3;
        let v = scalar - 0x1_0000;
        out.push((0xD800 | (v >> 10)) as u16);
        out.push((0xDC00 | (v & 0x3FF)) as u16);
        i += 4;
    }
    out
}

/// UTF-16 code units (a JS string's) to UTF-8; a lone surrogate becomes U+FFFD, as V8 does
/// when it writes a string as UTF-8. The flag is true when nothing had to be replaced, i.e.
/// the text is exactly the JS string.
pub fn from_utf16(units: &[u16]) -> (String, bool) {
    let mut exact = true;
    let mut out = Vec::with_capacity(units.len() + units.len() / 2);
    let mut i = 0;
    while i < units.len() {
        let run = ascii_run_utf16(&units[i..]);
        out.extend(units[i..i + run].iter().map(|&u| u as u8));
        i += run;
        if i >= units.len() {
            break;
        }
        let u = units[i];
        if u < 0x800 {
            out.extend_from_slice(&[0xC0 | (u >> 6) as u8, 0x80 | (u & 0x3F) as u8]);
            i += 1;
        } else if !(0xD800..0xE000).contains(&u) {
            out.extend_from_slice(&[
                0xE0 | (u >> 12) as u8,
                0x80 | ((u >> 6) & 0x3F) as u8,
                0x80 | (u & 0x3F) as u8,
            ]);
            i += 1;
        } else if u < 0xDC00 && i + 1 < units.len() && (0xDC00..0xE000).contains(&units[i + 1]) {
            let scalar =
                0x1_0000 + ((u32::from(u) - 0xD800) << 10) + (u32::from(units[i + 1]) - 0xDC00);
            out.extend_from_slice(&[
                0xF0 | (scalar >> 18) as u8,
                0x80 | ((scalar >> 12) & 0x3F) as u8,
                0x80 | ((scalar >> 6) & 0x3F) as u8,
                0x80 | (scalar & 0x3F) as u8,
            ]);
            i += 2;
        } else {
            out.extend_from_slice("\u{FFFD}".as_bytes());
            exact = false;
            i += 1;
        }
    }
    // Every branch above writes a complete, valid UTF-8 sequence.
    let text = String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    (text, exact)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_matches_std() {
        for text in [
            "",
            "plain",
            "é ü ÿ",
            "ĀŁ → 😀 \u{2028} 中文 \u{10FFFF}",
            "a\u{80}b\u{7FF}c\u{800}d\u{FFFF}",
        ] {
            assert_eq!(
                utf16(text),
                text.encode_utf16().collect::<Vec<_>>(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn from_utf16_matches_std_lossy() {
        let cases: [&[u16]; 6] = [
            &[],
            &[0x61, 0xE9, 0x7FF, 0x800, 0xFFFF],
            &[0xD83D, 0xDE00, 0x41],
            &[0xD83D],
            &[0xDE00, 0xD83D, 0x41, 0xD83D],
            &[0xDBFF, 0xDFFF, 0xD800, 0xDC00],
        ];
        for units in cases {
            let (text, exact) = from_utf16(units);
            assert_eq!(text, String::from_utf16_lossy(units), "{units:x?}");
            assert_eq!(exact, String::from_utf16(units).is_ok(), "{units:x?}");
        }
        let text = "ĀŁ → 😀 \u{2028} 中文 café";
        assert_eq!(from_utf16(&utf16(text)), (text.to_owned(), true));
    }

    #[test]
    fn picks_the_narrowest_representation() {
        assert!(matches!(JsText::new("abc".into()), JsText::Ascii(_)));
        match JsText::new("caf\u{e9} \u{ff}\u{80}".into()) {
            JsText::Latin1(bytes) => assert_eq!(bytes, b"caf\xe9 \xff\x80"),
            _ => panic!("expected Latin-1"),
        }
        assert!(matches!(JsText::new("\u{100}".into()), JsText::Utf16(_)));
    }
}
