//! The look-alike fold tables.
//!
//! OpenClaw folds the text (fullwidth letters to ASCII, angle-bracket
//! look-alikes to `<`/`>`, six invisible characters deleted), runs the marker
//! regexes on the folded copy, and maps match positions back to the original.
//! Production code does not materialise the folded copy: `foldre` compiles
//! the marker regexes into equivalent regexes over the ORIGINAL text, using
//! the tables defined here. The literal fold-then-map algorithm is kept below
//! (test-only) as the reference that `foldre` is checked against.

/// Which fold table to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FoldTable {
    /// openclaw 2026.9.x: fullwidth letters, 14 angle-bracket pairs, and six
    /// invisible characters deleted.
    Current,
    /// Version A: fullwidth letters and 6 angle-bracket pairs, no deletion.
    Legacy,
}

/// Angle-bracket look-alikes in both tables.
const LT_BOTH: [char; 6] = [
    '\u{FF1C}', '\u{2329}', '\u{3008}', '\u{2039}', '\u{27E8}', '\u{FE64}',
];
const GT_BOTH: [char; 6] = [
    '\u{FF1E}', '\u{232A}', '\u{3009}', '\u{203A}', '\u{27E9}', '\u{FE65}',
];
/// Angle-bracket look-alikes added in 2026.x.
const LT_CURRENT: [char; 8] = [
    '\u{00AB}', '\u{300A}', '\u{27EA}', '\u{27EC}', '\u{27EE}', '\u{276C}', '\u{276E}', '\u{02C2}',
];
const GT_CURRENT: [char; 8] = [
    '\u{00BB}', '\u{300B}', '\u{27EB}', '\u{27ED}', '\u{27EF}', '\u{276D}', '\u{276F}', '\u{02C3}',
];
/// Deleted by the 2026.x fold: ZWSP, ZWNJ, ZWJ, WJ, BOM, soft hyphen.
const DELETED: [char; 6] = [
    '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{00AD}',
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fold {
    #[cfg_attr(not(test), allow(dead_code))]
    Keep,
    To(u8),
    Delete,
}

/// Every character the table changes, with what it becomes.
pub(crate) fn foldables(table: FoldTable) -> Vec<(char, Fold)> {
    let mut v = Vec::with_capacity(90);
    for (i, b) in (b'A'..=b'Z').enumerate() {
        let i = i as u32;
        v.extend(char::from_u32(0xFF21 + i).map(|c| (c, Fold::To(b))));
        v.extend(char::from_u32(0xFF41 + i).map(|c| (c, Fold::To(b.to_ascii_lowercase()))));
    }
    v.extend(LT_BOTH.iter().map(|&c| (c, Fold::To(b'<'))));
    v.extend(GT_BOTH.iter().map(|&c| (c, Fold::To(b'>'))));
    if table == FoldTable::Current {
        v.extend(LT_CURRENT.iter().map(|&c| (c, Fold::To(b'<'))));
        v.extend(GT_CURRENT.iter().map(|&c| (c, Fold::To(b'>'))));
        v.extend(DELETED.iter().map(|&c| (c, Fold::Delete)));
    }
    v
}

/// Does `c` fold to `<`?
#[inline]
pub(crate) fn is_lt_like(c: char, table: FoldTable) -> bool {
    c == '<' || LT_BOTH.contains(&c) || (table == FoldTable::Current && LT_CURRENT.contains(&c))
}

/// Offset of the first character at or after `from` (a char boundary) that
/// folds to `<`. SWAR skip over ASCII runs without `<`; only a few UTF-8
/// lead bytes can start a look-alike.
pub(crate) fn find_lt_like(text: &str, from: usize, table: FoldTable) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LT: u64 = 0x3C3C_3C3C_3C3C_3C3C;
    let bytes = text.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        if let Some(chunk) = bytes.get(i..i + 8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            let w = u64::from_le_bytes(w);
            let x = w ^ LT;
            let has_lt = x.wrapping_sub(ONES) & !x & HIGH != 0;
            if !has_lt && w & HIGH == 0 {
                i += 8;
                continue;
            }
        }
        let b = bytes[i];
        match b {
            b'<' => return Some(i),
            // ASCII; continuation bytes are never visited (we step over whole chars).
            0x00..=0xC1 => i += 1,
            // Lead bytes of the look-alikes: U+00AB, U+02C2, U+2xxx, U+30xx, U+FExx/FFxx.
            0xC2 | 0xCB | 0xE2 | 0xE3 | 0xEF => {
                let Some(c) = text.get(i..).and_then(|s| s.chars().next()) else {
                    i += 1;
                    continue;
                };
                if is_lt_like(c, table) {
                    return Some(i);
                }
                i += c.len_utf8();
            }
            0xC3..=0xDF => i += 2,
            0xE0..=0xEF => i += 3,
            _ => i += 4,
        }
    }
    None
}

