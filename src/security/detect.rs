//! `detectSuspiciousPatterns`: which of OpenClaw's prompt-injection regexes
//! match. The result only feeds a log line; it never blocks.
//!
//! The JS sources (returned verbatim) are translated to the `regex` crate by
//! `jsre`, which reproduces the non-Unicode JS dialect. One regex
//! per pattern beats a `RegexSet` here (the set's lazy DFA cannot use the
//! per-pattern literal prefilters). Only
//! "matches anywhere" is evaluated, which is all the JS function asks
//! (`regex.test(content)`, no `g` flag, so it is stateless).

use std::sync::OnceLock;

use super::jsre;
use super::wrap::WrapFormat;

/// `(source, flags)` in list order. Version A uses the first 12.
pub(crate) const PATTERNS: [(&str, &str); 14] = [
    (
        r"ignore\s+(all\s+)?(previous|prior|above)\s+(instructions?|prompts?)",
        "i",
    ),
    (r"disregard\s+(all\s+)?(previous|prior|above)", "i"),
    (
        r"forget\s+(everything|all|your)\s+(instructions?|rules?|guidelines?)",
        "i",
    ),
    (r"you\s+are\s+now\s+(a|an)\s+", "i"),
    (r"new\s+instructions?:", "i"),
    (r"system\s*:?\s*(prompt|override|command)", "i"),
    (r"\bexec\b.*command\s*=", "i"),
    (r"elevated\s*=\s*true", "i"),
    (r"rm\s+-rf", "i"),
    (r"delete\s+all\s+(emails?|files?|data)", "i"),
    (r"<\/?system>", "i"),
    (r"\]\s*\n\s*\[?(system|assistant|user)\]?:", "i"),
    (
        r"\[\s*(System\s*Message|System|Assistant|Internal)\s*\]",
        "i",
    ),
    (r"^\s*System:\s+", "im"),
];
pub(crate) const LEGACY_PATTERN_COUNT: usize = 12;

/// Speed only: a literal every match of the pattern at that index must
/// contain (case-insensitively), checked first. Used where the pattern's own
/// leading literal is frequent in prose (`rm`, a line terminator).
const REQUIRED: [(usize, &str); 2] = [(8, "-rf"), (13, "System:")];

struct Pattern {
    re: jsre::JsRegex,
    required: Option<jsre::JsRegex>,
}

impl Pattern {
    fn is_match(&self, hay: &str) -> bool {
        self.required.as_ref().is_none_or(|r| r.is_match(hay)) && self.re.is_match(hay)
    }
}

fn compiled() -> &'static [Pattern] {
    static C: OnceLock<Vec<Pattern>> = OnceLock::new();
    C.get_or_init(|| {
        PATTERNS
            .iter()
            .enumerate()
            .map(|(i, (src, flags))| Pattern {
                re: jsre::compile(src, flags).expect("static pattern compiles"),
                required: REQUIRED
                    .iter()
                    .find(|(k, _)| *k == i)
                    .map(|(_, lit)| jsre::compile(lit, "i").expect("static literal compiles")),
            })
            .collect()
    })
}

/// The `source` of every pattern matching `content`, in pattern-list order
/// (14 patterns for the id format, the first 12 for `Legacy`).
pub fn detect_suspicious_patterns(content: &str, format: WrapFormat) -> Vec<&'static str> {
    let n = match format {
        WrapFormat::Id => PATTERNS.len(),
        WrapFormat::Legacy => LEGACY_PATTERN_COUNT,
    };
    let c = compiled();
    (0..n)
        .filter(|&i| c[i].is_match(content))
        .map(|i| PATTERNS[i].0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_patterns_compile() {
        assert_eq!(compiled().len(), 14);
    }

    /// The speed-only required literals really are required: every pattern
    /// source contains its literal verbatim outside any optional part.
    #[test]
    fn required_literals_are_in_the_pattern() {
        assert!(PATTERNS[8].0.ends_with(r"\s+-rf"));
        assert!(PATTERNS[13].0.ends_with(r"\s*System:\s+"));
        for (i, lit) in REQUIRED {
            let p = &compiled()[i];
            assert!(
                p.required
                    .as_ref()
                    .unwrap()
                    .is_match(&lit.to_ascii_uppercase())
            );
            assert!(!p.is_match("rm -r f System :"));
        }
    }

    #[test]
    fn js_dialect_cases() {
        let d = |s: &str| detect_suspicious_patterns(s, WrapFormat::Id);
        assert_eq!(
            d("ignore\u{FEFF}previous instructions"),
            vec![PATTERNS[0].0]
        );
        assert!(d("ignore\u{85}previous instructions").is_empty());
        assert!(d("[\u{17F}ystem]").is_empty());
        assert_eq!(d("hello\rSystem: x"), vec![PATTERNS[13].0]);
        assert!(d("hello\u{85}System: x").is_empty());
        assert_eq!(d("\u{4E2D}exec command=1"), vec![PATTERNS[6].0]);
        assert!(d("exec\rcommand=").is_empty());
        assert_eq!(
            detect_suspicious_patterns("System: prompt", WrapFormat::Legacy),
            vec![PATTERNS[5].0]
        );
    }
}
