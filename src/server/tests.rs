//! The server side end to end in-process: a mock provider served over a duplex pipe (the stdio
//! transport's code, raw JSON-RPC lines on the other end) and over HTTP on a loopback port.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::catalog::{CatalogFuture, Offers};
use super::handler::{Server, ServerOptions};
use super::limits::ResponseLimits;
use super::provider::{CallContext, CallFuture, JsonObject, LogLevel, ToolProvider};
use super::validate::tool_definition;

/// Tells the test how a call ended when its future is dropped unfinished.
struct Abandoned {
    ctx: CallContext,
    tx: mpsc::UnboundedSender<String>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let _ = self.tx.send(self.ctx.cancel.reason());
    }
}

struct Mock {
    tools: Mutex<Vec<Tool>>,
    abandoned: mpsc::UnboundedSender<String>,
}

fn tool(name: &str, extra: Value) -> Tool {
    let mut definition = json!({
        "name": name,
        "description": format!("the {name} tool"),
        "inputSchema": { "type": "object" },
    });
    for (k, v) in extra.as_object().unwrap() {
        definition[k] = v.clone();
    }
    tool_definition(definition).unwrap()
}

impl Mock {
    fn new() -> (Arc<Self>, mpsc::UnboundedReceiver<String>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let tools = vec![
            tool(
                "echo",
                json!({ "inputSchema": {
                    "type": "object",
                    "properties": { "text": { "type": "string" } },
                    "required": ["text"],
                }}),
            ),
            tool("progress", json!({})),
            tool("logs", json!({})),
            tool("hang", json!({})),
            tool("quick_hang", json!({})),
            tool("fail", json!({})),
            tool("panic", json!({})),
            tool("images", json!({})),
            tool("relayed", json!({})),
            tool(
                "typed",
                json!({ "outputSchema": {
                    "type": "object", "properties": { "n": { "type": "integer" } }, "required": ["n"],
                }}),
            ),
        ];
        (
            Arc::new(Self {
                tools: Mutex::new(tools),
                abandoned: tx,
            }),
            rx,
        )
    }
}

impl ToolProvider for Mock {
    fn tools(&self) -> Vec<Tool> {
        self.tools.lock().unwrap().clone()
    }

    fn timeout(&self, name: &str) -> Option<Duration> {
        (name == "quick_hang").then(|| Duration::from_millis(100))
    }

    fn call(&self, name: &str, args: JsonObject, ctx: CallContext) -> CallFuture {
        let name = name.to_owned();
        if name.ends_with("hang") {
            // Made here, so a call dropped before it first runs still reports.
            let guard = Abandoned {
                ctx,
                tx: self.abandoned.clone(),
            };
            return Box::pin(async move {
                let _guard = guard;
                std::future::pending().await
            });
        }
        Box::pin(async move {
            match name.as_str() {
                "echo" => Ok(CallToolResult::success(vec![ContentBlock::text(
                    args["text"].as_str().unwrap_or_default(),
                )])),
                "progress" => {
                    ctx.notices.progress(1.0, Some(3.0), Some("one".into()));
                    ctx.notices.progress(1.0, Some(3.0), Some("again".into()));
                    ctx.notices.progress(2.0, Some(3.0), None);
                    Ok(CallToolResult::success(vec![ContentBlock::text("done")]))
                }
                "logs" => {
                    ctx.notices.log(LogLevel::Debug, json!("quiet"));
                    ctx.notices.log(LogLevel::Error, json!({ "loud": true }));
                    Ok(CallToolResult::success(vec![ContentBlock::text(
                        ctx.request_id.clone(),
                    )]))
                }
                "fail" => Err("boom".to_owned()),
                // A result as another server sent it at an older revision (a gateway's
                // `wrap: false`): no `resultType`.
                "relayed" => Ok(serde_json::from_value(
                    json!({ "content": [{ "type": "text", "text": "as sent" }] }),
                )
                .unwrap()),
                "panic" => panic!("the mock panics"),
                "images" => {
                    let png =
                        base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n\x1a\n0000");
                    Ok(CallToolResult::success(
                        (0..12)
                            .map(|_| ContentBlock::image(png.clone(), "image/png"))
                            .collect(),
                    ))
                }
                "typed" => {
                    let mut result = CallToolResult::success(vec![]);
                    result.structured_content = Some(args.get("out").cloned().unwrap_or_default());
                    Ok(result)
                }
                _ => Err("no such tool".into()),
            }
        })
    }
}

