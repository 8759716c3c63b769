//! Shared pieces of the Rust integration tests: real servers, a recording log, configs.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use openclaw_mcp_native::config::{McpConfig, ServerConfig};
use openclaw_mcp_native::log::{Level, Log, MemorySink};
use openclaw_mcp_native::manager::{Manager, ManagerOptions};
use openclaw_mcp_native::secrets::{Redactor, SecretResolver};

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
