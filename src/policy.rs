//! Which tools an agent gets: a server's own `toolFilter` and the manager's
//! `allow` / `deny` lists. Pure functions, no I/O.
//!
//! Two matchers, on purpose different:
//!
//! - [`ToolFilter`] (a server's `toolFilter { include, exclude }`) matches the
//!   server's **own** tool names (as `tools/list` gives them) the way current
//!   OpenClaw's bundle-mcp does: **case-sensitive**, `*` is the only wildcard,
//!   each pattern is trimmed and a blank pattern matches nothing. A non-empty
//!   `include` keeps only the tools it matches (even when every pattern is
//!   blank: then nothing is kept); `exclude` then removes tools; an empty filter
//!   keeps everything.
//! - [`ToolPolicy`] (the manager's `allow` / `deny`) matches **agent** tool names
//!   (`mcp_<prefix>_<tool>` or `<server>__<tool>`) the way OpenClaw's tool policy
//!   does: **case-insensitive**, `*` is the only wildcard, patterns trimmed,
//!   blank patterns dropped, `deny` wins over `allow`, and an empty `allow`
//!   (after dropping blanks) allows everything.
//!
//! Matching is iterative (no recursion, no regex): `O(len(pattern) × len(name))`
//! at worst, on any input.

/// Whether `text` matches `pattern`, where `*` matches any run of characters
/// (including none) and every other character matches itself. Both are given
/// as characters; the comparison is exact.
fn glob_chars(pattern: &[char], text: &[char]) -> bool {
    let (mut p, mut t) = (0usize, 0usize);
    // The last `*` seen and the text position it is currently assumed to cover up to.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    // Let the last `*` swallow one more character and retry.
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// One compiled pattern: its characters (already trimmed and, for the policy,
/// lower-cased).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Glob {
    chars: Vec<char>,
    wildcard: bool,
}

impl Glob {
    fn new(pattern: &str) -> Self {
        let chars: Vec<char> = pattern.chars().collect();
        let wildcard = chars.contains(&'*');
        Self { chars, wildcard }
    }

    fn matches(&self, text: &str) -> bool {
        if self.wildcard {
            let text: Vec<char> = text.chars().collect();
            glob_chars(&self.chars, &text)
        } else {
            self.chars.iter().copied().eq(text.chars())
        }
    }
}

fn trim_pattern(p: &str) -> &str {
    // JS `String.prototype.trim` also strips U+FEFF, which Rust's `trim` keeps.
    p.trim_matches(|c: char| c.is_whitespace() || c == '\u{FEFF}')
}

/// A `toolFilter` pattern against one of a server's own tool names:
/// case-sensitive, `*` only, pattern trimmed, a blank pattern matches nothing.
#[must_use]
pub fn matches_tool_filter_pattern(pattern: &str, tool: &str) -> bool {
    let p = trim_pattern(pattern);
    !p.is_empty() && Glob::new(p).matches(tool)
}

/// An `allow` / `deny` pattern against an agent tool name: case-insensitive,
/// `*` only, pattern trimmed, a blank pattern matches nothing.
#[must_use]
pub fn matches_policy_pattern(pattern: &str, agent_name: &str) -> bool {
    let p = trim_pattern(pattern);
    !p.is_empty() && Glob::new(&p.to_lowercase()).matches(&agent_name.to_lowercase())
}

/// A server's `toolFilter { include?, exclude? }`, in the server's own tool
/// names. `Default` (both empty) keeps every tool. See the module docs for the
/// rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    /// When non-empty, only tools matching one of these are kept.
    pub include: Vec<String>,
    /// Tools matching one of these are removed (after `include`).
    pub exclude: Vec<String>,
}

impl ToolFilter {
    /// A filter from the two pattern lists, kept as given.
    pub fn new<I, E>(include: I, exclude: E) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
        E: IntoIterator,
        E::Item: Into<String>,
    {
        Self {
            include: include.into_iter().map(Into::into).collect(),
            exclude: exclude.into_iter().map(Into::into).collect(),
        }
    }

    /// `true` when the filter keeps every tool (both lists empty).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }

    /// Whether the server's tool `tool` (its own name) is exposed.
    #[must_use]
    pub fn allows(&self, tool: &str) -> bool {
        if !self.include.is_empty()
            && !self
                .include
                .iter()
                .any(|p| matches_tool_filter_pattern(p, tool))
        {
            return false;
        }
        !self
            .exclude
            .iter()
            .any(|p| matches_tool_filter_pattern(p, tool))
    }
}

/// The manager's `allow` / `deny` lists over agent tool names. `Default`
/// allows everything. See the module docs for the rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolPolicy {
    allow: Vec<Glob>,
    deny: Vec<Glob>,
}

impl ToolPolicy {
    /// Compiles the two lists: each pattern trimmed and lower-cased, blank
    /// patterns dropped.
    pub fn new<A, D>(allow: A, deny: D) -> Self
    where
        A: IntoIterator,
        A::Item: AsRef<str>,
        D: IntoIterator,
        D::Item: AsRef<str>,
    {
        fn compile<I: IntoIterator>(items: I) -> Vec<Glob>
        where
            I::Item: AsRef<str>,
        {
            items
                .into_iter()
                .filter_map(|p| {
                    let t = trim_pattern(p.as_ref());
                    (!t.is_empty()).then(|| Glob::new(&t.to_lowercase()))
                })
                .collect()
        }
        Self {
            allow: compile(allow),
            deny: compile(deny),
        }
    }

    /// A policy that allows every tool.
    #[must_use]
    pub fn allow_all() -> Self {
        Self::default()
    }

    /// `true` when the policy allows every name (no effective allow or deny
    /// pattern).
    #[must_use]
    pub fn is_allow_all(&self) -> bool {
        self.allow.is_empty() && self.deny.is_empty()
    }

    /// Whether the agent tool `agent_name` is allowed: not matched by `deny`,
    /// and matched by `allow` unless `allow` is empty.
    #[must_use]
    pub fn allows(&self, agent_name: &str) -> bool {
        if self.is_allow_all() {
            return true;
        }
        let name = agent_name.to_lowercase();
        if self.deny.iter().any(|g| g.matches(&name)) {
            return false;
        }
        self.allow.is_empty() || self.allow.iter().any(|g| g.matches(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_basics() {
        let m = |p: &str, t: &str| {
            let p: Vec<char> = p.chars().collect();
            let t: Vec<char> = t.chars().collect();
            glob_chars(&p, &t)
        };
        assert!(m("*", ""));
        assert!(m("*", "abc"));
        assert!(m("a*c", "abc"));
        assert!(m("a*c", "ac"));
        assert!(!m("a*c", "ab"));
        assert!(m("*b*", "abc"));
        assert!(m("a*b*c", "aXbYbZc"));
        assert!(!m("a*b*c", "aXbYbZ"));
        assert!(m("**", "x"));
        assert!(!m("", "x"));
        assert!(m("", ""));
        assert!(m("a*a*a*a*a*b", &("a".repeat(200) + "b")));
        assert!(!m("a*a*a*a*a*b", &"a".repeat(200)));
    }
}
