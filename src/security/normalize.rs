//! The text the enhanced detector reads: what a model would read, with the disguises a
//! detector would not see through taken off. Unicode tag characters are decoded in place
//! (models read them), invisible characters (zero-width, bidi controls, variation selectors,
//! soft hyphen) are dropped, NFKC folds fullwidth and other compatibility forms, a confusables
//! table maps look-alike letters (Cyrillic, Greek, …) to the Latin ones they imitate, and the
//! result is lowercased with runs of whitespace made one space. One pass plus NFKC; ASCII text
//! skips everything but lowercasing and spacing.

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
        'ү' => 'y',
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
        '‘' | '’' | '‚' | '‛' | '′' | '`' | '´' => '\'',
        '“' | '”' | '„' | '‟' | '″' => '"',
        '‐' | '‑' | '‒' | '–' | '—' | '―' | '−' => '-',
        _ => return None,
    })
}

/// Lowercases `c` into `out` and collapses whitespace; `space` says whether the last char
/// written was a space.
fn push(out: &mut String, c: char, space: &mut bool) {
    if c.is_whitespace() {
        if !*space && !out.is_empty() {
            out.push(' ');
        }
        *space = true;
        return;
    }
    *space = false;
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
    } else {
        out.extend(c.to_lowercase());
    }
}

/// The folded text of `text` (see the module docs). ASCII spans (most of any text) go through
/// one mapping pass the compiler vectorises; a word holding other characters is folded whole
/// by the slow path.
pub fn normalize(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let Some(k) = bytes[i..].iter().position(|b| *b >= 0x80).map(|p| i + p) else {
            push_ascii(&mut out, &bytes[i..]);
            break;
        };
        // The word holding byte k: from after the last ASCII whitespace before it to the next.
        let start = bytes[i..k]
            .iter()
            .rposition(|b| b.is_ascii_whitespace())
            .map_or(i, |p| i + p + 1);
        let end = bytes[k..]
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .map_or(bytes.len(), |p| k + p);
        push_ascii(&mut out, &bytes[i..start]);
        let mut space = out.last().is_none_or(|b| *b == b' ');
        let mut folded = String::with_capacity(end - start);
        fold_word(&text[start..end], &mut folded, &mut space);
        out.extend_from_slice(folded.as_bytes());
        i = end;
    }
    if out.last() == Some(&b' ') {
        out.pop();
    }
    // Whole characters only were written.
    String::from_utf8(out).unwrap_or_default()
}

/// Appends the ASCII `span` lowercased, every whitespace byte a space, runs of spaces (also
/// across the end of `out`) made one, none at the start.
fn push_ascii(out: &mut Vec<u8>, span: &[u8]) {
    if span.is_empty() {
        return;
    }
    let mapped: Vec<u8> = span
        .iter()
        .map(|&b| match b {
            b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r' => b' ',
            b => b.to_ascii_lowercase(),
        })
        .collect();
    let mut rest = &mapped[..];
    if out.last().is_none_or(|b| *b == b' ') {
        while let Some(&b' ') = rest.first() {
            rest = &rest[1..];
        }
    }
    while let Some(at) = memchr::memmem::find(rest, b"  ") {
        out.extend_from_slice(&rest[..=at]);
        rest = &rest[at..];
        while let Some(&b' ') = rest.first() {
            rest = &rest[1..];
        }
    }
    out.extend_from_slice(rest);
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

/// `text` as a model reads it but with its case and letters kept (tags decoded, invisible
/// characters dropped, NFKC): what encoded runs are looked for in. ASCII text is returned as is.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() {
        return std::borrow::Cow::Borrowed(text);
    }
    let kept = shown(text);
    std::borrow::Cow::Owned(
        ComposingNormalizerBorrowed::new_nfkc()
            .normalize(&kept)
            .into_owned(),
    )
}

/// The slow path for a word with non-ASCII characters (which may hold Unicode spaces too).
fn fold_word(word: &str, out: &mut String, space: &mut bool) {
    // Tags decoded and invisible characters dropped before NFKC, so a tag or a zero-width
    // character cannot split what NFKC would join.
    let visible = shown(word);
    let folded = ComposingNormalizerBorrowed::new_nfkc().normalize(&visible);
    for c in folded.chars() {
        let c = confusable(c).unwrap_or(c);
        push(out, c, space);
    }
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
    }
}