/// The client end of a duplex pipe, speaking JSON-RPC lines.
struct Wire {
    write: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
}

impl Wire {
    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("a message within 10 s")
            .unwrap()
            .expect("the server's output still open");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// The notifications before the answer to `id`, and the answer.
    async fn answer(&mut self, id: i64) -> (Vec<Value>, Value) {
        let mut notes = Vec::new();
        loop {
            let message = self.next().await;
            if message.get("id") == Some(&json!(id)) {
                return (notes, message);
            }
            notes.push(message);
        }
    }

    async fn call(
        &mut self,
        id: i64,
        name: &str,
        args: Value,
        meta: Option<Value>,
    ) -> (Vec<Value>, Value) {
        let mut params = json!({ "name": name, "arguments": args });
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }))
            .await;
        self.answer(id).await
    }
}

fn text_of(answer: &Value) -> String {
    answer["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_error(answer: &Value) -> bool {
    answer["result"]["isError"] == json!(true)
}

struct Session {
    wire: Wire,
    abandoned: mpsc::UnboundedReceiver<String>,
    server: Arc<Server<Mock>>,
    served: tokio::task::JoinHandle<Result<(), String>>,
    stop: CancellationToken,
}

async fn session(limits: Option<ResponseLimits>) -> Session {
    let (mock, abandoned) = Mock::new();
    let mut options = ServerOptions::new("mock", "1.2.3");
    options.instructions = Some("Use echo.".into());
    options.limits = limits;
    let server = Server::new(mock, options);
    let (client, host) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(host);
    let stop = CancellationToken::new();
    let served = tokio::spawn({
        let (server, stop) = (server.clone(), stop.clone());
        async move { super::stdio::serve(&server, read, write, stop).await }
    });
    let (client_read, client_write) = tokio::io::split(client);
    let mut wire = Wire {
        write: client_write,
        lines: BufReader::new(client_read).lines(),
    };
    wire.send(
        json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": { "name": "test", "version": "0" },
        }}),
    )
    .await;
    let (_, init) = wire.answer(0).await;
    assert_eq!(init["result"]["serverInfo"]["name"], "mock");
    assert_eq!(init["result"]["serverInfo"]["version"], "1.2.3");
    assert_eq!(init["result"]["instructions"], "Use echo.");
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);
    assert!(init["result"]["capabilities"]["logging"].is_object());
    // A provider with tools only declares nothing else.
    let mut declared: Vec<&String> = init["result"]["capabilities"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    declared.sort();
    assert_eq!(declared, ["logging", "tools"]);
    wire.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
    Session {
        wire,
        abandoned,
        server,
        served,
        stop,
    }
}

#[tokio::test]
async fn lists_and_calls_tools_and_checks_arguments() {
    let mut s = session(None).await;
    s.wire
        .send(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }))
        .await;
    let (_, list) = s.wire.answer(1).await;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names[..3], ["echo", "progress", "logs"]);

    let (_, echo) = s.wire.call(2, "echo", json!({ "text": "hi" }), None).await;
    assert_eq!(text_of(&echo), "hi");
    assert!(!is_error(&echo));

    let (_, bad) = s.wire.call(3, "echo", json!({ "text": 5 }), None).await;
    assert!(is_error(&bad));
    let text = text_of(&bad);
    assert!(
        text.starts_with("Invalid arguments for tool 'echo': at /text: "),
        "{text}"
    );

    let (_, missing) = s.wire.call(4, "echo", json!({}), None).await;
    assert!(text_of(&missing).contains("\"text\" is a required property"));

    let (_, unknown) = s.wire.call(5, "nope", json!({}), None).await;
    assert_eq!(unknown["error"]["code"], -32602);
    assert_eq!(unknown["error"]["message"], "Unknown tool: nope");
}

