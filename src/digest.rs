//! SHA-256 as lowercase hex: what names a cached tool list, a pinned definition's fields and a
//! stored OAuth token file.

/// The SHA-256 of `data`, 64 lowercase hex digits.
pub fn sha256_hex(data: &[u8]) -> String {
    use std::fmt::Write;
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, data);
    let mut out = String::with_capacity(64);
    for b in digest.as_ref() {
        let _ = write!(out, "{b:02x}");
    }
    out
}
