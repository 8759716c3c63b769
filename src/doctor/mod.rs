//! `doctor`: a linter for MCP configs, for operators. It reads any config shape the package
//! reads (the same detector and loader as `loadMcpConfig`) and reports what would go wrong or
//! is risky, each finding with a concrete fix. It never prints a secret value: findings name
//! the server, the field path and what a value looks like, never the value.
//!
//! One concept per file: `credentials` (plaintext credentials), `packages` (unpinned
//! `npx`/`uvx`… packages), `commands` (stdio commands that cannot be found), `host_env`
//! (loader-hijack variables), `urls` (insecure or invalid URLs), `secrets` (references resolved
//! with the real resolvers), `network` (one probe per remote server, opt-in), `tool_names`
//! (agent names providers reject or that collide), `duplicates`.
//!
//! Order of findings: per server in config order (each server's lints in the order above),
//! then findings about the host (loader-hijack variables in its environment, what the loader
//! ignored). Deterministic for a given config, environment and file system.

mod commands;
mod credentials;
mod duplicates;
mod host_env;
mod network;
mod options;
mod packages;
mod secrets;
mod tool_names;
mod urls;

use serde::Serialize;
use serde_json::Value;

use crate::config::{self, ServerConfig};

pub use options::{DEFAULT_TIMEOUT, DoctorOptions};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The server will not work as configured.
    Error,
    /// It works, but is risky or fragile.
    Warning,
    /// Worth knowing.
    Info,
}

/// One problem found, with the change that fixes it. Never holds a secret value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// A stable code, e.g. `plaintext-credential`.
    pub code: &'static str,
    /// The server's config key; absent for findings about the host or the whole config.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The config path, e.g. `servers.github.env.GITHUB_TOKEN`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub message: String,
    pub fix: String,
}

impl Finding {
    pub(crate) fn new(
        severity: Severity,
        code: &'static str,
        server: Option<&str>,
        field: Option<String>,
        message: String,
        fix: String,
    ) -> Self {
        Self {
            severity,
            code,
            server: server.map(str::to_owned),
            field,
            message,
            fix,
        }
    }
}

/// Every finding for `input` (any config shape), in the order the module docs give. A config
/// that does not load gives one `config-invalid` error with the loader's message.
pub async fn run(input: &Value, options: &DoctorOptions) -> Vec<Finding> {
    let extracted = match config::extract_mcp_config(
        input,
        &config::ExtractOptions {
            agent: options.agent.as_deref(),
            shape: options.shape,
        },
    ) {
        Ok(extracted) => extracted,
        Err(message) => return vec![config_invalid(message)],
    };
    let loaded = match config::parse_manager_config(&extracted.config) {
        Ok(valid) => valid.config,
        Err(message) => return vec![config_invalid(message)],
    };
    let servers: Vec<&ServerConfig> = loaded.servers.iter().collect();
    let host = host_env::HostEnv::new(options.env.clone(), options.env_is_host);

    let mut per_server: Vec<Vec<Finding>> = vec![Vec::new(); servers.len()];
    for (at, server) in servers.iter().enumerate() {
        let out = &mut per_server[at];
        credentials::check(server, out);
        packages::check(server, out);
        if server.enabled {
            commands::check(server, &host, out);
        }
        host_env::check_server(server, out);
        urls::check(server, out);
    }

    let providers = options
        .secret_providers
        .clone()
        .or_else(|| crate::secrets::ProviderDefinitions::from_openclaw_json(input).ok())
        .unwrap_or_default();
    let (resolved, probed) = futures::join!(secrets::check(&servers, &host, providers), async {
        if options.network {
            network::check(&servers, options.timeout).await
        } else {
            Vec::new()
        }
    });
    for (at, finding) in resolved.into_iter().chain(probed) {
        per_server[at].push(finding);
    }
    if let Some(tools) = &options.tools {
        for (at, finding) in tool_names::check(&servers, tools, options.tool_names) {
            per_server[at].push(finding);
        }
    }
    for (at, finding) in duplicates::check(&servers) {
        per_server[at].push(finding);
    }

    let mut out: Vec<Finding> = per_server.into_iter().flatten().collect();
    host_env::check_host(&host, &mut out);
    for warning in extracted.warnings {
        out.push(Finding::new(
            Severity::Info,
            "config-ignored",
            None,
            None,
            format!("the loader ignored or changed part of the config: {warning}"),
            "remove or correct the entry named, or ignore this if it is meant for another tool"
                .to_owned(),
        ));
    }
    out
}

impl Finding {
    /// The one finding of a config that does not load, with the loader's message.
    pub fn config_invalid(message: String) -> Self {
        config_invalid(message)
    }
}

