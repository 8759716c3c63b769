//! `unpinned-package`: a stdio server started through a package runner (`npx`, `bunx`,
//! `pnpm dlx`, `yarn dlx`, `npm exec`, `uvx`, `uv tool run`, `pipx run`) whose package has no
//! version, or a dist-tag (`latest`, `next`): every start may run different code. No registry
//! is asked; the fix shows where the version goes.

use super::{Finding, Severity, quoted, server_path};
use crate::config::{ServerConfig, TransportKind};

const CODE: &str = "unpinned-package";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ecosystem {
    Npm,
    Python,
}

/// How a runner's arguments are read.
struct Runner {
    /// As the fix shows it (`npx`, `pnpm dlx`, …).
    name: &'static str,
    eco: Ecosystem,
    /// Options whose value is the package (the positional is then the command to run).
    package_flags: &'static [&'static str],
    /// Other options that take a value.
    valued: &'static [&'static str],
}

const NPX: Runner = Runner {
    name: "npx",
    eco: Ecosystem::Npm,
    package_flags: &["-p", "--package"],
    valued: &[
        "--registry",
        "--cache",
        "--userconfig",
        "--prefix",
        "-w",
        "--workspace",
        "--loglevel",
        "--node-options",
    ],
};
const BUNX: Runner = Runner {
    name: "bunx",
    eco: Ecosystem::Npm,
    package_flags: &["-p", "--package"],
    valued: &["--registry", "--cwd", "--config", "-c"],
};
const PNPM_DLX: Runner = Runner {
    name: "pnpm dlx",
    eco: Ecosystem::Npm,
    package_flags: &["--package"],
    valued: &["--reporter", "--dir", "-C", "--registry"],
};
const YARN_DLX: Runner = Runner {
    name: "yarn dlx",
    eco: Ecosystem::Npm,
    package_flags: &["-p", "--package"],
    valued: &[],
};
const UVX: Runner = Runner {
    name: "uvx",
    eco: Ecosystem::Python,
    package_flags: &["--from"],
    valued: &[
        "--with",
        "--with-editable",
        "--with-requirements",
        "--python",
        "-p",
        "--index",
        "--index-url",
        "--extra-index-url",
        "--default-index",
        "--find-links",
        "-f",
        "--constraints",
        "-c",
        "--overrides",
        "--directory",
        "--project",
        "--cache-dir",
        "--config-file",
        "--color",
        "--python-preference",
        "--resolution",
        "--prerelease",
        "--index-strategy",
        "--keyring-provider",
        "--exclude-newer",
        "--refresh-package",
        "--reinstall-package",
        "--upgrade-package",
        "-P",
        "--env-file",
    ],
};
const PIPX_RUN: Runner = Runner {
    name: "pipx run",
    eco: Ecosystem::Python,
    package_flags: &["--spec"],
    valued: &["--python", "--pip-args", "--index-url", "-i", "--backend"],
};

/// The runner and where its own arguments start, from the command and the first args.
fn runner(command: &str, args: &[String]) -> Option<(Runner, usize)> {
    let base = command.rsplit(['/', '\\']).next().unwrap_or(command);
    let base = base.to_ascii_lowercase();
    let base = base
        .strip_suffix(".cmd")
        .or_else(|| base.strip_suffix(".exe"))
        .unwrap_or(&base);
    let first = args.first().map(String::as_str);
    let second = args.get(1).map(String::as_str);
    Some(match (base, first, second) {
        ("npx", ..) | ("pnpx", ..) => (NPX, 0),
        ("npm", Some("exec" | "x"), _) => (NPX, 1),
        ("bunx", ..) => (BUNX, 0),
        ("bun", Some("x"), _) => (BUNX, 1),
        ("pnpm", Some("dlx"), _) => (PNPM_DLX, 1),
        ("yarn", Some("dlx"), _) => (YARN_DLX, 1),
        ("uvx", ..) => (UVX, 0),
        ("uv", Some("tool"), Some("run")) => (UVX, 2),
        ("pipx", Some("run"), _) => (PIPX_RUN, 1),
        _ => return None,
    })
}

/// The index of the package argument and the spec (for `--from=x` / `--package=x`, the part
/// after `=`), or `None` when there is none to check (`-c`, a shell command).
fn package_arg(r: &Runner, args: &[String], from: usize) -> Option<(usize, String)> {
    let mut i = from;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "--" {
            return args.get(i + 1).map(|a| (i + 1, a.clone()));
        }
        if arg.starts_with('-') && arg.len() > 1 {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) => (f, Some(v)),
                None => (arg, None),
            };
            if r.package_flags.contains(&flag) {
                return match inline {
                    Some(v) => Some((i, v.to_owned())),
                    None => args.get(i + 1).map(|a| (i + 1, a.clone())),
                };
            }
            if r.eco == Ecosystem::Npm && matches!(flag, "-c" | "--call") {
                return None;
            }
            if inline.is_none() && r.valued.contains(&flag) {
                i += 1;
            }
            i += 1;
            continue;
        }
        return Some((i, arg.to_owned()));
    }
    None
}

