//! `secret-unresolved`: every reference of an enabled server (`secret://…`, SecretRef objects in
//! their canonical form, `${VAR}` in plain values) in `env`, `headers` and `auth`, resolved with
//! the resolvers a start uses, against the host environment. A failure is the resolver's own
//! message, which names the reference and never a value; a value that resolves is dropped at
//! once (it stays a `SecretString`, zeroised on drop).

use std::collections::HashMap;

use super::host_env::HostEnv;
use super::{Finding, Severity, auth_secrets, server_path};
use crate::config::ServerConfig;
use crate::secrets::{
    ProviderDefinitions, SecretError, SecretResolver, has_env_refs, is_secret_uri,
};

const CODE: &str = "secret-unresolved";

/// `(field path, value)` of every entry that holds a reference.
fn references(server: &ServerConfig) -> Vec<(String, &str)> {
    let base = server_path(server);
    let mut out = Vec::new();
    let is_ref = |v: &str| is_secret_uri(v) || has_env_refs(v);
    for (kind, entries) in [("env", &server.env), ("headers", &server.headers)] {
        for (key, value) in entries {
            if is_ref(value) {
                out.push((format!("{base}.{kind}.{key}"), value.as_str()));
            }
        }
    }
    for (path, value) in auth_secrets(server) {
        if let Some(value) = value.filter(|v| is_ref(v)) {
            out.push((format!("{base}.{path}"), value));
        }
    }
    out
}

fn fix(error: &SecretError) -> String {
    match error {
        SecretError::EnvNotSet { name, .. } | SecretError::VarNotSet { name, .. } => format!(
            "set {name} in the environment the gateway runs with (for doctorMcpConfig: \
             options.env, else process.env), or point the reference at where the secret lives"
        ),
        SecretError::FileNotFound { .. } | SecretError::FieldNotFound { .. } => {
            "create the file (or the field in it), or correct the path in the reference".to_owned()
        }
        SecretError::UnsupportedProvider { .. } | SecretError::InvalidUri { .. } => {
            "write the reference in one of the supported forms: secret://env/NAME, \
             secret://file/PATH[#FIELD], secret://aws/NAME[#FIELD], secret://gcp/SECRET[#VERSION], \
             secret://vault/MOUNT/PATH#FIELD, or a SecretRef object (docs/secrets.md)"
                .to_owned()
        }
        SecretError::Timeout { .. } => {
            "check that the secret backend is reachable from the gateway (network, credentials)"
                .to_owned()
        }
        _ => "make the reference resolvable from the gateway (the message says what failed; \
              docs/secrets.md lists what each provider needs)"
            .to_owned(),
    }
}

/// `(server index, finding)` for every reference that does not resolve. Each distinct value is
/// resolved once, all of them concurrently.
pub(super) async fn check(
    servers: &[&ServerConfig],
    host: &HostEnv,
    providers: ProviderDefinitions,
) -> Vec<(usize, Finding)> {
    let wanted: Vec<(usize, String, &str)> = servers
        .iter()
        .enumerate()
        .filter(|(_, s)| s.enabled)
        .flat_map(|(at, s)| {
            references(s)
                .into_iter()
                .map(move |(field, value)| (at, field, value))
        })
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let resolver = SecretResolver::with_default_providers_in(host.source())
        .with_provider_definitions(providers);
    let mut distinct: Vec<&str> = Vec::new();
    for (_, _, value) in &wanted {
        if !distinct.contains(value) {
            distinct.push(value);
        }
    }
    let outcomes = futures::future::join_all(distinct.iter().map(|value| {
        let resolver = &resolver;
        async move {
            // The value itself is dropped here, never looked at.
            resolver.resolve(value).await.map(drop)
        }
    }))
    .await;
    let failed: HashMap<&str, SecretError> = distinct
        .into_iter()
        .zip(outcomes)
        .filter_map(|(value, outcome)| outcome.err().map(|e| (value, e)))
        .collect();
    wanted
        .into_iter()
        .filter_map(|(at, field, value)| {
            let error = failed.get(value)?;
            Some((
                at,
                Finding::new(
                    Severity::Error,
                    CODE,
                    Some(&servers[at].name),
                    Some(field.clone()),
                    format!("{field} does not resolve: {error}; the server cannot start"),
                    fix(error),
                ),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::test_support::*;
    use serde_json::json;

    fn host(vars: &[(&str, &str)]) -> HostEnv {
        HostEnv::new(
            Some(
                vars.iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ),
            false,
        )
    }

    #[tokio::test]
    async fn unresolved_references_are_errors_with_the_resolvers_message() {
        let s = server(json!({"command": "x",
            "env": {
                "OK": "secret://env/PRESENT",
                "MISSING": "secret://env/MISSING_VAR",
                "TEMPLATE": "Bearer ${ALSO_MISSING}",
                "REF": {"source": "env", "id": "MISSING_VAR"},
                "FILE": "secret://file/nonexistent/doctor-secret#KEY",
                "BAD": "secret://nope/x",
                "PLAIN": "value"
            },
            "headers": {"Authorization": "Bearer ${PRESENT}"}}));
        let found = check(
            &[&s],
            &host(&[("PRESENT", "hunter2-value")]),
            ProviderDefinitions::default(),
        )
        .await;
        let f: Vec<Finding> = found.into_iter().map(|(_, f)| f).collect();
        let fields: Vec<_> = f.iter().map(|f| f.field.clone().unwrap()).collect();
        assert_eq!(
            fields,
            [
                "servers.s.env.MISSING",
                "servers.s.env.TEMPLATE",
                "servers.s.env.REF",
                "servers.s.env.FILE",
                "servers.s.env.BAD"
            ]
        );
        assert!(
            f.iter()
                .all(|f| f.code == CODE && f.severity == Severity::Error)
        );
        assert!(
            f[0].message.contains(
                "Environment variable 'MISSING_VAR' not set (from secret://env/MISSING_VAR)"
            ),
            "{}",
            f[0].message
        );
        assert!(f[0].fix.contains("set MISSING_VAR"));
        assert!(
            f[1].message.contains("(from ${ALSO_MISSING})"),
            "{}",
            f[1].message
        );
        assert!(f[3].message.contains("File not found"), "{}", f[3].message);
        assert!(
            f[4].message.contains("Unsupported secret provider 'nope'"),
            "{}",
            f[4].message
        );
        assert_no_secret(&f, &["hunter2-value"]);
    }

    #[tokio::test]
    async fn disabled_servers_are_not_resolved() {
        let s =
            server(json!({"command": "x", "enabled": false, "env": {"A": "secret://env/NOPE"}}));
        assert!(
            check(&[&s], &host(&[]), ProviderDefinitions::default())
                .await
                .is_empty()
        );
    }
}
