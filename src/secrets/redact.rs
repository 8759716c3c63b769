//! Masking of resolved secret values in text that leaves the process (tool
//! results, error messages, logs).
//!
//! Each registered value is searched in several spellings, because a server may
//! echo it back encoded: as is; JSON-string-escaped the way `JSON.stringify` /
//! serde do it; JSON-escaped with all non-ASCII as `\uXXXX` (Python's default);
//! JSON-escaped with `<`, `>`, `&`, U+2028/9 as `\uXXXX` (Go's default); doubly
//! JSON-escaped (JSON text inside a JSON string); percent-encoded as
//! `encodeURIComponent` does (upper- and lower-case hex), RFC 3986 style (only
//! unreserved characters kept) and `application/x-www-form-urlencoded` style
//! (space as `+`); base64-encoded (standard and URL-safe alphabets, padded
//! or not), including inside a longer base64 text such as a Basic
//! `Authorization` header: for each of the three byte alignments the run of
//! base64 characters that depends only on the value is searched (the one or
//! two edge characters shared with neighbouring bytes stay visible). Every
//! occurrence of every spelling is masked, overlapping ones included: where
//! occurrences overlap (two values sharing characters, or a value that repeats
//! itself) their union becomes one [`REDACTED`], so no part of either is left;
//! occurrences that merely touch stay one [`REDACTED`] each.

use std::borrow::Cow;
use std::fmt;
use std::fmt::Write as _;
use std::sync::{Arc, RwLock};

use aho_corasick::AhoCorasick;
use secrecy::zeroize::Zeroizing;
use secrecy::{ExposeSecret, SecretString};

/// The replacement text.
pub const REDACTED: &str = "[REDACTED]";

/// Values shorter than this many bytes are not searched inside text: masking
/// every `a`, `1` or `true` would destroy unrelated output while protecting
/// almost nothing (a value that short is guessable anyway). They are still
/// remembered, and a text that is exactly such a value is masked as a whole.
pub const MIN_REDACT_LEN: usize = 6;

/// A text that ends with at least this many bytes of the start of a registered spelling
/// (optionally followed by `…` or `...`) has that tail masked too: what a cut made elsewhere
/// (an error body shortened for a message) leaves of a secret.
pub const MIN_CUT_PREFIX: usize = 8;

/// A shared, thread-safe set of live secret values. Clones share the set.
///
/// Registered values are held as [`SecretString`] and the derived search
/// patterns in [`Zeroizing`] buffers, so they are wiped when the last clone is
/// dropped. The Aho-Corasick automaton necessarily holds its own copy of the
/// pattern bytes inside its transition tables; that copy is not zeroised.
#[derive(Clone, Default)]
pub struct Redactor {
    inner: Arc<RwLock<Arc<Snapshot>>>,
}

#[derive(Default, Clone)]
struct Snapshot {
    /// Values of at least [`MIN_REDACT_LEN`] bytes.
    values: Vec<SecretString>,
    /// Shorter values: exact-equality only.
    short: Vec<SecretString>,
    /// Every spelling of every value in `values`, deduplicated.
    patterns: Vec<Zeroizing<String>>,
    /// `None` when `patterns` is empty, or (never expected) when the automaton
    /// could not be built; the naive fallback then still masks (fail closed).
    automaton: Option<AhoCorasick>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.snapshot();
        f.debug_struct("Redactor")
            .field("values", &s.values.len())
            .field("short_values", &s.short.len())
            .field("patterns", &s.patterns.len())
            .finish()
    }
}

