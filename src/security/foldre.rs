//! Compile a marker regex `R` (JS dialect, meant to run on the FOLDED text)
//! into a `regex`-crate pattern `R'` that runs on the ORIGINAL text and
//! reports exactly the original spans OpenClaw computes by folding, matching
//! and mapping positions back.
//!
//! Construction, for a fold table with look-alikes `L` (each folding to one
//! ASCII char) and deleted characters `Z`:
//!
//! * every atom (literal or class) matching the folded-text set `S` becomes
//!   the set of original characters whose fold lies in `S`: `S` minus all
//!   foldable characters, plus each look-alike whose image is in `S`
//!   (`<` -> `[<＜〈…]`, `e` -> `[eｅ]`); a negated class `[^S]` becomes
//!   `[^ preimage(S) ∪ Z ]`. No atom ever matches a character of `Z`;
//! * every atom except the last is followed by `Z*`.
//!
//! As `Z` characters can only be consumed by those `Z*` (and each `Z*` must
//! take the whole run, since the next atom cannot match a `Z`), the paths of
//! `R'` on the original correspond one-to-one, in the same priority order, to
//! the paths of `R` on the folded text. So leftmost-first matches coincide;
//! a match starts at the first original character of its first atom and
//! ends after the original character of its last atom (a multi-byte
//! look-alike included, deleted characters around the match excluded), which
//! is OpenClaw's mapping. A test checks this against the literal
//! fold-and-map reference on random inputs.
//!
//! Supported JS subset (all the marker regexes need): literals, `\s`,
//! escaped punctuation, `[...]`/`[^...]` of those, `(?:...)`, `|`, `?`, `*`,
//! `+`; flag `i` (ASCII-only, as JS without `u`). The pattern must end with
//! a plain atom.

use std::fmt::Write as _;

use super::fold::{Fold, FoldTable, foldables};

/// Ranges of JS `\s` (non-Unicode mode).
const JS_WS: &[(u32, u32)] = &[
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
];

/// Is `c` in JS `\s` (non-Unicode mode)?
pub(crate) fn is_js_space(c: char) -> bool {
    let c = c as u32;
    JS_WS.iter().any(|&(lo, hi)| lo <= c && c <= hi)
}

/// A set of code points as sorted, merged, inclusive ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Set(Vec<(u32, u32)>);

impl Set {
    fn add(&mut self, lo: u32, hi: u32) {
        self.0.push((lo, hi));
        self.normalise();
    }

    fn normalise(&mut self) {
        self.0.sort_unstable();
        let mut out: Vec<(u32, u32)> = Vec::with_capacity(self.0.len());
        for &(lo, hi) in &self.0 {
            match out.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
        self.0 = out;
    }

    fn contains(&self, c: u32) -> bool {
        self.0.iter().any(|&(lo, hi)| lo <= c && c <= hi)
    }

    fn remove(&mut self, c: u32) {
        let mut out = Vec::with_capacity(self.0.len() + 1);
        for &(lo, hi) in &self.0 {
            if c < lo || c > hi {
                out.push((lo, hi));
                continue;
            }
            if lo < c {
                out.push((lo, c - 1));
            }
            if c < hi {
                out.push((c + 1, hi));
            }
        }
        self.0 = out;
    }

    fn to_class(&self, negated: bool) -> String {
        let mut s = String::from(if negated { "[^" } else { "[" });
        for &(lo, hi) in &self.0 {
            let _ = write!(s, "\\x{{{lo:X}}}");
            if hi > lo {
                let _ = write!(s, "-\\x{{{hi:X}}}");
            }
        }
        s.push(']');
        s
    }
}

struct Translator {
    foldables: Vec<(char, Fold)>,
    deleted: Set,
    ignore_case: bool,
}

impl Translator {
    /// Original characters whose fold lies in the folded-text set `s`.
    fn preimage(&self, s: &Set) -> Set {
        let mut s = s.clone();
        if self.ignore_case {
            for b in (b'A'..=b'Z').chain(b'a'..=b'z') {
                if s.contains(u32::from(b)) {
                    let o = u32::from(if b.is_ascii_uppercase() {
                        b.to_ascii_lowercase()
                    } else {
                        b.to_ascii_uppercase()
                    });
                    s.add(o, o);
                }
            }
        }
        let mut p = s.clone();
        for &(c, f) in &self.foldables {
            p.remove(c as u32); // never present in the folded text as itself
            if let Fold::To(b) = f
                && s.contains(u32::from(b))
            {
                p.add(c as u32, c as u32);
            }
        }
        p
    }