/// What the server does not declare (prompts, resources, completions) is method-not-found, not
/// an empty list that says the capability exists (the conformance runner's
/// sep-2575-server-declares-prompts-in-discover failed on it).
#[tokio::test]
async fn undeclared_capabilities_are_not_methods() {
    let mut s = session(None).await;
    for (id, method) in [
        (1, "prompts/list"),
        (2, "resources/list"),
        (3, "resources/templates/list"),
    ] {
        s.wire
            .send(json!({ "jsonrpc": "2.0", "id": id, "method": method }))
            .await;
        let (_, answer) = s.wire.answer(id).await;
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
    s.wire
        .send(
            json!({ "jsonrpc": "2.0", "id": 4, "method": "completion/complete", "params": {
            "ref": { "type": "ref/prompt", "name": "p" }, "argument": { "name": "a", "value": "" }
        } }),
        )
        .await;
    let (_, answer) = s.wire.answer(4).await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    for (id, method, params) in [
        (5, "resources/read", json!({ "uri": "x://y" })),
        (6, "prompts/get", json!({ "name": "p" })),
    ] {
        s.wire
            .send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        let (_, answer) = s.wire.answer(id).await;
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
}

#[tokio::test]
async fn progress_is_sent_before_the_answer_only_when_asked_for() {
    let mut s = session(None).await;
    let (notes, answer) = s
        .wire
        .call(
            1,
            "progress",
            json!({}),
            Some(json!({ "progressToken": "p1" })),
        )
        .await;
    assert_eq!(text_of(&answer), "done");
    let progress: Vec<(f64, Option<&str>)> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| {
            assert_eq!(n["params"]["progressToken"], "p1");
            assert_eq!(n["params"]["total"], 3.0);
            (
                n["params"]["progress"].as_f64().unwrap(),
                n["params"]["message"].as_str(),
            )
        })
        .collect();
    // The repeated value is left out: progress must increase.
    assert_eq!(progress, [(1.0, Some("one")), (2.0, None)]);

    let (notes, _) = s.wire.call(2, "progress", json!({}), None).await;
    assert!(notes.is_empty(), "{notes:?}");
}

#[tokio::test]
async fn log_messages_follow_the_level_the_client_sets() {
    let mut s = session(None).await;
    let (notes, answer) = s.wire.call(1, "logs", json!({}), None).await;
    assert_eq!(text_of(&answer), "1", "the request id as JSON text");
    let levels: Vec<&str> = notes
        .iter()
        .map(|n| {
            assert_eq!(n["method"], "notifications/message");
            n["params"]["level"].as_str().unwrap()
        })
        .collect();
    assert_eq!(levels, ["debug", "error"]);
    assert_eq!(notes[1]["params"]["data"], json!({ "loud": true }));

    s.wire
        .send(json!({ "jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": { "level": "warning" } }))
        .await;
    let (_, set) = s.wire.answer(2).await;
    assert_eq!(set["result"], json!({}));
    let (notes, _) = s.wire.call(3, "logs", json!({}), None).await;
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0]["params"]["level"], "error");
}

/// A 2026-07-28 request (its `_meta` carries the protocol version) gets log messages only at the
/// level its own `io.modelcontextprotocol/logLevel` asks, none without it (the conformance
/// runner's sep-2575-server-no-log-without-loglevel failed: they followed the session's level).
#[tokio::test]
async fn a_2026_request_gets_the_logs_it_asks_for_and_none_unasked() {
    let mut s = session(None).await;
    let modern = |level: Option<&str>| {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        if let Some(level) = level {
            meta["io.modelcontextprotocol/logLevel"] = json!(level);
        }
        Some(meta)
    };
    let (notes, answer) = s.wire.call(1, "logs", json!({}), modern(None)).await;
    assert!(!is_error(&answer));
    assert!(notes.is_empty(), "{notes:?}");
    let (notes, _) = s
        .wire
        .call(2, "logs", json!({}), modern(Some("error")))
        .await;
    let levels: Vec<&str> = notes
        .iter()
        .map(|n| n["params"]["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["error"]);
    // A request without the 2026 keys still follows the session (everything until setLevel).
    let (notes, _) = s.wire.call(3, "logs", json!({}), None).await;
    assert_eq!(notes.len(), 2);
}

#[tokio::test]
async fn a_cancelled_call_reaches_the_tool_and_a_timeout_ends_it() {
    let mut s = session(None).await;
    s.wire
        .send(json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": { "name": "hang", "arguments": {} } }))
        .await;
    // Sent right away: rmcp registers the request before reading the next line.
    s.wire
        .send(json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 7, "reason": "user" } }))
        .await;
    let reason = tokio::time::timeout(Duration::from_secs(10), s.abandoned.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reason, "the client cancelled the request or went away");

    let (_, answer) = s.wire.call(8, "quick_hang", json!({}), None).await;
    assert!(is_error(&answer));
    assert_eq!(text_of(&answer), "Tool 'quick_hang' timed out after 100 ms");
    assert_eq!(
        s.abandoned.recv().await.unwrap(),
        "the tool timed out after 100 ms"
    );
}

