//! `plaintext-credential`: a credential written into the config itself, in `env`, `headers`,
//! `args`, the URL or `auth`. A value counts when it is not a reference (`secret://…`, a
//! SecretRef object, `${VAR}`) and either its key names a credential (the redactor's notion,
//! [`crate::secrets::looks_like_credential_key`], plus `passwd` and `cookie`) or it has the
//! shape of a well-known token. Findings say what the value looks like, never the value.

use std::sync::LazyLock;

use regex::Regex;
use url::Url;

use super::{Finding, Severity, auth_secrets, server_path};
use crate::config::ServerConfig;
use crate::secrets::{has_env_refs, is_secret_uri, looks_like_credential_key};

const CODE: &str = "plaintext-credential";

/// Well-known token shapes and what to call them. Anthropic before OpenAI (both `sk-`).
static SHAPES: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        (r"\bsk-ant-[A-Za-z0-9_-]{16,}", "an Anthropic API key"),
        (r"\bsk-[A-Za-z0-9_-]{16,}", "an OpenAI-style API key"),
        (r"\bgh[pousr]_[A-Za-z0-9]{30,}", "a GitHub token"),
        (
            r"\bgithub_pat_[A-Za-z0-9_]{22,}",
            "a GitHub fine-grained token",
        ),
        (r"\bxox[abpr]-[A-Za-z0-9-]{10,}", "a Slack token"),
        (r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b", "an AWS access key id"),
        (r"\bglpat-[A-Za-z0-9_-]{20,}", "a GitLab token"),
        (r"\bAIza[0-9A-Za-z_-]{35}", "a Google API key"),
        (
            r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
            "a JWT",
        ),
        (r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}", "a bearer token"),
    ]
    .into_iter()
    .map(|(re, what)| (Regex::new(re).expect("static regex"), what))
    .collect()
});

/// What a value looks like when it has a well-known token shape.
pub(super) fn token_shape(value: &str) -> Option<&'static str> {
    SHAPES
        .iter()
        .find(|(re, _)| re.is_match(value))
        .map(|(_, what)| *what)
}

/// Whether `key` names a credential.
pub(super) fn is_credential_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    looks_like_credential_key(key) || lower.contains("passwd") || lower.contains("cookie")
}

/// A reference resolved at start (`secret://…`, a SecretRef's canonical form, `${VAR}`).
fn is_reference(value: &str) -> bool {
    is_secret_uri(value) || has_env_refs(value)
}

/// Values that are no credential whatever their key says: empty, booleans, numbers, paths
/// (`GOOGLE_APPLICATION_CREDENTIALS=/path/key.json` names a file; the file is the secret).
fn plainly_not_secret(value: &str) -> bool {
    let v = value.trim();
    v.is_empty()
        || ["true", "false", "yes", "no", "on", "off", "none", "null"]
            .iter()
            .any(|w| v.eq_ignore_ascii_case(w))
        || v.bytes().all(|b| b.is_ascii_digit())
        || v.starts_with('/')
        || v.starts_with("~/")
        || v.starts_with("./")
        || v.starts_with("../")
        || (v.len() > 2 && v.as_bytes()[1] == b':' && matches!(v.as_bytes()[2], b'\\' | b'/'))
}

/// Why `value` under `key` counts as a plaintext credential, in words; `None` when it does not.
fn judge(key: Option<&str>, value: &str) -> Option<String> {
    if is_reference(value) || plainly_not_secret(value) {
        return None;
    }
    if let Some(what) = token_shape(value) {
        return Some(format!("looks like {what}"));
    }
    match key {
        Some(key) if is_credential_key(key) => Some("its name says it is a credential".to_owned()),
        _ => None,
    }
}

