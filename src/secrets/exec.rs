//! `secret://exec/<provider>#<id>`: runs the command of an OpenClaw
//! `secrets.providers.<provider>` entry with `source: "exec"` and asks it for
//! one id, with OpenClaw's JSON protocol.
//!
//! Protocol (one process per id):
//! - stdin: `{"protocolVersion":1,"provider":"<provider>","ids":["<id>"]}`,
//!   then EOF.
//! - stdout: `{"protocolVersion":1,"values":{"<id>":"<value>"}}`, or with an
//!   `errors` map for ids that failed: `{"protocolVersion":1,"values":{},
//!   "errors":{"<id>":{"message":"…"}}}` (a plain string is accepted as the
//!   error too). The value must be a JSON string.
//! - The command must exit 0 within `timeoutMs` (default 5000) and write at
//!   most `maxOutputBytes` (default 1 MiB) to stdout; stderr is discarded.
//! - No shell: `command` is executed directly with `args`. The environment is
//!   the host's, or with `passEnv: [names]` only those variables; `env: {…}`
//!   adds variables. The child runs in its own process group, which is killed
//!   on timeout or when the output bound is exceeded.
//!
//! Errors name the reference; they never contain stdout. An `errors[id]`
//! message is included cut to 160 characters, as the helper's own account of
//! the failure.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use secrecy::SecretString;
use secrecy::zeroize::Zeroizing;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{SecretError, SecretFuture, SecretProvider, SecretRef};

/// Default `timeoutMs`.
pub const DEFAULT_EXEC_TIMEOUT: Duration = Duration::from_millis(5000);
/// Default `maxOutputBytes`.
pub const DEFAULT_EXEC_MAX_OUTPUT: usize = 1 << 20;

/// One `secrets.providers.<name>` entry with `source: "exec"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecDefinition {
    pub command: String,
    pub args: Vec<String>,
    pub timeout: Duration,
    pub max_output_bytes: usize,
    /// When set, the child gets only these host variables (plus `env`).
    pub pass_env: Option<Vec<String>>,
    /// Added to the child's environment.
    pub env: Vec<(String, String)>,
}

impl ExecDefinition {
    /// `command` with the defaults for everything else.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            args: Vec::new(),
            timeout: DEFAULT_EXEC_TIMEOUT,
            max_output_bytes: DEFAULT_EXEC_MAX_OUTPUT,
            pass_env: None,
            env: Vec::new(),
        }
    }
}

/// The `exec` provider: a set of named definitions.
#[derive(Debug, Clone, Default)]
pub struct ExecProvider {
    defs: Arc<BTreeMap<String, ExecDefinition>>,
}

impl ExecProvider {
    pub fn new(defs: BTreeMap<String, ExecDefinition>) -> Self {
        Self {
            defs: Arc::new(defs),
        }
    }

    /// The definition names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.defs.keys().map(String::as_str).collect()
    }
}

fn one_line(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    super::support::truncate_chars(cleaned.trim(), 160)
}

