//! A bridged MCP tool's name, label and description.
//!
//! [`compat_tool_name`], [`tool_label`] and [`tool_description`] are PR #21530's
//! functions, unchanged: nothing is sanitised, truncated or checked for
//! collisions there (`mcp_a_b_c` comes from server `a_b` + tool `c` and from
//! server `a` + tool `b_c` alike).
//!
//! [`assign_tool_names`] gives every tool of every configured server an agent
//! name that providers accept (`^[A-Za-z0-9_-]{1,64}$`) and that no other tool
//! has. Two schemes ([`NameScheme`]):
//!
//! - **Compat** (default): the compat name `mcp_<prefix>_<tool>` is kept whenever
//!   it is provider-safe and no earlier tool (config order, then `tools/list`
//!   order) has it. Otherwise the tool gets a *derived* name: the compat name
//!   sanitised ([`sanitize_name`]: `.`, space, `/` and other ASCII characters
//!   outside `[A-Za-z0-9_-]` become `_`, one per run; Latin letters with
//!   diacritics are transliterated, `é` → `e`, `ß` → `ss`; everything else is
//!   dropped), trailing `_` removed, cut at 55 characters, then `_` and
//!   [`stable_hash8`] of (server, tool), e.g. `mcp_fs_read_file_1a2b3c4d`. A
//!   derived name that is still taken gets `_2`, `_3`, … (cutting the base
//!   further so the whole stays within 64). Valid, unique compat names are
//!   assigned first, so a derived name never displaces one. Uniqueness is exact
//!   (case-sensitive), like the names themselves.
//! - **OpenClaw**: current OpenClaw's bundle-mcp names `<server>__<tool>`: each
//!   fragment trimmed, every UTF-16 unit outside `[A-Za-z0-9_-]` replaced by `-`,
//!   a fragment that does not start with an ASCII letter prefixed with `mcp-`
//!   (server) or `tool-` (tool), the server part cut at 30 characters and made
//!   unique among servers with `-2`, `-3`…, the tool part cut so the whole is
//!   at most 64, and a name already taken (case-insensitively) suffixed `-2`,
//!   `-3`… inside the budget. The server fragment is `toolPrefix ?? server`.
//!
//! The original tool name is never changed for routing: the manager routes by
//! server and the tool's own name.

/// `mcp_${toolPrefix ?? serverName}_${toolName}`. `Some("")` is used as given
/// (`mcp__tool`); `None` stands for `undefined`/`null`.
#[must_use]
pub fn compat_tool_name(server: &str, tool_prefix: Option<&str>, tool: &str) -> String {
    let prefix = tool_prefix.unwrap_or(server);
    let mut s = String::with_capacity(5 + prefix.len() + tool.len());
    s.push_str("mcp_");
    s.push_str(prefix);
    s.push('_');
    s.push_str(tool);
    s
}

/// `MCP: ${serverName}/${toolName}`.
#[must_use]
pub fn tool_label(server: &str, tool: &str) -> String {
    let mut s = String::with_capacity(6 + server.len() + tool.len());
    s.push_str("MCP: ");
    s.push_str(server);
    s.push('/');
    s.push_str(tool);
    s
}

/// `[MCP server: ${serverName}] ${description ?? "No description"}`. `None`
/// stands for `undefined`/`null`; `Some("")` stays empty, giving
/// `"[MCP server: x] "`.
#[must_use]
pub fn tool_description(server: &str, description: Option<&str>) -> String {
    let desc = description.unwrap_or("No description");
    let mut s = String::with_capacity(15 + server.len() + desc.len());
    s.push_str("[MCP server: ");
    s.push_str(server);
    s.push_str("] ");
    s.push_str(desc);
    s
}

/// Longest agent tool name providers accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;
/// Longest server fragment in the OpenClaw scheme.
pub const OPENCLAW_MAX_SERVER_LEN: usize = 30;

