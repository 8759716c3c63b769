//! Translation of the (small) ECMAScript regex subset used by OpenClaw's
//! `external-content.ts` into `regex`-crate syntax with identical semantics.
//!
//! The JS regexes carry no `u` flag, which changes several classes compared
//! with the `regex` crate's Unicode defaults:
//!
//! * `\s` is the ECMAScript WhiteSpace + LineTerminator set: it includes
//!   U+FEFF (BOM) but not U+0085 (NEL) or U+180E.
//! * `.` excludes only `\n`, `\r`, U+2028 and U+2029 (so NEL matches).
//! * `\b`, `\w`, `\d` are ASCII-only.
//! * `i` folds ASCII letters only: `ſ` (U+017F), `ı`, `İ` and the Kelvin sign
//!   never match `s`/`i`/`k`. We therefore wrap ASCII letters in `(?i-u:…)`
//!   (ASCII-only case folding) and never enable the crate's Unicode `(?i)`.
//! * `^` with `m` matches at the start and after `\n`, `\r`, U+2028, U+2029.
//!   The `regex` crate has no look-behind, so a *leading* multiline `^R` is
//!   rewritten as two regexes, `\AR` and `[\n\r\u2028\u2029]R`. The second
//!   consumes the terminator, which changes match spans but not whether a
//!   match exists; such a translation is only used for `is_match`.
//!
//! Anything outside the supported subset is rejected with an error; the
//! patterns are static and a unit test compiles all of them.

/// Body (without brackets) of a class equivalent to JS `\s` (non-Unicode mode).
pub(crate) const JS_WS_BODY: &str =
    r"\t\n\x0B\x0C\r \xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// JS LineTerminator set (what `.` excludes and what multiline `^` follows).
const JS_LT_BODY: &str = r"\n\r\x{2028}\x{2029}";

pub(crate) struct Translated {
    /// One or more `regex`-crate patterns. A single pattern is exact (same
    /// match spans). Several (leading multiline `^`) are exact only for
    /// "does it match anywhere": the JS regex matches iff one of them does.
    pub patterns: Vec<String>,
}

fn push_letter(out: &mut String, c: char, ignore_case: bool) {
    if ignore_case && c.is_ascii_alphabetic() {
        out.push_str("(?i-u:");
        out.push(c);
        out.push(')');
    } else {
        push_literal(out, c);
    }
}

/// `(?i-u:word)`: ASCII-only case folding (the crate's literal optimiser
/// handles this form better than a chain of `[xX]` classes).
fn push_ci_run(out: &mut String, run: &str) {
    out.push_str("(?i-u:");
    out.push_str(run);
    out.push(')');
}

fn push_literal(out: &mut String, c: char) {
    let mut buf = [0u8; 4];
    out.push_str(&regex::escape(c.encode_utf8(&mut buf)));
}

/// Translate one escape (the char after `\`). `in_class` selects the form
/// that is valid inside `[...]`.
fn escape(out: &mut String, e: char, in_class: bool, ignore_case: bool) -> Result<(), String> {
    let class = |out: &mut String, body: &str, neg: bool| {
        if in_class {
            if neg {
                return Err(format!(
                    "negated class escape \\{e} inside a class is unsupported"
                ));
            }
            out.push_str(body);
        } else {
            out.push_str(if neg { "[^" } else { "[" });
            out.push_str(body);
            out.push(']');
        }
        Ok(())
    };
    match e {
        's' => class(out, JS_WS_BODY, false)?,
        'S' => class(out, JS_WS_BODY, true)?,
        'd' => class(out, "0-9", false)?,
        'D' => class(out, "0-9", true)?,
        'w' => class(out, "0-9A-Za-z_", false)?,
        'W' => class(out, "0-9A-Za-z_", true)?,
        'b' if !in_class => out.push_str(r"(?-u:\b)"),
        'B' if !in_class => out.push_str(r"(?-u:\B)"),
        'n' => out.push_str(r"\n"),
        'r' => out.push_str(r"\r"),
        't' => out.push_str(r"\t"),
        'f' => out.push_str(r"\x0C"),
        'v' => out.push_str(r"\x0B"),
        c if c.is_ascii_punctuation() => push_literal(out, c),
        c if c.is_ascii_alphanumeric() => return Err(format!("unsupported escape \\{c}")),
        c => push_letter(out, c, ignore_case),
    }
    Ok(())
}

