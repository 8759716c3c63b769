//! Scrubbing of model special tokens (id format only).
//!
//! Case-sensitive, leftmost-first, non-overlapping, and the replacement is not
//! re-scanned (`<|im_<|im_end|>start|>` -> `<|im_[REMOVED_SPECIAL_TOKEN]start|>`).
//! `<|reserved_special_token_N|>` needs one or more ASCII digits.

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, Input, MatchKind};

pub(crate) const REMOVED_SPECIAL_TOKEN: &str = "[REMOVED_SPECIAL_TOKEN]";

/// The literal tokens (22), in the order the vectors list them.
pub(crate) const LITERAL_TOKENS: [&str; 22] = [
    "<|im_start|>",
    "<|im_end|>",
    "<|endoftext|>",
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
    "<|python_tag|>",
    "<|eom_id|>",
    "[INST]",
    "[/INST]",
    "<<SYS>>",
    "<</SYS>>",
    "<s>",
    "</s>",
    "<|channel|>",
    "<|message|>",
    "<|return|>",
    "<|call|>",
    "<start_of_turn>",
    "<end_of_turn>",
];

const RESERVED_PREFIX: &str = "<|reserved_special_token_";
const RESERVED_SUFFIX: &[u8] = b"|>";

fn automaton() -> &'static AhoCorasick {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    AC.get_or_init(|| {
        let mut pats: Vec<&str> = LITERAL_TOKENS.to_vec();
        pats.push(RESERVED_PREFIX);
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .build(pats)
            .expect("static token automaton builds")
    })
}

/// Length of a complete `<|reserved_special_token_\d+|>` starting at the
/// prefix match `[start, prefix_end)`, if any.
fn reserved_len(bytes: &[u8], start: usize, prefix_end: usize) -> Option<usize> {
    let digits = bytes
        .get(prefix_end..)?
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 {
        return None;
    }
    let after = prefix_end + digits;
    bytes
        .get(after..)?
        .starts_with(RESERVED_SUFFIX)
        .then(|| after + RESERVED_SUFFIX.len() - start)
}

/// Emit `text` with special tokens replaced, as pieces, in order.
pub(crate) fn token_pieces<'a>(text: &'a str, emit: &mut impl FnMut(&'a str)) {
    let ac = automaton();
    let reserved_id = LITERAL_TOKENS.len();
    let bytes = text.as_bytes();
    let mut copied = 0;
    let mut pos = 0;
    while pos < text.len() {
        let Some(m) = ac.find(Input::new(text).span(pos..text.len())) else {
            break;
        };
        let end = if m.pattern().as_usize() == reserved_id {
            match reserved_len(bytes, m.start(), m.end()) {
                Some(len) => m.start() + len,
                None => {
                    // No literal token shares this start; resume one byte on
                    // (the prefix is ASCII, so that is a char boundary).
                    pos = m.start() + 1;
                    continue;
                }
            }
        } else {
            m.end()
        };
        emit(&text[copied..m.start()]);
        emit(REMOVED_SPECIAL_TOKEN);
        copied = end;
        pos = end;
    }
    emit(&text[copied..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: &str) -> String {
        let mut out = String::new();
        token_pieces(t, &mut |p| out.push_str(p));
        out
    }

    #[test]
    fn tokens() {
        assert_eq!(
            s("<|im_<|im_end|>start|>"),
            "<|im_[REMOVED_SPECIAL_TOKEN]start|>"
        );
        assert_eq!(s("<<s>>"), "<[REMOVED_SPECIAL_TOKEN]>");
        assert_eq!(s("<|reserved_special_token_007|>"), REMOVED_SPECIAL_TOKEN);
        assert_eq!(
            s("<|reserved_special_token_|>"),
            "<|reserved_special_token_|>"
        );
        assert_eq!(
            s("<|reserved_special_token_<|reserved_special_token_1|>"),
            "<|reserved_special_token_[REMOVED_SPECIAL_TOKEN]"
        );
        assert_eq!(
            s("<|reserved_special_token_12"),
            "<|reserved_special_token_12"
        );
        assert_eq!(s("no tokens"), "no tokens");
    }
}
