//! End to end: secrets resolved from a file, the environment and a real OpenBao reach
//! a real stdio server (the fault server, run with node), and nothing that leaves the
//! manager (wrapped tool results, log lines, error texts) contains a resolved value in
//! any encoding: raw, JSON-escaped, percent-encoded or base64. A server that prints
//! its secret to stderr gets that line masked too.

mod common;

use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use common::*;
use openclaw_mcp_native::config::ServerConfig;
use openclaw_mcp_native::secrets::{EnvSource, REDACTED, SecretResolver};
use openclaw_mcp_native::status::Status;
use openclaw_mcp_native::tool_result::ToolCallResult;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const FILE_SECRET: &str = "file-echo p@ss/word+&=?\"quoted\"\\back\tünïcode";
const VAULT_SECRET: &str = "vault-echo-S3cret/+&=<tag>~ü";
const ENV_SECRET: &str = "env-echo-secret<value>&more";

/// `JSON.stringify(s)` without the quotes.
fn json_js(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap();
    quoted[1..quoted.len() - 1].to_owned()
}

/// Python's `json.dumps` default: every non-ASCII character as `\uXXXX`.
fn json_ascii(s: &str) -> String {
    let mut out = String::new();
    for c in json_js(s).chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                write!(out, "\\u{u:04x}").unwrap();
            }
        }
    }
    out
}

