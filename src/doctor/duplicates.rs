//! `duplicate-server` (info): two enabled stdio servers that run the same command with the same
//! arguments (and working directory): two processes doing the same, and each tool offered twice
//! under two names. The later one is reported; the arguments are not shown (they may hold
//! anything).

use super::{Finding, Severity, quoted, server_path};
use crate::config::{ServerConfig, TransportKind};

/// `(server index, finding)` for every server that repeats an earlier one.
pub(super) fn check(servers: &[&ServerConfig]) -> Vec<(usize, Finding)> {
    let mut out = Vec::new();
    for (at, server) in servers.iter().enumerate() {
        if !server.enabled || server.transport != TransportKind::Stdio {
            continue;
        }
        let same = servers[..at].iter().find(|earlier| {
            earlier.enabled
                && earlier.transport == TransportKind::Stdio
                && earlier.command == server.command
                && earlier.args == server.args
                && earlier.cwd == server.cwd
        });
        if let Some(earlier) = same {
            out.push((
                at,
                Finding::new(
                    Severity::Info,
                    "duplicate-server",
                    Some(&server.name),
                    Some(server_path(server)),
                    format!(
                        "server {} runs the same command with the same arguments as server {}: \
                         two processes, and their tools offered twice under two names",
                        quoted(&server.name),
                        quoted(&earlier.name)
                    ),
                    "remove one of them, or keep both on purpose (different env) and ignore \
                     this; with one manager per agent, manager.view({ servers }) shares one \
                     server between agents"
                        .to_owned(),
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config;
    use serde_json::json;

    #[test]
    fn the_later_of_two_identical_servers() {
        let s = config::parse_manager_config(&json!({"servers": {
            "a": {"command": "npx", "args": ["-y", "pkg@1.0.0", "--key", "s3cret-arg"]},
            "b": {"command": "npx", "args": ["-y", "pkg@1.0.0", "--key", "s3cret-arg"]},
            "c": {"command": "npx", "args": ["-y", "pkg@1.0.0"]},
            "d": {"command": "npx", "args": ["-y", "pkg@1.0.0"], "enabled": false},
        }}))
        .unwrap()
        .config
        .servers;
        let refs: Vec<&ServerConfig> = s.iter().collect();
        let found = check(&refs);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, 1);
        assert!(found[0].1.message.contains("as server 'a'"));
        crate::doctor::test_support::assert_no_secret(&[found[0].1.clone()], &["s3cret-arg"]);
    }
}
