//! Table-driven tests for `validate_mcp_config`, `check_transports` and the
//! openclaw.json extraction.

use openclaw_mcp_native::config::{
    ConfigShape, ExtractOptions, McpConfig, ServerConfig, TransportKind, ValidatedConfig,
    check_transports, detect_config_shape, extract_mcp_config, load_config_file,
    validate_mcp_config,
};
use serde_json::{Value, json};

/// Any document's `McpConfig` value, its shape detected.
fn extract(root: &Value, agent: Option<&str>) -> Result<Value, String> {
    let options = ExtractOptions { agent, shape: None };
    extract_mcp_config(root, &options).map(|x| x.config)
}

/// The `McpConfig` value of an openclaw.json read as PR #21530's design
/// (`agents.defaults.mcp` + `agents.list[].mcp`), for the defaults or one agent.
fn from_openclaw(root: &Value, agent: Option<&str>) -> Result<Value, String> {
    let options = ExtractOptions {
        agent,
        shape: Some(ConfigShape::OpenClawAgents),
    };
    extract_mcp_config(root, &options).map(|x| x.config)
}

fn parse(s: &str) -> Value {
    serde_json::from_str(s).expect("test JSON")
}

fn ok(input: &Value) -> ValidatedConfig {
    match validate_mcp_config(input) {
        Ok(v) => v,
        Err(e) => panic!("expected success for {input}, got error: {e}"),
    }
}

fn only(v: &ValidatedConfig) -> &ServerConfig {
    assert_eq!(v.config.servers.len(), 1, "expected exactly one server");
    &v.config.servers[0]
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// The full default server object in `data`, after the given input keys.
fn default_tail() -> Vec<&'static str> {
    vec![
        "enabled",
        "lazy",
        "transport",
        "timeout",
        "toolTimeout",
        "restartOnCrash",
        "maxRestarts",
        "resources",
        "resourceFilter",
        "resourceRefreshMs",
    ]
}

type Check = fn(&ValidatedConfig);

