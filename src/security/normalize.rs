//! The text the enhanced detector reads: what a model would read, with the disguises a
//! detector would not see through taken off. Unicode tag characters are decoded in place
//! (models read them), invisible characters (zero-width, bidi controls, variation selectors,
//! soft hyphen) are dropped, NFKC folds fullwidth and other compatibility forms, a confusables
//! table maps look-alike letters (Cyrillic, Greek, …) to the Latin ones they imitate, and the
//! result is lowercased with runs of whitespace made one space. One pass plus NFKC; ASCII text
//! skips everything but lowercasing and spacing.

use std::borrow::Cow;

use icu_normalizer::ComposingNormalizerBorrowed;

/// Whether `c` is invisible (and dropped).
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E001F}'
        | '\u{E007F}'..='\u{E0FFF}')
}

/// The Latin letter a look-alike imitates (after NFKC, before lowercasing).
fn confusable(c: char) -> Option<char> {
    Some(match c {
        // Cyrillic
        'а' | 'А' => 'a',
        'в' | 'В' => 'b',
        'е' | 'Е' | 'ё' | 'Ё' => 'e',
        'к' | 'К' => 'k',
        'м' | 'М' => 'm',
        'н' | 'Н' => 'h',
        'о' | 'О' => 'o',
        'р' | 'Р' => 'p',
        'с' | 'С' => 'c',
        'т' | 'Т' => 't',
        'у' | 'У' => 'y',
        'х' | 'Х' => 'x',
        'і' | 'І' => 'i',
        'ј' | 'Ј' => 'j',
        'ѕ' | 'Ѕ' => 's',
        'ԁ' => 'd',
        'ԛ' => 'q',
        'ԝ' | 'Ԝ' => 'w',
        'ӏ' | 'Ӏ' => 'l',
        'ү' | 'Ү' => 'y',
        'һ' => 'h',
        'ɡ' => 'g',
        'ո' => 'n',
        'ս' => 'u',
        'օ' => 'o',
        // Greek
        'α' => 'a',
        'Α' => 'a',
        'Β' | 'β' => 'b',
        'ε' | 'Ε' => 'e',
        'Ζ' => 'z',
        'Η' => 'h',
        'ι' | 'Ι' => 'i',
        'Κ' | 'κ' => 'k',
        'Μ' => 'm',
        'Ν' => 'n',
        'ν' => 'v',
        'ο' | 'Ο' => 'o',
        'Ρ' | 'ρ' => 'p',
        'Τ' | 'τ' => 't',
        'Υ' => 'y',
        'υ' => 'u',
        'Χ' | 'χ' => 'x',
        'ω' => 'w',
        // Latin look-alikes outside ASCII that NFKC keeps
        'ı' => 'i',
        'ȷ' => 'j',
        'ℓ' => 'l',
        'ɑ' => 'a',
        'ɩ' => 'i',
        'ʏ' => 'y',
        'ᴀ' => 'a',
        'ʙ' => 'b',
        'ᴄ' => 'c',
        'ᴅ' => 'd',
        'ᴇ' => 'e',
        'ɢ' => 'g',
        'ʜ' => 'h',
        'ɪ' => 'i',
        'ᴊ' => 'j',
        'ᴋ' => 'k',
        'ʟ' => 'l',
        'ᴍ' => 'm',
        'ɴ' => 'n',
        'ᴏ' => 'o',
        'ᴘ' => 'p',
        'ʀ' => 'r',
        'ꜱ' => 's',
        'ᴛ' => 't',
        'ᴜ' => 'u',
        'ᴠ' => 'v',
        'ᴡ' => 'w',
        'ᴢ' => 'z',
        // Punctuation that hides words
        '‘' | '’' | '‚' | '‛' | '′' | '´' => '\'',
        '“' | '”' | '„' | '‟' | '″' => '"',
        '‐' | '‑' | '‒' | '–' | '—' | '―' | '−' => '-',
        _ => return None,
    })
}

/// Where the first byte of `bytes` outside ASCII is: 32 bytes tested at a time (an OR the
/// compiler vectorises), then the byte found in the block.
fn first_non_ascii(bytes: &[u8]) -> Option<usize> {
    let mut at = 0;
    for block in bytes.chunks(32) {
        if block.iter().fold(0, |any, b| any | b) >= 0x80 {
            return block.iter().position(|b| *b >= 0x80).map(|p| at + p);
        }
        at += block.len();
    }
    None
}

