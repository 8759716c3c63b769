//! `command-not-found`: a stdio server whose `command` cannot be run: a path that does not
//! exist or is not executable, or a bare name on no directory of `PATH` (the server's own
//! `env.PATH` when set, as the spawn uses it, else the host's). Windows: `PATHEXT` extensions
//! are tried for a name without one.

use std::path::{Path, PathBuf};

use super::host_env::HostEnv;
use super::{Finding, Severity, quoted, server_path};
use crate::config::{ServerConfig, TransportKind};
use crate::secrets::{EnvSource, ExposeSecret, has_env_refs, is_secret_uri, substitute_env_refs};

const CODE: &str = "command-not-found";

/// Whether `path` is a file this process could execute.
fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// The candidates for `path` (itself, and on Windows with each `PATHEXT` extension when it has
/// none).
fn candidates(path: &Path, pathext: Option<&str>) -> Vec<PathBuf> {
    let mut out = vec![path.to_path_buf()];
    if cfg!(windows) && path.extension().is_none() {
        let exts = pathext.unwrap_or(".COM;.EXE;.BAT;.CMD");
        for ext in exts.split(';').filter(|e| !e.is_empty()) {
            let mut p = path.as_os_str().to_owned();
            p.push(ext);
            out.push(PathBuf::from(p));
        }
    }
    out
}

fn found(path: &Path, pathext: Option<&str>) -> bool {
    candidates(path, pathext).iter().any(|p| is_executable(p))
}

/// An install hint for commands servers are usually started with.
fn install_hint(base: &str) -> &'static str {
    match base {
        "npx" | "npm" | "node" | "pnpx" => {
            "install Node.js (https://nodejs.org), which brings npm and npx"
        }
        "pnpm" => "install pnpm (https://pnpm.io/installation)",
        "yarn" => "install Yarn (corepack enable, or https://yarnpkg.com)",
        "bun" | "bunx" => "install Bun (https://bun.sh)",
        "deno" => "install Deno (https://deno.com)",
        "uv" | "uvx" => "install uv (https://docs.astral.sh/uv/getting-started/installation/)",
        "pipx" => "install pipx (https://pipx.pypa.io)",
        "python" | "python3" => "install Python 3 (https://www.python.org/downloads/)",
        "docker" => "install Docker (https://docs.docker.com/get-docker/)",
        _ => "install the program",
    }
}

pub(super) fn check(server: &ServerConfig, host: &HostEnv, out: &mut Vec<Finding>) {
    if server.transport != TransportKind::Stdio {
        return;
    }
    let Some(command) = server.command.as_deref().filter(|c| !c.is_empty()) else {
        return;
    };
    let field = format!("{}.command", server_path(server));
    let pathext = host.get("PATHEXT");
    let is_path = command.contains('/') || (cfg!(windows) && command.contains('\\'));
    let base = command.rsplit(['/', '\\']).next().unwrap_or(command);
    let hint = install_hint(&base.to_ascii_lowercase());
    if is_path {
        let path = Path::new(command);
        let full = if path.is_absolute() {
            path.to_path_buf()
        } else {
            // The spawn runs it from the server's `cwd` when set.
            let from = server
                .cwd
                .as_deref()
                .map(PathBuf::from)
                .or_else(|| std::env::current_dir().ok());
            match from {
                Some(dir) => dir.join(path),
                None => path.to_path_buf(),
            }
        };
        if found(&full, pathext) {
            return;
        }
        let why = if candidates(&full, pathext).iter().any(|p| p.exists()) {
            "exists but is not an executable file"
        } else {
            "does not exist"
        };
        let relative = if path.is_absolute() {
            String::new()
        } else {
            format!(
                " (relative to {})",
                if server.cwd.is_some() {
                    "the server's cwd"
                } else {
                    "the gateway's working directory"
                }
            )
        };
        out.push(Finding::new(
            Severity::Error,
            CODE,
            Some(&server.name),
            Some(field.clone()),
            format!(
                "{field}: {} {why}{relative}; the server cannot start",
                quoted(command)
            ),
            format!(
                "{hint}, or set \"command\" to the absolute path of an executable file \
                 (chmod +x it if it is a script with a #! line)"
            ),
        ));
        return;
    }
    let (path_var, from) = match server_path_var(server, host) {
        Some(p) => (Some(p), format!("{}.env.PATH", server_path(server))),
        None => (
            host.get("PATH").map(str::to_owned),
            host.described().to_owned(),
        ),
    };
    let on_path = path_var.as_deref().is_some_and(|p| {
        std::env::split_paths(p).any(|dir| {
            let dir = if dir.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                dir
            };
            found(&dir.join(command), pathext)
        })
    });
    if on_path {
        return;
    }
    let where_ = if path_var.is_some() {
        format!("on the PATH from {from}")
    } else {
        format!("anywhere: there is no PATH in {from}")
    };
    out.push(Finding::new(
        Severity::Error,
        CODE,
        Some(&server.name),
        Some(field.clone()),
        format!(
            "{field}: {} is not found {where_}; the server cannot start",
            quoted(command)
        ),
        format!(
            "{hint} on the gateway's machine, or set \"command\" to its absolute path (`command -v \
             {base}` in a shell that finds it), or add its directory to the PATH the gateway runs \
             with"
        ),
    ));
}

