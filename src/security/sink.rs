//! Sanitisers emit their output as a sequence of pieces (slices of the input
//! or static replacement strings) so that the wrapper can write straight into
//! its output buffer without intermediate copies.

use std::borrow::Cow;

/// Collects pieces into a `Cow`: borrowed while at most one piece arrived.
pub(crate) struct CowSink<'a> {
    first: Option<&'a str>,
    out: Option<String>,
    capacity: usize,
}

impl<'a> CowSink<'a> {
    pub(crate) fn new(capacity: usize) -> Self {
        CowSink {
            first: None,
            out: None,
            capacity,
        }
    }

    pub(crate) fn push(&mut self, piece: &'a str) {
        if piece.is_empty() {
            return;
        }
        match (&mut self.out, self.first) {
            (Some(out), _) => out.push_str(piece),
            (None, None) => self.first = Some(piece),
            (None, Some(first)) => {
                let mut out = String::with_capacity(self.capacity.max(first.len() + piece.len()));
                out.push_str(first);
                out.push_str(piece);
                self.out = Some(out);
            }
        }
    }

    pub(crate) fn finish(self) -> Cow<'a, str> {
        match (self.out, self.first) {
            (Some(out), _) => Cow::Owned(out),
            (None, Some(first)) => Cow::Borrowed(first),
            (None, None) => Cow::Borrowed(""),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrows_single_piece() {
        let text = "abc";
        let mut s = CowSink::new(3);
        s.push(text);
        assert!(matches!(s.finish(), Cow::Borrowed("abc")));
        let mut s = CowSink::new(3);
        s.push("");
        s.push("a");
        s.push("b");
        assert!(matches!(s.finish(), Cow::Owned(ref o) if o == "ab"));
        assert_eq!(CowSink::new(0).finish(), "");
    }
}
