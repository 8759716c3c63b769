//! How the enhanced detector reads a byte, its rules (`enhanced.rs`) and its learned stage
//! (`model.rs`) alike: ASCII letters lowercased, ASCII whitespace a space, every other byte as
//! is. (Runs of spaces reading as one space is each reader's own step.)

/// The byte each byte reads as.
pub(super) const FOLD: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r' => b' ',
            c => c.to_ascii_lowercase(),
        };
        b += 1;
    }
    table
};