/// Is `c` deleted by the fold?
#[inline]
pub(crate) fn is_deleted(c: char, table: FoldTable) -> bool {
    table == FoldTable::Current && DELETED.contains(&c)
}

#[cfg(test)]
pub(crate) fn fold_char(c: char, table: FoldTable) -> Fold {
    foldables(table)
        .into_iter()
        .find(|&(k, _)| k == c)
        .map_or(Fold::Keep, |(_, f)| f)
}

#[cfg(test)]
/// Offset of the first non-ASCII byte at or after `from`.
#[inline]
pub(crate) fn next_non_ascii(bytes: &[u8], from: usize) -> Option<usize> {
    let tail = bytes.get(from..)?;
    let mut chunks = tail.chunks_exact(8);
    let mut base = from;
    for chunk in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        if u64::from_ne_bytes(w) & 0x8080_8080_8080_8080 != 0 {
            return chunk.iter().position(|b| *b >= 0x80).map(|i| base + i);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|b| *b >= 0x80)
        .map(|i| base + i)
}

/// The folded text plus the position map (test-only reference).
#[cfg(test)]
pub(crate) struct Folded<'a> {
    orig: &'a str,
    text: std::borrow::Cow<'a, str>,
    /// Sorted checkpoints `(folded_offset, original_offset)`: from a
    /// checkpoint up to the next one, offsets advance together. No entry
    /// means the identity map.
    map: Vec<(usize, usize)>,
}

#[cfg(test)]
impl<'a> Folded<'a> {
    pub(crate) fn new(orig: &'a str, table: FoldTable) -> Self {
        let bytes = orig.as_bytes();
        let mut out: Option<String> = None;
        let mut map: Vec<(usize, usize)> = Vec::new();
        let mut copied = 0; // original offset up to which text is in `out`
        let mut pos = 0;
        while let Some(p) = next_non_ascii(bytes, pos) {
            // `p` is a char boundary: we only ever step over whole chars.
            let Some(c) = orig.get(p..).and_then(|s| s.chars().next()) else {
                break;
            };
            let len = c.len_utf8();
            pos = p + len;
            let f = fold_char(c, table);
            if f == Fold::Keep {
                continue;
            }
            let buf = out.get_or_insert_with(|| String::with_capacity(orig.len()));
            buf.push_str(&orig[copied..p]);
            copied = p + len;
            if let Fold::To(b) = f {
                checkpoint(&mut map, buf.len(), p);
                buf.push(b as char);
            }
            checkpoint(&mut map, buf.len(), p + len);
        }
        let text = match out {
            None => std::borrow::Cow::Borrowed(orig),
            Some(mut buf) => {
                buf.push_str(&orig[copied..]);
                std::borrow::Cow::Owned(buf)
            }
        };
        Folded { orig, text, map }
    }

    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Original offset of the character that produced folded offset `f`
    /// (a character start in the folded text).
    pub(crate) fn orig_start(&self, f: usize) -> usize {
        // Last checkpoint with folded offset <= f.
        let i = self.map.partition_point(|&(cf, _)| cf <= f);
        match i.checked_sub(1).and_then(|i| self.map.get(i)) {
            None => f,
            Some(&(cf, co)) => co + (f - cf),
        }
    }

    /// Original offset just after the character that produced the folded
    /// character ending at `f_end` (exclusive end of a match, `> 0`). A
    /// multi-byte homoglyph such as `＞` contributes its full UTF-8 length;
    /// deleted characters after it are not included.
    pub(crate) fn orig_end(&self, f_end: usize) -> usize {
        if f_end == 0 {
            return self.orig_start(0);
        }
        // The last folded character of a match is ASCII (`>`), one byte.
        let o = self.orig_start(f_end - 1);
        let len = self
            .orig
            .get(o..)
            .and_then(|s| s.chars().next())
            .map_or(0, char::len_utf8);
        o + len
    }
}

