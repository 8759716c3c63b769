//! Tool policy and names through the manager, against the real fault server: what is filtered
//! out is neither offered nor callable, and no two tools ever share a name.

mod common;

use common::*;
use openclaw_mcp_native::bridge::NameScheme;
use openclaw_mcp_native::log::Level;
use openclaw_mcp_native::manager::ManagerOptions;
use openclaw_mcp_native::policy::{ToolFilter, ToolPolicy};
use openclaw_mcp_native::tool_result::{ExternalContent, ToolCallResult};
use tokio_util::sync::CancellationToken;

fn names(h: &Harness) -> Vec<String> {
    h.manager
        .agent_tools()
        .into_iter()
        .map(|t| t.name)
        .collect()
}

async fn call(h: &Harness, server: usize, tool: &str, agent_name: &str) -> ToolCallResult {
    let args = serde_json::json!({"text": "hi"}).as_object().cloned();
    h.manager
        .execute(
            server,
            tool,
            agent_name,
            args,
            &CancellationToken::new(),
            None,
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_filter_hides_and_refuses() {
    let mut s = fault_server("f", &[]);
    s.tool_filter = ToolFilter::new(["e*", "add", "hang"], ["hang"]);
    let h = Harness::new(vec![s]);
    h.manager.start().await;
    // In tools/list order; `e*` also matches env, env_hash and exit; exclude wins for hang.
    assert_eq!(
        names(&h),
        [
            "mcp_f_echo",
            "mcp_f_add",
            "mcp_f_env",
            "mcp_f_env_hash",
            "mcp_f_exit"
        ]
    );
    let offered = names(&h);
    assert!(offered.contains(&"mcp_f_echo".to_owned()), "{offered:?}");
    assert!(offered.contains(&"mcp_f_add".to_owned()), "{offered:?}");
    assert!(
        !offered
            .iter()
            .any(|n| n == "mcp_f_hang" || n == "mcp_f_fail"),
        "{offered:?}"
    );
    assert_eq!(h.manager.status()[0].tool_count, offered.len());
    // Refused at call time too, without reaching the server.
    match call(&h, 0, "hang", "mcp_f_hang").await {
        ToolCallResult {
            text,
            external: None,
            ..
        } => assert_eq!(
            text,
            "MCP tool error (f/hang): tool 'hang' is excluded by servers.f.toolFilter"
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        call(&h, 0, "echo", "mcp_f_echo").await,
        ToolCallResult {
            external: Some(_),
            ..
        }
    ));
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_and_deny_apply_to_agent_names_at_listing_and_call_time() {
    let options = ManagerOptions {
        policy: ToolPolicy::new(["MCP_F_*"], ["*_fail", "mcp_f_hang"]),
        ..ManagerOptions::default()
    };
    let h = Harness::with_options(vec![fault_server("f", &[])], options);
    h.manager.start().await;
    let offered = names(&h);
    assert!(offered.contains(&"mcp_f_echo".to_owned()), "{offered:?}");
    assert!(
        !offered
            .iter()
            .any(|n| n == "mcp_f_fail" || n == "mcp_f_hang"),
        "{offered:?}"
    );
    match call(&h, 0, "fail", "mcp_f_fail").await {
        ToolCallResult {
            text,
            external: None,
            ..
        } => assert_eq!(
            text,
            "MCP tool error (f/fail): tool 'mcp_f_fail' is not allowed by the tool policy (allow/deny)"
        ),
        other => panic!("{other:?}"),
    }
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn colliding_names_across_servers_are_made_unique_and_logged() {
    // Server 'a_b' tool 'c' and server 'a' tool 'b_c' both give mcp_a_b_c in the original.
    // The fault server's extra tools are t0, t1...: prefix 'a_b' + tool 't0' and prefix 'a' +
    // tool 'b_t0' cannot be produced, so use toolPrefix to force the same compat name.
    let mut first = fault_server("first", &[]);
    first.tool_prefix = Some("x".to_owned());
    let mut second = fault_server("second", &[]);
    second.tool_prefix = Some("x".to_owned());
    let h = Harness::new(vec![first, second]);
    h.manager.start().await;
    let offered = names(&h);
    let mut unique = offered.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), offered.len(), "duplicate names: {offered:?}");
    // The first server keeps the compat names; the second gets derived, provider-safe ones.
    let tools = h.manager.agent_tools();
    let first_echo = tools
        .iter()
        .find(|t| t.server == "first" && t.tool.mcp_name == "echo")
        .unwrap();
    let second_echo = tools
        .iter()
        .find(|t| t.server == "second" && t.tool.mcp_name == "echo")
        .unwrap();
    assert_eq!(first_echo.name, "mcp_x_echo");
    assert_ne!(second_echo.name, "mcp_x_echo");
    assert!(
        second_echo.name.len() <= 64
            && second_echo
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    );
    assert!(
        h.logged(
            Level::Info,
            &format!("is exposed as '{}'", second_echo.name)
        ),
        "{}",
        h.dump()
    );
    // Each name routes to its own server.
    match call(&h, second_echo.server_index, "echo", &second_echo.name).await {
        ToolCallResult {
            external: Some(ExternalContent { server, .. }),
            ..
        } => assert_eq!(server, "second"),
        other => panic!("{other:?}"),
    }
    // Stable: asking again gives the same names and logs nothing new.
    let lines_before = h.sink.lines().len();
    assert_eq!(names(&h), offered);
    assert_eq!(h.sink.lines().len(), lines_before);
    h.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openclaw_scheme_names_server_double_underscore_tool() {
    let options = ManagerOptions {
        name_scheme: NameScheme::OpenClaw,
        ..ManagerOptions::default()
    };
    let h = Harness::with_options(vec![fault_server("files.local", &[])], options);
    h.manager.start().await;
    let offered = names(&h);
    assert!(
        offered.contains(&"files-local__echo".to_owned()),
        "{offered:?}"
    );
    h.manager.shutdown().await;
}

/// A call through a view runs only when the view shows the server and its allow/deny and the
/// manager's (on the manager's own name for the tool) all allow it, whatever name the caller
/// presents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_through_a_view_outside_its_policy_is_refused() {
    use openclaw_mcp_native::manager::{CallRequest, ViewSpec};
    let mut options = ManagerOptions::default();
    options.policy = ToolPolicy::new(Vec::<String>::new(), ["mcp_b_echo".to_owned()]);
    let h = Harness::with_options(
        vec![fault_server("a", &[]), fault_server("b", &[])],
        options,
    );
    h.manager.start().await;
    let view = h
        .manager
        .view(ViewSpec {
            servers: Some(vec!["a".to_owned(), "b".to_owned()]),
            allow: Vec::new(),
            deny: vec!["*_add".to_owned()],
            tool_names: None,
        })
        .unwrap();
    let offered: Vec<String> = h
        .manager
        .agent_tools_in(Some(&view))
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(offered.contains(&"mcp_a_echo".to_owned()), "{offered:?}");
    assert!(!offered.iter().any(|n| n.ends_with("_add")), "{offered:?}");
    assert!(!offered.contains(&"mcp_b_echo".to_owned()), "{offered:?}");

    let through = |server: usize, tool: &str, agent_name: &str| CallRequest {
        tool_call_id: String::new(),
        server_index: server,
        tool: tool.to_owned(),
        agent_name: agent_name.to_owned(),
        arguments: serde_json::json!({"text": "hi", "a": 1, "b": 2})
            .as_object()
            .cloned(),
        cancel: CancellationToken::new(),
        progress: None,
        view: Some(view.clone()),
        passthrough: false,
    };
    let refused = |r: ToolCallResult| {
        assert!(
            r.text.contains("is not allowed by the tool policy"),
            "{}",
            r.text
        )
    };
    // Allowed: offered by the view.
    let ok = h
        .manager
        .execute_call(through(0, "echo", "mcp_a_echo"))
        .await;
    assert!(ok.text.contains("hi"), "{}", ok.text);
    // The view's deny, whatever name is presented.
    refused(h.manager.execute_call(through(0, "add", "mcp_a_add")).await);
    refused(
        h.manager
            .execute_call(through(0, "add", "mcp_a_plus"))
            .await,
    );
    // The manager's deny, on the manager's name for the tool.
    refused(
        h.manager
            .execute_call(through(1, "echo", "mcp_b_echo"))
            .await,
    );
    refused(h.manager.execute_call(through(1, "echo", "renamed")).await);

    // A view of server a alone refuses a call to server b.
    let only_a = h
        .manager
        .view(ViewSpec {
            servers: Some(vec!["a".to_owned()]),
            allow: Vec::new(),
            deny: Vec::new(),
            tool_names: None,
        })
        .unwrap();
    let mut call = through(1, "add", "mcp_b_add");
    call.view = Some(only_a);
    refused(h.manager.execute_call(call).await);
    h.manager.shutdown().await;
}
