//! A minimal MCP server over stdio for benchmarking MCP *clients*.
//!
//! Hand-written newline-delimited JSON-RPC 2.0 (serde_json only), so that the
//! server's own cost is as small as it can be and the numbers show the client.
//!
//! Tools: `echo {text}`, `text {bytes}` (that many bytes of deterministic
//! mixed ASCII/UTF-8 prose, see `gen_text`), and `--tools N` generated tools
//! `tool_0000..` with a realistic argument schema.
//!
//! Flags:
//!   --tools N            add N generated tools (default 0)
//!   --ignore-sigterm     ignore SIGTERM and keep running after stdin closes
//!                        (until SIGKILL, or `--linger-s`), like a hung server
//!   --linger-s S         with --ignore-sigterm: exit by itself S s after stdin EOF (default 30)
//!   --max-lifetime-s S   exit after S seconds whatever happens (default 1800)
//!   --http PORT          serve Streamable HTTP (stateless, JSON responses) on 127.0.0.1:PORT
//!                        instead of stdio (0: any free port); prints `listening <port>` on
//!                        stdout. HTTP/1.1 keep-alive, a thread per connection: POST /mcp
//!                        answers a request with its JSON response and a notification with
//!                        202; GET and DELETE are 405 (no SSE stream, no sessions).
//!
//! Safety net: the process exits when its parent dies (it polls its parent
//! pid), so an interrupted benchmark never leaves servers behind.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const DEFAULT_VERSION: &str = "2025-06-18";
const MAX_TEXT_BYTES: u64 = 256 * 1024 * 1024;

extern "C" {
    fn signal(signum: i32, handler: usize) -> usize;
}
const SIGTERM: i32 = 15;
const SIG_IGN: usize = 1;

struct Opts {
    tools: usize,
    ignore_sigterm: bool,
    linger_s: u64,
    max_lifetime_s: u64,
    http: Option<u16>,
}

fn parse_args() -> Opts {
    let mut o = Opts {
        tools: 0,
        ignore_sigterm: false,
        linger_s: 30,
        max_lifetime_s: 1800,
        http: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |name: &str| -> u64 {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| die(&format!("{name} needs a number")))
        };
        match a.as_str() {
            "--tools" => o.tools = num("--tools") as usize,
            "--ignore-sigterm" => o.ignore_sigterm = true,
            "--linger-s" => o.linger_s = num("--linger-s"),
            "--max-lifetime-s" => o.max_lifetime_s = num("--max-lifetime-s"),
            "--http" => o.http = Some(num("--http") as u16),
            other => die(&format!("unknown argument {other}")),
        }
    }
    o
}

fn die(msg: &str) -> ! {
    eprintln!("mcp-bench-server: {msg}");
    std::process::exit(2)
}

/// Deterministic text of exactly `n` bytes: numbered lines of mixed prose
/// (ASCII, Latin-1, CJK, an em dash, a little markup), cut at a character
/// boundary and padded with `x`. `bench/lib/text.mjs` produces the same bytes.
fn gen_text(n: usize) -> String {
    let mut s = String::with_capacity(n + 160);
    let mut i: u64 = 0;
    while s.len() < n {
        let _ = writeln!(
            s,
            "{i:08} The quick brown fox jumps over the lazy dog; café naïve 日本語 <b>ok</b> — {}",
            (i * 7919) % 1000
        );
        i += 1;
    }
    let mut cut = n;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    while s.len() < n {
        s.push('x');
    }
    s
}

fn tool_list(generated: usize) -> String {
    let mut tools = vec![
        json!({
            "name": "echo",
            "description": "Echo back the given text",
            "inputSchema": {
                "type": "object",
                "properties": { "text": { "type": "string", "description": "Text to echo back" } },
                "required": ["text"]
            }
        }),
        json!({
            "name": "text",
            "description": "Return `bytes` bytes of generated text",
            "inputSchema": {
                "type": "object",
                "properties": { "bytes": { "type": "integer", "minimum": 0, "description": "How many bytes of text" } },
                "required": ["bytes"]
            }
        }),
    ];
    for i in 0..generated {
        tools.push(json!({
            "name": format!("tool_{i:04}"),
            "description": format!("Generated tool {i}: searches collection {i} and returns the matching records"),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": { "type": "string", "description": "Search query" },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 100, "description": "Maximum number of results" },
                    "mode": { "type": "string", "enum": ["fast", "exact", "fuzzy"], "description": "Matching mode" },
                    "tags": { "type": "array", "items": { "type": "string" } },
                    "options": {
                        "type": "object",
                        "properties": {
                            "verbose": { "type": "boolean" },
                            "depth": { "type": "number", "description": "Recursion depth" }
                        },
                        "required": ["depth"]
                    }
                },
                "required": ["query"]
            }
        }));
    }
    json!({ "tools": tools }).to_string()
}