/// Why a tool did not get its plain name: it had characters providers reject.
pub const DERIVED_INVALID_CHARACTERS: &str = "invalid characters";
/// Why a tool did not get its plain name: longer than 64 characters.
pub const DERIVED_TOO_LONG: &str = "too long";
/// Why a tool did not get its plain name: both of the above.
pub const DERIVED_INVALID_AND_TOO_LONG: &str = "invalid characters, too long";
/// Why a tool did not get its plain name: an earlier tool (or a reserved name) has it.
pub const DERIVED_COLLISION: &str = "collision";

/// `^[A-Za-z0-9_-]{1,64}$`.
#[must_use]
pub fn is_provider_safe_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// How agent tool names are formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NameScheme {
    /// `mcp_<prefix>_<tool>`, derived only when that is unusable (module docs).
    #[default]
    Compat,
    /// Current OpenClaw's `<server>__<tool>` (module docs).
    OpenClaw,
}

impl NameScheme {
    /// `"compat"` or `"openclaw"` (the suggested JS option values).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "compat" => Some(Self::Compat),
            "openclaw" => Some(Self::OpenClaw),
            _ => None,
        }
    }

    /// The name [`NameScheme::parse`] accepts.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Compat => "compat",
            Self::OpenClaw => "openclaw",
        }
    }
}

/// One configured server and its last-known tools, in `tools/list` order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerTools<'a> {
    /// The config key.
    pub server: &'a str,
    /// `toolPrefix` (`None` = the server name; `Some("")` stays empty).
    pub prefix: Option<&'a str>,
    /// The server's own tool names.
    pub tools: Vec<&'a str>,
}

/// The agent name given to one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssignedName {
    /// Provider-safe, unique among all assigned names.
    pub name: String,
    /// `None` when the scheme's plain name was used; otherwise why not: one of
    /// [`DERIVED_INVALID_CHARACTERS`], [`DERIVED_TOO_LONG`],
    /// [`DERIVED_INVALID_AND_TOO_LONG`], [`DERIVED_COLLISION`].
    pub derived: Option<&'static str>,
}

/// 8 lowercase hex digits of a 32-bit FNV-1a-style hash (64-bit FNV-1a folded
/// to 32 bits) over `server`, a `0xFF` separator byte (never part of UTF-8),
/// and `tool`. Stable across runs, platforms and versions; not std's
/// randomised hasher.
#[must_use]
pub fn stable_hash8(server: &str, tool: &str) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    for &b in server
        .as_bytes()
        .iter()
        .chain(std::iter::once(&0xFFu8))
        .chain(tool.as_bytes())
    {
        h ^= u64::from(b);
        h = h.wrapping_mul(PRIME);
    }
    let folded = ((h >> 32) ^ (h & 0xFFFF_FFFF)) as u32;
    format!("{folded:08x}")
}

/// ASCII for a Latin letter with a diacritic (Latin-1 Supplement and Latin
/// Extended-A); `None` for anything else.
fn transliterate(c: char) -> Option<&'static str> {
    const LATIN1: &[u8; 64] = b"AAAAAA?CEEEEIIIIDNOOOOO?OUUUUY??aaaaaa?ceeeeiiiidnooooo?ouuuuy?y";
    const EXT_A: &[u8; 128] = b"AaAaAaCcCcCcCcDdDdEeEeEeEeEeGgGgGgGgHhHhIiIiIiIiIiIiJjKkkLlLlLlLlLlNnNnNnnNnOoOoOoOoRrRrRrSsSsSsSsTtTtTtUuUuUuUuUuUuWwYyYZzZzZzs";
    const LETTERS: [&str; 52] = [
        "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "L", "M", "N", "O", "P", "Q", "R",
        "S", "T", "U", "V", "W", "X", "Y", "Z", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j",
        "k", "l", "m", "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z",
    ];
    let letter = |b: u8| -> Option<&'static str> {
        match b {
            b'A'..=b'Z' => Some(LETTERS[usize::from(b - b'A')]),
            b'a'..=b'z' => Some(LETTERS[26 + usize::from(b - b'a')]),
            _ => None,
        }
    };
    let cp = u32::from(c);
    match c {
        '\u{C6}' => Some("AE"),
        '\u{E6}' => Some("ae"),
        '\u{DE}' => Some("TH"),
        '\u{FE}' => Some("th"),
        '\u{DF}' => Some("ss"),
        '\u{132}' => Some("IJ"),
        '\u{133}' => Some("ij"),
        '\u{152}' => Some("OE"),
        '\u{153}' => Some("oe"),
        '\u{C0}'..='\u{FF}' => letter(LATIN1[(cp - 0xC0) as usize]),
        '\u{100}'..='\u{17F}' => letter(EXT_A[(cp - 0x100) as usize]),
        _ => None,
    }
}

