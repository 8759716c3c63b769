//! Untrusted-content wrapping and suspicious-pattern detection, byte-identical
//! to OpenClaw's `src/security/external-content.ts` (2026.9.x "id" format and
//! the legacy format PR #21530 tests against). Pure Rust: no I/O, no napi.
//!
//! Pinned by the golden vectors in `tests/fixtures/vectors/`
//! (`tests/security_vectors.rs`).

pub mod detect;
pub mod enhanced;
pub mod hygiene;
pub mod pinning;
pub mod wrap;

mod byte_fold;
mod decoded;
mod fold;
mod foldre;
mod jsre;
mod markers;
pub(crate) mod model;
mod normalize;
mod notice;
mod pieces;
mod tokens;

pub use detect::{detect_alongside, detect_suspicious_patterns};
pub use wrap::{
    WrapFormat, WrapOptions, WrappedParts, new_marker_id, sanitize_content, wrap_external_content,
    wrap_external_content_parts, wrap_external_content_with_id,
};

/// Bytes of text a pass over a long text works on before it moves on, so that the passes that
/// follow it over the same bytes find them in a core's cache (detection, the marker scan).
pub(crate) const CACHE_BLOCK: usize = 256 << 10;

/// The first character boundary of `text` at `at` or after (its end past it).
pub(crate) fn char_boundary(text: &str, at: usize) -> usize {
    (at..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len())
}
