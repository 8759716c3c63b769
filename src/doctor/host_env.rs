//! The host environment the doctor reads (`options.env`, else this process's), and
//! `loader-hijack-env`: variables that make a program load code it was not asked to run
//! (`LD_PRELOAD`, `NODE_OPTIONS`, …, [`crate::transport::child_env::is_loader_hijack`]) set in
//! the host, or passed to a server on purpose.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Finding, Severity, server_path};
use crate::config::{ServerConfig, TransportKind};
use crate::secrets::EnvSource;
use crate::transport::child_env::is_loader_hijack;

const CODE: &str = "loader-hijack-env";

/// The host's variables.
pub(super) struct HostEnv {
    vars: Arc<BTreeMap<String, String>>,
    /// Whether they came from `options.env` (for messages).
    given: bool,
}

impl HostEnv {
    /// `is_host`: `given` is the host's own environment, read for the caller.
    pub fn new(given: Option<BTreeMap<String, String>>, is_host: bool) -> Self {
        match given {
            Some(vars) => Self {
                vars: Arc::new(vars),
                given: !is_host,
            },
            None => Self {
                vars: Arc::new(
                    std::env::vars_os()
                        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                        .collect(),
                ),
                given: false,
            },
        }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        if cfg!(windows) {
            self.vars
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        } else {
            self.vars.get(name).map(String::as_str)
        }
    }

    /// What the secret resolvers read.
    pub fn source(&self) -> EnvSource {
        EnvSource::Fixed(self.vars.clone())
    }

    /// `options.env` or `the process environment`, for messages.
    pub fn described(&self) -> &'static str {
        if self.given {
            "options.env"
        } else {
            "the process environment"
        }
    }
}

/// A server that passes a loader-hijack variable explicitly (`env` or `envPassthrough`).
pub(super) fn check_server(server: &ServerConfig, out: &mut Vec<Finding>) {
    if server.transport != TransportKind::Stdio {
        return;
    }
    let base = server_path(server);
    let fix = |name: &str| {
        format!(
            "remove {name} from this server's config unless the server really needs it; it makes \
             the server's runtime load code at start (a shared library, a preloaded module), so \
             keep whatever it points at under your control"
        )
    };
    for (key, _) in &server.env {
        if is_loader_hijack(key) {
            let field = format!("{base}.env.{key}");
            out.push(Finding::new(
                Severity::Warning,
                CODE,
                Some(&server.name),
                Some(field.clone()),
                format!("{field} sets the loader-hijack variable {key} for this server"),
                fix(key),
            ));
        }
    }
    for (at, name) in server.env_passthrough.iter().enumerate() {
        if is_loader_hijack(name) {
            let field = format!("{base}.envPassthrough[{at}]");
            out.push(Finding::new(
                Severity::Warning,
                CODE,
                Some(&server.name),
                Some(field.clone()),
                format!(
                    "{field} passes the host's loader-hijack variable {name} to this server \
                     (withheld from servers otherwise)"
                ),
                fix(name),
            ));
        }
    }
}

/// Loader-hijack variables set in the host environment, one finding each (by name).
pub(super) fn check_host(host: &HostEnv, out: &mut Vec<Finding>) {
    for name in host.vars.keys().filter(|n| is_loader_hijack(n)) {
        out.push(Finding::new(
            Severity::Warning,
            CODE,
            None,
            None,
            format!(
                "{name} is set in the host environment ({}): it changes what code programs load \
                 at start. The manager withholds it from every stdio server unless a server's \
                 env or envPassthrough names it, but the gateway itself and anything else it \
                 starts still get it",
                host.described()
            ),
            format!(
                "unset {name} in the gateway's environment unless it is set on purpose; to give \
                 it to one server on purpose, add \"envPassthrough\": [\"{name}\"] to that server"
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::test_support::*;
    use serde_json::json;

    #[test]
    fn host_variables_are_named_never_shown() {
        let host = HostEnv::new(
            Some(
                [
                    ("LD_PRELOAD", "/tmp/evil.so"),
                    ("PATH", "/bin"),
                    ("NODE_OPTIONS", "--require /tmp/x.js"),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            ),
            false,
        );
        let mut out = Vec::new();
        check_host(&host, &mut out);
        assert_eq!(codes(&out), [CODE, CODE]);
        assert!(out[0].message.starts_with("LD_PRELOAD is set"));
        assert!(out[1].message.starts_with("NODE_OPTIONS is set"));
        assert!(
            out.iter()
                .all(|f| f.server.is_none() && f.severity == Severity::Warning)
        );
        assert_no_secret(&out, &["/tmp/evil.so", "/tmp/x.js"]);
    }

    #[test]
    fn servers_that_pass_one_explicitly() {
        let s = server(
            json!({"command": "x", "env": {"NODE_OPTIONS": "--require /tmp/x.js", "OTHER": "1"},
            "envPassthrough": ["HOME", "LD_PRELOAD"]}),
        );
        let mut out = Vec::new();
        check_server(&s, &mut out);
        let fields: Vec<_> = out.iter().map(|f| f.field.clone().unwrap()).collect();
        assert_eq!(
            fields,
            ["servers.s.env.NODE_OPTIONS", "servers.s.envPassthrough[1]"]
        );
        assert_no_secret(&out, &["/tmp/x.js"]);
        let mut out = Vec::new();
        check_server(
            &server(json!({"command": "x", "env": {"PATH": "/bin"}})),
            &mut out,
        );
        assert_eq!(out, []);
    }
}