#[tokio::test]
async fn failures_are_error_results_never_crashes() {
    let mut s = session(None).await;
    let (_, fail) = s.wire.call(1, "fail", json!({}), None).await;
    assert!(is_error(&fail));
    assert_eq!(text_of(&fail), "boom");
    let (_, panic) = s.wire.call(2, "panic", json!({}), None).await;
    assert!(is_error(&panic));
    assert_eq!(text_of(&panic), "Tool 'panic' failed unexpectedly");
    // Still serving.
    let (_, echo) = s
        .wire
        .call(3, "echo", json!({ "text": "alive" }), None)
        .await;
    assert_eq!(text_of(&echo), "alive");
}

#[tokio::test]
async fn structured_content_is_checked_and_given_as_text_too() {
    let mut s = session(None).await;
    let (_, good) = s
        .wire
        .call(1, "typed", json!({ "out": { "n": 3 } }), None)
        .await;
    assert!(!is_error(&good));
    assert_eq!(good["result"]["structuredContent"], json!({ "n": 3 }));
    assert_eq!(text_of(&good), r#"{"n":3}"#);
    let (_, bad) = s
        .wire
        .call(2, "typed", json!({ "out": { "n": "x" } }), None)
        .await;
    assert!(is_error(&bad));
    assert!(
        text_of(&bad)
            .starts_with("Tool 'typed' returned a result that breaks its outputSchema: at /n: "),
        "{}",
        text_of(&bad)
    );
}

#[tokio::test]
async fn the_response_rules_cut_with_a_notice() {
    let mut s = session(Some(ResponseLimits::openclaw())).await;
    let (_, answer) = s.wire.call(1, "images", json!({}), None).await;
    let content = answer["result"]["content"].as_array().unwrap();
    assert_eq!(content.iter().filter(|c| c["type"] == "image").count(), 10);
    let notice = content.last().unwrap()["text"].as_str().unwrap();
    assert!(notice.contains("more than maxImages 10"), "{notice}");
}

#[tokio::test]
async fn sessions_hear_when_the_tools_change_and_end_with_the_client() {
    let mut s = session(None).await;
    // Once the server has taken `notifications/initialized`, the session is one to tell.
    until_a_session(&s.server).await;
    s.server
        .provider()
        .tools
        .lock()
        .unwrap()
        .push(tool("added", json!({})));
    s.server.tools_changed(None).await;
    let note = s.wire.next().await;
    assert_eq!(note["method"], "notifications/tools/list_changed");

    // The client closes its side: the session ends by itself.
    drop(s.wire);
    let ended = tokio::time::timeout(Duration::from_secs(10), s.served).await;
    assert_eq!(ended.unwrap().unwrap(), Ok(()));
    drop(s.stop);
}

#[tokio::test]
async fn stop_ends_a_stdio_session() {
    let s = session(None).await;
    s.stop.cancel();
    let ended = tokio::time::timeout(Duration::from_secs(10), s.served).await;
    assert_eq!(ended.unwrap().unwrap(), Ok(()));
}

#[tokio::test]
async fn http_serves_on_loopback_and_refuses_other_origins() {
    let (mock, _abandoned) = Mock::new();
    let server = Server::new(mock, ServerOptions::new("mock", "1"));
    let http = super::http::serve(server, super::http::HttpOptions::default())
        .await
        .unwrap();
    assert!(http.url.starts_with("http://127.0.0.1:"), "{}", http.url);
    assert!(http.url.ends_with("/mcp"));
    assert_ne!(http.local_addr.port(), 0);
    let client = reqwest::Client::new();
    let initialize = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": { "name": "test", "version": "0" },
    }});
    let post = |url: &str, origin: Option<&str>| {
        let mut request = client
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    let evil = post(&http.url, Some("https://evil.example")).await.unwrap();
    assert_eq!(evil.status(), 403);
    let local = post(
        &http.url,
        Some(&format!("http://localhost:{}", http.local_addr.port())),
    )
    .await
    .unwrap();
    assert_eq!(local.status(), 200);
    assert!(local.headers().contains_key("mcp-session-id"));
    let plain = post(&http.url, None).await.unwrap();
    assert_eq!(plain.status(), 200);
    let body = plain.text().await.unwrap();
    assert!(body.contains("\"serverInfo\""), "{body}");
    let elsewhere = post(&http.url.replace("/mcp", "/other"), None)
        .await
        .unwrap();
    assert_eq!(elsewhere.status(), 404);
    // A rebinding attack's Host is refused too.
    let rebound = client
        .post(&http.url)
        .header("host", "attacker.example")
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);
    let addr = http.local_addr;
    tokio::time::timeout(Duration::from_secs(10), http.close())
        .await
        .unwrap();
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

