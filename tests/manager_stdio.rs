//! The manager against real stdio servers: lifecycle, tool calls, timeouts, cancellation,
//! restarts and process-tree cleanup.

mod common;

use std::time::{Duration, Instant};

use common::*;
use openclaw_mcp_native::log::Level;
use openclaw_mcp_native::manager::ManagerOptions;
use openclaw_mcp_native::status::Status;
use openclaw_mcp_native::tool_result::{ExternalContent, ToolCallResult};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn args(v: serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
    v.as_object().cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn example_server_starts_lists_and_calls() {
    let h = Harness::new(vec![example_server("example")]);
    assert_eq!(h.manager.status()[0].status, Status::Disconnected);
    h.manager.start().await;
    let status = h.manager.status();
    assert_eq!(status[0].status, Status::Ready, "{}", h.dump());
    let tools = h.manager.agent_tools();
    assert_eq!(status[0].tool_count, tools.len());
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"mcp_example_echo"), "{names:?}");
    assert!(h.logged(
        Level::Info,
        &format!("MCP server 'example' connected ({} tools)", tools.len())
    ));

    let echo = tools.iter().find(|t| t.tool.mcp_name == "echo").unwrap();
    assert_eq!(echo.tool.label, "MCP: example/echo");
    let outcome = h
        .manager
        .execute(
            echo.server_index,
            "echo",
            "",
            args(json!({"text": "hi there"})),
            &CancellationToken::new(),
            None,
        )
        .await;
    match outcome {
        ToolCallResult {
            text,
            external: Some(ExternalContent { server, tool }),
            ..
        } => {
            assert_eq!((server.as_str(), tool.as_str()), ("example", "echo"));
            assert!(text.contains("Source: MCP Server\nFrom: example\n---\nhi there\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id=\""), "{text}");
        }
        other => panic!("{other:?}"),
    }
    h.manager.shutdown().await;
    assert_eq!(h.manager.status()[0].status, Status::Closed);
    assert!(h.manager.agent_tools().is_empty());
    assert!(h.logged(Level::Info, "MCP server 'example' stopped"));
    // Idempotent.
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_command_fails_alone_and_is_reported() {
    let mut bad = openclaw_mcp_native::config::ServerConfig::with_defaults("bad");
    bad.command = Some("/nonexistent/mcp-server".to_owned());
    bad.max_restarts = 0;
    let h = Harness::new(vec![bad, example_server("good")]);
    h.manager.start().await;
    let status = h.manager.status();
    assert_eq!(status[0].status, Status::Error);
    assert_eq!(status[1].status, Status::Ready);
    assert!(
        h.logged(
            Level::Error,
            "MCP server 'bad' failed to start: cannot spawn '/nonexistent/mcp-server'"
        ),
        "{}",
        h.dump()
    );
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_at_start_reports_stderr_tail() {
    let mut s = fault_server("dies", &["--exit-at-start"]);
    s.max_restarts = 0;
    let h = Harness::new(vec![s]);
    h.manager.start().await;
    assert_eq!(h.manager.status()[0].status, Status::Error);
    let lines = h.sink.lines();
    let failure = lines
        .iter()
        .find(|(l, m)| *l == Level::Error && m.starts_with("MCP server 'dies' failed to start: "))
        .unwrap_or_else(|| panic!("{}", h.dump()));
    assert!(failure.1.contains("exited with code 3"), "{}", failure.1);
    assert!(
        failure
            .1
            .contains("fault-server: exiting at start (code 3)"),
        "{}",
        failure.1
    );
    assert!(h.logged(
        Level::Warn,
        "MCP server 'dies' stderr: fault-server: exiting at start (code 3)"
    ));
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_timeout_and_abort_cancel_the_request() {
    let dir = temp_dir("cancel");
    let log = dir.join("cancel.log");
    let mut s = fault_server("f", &["--cancel-log", log.to_str().unwrap()]);
    s.tool_timeout_ms = 300;
    let h = Harness::new(vec![s]);
    h.manager.start().await;
    assert_eq!(h.manager.status()[0].status, Status::Ready, "{}", h.dump());

    let started = Instant::now();
    let outcome = h
        .manager
        .execute(0, "hang", "", None, &CancellationToken::new(), None)
        .await;
    let took = started.elapsed();
    assert_eq!(
        err_text(outcome),
        "MCP tool error (f/hang): MCP error -32001: Request timed out"
    );
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "{took:?}"
    );

    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let outcome = h.manager.execute(0, "hang", "", None, &cancel, None).await;
    assert!(
        started.elapsed() < Duration::from_millis(250),
        "{:?}",
        started.elapsed()
    );
    match outcome {
        ToolCallResult {
            text,
            external: None,
            ..
        } => assert!(text.contains("aborted"), "{text}"),
        other => panic!("{other:?}"),
    }
    // Both requests were cancelled at the server: wait (bounded) for the log to show them.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.matches("cancelled ").count() >= 2 || Instant::now() > deadline {
            assert_eq!(text.matches("cancelled ").count(), 2, "{text}");
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_takes_down_the_whole_process_group() {
    let dir = temp_dir("tree");
    let pidfile = dir.join("pids");
    let s = fault_server(
        "tree",
        &[
            "--grandchild",
            pidfile.to_str().unwrap(),
            "--ignore-sigterm",
            "--ignore-stdin-close",
        ],
    );
    let h = Harness::new(vec![s]);
    h.manager.start().await;
    assert_eq!(h.manager.status()[0].status, Status::Ready, "{}", h.dump());
    let pids: Vec<i32> = std::fs::read_to_string(&pidfile)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|p| alive(*p)));
    let started = Instant::now();
    h.manager.shutdown().await;
    // grace 500 ms after stdin close, 500 ms after SIGTERM, then SIGKILL.
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let living = wait_dead(&pids, Duration::from_secs(3)).await;
    assert!(living.is_empty(), "still alive: {living:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_restarts_with_backoff_and_tools_come_back() {
    let dir = temp_dir("crash");
    let marker = dir.join("crashed");
    let s = fault_server(
        "c",
        &[
            "--crash-after",
            "1",
            "--crash-marker",
            marker.to_str().unwrap(),
        ],
    );
    let h = Harness::new(vec![s]);
    h.manager.start().await;
    assert_eq!(h.manager.status()[0].status, Status::Ready);
    let before = h.manager.status()[0].tool_count;
    let first = h
        .manager
        .execute(
            0,
            "echo",
            "",
            args(json!({"text": "one"})),
            &CancellationToken::new(),
            None,
        )
        .await;
    assert!(
        matches!(
            first,
            ToolCallResult {
                external: Some(_),
                ..
            }
        ),
        "{first:?}"
    );
    // The server exits right after answering; wait for the restart notice, then for ready.
    let mut rx_deadline = Instant::now() + Duration::from_secs(5);
    while !h.logged(
        Level::Info,
        "MCP server 'c' restarting in 1000 ms (attempt 1/5)",
    ) {
        assert!(Instant::now() < rx_deadline, "{}", h.dump());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Calls during the restart window fail at once with the not-ready message.
    let started = Instant::now();
    match h
        .manager
        .execute(
            0,
            "echo",
            "",
            args(json!({"text": "x"})),
            &CancellationToken::new(),
            None,
        )
        .await
    {
        ToolCallResult {
            text,
            external: None,
            ..
        } => assert!(
            text.starts_with("MCP tool error (c/echo): MCP server 'c' is not ready (status: "),
            "{text}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_millis(100));
    rx_deadline = Instant::now() + Duration::from_secs(10);
    while h.manager.status()[0].status != Status::Ready {
        assert!(Instant::now() < rx_deadline, "{}", h.dump());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        h.logged(
            Level::Warn,
            "MCP server 'c' exited unexpectedly: process exited with code 1"
        ),
        "{}",
        h.dump()
    );
    // The restarted server offers one more tool: the list was fetched again.
    assert_eq!(h.manager.status()[0].tool_count, before + 1);
    let again = h
        .manager
        .execute(
            0,
            "echo",
            "",
            args(json!({"text": "two"})),
            &CancellationToken::new(),
            None,
        )
        .await;
    assert!(
        matches!(
            again,
            ToolCallResult {
                external: Some(_),
                ..
            }
        ),
        "{again:?}"
    );
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_over_the_stdio_limit_fails_the_call_at_once_and_ends_the_session() {
    // Issue 12: rmcp's own bound dropped the oversized line and read on, so the call waited for
    // its whole toolTimeout, the server stayed `ready` and the next answer was swallowed too.
    let mut s = fault_server("f", &[]);
    s.tool_timeout_ms = 30_000;
    let mut options = ManagerOptions::default();
    options.runtime.max_message_bytes = 1 << 20;
    let h = Harness::with_options(vec![s], options);
    h.manager.start().await;
    assert_eq!(h.manager.status()[0].status, Status::Ready, "{}", h.dump());

    let started = Instant::now();
    let args = json!({"bytes": 2_000_000}).as_object().cloned();
    let outcome = h
        .manager
        .execute(0, "big", "", args, &CancellationToken::new(), None)
        .await;
    let took = started.elapsed();
    assert_eq!(
        err_text(outcome),
        "MCP tool error (f/big): MCP error -32000: Connection closed: the server sent a \
         message larger than the 1048576-byte limit; the session was ended"
    );
    assert!(took < Duration::from_secs(5), "took {took:?}");
    // The restart policy takes over, and the next session answers.
    let connected = || h.dump().matches("MCP server 'f' connected").count();
    let restarted = eventually(Duration::from_secs(10), || {
        connected() >= 2 && h.manager.status()[0].status == Status::Ready
    })
    .await;
    assert!(restarted, "{}", h.dump());
    assert!(
        h.logged(
            Level::Warn,
            "MCP server 'f' exited unexpectedly: the server sent a message larger than the 1048576-byte limit"
        ),
        "{}",
        h.dump()
    );
    let echo = h
        .manager
        .execute(
            0,
            "echo",
            "",
            json!({"text": "hi"}).as_object().cloned(),
            &CancellationToken::new(),
            None,
        )
        .await;
    assert!(echo.external.is_some(), "{echo:?}");
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_nested_too_deep_fails_its_call_at_once_and_the_session_goes_on() {
    // Issue 12: rmcp drops a line its JSON parser cannot take (nested beyond 127 levels) and
    // reads on, so the call waited for its whole toolTimeout. Now the answer becomes an error
    // for the same id; the stream is intact, so the session stays.
    let mut s = fault_server("f", &["--raw-answers"]);
    s.tool_timeout_ms = 30_000;
    let h = Harness::new(vec![s]);
    h.manager.start().await;
    assert_eq!(h.manager.status()[0].status, Status::Ready, "{}", h.dump());

    for depth in [100_000, 200] {
        let started = Instant::now();
        let args = json!({ "depth": depth }).as_object().cloned();
        let outcome = h
            .manager
            .execute(0, "deep", "", args, &CancellationToken::new(), None)
            .await;
        let took = started.elapsed();
        assert_eq!(
            err_text(outcome),
            "MCP tool error (f/deep): MCP error -32700: the server's response is nested more than \
             127 levels deep, deeper than this client parses"
        );
        assert!(took < Duration::from_secs(5), "took {took:?}");
    }
    // Just under the limit still parses (the result's own two levels plus the nest).
    let args = json!({ "depth": 120 }).as_object().cloned();
    let outcome = h
        .manager
        .execute(0, "deep", "", args, &CancellationToken::new(), None)
        .await;
    assert_eq!(ok_text(outcome).contains("deep"), true);
    assert_eq!(h.manager.status()[0].status, Status::Ready);
    assert_eq!(
        h.dump().matches("MCP server 'f' connected").count(),
        1,
        "{}",
        h.dump()
    );
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_with_invalid_utf8_arrives_decoded_lossily() {
    // Issue 12: rmcp dropped a line that was not UTF-8, so the call waited for its timeout.
    // The TypeScript SDK decodes such bytes as U+FFFD, and so does this package now.
    let mut s = fault_server("f", &["--raw-answers"]);
    s.tool_timeout_ms = 30_000;
    let h = Harness::new(vec![s]);
    h.manager.start().await;
    let started = Instant::now();
    let outcome = h
        .manager
        .execute(0, "bad_utf8", "", None, &CancellationToken::new(), None)
        .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(ok_text(outcome).contains("caf\u{FFFD}(\u{FFFD}!"));
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_tools_bounds_a_huge_listing_and_stops_asking_for_pages() {
    // Issue 12: a server listing 100,000 tools cost the host about 1 GB. Now at most
    // `maxTools` (default 10,000) are taken, with a warning, and no further page is asked for.
    let log = temp_dir("max-tools").join("requests.log");
    let log = log.to_str().unwrap();
    let mut unpaged = fault_server("a", &["--tools", "50"]);
    unpaged.max_tools = 20;
    let mut paged = fault_server(
        "b",
        &["--tools", "50", "--page-size", "10", "--request-log", log],
    );
    paged.max_tools = 20;
    let h = Harness::new(vec![unpaged, paged]);
    h.manager.start().await;
    let status = h.manager.status();
    assert_eq!(
        (status[0].tool_count, status[1].tool_count),
        (20, 20),
        "{}",
        h.dump()
    );
    assert!(
        h.logged(
            Level::Warn,
            "MCP server 'a' lists 65 tools, more than its maxTools (20): only the first 20 are offered"
        ),
        "{}",
        h.dump()
    );
    assert!(
        h.logged(
            Level::Warn,
            "MCP server 'b' lists more than 20 tools, more than its maxTools (20): only the first 20 are offered"
        ),
        "{}",
        h.dump()
    );
    let requests = std::fs::read_to_string(log).unwrap();
    assert_eq!(requests.matches("tools/list").count(), 2, "{requests}");
    // The first tools in the server's order are the ones kept, and they work.
    let tools = h.manager.agent_tools();
    assert_eq!(tools.len(), 40);
    assert_eq!(tools[0].tool.mcp_name, "echo");
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tools_list_pagination_that_never_advances_fails_the_start() {
    // Issue 12: a server answering every page with the same cursor kept the start busy until
    // its connect timeout.
    let mut s = fault_server("f", &["--page-size", "5", "--stuck-cursor"]);
    s.timeout_ms = 20_000;
    s.restart_on_crash = false;
    let h = Harness::new(vec![s]);
    let started = Instant::now();
    h.manager.start().await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(h.manager.status()[0].status, Status::Error, "{}", h.dump());
    assert!(
        h.dump()
            .contains("tools/list pagination does not advance (cursor '5' after 2 pages)"),
        "{}",
        h.dump()
    );
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_restarts_the_tool_timeout_when_asked_never_past_the_cap() {
    // Issue 13: a long call that keeps reporting progress failed at toolTimeout however alive
    // it was. resetTimeoutOnProgress moves the deadline with each notification, capped by
    // maxToolTimeout from the start of the call; the default keeps the original's behaviour.
    let slow = |reset: bool, cap_ms: u64| {
        let mut s = fault_server("f", &[]);
        s.tool_timeout_ms = 400;
        s.reset_timeout_on_progress = reset;
        s.max_tool_timeout_ms = cap_ms;
        s
    };
    let args = || json!({ "ms": 1500 }).as_object().cloned();
    for (reset, cap, expect_ok) in [
        (false, 600_000, false),
        (true, 10_000, true),
        (true, 900, false),
    ] {
        let h = Harness::new(vec![slow(reset, cap)]);
        h.manager.start().await;
        let started = Instant::now();
        let outcome = h
            .manager
            .execute(0, "slow", "", args(), &CancellationToken::new(), None)
            .await;
        let took = started.elapsed();
        if expect_ok {
            assert!(ok_text(outcome).contains("slept 1500 ms"));
        } else {
            assert_eq!(
                err_text(outcome),
                "MCP tool error (f/slow): MCP error -32001: Request timed out"
            );
            let bound = if reset { cap } else { 400 };
            assert!(
                took >= Duration::from_millis(bound) && took < Duration::from_millis(bound + 700),
                "reset {reset}, cap {cap}: took {took:?}"
            );
        }
        h.manager.shutdown().await;
    }
}

/// A server that stopped reading its stdin while a large request was being written to it:
/// `shutdown()` takes the two waits the README promises (stdin closed, then SIGTERM), not a
/// third one spent first waiting for rmcp's writer, which the full pipe keeps blocked.
/// Before the fix it took 3 × `shutdownGraceMs` (3.0 s here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_with_a_blocked_write_takes_two_graces() {
    let dir = temp_dir("blocked-write");
    let requests = dir.join("requests");
    let s = fault_server(
        "frozen",
        &[
            "--freeze-tool",
            "--request-log",
            requests.to_str().unwrap(),
            "--ignore-sigterm",
            "--ignore-stdin-close",
        ],
    );
    let mut options = ManagerOptions::default();
    options.runtime.shutdown_grace = Duration::from_millis(1000);
    let sink = std::sync::Arc::new(MemorySink::default());
    let manager = std::sync::Arc::new(openclaw_mcp_native::manager::Manager::new(
        openclaw_mcp_native::config::McpConfig { servers: vec![s] },
        options,
        openclaw_mcp_native::log::Log::new(sink, openclaw_mcp_native::secrets::Redactor::default()),
        std::sync::Arc::new(openclaw_mcp_native::secrets::SecretResolver::with_default_providers()),
    ));
    manager.start().await;
    assert_eq!(manager.status()[0].status, Status::Ready);

    // Freeze the server, and wait until it has the request (it logs it before freezing).
    let call = |tool: &'static str, arguments: serde_json::Value| {
        let manager = manager.clone();
        tokio::spawn(async move {
            manager
                .execute(
                    0,
                    tool,
                    "",
                    args(arguments),
                    &CancellationToken::new(),
                    None,
                )
                .await
        })
    };
    let _frozen = call("freeze", json!({ "ms": 20_000 }));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !std::fs::read_to_string(&requests)
        .unwrap_or_default()
        .contains("tools/call")
    {
        assert!(Instant::now() < deadline, "the freeze call never arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // 1 MB of requests into a 64 KB pipe nobody reads: the writer blocks. (There is no signal
    // for a full pipe; the writes start as soon as the calls are spawned.)
    let big = "x".repeat(256 * 1024);
    let _writes: Vec<_> = (0..4)
        .map(|_| call("echo", json!({ "text": big.clone() })))
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;

    let started = Instant::now();
    manager.shutdown().await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(2600),
        "shutdown took {took:?} with shutdownGraceMs 1000 (two waits promised)"
    );
}

/// A stdio server never inherits the variables that make it load extra code (`NODE_OPTIONS`,
/// `LD_PRELOAD`, …) unless its config names them; `envPolicy: 'minimal'` passes only the
/// allowlist and what the config names. The host environment here is a fixed one, as Node's
/// `process.env` would be.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loader_hijack_variables_are_withheld_unless_named() {
    use openclaw_mcp_native::config::EnvPolicy;
    use openclaw_mcp_native::secrets::EnvSource;
    let dir = temp_dir("hijack");
    let marker = dir.join("loaded");
    let hook = dir.join("hook.js");
    std::fs::write(
        &hook,
        format!(
            "require('fs').appendFileSync({:?}, process.pid + '\\n')",
            marker.display().to_string()
        ),
    )
    .unwrap();
    let host = EnvSource::fixed([
        ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
        ("HOME".to_owned(), "/tmp".to_owned()),
        (
            "NODE_OPTIONS".to_owned(),
            format!("--require {}", hook.display()),
        ),
        (
            "LD_PRELOAD".to_owned(),
            "/nonexistent/libhijack.so".to_owned(),
        ),
        ("KEEP_ME".to_owned(), "yes".to_owned()),
    ]);
    let inherit = fault_server("inherit", &[]);
    let mut passthrough = fault_server("passthrough", &[]);
    passthrough.env_passthrough = vec!["NODE_OPTIONS".to_owned()];
    let mut minimal = fault_server("minimal", &[]);
    minimal.env_policy = EnvPolicy::Minimal;
    let h = Harness::new(vec![inherit, passthrough, minimal]);
    h.manager.start_in(host).await;
    assert!(
        h.manager.status().iter().all(|s| s.status == Status::Ready),
        "{}",
        h.dump()
    );
    let env = |server: usize, name: &str| {
        let h = &h;
        let name = name.to_owned();
        async move {
            ok_text(
                h.manager
                    .execute(
                        server,
                        "env",
                        "",
                        args(json!({ "name": name })),
                        &CancellationToken::new(),
                        None,
                    )
                    .await,
            )
        }
    };
    for name in ["NODE_OPTIONS", "LD_PRELOAD"] {
        assert!(env(0, name).await.contains("\n<unset>\n"), "{name}");
    }
    assert!(env(0, "KEEP_ME").await.contains("\nyes\n"));
    assert!(env(1, "NODE_OPTIONS").await.contains("--require"));
    assert!(env(1, "LD_PRELOAD").await.contains("\n<unset>\n"));
    assert!(env(2, "KEEP_ME").await.contains("\n<unset>\n"));
    assert!(env(2, "PATH").await.contains('/'));
    // Only the server that was given NODE_OPTIONS loaded the hook.
    let loaded = std::fs::read_to_string(&marker).unwrap_or_default();
    assert_eq!(loaded.lines().count(), 1, "{loaded}");
    // One warning per server that had some withheld, naming them.
    for server in ["inherit", "minimal"] {
        assert!(
            h.logged(
                Level::Warn,
                &format!("MCP server '{server}': not passing LD_PRELOAD, NODE_OPTIONS from the host environment")
            ),
            "{}",
            h.dump()
        );
    }
    assert!(h.logged(
        Level::Warn,
        "MCP server 'passthrough': not passing LD_PRELOAD from"
    ));
    h.manager.shutdown().await;
}

/// A host listening to `status` only: no `toolCall` event is built or sent for its calls (the
/// CLI gateway listened to `status`, and every call it served woke the JS thread with an event
/// nobody read).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_nobody_listens_to_is_not_built() {
    use openclaw_mcp_native::events::{Event, EventKind, EventSink, Events};
    use std::sync::{Arc, Mutex};

    #[derive(Default)]
    struct StatusOnly(Mutex<Vec<&'static str>>);
    impl EventSink for StatusOnly {
        fn wants(&self, kind: EventKind) -> bool {
            kind == EventKind::Status
        }
        fn emit(&self, event: Event) {
            self.0.lock().unwrap().push(event.name());
        }
    }

    let sink = Arc::new(StatusOnly::default());
    let options = ManagerOptions {
        events: Events::new(sink.clone()),
        ..ManagerOptions::default()
    };
    let h = Harness::with_options(vec![example_server("example")], options);
    h.manager.start().await;
    let tools = h.manager.agent_tools();
    let echo = tools.iter().find(|t| t.tool.mcp_name == "echo").unwrap();
    for _ in 0..3 {
        h.manager
            .execute(
                echo.server_index,
                "echo",
                "",
                args(json!({"text": "hi"})),
                &CancellationToken::new(),
                None,
            )
            .await;
    }
    h.manager.shutdown().await;
    let emitted = sink.0.lock().unwrap().clone();
    assert!(emitted.contains(&"status"), "{emitted:?}");
    assert!(emitted.iter().all(|name| *name == "status"), "{emitted:?}");
}
