//! Every config shape turned into our `McpConfig`: table-driven valid and
//! invalid documents with the exact resulting config or error, plus warnings,
//! recorded fields, per-agent configs, detection and robustness.

use openclaw_mcp_native::config::{
    ConfigShape, ExtractOptions, ToolFilter, detect_config_shape, extract_mcp_config,
    load_config_file, manager_configs_for_openclaw, validate_mcp_config,
};
use serde_json::{Value, json};

/// Extracts with an optional shape name, then validates (as `loadMcpConfig`
/// does), returning the extracted `McpConfig` value.
fn load(shape: Option<&str>, input: &Value) -> Result<Value, String> {
    let options = ExtractOptions {
        agent: None,
        shape: shape.map(|s| ConfigShape::parse(s).unwrap()),
    };
    let extracted = extract_mcp_config(input, &options)?;
    validate_mcp_config(&extracted.config)?;
    Ok(extracted.config)
}

fn load_agent(agent: &str, input: &Value) -> Result<Value, String> {
    let options = ExtractOptions {
        agent: Some(agent),
        shape: None,
    };
    let extracted = extract_mcp_config(input, &options)?;
    validate_mcp_config(&extracted.config)?;
    Ok(extracted.config)
}

fn openclaw_doc() -> Value {
    json!({
        "agents": {
            "defaults": {"model": "x", "mcp": {"servers": {
                "github": {"command": "gh-mcp"},
                "files": {"command": "fs-mcp"}
            }}},
            "list": [
                {"id": "main"},
                {"id": "work", "mcp": {"servers": {
                    "files": {"command": "other-fs", "toolFilter": {"exclude": ["write_*"]}},
                    "jira": {"transport": "sse", "url": "http://127.0.0.1:2/sse"}
                }}}
            ]
        }
    })
}