impl Redactor {
    pub fn new() -> Self {
        Self::default()
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        match self.inner.read() {
            Ok(g) => Arc::clone(&g),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Adds a value to mask. Empty values are ignored; values shorter than
    /// [`MIN_REDACT_LEN`] bytes are only matched as a whole text (see there).
    /// Registering the same value again is a no-op. Rebuilds the automaton.
    pub fn register(&self, value: &SecretString) {
        let v = value.expose_secret();
        if v.is_empty() {
            return;
        }
        let mut guard = match self.inner.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let current: &Snapshot = &guard;
        if v.len() < MIN_REDACT_LEN {
            if current.short.iter().any(|s| s.expose_secret() == v) {
                return;
            }
            let mut next = current.clone();
            next.short.push(value.clone());
            *guard = Arc::new(next);
            return;
        }
        if current.values.iter().any(|s| s.expose_secret() == v) {
            return;
        }
        let mut next = current.clone();
        next.values.push(value.clone());
        for form in spellings(v) {
            if !next.patterns.iter().any(|p| p.as_str() == form.as_str()) {
                next.patterns.push(form);
            }
        }
        // Standard match semantics: `redact` asks for every (overlapping) occurrence.
        next.automaton = AhoCorasick::builder()
            .build(next.patterns.iter().map(|p| p.as_bytes()))
            .ok();
        if next.automaton.is_none() {
            tracing::warn!("secret redactor: automaton build failed; using the slow path");
        }
        *guard = Arc::new(next);
    }

    /// Whether no value has been registered.
    pub fn is_empty(&self) -> bool {
        let s = self.snapshot();
        s.values.is_empty() && s.short.is_empty()
    }

    /// The number of registered values (long and short).
    pub fn len(&self) -> usize {
        let s = self.snapshot();
        s.values.len() + s.short.len()
    }

    /// `text` with every spelling of every registered value replaced by
    /// [`REDACTED`]. Borrowed (no allocation) when nothing matches.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let snap = self.snapshot();
        if !snap.short.is_empty() && snap.short.iter().any(|s| s.expose_secret() == text) {
            return Cow::Owned(REDACTED.to_owned());
        }
        if snap.patterns.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut spans = masked_spans(text, &snap);
        // A cut-off start at the end is found in the text as given, not in the masked text: a
        // shorter value inside that start would otherwise be masked first and hide the rest.
        if let Some(tail) = cut_tail_start(text, &snap.patterns) {
            spans.push(tail);
            spans.sort_unstable();
            let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
            for (start, end) in spans {
                match merged.last_mut() {
                    Some(last) if start < last.1 => last.1 = last.1.max(end),
                    _ => merged.push((start, end)),
                }
            }
            spans = merged;
        }
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for (start, end) in spans {
            out.push_str(&text[last..start]);
            out.push_str(REDACTED);
            last = end;
        }
        out.push_str(&text[last..]);
        Cow::Owned(out)
    }
}

/// Every occurrence of every pattern in `text`, overlapping ones included, as byte spans in
/// order; spans that overlap are merged into one (spans that only touch are not). Patterns
/// are UTF-8, so every span starts and ends on a character boundary.
fn masked_spans(text: &str, snap: &Snapshot) -> Vec<(usize, usize)> {
    // Merges `(start, end)` into `spans`, given that no earlier span ends after `end`.
    fn push(spans: &mut Vec<(usize, usize)>, (mut start, end): (usize, usize)) {
        while let Some(&(s, e)) = spans.last() {
            if start >= e {
                break;
            }
            start = start.min(s);
            spans.pop();
        }
        spans.push((start, end));
    }
    let mut spans: Vec<(usize, usize)> = Vec::new();
    match &snap.automaton {
        // Overlapping matches come in order of their end.
        Some(ac) => {
            for m in ac.find_overlapping_iter(text) {
                push(&mut spans, (m.start(), m.end()));
            }
        }
        None => {
            // Slow path (the automaton could not be built): every start of every pattern.
            let mut all: Vec<(usize, usize)> = Vec::new();
            for p in &snap.patterns {
                let mut from = 0;
                while let Some(i) = text.get(from..).and_then(|t| t.find(p.as_str())) {
                    all.push((from + i, from + i + p.len()));
                    from += i + text[from + i..].chars().next().map_or(1, char::len_utf8);
                }
            }
            all.sort_unstable_by_key(|&(s, e)| (e, s));
            for span in all {
                push(&mut spans, span);
            }
        }
    }
    spans
}

/// Where a cut-off start of some pattern (at least [`MIN_CUT_PREFIX`] bytes, not the whole
/// pattern) ends the text, before an optional `…` or `...`: `(start, end)` of that tail, the
/// longest one found.
fn cut_tail_start(text: &str, patterns: &[Zeroizing<String>]) -> Option<(usize, usize)> {
    let end = text
        .strip_suffix('…')
        .or_else(|| text.strip_suffix("..."))
        .unwrap_or(text)
        .len();
    let body = &text.as_bytes()[..end];
    let mut best: Option<usize> = None;
    for pattern in patterns {
        let p = pattern.as_bytes();
        let longest = (p.len() - 1).min(body.len());
        if longest < MIN_CUT_PREFIX {
            continue;
        }
        // Candidate starts: the tail of `body` no longer than the pattern.
        for start in end - longest..=end - MIN_CUT_PREFIX {
            if best.is_some_and(|b| b <= start) {
                break;
            }
            if body[start] == p[0] && p.starts_with(&body[start..]) && text.is_char_boundary(start)
            {
                best = Some(start);
                break;
            }
        }
    }
    best.map(|start| (start, end))
}

/// All spellings of `v`, deduplicated, `v` itself first.
fn spellings(v: &str) -> Vec<Zeroizing<String>> {
    let json = json_escape(v, JsonStyle::Js);
    let candidates = [
        Zeroizing::new(v.to_owned()),
        json_escape(&json, JsonStyle::Js),
        json,
        json_escape(v, JsonStyle::Ascii),
        json_escape(v, JsonStyle::Go),
        percent_encode(v, Pct::Component, true),
        percent_encode(v, Pct::Component, false),
        percent_encode(v, Pct::Rfc3986, true),
        percent_encode(v, Pct::Form, true),
    ];
    let mut out: Vec<Zeroizing<String>> = Vec::with_capacity(candidates.len() + 8);
    for c in candidates.into_iter().chain(base64_spellings(v)) {
        if !out.iter().any(|o| o.as_str() == c.as_str()) {
            out.push(c);
        }
    }
    out
}

/// Shortest base64 run searched for: shorter runs would match unrelated text
/// too often.
const MIN_BASE64_CORE: usize = 8;

/// Base64 spellings of `v`: the whole encoding with and without padding (standard and
/// URL-safe alphabets), and for each alignment 0..3 inside a longer byte string, the
/// characters that encode only bytes of `v`.
fn base64_spellings(v: &str) -> Vec<Zeroizing<String>> {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};

    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(8);
    let whole = Zeroizing::new(STANDARD.encode(bytes));
    for shift in 0..3usize {
        let mut shifted = Zeroizing::new(Vec::with_capacity(shift + bytes.len()));
        shifted.resize(shift, 0u8);
        shifted.extend_from_slice(bytes);
        let enc = Zeroizing::new(STANDARD_NO_PAD.encode(&shifted[..]));
        // Character i covers bits [6i, 6i + 6); it depends on `v` alone when
        // those bits lie inside bytes shift..shift + len.
        let first = (8 * shift).div_ceil(6);
        let end = (8 * (shift + bytes.len())) / 6; // exclusive
        if end > first && end - first >= MIN_BASE64_CORE {
            out.push(Zeroizing::new(enc[first..end].to_owned()));
        }
    }
    if whole.len() >= MIN_BASE64_CORE {
        // Without padding, the last character of the whole encoding holds the value's last
        // 2 or 4 bits (the rest zero); the core above stops before it.
        let unpadded = whole.trim_end_matches('=');
        if unpadded.len() < whole.len() {
            out.push(Zeroizing::new(unpadded.to_owned()));
        }
        out.push(whole);
    }
    // The URL-safe alphabet differs only in '+' → '-' and '/' → '_'.
    let url_safe: Vec<Zeroizing<String>> = out
        .iter()
        .filter(|s| s.contains(['+', '/']))
        .map(|s| {
            let mut u = Zeroizing::new(String::with_capacity(s.len()));
            for c in s.chars() {
                u.push(match c {
                    '+' => '-',
                    '/' => '_',
                    c => c,
                });
            }
            u
        })
        .collect();
    out.extend(url_safe);
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum JsonStyle {
    /// `JSON.stringify` / serde_json.
    Js,
    /// Python `json.dumps` default: every non-ASCII character as `\uXXXX`.
    Ascii,
    /// Go `encoding/json` default: `<`, `>`, `&`, U+2028, U+2029 as `\uXXXX`.
    Go,
}

/// The body (without quotes) of `s` as a JSON string literal.
fn json_escape(s: &str, style: JsonStyle) -> Zeroizing<String> {
    // Worst case: every byte of a 1-byte char becomes `\u00XX` (6 bytes); sized
    // so the buffer never reallocates (which would leave an unzeroised copy).
    let mut out = Zeroizing::new(String::with_capacity(s.len() * 6));
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => push_u_escape(&mut out, c),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' if style == JsonStyle::Go => {
                push_u_escape(&mut out, c)
            }
            c if !c.is_ascii() && style == JsonStyle::Ascii => push_u_escape(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

fn push_u_escape(out: &mut Zeroizing<String>, c: char) {
    let mut units = [0u16; 2];
    for u in c.encode_utf16(&mut units) {
        let _ = write!(out, "\\u{u:04x}");
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pct {
    /// `encodeURIComponent`: keeps `A-Z a-z 0-9 - _ . ! ~ * ' ( )`.
    Component,
    /// RFC 3986 unreserved only: keeps `A-Z a-z 0-9 - _ . ~`.
    Rfc3986,
    /// Form encoding (Python `quote_plus`): RFC 3986 plus space as `+`.
    Form,
}

fn percent_encode(s: &str, style: Pct, upper: bool) -> Zeroizing<String> {
    // Sized for the worst case so the buffer never reallocates (a reallocation
    // would leave an unzeroised copy behind).
    let mut out = Zeroizing::new(String::with_capacity(s.len() * 3));
    for &b in s.as_bytes() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~')
            || (style == Pct::Component && matches!(b, b'!' | b'*' | b'\'' | b'(' | b')'));
        if keep {
            out.push(b as char);
        } else if b == b' ' && style == Pct::Form {
            out.push('+');
        } else if upper {
            let _ = write!(out, "%{b:02X}");
        } else {
            let _ = write!(out, "%{b:02x}");
        }
    }
    out
}

#[cfg(test)]
mod base64_tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

    #[test]
    fn base64_spellings_are_masked_at_every_alignment() {
        let secret = "s3cr3t/value+with?odd>bytes";
        let r = Redactor::new();
        r.register(&SecretString::from(secret));
        for prefix in ["", "u", "us", "user:"] {
            let enc = STANDARD.encode(format!("{prefix}{secret}"));
            let out = r.redact(&enc);
            assert!(out.contains(REDACTED), "{prefix:?}: {out}");
            // At most the 2 edge characters on each side survive.
            let visible = out.replace(REDACTED, "");
            assert!(
                visible.len() <= prefix.len() * 4 / 3 + 2 + 4,
                "{prefix:?}: {out}"
            );
        }
        let url = URL_SAFE_NO_PAD.encode(secret);
        assert_eq!(r.redact(&url), REDACTED);
        assert_eq!(r.redact(&STANDARD.encode(secret)), REDACTED);
        // Values below MIN_REDACT_LEN get no patterns at all, base64 included.
        let short = Redactor::new();
        short.register(&SecretString::from("abcd"));
        assert_eq!(short.redact("YWJjZA=="), "YWJjZA==");
    }
}

#[cfg(test)]
mod cut_tests {
    use super::*;

    fn redactor(value: &str) -> Redactor {
        let r = Redactor::new();
        r.register(&SecretString::from(value.to_owned()));
        r
    }

    #[test]
    fn a_cut_off_start_of_a_secret_at_the_end_is_masked() {
        let r = redactor("ghp_0123456789abcdefghij");
        assert_eq!(
            r.redact("Authorization=Bearer ghp_0123456789abcde…"),
            "Authorization=Bearer [REDACTED]…"
        );
        assert_eq!(r.redact("x ghp_01234567..."), "x [REDACTED]...");
        assert_eq!(r.redact("x ghp_01234567"), "x [REDACTED]");
        // Shorter than MIN_CUT_PREFIX, or not at the end: left alone.
        assert_eq!(r.redact("x ghp_012…"), "x ghp_012…");
        assert_eq!(
            r.redact("ghp_0123456789 and more"),
            "ghp_0123456789 and more"
        );
        // Percent-encoded and base64 spellings are cut the same way.
        let r = redactor("tok/with+chars=0123456789");
        assert_eq!(r.redact("q=tok%2Fwith%2Bch…"), "q=[REDACTED]…");
    }
}