/// The compat scheme's character mapping: `[A-Za-z0-9_-]` kept; every other
/// ASCII character (`.`, space, `/`, `:`, controls…) and Unicode whitespace
/// becomes `_`, one `_` per run; Latin letters with diacritics are
/// transliterated (`é` → `e`, `ß` → `ss`, `Æ` → `AE`); combining marks and
/// everything else are dropped. The result may be empty.
#[must_use]
pub fn sanitize_name(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut last_replaced = false;
    for c in raw.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
            last_replaced = false;
        } else if c.is_ascii() || c.is_whitespace() {
            if !last_replaced {
                out.push('_');
                last_replaced = true;
            }
        } else if let Some(t) = transliterate(c) {
            out.push_str(t);
            last_replaced = false;
        }
        // Anything else (combining marks, CJK, emoji…) is dropped.
    }
    out
}

/// `s` cut to at most `max` bytes. Only for ASCII strings (every byte is a
/// char boundary); non-ASCII input is cut at the nearest boundary below.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn compat_reason(compat: &str) -> &'static str {
    let bad_chars = !compat
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    let too_long = compat.len() > MAX_TOOL_NAME_LEN;
    match (bad_chars, too_long) {
        (true, true) => DERIVED_INVALID_AND_TOO_LONG,
        (true, false) => DERIVED_INVALID_CHARACTERS,
        (false, true) => DERIVED_TOO_LONG,
        // Provider-safe but taken (an empty name cannot happen: it starts with `mcp_`).
        (false, false) => DERIVED_COLLISION,
    }
}

/// Per first candidate, the suffix number to try next. Names are only ever added to the taken
/// set, so every smaller suffix is still taken: starting there gives the same name as trying
/// `_2`, `_3`… from the start, without the quadratic cost of many tools sharing one name (a
/// server listing 100,000 tools of the same name).
type NextSuffix = std::collections::HashMap<String, u64>;

fn derive_compat(
    server: &str,
    prefix: Option<&str>,
    tool: &str,
    taken: &std::collections::HashSet<String>,
    next: &mut NextSuffix,
) -> String {
    let sanitized = sanitize_name(&compat_tool_name(server, prefix, tool));
    let base = sanitized.trim_end_matches('_');
    let hash = stable_hash8(server, tool);
    // 64 = base (≤ 55) + "_" + 8 hex.
    let head = cut(base, MAX_TOOL_NAME_LEN - 9);
    let first = format!("{head}_{hash}");
    let mut n = next.get(&first).copied().unwrap_or(2);
    let mut candidate = first.clone();
    if n > 2 || taken.contains(&candidate) {
        loop {
            let suffix = format!("_{n}");
            let head = cut(base, MAX_TOOL_NAME_LEN - 9 - suffix.len());
            candidate = format!("{head}_{hash}{suffix}");
            n += 1;
            if !taken.contains(&candidate) {
                break;
            }
        }
        next.insert(first, n);
    }
    candidate
}

