//! PR #21530's tool name, label and description for a bridged MCP tool.
//!
//! Like the original, nothing is sanitised, truncated or checked for
//! collisions: `mcp_a_b_c` comes from server `a_b` + tool `c` and from server
//! `a` + tool `b_c` alike.

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
