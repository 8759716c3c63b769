//! The orphan guard holds when the host starts with fds 0-2 closed: its pipe must not land
//! where the guard's own /dev/null (or anything printing to stdout) would overwrite it.
//!
//! The test re-runs this test binary as the host, which closes fds 0-2, starts a real server
//! (`sh -c 'sleep 60 & exec sleep 60'`) through the stdio transport, SIGKILLs that host and
//! checks that the server's whole process group dies.

#![cfg(target_os = "linux")]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use openclaw_mcp_native::log::Log;
use openclaw_mcp_native::transport::{orphan_guard, stdio};

const CHILD_VAR: &str = "MCPN_ORPHAN_GUARD_HOST_PIDFILE";

fn group_alive(pgid: i32) -> bool {
    // Zombies do not count: read each member's state.
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
        let args = ["-c".to_owned(), "sleep 60 & exec sleep 60".to_owned()];
        let spec = stdio::SpawnSpec {
            server: "guarded",
            command: "sh",
            args: &args,
            inherit: None,
            env: &[],
            cwd: None,
            max_message_bytes: 1 << 20,
            grace: Duration::from_secs(1),
        };
        let (process, _transport) = stdio::spawn(&spec, &Log::null()).expect("spawn");
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
