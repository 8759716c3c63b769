//! A stdio server process is an owned guard: dropped without `terminate()` (a connect
//! abandoned half-way, a panic, a runtime going away), its whole process group still dies.

#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use openclaw_mcp_native::log::Log;
use openclaw_mcp_native::transport::stdio::{self, ServerProcess, SpawnSpec};

/// Whether any live (non-zombie) process is in group `pgid`.
fn group_alive(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            return false;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            return false;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        fields.len() > 2 && fields[2].parse::<i32>() == Ok(pgid) && fields[0] != "Z"
    })
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

/// A server whose grandchild ignores SIGTERM would outlive a leader-only kill; this one's
/// grandchild is a plain `sleep`, so only a group signal reaches it.
fn spawn_tree() -> (ServerProcess, i32) {
    let args = ["-c".to_owned(), "sleep 60 & exec sleep 60".to_owned()];
    let spec = SpawnSpec {
        server: "tree",
        command: "sh",
        args: &args,
        inherit: None,
        env: &[],
        cwd: None,
        max_message_bytes: 1 << 20,
        grace: Duration::from_millis(500),
    };
    let (process, transport) = stdio::spawn(&spec, &Log::null()).expect("spawn");
    drop(transport);
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
