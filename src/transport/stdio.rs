//! Local servers: a child process speaking newline-delimited JSON-RPC on stdin/stdout.
//!
//! The child is spawned without a shell, in a process group of its own (so the whole tree can be
//! signalled), registered with the [orphan guard](super::orphan_guard), with stderr captured:
//! every line goes to the log (warn) and the last few are kept for the start-failure message.
//!
//! The process is a guard: [`ServerProcess::terminate`] stops the whole tree politely, and a
//! `ServerProcess` dropped without it (a connect abandoned half-way, a panic) still takes its
//! whole process group down and unregisters it from the orphan guard.

use std::collections::{BTreeMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::transport::async_rw::AsyncRwTransport;
use secrecy::{ExposeSecret, SecretString};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;
#[cfg(not(unix))]
use tokio::process::ChildStdout;

use super::call_lane::CallLane;
use super::orphan_guard;
use super::stdin_writer::{RmcpStdin, StdinWriter};
use super::stdio_lines::CheckedLines;
pub use super::stdio_lines::StreamFault;
use crate::log::Log;

/// Lines of stderr kept for error messages (and per server, for `getMetrics()`).
const STDERR_TAIL_LINES: usize = 20;
/// A longer stderr line is cut (the rest is dropped, not buffered).
const STDERR_MAX_LINE: usize = 4096;

pub struct SpawnSpec<'a> {
    pub server: &'a str,
    pub command: &'a str,
    pub args: &'a [String],
    /// The environment the server inherits: `None` for this process's own; otherwise the
    /// host's view of it (Node's `process.env`, which a gateway may have replaced), which then
    /// stands in for it whole.
    pub inherit: Option<&'a BTreeMap<String, String>>,
    /// Host variables the server does not inherit (see `child_env`).
    pub withhold: &'a [String],
    /// Applied on top of the inherited environment (what the original did).
    pub env: &'a [(String, SecretString)],
    pub cwd: Option<&'a str>,
    /// Largest JSON-RPC line accepted from the server; a longer one ends the session.
    pub max_message_bytes: usize,
    /// Where the reason goes when the output stream can no longer be trusted (cleared here).
    pub fault: StreamFault,
    /// Each of the waits of a termination (also when the process is dropped unterminated).
    pub grace: Duration,
    /// Shown every line the server writes (what rmcp's types drop about tasks).
    pub task_hints: std::sync::Arc<super::task_hints::TaskHints>,
    /// Also given every stderr line (masked, as logged): the owner's tail, which outlives this
    /// process (the process's own tail is for its start-failure message).
    pub history: StderrTail,
    /// Given the session's output, for another thread to read (see `stdio_lines`).
    pub output: super::stdio_lines::OutputWatcher,
    /// What a `tools/list` answer is cut down to before rmcp reads it (see `listing_bound`).
    pub listing: Option<Arc<super::listing_bound::ListingBound>>,
}

/// The last lines a server wrote to stderr.
#[derive(Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: String) {
        let mut lines = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() == STDERR_TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    pub fn lines(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}

/// A running server process (the leader of its own process group), owned: dropping it
/// without [`Self::terminate`] still stops and unregisters the whole group.
pub struct ServerProcess {
    child: Child,
    pgid: Option<i32>,
    stderr: StderrTail,
    stderr_task: tokio::task::JoinHandle<()>,
    grace: Duration,
    /// `terminate` ran: nothing is left for `Drop` to do.
    released: bool,
    fault: StreamFault,
    /// Windows: the job holding the server's tree (dropping it kills the tree).
    #[cfg(windows)]
    tree: Option<super::job_object::ServerTree>,
}

pub type StdioTransport = AsyncRwTransport<rmcp::RoleClient, CheckedLines<StdoutReader>, RmcpStdin>;

/// The server's stdout as read (on Unix with a pause while another thread reads it).
#[cfg(unix)]
pub type StdoutReader = super::pipe_reader::PipeReader;
#[cfg(not(unix))]
pub type StdoutReader = ChildStdout;