#[test]
fn valid_configs() {
    let cases: Vec<(&str, Value, Check)> = vec![
        ("empty root", json!({}), |v| {
            assert!(v.config.servers.is_empty());
            assert_eq!(v.data, json!({}));
        }),
        ("empty servers", json!({"servers": {}}), |v| {
            assert!(v.config.servers.is_empty());
            assert_eq!(v.data, json!({"servers": {}}));
        }),
        (
            "minimal stdio, every default",
            json!({"servers": {"gh": {"command": "npx"}}}),
            |v| {
                let s = only(v);
                let mut expected = ServerConfig::with_defaults("gh");
                expected.command = Some("npx".into());
                assert_eq!(s, &expected);
                assert_eq!(s.name, "gh");
                assert!(s.enabled && !s.lazy && s.restart_on_crash && s.resources);
                assert_eq!(s.transport, TransportKind::Stdio);
                assert_eq!(s.transport_name, "stdio");
                assert_eq!(
                    (
                        s.timeout_ms,
                        s.tool_timeout_ms,
                        s.max_restarts,
                        s.resource_refresh_ms
                    ),
                    (30000, 60000, 5, 300000)
                );
                assert_eq!(s.tool_prefix, None);
                assert_eq!(s.effective_tool_prefix(), "gh");
                assert!(
                    s.args.is_empty()
                        && s.env.is_empty()
                        && s.headers.is_empty()
                        && s.resource_filter.is_empty()
                );
                assert_eq!(
                    v.data,
                    json!({"servers": {"gh": {
                        "command": "npx", "enabled": true, "lazy": false, "transport": "stdio",
                        "timeout": 30000, "toolTimeout": 60000, "restartOnCrash": true, "maxRestarts": 5,
                        "resources": true, "resourceFilter": [], "resourceRefreshMs": 300000
                    }}})
                );
                let mut order = vec!["command"];
                order.extend(default_tail());
                assert_eq!(
                    keys(&v.data["servers"]["gh"]),
                    order,
                    "defaults appended after input keys, in schema order"
                );
                assert!(
                    v.data["servers"]["gh"].get("toolPrefix").is_none(),
                    "toolPrefix is not a schema default"
                );
            },
        ),
        (
            "sse with url",
            json!({"servers": {"s": {"transport": "sse", "url": "http://127.0.0.1:1/sse"}}}),
            |v| {
                let s = only(v);
                assert_eq!(s.transport, TransportKind::Sse);
                assert_eq!(s.transport_name, "sse");
                assert_eq!(s.url.as_deref(), Some("http://127.0.0.1:1/sse"));
            },
        ),
        (
            "http with url",
            json!({"servers": {"h": {"transport": "http", "url": "http://x/mcp"}}}),
            |v| {
                let s = only(v);
                assert_eq!(s.transport, TransportKind::Http);
                assert_eq!(s.transport_name, "http");
            },
        ),
        (
            "streamable-http alias",
            json!({"servers": {"h": {"transport": "streamable-http", "url": "http://x/mcp"}}}),
            |v| {
                let s = only(v);
                assert_eq!(s.transport, TransportKind::Http);
                assert_eq!(s.transport_name, "streamable-http");
                assert_eq!(
                    v.data["servers"]["h"]["transport"], "streamable-http",
                    "spelling kept in data"
                );
            },
        ),
        (
            "explicit stdio",
            json!({"servers": {"a": {"transport": "stdio", "command": "x"}}}),
            |v| {
                assert_eq!(only(v).transport_name, "stdio");
                assert_eq!(keys(&v.data["servers"]["a"])[..2], ["transport", "command"]);
            },
        ),
        (
            "disabled stdio without command",
            json!({"servers": {"off": {"enabled": false}}}),
            |v| {
                let s = only(v);
                assert!(!s.enabled);
                assert_eq!(v.config.enabled_servers().count(), 0);
            },
        ),
        (
            "disabled http without url",
            json!({"servers": {"off": {"enabled": false, "transport": "http"}}}),
            |v| {
                assert_eq!(only(v).transport, TransportKind::Http);
            },
        ),
        (
            "explicit enabled true",
            json!({"servers": {"a": {"enabled": true, "command": "x"}}}),
            |v| {
                assert!(only(v).enabled);
            },
        ),
        (
            "every field set",
            json!({"servers": {"full": {
                "enabled": true, "lazy": true, "transport": "stdio", "command": "node", "args": ["a", "b"],
                "env": {"A": "1", "B": "secret://env/B"}, "cwd": "/tmp", "url": "http://ignored",
                "headers": {"X-One": "1"}, "timeout": 1000, "toolTimeout": 2000, "restartOnCrash": false,
                "maxRestarts": 9, "toolPrefix": "p", "resources": false, "resourceFilter": ["file:///a"],
                "resourceRefreshMs": 5000
            }}}),
            |v| {
                let s = only(v);
                assert!(s.lazy && !s.restart_on_crash && !s.resources);
                assert_eq!(s.args, ["a", "b"]);
                assert_eq!(
                    s.env,
                    [
                        ("A".to_string(), "1".to_string()),
                        ("B".to_string(), "secret://env/B".to_string())
                    ]
                );
                assert_eq!(s.cwd.as_deref(), Some("/tmp"));
                assert_eq!(s.headers, [("X-One".to_string(), "1".to_string())]);
                assert_eq!(
                    (
                        s.timeout_ms,
                        s.tool_timeout_ms,
                        s.max_restarts,
                        s.resource_refresh_ms
                    ),
                    (1000, 2000, 9, 5000)
                );
                assert_eq!(s.effective_tool_prefix(), "p");
                assert_eq!(s.resource_filter, ["file:///a"]);
                assert_eq!(
                    keys(&v.data["servers"]["full"]).len(),
                    17,
                    "nothing added: every field given"
                );
            },
        ),
        (
            "empty toolPrefix kept",
            json!({"servers": {"a": {"command": "x", "toolPrefix": ""}}}),
            |v| {
                assert_eq!(only(v).tool_prefix.as_deref(), Some(""));
                assert_eq!(only(v).effective_tool_prefix(), "");
            },
        ),
        (
            "maxRestarts 0",
            json!({"servers": {"a": {"command": "x", "maxRestarts": 0}}}),
            |v| {
                assert_eq!(only(v).max_restarts, 0);
            },
        ),
        (
            "maxRestarts 1000 (limit)",
            json!({"servers": {"a": {"command": "x", "maxRestarts": 1000}}}),
            |v| {
                assert_eq!(only(v).max_restarts, 1000);
            },
        ),
        (
            "maxRestarts 5.0 is an integer",
            parse(r#"{"servers":{"a":{"command":"x","maxRestarts":5.0}}}"#),
            |v| {
                assert_eq!(only(v).max_restarts, 5);
            },
        ),
        (
            "maxRestarts -0.0 is zero",
            parse(r#"{"servers":{"a":{"command":"x","maxRestarts":-0.0}}}"#),
            |v| {
                assert_eq!(only(v).max_restarts, 0);
            },
        ),
        (
            "timeout at 24 h limit",
            json!({"servers": {"a": {"command": "x", "timeout": 86_400_000}}}),
            |v| {
                assert_eq!(only(v).timeout_ms, 86_400_000);
            },
        ),
        (
            "fractional timeout rounds up",
            json!({"servers": {"a": {"command": "x", "timeout": 0.5, "toolTimeout": 1500.2}}}),
            |v| {
                assert_eq!((only(v).timeout_ms, only(v).tool_timeout_ms), (1, 1501));
                assert_eq!(
                    v.data["servers"]["a"]["timeout"],
                    json!(0.5),
                    "data keeps the input number"
                );
            },
        ),
        (
            "toolTimeout 1",
            json!({"servers": {"a": {"command": "x", "toolTimeout": 1}}}),
            |v| {
                assert_eq!(only(v).tool_timeout_ms, 1);
            },
        ),
        (
            "resourceRefreshMs set",
            json!({"servers": {"a": {"command": "x", "resourceRefreshMs": 1000}}}),
            |v| {
                assert_eq!(only(v).resource_refresh_ms, 1000);
                assert_eq!(v.data["servers"]["a"]["resourceRefreshMs"], 1000);
            },
        ),
        (
            "headers order kept",
            json!({"servers": {"h": {"transport": "http", "url": "u", "headers": {"Z": "1", "A": "2", "M": "3"}}}}),
            |v| {
                let names: Vec<&str> = only(v).headers.iter().map(|(k, _)| k.as_str()).collect();
                assert_eq!(names, ["Z", "A", "M"]);
            },
        ),
        (
            "empty args and env",
            json!({"servers": {"a": {"command": "x", "args": [], "env": {}}}}),
            |v| {
                assert!(only(v).args.is_empty() && only(v).env.is_empty());
            },
        ),
        (
            "servers in insertion order",
            parse(
                r#"{"servers":{"zeta":{"command":"z"},"alpha":{"command":"a"},"off":{"enabled":false},"mid":{"command":"m"}}}"#,
            ),
            |v| {
                let names: Vec<&str> = v.config.servers.iter().map(|s| s.name.as_str()).collect();
                assert_eq!(
                    names,
                    ["zeta", "alpha", "off", "mid"],
                    "insertion order, disabled included"
                );
                let enabled: Vec<&str> = v
                    .config
                    .enabled_servers()
                    .map(|s| s.name.as_str())
                    .collect();
                assert_eq!(enabled, ["zeta", "alpha", "mid"]);
                assert_eq!(keys(&v.data["servers"]), ["zeta", "alpha", "off", "mid"]);
                assert_eq!(
                    v.config.server("mid").and_then(|s| s.command.as_deref()),
                    Some("m")
                );
            },
        ),
        (
            "empty server name accepted",
            json!({"servers": {"": {"command": "x"}}}),
            |v| {
                assert_eq!(only(v).name, "");
                assert_eq!(only(v).effective_tool_prefix(), "");
            },
        ),
        (
            "dotted and unicode names",
            json!({"servers": {"a.b": {"command": "x"}, "ü-服务": {"command": "y"}}}),
            |v| {
                assert_eq!(v.config.servers[1].name, "ü-服务");
            },
        ),
        (
            "stdio with a url too",
            json!({"servers": {"a": {"command": "x", "url": "http://u"}}}),
            |v| {
                assert_eq!(only(v).url.as_deref(), Some("http://u"));
            },
        ),
        (
            "whitespace command is truthy",
            json!({"servers": {"a": {"command": " "}}}),
            |v| {
                assert_eq!(only(v).command.as_deref(), Some(" "));
            },
        ),
        (
            "unicode env keys and values",
            json!({"servers": {"a": {"command": "x", "env": {"ÄPFEL": "grün", "EMPTY": ""}}}}),
            |v| {
                assert_eq!(only(v).env[1], ("EMPTY".to_string(), String::new()));
            },
        ),
        (
            "large u64 within bounds",
            json!({"servers": {"a": {"command": "x", "resourceRefreshMs": 86_399_999u64}}}),
            |v| {
                assert_eq!(only(v).resource_refresh_ms, 86_399_999);
            },
        ),
        (
            "http disabled, stdio enabled",
            json!({"servers": {"h": {"enabled": false, "transport": "sse"}, "s": {"command": "x"}}}),
            |v| {
                assert_eq!(v.config.servers.len(), 2);
            },
        ),
    ];
    assert!(cases.len() >= 25, "{} valid cases", cases.len());
    for (name, input, check) in &cases {
        let v = match validate_mcp_config(input) {
            Ok(v) => v,
            Err(e) => panic!("case '{name}': unexpected error: {e}"),
        };
        check(&v);
        // `data` validates again to the same model (idempotent).
        let again = ok(&v.data);
        assert_eq!(
            again.config, v.config,
            "case '{name}': data re-validates to the same model"
        );
    }
}

#[test]
fn invalid_configs() {
    let s = |server: Value| json!({"servers": {"a": server}});
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "root null",
            json!(null),
            "(root): Expected object, received null",
        ),
        (
            "root array",
            json!([]),
            "(root): Expected object, received array",
        ),
        (
            "root string",
            json!("x"),
            "(root): Expected object, received string",
        ),
        (
            "root number",
            json!(1),
            "(root): Expected object, received number",
        ),
        (
            "root unknown key",
            json!({"foo": 1}),
            "(root): Unrecognized key 'foo'",
        ),
        (
            "servers array",
            json!({"servers": []}),
            "servers: Expected object, received array",
        ),
        (
            "servers null",
            json!({"servers": null}),
            "servers: Expected object, received null",
        ),
        (
            "server string",
            json!({"servers": {"a": "node"}}),
            "servers.a: Expected object, received string",
        ),
        (
            "server null",
            json!({"servers": {"a": null}}),
            "servers.a: Expected object, received null",
        ),
        (
            "unknown server key",
            s(json!({"command": "x", "foo": 1})),
            "servers.a: Unrecognized key 'foo'",
        ),
        (
            "PR-era name in wrong case",
            s(json!({"command": "x", "tooltimeout": 1})),
            "servers.a: Unrecognized key 'tooltimeout'",
        ),
        (
            "command number",
            s(json!({"command": 1})),
            "servers.a.command: Expected string, received number",
        ),
        (
            "enabled string",
            s(json!({"command": "x", "enabled": "false"})),
            "servers.a.enabled: Expected boolean, received string",
        ),
        (
            "lazy number",
            s(json!({"command": "x", "lazy": 1})),
            "servers.a.lazy: Expected boolean, received number",
        ),
        (
            "restartOnCrash null",
            s(json!({"command": "x", "restartOnCrash": null})),
            "servers.a.restartOnCrash: Expected boolean, received null",
        ),
        (
            "resources string",
            s(json!({"command": "x", "resources": "yes"})),
            "servers.a.resources: Expected boolean, received string",
        ),
        (
            "unknown transport",
            s(json!({"transport": "ws", "url": "u"})),
            "servers.a.transport: Invalid transport 'ws': expected 'stdio', 'sse', 'http' or 'streamable-http'",
        ),
        (
            "unknown envPolicy",
            s(json!({"command": "x", "envPolicy": "none"})),
            "servers.a.envPolicy: Invalid envPolicy 'none': expected 'inherit' or 'minimal'",
        ),
        (
            "envPassthrough not strings",
            s(json!({"command": "x", "envPassthrough": [1]})),
            "servers.a.envPassthrough.0: Expected string, received number",
        ),
        (
            "transport case matters",
            s(json!({"transport": "HTTP", "url": "u"})),
            "servers.a.transport: Invalid transport 'HTTP': expected 'stdio', 'sse', 'http' or 'streamable-http'",
        ),
        (
            "transport null",
            s(json!({"transport": null})),
            "servers.a.transport: Expected string, received null",
        ),
        (
            "args string",
            s(json!({"command": "x", "args": "-y"})),
            "servers.a.args: Expected array, received string",
        ),
        (
            "args element",
            s(json!({"command": "x", "args": ["a", 2, "c", true]})),
            "servers.a.args.1: Expected string, received number; servers.a.args.3: Expected string, received boolean",
        ),
        (
            "env array",
            s(json!({"command": "x", "env": ["A=1"]})),
            "servers.a.env: Expected object, received array",
        ),
        (
            "env value number",
            s(json!({"command": "x", "env": {"PORT": 8080}})),
            "servers.a.env.PORT: Expected string, received number",
        ),
        (
            "headers value null",
            s(json!({"transport": "http", "url": "u", "headers": {"Authorization": null}})),
            "servers.a.headers.Authorization: Expected string, received null",
        ),
        (
            "cwd bool",
            s(json!({"command": "x", "cwd": false})),
            "servers.a.cwd: Expected string, received boolean",
        ),
        (
            "url number",
            s(json!({"transport": "sse", "url": 1})),
            "servers.a.url: Expected string, received number",
        ),
        (
            "toolPrefix null",
            s(json!({"command": "x", "toolPrefix": null})),
            "servers.a.toolPrefix: Expected string, received null",
        ),
        (
            "timeout zero",
            s(json!({"command": "x", "timeout": 0})),
            "servers.a.timeout: Must be a positive number",
        ),
        (
            "timeout negative",
            s(json!({"command": "x", "timeout": -5})),
            "servers.a.timeout: Must be a positive number",
        ),
        (
            "timeout -0.0",
            parse(r#"{"servers":{"a":{"command":"x","timeout":-0.0}}}"#),
            "servers.a.timeout: Must be a positive number",
        ),
        (
            "timeout string",
            s(json!({"command": "x", "timeout": "30000"})),
            "servers.a.timeout: Expected number, received string",
        ),
        (
            "timeout above 24 h",
            s(json!({"command": "x", "timeout": 86_400_001})),
            "servers.a.timeout: Must be at most 86400000 (24 h), received 86400001",
        ),
        (
            "toolTimeout 1e300",
            parse(r#"{"servers":{"a":{"command":"x","toolTimeout":1e300}}}"#),
            "servers.a.toolTimeout: Must be at most 86400000 (24 h), received 1e+300",
        ),
        (
            "toolTimeout u64::MAX",
            parse(r#"{"servers":{"a":{"command":"x","toolTimeout":18446744073709551615}}}"#),
            "servers.a.toolTimeout: Must be at most 86400000 (24 h), received 18446744073709551615",
        ),
        (
            "resourceRefreshMs zero",
            s(json!({"command": "x", "resourceRefreshMs": 0})),
            "servers.a.resourceRefreshMs: Must be a positive number",
        ),
        (
            "maxRestarts negative",
            s(json!({"command": "x", "maxRestarts": -1})),
            "servers.a.maxRestarts: Must be a non-negative integer",
        ),
        (
            "maxRestarts fraction",
            s(json!({"command": "x", "maxRestarts": 1.5})),
            "servers.a.maxRestarts: Must be a non-negative integer",
        ),
        (
            "maxRestarts above limit",
            s(json!({"command": "x", "maxRestarts": 1001})),
            "servers.a.maxRestarts: Must be at most 1000, received 1001",
        ),
        (
            "maxRestarts string",
            s(json!({"command": "x", "maxRestarts": "5"})),
            "servers.a.maxRestarts: Expected number, received string",
        ),
        (
            "maxRestarts huge negative",
            parse(r#"{"servers":{"a":{"command":"x","maxRestarts":-1e308}}}"#),
            "servers.a.maxRestarts: Must be a non-negative integer",
        ),
        (
            "resourceFilter element",
            s(json!({"command": "x", "resourceFilter": [1]})),
            "servers.a.resourceFilter.0: Expected string, received number",
        ),
        (
            "resourceFilter object",
            s(json!({"command": "x", "resourceFilter": {}})),
            "servers.a.resourceFilter: Expected array, received object",
        ),
        (
            "stdio without command",
            s(json!({})),
            "servers.a: stdio transport requires 'command'",
        ),
        (
            "stdio with empty command",
            s(json!({"command": ""})),
            "servers.a: stdio transport requires 'command'",
        ),
        (
            "sse without url",
            json!({"servers": {"b": {"transport": "sse"}}}),
            "servers.b: sse transport requires 'url'",
        ),
        (
            "http with empty url",
            json!({"servers": {"b": {"transport": "http", "url": ""}}}),
            "servers.b: http transport requires 'url'",
        ),
        (
            "streamable-http without url",
            json!({"servers": {"b": {"transport": "streamable-http"}}}),
            "servers.b: streamable-http transport requires 'url'",
        ),
        (
            "only the first transport problem",
            parse(
                r#"{"servers":{"ok":{"command":"x"},"off":{"enabled":false},"b1":{"transport":"sse"},"b2":{}}}"#,
            ),
            "servers.b1: sse transport requires 'url'",
        ),
        (
            "schema issues suppress transport check",
            parse(r#"{"servers":{"nocmd":{},"bad":{"command":"x","timeout":0}}}"#),
            "servers.bad.timeout: Must be a positive number",
        ),
        (
            "all issues, input order",
            parse(
                r#"{"extra":true,"servers":{"a":{"foo":1,"timeout":"1","enabled":0},"b":[],"c":{"maxRestarts":-2,"bar":null}}}"#,
            ),
            "(root): Unrecognized key 'extra'; servers.a: Unrecognized key 'foo'; servers.a.timeout: Expected number, received string; servers.a.enabled: Expected boolean, received number; servers.b: Expected object, received array; servers.c.maxRestarts: Must be a non-negative integer; servers.c: Unrecognized key 'bar'",
        ),
        (
            "empty name: path has an empty segment",
            json!({"servers": {"": {"timeout": 0, "command": "x"}}}),
            "servers..timeout: Must be a positive number",
        ),
        (
            "empty name: transport check",
            json!({"servers": {"": {}}}),
            "servers.: stdio transport requires 'command'",
        ),
        (
            "dotted name",
            json!({"servers": {"a.b": {"command": 1}}}),
            "servers.a.b.command: Expected string, received number",
        ),
    ];
    assert!(cases.len() >= 25, "{} invalid cases", cases.len());
    for (name, input, expected) in &cases {
        match validate_mcp_config(input) {
            Ok(v) => panic!(
                "case '{name}': expected error '{expected}', got success {:?}",
                v.config
            ),
            Err(e) => assert_eq!(&e, expected, "case '{name}'"),
        }
    }
}

#[test]
fn long_keys_and_values_are_shortened_in_messages() {
    let long_key = "k".repeat(500);
    let long_transport = "t".repeat(500);
    let input = json!({"servers": {"a": {"command": "x", long_key.clone(): 1, "transport": long_transport}}});
    let e = validate_mcp_config(&input).unwrap_err();
    let short_key = format!("{}…", "k".repeat(80));
    let short_t = format!("{}…", "t".repeat(80));
    assert_eq!(
        e,
        format!(
            "servers.a: Unrecognized key '{short_key}'; servers.a.transport: Invalid transport '{short_t}': expected 'stdio', 'sse', 'http' or 'streamable-http'"
        )
    );
    let e =
        check_transports(&json!({"servers": {"a": {"transport": "é".repeat(100)}}})).unwrap_err();
    assert_eq!(
        e,
        format!("Unknown transport '{}…' for server 'a'", "é".repeat(80))
    );
}

#[test]
fn debug_output_masks_plaintext_env_and_headers() {
    let v = ok(
        &json!({"servers": {"a": {"command": "x", "env": {"GITHUB_TOKEN": "ghp_plaintextvalue", "REF": "secret://env/X"}, "headers": {"Authorization": "Bearer abcdefgh"}}}}),
    );
    let dbg = format!("{v:?} {:?}", v.config);
    assert!(!dbg.contains("ghp_plaintextvalue"), "{dbg}");
    assert!(!dbg.contains("abcdefgh"), "{dbg}");
    assert!(
        dbg.contains("GITHUB_TOKEN") && dbg.contains("secret://env/X"),
        "{dbg}"
    );
}

#[test]
fn check_transports_cases() {
    let cases: Vec<(Value, Result<(), &str>)> = vec![
        (
            json!({"servers": {"a": {"transport": "ws"}}}),
            Err("Unknown transport 'ws' for server 'a'"),
        ),
        (
            json!({"servers": {"a": {"transport": "stdio"}, "b": {"transport": "grpc"}, "c": {"transport": "ws"}}}),
            Err("Unknown transport 'grpc' for server 'b'"),
        ),
        (
            json!({"servers": {"a": {"transport": 5}}}),
            Err("Unknown transport '5' for server 'a'"),
        ),
        (
            json!({"servers": {"a": {"transport": null}}}),
            Err("Unknown transport 'null' for server 'a'"),
        ),
        (
            json!({"servers": {"a": {"transport": ""}}}),
            Err("Unknown transport '' for server 'a'"),
        ),
        (
            json!({"servers": {"off": {"enabled": false, "transport": "ws"}, "b": {"transport": "x"}}}),
            Err("Unknown transport 'x' for server 'b'"),
        ),
        (
            json!({"servers": {"off": {"enabled": false, "transport": "ws"}}}),
            Ok(()),
        ),
        (
            json!({"servers": {"a": {"transport": "stdio"}, "b": {"transport": "sse"}, "c": {"transport": "http"}, "d": {"transport": "streamable-http"}, "e": {}}}),
            Ok(()),
        ),
        // Everything else is left to validate_mcp_config.
        (
            json!({"servers": {"a": {"command": 1, "bogus": true}}}),
            Ok(()),
        ),
        (json!({"servers": []}), Ok(())),
        (json!({"servers": {"a": "str"}}), Ok(())),
        (json!(null), Ok(())),
        (json!([1, 2]), Ok(())),
        (json!({}), Ok(())),
    ];
    for (input, expected) in cases {
        assert_eq!(
            check_transports(&input),
            expected.map_err(str::to_owned),
            "input {input}"
        );
    }
}

fn openclaw_doc() -> Value {
    parse(
        r#"{
        "agents": {
            "defaults": {"model": "x", "mcp": {"servers": {
                "github": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "secret://env/GH"}, "toolTimeout": 1000},
                "files": {"command": "fs-mcp"},
                "search": {"transport": "http", "url": "http://127.0.0.1:1/mcp"}
            }}},
            "list": [
                {"id": "main"},
                {"id": "work", "mcp": {"servers": {
                    "jira": {"transport": "sse", "url": "http://127.0.0.1:2/sse"},
                    "files": {"command": "other-fs", "args": ["--ro"]},
                    "github": {"enabled": false}
                }}},
                {"id": "solo", "mcp": {}},
                {"name": "no id"},
                "garbage"
            ]
        }
    }"#,
    )
}

#[test]
fn openclaw_defaults_only() {
    let doc = openclaw_doc();
    let m = from_openclaw(&doc, None).unwrap();
    assert_eq!(keys(&m["servers"]), ["github", "files", "search"]);
    assert_eq!(m, doc["agents"]["defaults"]["mcp"]);
    // An agent without `mcp` or with an empty one gets the defaults.
    assert_eq!(from_openclaw(&doc, Some("main")).unwrap(), m);
    assert_eq!(from_openclaw(&doc, Some("solo")).unwrap(), m);
}

#[test]
fn openclaw_agent_merge_is_wholesale_and_ordered() {
    let doc = openclaw_doc();
    let m = from_openclaw(&doc, Some("work")).unwrap();
    assert_eq!(
        keys(&m["servers"]),
        ["github", "files", "search", "jira"],
        "defaults' keys first, then new agent keys"
    );
    // Replaced wholesale: nothing of the default entry survives.
    assert_eq!(m["servers"]["github"], json!({"enabled": false}));
    assert_eq!(
        m["servers"]["files"],
        json!({"command": "other-fs", "args": ["--ro"]})
    );
    assert_eq!(
        m["servers"]["search"],
        doc["agents"]["defaults"]["mcp"]["servers"]["search"]
    );
    let v = ok(&m);
    let names: Vec<&str> = v.config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["github", "files", "search", "jira"]);
    let gh = v.config.server("github").unwrap();
    assert!(
        !gh.enabled && gh.env.is_empty() && gh.command.is_none() && gh.tool_timeout_ms == 60000
    );
}

#[test]
fn openclaw_agent_without_defaults() {
    let doc =
        json!({"agents": {"list": [{"id": "a", "mcp": {"servers": {"x": {"command": "c"}}}}]}});
    assert_eq!(
        from_openclaw(&doc, Some("a")).unwrap(),
        json!({"servers": {"x": {"command": "c"}}})
    );
    assert_eq!(from_openclaw(&doc, None).unwrap(), json!({}));
    // Extra keys in `mcp` objects are carried through for the validator to reject.
    let doc = json!({"agents": {"defaults": {"mcp": {"servers": {}, "oops": 1}}, "list": [{"id": "a", "mcp": {"more": 2}}]}});
    let m = from_openclaw(&doc, Some("a")).unwrap();
    assert_eq!(
        validate_mcp_config(&m).unwrap_err(),
        "(root): Unrecognized key 'oops'; (root): Unrecognized key 'more'"
    );
}

#[test]
fn openclaw_errors() {
    let doc = openclaw_doc();
    let cases: Vec<(Value, Option<&str>, &str)> = vec![
        (
            doc.clone(),
            Some("zed"),
            "Unknown agent 'zed': known agents are 'main', 'work', 'solo'",
        ),
        (
            json!({"agents": {}}),
            Some("x"),
            "Unknown agent 'x': no agents are defined in agents.list",
        ),
        (
            json!({"agents": {"list": []}}),
            Some("x"),
            "Unknown agent 'x': no agents are defined in agents.list",
        ),
        (
            json!({"agents": {"list": {}}}),
            Some("x"),
            "agents.list: Expected array, received object",
        ),
        (
            json!({"agents": []}),
            None,
            "agents: Expected object, received array",
        ),
        (
            json!({"agents": {"defaults": 1}}),
            None,
            "agents.defaults: Expected object, received number",
        ),
        (
            json!({"agents": {"defaults": {"mcp": []}}}),
            None,
            "agents.defaults.mcp: Expected object, received array",
        ),
        (
            json!({"agents": {"defaults": {"mcp": {"servers": []}}, "list": [{"id": "a"}]}}),
            Some("a"),
            "agents.defaults.mcp.servers: Expected object, received array",
        ),
        (
            json!({"agents": {"list": [{"id": "b"}, {"id": "a", "mcp": "x"}]}}),
            Some("a"),
            "agents.list.1.mcp: Expected object, received string",
        ),
        (
            json!({"agents": {"list": [{"id": "a", "mcp": {"servers": null}}]}}),
            Some("a"),
            "agents.list.0.mcp.servers: Expected object, received null",
        ),
        (json!([]), None, "(root): Expected object, received array"),
    ];
    for (input, agent, expected) in cases {
        assert_eq!(
            from_openclaw(&input, agent).unwrap_err(),
            expected,
            "input {input}"
        );
    }
    // Without an agent, a bad `servers` is left for the validator (which names it).
    let m = from_openclaw(
        &json!({"agents": {"defaults": {"mcp": {"servers": []}}}}),
        None,
    )
    .unwrap();
    assert_eq!(
        validate_mcp_config(&m).unwrap_err(),
        "servers: Expected object, received array"
    );
}

#[test]
fn detect_and_extract_shapes() {
    let plain = json!({"servers": {"a": {"command": "x"}}});
    assert_eq!(detect_config_shape(&plain), Ok(ConfigShape::McpConfig));
    assert_eq!(extract(&plain, None).unwrap(), plain);
    assert_eq!(extract(&plain, Some("ignored")).unwrap(), plain);
    assert_eq!(extract(&json!({}), None).unwrap(), json!({}));
    assert_eq!(
        detect_config_shape(&openclaw_doc()),
        Ok(ConfigShape::OpenClawAgents)
    );
    assert_eq!(
        extract(&openclaw_doc(), Some("work")).unwrap(),
        from_openclaw(&openclaw_doc(), Some("work")).unwrap()
    );
    let errors: Vec<(Value, &str)> = vec![
        (
            json!(null),
            "Expected a JSON object or array (an MCP config, openclaw.json, mcpServers file or ACP mcpServers list), received null",
        ),
        (
            json!({"servers": {}, "agents": {}}),
            "Ambiguous config: found both 'servers' (MCP config) and 'agents' (openclaw.json) at the top level",
        ),
        (
            json!({"foo": 1, "bar": 2}),
            "Unrecognized config shape: expected 'servers' (MCP config, VS Code), 'mcpServers' (Claude Desktop, Cursor, ACP), 'mcp' (current OpenClaw) or 'agents' (openclaw.json); found top-level keys 'foo', 'bar'",
        ),
    ];
    for (input, expected) in errors {
        assert_eq!(extract(&input, None).unwrap_err(), expected);
    }
    // An empty array is an empty ACP mcpServers list.
    assert_eq!(extract(&json!([]), None).unwrap(), json!({"servers": {}}));
}

#[test]
fn load_file_end_to_end() {
    let dir = std::env::temp_dir().join(format!("confsec-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("openclaw.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&openclaw_doc()).unwrap(),
    )
    .unwrap();
    let work = ExtractOptions {
        agent: Some("work"),
        shape: None,
    };
    let m = load_config_file(&path, &work).unwrap().config;
    let v = ok(&m);
    assert_eq!(v.config.servers.len(), 4);
    assert_eq!(
        v.config.server("jira").unwrap().transport,
        TransportKind::Sse
    );

    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{ // comment\n}").unwrap();
    let e = load_config_file(&bad, &ExtractOptions::default()).unwrap_err();
    assert!(
        e.starts_with(&format!("Invalid JSON in {}: ", bad.display())),
        "{e}"
    );
    let missing = dir.join("missing.json");
    let e = load_config_file(&missing, &ExtractOptions::default()).unwrap_err();
    assert!(
        e.starts_with(&format!("Cannot read {}: ", missing.display())),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A small deterministic generator of odd JSON shapes.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }

    fn value(&mut self, depth: u32) -> Value {
        const KEYS: &[&str] = &[
            "servers",
            "agents",
            "defaults",
            "list",
            "mcp",
            "id",
            "enabled",
            "lazy",
            "transport",
            "command",
            "args",
            "env",
            "cwd",
            "url",
            "headers",
            "timeout",
            "toolTimeout",
            "restartOnCrash",
            "maxRestarts",
            "toolPrefix",
            "resources",
            "resourceFilter",
            "resourceRefreshMs",
            "",
            "é",
            "a.b",
            "__proto__",
        ];
        const STRINGS: &[&str] = &[
            "stdio",
            "sse",
            "http",
            "streamable-http",
            "ws",
            "",
            "main",
            "secret://env/X",
            "\u{0}",
            "ü",
        ];
        let kind = if depth == 0 {
            self.next() % 5
        } else {
            self.next() % 7
        };
        match kind {
            0 => Value::Null,
            1 => Value::Bool(self.next().is_multiple_of(2)),
            2 => {
                let nums = [
                    "0",
                    "-0.0",
                    "1",
                    "-1",
                    "1.5",
                    "1e308",
                    "-1e308",
                    "18446744073709551615",
                    "-9223372036854775808",
                    "86400000",
                    "86400001",
                    "1000",
                    "1001",
                    "5e-324",
                ];
                serde_json::from_str(nums[(self.next() % nums.len() as u64) as usize]).unwrap()
            }
            3 | 4 => Value::String(self.pick(STRINGS).to_owned()),
            5 => Value::Array(
                (0..self.next() % 4)
                    .map(|_| self.value(depth - 1))
                    .collect(),
            ),
            _ => {
                let mut m = serde_json::Map::new();
                for _ in 0..self.next() % 6 {
                    let k = self.pick(KEYS).to_owned();
                    m.insert(k, self.value(depth - 1));
                }
                Value::Object(m)
            }
        }
    }
}

fn exercise(v: &Value) {
    let validated = validate_mcp_config(v);
    if let Ok(ok) = &validated {
        // Success must be consistent with the model invariants.
        assert!(ok.data.is_object());
        assert_eq!(
            validate_mcp_config(&ok.data).map(|x| x.config),
            Ok(ok.config.clone())
        );
    } else if let Err(e) = &validated {
        assert!(!e.is_empty());
    }
    let _ = check_transports(v);
    let _ = detect_config_shape(v);
    for agent in [None, Some("main"), Some("")] {
        let _ = extract(v, agent);
        if let Ok(m) = from_openclaw(v, agent) {
            let _ = validate_mcp_config(&m);
        }
    }
}

#[test]
fn never_panics_on_odd_shapes() {
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let mut successes = 0;
    for _ in 0..20_000 {
        let v = g.value(5);
        exercise(&v);
        // Also with the random value placed where a server or a field goes.
        let wrapped = json!({"servers": {"a": v.clone(), "b": {"command": "x", "env": v.clone()}}});
        exercise(&wrapped);
        let oc =
            json!({"agents": {"defaults": {"mcp": v.clone()}, "list": [{"id": "main", "mcp": v}]}});
        exercise(&oc);
        if validate_mcp_config(&wrapped).is_ok() {
            successes += 1;
        }
    }
    assert!(
        successes > 0,
        "the generator should produce some valid configs too"
    );
}

/// Built by hand (serde_json's parser stops at depth 128), 100 000 levels: any
/// recursion over it would overflow the stack. The test code itself never
/// clones it; it is dropped on a thread with a huge stack (serde_json's drop
/// is recursive).
fn deep_value(levels: usize, leaf: Value) -> Value {
    let mut deep = leaf;
    for i in 0..levels {
        // Not `json!`: it would deep-copy `deep` through serde on every step.
        deep = if i % 2 == 0 {
            Value::Array(vec![deep])
        } else {
            let mut m = serde_json::Map::new();
            m.insert("servers".into(), deep);
            Value::Object(m)
        };
    }
    deep
}

fn drop_on_big_stack(v: Vec<Value>) {
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(move || drop(v))
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn never_panics_on_deep_nesting() {
    let deep = deep_value(100_000, json!(1));
    exercise(&deep);
    assert_eq!(
        validate_mcp_config(&deep).unwrap_err(),
        "servers: Expected object, received array"
    );

    let mut env = serde_json::Map::new();
    env.insert("A".into(), deep_value(100_000, json!(1)));
    let mut server = serde_json::Map::new();
    server.insert("command".into(), json!("x"));
    server.insert("env".into(), Value::Object(env));
    server.insert(
        "args".into(),
        Value::Array(vec![deep_value(100_000, json!(1))]),
    );
    server.insert("transport".into(), deep_value(100_000, json!(1)));
    let mut servers = serde_json::Map::new();
    servers.insert("a".into(), Value::Object(server));
    let mut root = serde_json::Map::new();
    root.insert("servers".into(), Value::Object(servers));
    let placed = Value::Object(root);
    assert_eq!(
        validate_mcp_config(&placed).unwrap_err(),
        "servers.a.env.A: Expected string, received object; servers.a.args.0: Expected string, received object; servers.a.transport: Expected string, received object"
    );
    assert_eq!(
        check_transports(&placed).unwrap_err(),
        "Unknown transport '[object Object]' for server 'a'"
    );
    assert_eq!(
        extract(&placed, None).unwrap_err(),
        "(root): Nested too deeply (more than 32 levels)"
    );
    exercise(&placed);

    // The same deep value inside an openclaw.json.
    let mut mcp = serde_json::Map::new();
    mcp.insert("servers".into(), json!({"a": {"command": "x"}}));
    mcp.insert("junk".into(), deep_value(100_000, json!(null)));
    let mut defaults = serde_json::Map::new();
    defaults.insert("mcp".into(), Value::Object(mcp));
    let mut agents = serde_json::Map::new();
    agents.insert("defaults".into(), Value::Object(defaults));
    let mut oc = serde_json::Map::new();
    oc.insert("agents".into(), Value::Object(agents));
    let oc = Value::Object(oc);
    assert_eq!(
        from_openclaw(&oc, None).unwrap_err(),
        "agents.defaults.mcp.junk: Nested too deeply (more than 32 levels)"
    );
    exercise(&oc);

    // Depth within the limit is copied fine; near the parser limit, from text.
    let mut a = serde_json::Map::new();
    a.insert("env".into(), deep_value(20, json!(1)));
    let mut servers = serde_json::Map::new();
    servers.insert("a".into(), Value::Object(a));
    let mut ok_deep = serde_json::Map::new();
    ok_deep.insert("servers".into(), Value::Object(servers));
    let ok_deep = Value::Object(ok_deep);
    assert!(extract(&ok_deep, None).is_ok());
    let text = format!("{}{}", "[".repeat(120), "]".repeat(120));
    exercise(&parse(&text));

    drop_on_big_stack(vec![deep, placed, oc]);
}

#[test]
fn model_helpers() {
    assert_eq!(
        TransportKind::parse("streamable-http"),
        Some(TransportKind::Http)
    );
    assert_eq!(TransportKind::parse("Stdio"), None);
    assert_eq!(TransportKind::Sse.to_string(), "sse");
    assert_eq!(McpConfig::default().enabled_servers().count(), 0);
}

/// `auth`: OAuth for remote servers, its shapes and the errors that name what is wrong.
#[test]
fn oauth_auth_settings() {
    use openclaw_mcp_native::config::OAuthGrant;
    let server = |auth: Value| json!({"servers": {"r": {"transport": "http", "url": "https://h/mcp", "auth": auth}}});

    let v = ok(&server(json!("oauth")));
    let auth = only(&v).auth.clone().expect("auth");
    assert_eq!(auth.grant, OAuthGrant::AuthorizationCode);
    assert_eq!(auth.redirect_uri(), "http://127.0.0.1:8976/callback");

    let v = ok(&server(json!({
        "type": "oauth", "clientId": "app", "clientSecret": {"source": "env", "provider": "default", "id": "APP_SECRET"},
        "scopes": ["read", "write"], "redirectUri": "http://127.0.0.1:9000/cb", "grant": "client_credentials"
    })));
    let auth = only(&v).auth.clone().expect("auth");
    assert_eq!(auth.client_id.as_deref(), Some("app"));
    assert!(
        auth.client_secret
            .as_deref()
            .unwrap()
            .starts_with("secret://")
    );
    assert_eq!(auth.scopes, ["read", "write"]);
    assert_eq!(auth.grant, OAuthGrant::ClientCredentials);
    // The secret never shows in Debug output, only a reference would.
    let v = ok(&server(
        json!({"type": "oauth", "clientId": "a", "clientSecret": "plain-s3cret"}),
    ));
    assert!(!format!("{:?}", only(&v)).contains("plain-s3cret"));

    let bad = |auth: Value, want: &str| {
        let e = validate_mcp_config(&server(auth)).unwrap_err();
        assert!(e.contains(want), "{e} lacks {want}");
    };
    bad(
        json!("basic"),
        "servers.r.auth: Invalid auth 'basic': expected 'oauth'",
    );
    bad(json!({"clientId": "a"}), "servers.r.auth: Missing 'type'");
    bad(
        json!({"type": "oauth", "grant": "password"}),
        "servers.r.auth.grant: Invalid grant 'password'",
    );
    bad(
        json!({"type": "oauth", "clientSecret": "s"}),
        "'clientSecret' needs 'clientId'",
    );
    bad(
        json!({"type": "oauth", "grant": "client_credentials", "clientId": "a"}),
        "needs 'clientId' and 'clientSecret' or 'privateKeyFile'",
    );
    bad(
        json!({"type": "oauth", "redirectUri": "myapp:/cb"}),
        "servers.r.auth.redirectUri: Must be an http:// or https:// URL",
    );
    bad(
        json!({"type": "oauth", "clientMetadataUrl": "http://h/c.json"}),
        "Must be an https:// URL",
    );
    bad(
        json!({"type": "oauth", "scope": "x"}),
        "servers.r.auth: Unrecognized key 'scope'",
    );
    bad(json!(7), "servers.r.auth: Expected object, received number");

    bad(
        json!({"type": "oauth", "grant": "jwt_bearer"}),
        "grant 'jwt_bearer' needs 'assertionFile'",
    );
    bad(
        json!({"type": "oauth", "grant": "enterprise", "clientId": "a"}),
        "grant 'enterprise' needs 'clientId' and 'idp'",
    );
    bad(
        json!({"type": "oauth", "idp": {"issuer": "https://i"}}),
        "servers.r.auth.idp: Missing 'tokenEndpoint'",
    );

    let v = ok(&server(
        json!({"type": "oauth", "grant": "jwt_bearer", "assertionFile": "/run/token"}),
    ));
    assert_eq!(only(&v).auth.as_ref().unwrap().grant, OAuthGrant::JwtBearer);
    let v = ok(&server(
        json!({"type": "oauth", "grant": "enterprise", "clientId": "gw",
        "idp": {"issuer": "https://idp", "tokenEndpoint": "https://idp/token", "clientId": "c", "idToken": "an-id-token"}}),
    ));
    let auth = only(&v).auth.clone().unwrap();
    assert_eq!(auth.grant, OAuthGrant::Enterprise);
    assert_eq!(
        auth.idp.as_ref().unwrap().token_endpoint,
        "https://idp/token"
    );
    assert!(!format!("{:?}", only(&v)).contains("an-id-token"));

    let e = validate_mcp_config(&json!({"servers": {"s": {"command": "c", "auth": "oauth"}}}))
        .unwrap_err();
    assert!(
        e.contains("servers.s.auth: OAuth applies to remote servers"),
        "{e}"
    );
}
