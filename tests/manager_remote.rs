//! The manager against real remote servers on 127.0.0.1: server-everything (Streamable HTTP and
//! legacy SSE) and the Python `mcp` SDK (SSE, stateful and stateless Streamable HTTP), started
//! by each test on free ports and killed when it ends. Recovery (restart on the same port,
//! forgotten sessions), headers, fallback, TLS with a private CA, and every bound.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use openclaw_mcp_native::config::ProtocolChoice;
use openclaw_mcp_native::log::Level;
use openclaw_mcp_native::manager::ManagerOptions;
use openclaw_mcp_native::status::Status;
use openclaw_mcp_native::tool_result::ToolCallResult;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn args(v: serde_json::Value) -> Option<serde_json::Map<String, serde_json::Value>> {
    v.as_object().cloned()
}

async fn call(h: &Harness, tool: &str, arguments: serde_json::Value) -> ToolCallResult {
    h.manager
        .execute(
            0,
            tool,
            tool,
            args(arguments),
            &CancellationToken::new(),
            None,
        )
        .await
}

/// The `failed to start` error logged for server `name`.
fn start_error(h: &Harness, name: &str) -> String {
    let prefix = format!("MCP server '{name}' failed to start: ");
    h.sink
        .lines()
        .into_iter()
        .find(|(l, m)| *l == Level::Error && m.starts_with(&prefix))
        .map(|(_, m)| m[prefix.len()..].to_owned())
        .inspect(|error| eprintln!("start error of '{name}': {error}"))
        .unwrap_or_else(|| panic!("no start error for '{name}':\n{}", h.dump()))
}

fn tool_names(h: &Harness) -> Vec<String> {
    h.manager
        .agent_tools()
        .into_iter()
        .map(|t| t.tool.mcp_name)
        .collect()
}

/// One server, started; asserts it is ready on `transport`.
async fn started(server: openclaw_mcp_native::config::ServerConfig, transport: &str) -> Harness {
    let h = Harness::new(vec![server]);
    h.manager.start().await;
    let status = &h.manager.status()[0];
    assert_eq!(status.status, Status::Ready, "{}", h.dump());
    assert_eq!(status.transport, Some(transport), "{}", h.dump());
    h
}