/// `Server::close` answers a call in flight (its provider told why) before the transport stops,
/// and answers a call that comes after at once, without running it.
#[tokio::test]
async fn close_answers_the_calls_in_flight_first() {
    let mut s = session(None).await;
    s.wire
        .send(json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": { "name": "hang", "arguments": {} } }))
        .await;
    // The call is running once the server counts it; `close` then has it to answer.
    let mut in_flight = s.server.calls_in_flight();
    tokio::time::timeout(Duration::from_secs(10), in_flight.wait_for(|n| *n == 1))
        .await
        .unwrap()
        .unwrap();
    let server = s.server.clone();
    let closed = tokio::spawn(async move { server.close("the test closed it").await });
    let (_, answer) = s.wire.answer(7).await;
    assert!(is_error(&answer), "{answer}");
    assert_eq!(
        text_of(&answer),
        "Tool 'hang' was cancelled: the test closed it"
    );
    assert_eq!(s.abandoned.recv().await.unwrap(), "the test closed it");
    tokio::time::timeout(Duration::from_secs(10), closed)
        .await
        .unwrap()
        .unwrap();
    let (_, later) = s.wire.call(8, "echo", json!({ "text": "x" }), None).await;
    assert_eq!(
        text_of(&later),
        "Tool 'echo' was not run: the test closed it"
    );
    s.stop.cancel();
    let ended = tokio::time::timeout(Duration::from_secs(10), s.served).await;
    assert_eq!(ended.unwrap().unwrap(), Ok(()));
}

/// `Server::log` (a gateway's relay of its servers' logs) reaches each session at or above the
/// level it set, with the logger given.
#[tokio::test]
async fn server_logs_follow_each_sessions_level() {
    let mut s = session(None).await;
    until_a_session(&s.server).await;
    s.server
        .log(
            LogLevel::Debug,
            Some("up/own".into()),
            json!("all at first"),
        )
        .await;
    let note = s.wire.next().await;
    assert_eq!(note["method"], "notifications/message");
    assert_eq!(
        note["params"],
        json!({ "level": "debug", "logger": "up/own", "data": "all at first" })
    );
    s.wire
        .send(json!({ "jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": { "level": "error" } }))
        .await;
    s.wire.answer(2).await;
    s.server
        .log(LogLevel::Warning, Some("up".into()), json!("filtered"))
        .await;
    s.server
        .log(LogLevel::Critical, Some("up".into()), json!({ "kept": 1 }))
        .await;
    let note = s.wire.next().await;
    assert_eq!(note["params"]["level"], "critical");
    assert_eq!(note["params"]["data"], json!({ "kept": 1 }));
}

/// A 2026-07-28 `subscriptions/listen` stream opened on `url` (request id 5, asking for
/// `notifications`): its SSE frames' `data:` lines as JSON, in order.
struct ListenStream {
    response: reqwest::Response,
    buffer: String,
}

impl ListenStream {
    async fn open(url: &str, notifications: Value) -> Self {
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": { "name": "test", "version": "0" },
        });
        let listen = json!({ "jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen",
            "params": { "_meta": meta, "notifications": notifications } });
        let response = reqwest::Client::new()
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "subscriptions/listen")
            .json(&listen)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        Self {
            response,
            buffer: String::new(),
        }
    }

    async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find('\n') {
                let line: String = self.buffer.drain(..=end).collect();
                if let Some(data) = line.trim().strip_prefix("data:")
                    && let Ok(value) = serde_json::from_str(data.trim())
                {
                    return Some(value);
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.response.chunk())
                .await
                .expect("a frame within 10 s")
                .unwrap()?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

async fn stateless_http<P: ToolProvider>(server: &Arc<Server<P>>) -> super::http::HttpServer {
    let mut options = super::http::HttpOptions::default();
    options.stateless = true;
    super::http::serve(server.clone(), options).await.unwrap()
}

/// At 2026-07-28 a client hears of tool changes on a `subscriptions/listen` stream: the
/// acknowledgment first, then `notifications/tools/list_changed` tagged with the stream's id,
/// and the stream ends with a result when the server closes (D3 in docs/conformance.md: the
/// method was -32601 though `tools.listChanged` is declared).
#[tokio::test]
async fn a_listen_stream_hears_of_tool_changes() {
    let (mock, _abandoned) = Mock::new();
    let server = Server::new(mock, ServerOptions::new("mock", "1"));
    let http = stateless_http(&server).await;
    let mut stream = ListenStream::open(
        &http.url,
        json!({ "toolsListChanged": true, "promptsListChanged": true }),
    )
    .await;
    let ack = stream.next().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    // Only what the server offers is accepted: tool changes, not prompt changes.
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "toolsListChanged": true })
    );
    server.tools_changed(None).await;
    let changed = stream.next().await.unwrap();
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        json!(5)
    );
    server.close("closing").await;
    let last = stream.next().await.unwrap();
    assert_eq!(last["id"], json!(5), "{last}");
    assert!(last.get("result").is_some(), "{last}");
    tokio::time::timeout(Duration::from_secs(10), http.close())
        .await
        .unwrap();
}