fn spawn_watchdog(max_lifetime: Duration) {
    let started = Instant::now();
    let parent = std::os::unix::process::parent_id();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(200));
        if std::os::unix::process::parent_id() != parent || started.elapsed() > max_lifetime {
            std::process::exit(0);
        }
    });
}

struct Server {
    tools_json: String,
    /// bytes -> the JSON string literal (quoted, escaped) of `gen_text(bytes)`.
    text_cache: HashMap<u64, String>,
}

impl Server {
    fn handle(&mut self, msg: &Value, out: &mut impl Write) -> std::io::Result<()> {
        let id = msg.get("id");
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            return Ok(()); // a response or garbage: nothing to answer
        };
        let Some(id) = id.filter(|v| !v.is_null()) else {
            return Ok(()); // a notification
        };
        let params = msg.get("params");
        let arg = |k: &str| params.and_then(|p| p.get("arguments")).and_then(|a| a.get(k));
        match method {
            "initialize" => {
                let asked = params
                    .and_then(|p| p.get("protocolVersion"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let version = if SUPPORTED_VERSIONS.contains(&asked) { asked } else { DEFAULT_VERSION };
                reply(out, id, &json!({
                    "protocolVersion": version,
                    "capabilities": { "tools": { "listChanged": false } },
                    "serverInfo": { "name": "mcp-bench-server", "version": "0.0.0" }
                }))
            }
            "ping" | "logging/setLevel" => reply(out, id, &json!({})),
            "tools/list" => reply_raw(out, id, &[&self.tools_json]),
            "resources/list" => reply(out, id, &json!({ "resources": [] })),
            "resources/templates/list" => reply(out, id, &json!({ "resourceTemplates": [] })),
            "prompts/list" => reply(out, id, &json!({ "prompts": [] })),
            "tools/call" => {
                let name = params.and_then(|p| p.get("name")).and_then(Value::as_str).unwrap_or("");
                match name {
                    "echo" => {
                        let text = arg("text").and_then(Value::as_str).unwrap_or("");
                        reply(out, id, &json!({ "content": [{ "type": "text", "text": text }] }))
                    }
                    "text" => {
                        let bytes = arg("bytes").and_then(Value::as_u64).unwrap_or(0).min(MAX_TEXT_BYTES);
                        let lit = self
                            .text_cache
                            .entry(bytes)
                            .or_insert_with(|| Value::String(gen_text(bytes as usize)).to_string());
                        reply_raw(out, id, &[r#"{"content":[{"type":"text","text":"#, lit, "}]}"])
                    }
                    n if n.starts_with("tool_") => {
                        reply(out, id, &json!({ "content": [{ "type": "text", "text": format!("{n}: ok") }] }))
                    }
                    other => reply(out, id, &json!({
                        "content": [{ "type": "text", "text": format!("Unknown tool: {other}") }],
                        "isError": true
                    })),
                }
            }
            other => {
                let err = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32601, "message": format!("Method not found: {other}") } });
                serde_json::to_writer(&mut *out, &err)?;
                out.write_all(b"\n")
            }
        }
    }
}

fn reply(out: &mut impl Write, id: &Value, result: &Value) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, &json!({ "jsonrpc": "2.0", "id": id, "result": result }))?;
    out.write_all(b"\n")
}