/// An environment variable name made from `parts` (`[A-Z0-9_]`, starting with a letter), for
/// fix texts: `GITHUB_TOKEN`, `LINEAR_AUTHORIZATION`.
pub(super) fn var_name(parts: &[&str]) -> String {
    let mut out = String::new();
    for part in parts {
        for c in part.chars() {
            let c = if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            };
            if !(c == '_' && (out.is_empty() || out.ends_with('_'))) {
                out.push(c);
            }
        }
        if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    let mut out = out.trim_end_matches('_').to_owned();
    if !out.starts_with(|c: char| c.is_ascii_uppercase()) {
        out.insert_str(0, "MCP_");
    }
    out.truncate(128);
    out
}

pub(super) fn check(server: &ServerConfig, out: &mut Vec<Finding>) {
    let base = server_path(server);
    let name = server.name.as_str();
    let push = |out: &mut Vec<Finding>, field: String, message: String, fix: String| {
        out.push(Finding::new(
            Severity::Warning,
            CODE,
            Some(name),
            Some(field),
            message,
            fix,
        ));
    };

    for (key, value) in &server.env {
        if let Some(why) = judge(Some(key), value) {
            let var = var_name(&[key]);
            let field = format!("{base}.env.{key}");
            push(
                out,
                field.clone(),
                format!("{field} holds a plaintext credential ({why})"),
                format!(
                    "put the value in the gateway's environment as {var} and write \
                     \"{key}\": \"secret://env/{var}\" (or the SecretRef {{ \"source\": \"env\", \
                     \"id\": \"{var}\" }}, or another secret:// provider: file, aws, gcp, vault)"
                ),
            );
        }
    }

    for (key, value) in &server.headers {
        if let Some(why) = judge(Some(key), value) {
            let field = format!("{base}.headers.{key}");
            let scheme = value.split_once(' ').map(|(s, _)| s).filter(|s| {
                ["bearer", "basic", "token"].contains(&s.to_ascii_lowercase().as_str())
            });
            let fix = match scheme {
                Some(scheme) => {
                    let var = var_name(&[name, "TOKEN"]);
                    format!(
                        "put the token in the gateway's environment as {var} and write \
                         \"{key}\": \"{scheme} ${{{var}}}\" (${{VAR}} is substituted inside header \
                         values; a secret:// reference must be the whole value, e.g. \
                         \"{key}\": \"secret://env/{var}\" with the variable holding \
                         \"{scheme} <token>\")"
                    )
                }
                None => {
                    let var = var_name(&[name, key]);
                    format!(
                        "put the value in the gateway's environment as {var} and write \
                         \"{key}\": \"secret://env/{var}\" (or the SecretRef {{ \"source\": \
                         \"env\", \"id\": \"{var}\" }})"
                    )
                }
            };
            push(
                out,
                field.clone(),
                format!("{field} holds a plaintext credential ({why})"),
                fix,
            );
        }
    }

    check_args(server, &base, out);

    if let Some(url) = &server.url {
        check_url(server, &base, url, out);
    }

    for (path, value) in auth_secrets(server) {
        let Some(value) = value else { continue };
        if is_reference(value) || value.is_empty() {
            continue;
        }
        let leaf = path.rsplit('.').next().unwrap_or(path);
        let var = var_name(&[name, leaf]);
        let field = format!("{base}.{path}");
        push(
            out,
            field.clone(),
            format!("{field} holds a plaintext credential"),
            format!(
                "put it in the gateway's environment as {var} and write \"{leaf}\": \
                 \"secret://env/{var}\""
            ),
        );
    }
}

/// What moving a credential out of `args` takes: the server must read it from elsewhere.
fn args_fix(name: &str, hint: &str) -> String {
    let var = var_name(&[hint]);
    let var = if var.starts_with("MCP_") {
        var_name(&[name, "TOKEN"])
    } else {
        var
    };
    format!(
        "remove it from args (args are passed as written: no reference is resolved there) and \
         give it through the server's environment instead: \"env\": {{ \"{var}\": \
         \"secret://env/{var}\" }}, with the server reading {var} (most servers take their key \
         from an environment variable; check its documentation for the name)"
    )
}

