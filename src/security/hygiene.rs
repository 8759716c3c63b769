//! Text hygiene: what a text bound for the model must not carry because the model would see
//! what a human reviewing it would not — Unicode tag characters (invisible ASCII), bidi
//! controls, zero-width characters, C0/C1 controls other than `\n` and `\t`, and terminal
//! escape sequences (CSI, OSC, DCS and the other string controls). One pass; a text with none
//! of them is returned as it is, without a copy.
//!
//! Tag characters (U+E0020–U+E007E spell ASCII invisibly) are decoded into
//! [`Cleaned::hidden`] before they are removed, so the detector can read what they said.

pub mod schema;

use std::borrow::Cow;

use serde_json::{Value, json};

/// How many of each class a text had (escape sequences count once each).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hygiene {
    pub tag_chars: usize,
    pub bidi: usize,
    pub zero_width: usize,
    pub controls: usize,
    pub escapes: usize,
}

impl Hygiene {
    pub fn total(&self) -> usize {
        self.tag_chars + self.bidi + self.zero_width + self.controls + self.escapes
    }

    pub fn add(&mut self, other: &Hygiene) {
        self.tag_chars += other.tag_chars;
        self.bidi += other.bidi;
        self.zero_width += other.zero_width;
        self.controls += other.controls;
        self.escapes += other.escapes;
    }

    /// `details.hygiene`: `{ removed, tagChars, bidi, zeroWidth, controls, escapes }`.
    pub fn to_json(&self) -> Value {
        json!({
            "removed": self.total(),
            "tagChars": self.tag_chars,
            "bidi": self.bidi,
            "zeroWidth": self.zero_width,
            "controls": self.controls,
            "escapes": self.escapes,
        })
    }
}

/// A text after [`clean`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cleaned<'a> {
    pub text: Cow<'a, str>,
    pub counts: Hygiene,
    /// What tag characters spelled (empty when there were none).
    pub hidden: String,
}

enum Class {
    Keep,
    Tag(Option<char>),
    Bidi,
    ZeroWidth,
    Control,
    Escape,
}

fn class(c: char) -> Class {
    match c {
        '\n' | '\t' => Class::Keep,
        '\u{1b}' => Class::Escape,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => Class::Control,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}' => {
            Class::Bidi
        }
        '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{180e}' => {
            Class::ZeroWidth
        }
        '\u{e0000}'..='\u{e007f}' => {
            let ascii = c as u32 - 0xe0000;
            Class::Tag(
                (0x20..=0x7e)
                    .contains(&ascii)
                    .then_some(ascii as u8 as char),
            )
        }
        _ => Class::Keep,
    }
}

/// Whether `bytes` may hold anything [`clean`] removes: a C0 byte other than `\n`/`\t`, DEL,
/// or the lead byte of a sequence that can encode C1, bidi, zero-width or tag characters.
fn may_need_cleaning(bytes: &[u8]) -> bool {
    bytes.iter().any(|&b| {
        (b < 0x20 && b != b'\n' && b != b'\t')
            || matches!(b, 0x7f | 0xc2 | 0xd8 | 0xe1 | 0xe2 | 0xef | 0xf3)
    })
}

/// `text` without what the module removes, with the counts.
pub fn clean(text: &str) -> Cleaned<'_> {
    let untouched = || Cleaned {
        text: Cow::Borrowed(text),
        counts: Hygiene::default(),
        hidden: String::new(),
    };
    if !may_need_cleaning(text.as_bytes()) {
        return untouched();
    }
    let mut out = String::with_capacity(text.len());
    let mut counts = Hygiene::default();
    let mut hidden = String::new();
    let mut chars = text.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        match class(c) {
            Class::Keep => out.push(c),
            Class::Tag(ascii) => {
                counts.tag_chars += 1;
                hidden.extend(ascii);
            }
            Class::Bidi => counts.bidi += 1,
            Class::ZeroWidth => counts.zero_width += 1,
            Class::Control => counts.controls += 1,
            Class::Escape => {
                counts.escapes += 1;
                skip_escape(&mut chars);
            }
        }
    }
    if counts.total() == 0 {
        return untouched();
    }
    Cleaned {
        text: Cow::Owned(out),
        counts,
        hidden,
    }
}