fn header_log(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn no_restarts(
    mut s: openclaw_mcp_native::config::ServerConfig,
) -> openclaw_mcp_native::config::ServerConfig {
    s.max_restarts = 0;
    s
}

// ---------------------------------------------------------------------------------------------
// Real servers: list and call.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http_lists_and_calls() {
    let peer = everything_server("streamableHttp", free_port());
    let url = format!("http://127.0.0.1:{}/mcp", peer.port);
    let h = started(remote_server("ev", "http", &url), "streamable-http").await;
    let names = tool_names(&h);
    assert!(names.len() >= 10, "{names:?}");
    assert!(names.iter().any(|n| n == "echo") && names.iter().any(|n| n == "get-sum"));
    let text = ok_text(call(&h, "echo", json!({"message": "over http"})).await);
    assert!(text.contains("Echo: over http"), "{text}");
    let text = ok_text(call(&h, "get-sum", json!({"a": 2, "b": 40})).await);
    assert!(text.contains("42"), "{text}");
    h.manager.shutdown().await;
    assert_eq!(h.manager.status()[0].status, Status::Closed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_arrives_over_both_remote_transports() {
    for (mode, transport, path) in [("streamableHttp", "http", "/mcp"), ("sse", "sse", "/sse")] {
        let peer = everything_server(mode, free_port());
        let url = format!("http://127.0.0.1:{}{path}", peer.port);
        let h = started(
            remote_server("ev", transport, &url),
            if transport == "sse" {
                "sse"
            } else {
                "streamable-http"
            },
        )
        .await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let outcome = h
            .manager
            .execute(
                0,
                "trigger-long-running-operation",
                "trigger-long-running-operation",
                args(json!({"duration": 0.3, "steps": 3})),
                &CancellationToken::new(),
                Some(tx),
            )
            .await;
        assert!(
            ok_text(outcome).contains("Long running operation completed"),
            "{mode}"
        );
        let mut steps = Vec::new();
        while let Ok(p) = rx.try_recv() {
            steps.push(p.progress);
        }
        assert_eq!(steps, vec![1.0, 2.0, 3.0], "{mode}");
        h.manager.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_legacy_sse_lists_and_calls() {
    let peer = everything_server("sse", free_port());
    let url = format!("http://127.0.0.1:{}/sse", peer.port);
    let h = started(remote_server("ev", "sse", &url), "sse").await;
    assert!(tool_names(&h).iter().any(|n| n == "echo"));
    let text = ok_text(call(&h, "echo", json!({"message": "over sse"})).await);
    assert!(text.contains("Echo: over sse"), "{text}");
    let text = ok_text(call(&h, "get-sum", json!({"a": 1, "b": 2})).await);
    assert!(text.contains('3'), "{text}");
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_servers_over_sse_stateful_and_stateless_http() {
    for (mode, transport, path, expected) in [
        ("sse", "sse", "/sse", "sse"),
        ("http", "streamable-http", "/mcp", "streamable-http"),
        ("stateless", "streamable-http", "/mcp", "streamable-http"),
    ] {
        let peer = python_server(mode, free_port(), &[]);
        let url = format!("http://127.0.0.1:{}{path}", peer.port);
        let h = started(remote_server("py", transport, &url), expected).await;
        assert_eq!(
            tool_names(&h),
            vec!["echo", "add", "big", "headers"],
            "{mode}"
        );
        let text = ok_text(call(&h, "add", json!({"a": 20, "b": 22})).await);
        assert!(text.contains("\n42\n"), "{mode}: {text}");
        let text = ok_text(call(&h, "echo", json!({"text": format!("hello {mode}")})).await);
        assert!(text.contains(&format!("hello {mode}")), "{mode}: {text}");
        h.manager.shutdown().await;
        assert_eq!(h.manager.status()[0].status, Status::Closed, "{mode}");
    }
}

// ---------------------------------------------------------------------------------------------
// Recovery.

async fn kill_and_restart(
    mut peer: PeerProcess,
    restart: impl FnOnce(u16) -> PeerProcess,
    h: &Harness,
    tool: &str,
    arguments: serde_json::Value,
    expect: &str,
) {
    let port = peer.port;
    peer.kill();
    assert!(
        eventually(Duration::from_secs(10), || h.manager.status()[0].status
            != Status::Ready)
        .await,
        "the manager did not notice the server died:\n{}",
        h.dump()
    );
    // A call while the server is away fails at once with the not-ready error.
    let started_at = Instant::now();
    let text = err_text(call(h, tool, arguments.clone()).await);
    assert!(text.contains("is not ready (status: "), "{text}");
    assert!(started_at.elapsed() < Duration::from_millis(200));
    assert!(h.logged(Level::Warn, "exited unexpectedly"), "{}", h.dump());

    let _peer = restart(port);
    assert!(
        eventually(Duration::from_secs(20), || h.manager.status()[0].status
            == Status::Ready)
        .await,
        "the manager did not come back:\n{}",
        h.dump()
    );
    assert!(!h.manager.agent_tools().is_empty());
    let text = ok_text(call(h, tool, arguments).await);
    assert!(text.contains(expect), "{text}");
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_restarted_on_the_same_port_comes_back() {
    let peer = everything_server("streamableHttp", free_port());
    let url = format!("http://127.0.0.1:{}/mcp", peer.port);
    let h = started(remote_server("ev", "http", &url), "streamable-http").await;
    ok_text(call(&h, "echo", json!({"message": "before"})).await);
    kill_and_restart(
        peer,
        |port| everything_server("streamableHttp", port),
        &h,
        "echo",
        json!({"message": "after"}),
        "Echo: after",
    )
    .await;
    assert!(
        h.logged(Level::Warn, "MCP server 'ev' connection lost: "),
        "{}",
        h.dump()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_sse_server_restarted_on_the_same_port_comes_back() {
    let peer = python_server("sse", free_port(), &[]);
    let url = format!("http://127.0.0.1:{}/sse", peer.port);
    let h = started(remote_server("py", "sse", &url), "sse").await;
    ok_text(call(&h, "echo", json!({"text": "before"})).await);
    kill_and_restart(
        peer,
        |port| python_server("sse", port, &[]),
        &h,
        "echo",
        json!({"text": "after"}),
        "after",
    )
    .await;
    assert!(
        h.logged(Level::Warn, "MCP server 'py' SSE session ended: "),
        "{}",
        h.dump()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_server_restarted_between_calls_comes_back() {
    // No event stream to watch: the next call finds the server gone, fails at once, and the
    // supervisor reconnects.
    let peer = python_server("stateless", free_port(), &[]);
    let port = peer.port;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let h = started(
        remote_server("py", "streamable-http", &url),
        "streamable-http",
    )
    .await;
    drop(peer);
    let started_at = Instant::now();
    let text = err_text(call(&h, "echo", json!({"text": "x"})).await);
    // A fresh connection is refused; a pooled one the dying server had not closed yet breaks
    // mid-request (seen under load). Either way the server is gone.
    assert!(
        text.contains("connection refused")
            || text.contains("connection closed before message completed"),
        "{text}"
    );
    assert!(started_at.elapsed() < Duration::from_secs(5));
    assert!(
        eventually(Duration::from_secs(5), || h.manager.status()[0].status
            != Status::Ready)
        .await,
        "{}",
        h.dump()
    );
    let _peer = python_server("stateless", port, &[]);
    assert!(
        eventually(Duration::from_secs(20), || h.manager.status()[0].status
            == Status::Ready)
        .await,
        "{}",
        h.dump()
    );
    assert!(ok_text(call(&h, "echo", json!({"text": "again"})).await).contains("again"));
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgotten_session_404_is_reinitialised_and_the_call_retried() {
    let dir = temp_dir("forget");
    let log = dir.join("headers.jsonl");
    let peer = python_server(
        "http",
        free_port(),
        &["--header-log", log.to_str().unwrap()],
    );
    let url = format!("http://127.0.0.1:{}/mcp", peer.port);
    // Sessions are the 2025 revisions' (the peer, Python mcp 2.x, would negotiate the
    // sessionless 2026-07-28 under `protocol: 'auto'`).
    let mut s = remote_server("py", "http", &url);
    s.protocol = ProtocolChoice::Fixed("2025-11-25");
    let h = started(s, "streamable-http").await;
    assert!(ok_text(call(&h, "echo", json!({"text": "one"})).await).contains("one"));
    let forgotten = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{}/admin/forget", peer.port))
        .send()
        .await
        .unwrap();
    assert!(forgotten.status().is_success());
    // The server now answers the old session id with 404; the call still succeeds.
    assert!(ok_text(call(&h, "echo", json!({"text": "two"})).await).contains("two"));
    assert_eq!(h.manager.status()[0].status, Status::Ready);
    let initializes = header_log(&log)
        .iter()
        .filter(|r| {
            r["method"] == "POST"
                && r["path"] == "/mcp"
                && r["headers"].get("mcp-session-id").is_none()
        })
        .count();
    assert_eq!(initializes, 2, "one initialize, one re-initialize");
    assert!(
        !h.logged(Level::Warn, "exited unexpectedly"),
        "{}",
        h.dump()
    );
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgotten_session_400_from_server_everything_is_reinitialised() {
    let peer = everything_server("streamableHttp", free_port());
    let url = format!("http://127.0.0.1:{}/mcp", peer.port);
    let h = started(remote_server("ev", "http", &url), "streamable-http").await;
    ok_text(call(&h, "echo", json!({"message": "one"})).await);
    // End the session behind the client's back, as a server restart or expiry would.
    let output = peer.output();
    let session = output
        .lines()
        .find_map(|l| l.strip_prefix("Session initialized with ID: "))
        .unwrap_or_else(|| panic!("no session id in:\n{output}"))
        .trim()
        .to_owned();
    let deleted = reqwest::Client::new()
        .delete(&url)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    // The server answers the old id with 400 "No valid session ID provided".
    let text = ok_text(call(&h, "echo", json!({"message": "two"})).await);
    assert!(text.contains("Echo: two"), "{text}");
    assert_eq!(h.manager.status()[0].status, Status::Ready);
    assert_eq!(
        peer.output()
            .matches("Session initialized with ID: ")
            .count(),
        2,
        "{}",
        peer.output()
    );
    h.manager.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// Headers, protocol version, redirects.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_reach_the_server_on_every_request_and_never_the_log() {
    for (mode, path, transport) in [("http", "/mcp", "streamable-http"), ("sse", "/sse", "sse")] {
        let dir = temp_dir("headers");
        let log = dir.join("headers.jsonl");
        let peer = python_server(mode, free_port(), &["--header-log", log.to_str().unwrap()]);
        let mut s = remote_server(
            "py",
            transport,
            &format!("http://127.0.0.1:{}{path}", peer.port),
        );
        s.headers = vec![
            ("X-Api-Key".to_owned(), "key-5b1e0c".to_owned()),
            ("Authorization".to_owned(), "Bearer tok-93af27".to_owned()),
        ];
        // The 2025 handshake's headers (2026-07-28 below).
        s.protocol = ProtocolChoice::Fixed("2025-11-25");
        let h = started(s, transport).await;
        ok_text(call(&h, "echo", json!({"text": "x"})).await);
        h.manager.shutdown().await;

        let requests = header_log(&log);
        assert!(requests.len() >= 3, "{mode}: {requests:?}");
        for r in &requests {
            assert_eq!(r["headers"]["x-api-key"], "key-5b1e0c", "{mode}: {r}");
            assert_eq!(
                r["headers"]["authorization"], "Bearer tok-93af27",
                "{mode}: {r}"
            );
        }
        // MCP-Protocol-Version on every POST after initialize, with the negotiated version.
        let posts: Vec<_> = requests.iter().filter(|r| r["method"] == "POST").collect();
        assert!(
            posts[0]["headers"].get("mcp-protocol-version").is_none(),
            "{mode}"
        );
        for r in &posts[1..] {
            assert_eq!(
                r["headers"]["mcp-protocol-version"], "2025-11-25",
                "{mode}: {r}"
            );
        }
        let dump = h.dump();
        assert!(
            !dump.contains("key-5b1e0c") && !dump.contains("tok-93af27"),
            "{dump}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_negotiates_2026_07_28_with_a_dual_era_server_sessionless_and_versioned() {
    let dir = temp_dir("modern");
    let log = dir.join("headers.jsonl");
    let peer = python_server(
        "http",
        free_port(),
        &["--header-log", log.to_str().unwrap()],
    );
    let url = format!("http://127.0.0.1:{}/mcp", peer.port);
    let mut s = remote_server("py", "http", &url);
    s.headers = vec![("X-Api-Key".to_owned(), "key-5b1e0c".to_owned())];
    let h = started(s, "streamable-http").await;
    assert!(ok_text(call(&h, "echo", json!({"text": "x"})).await).contains('x'));
    h.manager.shutdown().await;
    let posts: Vec<_> = header_log(&log)
        .into_iter()
        .filter(|r| r["method"] == "POST")
        .collect();
    assert!(posts.len() >= 3, "{posts:?}");
    // No handshake, no session: every POST names the revision, the first (server/discover)
    // included, and carries the server's headers.
    for r in &posts {
        assert_eq!(r["headers"]["mcp-protocol-version"], "2026-07-28", "{r}");
        assert!(r["headers"].get("mcp-session-id").is_none(), "{r}");
        assert_eq!(r["headers"]["x-api-key"], "key-5b1e0c", "{r}");
    }
    assert_eq!(posts[0]["headers"]["mcp-method"], "server/discover");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_another_origin_is_not_followed() {
    let dir = temp_dir("redirect");
    let other_log = dir.join("other.jsonl");
    let other = python_server(
        "http",
        free_port(),
        &["--header-log", other_log.to_str().unwrap()],
    );
    let target = format!("http://127.0.0.1:{}/mcp", other.port);
    let first = python_server("http", free_port(), &["--redirect-to", &target]);
    for transport in ["http", "sse"] {
        let mut s = no_restarts(remote_server(
            "r",
            transport,
            &format!("http://127.0.0.1:{}/moved?token=q-7d3a", first.port),
        ));
        s.sse_fallback = false;
        s.headers = vec![("X-Api-Key".to_owned(), "key-77aa01".to_owned())];
        let h = Harness::new(vec![s]);
        h.manager.start().await;
        assert_eq!(h.manager.status()[0].status, Status::Error);
        let error = start_error(&h, "r");
        assert!(
            error.contains("redirecting to another origin")
                && error.contains(&format!("http://127.0.0.1:{}/mcp", other.port)),
            "{transport}: {error}"
        );
        assert!(error.contains(&format!("http://127.0.0.1:{}/moved", first.port)));
        assert!(
            !h.dump().contains("q-7d3a") && !h.dump().contains("key-77aa01"),
            "{}",
            h.dump()
        );
        h.manager.shutdown().await;
    }
    assert!(
        header_log(&other_log).is_empty(),
        "the other origin was contacted"
    );
}

// ---------------------------------------------------------------------------------------------
// Fallback from Streamable HTTP to legacy SSE.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_against_an_sse_only_server_falls_back_to_sse() {
    // server-everything answers the POST on /sse with 404, the Python SDK with 405.
    let everything = everything_server("sse", free_port());
    let python = python_server("sse", free_port(), &[]);
    for (port, status, tool, arguments) in [
        (everything.port, 404, "echo", json!({"message": "fallback"})),
        (python.port, 405, "echo", json!({"text": "fallback"})),
    ] {
        let h = started(
            remote_server("s", "http", &format!("http://127.0.0.1:{port}/sse")),
            "sse",
        )
        .await;
        assert!(
            h.logged(
                Level::Info,
                &format!(
                    "answered HTTP {status} to Streamable HTTP; trying the legacy SSE transport"
                )
            ),
            "{}",
            h.dump()
        );
        assert!(ok_text(call(&h, tool, arguments).await).contains("fallback"));
        h.manager.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_fallback_off_fails_clearly() {
    let peer = everything_server("sse", free_port());
    let mut s = no_restarts(remote_server(
        "s",
        "http",
        &format!("http://127.0.0.1:{}/sse", peer.port),
    ));
    s.sse_fallback = false;
    let h = Harness::new(vec![s]);
    h.manager.start().await;
    assert_eq!(h.manager.status()[0].status, Status::Error);
    let error = start_error(&h, "s");
    assert!(
        error.starts_with(&format!(
            "http://127.0.0.1:{}/sse answered HTTP 404 Not Found",
            peer.port
        )),
        "{error}"
    );
    assert!(error.contains("sseFallback is off"), "{error}");
    h.manager.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// TLS.

/// A CA and a server certificate for 127.0.0.1 signed by it, made with the openssl CLI.
fn make_ca(dir: &Path) {
    let run = |args: &[&str]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    std::fs::write(
        dir.join("server.ext"),
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n\
         extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    run(&[
        "ecparam",
        "-name",
        "prime256v1",
        "-genkey",
        "-noout",
        "-out",
        "ca.key",
    ]);
    run(&[
        "req",
        "-x509",
        "-new",
        "-key",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=mcp-native test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    run(&[
        "ecparam",
        "-name",
        "prime256v1",
        "-genkey",
        "-noout",
        "-out",
        "server.key",
    ]);
    run(&[
        "req",
        "-new",
        "-key",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "server.ext",
    ]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_private_ca_in_ca_file_and_a_clear_error_without() {
    let dir = temp_dir("tls");
    make_ca(&dir);
    let cert = dir.join("server.pem");
    let key = dir.join("server.key");
    for (mode, path, transport) in [("http", "/mcp", "http"), ("sse", "/sse", "sse")] {
        let peer = python_server(
            mode,
            free_port(),
            &[
                "--tls-cert",
                cert.to_str().unwrap(),
                "--tls-key",
                key.to_str().unwrap(),
            ],
        );
        let url = format!("https://127.0.0.1:{}{path}", peer.port);
        let mut trusted = remote_server("trusted", transport, &url);
        trusted.ca_file = Some(dir.join("ca.pem").display().to_string());
        let untrusted = no_restarts(remote_server("untrusted", transport, &url));
        let h = Harness::new(vec![trusted, untrusted]);
        h.manager.start().await;
        let status = h.manager.status();
        assert_eq!(status[0].status, Status::Ready, "{mode}: {}", h.dump());
        assert!(ok_text(call(&h, "echo", json!({"text": "over tls"})).await).contains("over tls"));
        assert_eq!(status[1].status, Status::Error);
        let error = start_error(&h, "untrusted");
        assert!(
            error.starts_with(&format!("cannot connect to {url}: TLS handshake failed")),
            "{mode}: {error}"
        );
        assert!(
            error.to_ascii_lowercase().contains("certificate"),
            "{error}"
        );
        h.manager.shutdown().await;
    }
    // A caFile that is not there is a clear configuration error.
    let mut missing = no_restarts(remote_server("m", "http", "https://127.0.0.1:9/mcp"));
    missing.ca_file = Some(dir.join("nope.pem").display().to_string());
    let h = Harness::new(vec![missing]);
    h.manager.start().await;
    assert!(
        start_error(&h, "m").starts_with("cannot read caFile '"),
        "{}",
        h.dump()
    );
    h.manager.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// Failures and bounds: each ends in bounded time with a clear error.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_refused_names_the_url_without_its_query() {
    let port = free_port();
    for transport in ["http", "sse"] {
        let url = format!("http://127.0.0.1:{port}/mcp?apikey=sq-1f2e3d");
        let h = Harness::new(vec![no_restarts(remote_server("down", transport, &url))]);
        let started_at = Instant::now();
        h.manager.start().await;
        assert!(started_at.elapsed() < Duration::from_secs(5));
        assert_eq!(h.manager.status()[0].status, Status::Error);
        let error = start_error(&h, "down");
        assert!(
            error.starts_with(&format!(
                "cannot connect to http://127.0.0.1:{port}/mcp: connection refused"
            )),
            "{transport}: {error}"
        );
        assert!(!h.dump().contains("sq-1f2e3d"), "{}", h.dump());
        h.manager.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dns_failure_is_reported() {
    let mut s = no_restarts(remote_server(
        "nx",
        "http",
        "http://mcp-native-test.invalid/mcp",
    ));
    s.timeout_ms = 10_000;
    let h = Harness::new(vec![s]);
    let started_at = Instant::now();
    h.manager.start().await;
    assert!(started_at.elapsed() < Duration::from_secs(11));
    let error = start_error(&h, "nx");
    assert!(
        error
            .starts_with("cannot connect to http://mcp-native-test.invalid/mcp: DNS lookup failed"),
        "{error}"
    );
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_echoed_in_an_error_body_is_masked_before_the_body_is_cut() {
    // The server repeats the request's Authorization header in a 500 body, at the point where
    // the message cuts the body: half a secret must not escape into the error or the log.
    let peer = fake_http("echo-auth", free_port());
    let url = format!("http://127.0.0.1:{}/mcp", peer.port);
    let token = "ghp_0123456789abcdefghijklmnop";
    let mut server = no_restarts(remote_server("echo", "http", &url));
    server.headers = vec![("Authorization".to_owned(), format!("Bearer {token}"))];
    let h = Harness::new(vec![server]);
    h.manager.start().await;
    let error = start_error(&h, "echo");
    assert!(error.contains("HTTP 500"), "{error}");
    let everything = format!("{error}\n{}", h.dump());
    for start in 0..=token.len() - 8 {
        let piece = &token[start..start + 8];
        assert!(
            !everything.contains(piece),
            "'{piece}' of the token escaped:\n{everything}"
        );
    }
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_html_page_is_not_an_mcp_server() {
    let peer = fake_http("html", free_port());
    let url = format!("http://127.0.0.1:{}/", peer.port);
    let h = Harness::new(vec![
        no_restarts(remote_server("web", "http", &url)),
        no_restarts(remote_server("websse", "sse", &url)),
    ]);
    h.manager.start().await;
    let error = start_error(&h, "web");
    assert!(
        error.starts_with(&format!(
            "{url} answered HTTP 200 OK with Content-Type text/html, not an MCP response"
        )),
        "{error}"
    );
    let error = start_error(&h, "websse");
    assert!(
        error.starts_with(&format!(
            "{url} answered with Content-Type text/html, not an SSE event stream"
        )),
        "{error}"
    );
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sse_stream_without_the_endpoint_event_times_out() {
    let peer = fake_http("sse-silent", free_port());
    let url = format!("http://127.0.0.1:{}/sse", peer.port);
    let mut s = no_restarts(remote_server("silent", "sse", &url));
    s.timeout_ms = 1500;
    let h = Harness::new(vec![s]);
    let started_at = Instant::now();
    h.manager.start().await;
    let took = started_at.elapsed();
    assert!(
        took >= Duration::from_millis(1400) && took < Duration::from_secs(4),
        "{took:?}"
    );
    let error = start_error(&h, "silent");
    assert_eq!(
        error,
        format!("{url} sent no endpoint event within 1500 ms (is this a legacy SSE endpoint?)")
    );
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_sse_stream_ends_the_session() {
    let peer = fake_http("sse-idle", free_port());
    let url = format!("http://127.0.0.1:{}/sse", peer.port);
    let mut options = ManagerOptions::default();
    options.runtime.sse_idle_timeout = Duration::from_millis(1000);
    let h = Harness::with_options(
        vec![no_restarts(remote_server("idle", "sse", &url))],
        options,
    );
    h.manager.start().await;
    assert_eq!(h.manager.status()[0].status, Status::Ready, "{}", h.dump());
    let ready_at = Instant::now();
    assert!(
        eventually(Duration::from_secs(5), || h.manager.status()[0].status
            == Status::Error)
        .await,
        "{}",
        h.dump()
    );
    let took = ready_at.elapsed();
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_secs(3),
        "{took:?}"
    );
    assert!(
        h.logged(
            Level::Warn,
            &format!("MCP server 'idle' SSE session ended: no data on the event stream of {url} for 1000 ms")
        ),
        "{}",
        h.dump()
    );
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_but_healthy_sse_session_is_kept_by_pings() {
    // server-everything sends no keep-alive comments; the transport's pings keep it alive.
    let peer = everything_server("sse", free_port());
    let url = format!("http://127.0.0.1:{}/sse", peer.port);
    let mut options = ManagerOptions::default();
    options.runtime.sse_idle_timeout = Duration::from_millis(600);
    let h = Harness::with_options(vec![remote_server("ev", "sse", &url)], options);
    h.manager.start().await;
    assert_eq!(h.manager.status()[0].status, Status::Ready, "{}", h.dump());
    // Nothing to wait for: the check is that nothing happens over several idle periods.
    let ended = eventually(Duration::from_millis(2500), || {
        h.manager.status()[0].status != Status::Ready
    })
    .await;
    assert!(!ended, "{}", h.dump());
    assert!(
        ok_text(call(&h, "echo", json!({"message": "still here"})).await).contains("still here")
    );
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_answers_are_refused_within_the_limit() {
    let limit = 64 * 1024;
    let mut options = ManagerOptions::default();
    options.runtime.max_message_bytes = limit;
    // Streamable HTTP, answer as an SSE event and as a JSON body: the one call fails, the
    // session stays.
    for (extra, what) in [
        (&[][..], "sse event"),
        (&["--json-response"][..], "json body"),
    ] {
        let peer = python_server("http", free_port(), extra);
        let url = format!("http://127.0.0.1:{}/mcp", peer.port);
        let h = Harness::with_options(vec![remote_server("py", "http", &url)], options.clone());
        h.manager.start().await;
        assert_eq!(
            h.manager.status()[0].status,
            Status::Ready,
            "{what}: {}",
            h.dump()
        );
        let small = ok_text(call(&h, "big", json!({"size": 1000})).await);
        assert!(small.contains(&"x".repeat(1000)), "{what}");
        let started_at = Instant::now();
        let error = err_text(call(&h, "big", json!({"size": 200_000})).await);
        assert!(started_at.elapsed() < Duration::from_secs(5));
        assert!(
            error.contains(&format!("{limit}-byte message limit")) && error.contains(&url),
            "{what}: {error}"
        );
        assert_eq!(h.manager.status()[0].status, Status::Ready, "{what}");
        assert!(ok_text(call(&h, "echo", json!({"text": "fine"})).await).contains("fine"));
        h.manager.shutdown().await;
    }
    // Legacy SSE: the stream is the session, so an oversized event ends it.
    let peer = python_server("sse", free_port(), &[]);
    let url = format!("http://127.0.0.1:{}/sse", peer.port);
    let h = Harness::with_options(vec![no_restarts(remote_server("py", "sse", &url))], options);
    h.manager.start().await;
    assert_eq!(h.manager.status()[0].status, Status::Ready, "{}", h.dump());
    let started_at = Instant::now();
    let error = err_text(call(&h, "big", json!({"size": 200_000})).await);
    assert!(started_at.elapsed() < Duration::from_secs(5), "{error}");
    assert!(
        eventually(Duration::from_secs(5), || h.manager.status()[0].status
            == Status::Error)
        .await
    );
    assert!(
        h.logged(
            Level::Warn,
            &format!("an SSE event exceeded the {limit}-byte message limit")
        ),
        "{}",
        h.dump()
    );
    h.manager.shutdown().await;
}
