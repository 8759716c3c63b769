//! With `tools` (each server's tool names as it lists them): what the manager's naming
//! ([`crate::bridge::assign_tool_names`], what `manager/names` runs over the enabled servers in
//! config order, after each server's `toolFilter`) does to them.
//!
//! The manager never offers a name providers reject and never offers two tools under one
//! name: it renames instead (the module docs of `bridge::naming`). So:
//! - `tool-name-unsafe` (warning): the scheme's plain name (`mcp_<prefix>_<tool>`, or
//!   `<server>__<tool>`) is not `^[a-zA-Z0-9_-]{1,64}$`, and the tool is offered under a
//!   derived name instead;
//! - `tool-name-collision` (warning): the plain name is one an earlier tool (config order, then
//!   list order) already has, and this one is offered under a derived name; nothing is
//!   dropped, but the name depends on the order.

use super::{Finding, Severity, quoted, server_path};
use crate::bridge::naming::{DERIVED_COLLISION, MAX_TOOL_NAME_LEN};
use crate::bridge::{AssignedName, NameScheme, ServerTools, assign_tool_names, compat_tool_name};
use crate::config::ServerConfig;

/// The scheme's name for the tool were it alone: what the operator expects to see.
fn plain_name(server: &ServerConfig, tool: &str, scheme: NameScheme) -> String {
    match scheme {
        NameScheme::Compat => compat_tool_name(&server.name, server.tool_prefix.as_deref(), tool),
        NameScheme::OpenClaw => {
            let alone = ServerTools {
                server: &server.name,
                prefix: server.tool_prefix.as_deref(),
                tools: vec![tool],
            };
            let assigned = assign_tool_names(&[alone], scheme);
            let name = &assigned[0][0];
            if name.derived.is_some() {
                format!(
                    "{}__{tool}",
                    server.tool_prefix.as_deref().unwrap_or(&server.name)
                )
            } else {
                name.name.clone()
            }
        }
    }
}