/// Not a registry package: a path, URL, git or tarball spec.
fn not_a_registry_spec(spec: &str) -> bool {
    spec.starts_with('.')
        || spec.starts_with('/')
        || spec.starts_with('~')
        || spec.contains("://")
        || [
            "file:",
            "git+",
            "git:",
            "github:",
            "gitlab:",
            "bitbucket:",
            "http:",
            "https:",
        ]
        .iter()
        .any(|p| spec.starts_with(p))
        || spec.ends_with(".tgz")
        || spec.ends_with(".whl")
        || spec.ends_with(".tar.gz")
}

/// A version that pins (or at least names) a release: starts with a digit, `v<digit>`, `=`, or
/// is a range; dist-tags (`latest`, `next`, `beta`…) do not.
fn is_version(v: &str) -> bool {
    let v = v.trim_start_matches(['=', 'v', '^', '~', '>', '<', ' ']);
    v.starts_with(|c: char| c.is_ascii_digit())
}

/// `(name, version)` of an npm spec: `@scope/pkg@1.2.3`, `pkg@latest`, `pkg`.
fn npm_split(spec: &str) -> (&str, Option<&str>) {
    let at = spec
        .char_indices()
        .skip(1)
        .filter(|(_, c)| *c == '@')
        .map(|(i, _)| i)
        .last();
    match at {
        Some(i) => (&spec[..i], Some(&spec[i + 1..])),
        None => (spec, None),
    }
}

/// `(name, pinned)` of a Python spec: `pkg==1.0`, `pkg@1.0` (uvx), `pkg[extra]==1`, `pkg>=1`.
fn python_split(spec: &str) -> (&str, bool) {
    if let Some(i) = spec.find(['=', '<', '>', '~', '!']) {
        let op = &spec[i..];
        let pinned = op.starts_with("==") || op.starts_with("~=") || op.starts_with(">=");
        return (&spec[..i], pinned);
    }
    if let Some((name, version)) = spec.split_once('@') {
        return (name.trim(), is_version(version.trim()));
    }
    (spec, false)
}

