//! A look at a JSON-RPC message's top level without parsing it: how deep it nests, its `id`
//! and whether it has a `method`. One pass over the bytes, skipping string contents with a
//! vectorised search; used where a message must be recognised before (or instead of) a parse.

/// An id longer than this is not reported.
pub const MAX_ID_BYTES: usize = 256;

/// What the structural scan of one line found.
#[derive(Debug, Default, PartialEq)]
pub struct Shape {
    /// The deepest nesting reached.
    pub depth: usize,
    /// Where the raw value of the top-level `"id"` member is, if it is a string or a scalar of
    /// at most [`MAX_ID_BYTES`].
    pub id: Option<std::ops::Range<usize>>,
    /// The top-level object has a `"method"` member (a request or a notification).
    pub has_method: bool,
}

/// One pass over a line's JSON structure: nesting depth and the top-level `id` and `method`.
/// It does not validate; on bad JSON it reports what it saw.
pub fn scan(line: &[u8]) -> Shape {
    let mut shape = Shape::default();
    let mut depth = 0usize;
    // At depth 1 in an object: the next string is a key.
    let mut expect_key = false;
    // The top-level key whose value comes next.
    let mut key: Option<std::ops::Range<usize>> = None;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => {
                let end = string_end(line, i + 1);
                if depth == 1 {
                    if expect_key {
                        key = Some(i + 1..end);
                        expect_key = false;
                    } else if let Some(k) = key.take() {
                        top_level_value(&mut shape, &line[k], i..(end + 1).min(line.len()));
                    }
                }
                i = end + 1;
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                shape.depth = shape.depth.max(depth);
                expect_key = depth == 1 && line[i] == b'{';
                if depth == 2 {
                    if let Some(k) = key.take() {
                        if &line[k] == b"method" {
                            shape.has_method = true;
                        }
                    }
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => {
                expect_key = true;
                key = None;
            }
            b' ' | b'\t' | b'\r' | b'\n' | b':' => {}
            _ if depth == 1 => {
                // A scalar value: up to the next delimiter.
                let start = i;
                while i < line.len()
                    && !matches!(line[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\r')
                {
                    i += 1;
                }
                if let Some(k) = key.take() {
                    top_level_value(&mut shape, &line[k], start..i);
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    shape
}

fn top_level_value(shape: &mut Shape, key: &[u8], value: std::ops::Range<usize>) {
    match key {
        b"id" if value.len() <= MAX_ID_BYTES => shape.id = Some(value),
        b"method" => shape.has_method = true,
        _ => {}
    }
}

/// The index of the quote closing a string whose contents start at `from` (or the line's end).
fn string_end(line: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(at) = memchr::memchr2(b'"', b'\\', &line[i.min(line.len())..]) {
        let at = i + at;
        if line[at] == b'"' {
            return at;
        }
        i = at + 2;
    }
    line.len()
}

/// Whether two raw ids (JSON text) name the same request: equal text, or a number and a
/// string holding the same digits (some servers echo numeric ids as strings).
pub fn same_id(a: &[u8], b: &[u8]) -> bool {
    let unquote = |s: &[u8]| -> Vec<u8> {
        match s {
            [b'"', inner @ .., b'"'] => inner.to_vec(),
            other => other.to_vec(),
        }
    };
    a == b || unquote(a) == unquote(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_finds_top_level_members_only() {
        let line = br#"{"params":{"id":5,"method":"x"},"id" : "q" ,"result":[{"method":1}]}"#;
        let shape = scan(line);
        assert_eq!(&line[shape.id.clone().unwrap()], br#""q""#);
        assert!(!shape.has_method);
        assert_eq!(shape.depth, 3);
        let shape = scan(br#"{"id":-12.5e3,"method":{"a":1}}"#);
        assert_eq!(shape.id, Some(6..13));
        assert!(shape.has_method);
    }

    #[test]
    fn ids_compare_across_number_and_string() {
        assert!(same_id(b"7", b"7"));
        assert!(same_id(b"7", br#""7""#));
        assert!(!same_id(b"7", b"8"));
        assert!(same_id(br#""a""#, br#""a""#));
    }
}