/// Consumes the rest of an escape sequence whose ESC was just read (ECMA-48): CSI (`[`
/// parameters, intermediates, one final byte), the string controls OSC (`]`, ended by BEL or
/// ST), DCS (`P`), SOS (`X`), PM (`^`) and APC (`_`) (ended by ST: ESC `\` or U+009C; an
/// unterminated one runs to the end of the text, as a terminal would take it), and the short
/// forms (intermediates, then one final byte).
fn skip_escape(chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>) {
    let Some(&(_, introducer)) = chars.peek() else {
        return;
    };
    match introducer {
        '[' => {
            chars.next();
            while let Some(&(_, c)) = chars.peek() {
                match c {
                    '\u{30}'..='\u{3f}' | '\u{20}'..='\u{2f}' => {
                        chars.next();
                    }
                    '\u{40}'..='\u{7e}' => {
                        chars.next();
                        return;
                    }
                    // Not a CSI character: the sequence ends (broken) before it.
                    _ => return,
                }
            }
        }
        ']' | 'P' | 'X' | '^' | '_' => {
            chars.next();
            let bel_ends = introducer == ']';
            while let Some((_, c)) = chars.next() {
                match c {
                    '\u{7}' if bel_ends => return,
                    '\u{9c}' => return,
                    '\u{1b}' if chars.peek().is_some_and(|&(_, n)| n == '\\') => {
                        chars.next();
                        return;
                    }
                    _ => {}
                }
            }
        }
        '\u{20}'..='\u{2f}' | '\u{30}'..='\u{7e}' => {
            while let Some(&(_, c)) = chars.peek() {
                chars.next();
                if !('\u{20}'..='\u{2f}').contains(&c) {
                    return;
                }
            }
        }
        // ESC before anything else: only the ESC goes.
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(text: &str) -> (String, Hygiene, String) {
        let c = clean(text);
        (c.text.into_owned(), c.counts, c.hidden)
    }

    #[test]
    fn plain_text_is_borrowed() {
        let text = "Plain “quoted” text — with dashes, tabs\tand\nlines. Ünïcödé 🙂";
        assert!(matches!(clean(text).text, Cow::Borrowed(_)));
    }

    #[test]
    fn each_class_is_removed_and_counted() {
        let tags: String = "ignore previous"
            .chars()
            .map(|c| char::from_u32(0xe0000 + c as u32).unwrap())
            .collect();
        let (text, c, hidden) = counts(&format!("a{tags}b"));
        assert_eq!(
            (text.as_str(), c.tag_chars, hidden.as_str()),
            ("ab", 15, "ignore previous")
        );
        let (text, c, _) = counts("x\u{202e}gpj.exe\u{202c}y\u{2066}z");
        assert_eq!((text.as_str(), c.bidi), ("xgpj.exeyz", 3));
        let (text, c, _) = counts("ig\u{200b}no\u{200d}re\u{feff}\u{2060}");
        assert_eq!((text.as_str(), c.zero_width), ("ignore", 4));
        let (text, c, _) = counts("a\u{0}b\rc\u{7f}d\u{85}e\tf\ng");
        assert_eq!((text.as_str(), c.controls), ("abcde\tf\ng", 4));
    }

    #[test]
    fn escape_sequences_go_whole() {
        let (text, c, _) = counts(
            "\u{1b}[31mred\u{1b}[0m \u{1b}]8;;https://evil.example\u{7}link\u{1b}]8;;\u{1b}\\ \u{1b}P1$r0m\u{1b}\\end\u{1b}(B!",
        );
        assert_eq!(text, "red link end!");
        assert_eq!(c.escapes, 6);
        // An unterminated OSC runs to the end; a lone ESC goes alone.
        assert_eq!(counts("ok\u{1b}]0;title").0, "ok");
        assert_eq!(counts("ok\u{1b}").0, "ok");
        // A broken CSI ends before the character that broke it.
        assert_eq!(counts("\u{1b}[12\u{e9}x").0, "\u{e9}x");
    }
}