fn check_args(server: &ServerConfig, base: &str, out: &mut Vec<Finding>) {
    let name = server.name.as_str();
    let args = &server.args;
    let mut flagged = vec![false; args.len()];
    let mut report = |out: &mut Vec<Finding>, at: usize, what: String, hint: &str| {
        if std::mem::replace(&mut flagged[at], true) {
            return;
        }
        let field = format!("{base}.args[{at}]");
        out.push(Finding::new(
            Severity::Warning,
            CODE,
            Some(name),
            Some(field.clone()),
            format!("{field} holds a plaintext credential ({what})"),
            args_fix(name, hint),
        ));
    };
    for (at, arg) in args.iter().enumerate() {
        // `--token=xyz`, `--api-key=xyz`
        if let Some(flag) = arg.strip_prefix('-')
            && let Some((key, value)) = flag.split_once('=')
        {
            let key = key.trim_start_matches('-');
            if let Some(why) = judge_flag(key, value) {
                report(out, at, why, key);
            }
            continue;
        }
        // `--api-key xyz`
        if let Some(flag) = arg.strip_prefix('-')
            && let Some(value) = args.get(at + 1)
            && !value.starts_with('-')
        {
            let key = flag.trim_start_matches('-');
            if let Some(why) = judge_flag(key, value) {
                report(out, at + 1, why, key);
                continue;
            }
        }
        // `Authorization: Bearer xyz` (a header given to a proxy such as mcp-remote)
        if let Some((header, value)) = arg.split_once(':')
            && is_header_name(header)
            && let Some(why) = judge(Some(header), value.trim())
        {
            report(out, at, why, header);
            continue;
        }
        // `GITHUB_TOKEN=xyz` (docker -e, env wrappers)
        if let Some((key, value)) = arg.split_once('=')
            && is_var_name(key)
            && let Some(why) = judge(Some(key), value)
        {
            report(out, at, why, key);
            continue;
        }
        if !is_reference(arg)
            && let Some(what) = token_shape(arg)
        {
            report(out, at, format!("looks like {what}"), "");
        }
    }
}

/// A flag's value: the key rule, except that a plain lowercase word (`--auth-type oauth`) is an
/// option value, not a credential; token shapes always count.
fn judge_flag(key: &str, value: &str) -> Option<String> {
    let word = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'-' || b == b'_');
    if word && token_shape(value).is_none() {
        return None;
    }
    judge(Some(key), value)
}

fn is_header_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && s.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
}

fn is_var_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn check_url(server: &ServerConfig, base: &str, url: &str, out: &mut Vec<Finding>) {
    let Ok(parsed) = Url::parse(url) else {
        return; // `urls` reports it
    };
    let name = server.name.as_str();
    let field = format!("{base}.url");
    let origin = format!(
        "{}://{}",
        parsed.scheme(),
        parsed.host_str().unwrap_or_default()
    );
    let header_fix = |var: &str| {
        format!(
            "take it out of the URL (a URL is used as written: no reference is resolved in it) and \
             send it as a header if the server accepts one: \"headers\": {{ \"Authorization\": \
             \"Bearer ${{{var}}}\" }} with {var} in the gateway's environment (or a header value \
             \"secret://env/{var}\" holding the whole header value)"
        )
    };
    let mut push = |what: String, var: String| {
        out.push(Finding::new(
            Severity::Warning,
            CODE,
            Some(name),
            Some(field.clone()),
            format!("{field} ({origin}) carries a plaintext credential: {what}"),
            header_fix(&var),
        ));
    };
    if let Some(password) = parsed.password()
        && !password.is_empty()
    {
        push(
            "a password in its user info".to_owned(),
            var_name(&[name, "PASSWORD"]),
        );
    } else if !parsed.username().is_empty()
        && let Some(what) = token_shape(parsed.username())
    {
        push(
            format!("its user info looks like {what}"),
            var_name(&[name, "TOKEN"]),
        );
    }
    for (key, value) in parsed.query_pairs() {
        let credential_param = is_credential_key(&key)
            || matches!(
                key.to_ascii_lowercase().as_str(),
                "key" | "sig" | "signature"
            );
        if is_reference(&value) || plainly_not_secret(&value) {
            continue;
        }
        if let Some(what) = token_shape(&value) {
            push(
                format!("query parameter '{}' looks like {what}", safe_key(&key)),
                var_name(&[name, &key]),
            );
        } else if credential_param {
            push(
                format!("query parameter '{}'", safe_key(&key)),
                var_name(&[name, &key]),
            );
        }
    }
    if let Some(segments) = parsed.path_segments() {
        for segment in segments {
            if let Some(what) = token_shape(segment) {
                push(
                    format!("a path segment looks like {what}"),
                    var_name(&[name, "TOKEN"]),
                );
            }
        }
    }
}

