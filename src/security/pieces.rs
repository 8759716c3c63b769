//! Sanitisers emit their output as a sequence of pieces (slices of the input
//! or static replacement strings) so that the wrapper can write straight into
//! its output buffer without intermediate copies. Where one string is wanted
//! ([`sanitize_content`](super::sanitize_content)), [`CowJoiner`] joins them.

use std::borrow::Cow;

/// Joins pieces into a `Cow`: borrowed while the pieces so far are one run of `base` (a
/// sanitiser may emit unchanged text in several pieces).
pub(crate) struct CowJoiner<'a> {
    base: &'a str,
    first: Option<&'a str>,
    out: Option<String>,
    capacity: usize,
}

impl<'a> CowJoiner<'a> {
    pub(crate) fn new(base: &'a str, capacity: usize) -> Self {
        CowJoiner {
            base,
            first: None,
            out: None,
            capacity,
        }
    }

    /// Where `piece` lies in `base`, if it is a slice of it.
    fn offset(&self, piece: &str) -> Option<usize> {
        let at = (piece.as_ptr() as usize).checked_sub(self.base.as_ptr() as usize)?;
        (at + piece.len() <= self.base.len()).then_some(at)
    }

    pub(crate) fn push(&mut self, piece: &'a str) {
        if piece.is_empty() {
            return;
        }
        if let (None, Some(first)) = (&self.out, self.first)
            && let Some(at) = self.offset(first)
            && self.offset(piece) == Some(at + first.len())
        {
            self.first = Some(&self.base[at..at + first.len() + piece.len()]);
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
        let mut s = CowJoiner::new(text, 3);
        s.push(text);
        assert!(matches!(s.finish(), Cow::Borrowed("abc")));
        let mut s = CowJoiner::new(text, 3);
        s.push("");
        s.push("a");
        s.push("b");
        assert!(matches!(s.finish(), Cow::Owned(ref o) if o == "ab"));
        assert_eq!(CowJoiner::new(text, 0).finish(), "");
    }

    #[test]
    fn borrows_adjacent_pieces_of_the_base() {
        let text = "abcdef";
        let mut s = CowJoiner::new(text, 6);
        s.push(&text[..2]);
        s.push(&text[2..2]);
        s.push(&text[2..5]);
        assert!(matches!(s.finish(), Cow::Borrowed("abcde")));
        // Not adjacent, or not from the base: joined.
        let mut s = CowJoiner::new(text, 6);
        s.push(&text[..2]);
        s.push(&text[3..]);
        assert!(matches!(s.finish(), Cow::Owned(ref o) if o == "abdef"));
        let mut s = CowJoiner::new(&text[..3], 6);
        s.push(&text[..3]);
        s.push(&text[3..]);
        assert!(matches!(s.finish(), Cow::Owned(ref o) if o == "abcdef"));
    }
}