/// SIGKILL to the child's process group (it is the group leader).
fn kill_group(child: &tokio::process::Child) {
    #[cfg(unix)]
    if let Some(pid) = child.id()
        && let Ok(pid) = libc::pid_t::try_from(pid)
    {
        // SAFETY: plain syscall on a group id we created; no memory is involved.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = child;
}

async fn run(def: &ExecDefinition, provider: &str, id: &str) -> Result<SecretString, String> {
    let mut cmd = tokio::process::Command::new(&def.command);
    cmd.args(&def.args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    if let Some(names) = &def.pass_env {
        cmd.env_clear();
        for n in names {
            if let Some(v) = std::env::var_os(n) {
                cmd.env(n, v);
            }
        }
    }
    for (k, v) in &def.env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run '{}': {e}", def.command))?;

    let request = serde_json::json!({
        "protocolVersion": 1,
        "provider": provider,
        "ids": [id],
    })
    .to_string();
    let mut stdin = child.stdin.take();
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| "no stdout pipe".to_owned())?;
    let max = def.max_output_bytes;

    let work = async {
        if let Some(mut w) = stdin.take() {
            // A helper that exits without reading gives EPIPE: its output decides.
            let _ = w.write_all(request.as_bytes()).await;
            let _ = w.shutdown().await;
        }
        let mut out = Zeroizing::new(Vec::with_capacity(max.min(64 * 1024) + 1));
        let mut buf = Zeroizing::new([0u8; 8192]);
        loop {
            let n = stdout
                .read(&mut buf[..])
                .await
                .map_err(|e| format!("reading its output failed: {e}"))?;
            if n == 0 {
                break;
            }
            if out.len() + n > max {
                return Err(format!("it wrote more than {max} bytes (maxOutputBytes)"));
            }
            if out.capacity() < out.len() + n {
                let mut bigger = Zeroizing::new(Vec::with_capacity((out.len() + n) * 2));
                bigger.extend_from_slice(&out);
                out = bigger;
            }
            out.extend_from_slice(&buf[..n]);
        }
        let status = child
            .wait()
            .await
            .map_err(|e| format!("waiting for it failed: {e}"))?;
        Ok::<_, String>((status, out))
    };
    let outcome = tokio::time::timeout(def.timeout, work).await;
    let (status, out) = match outcome {
        Ok(Ok(done)) => done,
        Ok(Err(e)) => {
            kill_group(&child);
            let _ = child.kill().await;
            return Err(e);
        }
        Err(_) => {
            kill_group(&child);
            let _ = child.kill().await;
            return Err(format!(
                "'{}' timed out after {} ms (timeoutMs)",
                def.command,
                def.timeout.as_millis()
            ));
        }
    };
    if !status.success() {
        return Err(match status.code() {
            Some(c) => format!("'{}' exited with status {c}", def.command),
            None => format!("'{}' was killed by a signal", def.command),
        });
    }
    let v: serde_json::Value = serde_json::from_slice(&out).map_err(|_| {
        format!(
            "'{}' did not answer with JSON ({} bytes on stdout)",
            def.command,
            out.len()
        )
    })?;
    let Some(obj) = v.as_object() else {
        return Err(format!(
            "'{}' did not answer with a JSON object",
            def.command
        ));
    };
    match obj
        .get("protocolVersion")
        .and_then(serde_json::Value::as_u64)
    {
        Some(1) => {}
        Some(other) => {
            return Err(format!(
                "'{}' answered protocolVersion {other}; only 1 is supported",
                def.command
            ));
        }
        None => {
            return Err(format!(
                "'{}' answered without a numeric protocolVersion",
                def.command
            ));
        }
    }
    if let Some(err) = obj.get("errors").and_then(|e| e.get(id)) {
        let message = match err {
            serde_json::Value::String(s) => one_line(s),
            other => other
                .get("message")
                .and_then(serde_json::Value::as_str)
                .map(one_line)
                .unwrap_or_else(|| "no message".to_owned()),
        };
        return Err(format!(
            "the exec provider reported an error for this id: {message}"
        ));
    }
    match obj.get("values").and_then(|vals| vals.get(id)) {
        Some(serde_json::Value::String(s)) => Ok(SecretString::from(s.as_str())),
        Some(_) => Err("the value for this id is not a JSON string".to_owned()),
        None => Err(format!("'{}' returned no value for this id", def.command)),
    }
}

impl SecretProvider for ExecProvider {
    fn name(&self) -> &str {
        "exec"
    }

    fn resolve<'a>(&'a self, r: &'a SecretRef) -> SecretFuture<'a> {
        Box::pin(async move {
            let fail = |cause: String| SecretError::cannot_resolve(r, cause);
            let id = match r.field.as_deref() {
                Some(id) if !id.is_empty() => id,
                _ => {
                    return Err(fail(
                        "exec references need an id: secret://exec/<provider>#<id>".into(),
                    ));
                }
            };
            let Some(def) = self.defs.get(&r.path) else {
                return Err(fail(format!(
                    "no exec provider '{}' is defined (secrets.providers.{} with source \"exec\")",
                    r.path, r.path
                )));
            };
            run(def, &r.path, id).await.map_err(fail)
        })
    }
}