/// A query parameter's name as shown: only when it is a plain identifier (a key could be
/// anything a user pasted).
fn safe_key(key: &str) -> String {
    if key.len() <= 40
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
    {
        key.to_owned()
    } else {
        "(unusual name)".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::test_support::*;
    use serde_json::{Value, json};

    fn findings(server: Value) -> Vec<Finding> {
        let mut out = Vec::new();
        check(&super::super::test_support::server(server), &mut out);
        out
    }

    const GH: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    const ANT: &str = "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    const JWT: &str = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";

    #[test]
    fn env_with_a_literal_credential_is_flagged_with_the_replacement() {
        let f = findings(
            json!({"command": "x", "env": {"GITHUB_TOKEN": GH, "DB_PASSWORD": "hunter2hunter"}}),
        );
        assert_eq!(codes(&f), [CODE, CODE]);
        assert_eq!(f[0].field.as_deref(), Some("servers.s.env.GITHUB_TOKEN"));
        assert!(
            f[0].message.contains("looks like a GitHub token"),
            "{}",
            f[0].message
        );
        assert!(
            f[0].fix
                .contains("\"GITHUB_TOKEN\": \"secret://env/GITHUB_TOKEN\""),
            "{}",
            f[0].fix
        );
        assert!(
            f[0].fix
                .contains("{ \"source\": \"env\", \"id\": \"GITHUB_TOKEN\" }")
        );
        assert!(f[1].message.contains("its name says it is a credential"));
        assert_no_secret(&f, &[GH, "hunter2hunter"]);
    }

    #[test]
    fn references_and_harmless_values_are_not_flagged() {
        let f = findings(json!({"command": "x", "env": {
            "GITHUB_TOKEN": "secret://env/GITHUB_TOKEN",
            "API_KEY": "${API_KEY}",
            "AUTH_HEADER": "Bearer ${TOKEN}",
            "REF": {"source": "env", "id": "GITHUB_TOKEN"},
            "GOOGLE_APPLICATION_CREDENTIALS": "/etc/key.json",
            "AUTH_ENABLED": "true",
            "TOKEN_TTL": "3600",
            "EMPTY_SECRET": "",
            "LOG_LEVEL": "debug",
        }, "headers": {"Authorization": "Bearer ${LINEAR}"}}));
        assert_eq!(f, []);
    }

    #[test]
    fn a_token_shape_counts_under_any_key() {
        for (value, what) in [
            (ANT, "an Anthropic API key"),
            ("sk-proj-abcdefghijklmnopqrstuv", "an OpenAI-style API key"),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
                "a GitHub fine-grained token",
            ),
            ("xoxb-1234567890-abcdefghij", "a Slack token"),
            ("AKIAIOSFODNN7EXAMPLE", "an AWS access key id"),
            ("glpat-abcdefghij0123456789", "a GitLab token"),
            (
                "AIzaSyA-abcdefghijklmnopqrstuvwxyz012345",
                "a Google API key",
            ),
            (JWT, "a JWT"),
        ] {
            let f = findings(json!({"command": "x", "env": {"SETTING": value}}));
            assert_eq!(codes(&f), [CODE], "{value}");
            assert!(f[0].message.contains(what), "{}", f[0].message);
            assert_no_secret(&f, &[value]);
        }
        assert_eq!(
            findings(json!({"command": "x", "env": {"TASK": "task-runner-abcdefghijklmnopqrs"}})),
            []
        );
    }

    #[test]
    fn headers_get_the_interpolation_fix() {
        let f = findings(
            json!({"transport": "http", "url": "https://api.linear.app/mcp",
            "headers": {"Authorization": "Bearer lin_api_0123456789abcdef", "X-Api-Key": "k3y-v4lue-123"}}),
        );
        assert_eq!(codes(&f), [CODE, CODE]);
        assert_eq!(
            f[0].field.as_deref(),
            Some("servers.s.headers.Authorization")
        );
        assert!(
            f[0].fix
                .contains("\"Authorization\": \"Bearer ${S_TOKEN}\""),
            "{}",
            f[0].fix
        );
        assert!(
            f[1].fix
                .contains("\"X-Api-Key\": \"secret://env/S_X_API_KEY\""),
            "{}",
            f[1].fix
        );
        assert_no_secret(&f, &["lin_api_0123456789abcdef", "k3y-v4lue-123"]);
    }

    #[test]
    fn args_in_every_spelling() {
        let args = json!([
            "-y",
            "mcp-remote",
            "https://x.example/mcp",
            "--api-key",
            "plainkey-123456",
            "--token=tok3n-abcdef",
            "--header",
            "Authorization: Bearer abcdefgh12345678",
            "-e",
            "GITHUB_TOKEN=plaintoken99",
            GH,
            "--auth-type",
            "oauth",
            "--verbose",
        ]);
        let f = findings(json!({"command": "npx", "args": args}));
        let fields: Vec<_> = f.iter().map(|f| f.field.clone().unwrap()).collect();
        assert_eq!(
            fields,
            [
                "servers.s.args[4]",
                "servers.s.args[5]",
                "servers.s.args[7]",
                "servers.s.args[9]",
                "servers.s.args[10]"
            ]
        );
        assert!(f.iter().all(|f| f.fix.contains("remove it from args")));
        assert_no_secret(
            &f,
            &[
                "plainkey-123456",
                "tok3n-abcdef",
                "abcdefgh12345678",
                "plaintoken99",
                GH,
            ],
        );
    }

    #[test]
    fn urls_with_credentials() {
        let f = findings(json!({"transport": "http",
            "url": "https://user:pa55word@mcp.example.com/v1/mcp?api_key=qwertyuiop&region=eu&access_token=zxcvbnm123"}));
        assert_eq!(codes(&f), [CODE, CODE, CODE]);
        assert!(f[0].message.contains("password in its user info"));
        assert!(f[1].message.contains("query parameter 'api_key'"));
        assert!(f[2].message.contains("query parameter 'access_token'"));
        assert!(
            f.iter()
                .all(|f| f.field.as_deref() == Some("servers.s.url"))
        );
        assert!(
            f[0].fix
                .contains("\"Authorization\": \"Bearer ${S_PASSWORD}\""),
            "{}",
            f[0].fix
        );
        assert_no_secret(&f, &["pa55word", "qwertyuiop", "zxcvbnm123", "/v1/mcp"]);
        assert_eq!(
            findings(json!({"transport": "http", "url": "https://mcp.example.com/mcp?region=eu"})),
            []
        );
    }

    #[test]
    fn oauth_client_secret() {
        let f = findings(json!({"transport": "http", "url": "https://x.example/mcp",
            "auth": {"type": "oauth", "clientId": "abc", "clientSecret": "s3cr3t-value"}}));
        assert_eq!(codes(&f), [CODE]);
        assert_eq!(f[0].field.as_deref(), Some("servers.s.auth.clientSecret"));
        assert_no_secret(&f, &["s3cr3t-value"]);
    }

    #[test]
    fn variable_names_for_fixes() {
        assert_eq!(var_name(&["github", "TOKEN"]), "GITHUB_TOKEN");
        assert_eq!(var_name(&["my-server", "X-Api-Key"]), "MY_SERVER_X_API_KEY");
        assert_eq!(var_name(&["1x", "token"]), "MCP_1X_TOKEN");
    }
}