#[cfg(test)]
fn checkpoint(map: &mut Vec<(usize, usize)>, f: usize, o: usize) {
    match map.last_mut() {
        Some(last) if last.0 == f => last.1 = o,
        _ => map.push((f, o)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_lt_like() {
        let t = "ab\u{4E2D}\u{1F600}c\u{AB}d<\u{FF1C}\u{2C2}";
        let all: Vec<usize> = std::iter::successors(find_lt_like(t, 0, FoldTable::Current), |&p| {
            find_lt_like(
                t,
                p + t[p..].chars().next().map_or(1, char::len_utf8),
                FoldTable::Current,
            )
        })
        .collect();
        let expect: Vec<usize> = t
            .char_indices()
            .filter(|&(_, c)| is_lt_like(c, FoldTable::Current))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(all, expect);
        assert_eq!(find_lt_like(t, 0, FoldTable::Legacy), t.find('<'));
        let long = format!("{}<", "a".repeat(37));
        assert_eq!(find_lt_like(&long, 0, FoldTable::Legacy), Some(37));
        assert_eq!(find_lt_like(&long, 38, FoldTable::Legacy), None);
        assert_eq!(find_lt_like("", 0, FoldTable::Legacy), None);
    }

    #[test]
    fn table_sizes() {
        assert_eq!(foldables(FoldTable::Legacy).len(), 52 + 12);
        assert_eq!(foldables(FoldTable::Current).len(), 52 + 28 + 6);
        assert_eq!(fold_char('\u{FF45}', FoldTable::Legacy), Fold::To(b'e'));
        assert_eq!(fold_char('\u{AB}', FoldTable::Legacy), Fold::Keep);
        assert_eq!(fold_char('\u{AB}', FoldTable::Current), Fold::To(b'<'));
        assert_eq!(fold_char('\u{FF3F}', FoldTable::Current), Fold::Keep);
    }

    #[test]
    fn identity_when_nothing_folds() {
        let s = "plain \u{1F600} text \u{e9}";
        let f = Folded::new(s, FoldTable::Current);
        assert!(matches!(f.text, std::borrow::Cow::Borrowed(_)));
        assert_eq!(f.orig_start(3), 3);
    }

    #[test]
    fn maps_back_across_folds_and_deletions() {
        // "\u{1F600}" (4 bytes) ZWSP (3) "<" FULLWIDTH-E (3) ">" FULLWIDTH-> (3) SHY (2) "x"
        let s = "\u{1F600}\u{200B}<\u{FF25}>\u{FF1E}\u{AD}x";
        let f = Folded::new(s, FoldTable::Current);
        assert_eq!(f.text(), "\u{1F600}<E>>x");
        let lt = f.text().find('<').unwrap();
        assert_eq!(f.orig_start(lt), s.find('<').unwrap());
        // Folded "<E>>" ends before "x".
        let end = f.text().find('x').unwrap();
        let orig_gt2 = s.find('\u{FF1E}').unwrap();
        assert_eq!(f.orig_end(end), orig_gt2 + 3); // SHY after it survives
        assert_eq!(f.orig_start(end), s.find('x').unwrap());
    }

    #[test]
    fn legacy_table_is_smaller() {
        let s = "\u{AB}\u{200B}\u{FF1C}\u{FF45}";
        assert_eq!(Folded::new(s, FoldTable::Legacy).text(), "\u{AB}\u{200B}<e");
        assert_eq!(Folded::new(s, FoldTable::Current).text(), "<<e");
    }

    #[test]
    fn non_ascii_scan() {
        let mut v = vec![b'a'; 40];
        assert_eq!(next_non_ascii(&v, 0), None);
        v[17] = 0xC3;
        assert_eq!(next_non_ascii(&v, 0), Some(17));
        assert_eq!(next_non_ascii(&v, 17), Some(17));
        assert_eq!(next_non_ascii(&v, 18), None);
        assert_eq!(next_non_ascii(&v, 99), None);
    }
}
