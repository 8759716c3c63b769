//! The gateway end to end in-process: a manager of real stdio servers (the example and the
//! fault server), its tools served by `ManagerTools` over a duplex pipe, an rmcp client on the
//! other end: tools, and resources routed across servers.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use openclaw_mcp_native::config::{McpConfig, ResultMode};
use openclaw_mcp_native::gateway::{ManagerTools, follow_tool_changes};
use openclaw_mcp_native::log::Log;
use openclaw_mcp_native::manager::{Manager, ManagerOptions};
use openclaw_mcp_native::secrets::{EnvSource, Redactor, SecretResolver};
use openclaw_mcp_native::server::handler::Server;
use openclaw_mcp_native::server::options::ServerOptions;
use rmcp::ServiceExt;
use rmcp::handler::client::ClientHandler;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
    ReadResourceRequestParams,
};
use rmcp::service::{NotificationContext, RoleClient, ServiceError};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A 2025-11-25 client that reports each `tools/list_changed`.
struct Client {
    changed: mpsc::UnboundedSender<()>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("test", "1"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }
}

fn manager(servers: Vec<openclaw_mcp_native::config::ServerConfig>) -> Arc<Manager> {
    let mut options = ManagerOptions::default();
    options.runtime.shutdown_grace = Duration::from_millis(500);
    Arc::new(Manager::new(
        McpConfig { servers },
        options,
        Log::new(Arc::new(MemorySink::default()), Redactor::default()),
        Arc::new(SecretResolver::with_default_providers()),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_serves_the_managers_tools_and_follows_their_changes() {
    let manager = manager(vec![example_server("example")]);
    manager.start().await;
    let server = Server::new(
        ManagerTools::new(manager.clone(), None),
        ServerOptions::new("gateway", "1.0.0"),
    );
    let follow = tokio::spawn(follow_tool_changes(server.clone()));
    let (client_io, host_io) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(host_io);
    let stop = CancellationToken::new();
    let served = tokio::spawn({
        let (server, stop) = (server.clone(), stop.clone());
        async move { openclaw_mcp_native::server::stdio::serve(&server, read, write, stop).await }
    });
    let (changed_tx, mut changed) = mpsc::unbounded_channel();
    let client = Client {
        changed: changed_tx,
    }
    .serve(client_io)
    .await
    .expect("the client connects");

    // The tools as the manager names them, in its order.
    let listed = client.list_all_tools().await.unwrap();
    let names: Vec<String> = listed.iter().map(|t| t.name.to_string()).collect();
    let agent: Vec<String> = manager.agent_tools().into_iter().map(|t| t.name).collect();
    assert_eq!(names, agent);
    let echo = listed
        .iter()
        .find(|t| t.name == "mcp_example_echo")
        .unwrap();
    assert_eq!(echo.title.as_deref(), Some("MCP: example/echo"));

    // A call goes through the manager: the result is wrapped as untrusted content.
    let result = client
        .call_tool(
            CallToolRequestParams::new("mcp_example_echo").with_arguments(
                json!({ "text": "through the gateway" })
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true));
    let text = result.content[0].as_text().unwrap().text.clone();
    assert!(
        text.contains("From: example\n---\nthrough the gateway\n<<<END_EXTERNAL_UNTRUSTED_CONTENT"),
        "{text}"
    );

    // A tool the manager does not offer is an error result, not a crash.
    let missing = client
        .call_tool(CallToolRequestParams::new("mcp_example_nope"))
        .await;
    assert!(
        missing.is_err() || missing.as_ref().unwrap().is_error == Some(true),
        "{missing:?}"
    );

    // A reload that adds a server: its tools are offered, and the client is told.
    let mut config = vec![example_server("example"), fault_server("fault", &[])];
    // Rich results carry the server's isError (compat mode ignores it, as the original did).
    config[1].results.mode = Some(ResultMode::Rich);
    manager
        .reconfigure(McpConfig { servers: config }, EnvSource::Process)
        .await
        .expect("the reload is valid");
    tokio::time::timeout(Duration::from_secs(10), changed.recv())
        .await
        .expect("tools/list_changed within 10 s")
        .expect("the client is still there");
    let after = client.list_all_tools().await.unwrap();
    assert!(after.iter().any(|t| t.name == "mcp_fault_is_error"));

    // A result the upstream server flags isError stays an error downstream.
    let flagged = client
        .call_tool(CallToolRequestParams::new("mcp_fault_is_error"))
        .await
        .unwrap();
    assert_eq!(flagged.is_error, Some(true));

    client.cancel().await.unwrap();
    stop.cancel();
    let _ = served.await;
    manager.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(5), follow).await;
}

/// Resources of two servers through one gateway: listed together, each read routed to the
/// server that listed it, an upstream error passed on with its code and the server named, a
/// URI no server has is -32602 with the URI in `data`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_routes_each_resource_read_to_the_server_that_listed_it() {
    let manager = manager(vec![
        example_server("example"),
        fault_server("fault", &["--resources"]),
    ]);
    manager.start().await;
    let server = Server::new(
        ManagerTools::new(manager.clone(), None),
        ServerOptions::new("gateway", "1.0.0"),
    );
    let (client_io, host_io) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(host_io);
    let stop = CancellationToken::new();
    let served = tokio::spawn({
        let (server, stop) = (server.clone(), stop.clone());
        async move { openclaw_mcp_native::server::stdio::serve(&server, read, write, stop).await }
    });
    let (changed_tx, _changed) = mpsc::unbounded_channel();
    let client = Client {
        changed: changed_tx,
    }
    .serve(client_io)
    .await
    .expect("the client connects");
    let capabilities = client.peer_info().unwrap().capabilities.clone();
    assert!(capabilities.resources.is_some());
    // Neither server offers prompts or completions: not declared.
    assert!(capabilities.prompts.is_none() && capabilities.completions.is_none());

    let uris: Vec<String> = (client.list_all_resources().await.unwrap().into_iter())
        .map(|r| r.uri.clone())
        .collect();
    assert!(uris.contains(&"example://readme".to_owned()), "{uris:?}");
    assert!(uris.contains(&"fault://text/alpha".to_owned()), "{uris:?}");

    let text_of = |r: rmcp::model::ReadResourceResult| match &r.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("{other:?}"),
    };
    let readme = client
        .read_resource(ReadResourceRequestParams::new("example://readme"))
        .await
        .unwrap();
    assert!(text_of(readme).contains("example MCP server"));
    let alpha = client
        .read_resource(ReadResourceRequestParams::new("fault://text/alpha"))
        .await
        .unwrap();
    assert_eq!(text_of(alpha), "alpha text");

    let broken = client
        .read_resource(ReadResourceRequestParams::new("fault://broken"))
        .await
        .unwrap_err();
    let ServiceError::McpError(broken) = broken else {
        panic!("{broken:?}")
    };
    assert_eq!(broken.code.0, -32002);
    assert_eq!(
        broken.message,
        "MCP server 'fault': Resource unavailable: fault://broken"
    );

    let missing = client
        .read_resource(ReadResourceRequestParams::new("nope://nothing"))
        .await
        .unwrap_err();
    let ServiceError::McpError(missing) = missing else {
        panic!("{missing:?}")
    };
    assert_eq!(missing.code.0, -32602);
    assert_eq!(missing.data, Some(json!({ "uri": "nope://nothing" })));

    client.cancel().await.unwrap();
    stop.cancel();
    let _ = served.await;
    manager.shutdown().await;
}