fn assign_compat(servers: &[ServerTools<'_>], reserved: &[&str]) -> Vec<Vec<AssignedName>> {
    use std::collections::HashSet;
    let mut taken: HashSet<String> = reserved.iter().map(|r| (*r).to_owned()).collect();
    // Pass 1: every provider-safe compat name that no earlier tool has.
    let mut out: Vec<Vec<Option<AssignedName>>> = servers
        .iter()
        .map(|s| {
            s.tools
                .iter()
                .map(|tool| {
                    let compat = compat_tool_name(s.server, s.prefix, tool);
                    if is_provider_safe_name(&compat) && !taken.contains(&compat) {
                        taken.insert(compat.clone());
                        Some(AssignedName {
                            name: compat,
                            derived: None,
                        })
                    } else {
                        None
                    }
                })
                .collect()
        })
        .collect();
    // Pass 2: derived names for the rest, in the same order.
    let mut next = NextSuffix::new();
    for (s, names) in servers.iter().zip(out.iter_mut()) {
        for (tool, slot) in s.tools.iter().zip(names.iter_mut()) {
            if slot.is_some() {
                continue;
            }
            let compat = compat_tool_name(s.server, s.prefix, tool);
            let name = derive_compat(s.server, s.prefix, tool, &taken, &mut next);
            taken.insert(name.clone());
            *slot = Some(AssignedName {
                name,
                derived: Some(compat_reason(&compat)),
            });
        }
    }
    out.into_iter()
        .map(|v| v.into_iter().flatten().collect())
        .collect()
}

/// OpenClaw's fragment sanitiser. Returns the fragment and whether it differs
/// from `raw`.
fn openclaw_fragment(raw: &str, fallback: &str) -> (String, bool) {
    let trimmed = raw.trim_matches(|c: char| c.is_whitespace() || c == '\u{FEFF}');
    let mut cleaned = String::with_capacity(trimmed.len());
    for c in trimmed.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            cleaned.push(c);
        } else {
            // One `-` per UTF-16 code unit, as JS `replace(/[^…]/g, "-")` does.
            for _ in 0..c.len_utf16() {
                cleaned.push('-');
            }
        }
    }
    let normalized = if cleaned.is_empty() {
        fallback.to_owned()
    } else {
        cleaned
    };
    let safe = if normalized
        .as_bytes()
        .first()
        .is_some_and(u8::is_ascii_alphabetic)
    {
        normalized
    } else {
        format!("{fallback}-{normalized}")
    };
    let changed = safe != raw;
    (safe, changed)
}