    fn atom(&self, out: &mut String, set: &Set, negated: bool) -> usize {
        let class = if negated {
            let mut excluded = self.preimage(set);
            for &(lo, hi) in &self.deleted.0 {
                excluded.add(lo, hi);
            }
            excluded.to_class(true)
        } else {
            self.preimage(set).to_class(false)
        };
        out.push_str("(?:");
        out.push_str(&class);
        let z_at = out.len();
        if !self.deleted.0.is_empty() {
            out.push_str(&self.deleted.to_class(false));
            out.push('*');
        }
        out.push(')');
        z_at
    }
}

fn escape_set(e: char) -> Result<Set, String> {
    let mut s = Set::default();
    match e {
        's' => JS_WS.iter().for_each(|&(lo, hi)| s.add(lo, hi)),
        'n' => s.add(0x0A, 0x0A),
        'r' => s.add(0x0D, 0x0D),
        't' => s.add(0x09, 0x09),
        c if c.is_ascii_punctuation() => s.add(c as u32, c as u32),
        c => return Err(format!("unsupported escape \\{c}")),
    }
    Ok(s)
}

/// Translate the JS regex `source` (flags: only `i`/`g` matter) for `table`.
pub(crate) fn translate_folding(
    source: &str,
    flags: &str,
    table: FoldTable,
) -> Result<String, String> {
    if let Some(f) = flags.chars().find(|f| !matches!(f, 'i' | 'g')) {
        return Err(format!("unsupported flag {f}"));
    }
    let foldables = foldables(table);
    let mut deleted = Set::default();
    for &(c, f) in &foldables {
        if f == Fold::Delete {
            deleted.add(c as u32, c as u32);
        }
    }
    let t = Translator {
        foldables,
        deleted,
        ignore_case: flags.contains('i'),
    };

    let mut out = String::new();
    // Where the `Z*` of the most recent atom starts, while that atom is the
    // last thing emitted.
    let mut last_atom_z: Option<usize> = None;
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        let mut atom_set: Option<(Set, bool)> = None;
        match c {
            '\\' => {
                atom_set = Some((
                    escape_set(chars.next().ok_or("trailing backslash")?)?,
                    false,
                ))
            }
            '[' => {
                let negated = chars.peek() == Some(&'^');
                if negated {
                    chars.next();
                }
                let mut set = Set::default();
                loop {
                    match chars.next().ok_or("unterminated class")? {
                        ']' => break,
                        '\\' => {
                            for &(lo, hi) in
                                &escape_set(chars.next().ok_or("trailing backslash")?)?.0
                            {
                                set.add(lo, hi);
                            }
                        }
                        '-' => return Err("class ranges are unsupported".into()),
                        k => set.add(k as u32, k as u32),
                    }
                }
                atom_set = Some((set, negated));
            }
            '(' => {
                if chars.next() != Some('?') || chars.next() != Some(':') {
                    return Err("only (?: groups are supported".into());
                }
                out.push_str("(?:");
            }
            ')' | '|' | '?' | '*' | '+' => out.push(c),
            '.' | '^' | '$' | '{' | '}' | ']' => return Err(format!("unsupported syntax {c}")),
            c if c.is_ascii() => {
                let mut set = Set::default();
                set.add(c as u32, c as u32);
                atom_set = Some((set, false));
            }
            c => return Err(format!("non-ASCII literal {c:?} is unsupported")),
        }
        last_atom_z = atom_set.map(|(set, negated)| t.atom(&mut out, &set, negated));
    }
    if !t.deleted.0.is_empty() {
        // The last atom must not swallow deleted characters after the match.
        let z_at = last_atom_z.ok_or("the pattern must end with a plain atom")?;
        out.replace_range(z_at..out.len() - 1, "");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::fold::Folded;
    use super::*;

    #[test]
    fn set_ops() {
        let mut s = Set::default();
        s.add(5, 10);
        s.add(11, 12);
        s.add(1, 1);
        assert_eq!(s.0, vec![(1, 1), (5, 12)]);
        s.remove(5);
        s.remove(8);
        s.remove(12);
        assert_eq!(s.0, vec![(1, 1), (6, 7), (9, 11)]);
    }

    #[test]
    fn rejects_unsupported() {
        assert!(translate_folding("a.b", "i", FoldTable::Current).is_err());
        assert!(translate_folding("a*", "i", FoldTable::Current).is_err());
        assert!(translate_folding("a*", "i", FoldTable::Legacy).is_ok());
        assert!(translate_folding("\u{E9}", "", FoldTable::Current).is_err());
    }

    /// Reference: fold, match `R` (plain translation) on the folded text,
    /// map back; versus `R'` on the original.
    type Spans = Vec<(usize, usize)>;

    fn both(
        plain: &regex::Regex,
        ours: &regex::Regex,
        table: FoldTable,
        hay: &str,
    ) -> (Spans, Spans) {
        let folded = Folded::new(hay, table);
        let reference: Vec<_> = plain
            .find_iter(folded.text())
            .map(|m| (folded.orig_start(m.start()), folded.orig_end(m.end())))
            .collect();
        let ours: Vec<_> = ours.find_iter(hay).map(|m| (m.start(), m.end())).collect();
        (reference, ours)
    }

    /// Differential test on random strings over an adversarial alphabet.
    #[test]
    fn matches_fold_then_map_reference() {
        let alphabet: Vec<&str> = vec![
            "<",
            ">",
            "<<<",
            ">>>",
            "\u{FF1C}",
            "\u{FF1E}",
            "\u{AB}",
            "\u{BB}",
            "\u{2329}",
            "\u{232A}",
            "\u{2C2}",
            "\u{2C3}",
            "\u{200B}",
            "\u{FEFF}",
            "\u{AD}",
            "\u{2060}",
            "\u{200D}",
            "END",
            "end",
            "EXTERNAL",
            "\u{FF25}XTERNAL",
            "UNTRUSTED",
            "untru\u{FF53}ted",
            "CONTENT",
            "_",
            " ",
            "\t",
            "\n",
            "\u{3000}",
            "\u{85}",
            " id=",
            "ID=",
            "\u{FF49}d=",
            "i\u{200B}d=",
            "\"",
            "\\",
            "x",
            "\u{1F600}",
            "\u{E9}",
            "\u{17F}",
            "=",
            "<<<EXTERNAL_UNTRUSTED_CONTENT",
            "<<<END_EXTERNAL_UNTRUSTED_CONTENT",
            "\u{FF3F}",
            "\u{FF02}",
        ];
        let mut seed: u64 = 0x5EED_1234_ABCD_0001;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut cases = Vec::new();
        for (table, src) in [
            (FoldTable::Current, super::super::markers::START_JS),
            (FoldTable::Current, super::super::markers::END_JS),
            (FoldTable::Legacy, "<<<EXTERNAL_UNTRUSTED_CONTENT>>>"),
            (FoldTable::Legacy, "<<<END_EXTERNAL_UNTRUSTED_CONTENT>>>"),
        ] {
            let plain = super::super::jsre::compile(src, "gi")
                .unwrap()
                .exact()
                .unwrap()
                .clone();
            let ours = regex::Regex::new(&translate_folding(src, "gi", table).unwrap()).unwrap();
            cases.push((table, src, plain, ours));
        }
        // Marker-shaped strings: each slot picks a variant (exact, look-alike,
        // invisible, whitespace, near-miss), with random noise in between.
        let slots: Vec<Vec<&str>> = vec![
            vec![
                "<",
                "\u{FF1C}",
                "\u{AB}",
                "\u{2329}",
                "\u{2C2}",
                "\u{2770}",
                "<\u{200B}",
                "<<",
            ],
            vec!["<", "\u{FF1C}", "\u{27EA}", "\u{FEFF}<", "<\u{AD}"],
            vec!["<", "\u{FE64}", "\u{276E}", "<<"],
            vec!["", "", " ", "\u{FEFF}", "\u{3000}", "\u{85}", "\n"],
            vec![
                "",
                "",
                "END_",
                "end ",
                "E\u{200B}ND\u{FEFF}_",
                "\u{FF25}ND__",
                "ENDEXTERNAL",
            ],
            vec![
                "EXTERNAL",
                "external",
                "EXT\u{200D}ERNAL",
                "\u{FF45}xternal",
                "EXTERNA\u{17F}",
            ],
            vec![
                "_",
                " _ ",
                "\u{FEFF}",
                "\u{200B}_",
                "\u{FF3F}",
                "\t",
                "\u{85}",
                "_\u{AD}_",
            ],
            vec![
                "UNTRUSTED",
                "untru\u{FF53}ted",
                "UNTRU\u{17F}TED",
                "UN\u{2060}TRUSTED",
            ],
            vec!["_", " ", "\u{FEFF}", "\u{2028}", "-"],
            vec!["CONTENT", "content", "CONTEN\u{FF34}", "CONTENTS"],
            vec![
                "",
                "",
                " id=\"x\"",
                " id=\"",
                " i\u{200B}d=\\\"q\\\"",
                "\u{FEFF}id=\"\"",
                " \u{FF49}\u{FF44}=\"\u{1F600}\"",
                " id=\"a\">>>b\"",
                " id = \"x\"",
            ],
            vec!["", " ", "\u{FEFF}", "\u{3000}\n"],
            vec![">", "\u{FF1E}", "\u{BB}", "\u{232A}", ">\u{200B}"],
            vec![">", "\u{FE65}", "\u{2C3}", "\u{27EF}"],
            vec![">", "\u{203A}", ">>", "\u{1F600}", ""],
        ];
        let noise = [
            "\u{200B}",
            "\u{FEFF}",
            "\u{AD}",
            "\u{1F600}",
            "\u{E9}",
            "x",
            "\"",
            " ",
            "\n",
        ];
        let mut nonempty = 0;
        for round in 0..4000 {
            let mut hay = String::new();
            let markers = 1 + (next() % 3) as usize;
            for _ in 0..markers {
                for _ in 0..(next() % 3) {
                    hay.push_str(alphabet[(next() % alphabet.len() as u64) as usize]);
                }
                for slot in &slots {
                    // Half the time the plain variant, so that many inputs match.
                    let pick = if next() % 2 == 0 {
                        0
                    } else {
                        (next() % slot.len() as u64) as usize
                    };
                    hay.push_str(slot[pick]);
                    if next() % 12 == 0 {
                        hay.push_str(noise[(next() % noise.len() as u64) as usize]);
                    }
                }
            }
            if round % 4 == 0 {
                for _ in 0..(next() % 30) {
                    hay.push_str(alphabet[(next() % alphabet.len() as u64) as usize]);
                }
            }
            for (table, src, plain, re) in &cases {
                let (reference, ours) = both(plain, re, *table, &hay);
                nonempty += usize::from(!reference.is_empty());
                assert_eq!(reference, ours, "{table:?} {src} on {hay:?}");
            }
        }
        assert!(
            nonempty > 500,
            "the generator should produce matches ({nonempty})"
        );
    }
}