/// Spawns the server and returns the process, the JSON-RPC transport over its stdio for rmcp,
/// and the [call lane](super::call_lane) sharing that stdio.
pub fn spawn(
    spec: &SpawnSpec<'_>,
    log: &Log,
) -> std::io::Result<(ServerProcess, StdioTransport, Arc<CallLane>)> {
    let mut command = tokio::process::Command::new(spec.command);
    command
        .args(spec.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(inherit) = spec.inherit {
        command.env_clear();
        command.envs(inherit);
    }
    for key in spec.withhold {
        command.env_remove(key);
    }
    for (key, value) in spec.env {
        command.env(key, value.expose_secret());
    }
    if let Some(cwd) = spec.cwd {
        command.current_dir(cwd);
    }
    #[cfg(unix)]
    command.process_group(0);

    let mut child = command.spawn().map_err(|e| {
        std::io::Error::new(e.kind(), format!("cannot spawn '{}': {e}", spec.command))
    })?;
    let pgid = child.id().map(|pid| pid as i32);
    if let Some(pgid) = pgid {
        orphan_guard::register(pgid);
    }
    // Windows has no process groups: the tree is held in a kill-on-close job instead.
    #[cfg(windows)]
    let tree = match child.id().map(super::job_object::ServerTree::adopt) {
        Some(Ok(tree)) => Some(tree),
        Some(Err(e)) => {
            log.warn(&format!(
                "MCP server '{}': its process tree could not be put in a job object ({e}); \
                 processes it starts may outlive it",
                spec.server
            ));
            None
        }
        None => None,
    };
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");

    let tail = StderrTail::default();
    let stderr_task = tokio::spawn(forward_stderr(
        stderr,
        [tail.clone(), spec.history.clone()],
        log.clone(),
        spec.server.to_owned(),
    ));
    spec.fault.clear();
    let process = ServerProcess {
        child,
        pgid,
        stderr: tail,
        stderr_task,
        grace: spec.grace,
        released: false,
        fault: spec.fault.clone(),
        #[cfg(windows)]
        tree,
    };
    // (On failure the process is dropped, which takes its group down.)
    #[cfg(unix)]
    let stdout = super::pipe_reader::PipeReader::new(stdout)?;
    let stdin = StdinWriter::new(stdin);
    let lane = CallLane::new(stdin.clone());
    let mut stdout = CheckedLines::new(stdout, spec.max_message_bytes, spec.fault.clone())
        .with_hints(spec.task_hints.clone())
        .with_lane(lane.clone());
    let mut rmcp_stdin = stdin.for_rmcp();
    if let Some(listing) = &spec.listing {
        stdout = stdout.with_listing(listing.clone());
        rmcp_stdin = rmcp_stdin.telling(listing.clone());
    }
    spec.output.offer(&stdout);
    // rmcp's own bound (which drops the line and reads on) is never reached: a raw line over
    // the limit ends the stream first, and a repaired one gets room for its repair.
    let transport = AsyncRwTransport::new_client(stdout, rmcp_stdin)
        .with_max_line_length(super::stdio_lines::rmcp_line_limit(spec.max_message_bytes));
    Ok((process, transport, lane))
}

async fn forward_stderr(
    stderr: tokio::process::ChildStderr,
    [tail, history]: [StderrTail; 2],
    log: Log,
    server: String,
) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match read_bounded_line(&mut reader, &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&buf);
        let line = text.trim_end_matches(['\n', '\r']);
        if line.is_empty() {
            continue;
        }
        let line = log.redactor().redact(line).into_owned();
        log.warn(&format!("MCP server '{server}' stderr: {line}"));
        history.push(line.clone());
        tail.push(line);
    }
}

/// Reads one line, keeping at most [`STDERR_MAX_LINE`] bytes of it. Returns bytes consumed.
async fn read_bounded_line<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
    out: &mut Vec<u8>,
) -> std::io::Result<usize> {
    let mut consumed = 0;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(consumed);
        }
        let (take, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let room = STDERR_MAX_LINE.saturating_sub(out.len());
        out.extend_from_slice(&available[..take.min(room)]);
        reader.consume(take);
        consumed += take;
        if done {
            return Ok(consumed);
        }
    }
}

impl ServerProcess {
    /// Why the server's output could no longer be trusted, if it could not.
    pub fn fault(&self) -> Option<String> {
        self.fault.get()
    }

    /// The server's process group (its pid: it leads the group), once spawned.
    pub fn pgid(&self) -> Option<i32> {
        self.pgid
    }

    /// Resolves when the server process (the group leader) exits; a description of how.
    pub async fn exited(&mut self) -> String {
        match self.child.wait().await {
            Ok(status) => describe_exit(status),
            Err(e) => format!("wait failed: {e}"),
        }
    }

    /// Stops the server and everything it started. The caller has already closed the server's
    /// stdin (by closing the transport). Then: wait `grace`, SIGTERM the group, wait `grace`,
    /// SIGKILL the group (off Unix: kill the process), each wait bounded. Members that outlive
    /// the leader are taken down the same way.
    pub async fn terminate(self, grace: Duration) -> StderrTail {
        self.terminate_by(tokio::time::Instant::now() + grace, grace)
            .await
    }