/// Translate a JS regex `source` with `flags` (only `i`, `m`, `g` are
/// accepted; `g` is irrelevant here).
pub(crate) fn translate(source: &str, flags: &str) -> Result<Translated, String> {
    let ignore_case = flags.contains('i');
    let multiline = flags.contains('m');
    if let Some(f) = flags.chars().find(|f| !matches!(f, 'i' | 'm' | 'g')) {
        return Err(format!("unsupported flag {f}"));
    }
    let mut out = String::with_capacity(source.len() * 4);
    let mut multiline_caret = false;
    let mut chars = source.chars().peekable();
    let mut first = true;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let e = chars.next().ok_or("trailing backslash")?;
                escape(&mut out, e, false, ignore_case)?;
            }
            '.' => {
                out.push_str("[^");
                out.push_str(JS_LT_BODY);
                out.push(']');
            }
            '^' => {
                if multiline {
                    if !first {
                        return Err("multiline ^ is only supported at the start".into());
                    }
                    // Expanded below into `\A...` and `[LT]...`: one
                    // regex with `(?:\A|[LT])` defeats the crate's literal
                    // optimisations (4x slower).
                    multiline_caret = true;
                } else {
                    out.push_str(r"\A");
                }
            }
            '$' => {
                if multiline {
                    return Err("multiline $ is unsupported".into());
                }
                out.push_str(r"\z");
            }
            '[' => {
                out.push('[');
                if chars.peek() == Some(&'^') {
                    chars.next();
                    out.push('^');
                }
                let mut closed = false;
                while let Some(k) = chars.next() {
                    match k {
                        ']' => {
                            closed = true;
                            break;
                        }
                        '\\' => {
                            let e = chars.next().ok_or("trailing backslash")?;
                            escape(&mut out, e, true, ignore_case)?;
                        }
                        // `[a-z]` under `i` would need case-expanded ranges.
                        '-' if ignore_case => {
                            return Err("class ranges under i are unsupported".into());
                        }
                        '-' => out.push('-'),
                        k if ignore_case && k.is_ascii_alphabetic() => {
                            out.push(k.to_ascii_lowercase());
                            out.push(k.to_ascii_uppercase());
                        }
                        k => push_literal(&mut out, k),
                    }
                }
                if !closed {
                    return Err("unterminated class".into());
                }
                out.push(']');
            }
            '(' => {
                out.push('(');
                if chars.peek() == Some(&'?') {
                    chars.next();
                    if chars.next() != Some(':') {
                        return Err("only (?: groups are supported".into());
                    }
                    out.push_str("?:");
                }
            }
            ')' | '|' | '?' | '*' | '+' => out.push(c),
            '{' => {
                // Quantifier `{n}`, `{n,}`, `{n,m}`: copy through verbatim.
                out.push('{');
                for k in chars.by_ref() {
                    if !(k.is_ascii_digit() || k == ',' || k == '}') {
                        return Err("bad quantifier".into());
                    }
                    out.push(k);
                    if k == '}' {
                        break;
                    }
                }
            }
            c if ignore_case && c.is_ascii_alphabetic() => {
                // Gather a run of ASCII letters; a quantifier after the run
                // applies to its last letter only.
                let mut run = String::from(c);
                while let Some(&k) = chars.peek() {
                    if !k.is_ascii_alphabetic() {
                        break;
                    }
                    run.push(k);
                    chars.next();
                }
                if matches!(chars.peek(), Some('?' | '*' | '+' | '{')) && run.len() > 1 {
                    let last = run.pop().unwrap_or('x');
                    push_ci_run(&mut out, &run);
                    push_ci_run(&mut out, last.encode_utf8(&mut [0u8; 4]));
                } else {
                    push_ci_run(&mut out, &run);
                }
            }
            // JS (non-`u`) `i` also folds non-ASCII letters; not needed here.
            c if ignore_case && !c.is_ascii() && c.is_alphabetic() => {
                return Err(format!("non-ASCII letter {c:?} under i is unsupported"));
            }
            c => push_letter(&mut out, c, ignore_case),
        }
        first = false;
    }
    let patterns = if multiline_caret {
        vec![format!(r"\A{out}"), format!("[{JS_LT_BODY}]{out}")]
    } else {
        vec![out]
    };
    Ok(Translated { patterns })
}