fn reply_raw(out: &mut impl Write, id: &Value, result_parts: &[&str]) -> std::io::Result<()> {
    out.write_all(br#"{"jsonrpc":"2.0","id":"#)?;
    serde_json::to_writer(&mut *out, id)?;
    out.write_all(br#","result":"#)?;
    for p in result_parts {
        out.write_all(p.as_bytes())?;
    }
    out.write_all(b"}\n")
}

fn main() {
    let opts = parse_args();
    if opts.ignore_sigterm {
        // SAFETY: installing SIG_IGN for SIGTERM before any other thread exists.
        unsafe {
            signal(SIGTERM, SIG_IGN);
        }
    }
    spawn_watchdog(Duration::from_secs(opts.max_lifetime_s));
    if let Some(port) = opts.http {
        serve_http(port, opts.tools);
    }

    // Raw fds 0/1 with our own buffers: `BufReader::buffer()` tells whether more
    // requests are already waiting, so pipelined replies are flushed together.
    // SAFETY: fds 0 and 1 are open for the life of the process; ManuallyDrop keeps them open.
    let stdin = ManuallyDrop::new(unsafe { File::from_raw_fd(0) });
    let stdout = ManuallyDrop::new(unsafe { File::from_raw_fd(1) });
    let mut input = BufReader::with_capacity(1 << 20, &*stdin);
    let mut out = BufWriter::with_capacity(1 << 16, &*stdout);
    let mut server = Server {
        tools_json: tool_list(opts.tools),
        text_cache: HashMap::new(),
    };
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let ok = match serde_json::from_slice::<Value>(&line) {
            Ok(msg) => server.handle(&msg, &mut out),
            Err(_) if line.iter().all(u8::is_ascii_whitespace) => Ok(()),
            Err(e) => {
                let err = json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32700, "message": format!("Parse error: {e}") } });
                serde_json::to_writer(&mut out, &err)
                    .map_err(std::io::Error::from)
                    .and_then(|_| out.write_all(b"\n"))
            }
        };
        if ok.is_err() || (input.buffer().is_empty() && out.flush().is_err()) {
            break; // the client went away
        }
    }
    let _ = out.flush();
    if opts.ignore_sigterm {
        // A hung server: stdin is closed but it does not exit; only SIGKILL (or the
        // watchdog / linger bound) ends it.
        std::thread::sleep(Duration::from_secs(opts.linger_s));
    }
}

/// Streamable HTTP, stateless: one thread per connection, each with its own `Server`.
fn serve_http(port: u16, tools: usize) -> ! {
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap_or_else(|e| die(&format!("bind: {e}")));
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    println!("listening {port}");
    let _ = std::io::stdout().flush();
    let tools_json = tool_list(tools);
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let _ = conn.set_nodelay(true);
        let tools_json = tools_json.clone();
        std::thread::spawn(move || {
            let mut server = Server { tools_json, text_cache: HashMap::new() };
            let _ = http_connection(conn, &mut server);
        });
    }
    std::process::exit(0)
}

/// Requests on one keep-alive connection until the client closes it.
fn http_connection(conn: std::net::TcpStream, server: &mut Server) -> std::io::Result<()> {
    let mut input = BufReader::with_capacity(1 << 16, conn.try_clone()?);
    let mut out = BufWriter::with_capacity(1 << 16, conn);
    let mut line = String::new();
    let mut body = Vec::new();
    let mut answer = Vec::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_owned();
        let mut length = 0usize;
        let mut chunked = false;
        let mut close = false;
        loop {
            line.clear();
            if input.read_line(&mut line)? == 0 {
                return Ok(());
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                let value = value.trim();
                match name.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = value.parse().unwrap_or(0),
                    "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                    "connection" => close = value.eq_ignore_ascii_case("close"),
                    _ => {}
                }
            }
        }
        body.clear();
        if chunked {
            loop {
                line.clear();
                input.read_line(&mut line)?;
                let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
                if size == 0 {
                    line.clear();
                    input.read_line(&mut line)?; // the empty line after the last chunk
                    break;
                }
                let at = body.len();
                body.resize(at + size, 0);
                std::io::Read::read_exact(&mut input, &mut body[at..])?;
                line.clear();
                input.read_line(&mut line)?;
            }
        } else {
            body.resize(length, 0);
            std::io::Read::read_exact(&mut input, &mut body)?;
        }
        answer.clear();
        let status = if method == "POST" {
            match serde_json::from_slice::<Value>(&body) {
                Ok(msg) => {
                    server.handle(&msg, &mut answer)?;
                    if answer.is_empty() { "202 Accepted" } else { "200 OK" }
                }
                Err(_) => "400 Bad Request",
            }
        } else {
            "405 Method Not Allowed"
        };
        while answer.last() == Some(&b'\n') {
            answer.pop();
        }
        write!(
            out,
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            answer.len()
        )?;
        out.write_all(&answer)?;
        out.flush()?;
        if close {
            return Ok(());
        }
    }
}
