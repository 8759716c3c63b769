//! A stdio server's process tree never outlives what owns it:
//! - the process is an owned guard: dropped without `terminate()` (a connect abandoned
//!   half-way, a panic, a runtime going away), its whole process group still dies;
//! - the orphan guard holds when the host runs with fds 0-2 closed: its pipe must not land
//!   where the guard's own /dev/null (or anything printing to stdout) would overwrite it. That
//!   test re-runs this test binary as the host, which closes fds 0-2, starts a real server
//!   (`sh -c 'sleep 60 & exec sleep 60'`) through the stdio transport, is SIGKILLed, and the
//!   server's whole process group must die.

#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use openclaw_mcp_native::log::Log;
use openclaw_mcp_native::transport::orphan_guard;
use openclaw_mcp_native::transport::stdio::{self, ServerProcess, SpawnSpec};
use std::process::{Command, Stdio};

/// Whether any live (non-zombie) process is in group `pgid`.
fn group_alive(pgid: i32) -> bool {
    count_members(pgid) > 0
}

/// Polls (no signal exists for a non-child's death), bounded.
fn dies_within(pgid: i32, limit: Duration) -> bool {
    let start = Instant::now();
    while group_alive(pgid) {
        if start.elapsed() > limit {
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// `sh -c 'sleep 60 & exec sleep 60'`: the `sleep` grandchild outlives a leader-only kill; only
/// a group signal reaches it. Must run on a tokio runtime.
fn spawn_tree_process() -> ServerProcess {
    let args = ["-c".to_owned(), "sleep 60 & exec sleep 60".to_owned()];
    let spec = SpawnSpec {
        server: "tree",
        command: "sh",
        args: &args,
        inherit: None,
        withhold: &[],
        env: &[],
        cwd: None,
        max_message_bytes: 1 << 20,
        fault: Default::default(),
        grace: Duration::from_millis(500),
        task_hints: Default::default(),
        history: Default::default(),
        output: Default::default(),
        listing: None,
    };
    // The transport (the server's stdin and stdout) closes here; `sleep` never reads it.
    stdio::spawn(&spec, &Log::null()).expect("spawn").0
}

/// [`spawn_tree_process`] once both members are up.
fn spawn_tree() -> (ServerProcess, i32) {
    let process = spawn_tree_process();
    let pgid = process.pgid().expect("pgid");
    // Both members are up before the test drops anything.
    let start = Instant::now();
    while count_members(pgid) < 2 && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(count_members(pgid), 2, "the tree did not start");
    (process, pgid)
}

fn count_members(pgid: i32) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| {
            std::fs::read_to_string(entry.path().join("stat"))
                .ok()
                .and_then(|stat| {
                    let (_, rest) = stat.rsplit_once(')')?;
                    let fields: Vec<&str> = rest.split_whitespace().collect();
                    Some(
                        fields.len() > 2
                            && fields[2].parse::<i32>() == Ok(pgid)
                            && fields[0] != "Z",
                    )
                })
                .unwrap_or(false)
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_on_a_runtime_the_whole_group_dies() {
    let (process, pgid) = spawn_tree();
    drop(process);
    let dead = tokio::task::spawn_blocking(move || dies_within(pgid, Duration::from_secs(5)))
        .await
        .unwrap();
    assert!(dead, "group {pgid} outlived its dropped ServerProcess");
}

#[test]
fn dropped_off_the_runtime_the_whole_group_dies() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (process, pgid) = runtime.block_on(async { spawn_tree() });
    // Dropped where no runtime is current: the group is killed at once.
    drop(process);
    assert!(
        dies_within(pgid, Duration::from_secs(5)),
        "group {pgid} outlived its dropped ServerProcess"
    );
    drop(runtime);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminate_takes_the_whole_group_down() {
    let (process, pgid) = spawn_tree();
    process.terminate(Duration::from_millis(300)).await;
    assert!(!group_alive(pgid), "group {pgid} outlived terminate()");
}

const CHILD_VAR: &str = "MCPN_ORPHAN_GUARD_HOST_PIDFILE";

/// The host: closes fds 0-2 (Rust's runtime, like Node's, reopens them as /dev/null at start,
/// so a host that runs without them closed them itself: a daemon, an embedder), starts the
/// guard (so its pipe is the first thing opened), then one server.
fn host_main(pidfile: &str) {
    unsafe {
        libc::close(0);
        libc::close(1);
        libc::close(2);
    }
    let _ = orphan_guard::pid();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let process = spawn_tree_process();
        std::fs::write(pidfile, format!("{}\n", process.pgid().expect("pgid"))).expect("pidfile");
        // Stay up until killed.
        std::future::pending::<()>().await;
    });
}

#[test]
fn servers_die_with_a_host_started_with_stdio_closed() {
    if let Ok(pidfile) = std::env::var(CHILD_VAR) {
        host_main(&pidfile);
        return;
    }
    let dir = std::env::temp_dir().join(format!("mcpn-guard-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pidfile = dir.join("pgid");
    let _ = std::fs::remove_file(&pidfile);
    let mut host = Command::new(std::env::current_exe().unwrap());
    host.args([
        "--exact",
        "servers_die_with_a_host_started_with_stdio_closed",
        "--test-threads=1",
    ])
    .env(CHILD_VAR, &pidfile)
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    let mut host = host.spawn().unwrap();
    let started = Instant::now();
    let pgid = loop {
        if let Some(pgid) = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
        {
            break pgid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the host never started its server"
        );
        if let Ok(Some(status)) = host.try_wait() {
            panic!("the host exited early: {status}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(group_alive(pgid));
    host.kill().unwrap();
    host.wait().unwrap();
    // The guard gives the group a second after SIGTERM; no signal tells us when a
    // non-child dies, so poll, bounded.
    let killed = Instant::now();
    while group_alive(pgid) && killed.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let survived = group_alive(pgid);
    if survived {
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!survived, "server group {pgid} outlived its SIGKILLed host");
}