/// A compiled JS regex: it matches iff any of `alternatives` does.
pub(crate) struct JsRegex {
    alternatives: Vec<regex::Regex>,
}

impl JsRegex {
    #[cfg(test)]
    pub(crate) fn is_match(&self, hay: &str) -> bool {
        self.is_match_at(hay, 0)
    }

    /// A match starting at `start` or later; `hay` before `start` is context (for `\b`, `^`).
    pub(crate) fn is_match_at(&self, hay: &str, start: usize) -> bool {
        self.alternatives
            .iter()
            .any(|re| re.is_match_at(hay, start))
    }

    /// The single regex, when match positions are exact.
    #[cfg(test)]
    pub(crate) fn exact(&self) -> Option<&regex::Regex> {
        match self.alternatives.as_slice() {
            [re] => Some(re),
            _ => None,
        }
    }
}

/// Compile a JS regex through [`translate`].
pub(crate) fn compile(source: &str, flags: &str) -> Result<JsRegex, String> {
    let t = translate(source, flags)?;
    let alternatives = t
        .patterns
        .iter()
        .map(|p| {
            regex::RegexBuilder::new(p)
                .size_limit(1 << 24)
                .dfa_size_limit(1 << 24)
                .build()
                .map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(JsRegex { alternatives })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(src: &str, flags: &str, hay: &str) -> bool {
        compile(src, flags).unwrap().is_match(hay)
    }

    #[test]
    fn whitespace_is_js() {
        assert!(m(r"a\sb", "", "a\u{FEFF}b"));
        assert!(!m(r"a\sb", "", "a\u{0085}b"));
        assert!(!m(r"a\sb", "", "a\u{180E}b"));
        assert!(m(r"a\sb", "", "a\u{3000}b"));
    }

    #[test]
    fn ascii_case_only() {
        assert!(m("system", "i", "SyStEm"));
        assert!(!m("system", "i", "\u{17F}ystem"));
        assert!(!m("id", "i", "\u{131}d"));
        assert!(!m("k", "i", "\u{212A}"));
        assert!(!m("system", "", "SYSTEM"));
    }

    #[test]
    fn quantifier_binds_to_last_letter() {
        assert!(m("^instructions?:", "", "instruction:"));
        assert!(m("instructions?:", "i", "INSTRUCTION:"));
        assert!(m("instructions?:", "i", "Instructions:"));
        assert!(!m("^(?:instructions?:)", "i", ":"));
    }

    #[test]
    fn dot_and_boundaries() {
        assert!(!m("a.b", "", "a\rb"));
        assert!(!m("a.b", "", "a\u{2028}b"));
        assert!(m("a.b", "", "a\u{85}b"));
        assert!(m(r"\bexec\b", "i", "\u{e9}exec\u{e9}"));
        assert!(!m(r"\bexec\b", "i", "1exec"));
        assert!(!m(r"x\d", "", "x\u{661}"));
    }

    #[test]
    fn multiline_caret() {
        for ok in ["S", "a\nS", "a\rS", "a\u{2028}S", "a\u{2029}S"] {
            assert!(m("^S", "m", ok), "{ok:?}");
        }
        for bad in ["aS", "a\u{85}S", "a\x0BS"] {
            assert!(!m("^S", "m", bad), "{bad:?}");
        }
        assert!(translate("a^", "m").is_err());
    }

    #[test]
    fn rejects_unknown_syntax() {
        assert!(translate(r"\p{L}", "").is_err());
        assert!(translate("(?<n>x)", "").is_err());
        assert!(translate("x", "u").is_err());
        assert!(translate("[a-z]", "i").is_err());
        assert!(translate("\u{E9}", "i").is_err());
        assert!(translate("[a-z]", "").is_ok());
    }
}