fn assign_openclaw(servers: &[ServerTools<'_>], reserved: &[&str]) -> Vec<Vec<AssignedName>> {
    use std::collections::HashSet;
    const SEP: &str = "__";
    let mut used_servers: HashSet<String> = HashSet::new();
    let mut taken: HashSet<String> = reserved.iter().map(|r| r.to_lowercase()).collect();
    // The next suffix per first candidate (see [`NextSuffix`]).
    let mut next_server = NextSuffix::new();
    let mut next_tool = NextSuffix::new();
    let mut out = Vec::with_capacity(servers.len());
    for s in servers {
        let raw_server = s.prefix.unwrap_or(s.server);
        let (frag, server_changed) = openclaw_fragment(raw_server, "mcp");
        let base = cut(&frag, OPENCLAW_MAX_SERVER_LEN).to_owned();
        let server_cut = base.len() < frag.len();
        let mut server_part = base.clone();
        let server_key = base.to_lowercase();
        let mut n = next_server.get(&server_key).copied().unwrap_or(2);
        if n > 2 || used_servers.contains(&server_key) {
            loop {
                let suffix = format!("-{n}");
                let keep = OPENCLAW_MAX_SERVER_LEN.saturating_sub(suffix.len()).max(1);
                server_part = format!("{}{suffix}", cut(&base, keep));
                n += 1;
                if !used_servers.contains(&server_part.to_lowercase()) {
                    break;
                }
            }
            next_server.insert(server_key, n);
        }
        let server_collided = server_part != base;
        used_servers.insert(server_part.to_lowercase());

        let mut names = Vec::with_capacity(s.tools.len());
        for tool in &s.tools {
            let (clean_tool, tool_changed) = openclaw_fragment(tool, "tool");
            let max_tool = MAX_TOOL_NAME_LEN
                .saturating_sub(server_part.len() + SEP.len())
                .max(1);
            let truncated = cut(&clean_tool, max_tool);
            let tool_cut = truncated.len() < clean_tool.len();
            let stem = if truncated.is_empty() {
                "tool"
            } else {
                truncated
            };
            let mut candidate = format!("{server_part}{SEP}{stem}");
            let key = candidate.to_lowercase();
            let mut n = next_tool.get(&key).copied().unwrap_or(2);
            let collided = n > 2 || taken.contains(&key);
            if collided {
                loop {
                    let suffix = format!("-{n}");
                    let keep = max_tool.saturating_sub(suffix.len()).max(1);
                    candidate = format!("{server_part}{SEP}{}{suffix}", cut(stem, keep));
                    n += 1;
                    if !taken.contains(&candidate.to_lowercase()) {
                        break;
                    }
                }
                next_tool.insert(key, n);
            }
            taken.insert(candidate.to_lowercase());
            let changed = server_changed || tool_changed;
            let too_long = server_cut || tool_cut;
            let derived = if collided || server_collided {
                Some(DERIVED_COLLISION)
            } else {
                match (changed, too_long) {
                    (true, true) => Some(DERIVED_INVALID_AND_TOO_LONG),
                    (true, false) => Some(DERIVED_INVALID_CHARACTERS),
                    (false, true) => Some(DERIVED_TOO_LONG),
                    (false, false) => None,
                }
            };
            names.push(AssignedName {
                name: candidate,
                derived,
            });
        }
        out.push(names);
    }
    out
}

/// Agent names for every tool of every server, in the same nesting and order
/// as the input (`result[i][j]` is `servers[i].tools[j]`).
///
/// Pass EVERY configured server (ready or not, with its last-known tools) in
/// config order: a name then depends only on the config and the tool lists,
/// never on which servers happen to be ready.
#[must_use]
pub fn assign_tool_names(
    servers: &[ServerTools<'_>],
    scheme: NameScheme,
) -> Vec<Vec<AssignedName>> {
    assign_tool_names_reserving(servers, scheme, &[])
}

/// [`assign_tool_names`], treating `reserved` (for example the gateway's
/// built-in tool names) as already taken: a tool whose name would be one of
/// them gets a derived name instead. Compat compares exactly, OpenClaw
/// case-insensitively.
#[must_use]
pub fn assign_tool_names_reserving(
    servers: &[ServerTools<'_>],
    scheme: NameScheme,
    reserved: &[&str],
) -> Vec<Vec<AssignedName>> {
    match scheme {
        NameScheme::Compat => assign_compat(servers, reserved),
        NameScheme::OpenClaw => assign_openclaw(servers, reserved),
    }
}

/// A user value quoted in a log line: at most 80 characters, control
/// characters escaped.
fn quote_for_log(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == 80 {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The log line (info level suggested) for a tool whose name was derived, or
/// `None` when it was not:
/// `MCP server '<server>' tool '<tool>' is exposed as '<name>' (<reason>)`.
#[must_use]
pub fn derived_name_message(server: &str, tool: &str, assigned: &AssignedName) -> Option<String> {
    let reason = assigned.derived?;
    Some(format!(
        "MCP server '{}' tool '{}' is exposed as '{}' ({reason})",
        quote_for_log(server),
        quote_for_log(tool),
        assigned.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(compat_tool_name("fs", None, "read"), "mcp_fs_read");
        assert_eq!(compat_tool_name("fs", Some("p"), "read"), "mcp_p_read");
        assert_eq!(compat_tool_name("fs", Some(""), "read"), "mcp__read");
        assert_eq!(compat_tool_name("", Some(""), ""), "mcp__");
        assert_eq!(
            compat_tool_name("a_b", None, "c"),
            compat_tool_name("a", None, "b_c")
        );
    }

    #[test]
    fn labels() {
        assert_eq!(tool_label("org/srv", "t"), "MCP: org/srv/t");
        assert_eq!(tool_label("", ""), "MCP: /");
    }

    #[test]
    fn descriptions() {
        assert_eq!(
            tool_description("x", None),
            "[MCP server: x] No description"
        );
        assert_eq!(tool_description("x", Some("")), "[MCP server: x] ");
        assert_eq!(tool_description("x", Some("  d ")), "[MCP server: x]   d ");
    }
}