/// Calls `piece` with `text` cut into ASCII spans (`true`) and words (runs between ASCII
/// whitespace) holding another character (`false`), in order: most of any text is ASCII, so
/// the slow paths see only the few words that need them.
fn by_words(text: &str, mut piece: impl FnMut(&str, bool)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let Some(k) = first_non_ascii(&bytes[i..]).map(|p| i + p) else {
            piece(&text[i..], true);
            break;
        };
        let start = bytes[i..k]
            .iter()
            .rposition(|b| b.is_ascii_whitespace())
            .map_or(i, |p| i + p + 1);
        let end = bytes[k..]
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .map_or(bytes.len(), |p| k + p);
        // Word boundaries are ASCII bytes, so every cut is a character boundary.
        if start > i {
            piece(&text[i..start], true);
        }
        piece(&text[start..end], false);
        i = end;
    }
}

/// `text` with Unicode tag characters decoded (a model reads them) and invisible characters
/// dropped.
fn shown(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{E0020}'..='\u{E007E}' => {
                kept.push(char::from_u32(c as u32 - 0xE0000).unwrap_or(' '))
            }
            c if invisible(c) => {}
            c => kept.push(c),
        }
    }
    kept
}

/// `text` as a model reads it: tags decoded, invisible characters dropped, NFKC, look-alike
/// letters mapped to the Latin ones they imitate, other non-ASCII letters lowercased. ASCII is
/// left as it is and look-alikes keep their case, so encoded runs (base64 spelled with Cyrillic
/// letters too) still decode from it; the rule walk lowercases ASCII and folds whitespace as it
/// reads, so [`normalize`] is this text read through that fold. Only words with non-ASCII
/// characters are rewritten; ASCII text is borrowed as is.
pub fn visible(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let nfkc = ComposingNormalizerBorrowed::new_nfkc();
    by_words(text, |piece, ascii| {
        if ascii {
            out.push_str(piece);
            return;
        }
        // Tags decoded and invisible characters dropped before NFKC, so a tag or a zero-width
        // character cannot split what NFKC would join.
        for c in nfkc.normalize(&shown(piece)).chars() {
            // ASCII stays as it is here too (as in ASCII words): a backquote inside an
            // encoded run is part of the encoding, not a quote to fold.
            if c.is_ascii() {
                out.push(c);
                continue;
            }
            match confusable(c) {
                Some(latin) if c.is_uppercase() => out.push(latin.to_ascii_uppercase()),
                Some(latin) => out.push(latin),
                None if c.is_whitespace() => out.push(' '),
                None => out.extend(c.to_lowercase()),
            }
        }
    });
    Cow::Owned(out)
}

/// The folded text of `text` as the rule walk reads it: lowercased, tags decoded, invisible
/// characters dropped, NFKC, look-alikes mapped, runs of whitespace one space, none at either
/// end. What the tests state folding in.
#[cfg(test)]
pub fn normalize(text: &str) -> String {
    let folded = visible(text);
    let mut out = String::with_capacity(folded.len());
    for word in folded.split_ascii_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&word.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn disguises_come_off() {
        assert_eq!(normalize("Ignore  ALL\nprevious"), "ignore all previous");
        assert_eq!(normalize("Ig\u{200B}no\u{200D}re"), "ignore");
        assert_eq!(normalize("Ｉｇｎｏｒｅ"), "ignore");
        assert_eq!(normalize("Іgnоrе"), "ignore"); // Cyrillic І, о, е
        let tags: String = "hi"
            .chars()
            .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
            .collect();
        assert_eq!(normalize(&format!("ok {tags}")), "ok hi");
        assert_eq!(normalize("don’t"), "don't");
        assert_eq!(normalize("a  Ｉｇ\u{200B}ｎｏｒｅ\n b"), "a ignore b");
    }

    #[test]
    fn visible_keeps_case_and_maps_look_alikes() {
        use super::visible;
        assert!(matches!(
            visible("plain ASCII"),
            std::borrow::Cow::Borrowed(_)
        ));
        // Cyrillic А (upper) and а (lower) inside a base64 run, a zero-width space, fullwidth.
        assert_eq!(
            visible("x SWdub3JlIGFsbCBydWxlcw\u{200B}== y"),
            "x SWdub3JlIGFsbCBydWxlcw== y"
        );
        assert_eq!(visible("QUJD\u{410}\u{430} ＡＢ"), "QUJDAa AB");
        // Capital Cyrillic Ue (U+04AE) as Y; other non-ASCII letters lowercased (ASCII is
        // lowercased by the walk, so normalize reads the word whole in lower case).
        assert_eq!(visible("\u{4AE}ES RÈGLES"), "YES RèGLES");
        assert_eq!(super::normalize("RÈGLES"), "règles");
        // ASCII in a word with other characters is kept as is (an Ascii85 backquote).
        assert_eq!(visible("ｂ`c"), "b`c");
    }
}