    /// [`Self::terminate`] whose first wait (for the leader to exit after its stdin closed)
    /// ends at `first` instead of `grace` from now.
    pub async fn terminate_by(
        mut self,
        first: tokio::time::Instant,
        grace: Duration,
    ) -> StderrTail {
        let leader_gone = tokio::time::timeout_at(first, self.child.wait())
            .await
            .is_ok();
        if !leader_gone {
            signal_group(self.pgid, Signal::Term);
            if tokio::time::timeout(grace, self.child.wait())
                .await
                .is_err()
            {
                signal_group(self.pgid, Signal::Kill);
                #[cfg(windows)]
                if let Some(tree) = &self.tree {
                    tree.kill();
                }
                let _ = self.child.start_kill();
                let _ = tokio::time::timeout(grace, self.child.wait()).await;
            }
        }
        reap_group(self.pgid, grace).await;
        if let Some(pgid) = self.pgid {
            orphan_guard::unregister(pgid);
        }
        self.released = true;
        // With the whole group gone the stderr pipe reaches EOF at once; let the forwarder drain
        // it so the tail is complete, but never wait long for a holder that escaped the group.
        let _ = tokio::time::timeout(Duration::from_millis(500), &mut self.stderr_task).await;
        self.stderr_task.abort();
        std::mem::take(&mut self.stderr)
    }

    /// How the process ended, if it ends within `wait`.
    pub async fn exit_within(&mut self, wait: Duration) -> Option<String> {
        match tokio::time::timeout(wait, self.child.wait()).await {
            Ok(Ok(status)) => Some(describe_exit(status)),
            _ => None,
        }
    }
}

impl Drop for ServerProcess {
    /// Dropped without `terminate()`: SIGTERM the group now; then, on the runtime if there is
    /// one, SIGKILL what is left after `grace` and unregister the group (without a runtime, at
    /// once). The leader itself is killed by `kill_on_drop` as the child drops.
    fn drop(&mut self) {
        self.stderr_task.abort();
        if self.released {
            return;
        }
        let pgid = self.pgid;
        signal_group(pgid, Signal::Term);
        let grace = self.grace;
        let finish = async move {
            reap_group(pgid, grace).await;
            if let Some(pgid) = pgid {
                orphan_guard::unregister(pgid);
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(finish);
            }
            Err(_) => {
                signal_group(pgid, Signal::Kill);
                if let Some(pgid) = pgid {
                    orphan_guard::unregister(pgid);
                }
            }
        }
    }
}

/// After the leader exited: if anything is left in its group, SIGTERM, wait, SIGKILL.
async fn reap_group(pgid: Option<i32>, grace: Duration) {
    if !group_alive(pgid) {
        return;
    }
    signal_group(pgid, Signal::Term);
    // There is no signal for a non-child's death: poll, bounded by `grace`.
    let deadline = tokio::time::Instant::now() + grace;
    while group_alive(pgid) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if group_alive(pgid) {
        signal_group(pgid, Signal::Kill);
    }
}

#[cfg(unix)]
fn group_alive(pgid: Option<i32>) -> bool {
    pgid.is_some_and(group_has_live_member)
}

#[cfg(not(unix))]
fn group_alive(_pgid: Option<i32>) -> bool {
    false
}

#[cfg(unix)]
fn signal_group(pgid: Option<i32>, signal: Signal) {
    if let Some(pgid) = pgid {
        let sig = match signal {
            Signal::Term => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
        };
        unsafe {
            libc::kill(-pgid, sig);
        }
    }
}

#[cfg(not(unix))]
fn signal_group(_pgid: Option<i32>, _signal: Signal) {}

/// Whether any process of the group still runs. Zombies do not count: members reparented to
/// an init that reaps slowly (as in many containers) would otherwise look alive for a while.
#[cfg(target_os = "linux")]
fn group_has_live_member(pgid: i32) -> bool {
    if unsafe { libc::kill(-pgid, 0) } != 0 {
        return false;
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "<pid> (<comm>) <state> <ppid> <pgrp> ...": comm may hold spaces and parentheses.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let pgrp = fields.nth(1).and_then(|f| f.parse::<i32>().ok());
        if pgrp == Some(pgid) && state != Some("Z") && state != Some("X") {
            return true;
        }
    }
    false
}

#[cfg(all(unix, not(target_os = "linux")))]
fn group_has_live_member(pgid: i32) -> bool {
    unsafe { libc::kill(-pgid, 0) == 0 }
}

#[derive(Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

fn describe_exit(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with code {code}"),
        None => "exited".to_owned(),
    }
}