/// Go's `encoding/json` default: `<`, `>`, `&` as `\u003c` etc.
fn json_go(s: &str) -> String {
    json_js(s)
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// `encodeURIComponent`.
fn uri_component(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// `application/x-www-form-urlencoded` (space as `+`).
fn form_encoded(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else if b == b' ' {
                "+".to_owned()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Every spelling of `v` that must never leave the manager.
fn spellings(v: &str) -> Vec<(&'static str, String)> {
    vec![
        ("raw", v.to_owned()),
        ("json", json_js(v)),
        ("json-ascii", json_ascii(v)),
        ("json-go", json_go(v)),
        ("uri-component", uri_component(v)),
        ("uri-component-lower", uri_component(v).to_lowercase()),
        ("form", form_encoded(v)),
        ("base64", STANDARD.encode(v)),
        ("base64url", URL_SAFE_NO_PAD.encode(v)),
    ]
}

fn assert_clean(what: &str, text: &str) {
    for secret in [FILE_SECRET, VAULT_SECRET, ENV_SECRET] {
        for (kind, form) in spellings(secret) {
            assert!(
                !text.contains(&form),
                "{what} leaks the {kind} spelling of a secret:\n{text}"
            );
        }
    }
}

fn sha256_hex(s: &str) -> String {
    aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, s.as_bytes())
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

async fn call(h: &Harness, index: usize, tool: &str, name: &str) -> String {
    match h
        .manager
        .execute(
            index,
            tool,
            tool,
            json!({ "name": name }).as_object().cloned(),
            &CancellationToken::new(),
            None,
        )
        .await
    {
        ToolCallResult {
            text,
            external: Some(_),
            ..
        } => text,
        ToolCallResult {
            text,
            external: None,
            ..
        } => panic!("{tool}({name}) failed: {text}\n{}", h.dump()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolved_secrets_never_leave_the_manager_in_any_encoding() {
    let (_bao, addr) = start_openbao(None).await;
    bao_call(
        &addr,
        reqwest::Method::POST,
        "secret/data/echo",
        Some(json!({"data": {"token": VAULT_SECRET}})),
        None,
    )
    .await;
    let dir = temp_dir("echo");
    let secret_file = dir.join("token.txt");
    std::fs::write(&secret_file, format!("{FILE_SECRET}\n")).unwrap();
    let home = dir.display().to_string();

    let mut server = fault_server("echo", &[]);
    server.max_restarts = 0;
    // The secrets, by reference.
    server.env = vec![
        (
            "FROM_FILE".into(),
            format!("secret://file/{}", secret_file.display()),
        ),
        (
            "FROM_VAULT".into(),
            "secret://vault/secret/echo#token".into(),
        ),
        ("FROM_ENV".into(), "secret://env/ECHO_ENV_SECRET".into()),
        // Encoded copies under keys that do not look like credentials (so they are not
        // registered themselves): the server "echoes" a secret in that encoding.
        ("ECHO_JSON".into(), json_js(FILE_SECRET)),
        ("ECHO_JSON_ASCII".into(), json_ascii(FILE_SECRET)),
        ("ECHO_JSON_GO".into(), json_go(ENV_SECRET)),
        ("ECHO_PCT".into(), uri_component(VAULT_SECRET)),
        ("ECHO_FORM".into(), form_encoded(FILE_SECRET)),
        ("ECHO_B64".into(), STANDARD.encode(FILE_SECRET)),
        ("ECHO_B64URL".into(), URL_SAFE_NO_PAD.encode(VAULT_SECRET)),
        (
            "ECHO_BASIC".into(),
            format!("Basic {}", STANDARD.encode(format!("user:{VAULT_SECRET}"))),
        ),
        ("ECHO_IN_TEXT".into(), format!("before {ENV_SECRET} after")),
    ];
    let resolver = SecretResolver::with_default_providers_in(EnvSource::fixed([
        ("VAULT_ADDR", addr.as_str()),
        ("VAULT_TOKEN", BAO_ROOT_TOKEN),
        ("HOME", home.as_str()),
        ("ECHO_ENV_SECRET", ENV_SECRET),
    ]));
    let h = harness_with_resolver(vec![server], resolver);
    h.manager.start().await;
    assert_eq!(h.manager.status()[0].status, Status::Ready, "{}", h.dump());

    // The exact values arrived (hashes only: the values never come back).
    for (var, value) in [
        ("FROM_FILE", FILE_SECRET),
        ("FROM_VAULT", VAULT_SECRET),
        ("FROM_ENV", ENV_SECRET),
    ] {
        let hash = call(&h, 0, "env_hash", var).await;
        assert!(hash.contains(&sha256_hex(value)), "{var}: {hash}");
    }

    // Every echo comes back masked.
    for var in [
        "FROM_FILE",
        "FROM_VAULT",
        "FROM_ENV",
        "ECHO_JSON",
        "ECHO_JSON_ASCII",
        "ECHO_JSON_GO",
        "ECHO_PCT",
        "ECHO_FORM",
        "ECHO_B64",
        "ECHO_B64URL",
        "ECHO_BASIC",
        "ECHO_IN_TEXT",
    ] {
        let text = call(&h, 0, "env", var).await;
        assert!(text.contains(REDACTED), "{var}: {text}");
        assert_clean(&format!("the result of env({var})"), &text);
    }
    let basic = call(&h, 0, "env", "ECHO_BASIC").await;
    assert!(
        !basic.contains(&STANDARD.encode(format!("user:{VAULT_SECRET}"))),
        "{basic}"
    );
    let in_text = call(&h, 0, "env", "ECHO_IN_TEXT").await;
    assert!(
        in_text.contains(&format!("before {REDACTED} after")),
        "{in_text}"
    );

    h.manager.shutdown().await;
    let lines = h.sink.lines();
    assert!(!lines.is_empty());
    for (_, line) in &lines {
        assert_clean("a log line", line);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_printing_its_secret_to_stderr_is_masked() {
    let (_bao, addr) = start_openbao(None).await;
    bao_call(
        &addr,
        reqwest::Method::POST,
        "secret/data/echo",
        Some(json!({"data": {"token": VAULT_SECRET}})),
        None,
    )
    .await;
    let dir = temp_dir("echo-stderr");
    let secret_file = dir.join("token.txt");
    std::fs::write(&secret_file, FILE_SECRET).unwrap();
    let home = dir.display().to_string();

    let script = "const a = process.env.LEAK_A, b = process.env.LEAK_B;\
        process.stderr.write('leaking ' + a + ' | ' + encodeURIComponent(b) + ' | ' + \
        Buffer.from(a).toString('base64') + ' | ' + JSON.stringify({ b }) + '\\n');\
        process.exit(3)";
    let mut leaky = ServerConfig::with_defaults("leaky");
    leaky.command = Some(node());
    leaky.args = vec!["-e".into(), script.into()];
    leaky.max_restarts = 0;
    leaky.env = vec![
        (
            "LEAK_A".into(),
            format!("secret://file/{}", secret_file.display()),
        ),
        ("LEAK_B".into(), "secret://vault/secret/echo#token".into()),
    ];
    // A server whose reference fails: the error names the reference, not a value.
    let mut broken = fault_server("broken", &[]);
    broken.max_restarts = 0;
    broken.env = vec![("X".into(), "secret://vault/secret/echo#nope".into())];

    let resolver = SecretResolver::with_default_providers_in(EnvSource::fixed([
        ("VAULT_ADDR", addr.as_str()),
        ("VAULT_TOKEN", BAO_ROOT_TOKEN),
        ("HOME", home.as_str()),
    ]));
    let h = harness_with_resolver(vec![leaky, broken], resolver);
    h.manager.start().await;
    let status = h.manager.status();
    assert_eq!(status[0].status, Status::Error, "{}", h.dump());
    assert_ne!(status[1].status, Status::Ready, "{}", h.dump());
    h.manager.shutdown().await;

    let lines = h.sink.lines();
    let stderr_line = lines
        .iter()
        .find(|(_, m)| m.starts_with("MCP server 'leaky' stderr: leaking "))
        .unwrap_or_else(|| panic!("{}", h.dump()));
    assert_eq!(
        stderr_line.1,
        format!(
            "MCP server 'leaky' stderr: leaking {REDACTED} | {REDACTED} | {REDACTED} | {{\"b\":\"{REDACTED}\"}}"
        ),
    );
    let failure = lines
        .iter()
        .find(|(_, m)| m.starts_with("MCP server 'leaky' failed to start"))
        .unwrap_or_else(|| panic!("{}", h.dump()));
    assert!(failure.1.contains(REDACTED), "{}", failure.1);
    assert!(
        h.logged(
            openclaw_mcp_native::log::Level::Error,
            "MCP server 'broken' failed to start: Cannot resolve secret://vault/secret/echo#nope: field 'nope' not found in the secret"
        ),
        "{}",
        h.dump()
    );
    for (_, line) in &lines {
        assert_clean("a log line", line);
    }
}