/// A provider that offers resource subscriptions and list changes, and tells the test each
/// subscribe and unsubscribe.
struct Subscribable {
    told: mpsc::UnboundedSender<String>,
}

impl ToolProvider for Subscribable {
    fn tools(&self) -> Vec<Tool> {
        Vec::new()
    }

    fn call(&self, _name: &str, _args: JsonObject, _ctx: CallContext) -> CallFuture {
        Box::pin(async { Err("no tools".to_owned()) })
    }

    fn offers(&self) -> Offers {
        Offers {
            resources: true,
            subscribe: true,
            list_changed: true,
            ..Offers::default()
        }
    }

    fn subscribe(&self, uri: String) -> CatalogFuture<()> {
        let _ = self.told.send(format!("subscribe {uri}"));
        Box::pin(async { Ok(()) })
    }

    fn unsubscribe(&self, uri: String) -> CatalogFuture<()> {
        let _ = self.told.send(format!("unsubscribe {uri}"));
        Box::pin(async { Ok(()) })
    }
}

/// At 2026-07-28 a listen stream subscribes to resources itself: the provider is asked for
/// each URI while the stream is open and told when it ends; only the URIs it asked for are
/// sent to it, with resource list changes.
#[tokio::test]
async fn a_listen_stream_subscribes_to_resources_while_open() {
    let (told, mut heard) = mpsc::unbounded_channel();
    let server = Server::new(
        Arc::new(Subscribable { told }),
        ServerOptions::new("s", "1"),
    );
    let http = stateless_http(&server).await;
    let mut stream = ListenStream::open(
        &http.url,
        json!({ "resourcesListChanged": true, "resourceSubscriptions": ["test://a"] }),
    )
    .await;
    let ack = stream.next().await.unwrap();
    assert_eq!(
        ack["params"]["notifications"],
        json!({ "resourcesListChanged": true, "resourceSubscriptions": ["test://a"] })
    );
    assert_eq!(heard.recv().await.unwrap(), "subscribe test://a");
    server.resource_updated("test://b").await;
    server.resource_updated("test://a").await;
    server.resources_changed().await;
    let updated = stream.next().await.unwrap();
    assert_eq!(updated["method"], "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "test://a", "{updated}");
    let changed = stream.next().await.unwrap();
    assert_eq!(changed["method"], "notifications/resources/list_changed");
    server.close("closing").await;
    assert_eq!(heard.recv().await.unwrap(), "unsubscribe test://a");
    tokio::time::timeout(Duration::from_secs(10), http.close())
        .await
        .unwrap();
}

/// 2026-07-28 requires `resultType` on every result: one passed through from elsewhere without
/// it gets it too (the conformance runner's `wire-schema-valid` failed on a gateway serving
/// results with `wrap: false`).
#[tokio::test]
async fn a_result_passed_through_gets_its_result_type() {
    let mut s = session(None).await;
    let modern = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let (_, answer) = s.wire.call(7, "relayed", json!({}), Some(modern)).await;
    assert_eq!(text_of(&answer), "as sent");
    assert_eq!(
        answer["result"]["resultType"],
        json!("complete"),
        "{answer}"
    );
}

/// Until the server counts the session (it has taken `notifications/initialized`; rmcp gives
/// no signal for it), at most 10 s.
async fn until_a_session(server: &Server<Mock>) {
    tokio::time::timeout(Duration::from_secs(10), async {
        while server.session_count() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
}
