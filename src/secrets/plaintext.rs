//! The design's warning for credentials written into the config in plain text.

use std::sync::LazyLock;

use regex::Regex;

use super::template::has_env_refs;
use super::uri::is_secret_uri;

static CREDENTIAL_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)password|secret|token|key|credential|auth").expect("static regex")
});

/// Whether `key` looks like it names a credential
/// (`/password|secret|token|key|credential|auth/i`; `Authorization` matches).
pub fn looks_like_credential_key(key: &str) -> bool {
    CREDENTIAL_KEY.is_match(key)
}

fn is_plaintext(value: &str) -> bool {
    !value.is_empty() && !is_secret_uri(value) && !has_env_refs(value)
}

/// One warning per `env`/`headers` entry (env first, then headers, each in
/// order) whose key looks like a credential and whose value is a non-empty
/// plain value: not a `secret://` reference and containing no `${VAR}`
/// reference (`VAR` upper-case, as substituted by the resolver). The value itself is never included.
pub fn plaintext_credential_warnings(
    server: &str,
    env: &[(String, String)],
    headers: &[(String, String)],
) -> Vec<String> {
    let mut out = Vec::new();
    for (kind, pairs) in [("env", env), ("header", headers)] {
        for (key, value) in pairs {
            if looks_like_credential_key(key) && is_plaintext(value) {
                out.push(format!(
                    "MCP server '{server}': {kind} '{key}' looks like a credential but holds a \
                     plaintext value; use a secret:// reference"
                ));
            }
        }
    }
    out
}
