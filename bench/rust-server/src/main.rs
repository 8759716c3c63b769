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
}

fn parse_args() -> Opts {
    let mut o = Opts {
        tools: 0,
        ignore_sigterm: false,
        linger_s: 30,
        max_lifetime_s: 1800,
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
