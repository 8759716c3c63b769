//! Whether a URI is one an RFC 6570 URI template (a resource template's `uriTemplate`) can
//! expand to: how the gateway finds the server to read a templated resource from. Matching
//! only, no variables taken out; lenient where the RFC is loose (a `{var}` is any non-empty
//! run of characters other than `/`, `?` and `#`; `{+var}` and `{#var}` anything).

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Literal(String),
    /// One `{…}` expression, by its operator (`None` for a simple `{var}`).
    Expression(Option<char>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    /// `None` for a template with an unclosed `{`.
    pub fn parse(template: &str) -> Option<Self> {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let close = rest[open..].find('}')? + open;
            let body = &rest[open + 1..close];
            let op = body
                .chars()
                .next()
                .filter(|c| matches!(c, '+' | '#' | '.' | '/' | ';' | '?' | '&'));
            parts.push(Part::Expression(op));
            rest = &rest[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Some(Self { parts })
    }

    /// Whether `uri` is an expansion of the template.
    pub fn matches(&self, uri: &str) -> bool {
        matches_from(&self.parts, uri)
    }
}

fn matches_from(parts: &[Part], uri: &str) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(text) => uri
            .strip_prefix(text.as_str())
            .is_some_and(|after| matches_from(rest, after)),
        Part::Expression(op) => {
            // The longest run this expression may take, then every shorter one.
            let allowed = |c: char| match op {
                Some('+' | '#') => true,
                Some('?' | '&') => c != '#',
                Some('/') => !matches!(c, '?' | '#'),
                _ => !matches!(c, '/' | '?' | '#'),
            };
            let longest = uri.find(|c| !allowed(c)).unwrap_or(uri.len());
            let least = usize::from(op.is_none());
            (least..=longest)
                .rev()
                .filter(|&n| uri.is_char_boundary(n))
                .any(|n| matches_from(rest, &uri[n..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(template: &str, uri: &str) -> bool {
        UriTemplate::parse(template).unwrap().matches(uri)
    }

    #[test]
    fn simple_variables_stay_in_their_segment() {
        assert!(m("test://template/{id}/data", "test://template/123/data"));
        assert!(!m("test://template/{id}/data", "test://template/1/2/data"));
        assert!(!m("test://template/{id}/data", "test://template//data"));
        assert!(!m("test://template/{id}/data", "test://other/123/data"));
        assert!(m("file:///{path}", "file:///readme"));
        assert!(m("x://{a}-{b}", "x://1-2-3"));
    }

    #[test]
    fn reserved_and_query_expansions() {
        assert!(m("file:///{+path}", "file:///a/b/c.txt"));
        assert!(m("db://t{?q,limit}", "db://t?q=1&limit=2"));
        assert!(m("db://t{?q}", "db://t"));
        assert!(m("a://b{/seg}", "a://b/x/y"));
        assert!(!m("a://b{/seg}", "a://c/x"));
        assert!(UriTemplate::parse("a://{open").is_none());
        assert!(m("exact://uri", "exact://uri"));
        assert!(!m("exact://uri", "exact://uri2"));
    }
}