/// `(server index, finding)` for every tool whose name the manager changes.
pub(super) fn check(
    servers: &[&ServerConfig],
    tools: &[(String, Vec<String>)],
    scheme: NameScheme,
) -> Vec<(usize, Finding)> {
    // The manager names over its enabled servers, in config order.
    let enabled: Vec<(usize, &ServerConfig)> = servers
        .iter()
        .enumerate()
        .filter(|(_, s)| s.enabled)
        .map(|(at, s)| (at, *s))
        .collect();
    let listed: Vec<Vec<&str>> = enabled
        .iter()
        .map(|(_, s)| {
            tools
                .iter()
                .find(|(name, _)| *name == s.name)
                .map(|(_, list)| {
                    list.iter()
                        .map(String::as_str)
                        .filter(|t| s.tool_filter.allows(t))
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    let inputs: Vec<ServerTools<'_>> = enabled
        .iter()
        .zip(&listed)
        .map(|((_, s), list)| ServerTools {
            server: &s.name,
            prefix: s.tool_prefix.as_deref(),
            tools: list.clone(),
        })
        .collect();
    let assigned: Vec<Vec<AssignedName>> = assign_tool_names(&inputs, scheme);
    let same = |a: &str, b: &str| match scheme {
        NameScheme::Compat => a == b,
        NameScheme::OpenClaw => a.eq_ignore_ascii_case(b),
    };

    let mut out = Vec::new();
    for (i, ((at, server), names)) in enabled.iter().zip(&assigned).enumerate() {
        for (j, name) in names.iter().enumerate() {
            let Some(reason) = name.derived else { continue };
            let tool = inputs[i].tools[j];
            let plain = plain_name(server, tool, scheme);
            let field = format!("{}.toolPrefix", server_path(server));
            let finding = if reason == DERIVED_COLLISION {
                // Who has the name: the first tool (config order, list order) assigned it.
                let holder =
                    enabled
                        .iter()
                        .zip(&assigned)
                        .enumerate()
                        .find_map(|(k, (_, names))| {
                            names
                                .iter()
                                .position(|n| same(&n.name, &plain))
                                .map(|l| (k, l))
                        });
                let other = match holder {
                    Some((k, l)) => format!(
                        "tool {} of server {}",
                        quoted(inputs[k].tools[l]),
                        quoted(&enabled[k].1.name)
                    ),
                    None => {
                        "another server's tools (the server part of the name is taken)".to_owned()
                    }
                };
                Finding::new(
                    Severity::Warning,
                    "tool-name-collision",
                    Some(&server.name),
                    Some(field),
                    format!(
                        "tool {} of server {} would be named {}, which {other} already has: the \
                         manager keeps the first one (config order, then list order) and offers \
                         this one as {} instead (renamed, not dropped), so agents and allow/deny \
                         lists see a name that changes if the other tool goes away",
                        quoted(tool),
                        quoted(&server.name),
                        quoted(&plain),
                        quoted(&name.name)
                    ),
                    format!(
                        "give one of the two servers its own \"toolPrefix\" (e.g. \"toolPrefix\": \
                         \"{}_2\" on this one), or leave one tool out with \"toolFilter\": {{ \
                         \"exclude\": [\"{}\"] }}",
                        server.tool_prefix.as_deref().unwrap_or(&server.name),
                        tool.replace('"', "\\\"")
                    ),
                )
            } else {
                Finding::new(
                    Severity::Warning,
                    "tool-name-unsafe",
                    Some(&server.name),
                    Some(field),
                    format!(
                        "tool {} of server {} would be named {}, which OpenAI and Anthropic \
                         reject (names must match ^[a-zA-Z0-9_-]{{1,{MAX_TOOL_NAME_LEN}}}$: \
                         {reason}); the manager offers it as {} instead",
                        quoted(tool),
                        quoted(&server.name),
                        quoted(&plain),
                        quoted(&name.name)
                    ),
                    "nothing breaks: agents call it by the name shown; for a readable name set a \
                     shorter \"toolPrefix\" on this server (names over 64 characters), or hide \
                     the tool with \"toolFilter\": { \"exclude\": [...] }"
                        .to_owned(),
                )
            };
            out.push((*at, finding));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;
    use serde_json::{Value, json};

    fn servers(config: Value) -> Vec<ServerConfig> {
        config::parse_manager_config(&json!({ "servers": config }))
            .unwrap()
            .config
            .servers
    }

    fn tools(list: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
        list.iter()
            .map(|(s, t)| ((*s).to_owned(), t.iter().map(|t| (*t).to_owned()).collect()))
            .collect()
    }

    #[test]
    fn unsafe_names_are_reported_with_the_name_the_manager_gives() {
        let s = servers(json!({"fs": {"command": "x"}}));
        let refs: Vec<&ServerConfig> = s.iter().collect();
        let long = "a".repeat(70);
        let found = check(
            &refs,
            &tools(&[("fs", &["read_file", "read.file", &long])]),
            NameScheme::Compat,
        );
        let codes: Vec<_> = found.iter().map(|(_, f)| f.code).collect();
        assert_eq!(codes, ["tool-name-unsafe", "tool-name-unsafe"]);
        assert!(
            found[0].1.message.contains("'mcp_fs_read.file'"),
            "{}",
            found[0].1.message
        );
        assert!(found[0].1.message.contains("invalid characters"));
        assert!(
            found[0]
                .1
                .message
                .contains("offers it as 'mcp_fs_read_file_"),
            "{}",
            found[0].1.message
        );
        assert!(found[1].1.message.contains("too long"));
    }

    #[test]
    fn collisions_name_both_tools_and_what_the_manager_does() {
        let s = servers(
            json!({"a_b": {"command": "x"}, "a": {"command": "x"}, "off": {"command": "x", "enabled": false}}),
        );
        let refs: Vec<&ServerConfig> = s.iter().collect();
        let found = check(
            &refs,
            &tools(&[("a_b", &["c"]), ("a", &["b_c", "ok"]), ("off", &["c"])]),
            NameScheme::Compat,
        );
        assert_eq!(found.len(), 1);
        let (at, f) = &found[0];
        assert_eq!(*at, 1);
        assert_eq!(f.code, "tool-name-collision");
        assert_eq!(f.server.as_deref(), Some("a"));
        assert!(f.message.contains("tool 'b_c' of server 'a' would be named 'mcp_a_b_c', which tool 'c' of server 'a_b' already has"), "{}", f.message);
        assert!(f.message.contains("renamed, not dropped"));
        assert!(f.fix.contains("\"toolPrefix\": \"a_2\""), "{}", f.fix);
        // A filtered-out tool takes no name.
        let s = servers(
            json!({"a_b": {"command": "x"}, "a": {"command": "x", "toolFilter": {"exclude": ["b_c"]}}}),
        );
        let refs: Vec<&ServerConfig> = s.iter().collect();
        assert!(
            check(
                &refs,
                &tools(&[("a_b", &["c"]), ("a", &["b_c"])]),
                NameScheme::Compat
            )
            .is_empty()
        );
    }

    #[test]
    fn openclaw_scheme() {
        let s = servers(json!({"docs": {"command": "x"}, "Docs": {"command": "x"}}));
        let refs: Vec<&ServerConfig> = s.iter().collect();
        let found = check(
            &refs,
            &tools(&[("docs", &["search", "a.b"]), ("Docs", &["x"])]),
            NameScheme::OpenClaw,
        );
        let codes: Vec<_> = found.iter().map(|(_, f)| f.code).collect();
        assert_eq!(codes, ["tool-name-unsafe", "tool-name-collision"]);
        assert!(
            found[0].1.message.contains("'docs__a.b'"),
            "{}",
            found[0].1.message
        );
        assert!(
            found[0].1.message.contains("offers it as 'docs__a-b'"),
            "{}",
            found[0].1.message
        );
        assert!(
            check(
                &refs,
                &tools(&[("docs", &["search"])]),
                NameScheme::OpenClaw
            )
            .is_empty()
        );
    }
}
