//! Sanitisers emit their output as a sequence of pieces (slices of the input
//! or static replacement strings) so that the wrapper can write straight into
//! its output buffer without intermediate copies. Where one string is wanted
//! ([`sanitize_content`](super::sanitize_content)), [`CowJoiner`] joins them.

use std::borrow::Cow;

/// Joins pieces into a `Cow`: borrowed while at most one piece arrived.
pub(crate) struct CowJoiner<'a> {
    first: Option<&'a str>,
    out: Option<String>,
    capacity: usize,
}

impl<'a> CowJoiner<'a> {
    pub(crate) fn new(capacity: usize) -> Self {
        CowJoiner {
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
        let mut s = CowJoiner::new(3);
        s.push(text);
        assert!(matches!(s.finish(), Cow::Borrowed("abc")));
        let mut s = CowJoiner::new(3);
        s.push("");
        s.push("a");
        s.push("b");
        assert!(matches!(s.finish(), Cow::Owned(ref o) if o == "ab"));
        assert_eq!(CowJoiner::new(0).finish(), "");
    }
}