#[test]
fn valid_documents() {
    // (label, shape option, input, expected McpConfig value)
    let cases: Vec<(&str, Option<&str>, Value, Value)> = vec![
        // ---- our own McpConfig ----
        ("mcp: empty root", None, json!({}), json!({})),
        (
            "mcp: empty servers",
            None,
            json!({"servers": {}}),
            json!({"servers": {}}),
        ),
        (
            "mcp: minimal stdio",
            None,
            json!({"servers": {"gh": {"command": "npx", "args": ["-y", "gh"]}}}),
            json!({"servers": {"gh": {"command": "npx", "args": ["-y", "gh"]}}}),
        ),
        (
            "mcp: toolFilter",
            None,
            json!({"servers": {"gh": {"command": "x", "toolFilter": {"include": ["read_*"], "exclude": ["read_secret"]}}}}),
            json!({"servers": {"gh": {"command": "x", "toolFilter": {"include": ["read_*"], "exclude": ["read_secret"]}}}}),
        ),
        (
            "mcp: empty toolFilter",
            None,
            json!({"servers": {"gh": {"command": "x", "toolFilter": {}}}}),
            json!({"servers": {"gh": {"command": "x", "toolFilter": {}}}}),
        ),
        (
            "mcp: http with headers",
            None,
            json!({"servers": {"docs": {"transport": "http", "url": "https://h/mcp", "headers": {"Authorization": "secret://env/T"}}}}),
            json!({"servers": {"docs": {"transport": "http", "url": "https://h/mcp", "headers": {"Authorization": "secret://env/T"}}}}),
        ),
        (
            "mcp: streamable-http spelling",
            None,
            json!({"servers": {"docs": {"transport": "streamable-http", "url": "https://h/mcp"}}}),
            json!({"servers": {"docs": {"transport": "streamable-http", "url": "https://h/mcp"}}}),
        ),
        (
            "mcp: disabled entry needs nothing",
            None,
            json!({"servers": {"off": {"enabled": false}}}),
            json!({"servers": {"off": {"enabled": false}}}),
        ),
        (
            "mcp: forced shape",
            Some("mcp"),
            json!({"servers": {"a": {"command": "x"}}}),
            json!({"servers": {"a": {"command": "x"}}}),
        ),
        // ---- openclaw.json, design placement ----
        (
            "openclaw: defaults only",
            None,
            openclaw_doc(),
            json!({"servers": {"github": {"command": "gh-mcp"}, "files": {"command": "fs-mcp"}}}),
        ),
        (
            "openclaw: agents without mcp",
            None,
            json!({"agents": {"defaults": {"model": "m"}, "list": [{"id": "a"}]}}),
            json!({}),
        ),
        (
            "openclaw: forced on an empty root",
            Some("openclaw"),
            json!({}),
            json!({}),
        ),
        (
            "openclaw: list-only mcp detected",
            None,
            json!({"agents": {"list": [{"id": "a", "mcp": {"servers": {"x": {"command": "c"}}}}]}}),
            json!({}),
        ),
        // ---- current OpenClaw: top-level mcp ----
        (
            "openclaw-mcp: stdio",
            None,
            json!({"mcp": {"servers": {"fs": {"command": "npx", "args": ["-y", "server-fs", "/tmp"]}}}}),
            json!({"servers": {"fs": {"command": "npx", "args": ["-y", "server-fs", "/tmp"]}}}),
        ),
        (
            "openclaw-mcp: url only is SSE",
            None,
            json!({"mcp": {"servers": {"r": {"url": "https://h/sse"}}}}),
            json!({"servers": {"r": {"url": "https://h/sse", "transport": "sse"}}}),
        ),
        (
            "openclaw-mcp: the documented example",
            None,
            json!({"mcp": {"servers": {"docs": {
                "url": "https://mcp.example.com/mcp", "transport": "streamable-http", "enabled": true,
                "connectionTimeoutMs": 5000, "requestTimeoutMs": 20000,
                "toolFilter": {"include": ["search", "read_*"]}
            }}}}),
            json!({"servers": {"docs": {
                "url": "https://mcp.example.com/mcp", "transport": "streamable-http", "enabled": true,
                "timeout": 5000, "toolTimeout": 20000, "toolFilter": {"include": ["search", "read_*"]}
            }}}),
        ),
        (
            "openclaw-mcp: transport is case-insensitive",
            None,
            json!({"mcp": {"servers": {"r": {"url": "https://h/sse", "transport": "SSE"}}}}),
            json!({"servers": {"r": {"url": "https://h/sse", "transport": "sse"}}}),
        ),
        (
            "openclaw-mcp: env numbers and booleans become strings, ${VAR} stays",
            None,
            json!({"mcp": {"servers": {"s": {"command": "c", "env": {"PORT": 8080, "DEBUG": true, "TOKEN": "${GH_TOKEN}", "R": 1.5}}}}}),
            json!({"servers": {"s": {"command": "c", "env": {"PORT": "8080", "DEBUG": "true", "TOKEN": "${GH_TOKEN}", "R": "1.5"}}}}),
        ),
        (
            "openclaw-mcp: headers with ${VAR}",
            None,
            json!({"mcp": {"servers": {"h": {"url": "https://h", "transport": "streamable-http", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}}),
            json!({"servers": {"h": {"url": "https://h", "transport": "streamable-http", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}),
        ),
        (
            "openclaw-mcp: workingDirectory is cwd",
            None,
            json!({"mcp": {"servers": {"s": {"command": "c", "workingDirectory": "/srv"}}}}),
            json!({"servers": {"s": {"command": "c", "cwd": "/srv"}}}),
        ),
        (
            "openclaw-mcp: cwd wins over workingDirectory",
            None,
            json!({"mcp": {"servers": {"s": {"command": "c", "workingDirectory": "/a", "cwd": "/b"}}}}),
            json!({"servers": {"s": {"command": "c", "cwd": "/b"}}}),
        ),
        (
            "openclaw-mcp: type alias http",
            None,
            json!({"mcp": {"servers": {"h": {"type": "http", "url": "https://h"}}}}),
            json!({"servers": {"h": {"transport": "streamable-http", "url": "https://h"}}}),
        ),
        (
            "openclaw-mcp: supportsParallelToolCalls is recorded, not configured",
            None,
            json!({"mcp": {"servers": {"s": {"command": "c", "supportsParallelToolCalls": true}}}}),
            json!({"servers": {"s": {"command": "c"}}}),
        ),
        (
            "openclaw-mcp: an OAuth server gets auth with its oauth settings",
            None,
            json!({"mcp": {"servers": {"notion": {"url": "https://n/mcp", "transport": "streamable-http", "auth": "oauth", "oauth": {"clientId": "x"}}}}}),
            json!({"servers": {"notion": {"url": "https://n/mcp", "transport": "streamable-http", "auth": {"type": "oauth", "clientId": "x"}}}}),
        ),
        (
            "openclaw-mcp: disabled without command",
            None,
            json!({"mcp": {"servers": {"off": {"enabled": false}}}}),
            json!({"servers": {"off": {"enabled": false}}}),
        ),
        (
            "openclaw-mcp: unknown server keys ignored",
            None,
            json!({"mcp": {"servers": {"s": {"command": "c", "approval": "prompt", "sslVerify": false}}}}),
            json!({"servers": {"s": {"command": "c"}}}),
        ),
        (
            "openclaw-mcp: other mcp keys ignored",
            None,
            json!({"mcp": {"sessionIdleTtlMs": 5, "servers": {"s": {"command": "c"}}}}),
            json!({"servers": {"s": {"command": "c"}}}),
        ),
        (
            "openclaw-mcp: empty mcp",
            None,
            json!({"mcp": {}}),
            json!({"servers": {}}),
        ),
        (
            "openclaw-mcp: forced shape, root is the mcp object",
            Some("openclaw-mcp"),
            json!({"servers": {"s": {"command": "c", "requestTimeoutMs": 1000}}}),
            json!({"servers": {"s": {"command": "c", "toolTimeout": 1000}}}),
        ),
        (
            "openclaw-mcp: a whole current openclaw.json",
            None,
            json!({"agents": {"defaults": {"model": "m"}, "list": [{"id": "a"}]}, "gateway": {"port": 1}, "mcp": {"servers": {"s": {"command": "c"}}}}),
            json!({"servers": {"s": {"command": "c"}}}),
        ),
        (
            "openclaw-mcp: command and url without transport is stdio",
            None,
            json!({"mcp": {"servers": {"s": {"command": "c", "url": "https://h"}}}}),
            json!({"servers": {"s": {"command": "c", "url": "https://h"}}}),
        ),
        (
            "openclaw-mcp: toolFilter extra keys dropped",
            None,
            json!({"mcp": {"servers": {"s": {"command": "c", "toolFilter": {"exclude": ["x"], "mode": "strict"}}}}}),
            json!({"servers": {"s": {"command": "c", "toolFilter": {"exclude": ["x"]}}}}),
        ),
        (
            "openclaw-mcp: SecretRef object values are left to the validator",
            None,
            json!({"mcp": {"servers": {"s": {"command": "c", "env": {"K": {"source": "env", "id": "GH_TOKEN"}}}}}}),
            json!({"servers": {"s": {"command": "c", "env": {"K": {"source": "env", "id": "GH_TOKEN"}}}}}),
        ),
        // ---- mcpServers: Claude Desktop / Cursor / Claude Code / VS Code ----
        (
            "mcpServers: Claude Desktop stdio",
            None,
            json!({"mcpServers": {"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me"], "env": {"A": "b"}}}}),
            json!({"servers": {"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me"], "env": {"A": "b"}}}}),
        ),
        (
            "mcpServers: url only is http",
            None,
            json!({"mcpServers": {"remote": {"url": "https://h/mcp", "headers": {"X-Key": "k"}}}}),
            json!({"servers": {"remote": {"url": "https://h/mcp", "headers": {"X-Key": "k"}, "transport": "http"}}}),
        ),
        (
            "mcpServers: type sse",
            None,
            json!({"mcpServers": {"r": {"type": "sse", "url": "https://h/sse"}}}),
            json!({"servers": {"r": {"transport": "sse", "url": "https://h/sse"}}}),
        ),
        (
            "mcpServers: type streamable-http",
            None,
            json!({"mcpServers": {"r": {"type": "streamable-http", "url": "https://h"}}}),
            json!({"servers": {"r": {"transport": "streamable-http", "url": "https://h"}}}),
        ),
        (
            "mcpServers: transport key",
            None,
            json!({"mcpServers": {"r": {"transport": "http", "url": "https://h"}}}),
            json!({"servers": {"r": {"transport": "http", "url": "https://h"}}}),
        ),
        (
            "mcpServers: type and transport agreeing",
            None,
            json!({"mcpServers": {"r": {"type": "sse", "transport": "SSE", "url": "https://h"}}}),
            json!({"servers": {"r": {"transport": "sse", "url": "https://h"}}}),
        ),
        (
            "mcpServers: disabled (Cline)",
            None,
            json!({"mcpServers": {"s": {"command": "c", "disabled": true, "autoApprove": []}}}),
            json!({"servers": {"s": {"command": "c", "enabled": false}}}),
        ),
        (
            "mcpServers: disabled false changes nothing",
            None,
            json!({"mcpServers": {"s": {"command": "c", "disabled": false}}}),
            json!({"servers": {"s": {"command": "c"}}}),
        ),
        (
            "mcpServers: disabled wins over enabled",
            None,
            json!({"mcpServers": {"s": {"enabled": true, "disabled": true}}}),
            json!({"servers": {"s": {"enabled": false}}}),
        ),
        (
            "mcpServers: Cursor env numbers",
            None,
            json!({"mcpServers": {"s": {"command": "c", "env": {"N": 3}}}}),
            json!({"servers": {"s": {"command": "c", "env": {"N": "3"}}}}),
        ),
        (
            "mcpServers: VS Code stdio with inputs",
            None,
            json!({"inputs": [], "servers": {"gh": {"type": "stdio", "command": "docker", "args": ["run", "-i", "gh"], "env": {"T": "${input:token}"}}}}),
            json!({"servers": {"gh": {"transport": "stdio", "command": "docker", "args": ["run", "-i", "gh"], "env": {"T": "${input:token}"}}}}),
        ),
        (
            "mcpServers: VS Code http",
            None,
            json!({"servers": {"gh": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"A": "b"}}}}),
            json!({"servers": {"gh": {"transport": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"A": "b"}}}}),
        ),
        (
            "mcpServers: VS Code envFile ignored",
            None,
            json!({"servers": {"s": {"type": "stdio", "command": "c", "envFile": "${workspaceFolder}/.env"}}}),
            json!({"servers": {"s": {"transport": "stdio", "command": "c"}}}),
        ),
        (
            "mcpServers: host settings at the root ignored",
            None,
            json!({"globalShortcut": "Ctrl+Space", "mcpServers": {"s": {"command": "c"}}}),
            json!({"servers": {"s": {"command": "c"}}}),
        ),
        (
            "mcpServers: empty",
            None,
            json!({"mcpServers": {}}),
            json!({"servers": {}}),
        ),
        (
            "mcpServers: forced on VS Code without type",
            Some("mcpServers"),
            json!({"servers": {"r": {"url": "https://h"}}}),
            json!({"servers": {"r": {"url": "https://h", "transport": "http"}}}),
        ),
        // ---- ACP session/new mcpServers ----
        (
            "acp: bare stdio with env",
            None,
            json!([{"name": "fs", "command": "/usr/bin/fs", "args": ["--ro"], "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "${X}"}]}]),
            json!({"servers": {"fs": {"command": "/usr/bin/fs", "args": ["--ro"], "env": {"A": "1", "B": "${X}"}}}}),
        ),
        (
            "acp: http with headers",
            None,
            json!([{"type": "http", "name": "docs", "url": "https://h/mcp", "headers": [{"name": "Authorization", "value": "Bearer t"}]}]),
            json!({"servers": {"docs": {"transport": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer t"}}}}),
        ),
        (
            "acp: sse",
            None,
            json!([{"type": "sse", "name": "s", "url": "https://h/sse", "headers": []}]),
            json!({"servers": {"s": {"transport": "sse", "url": "https://h/sse", "headers": {}}}}),
        ),
        (
            "acp: session/new params",
            None,
            json!({"cwd": "/home/me", "mcpServers": [{"name": "a", "command": "c", "args": [], "env": []}]}),
            json!({"servers": {"a": {"command": "c", "args": [], "env": {}}}}),
        ),
        ("acp: empty list", None, json!([]), json!({"servers": {}})),
        (
            "acp: explicit stdio type",
            None,
            json!([{"type": "stdio", "name": "a", "command": "c"}]),
            json!({"servers": {"a": {"command": "c"}}}),
        ),
        (
            "acp: _meta ignored",
            None,
            json!([{"name": "a", "command": "c", "_meta": {"x": 1}, "env": [{"name": "K", "value": "v", "_meta": {}}]}]),
            json!({"servers": {"a": {"command": "c", "env": {"K": "v"}}}}),
        ),
        (
            "acp: a repeated env name, last wins",
            None,
            json!([{"name": "a", "command": "c", "env": [{"name": "K", "value": "1"}, {"name": "K", "value": "2"}]}]),
            json!({"servers": {"a": {"command": "c", "env": {"K": "2"}}}}),
        ),
        (
            "acp: other transport's fields ignored",
            None,
            json!([{"name": "a", "command": "c", "url": "https://h"}, {"type": "http", "name": "b", "url": "https://h", "command": "x"}]),
            json!({"servers": {"a": {"command": "c"}, "b": {"transport": "http", "url": "https://h"}}}),
        ),
        (
            "acp: forced on params",
            Some("acp"),
            json!({"mcpServers": [{"name": "a", "command": "c"}]}),
            json!({"servers": {"a": {"command": "c"}}}),
        ),
    ];
    let count = cases.len();
    for (label, shape, input, expected) in cases {
        match load(shape, &input) {
            Ok(got) => assert_eq!(got, expected, "{label}"),
            Err(e) => panic!("{label}: expected success, got error: {e}"),
        }
    }
    assert!(count >= 50, "{count} valid cases");

    // Agent placement through the same entry point.
    assert_eq!(
        load_agent("work", &openclaw_doc()).unwrap(),
        json!({"servers": {
            "github": {"command": "gh-mcp"},
            "files": {"command": "other-fs", "toolFilter": {"exclude": ["write_*"]}},
            "jira": {"transport": "sse", "url": "http://127.0.0.1:2/sse"}
        }})
    );
}

#[test]
fn invalid_documents() {
    // (label, shape option, input, exact error)
    let cases: Vec<(&str, Option<&str>, Value, &str)> = vec![
        // ---- our own McpConfig ----
        (
            "mcp: forced on an array",
            Some("mcp"),
            json!([]),
            "(root): Expected object, received array",
        ),
        (
            "mcp: unknown root key",
            None,
            json!({"servers": {}, "x": 1}),
            "(root): Unrecognized key 'x'",
        ),
        (
            "mcp: toolFilter not an object",
            None,
            json!({"servers": {"a": {"command": "c", "toolFilter": []}}}),
            "servers.a.toolFilter: Expected object, received array",
        ),
        (
            "mcp: toolFilter include not an array",
            None,
            json!({"servers": {"a": {"command": "c", "toolFilter": {"include": "x"}}}}),
            "servers.a.toolFilter.include: Expected array, received string",
        ),
        (
            "mcp: toolFilter items",
            None,
            json!({"servers": {"a": {"command": "c", "toolFilter": {"include": ["ok", 1], "exclude": [null]}}}}),
            "servers.a.toolFilter.include.1: Expected string, received number; servers.a.toolFilter.exclude.0: Expected string, received null",
        ),
        (
            "mcp: toolFilter unknown key",
            None,
            json!({"servers": {"a": {"command": "c", "toolFilter": {"only": []}}}}),
            "servers.a.toolFilter: Unrecognized key 'only'",
        ),
        (
            "mcp: missing command",
            None,
            json!({"servers": {"a": {}}}),
            "servers.a: stdio transport requires 'command'",
        ),
        (
            "mcp: unknown transport",
            None,
            json!({"servers": {"a": {"transport": "ws"}}}),
            "servers.a.transport: Invalid transport 'ws': expected 'stdio', 'sse', 'http' or 'streamable-http'",
        ),
        // ---- detection ----
        (
            "detect: null",
            None,
            json!(null),
            "Expected a JSON object or array (an MCP config, openclaw.json, mcpServers file or ACP mcpServers list), received null",
        ),
        (
            "detect: unknown keys",
            None,
            json!({"foo": 1, "bar": 2}),
            "Unrecognized config shape: expected 'servers' (MCP config, VS Code), 'mcpServers' (Claude Desktop, Cursor, ACP), 'mcp' (current OpenClaw) or 'agents' (openclaw.json); found top-level keys 'foo', 'bar'",
        ),
        (
            "detect: servers and agents",
            None,
            json!({"servers": {}, "agents": {}}),
            "Ambiguous config: found both 'servers' (MCP config) and 'agents' (openclaw.json) at the top level",
        ),
        (
            "detect: mcp and mcpServers",
            None,
            json!({"mcp": {}, "mcpServers": {}}),
            "Ambiguous config: found 'mcpServers' (Claude Desktop, Cursor) and top-level 'mcp' (current OpenClaw) at the top level; pass the shape option ('mcp', 'openclaw', 'openclaw-mcp', 'mcpServers' or 'acp')",
        ),
        (
            "detect: both OpenClaw layouts",
            None,
            json!({"agents": {"defaults": {"mcp": {}}}, "mcp": {"servers": {}}}),
            "Ambiguous config: found 'agents' with 'mcp' (openclaw.json) and top-level 'mcp' (current OpenClaw) at the top level; pass the shape option ('mcp', 'openclaw', 'openclaw-mcp', 'mcpServers' or 'acp')",
        ),
        (
            "detect: servers and mcpServers",
            None,
            json!({"servers": {}, "mcpServers": []}),
            "Ambiguous config: found 'servers' (MCP config) and an 'mcpServers' array (ACP) at the top level; pass the shape option ('mcp', 'openclaw', 'openclaw-mcp', 'mcpServers' or 'acp')",
        ),
        // ---- openclaw.json, design placement ----
        (
            "openclaw: defaults.mcp not an object",
            None,
            json!({"agents": {"defaults": {"mcp": []}}}),
            "agents.defaults.mcp: Expected object, received array",
        ),
        (
            "openclaw: server errors come from the validator",
            None,
            json!({"agents": {"defaults": {"mcp": {"servers": {"a": {"command": 1}}}}}}),
            "servers.a.command: Expected string, received number",
        ),
        // ---- current OpenClaw: top-level mcp ----
        (
            "openclaw-mcp: mcp not an object",
            None,
            json!({"mcp": []}),
            "mcp: Expected object, received array",
        ),
        (
            "openclaw-mcp: servers not an object",
            None,
            json!({"mcp": {"servers": [1]}}),
            "mcp.servers: Expected object, received array",
        ),
        (
            "openclaw-mcp: entry not an object",
            None,
            json!({"mcp": {"servers": {"fs": "npx"}}}),
            "mcp.servers.fs: Expected object, received string",
        ),
        (
            "openclaw-mcp: unknown transport",
            None,
            json!({"mcp": {"servers": {"fs": {"transport": "ws", "url": "ws://h"}}}}),
            "mcp.servers.fs.transport: Invalid transport 'ws': expected 'stdio', 'sse' or 'streamable-http'",
        ),
        (
            "openclaw-mcp: 'http' is not one of its transports",
            None,
            json!({"mcp": {"servers": {"fs": {"transport": "http", "url": "https://h"}}}}),
            "mcp.servers.fs.transport: Invalid transport 'http': expected 'stdio', 'sse' or 'streamable-http'",
        ),
        (
            "openclaw-mcp: transport not a string",
            None,
            json!({"mcp": {"servers": {"fs": {"transport": 1, "command": "c"}}}}),
            "mcp.servers.fs.transport: Expected string, received number",
        ),
        (
            "openclaw-mcp: zero connection timeout",
            None,
            json!({"mcp": {"servers": {"fs": {"command": "c", "connectionTimeoutMs": 0}}}}),
            "mcp.servers.fs.connectionTimeoutMs: Must be a positive number",
        ),
        (
            "openclaw-mcp: request timeout not a number",
            None,
            json!({"mcp": {"servers": {"fs": {"command": "c", "requestTimeoutMs": "5s"}}}}),
            "mcp.servers.fs.requestTimeoutMs: Expected number, received string",
        ),
        (
            "openclaw-mcp: request timeout too large",
            None,
            json!({"mcp": {"servers": {"fs": {"command": "c", "requestTimeoutMs": 86400001}}}}),
            "mcp.servers.fs.requestTimeoutMs: Must be at most 86400000 (24 h), received 86400001",
        ),
        (
            "openclaw-mcp: args not an array",
            None,
            json!({"mcp": {"servers": {"fs": {"command": "c", "args": "-y x"}}}}),
            "mcp.servers.fs.args: Expected array, received string",
        ),
        (
            "openclaw-mcp: env value null",
            None,
            json!({"mcp": {"servers": {"fs": {"command": "c", "env": {"K": null}}}}}),
            "mcp.servers.fs.env.K: Expected string, received null",
        ),
        (
            "openclaw-mcp: a bad SecretRef, judged by the validator, named by its source path",
            None,
            json!({"mcp": {"servers": {"fs": {"command": "c", "env": {"K": {"source": "env"}}}}}}),
            "mcp.servers.fs.env.K: Invalid SecretRef: 'id' is required",
        ),
        (
            "openclaw-mcp: headers not an object",
            None,
            json!({"mcp": {"servers": {"h": {"url": "https://h", "headers": ["a"]}}}}),
            "mcp.servers.h.headers: Expected object, received array",
        ),
        (
            "openclaw-mcp: supportsParallelToolCalls not a boolean",
            None,
            json!({"mcp": {"servers": {"fs": {"command": "c", "supportsParallelToolCalls": "yes"}}}}),
            "mcp.servers.fs.supportsParallelToolCalls: Expected boolean, received string",
        ),
        (
            "openclaw-mcp: unknown auth",
            None,
            json!({"mcp": {"servers": {"h": {"url": "https://h", "auth": "basic"}}}}),
            "mcp.servers.h.auth: Invalid auth 'basic': expected 'oauth'",
        ),
        (
            "openclaw-mcp: reserved name",
            None,
            json!({"mcp": {"servers": {"__proto__": {"command": "c"}}}}),
            "mcp.servers.__proto__: The server name '__proto__' is reserved; choose a different name",
        ),
        (
            "openclaw-mcp: neither command nor url",
            None,
            json!({"mcp": {"servers": {"fs": {"args": []}}}}),
            "mcp.servers.fs: stdio transport requires 'command'",
        ),
        (
            "openclaw-mcp: streamable-http without url",
            None,
            json!({"mcp": {"servers": {"fs": {"transport": "streamable-http"}}}}),
            "mcp.servers.fs: streamable-http transport requires 'url'",
        ),
        (
            "openclaw-mcp: toolFilter include not an array",
            None,
            json!({"mcp": {"servers": {"fs": {"command": "c", "toolFilter": {"include": "read_*"}}}}}),
            "mcp.servers.fs.toolFilter.include: Expected array, received string",
        ),
        (
            "openclaw-mcp: bad type alias",
            None,
            json!({"mcp": {"servers": {"fs": {"type": "websocket"}}}}),
            "mcp.servers.fs.type: Invalid type 'websocket': expected 'stdio', 'sse', 'http' or 'streamable-http'",
        ),
        (
            "openclaw-mcp: workingDirectory not a string",
            None,
            json!({"mcp": {"servers": {"fs": {"command": "c", "workingDirectory": 1}}}}),
            "mcp.servers.fs.workingDirectory: Expected string, received number",
        ),
        (
            "openclaw-mcp: every schema issue, in order, before any requirement",
            None,
            json!({"mcp": {"servers": {
                "a": {},
                "b": {"command": 1, "connectionTimeoutMs": -1},
                "c": {"command": "c", "enabled": "yes"}
            }}}),
            "mcp.servers.b.command: Expected string, received number; mcp.servers.b.connectionTimeoutMs: Must be a positive number; mcp.servers.c.enabled: Expected boolean, received string",
        ),
        (
            "openclaw-mcp: forced on an array",
            Some("openclaw-mcp"),
            json!([]),
            "(root): Expected object, received array",
        ),
        // ---- mcpServers ----
        (
            "mcpServers: not an object",
            None,
            json!({"mcpServers": "x"}),
            "mcpServers: Expected object, received string",
        ),
        (
            "mcpServers: entry not an object",
            None,
            json!({"mcpServers": {"fs": ["npx"]}}),
            "mcpServers.fs: Expected object, received array",
        ),
        (
            "mcpServers: args not an array",
            None,
            json!({"mcpServers": {"fs": {"command": "npx", "args": "-y"}}}),
            "mcpServers.fs.args: Expected array, received string",
        ),
        (
            "mcpServers: unknown type",
            None,
            json!({"mcpServers": {"fs": {"type": "ws", "url": "ws://h"}}}),
            "mcpServers.fs.type: Invalid type 'ws': expected 'stdio', 'http', 'streamable-http' or 'sse'",
        ),
        (
            "mcpServers: type and transport disagree",
            None,
            json!({"mcpServers": {"fs": {"type": "sse", "transport": "http", "url": "https://h"}}}),
            "mcpServers.fs.transport: 'transport' is 'http' but 'type' is 'sse'",
        ),
        (
            "mcpServers: disabled not a boolean",
            None,
            json!({"mcpServers": {"fs": {"command": "c", "disabled": "true"}}}),
            "mcpServers.fs.disabled: Expected boolean, received string",
        ),
        (
            "mcpServers: stdio without command",
            None,
            json!({"mcpServers": {"fs": {"type": "stdio", "args": ["x"]}}}),
            "mcpServers.fs: stdio transport requires 'command'",
        ),
        (
            "mcpServers: http without url",
            None,
            json!({"mcpServers": {"fs": {"type": "http"}}}),
            "mcpServers.fs: http transport requires 'url'",
        ),
        (
            "mcpServers: VS Code sse without url",
            None,
            json!({"servers": {"x": {"type": "sse"}}}),
            "servers.x: sse transport requires 'url'",
        ),
        (
            "mcpServers: env value an array",
            None,
            json!({"mcpServers": {"fs": {"command": "c", "env": {"A": ["b"]}}}}),
            "mcpServers.fs.env.A: Expected string, received array",
        ),
        (
            "mcpServers: forced on a document without servers",
            Some("mcpServers"),
            json!({"x": {}}),
            "(root): Expected 'mcpServers' (Claude Desktop, Cursor) or 'servers' (VS Code)",
        ),
        (
            "mcpServers: forced with both keys",
            Some("mcpServers"),
            json!({"mcpServers": {}, "servers": {}}),
            "(root): Found both 'mcpServers' and 'servers'; keep one of them",
        ),
        (
            "mcpServers: forced on an ACP array",
            Some("mcpServers"),
            json!({"mcpServers": []}),
            "mcpServers: Expected object, received array",
        ),
        // ---- ACP ----
        (
            "acp: entry not an object",
            None,
            json!(["fs"]),
            "0: Expected object, received string",
        ),
        (
            "acp: missing name",
            None,
            json!([{"command": "c"}]),
            "0: Required key 'name' is missing",
        ),
        (
            "acp: empty name",
            None,
            json!([{"name": "", "command": "c"}]),
            "0.name: Must not be empty",
        ),
        (
            "acp: name not a string",
            None,
            json!([{"name": 7, "command": "c"}]),
            "0.name: Expected string, received number",
        ),
        (
            "acp: duplicate name",
            None,
            json!([{"name": "a", "command": "c"}, {"name": "a", "command": "d"}]),
            "1.name: Duplicate server name 'a' (first at 0)",
        ),
        (
            "acp: unknown type",
            None,
            json!([{"type": "ws", "name": "a", "url": "ws://h"}]),
            "0.type: Invalid type 'ws': expected 'http' or 'sse' (or no type for stdio)",
        ),
        (
            "acp: env not an array",
            None,
            json!([{"name": "a", "command": "c", "env": {"K": "v"}}]),
            "0.env: Expected array, received object",
        ),
        (
            "acp: env item without value",
            None,
            json!([{"name": "a", "command": "c", "env": [{"name": "K"}]}]),
            "0.env.0: Required key 'value' is missing",
        ),
        (
            "acp: env value not a string",
            None,
            json!([{"name": "a", "command": "c", "env": [{"name": "K", "value": 1}]}]),
            "0.env.0.value: Expected string, received number",
        ),
        (
            "acp: header item not an object",
            None,
            json!([{"type": "http", "name": "a", "url": "https://h", "headers": ["Authorization: x"]}]),
            "0.headers.0: Expected object, received string",
        ),
        (
            "acp: http without url",
            None,
            json!([{"type": "http", "name": "a"}]),
            "0: http transport requires 'url'",
        ),
        (
            "acp: params, stdio without command",
            None,
            json!({"cwd": "/", "mcpServers": [{"name": "a", "args": []}]}),
            "mcpServers.0: stdio transport requires 'command'",
        ),
        (
            "acp: args not an array",
            None,
            json!([{"name": "a", "command": "c", "args": "x"}]),
            "0.args: Expected array, received string",
        ),
        (
            "acp: forced on params without the list",
            Some("acp"),
            json!({"cwd": "/"}),
            "(root): Expected an array of MCP servers or an object with 'mcpServers'",
        ),
        (
            "acp: forced, mcpServers not an array",
            Some("acp"),
            json!({"mcpServers": {}}),
            "mcpServers: Expected array, received object",
        ),
        (
            "acp: several issues joined",
            None,
            json!([{"name": "a", "command": 1}, 5, {"name": "b", "command": "c", "env": [{"name": 2, "value": "v"}]}]),
            "0.command: Expected string, received number; 1: Expected object, received number; 2.env.0.name: Expected string, received number",
        ),
    ];
    let count = cases.len();
    for (label, shape, input, expected) in cases {
        match load(shape, &input) {
            Ok(v) => panic!("{label}: expected an error, got {v}"),
            Err(e) => assert_eq!(e, expected, "{label}"),
        }
    }
    assert!(count >= 50, "{count} invalid cases");
    assert_eq!(
        load_agent("nobody", &openclaw_doc()).unwrap_err(),
        "Unknown agent 'nobody': known agents are 'main', 'work'"
    );
}

#[test]
fn shape_names() {
    for shape in ConfigShape::ALL {
        assert_eq!(ConfigShape::parse(shape.name()), Ok(shape));
    }
    assert_eq!(
        ConfigShape::parse("claude"),
        Err(
            "Unknown config shape 'claude': expected 'mcp', 'openclaw', 'openclaw-mcp', 'mcpServers' or 'acp'"
                .to_owned()
        )
    );
    let detected: Vec<(Value, ConfigShape)> = vec![
        (json!({}), ConfigShape::McpConfig),
        (
            json!({"servers": {"a": {"command": "c"}}}),
            ConfigShape::McpConfig,
        ),
        (
            json!({"servers": {"a": {"type": "stdio"}}}),
            ConfigShape::McpServers,
        ),
        (
            json!({"servers": {}, "inputs": []}),
            ConfigShape::McpServers,
        ),
        (json!({"mcpServers": {}}), ConfigShape::McpServers),
        (json!({"mcpServers": []}), ConfigShape::Acp),
        (json!([]), ConfigShape::Acp),
        (json!({"agents": {}}), ConfigShape::OpenClawAgents),
        (
            json!({"agents": {"list": [{"mcp": {}}]}}),
            ConfigShape::OpenClawAgents,
        ),
        (
            json!({"agents": {"list": []}, "mcp": {}}),
            ConfigShape::OpenClawMcp,
        ),
        (json!({"mcp": 1}), ConfigShape::OpenClawMcp),
    ];
    for (input, shape) in detected {
        assert_eq!(detect_config_shape(&input), Ok(shape), "{input}");
    }
}

#[test]
fn warnings_and_recorded_fields() {
    let extract = |v: &Value| extract_mcp_config(v, &ExtractOptions::default()).unwrap();

    let x = extract(&json!({"mcp": {"extra": 1, "servers": {
        "notion": {"url": "https://n", "transport": "streamable-http", "auth": "oauth", "oauth": {}},
        "fs": {"command": "c", "supportsParallelToolCalls": false, "foo": 1, "sslVerify": false,
               "workingDirectory": "/a", "cwd": "/b", "oauth": {}, "toolFilter": {"mode": 1}}
    }}}));
    assert_eq!(x.shape, ConfigShape::OpenClawMcp);
    assert_eq!(
        x.warnings,
        vec![
            "mcp: Ignored unrecognized key 'extra'",
            "mcp.servers.fs: Ignored unrecognized key 'foo'",
            "mcp.servers.fs.sslVerify: Not supported by this package; ignored",
            "mcp.servers.fs.workingDirectory: Ignored; 'cwd' is given too and wins",
            "mcp.servers.fs.oauth: Ignored (it applies with auth: \"oauth\")",
            "mcp.servers.fs.toolFilter: Ignored unrecognized key 'mode'",
        ]
    );
    assert_eq!(
        Value::Object(x.recorded.clone()),
        json!({"fs": {"supportsParallelToolCalls": false}})
    );
    let v = validate_mcp_config(&x.config).unwrap();
    let notion = v.config.server("notion").unwrap();
    assert!(notion.enabled);
    assert!(notion.auth.is_some());
    assert_eq!(v.config.server("fs").unwrap().cwd.as_deref(), Some("/b"));

    let x = extract(
        &json!({"globalShortcut": "x", "preferences": {}, "inputs": [{"id": "t"}],
        "servers": {"s": {"type": "stdio", "command": "c", "envFile": ".env", "dev": {}, "gallery": true}}}),
    );
    assert_eq!(x.shape, ConfigShape::McpServers);
    assert_eq!(
        x.warnings,
        vec![
            "(root): Ignored keys 'globalShortcut', 'preferences'",
            "inputs: VS Code input variables are not supported; '${input:…}' strings are passed on unchanged",
            "servers.s.envFile: Not supported by this package; ignored",
            "servers.s: Ignored unrecognized key 'dev'",
            "servers.s: Ignored unrecognized key 'gallery'",
        ]
    );
    assert!(x.recorded.is_empty());

    let x = extract(&json!([
        {"name": "a", "command": "c", "url": "u", "extra": 1,
         "env": [{"name": "K", "value": "1", "note": "x"}, {"name": "K", "value": "2"}]}
    ]));
    assert_eq!(
        x.warnings,
        vec![
            "0.url: Ignored for a stdio server",
            "0: Ignored unrecognized key 'extra'",
            "0.env.0: Ignored unrecognized key 'note'",
            "0.env.1.name: 'K' repeats 0.env.0; the last value wins",
        ]
    );

    // The agent option on a shape without agents.
    let x = extract_mcp_config(
        &json!({"mcpServers": {}}),
        &ExtractOptions {
            agent: Some("main"),
            shape: None,
        },
    )
    .unwrap();
    assert_eq!(
        x.warnings,
        vec!["(options): agent 'main' ignored: a 'mcpServers' config has no per-agent servers"]
    );
    // Our own shapes carry no warnings.
    assert!(extract(&json!({"servers": {}})).warnings.is_empty());
    assert!(extract(&openclaw_doc()).warnings.is_empty());
}

#[test]
fn converted_configs_reach_the_typed_model() {
    let x = extract_mcp_config(
        &json!({"mcp": {"servers": {"docs": {
            "url": "https://h/mcp", "transport": "streamable-http",
            "connectionTimeoutMs": 5000, "requestTimeoutMs": 20000.5,
            "toolFilter": {"include": ["search", "read_*"], "exclude": ["read_private"]}
        }}}}),
        &ExtractOptions::default(),
    )
    .unwrap();
    let v = validate_mcp_config(&x.config).unwrap();
    let s = v.config.server("docs").unwrap();
    assert_eq!(s.transport_name, "streamable-http");
    assert_eq!((s.timeout_ms, s.tool_timeout_ms), (5000, 20001));
    assert_eq!(
        s.tool_filter,
        ToolFilter::new(["search", "read_*"], ["read_private"])
    );
    assert!(s.tool_filter.allows("read_file") && !s.tool_filter.allows("read_private"));
    assert!(!s.tool_filter.allows("write"));
}

#[test]
fn per_agent_manager_configs() {
    let configs = manager_configs_for_openclaw(&openclaw_doc()).unwrap();
    let ids: Vec<&str> = configs.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["main", "work"]);
    assert_eq!(
        configs[0].1,
        json!({"servers": {"github": {"command": "gh-mcp"}, "files": {"command": "fs-mcp"}}})
    );
    assert_eq!(
        configs[1].1["servers"]["files"],
        json!({"command": "other-fs", "toolFilter": {"exclude": ["write_*"]}})
    );
    // Deep copies: changing one agent's config leaves the others alone.
    let mut configs = configs;
    configs[0].1["servers"]["github"]["command"] = json!("changed");
    assert_eq!(
        configs[1].1["servers"]["github"]["command"],
        json!("gh-mcp")
    );
    for (_, c) in &configs {
        validate_mcp_config(c).unwrap();
    }

    // Defaults but no agents: one "default" entry.
    let doc = json!({"agents": {"defaults": {"mcp": {"servers": {"a": {"command": "c"}}}}}});
    assert_eq!(
        manager_configs_for_openclaw(&doc).unwrap(),
        vec![(
            "default".to_owned(),
            json!({"servers": {"a": {"command": "c"}}})
        )]
    );
    // Agents listed without ids count as no agents.
    let doc = json!({"agents": {"defaults": {"mcp": {}}, "list": [{"name": "x"}, "junk"]}});
    assert_eq!(
        manager_configs_for_openclaw(&doc).unwrap(),
        vec![("default".to_owned(), json!({}))]
    );
    // Neither: nothing to start.
    assert!(
        manager_configs_for_openclaw(&json!({"agents": {}}))
            .unwrap()
            .is_empty()
    );
    // Current OpenClaw: global servers, a copy per agent.
    let doc = json!({"agents": {"list": [{"id": "a"}, {"id": "b"}]}, "mcp": {"servers": {"s": {"url": "https://h"}}}});
    let expected = json!({"servers": {"s": {"url": "https://h", "transport": "sse"}}});
    assert_eq!(
        manager_configs_for_openclaw(&doc).unwrap(),
        vec![
            ("a".to_owned(), expected.clone()),
            ("b".to_owned(), expected.clone())
        ]
    );
    assert_eq!(
        manager_configs_for_openclaw(&json!({"mcp": {"servers": {"s": {"url": "https://h"}}}}))
            .unwrap(),
        vec![("default".to_owned(), expected)]
    );
    // Errors.
    let errors: Vec<(Value, &str)> = vec![
        (
            json!({"agents": {"list": [{"id": "a"}, {"id": "b"}, {"id": "a"}]}}),
            "agents.list.2.id: Duplicate agent id 'a' (also agents.list.0.id)",
        ),
        (
            json!({"agents": []}),
            "agents: Expected object, received array",
        ),
        (
            json!({"mcpServers": {}}),
            "Expected an openclaw.json (with 'agents' or a top-level 'mcp'), found a 'mcpServers' config",
        ),
        (
            json!({"mcp": {"servers": {"s": {}}}}),
            "mcp.servers.s: stdio transport requires 'command'",
        ),
        (
            json!({"agents": {"list": {}}, "mcp": {}}),
            "agents.list: Expected array, received object",
        ),
    ];
    for (input, expected) in errors {
        assert_eq!(
            manager_configs_for_openclaw(&input).unwrap_err(),
            expected,
            "{input}"
        );
    }
}

#[test]
fn files_of_every_shape() {
    let dir = std::env::temp_dir().join(format!("mcp-shapes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let files: Vec<(&str, Value, ConfigShape)> = vec![
        (
            "claude_desktop_config.json",
            json!({"mcpServers": {"fs": {"command": "npx"}}}),
            ConfigShape::McpServers,
        ),
        (
            "mcp.json",
            json!({"servers": {"fs": {"type": "stdio", "command": "npx"}}}),
            ConfigShape::McpServers,
        ),
        (
            "openclaw.json",
            json!({"mcp": {"servers": {"fs": {"command": "npx"}}}}),
            ConfigShape::OpenClawMcp,
        ),
        (
            "acp.json",
            json!([{"name": "fs", "command": "npx"}]),
            ConfigShape::Acp,
        ),
        (
            "own.json",
            json!({"servers": {"fs": {"command": "npx"}}}),
            ConfigShape::McpConfig,
        ),
    ];
    for (name, doc, shape) in files {
        let path = dir.join(name);
        std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        let x = load_config_file(&path, &ExtractOptions::default()).unwrap();
        assert_eq!(x.shape, shape, "{name}");
        let v = validate_mcp_config(&x.config).unwrap();
        assert_eq!(
            v.config.servers[0].command.as_deref(),
            Some("npx"),
            "{name}"
        );
    }
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{ // comment\n}").unwrap();
    let e = load_config_file(&bad, &ExtractOptions::default()).unwrap_err();
    assert!(
        e.starts_with(&format!("Invalid JSON in {}: ", bad.display())),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A small deterministic generator of odd JSON.
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
            "mcpServers",
            "mcp",
            "agents",
            "defaults",
            "list",
            "id",
            "name",
            "type",
            "transport",
            "command",
            "args",
            "env",
            "headers",
            "url",
            "cwd",
            "workingDirectory",
            "enabled",
            "disabled",
            "auth",
            "oauth",
            "toolFilter",
            "include",
            "exclude",
            "connectionTimeoutMs",
            "requestTimeoutMs",
            "supportsParallelToolCalls",
            "value",
            "inputs",
            "_meta",
            "__proto__",
            "",
            "é",
        ];
        const STRINGS: &[&str] = &[
            "stdio",
            "sse",
            "http",
            "streamable-http",
            "oauth",
            "x",
            "",
            "https://h",
            "${X}",
            "ü",
        ];
        let kind = if depth == 0 {
            self.next() % 5
        } else {
            self.next() % 8
        };
        match kind {
            0 => Value::Null,
            1 => Value::Bool(self.next().is_multiple_of(2)),
            2 => {
                let nums = ["0", "-1", "1.5", "1e308", "86400001", "5"];
                serde_json::from_str(nums[(self.next() % 6) as usize]).unwrap()
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
    for shape in [None]
        .into_iter()
        .chain(ConfigShape::ALL.into_iter().map(Some))
    {
        for agent in [None, Some("a")] {
            let options = ExtractOptions { agent, shape };
            if let Ok(x) = extract_mcp_config(v, &options) {
                let converted = !matches!(
                    x.shape,
                    ConfigShape::McpConfig | ConfigShape::OpenClawAgents
                );
                let valid = validate_mcp_config(&x.config);
                if converted {
                    assert!(
                        valid.is_ok(),
                        "converted config must validate: {v} → {}",
                        x.config
                    );
                }
            }
        }
    }
    let _ = manager_configs_for_openclaw(v);
}

#[test]
fn never_panics() {
    let mut g = Gen(0xD1B5_4A32_D192_ED03);
    for _ in 0..4000 {
        let v = g.value(5);
        exercise(&v);
        exercise(&json!({"mcp": {"servers": {"a": v.clone()}}}));
        exercise(&json!({"mcpServers": {"a": v.clone()}}));
        exercise(&json!([v.clone(), {"name": "n", "env": [v.clone()]}]));
    }
}

/// Built by hand, 100 000 levels; dropped on a big stack (serde_json's drop
/// recurses).
fn deep(levels: usize) -> Value {
    let mut d = json!(1);
    for _ in 0..levels {
        d = Value::Array(vec![d]);
    }
    d
}

/// `{ key: v }` without `json!`, which would copy `v` recursively.
fn obj(key: &str, v: Value) -> Value {
    let mut m = serde_json::Map::new();
    m.insert(key.to_owned(), v);
    Value::Object(m)
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let mut keep = Vec::new();
    let cases: Vec<(Value, &str)> = vec![
        (
            {
                let mut s = serde_json::Map::new();
                s.insert("command".into(), json!("c"));
                s.insert("args".into(), deep(100_000));
                let mut servers = serde_json::Map::new();
                servers.insert("s".into(), Value::Object(s));
                obj("mcpServers", Value::Object(servers))
            },
            "mcpServers.s.args: Nested too deeply (more than 32 levels)",
        ),
        (
            {
                let mut env = serde_json::Map::new();
                env.insert("K".into(), deep(100_000));
                let mut s = serde_json::Map::new();
                s.insert("command".into(), json!("c"));
                s.insert("env".into(), Value::Object(env));
                let mut servers = serde_json::Map::new();
                servers.insert("s".into(), Value::Object(s));
                let mut mcp = serde_json::Map::new();
                mcp.insert("servers".into(), Value::Object(servers));
                obj("mcp", Value::Object(mcp))
            },
            "mcp.servers.s.env.K: Nested too deeply (more than 32 levels)",
        ),
        (
            {
                let mut s = serde_json::Map::new();
                s.insert("name".into(), json!("a"));
                s.insert("command".into(), json!("c"));
                s.insert("args".into(), deep(100_000));
                Value::Array(vec![Value::Object(s)])
            },
            "0.args: Nested too deeply (more than 32 levels)",
        ),
    ];
    for (input, expected) in cases {
        let e = extract_mcp_config(&input, &ExtractOptions::default()).unwrap_err();
        assert_eq!(e, expected);
        keep.push(input);
    }
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(move || drop(keep))
        .unwrap()
        .join()
        .unwrap();
}

/// `sharedManagerConfigForOpenclaw`: identical definitions (defaults and tool prefix included)
/// become one server; a key two different definitions use stays with the first agent and the
/// others get `<key>@<agent>` with the prefix their names were made from; disabled servers are
/// left out of the agent's view; an agent's invalid config is an error naming the agent.
#[test]
fn shared_config_runs_each_distinct_server_once() {
    use openclaw_mcp_native::config::shared_config_for_openclaw;
    let same = json!({ "command": "node", "args": ["s.js"] });
    let root = json!({
        "agents": {
            "defaults": { "mcp": { "servers": { "tools": same } } },
            "list": [
                { "id": "a", "mcp": { "servers": {
                    "alias": same,
                    "db": { "command": "db", "timeout": 30000 },
                    "off": { "command": "x", "enabled": false },
                } } },
                { "id": "b", "mcp": { "servers": { "db": { "command": "db" } } } },
                { "id": "c", "mcp": { "servers": { "db": { "command": "other" } } } },
                { "id": "d", "mcp": { "servers": { "db": { "command": "third" } } } },
            ],
        },
    });
    let shared = shared_config_for_openclaw(&root).unwrap();
    let servers = shared.config["servers"].as_object().unwrap();
    // `alias` has the same command as `tools` but another prefix: its names differ, so it is
    // its own server. `db` with the default timeout written out is the same definition.
    assert_eq!(
        servers.keys().collect::<Vec<_>>(),
        ["tools", "alias", "db", "db@c", "db@d"]
    );
    assert_eq!(servers["db@c"]["toolPrefix"], "db");
    assert_eq!(servers["db@c"]["command"], "other");
    assert!(servers["db"].get("toolPrefix").is_none());
    let views: Vec<(&str, Vec<&str>)> = shared
        .agents
        .iter()
        .map(|(a, s)| (a.as_str(), s.iter().map(String::as_str).collect()))
        .collect();
    assert_eq!(
        views,
        [
            ("a", vec!["tools", "alias", "db"]),
            ("b", vec!["tools", "db"]),
            ("c", vec!["tools", "db@c"]),
            ("d", vec!["tools", "db@d"]),
        ]
    );

    let bad = json!({ "agents": { "list": [ { "id": "z", "mcp": { "servers": { "s": { "transport": "pigeon" } } } } ] } });
    let error = shared_config_for_openclaw(&bad).unwrap_err();
    assert!(error.starts_with("agent 'z': "), "{error}");
}