pub(super) fn check(server: &ServerConfig, out: &mut Vec<Finding>) {
    if server.transport != TransportKind::Stdio {
        return;
    }
    let Some(command) = server.command.as_deref() else {
        return;
    };
    let Some((r, from)) = runner(command, &server.args) else {
        return;
    };
    let Some((at, spec)) = package_arg(&r, &server.args, from) else {
        return;
    };
    if spec.is_empty() || not_a_registry_spec(&spec) || spec.contains("${") {
        return;
    }
    let inline = server.args[at] != spec;
    let (name, problem, pinned_spec) = match r.eco {
        Ecosystem::Npm => {
            let (name, version) = npm_split(&spec);
            let problem = match version {
                None => "has no version".to_owned(),
                Some(v) if !is_version(v) => format!("asks for the tag {}", quoted(v)),
                Some(_) => return,
            };
            (name, problem, format!("{name}@<version>"))
        }
        Ecosystem::Python => {
            let (name, pinned) = python_split(&spec);
            if pinned {
                return;
            }
            let problem = if spec.contains('@') {
                "asks for the latest release".to_owned()
            } else {
                "has no version".to_owned()
            };
            (name, problem, format!("{name}==<version>"))
        }
    };
    let field = format!("{}.args[{at}]", server_path(server));
    let new_arg = if inline {
        let flag = server.args[at].split_once('=').map_or("", |(f, _)| f);
        format!("{flag}={pinned_spec}")
    } else {
        pinned_spec.clone()
    };
    // The command line up to the package: the arguments after it may hold anything.
    let mut shown: Vec<String> = vec![r.name.to_owned()];
    shown.extend(server.args[from..at].iter().cloned());
    shown.push(new_arg.clone());
    if at + 1 < server.args.len() {
        shown.push("…".to_owned());
    }
    let lookup = match r.eco {
        Ecosystem::Npm => format!("npm view {name} version"),
        Ecosystem::Python => format!("pip index versions {name}"),
    };
    out.push(Finding::new(
        Severity::Warning,
        CODE,
        Some(&server.name),
        Some(field.clone()),
        format!(
            "{field}: the package {} {problem}: {} fetches whatever is newest when the server \
             starts, so a new release (or a compromised one) runs without review",
            quoted(name),
            r.name
        ),
        format!(
            "pin it: set {field} to \"{new_arg}\" ({}), with the version you reviewed (`{lookup}` \
             shows the newest)",
            shown.join(" ")
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::test_support::*;
    use serde_json::{Value, json};

    fn findings(command: &str, args: Value) -> Vec<Finding> {
        let mut out = Vec::new();
        check(&server(json!({"command": command, "args": args})), &mut out);
        out
    }

    fn flagged(command: &str, args: Value) -> Option<String> {
        let f = findings(command, args);
        assert!(f.len() <= 1);
        f.first().map(|f| f.field.clone().unwrap())
    }

    #[test]
    fn npm_runners() {
        assert_eq!(
            flagged("npx", json!(["-y", "pkg"])).as_deref(),
            Some("servers.s.args[1]")
        );
        assert_eq!(
            flagged("npx", json!(["-y", "@scope/pkg"])).as_deref(),
            Some("servers.s.args[1]")
        );
        assert_eq!(
            flagged("npx", json!(["pkg@latest"])).as_deref(),
            Some("servers.s.args[0]")
        );
        assert_eq!(
            flagged("npx", json!(["--yes", "pkg@next", "--port", "3"])).as_deref(),
            Some("servers.s.args[1]")
        );
        assert_eq!(flagged("npx", json!(["-y", "@scope/pkg@1.2.3"])), None);
        assert_eq!(flagged("npx", json!(["pkg@^1.2.0"])), None);
        assert_eq!(
            flagged("/usr/local/bin/npx", json!(["-p", "@a/b", "b-cli"])).as_deref(),
            Some("servers.s.args[1]")
        );
        assert_eq!(flagged("npx", json!(["-p", "@a/b@2.0.0", "b-cli"])), None);
        assert_eq!(
            flagged("npx", json!(["--package=@a/b", "b-cli"])).as_deref(),
            Some("servers.s.args[0]")
        );
        assert_eq!(
            flagged("npx", json!(["--registry", "https://r.example", "pkg"])).as_deref(),
            Some("servers.s.args[2]")
        );
        assert_eq!(flagged("npx", json!(["-y", "./local-server"])), None);
        assert_eq!(flagged("npx", json!(["github:user/repo"])), None);
        assert_eq!(flagged("npx", json!(["-c", "pkg serve"])), None);
        assert_eq!(
            flagged("bunx", json!(["pkg"])).as_deref(),
            Some("servers.s.args[0]")
        );
        assert_eq!(flagged("bunx", json!(["pkg@1.0.0"])), None);
        assert_eq!(
            flagged("pnpm", json!(["dlx", "pkg"])).as_deref(),
            Some("servers.s.args[1]")
        );
        assert_eq!(flagged("yarn", json!(["dlx", "-q", "pkg@3.1.0"])), None);
        assert_eq!(
            flagged("npx.cmd", json!(["pkg"])).as_deref(),
            Some("servers.s.args[0]")
        );
        assert_eq!(flagged("node", json!(["pkg"])), None);
        assert_eq!(flagged("pnpm", json!(["install"])), None);
    }

    #[test]
    fn python_runners() {
        assert_eq!(
            flagged("uvx", json!(["mcp-server-fetch"])).as_deref(),
            Some("servers.s.args[0]")
        );
        assert_eq!(flagged("uvx", json!(["mcp-server-fetch==1.0"])), None);
        assert_eq!(flagged("uvx", json!(["mcp-server-fetch@1.0"])), None);
        assert_eq!(
            flagged("uvx", json!(["mcp-server-fetch@latest"])).as_deref(),
            Some("servers.s.args[0]")
        );
        assert_eq!(
            flagged("uvx", json!(["--from", "git-mcp", "git-mcp-server"])).as_deref(),
            Some("servers.s.args[1]")
        );
        assert_eq!(
            flagged("uvx", json!(["--from", "git-mcp==0.3", "git-mcp-server"])),
            None
        );
        assert_eq!(
            flagged("uvx", json!(["--python", "3.12", "pkg"])).as_deref(),
            Some("servers.s.args[2]")
        );
        assert_eq!(
            flagged("uv", json!(["tool", "run", "pkg"])).as_deref(),
            Some("servers.s.args[2]")
        );
        assert_eq!(flagged("uv", json!(["run", "server.py"])), None);
        assert_eq!(
            flagged("pipx", json!(["run", "pkg"])).as_deref(),
            Some("servers.s.args[1]")
        );
        assert_eq!(
            flagged("pipx", json!(["run", "--spec", "pkg==2", "cli"])),
            None
        );
        assert_eq!(flagged("uvx", json!(["pkg[extra]==1.2"])), None);
    }

    #[test]
    fn the_fix_shows_the_pinned_argument_and_nothing_after_it() {
        let f = findings(
            "npx",
            json!([
                "-y",
                "@modelcontextprotocol/server-github",
                "--token",
                "abc123secret"
            ]),
        );
        assert_eq!(codes(&f), [CODE]);
        assert!(
            f[0].fix.contains("\"@modelcontextprotocol/server-github@<version>\" (npx -y @modelcontextprotocol/server-github@<version> …)"),
            "{}",
            f[0].fix
        );
        assert_no_secret(&f, &["abc123secret"]);
        let f = findings("uvx", json!(["mcp-server-fetch"]));
        assert!(
            f[0].fix.contains("\"mcp-server-fetch==<version>\""),
            "{}",
            f[0].fix
        );
        let f = findings("npx", json!(["--package=pkg@latest", "cli"]));
        assert!(
            f[0].fix.contains("\"--package=pkg@<version>\""),
            "{}",
            f[0].fix
        );
        assert!(
            f[0].message.contains("asks for the tag 'latest'"),
            "{}",
            f[0].message
        );
    }
}