fn config_invalid(message: String) -> Finding {
    Finding::new(
        Severity::Error,
        "config-invalid",
        None,
        None,
        message,
        "correct the config at the path named (README, config section; `validateMcpConfig` and \
         `inspectMcpConfig` give the same message)"
            .to_owned(),
    )
}

/// `servers.<name>`, the prefix of every field path of a server.
pub(crate) fn server_path(server: &ServerConfig) -> String {
    format!("servers.{}", server.name)
}

/// The secrets a server's `auth` may carry, by field path under the server: what the
/// plaintext check and the resolver both look at.
pub(crate) fn auth_secrets(server: &ServerConfig) -> Vec<(&'static str, Option<&str>)> {
    let Some(auth) = &server.auth else {
        return Vec::new();
    };
    let idp = auth.idp.as_ref();
    vec![
        ("auth.clientSecret", auth.client_secret.as_deref()),
        (
            "auth.idp.clientSecret",
            idp.and_then(|i| i.client_secret.as_deref()),
        ),
        ("auth.idp.idToken", idp.map(|i| i.id_token.as_str())),
    ]
}

/// A value from the config (a tool name, a command) quoted in a message: at most 80
/// characters, control characters escaped. Never used for values that may be secrets.
pub(crate) fn quoted(s: &str) -> String {
    let mut out = String::from("'");
    for (i, c) in s.chars().enumerate() {
        if i == 80 {
            out.push('…');
            break;
        }
        if c.is_control() || c == '\'' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    /// Every finding as JSON; asserts none of `secrets` appears anywhere in it.
    pub fn assert_no_secret(findings: &[Finding], secrets: &[&str]) {
        let text = serde_json::to_string(findings).unwrap();
        for secret in secrets {
            assert!(
                !text.contains(secret),
                "a finding shows the secret {secret:?}: {text}"
            );
        }
    }

    pub fn codes(findings: &[Finding]) -> Vec<&'static str> {
        findings.iter().map(|f| f.code).collect()
    }

    /// The one server of `{ "servers": { "s": server } }`, validated.
    pub fn server(server: Value) -> ServerConfig {
        let config = serde_json::json!({ "servers": { "s": server } });
        config::parse_manager_config(&config)
            .expect("valid config")
            .config
            .servers
            .remove(0)
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use serde_json::json;

    fn options() -> DoctorOptions {
        DoctorOptions {
            env: Some(
                [("PATH".to_owned(), "/nonexistent-doctor-path".to_owned())]
                    .into_iter()
                    .collect(),
            ),
            ..DoctorOptions::default()
        }
    }

    #[tokio::test]
    async fn a_config_that_does_not_load_is_one_finding() {
        for input in [
            Value::Null,
            json!(42),
            json!("text"),
            json!({"servers": {"a": {"command": 3}}}),
        ] {
            let findings = run(&input, &options()).await;
            assert_eq!(codes(&findings), ["config-invalid"], "{input}");
            assert_eq!(findings[0].severity, Severity::Error);
        }
        let findings = run(&json!({"servers": {"a": {"command": 3}}}), &options()).await;
        assert!(
            findings[0].message.contains("servers.a.command"),
            "{}",
            findings[0].message
        );
    }

    #[tokio::test]
    async fn a_good_config_has_no_findings() {
        let input = json!({"servers": {
            "sh": {"command": "/bin/sh", "args": ["-c", "true"], "env": {"TOKEN": "secret://env/T"}},
            "remote": {"transport": "http", "url": "https://example.com/mcp"},
            "local": {"transport": "sse", "url": "http://127.0.0.1:9/sse"},
        }});
        let mut opts = options();
        opts.env.as_mut().unwrap().insert("T".into(), "x".into());
        assert_eq!(run(&input, &opts).await, []);
    }

    #[tokio::test]
    async fn findings_come_per_server_in_config_order_then_the_host() {
        let input = json!({"mcpServers": {
            "b": {"command": "npx", "args": ["-y", "pkg"], "env": {"API_TOKEN": "plain-value-1"}},
            "a": {"url": "http://example.com/mcp"},
        }});
        let mut opts = options();
        opts.env
            .as_mut()
            .unwrap()
            .insert("LD_PRELOAD".into(), "/x.so".into());
        let findings = run(&input, &opts).await;
        let order: Vec<(Option<&str>, &str)> = findings
            .iter()
            .map(|f| (f.server.as_deref(), f.code))
            .collect();
        assert_eq!(
            order,
            [
                (Some("b"), "plaintext-credential"),
                (Some("b"), "unpinned-package"),
                (Some("b"), "command-not-found"),
                (Some("a"), "insecure-url"),
                (None, "loader-hijack-env"),
            ]
        );
        assert_no_secret(&findings, &["plain-value-1", "/x.so"]);
    }
}