/// The server's own `env.PATH` as the spawn would set it: plain, or with `${VAR}` substituted
/// from the host; `None` when not set or not resolvable here (a `secret://` reference).
fn server_path_var(server: &ServerConfig, host: &HostEnv) -> Option<String> {
    let (_, value) = server.env.iter().find(|(k, _)| {
        if cfg!(windows) {
            k.eq_ignore_ascii_case("PATH")
        } else {
            k == "PATH"
        }
    })?;
    if is_secret_uri(value) {
        return None;
    }
    if has_env_refs(value) {
        let source: EnvSource = host.source();
        return substitute_env_refs(value, &source)
            .ok()
            .map(|s| s.value.expose_secret().to_owned());
    }
    Some(value.clone())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::doctor::test_support::*;
    use serde_json::{Value, json};

    fn host(path: &str) -> HostEnv {
        HostEnv::new(
            Some([("PATH".to_owned(), path.to_owned())].into_iter().collect()),
            false,
        )
    }

    fn findings(server_json: Value, host: &HostEnv) -> Vec<Finding> {
        let mut out = Vec::new();
        check(&server(server_json), host, &mut out);
        out
    }

    #[test]
    fn bare_names_are_looked_up_on_the_path() {
        let dir = std::env::temp_dir().join(format!("doctor-cmd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("my-server");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        let plain = dir.join("not-exec");
        std::fs::write(&plain, "x").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        let d = dir.to_str().unwrap();

        assert_eq!(
            findings(
                json!({"command": "my-server"}),
                &host(&format!("/nonexistent:{d}"))
            ),
            []
        );
        let f = findings(json!({"command": "my-server"}), &host("/nonexistent"));
        assert_eq!(codes(&f), [CODE]);
        assert!(
            f[0].message
                .contains("not found on the PATH from options.env"),
            "{}",
            f[0].message
        );
        // A bare name that exists but is not executable is not found either (as exec sees it).
        assert_eq!(
            codes(&findings(json!({"command": "not-exec"}), &host(d))),
            [CODE]
        );
        // The server's own PATH wins, with ${VAR} substituted from the host.
        assert_eq!(
            findings(
                json!({"command": "my-server", "env": {"PATH": d}}),
                &host("/nonexistent")
            ),
            []
        );
        let f = findings(
            json!({"command": "my-server", "env": {"PATH": "/nonexistent"}}),
            &host(d),
        );
        assert!(
            f[0].message.contains("servers.s.env.PATH"),
            "{}",
            f[0].message
        );
        let mut h: std::collections::BTreeMap<String, String> =
            [("PATH".to_owned(), "/x".to_owned())].into();
        h.insert("TOOLS".into(), d.into());
        assert_eq!(
            findings(
                json!({"command": "my-server", "env": {"PATH": "${TOOLS}"}}),
                &HostEnv::new(Some(h), false)
            ),
            []
        );
        // npx gets an install hint.
        let f = findings(
            json!({"command": "npx", "args": ["-y", "pkg@1.0.0"]}),
            &host("/nonexistent"),
        );
        assert!(f[0].fix.contains("install Node.js"), "{}", f[0].fix);

        // Paths.
        assert_eq!(
            findings(json!({"command": exe.to_str().unwrap()}), &host("")),
            []
        );
        let f = findings(json!({"command": plain.to_str().unwrap()}), &host(""));
        assert!(
            f[0].message
                .contains("exists but is not an executable file"),
            "{}",
            f[0].message
        );
        let f = findings(json!({"command": "/nonexistent/server"}), &host(""));
        assert!(f[0].message.contains("does not exist"));
        assert_eq!(
            findings(json!({"command": "./my-server", "cwd": d}), &host("")),
            []
        );
        assert_eq!(
            codes(&findings(
                json!({"command": "./my-server", "cwd": "/"}),
                &host("")
            )),
            [CODE]
        );
        // Not a stdio server: nothing to check.
        assert_eq!(
            findings(
                json!({"transport": "http", "url": "https://x.example"}),
                &host("")
            ),
            []
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
