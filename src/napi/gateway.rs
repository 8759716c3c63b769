//! `manager.serve(options)`: the manager's tools, resources and prompts as one MCP server (the core's `gateway`), and
//! `McpGateway`, the handle of one served over HTTP. Conversion and hosting only.

use std::sync::{Arc, Mutex};

use ::napi::bindgen_prelude::*;
use napi_derive::napi;
use tokio_util::sync::CancellationToken;

use super::manager::McpManager;
use super::server_host::{KeepAlive, type_error};
use crate::gateway::ManagerTools;
use crate::gateway::options::{GatewayOptions, GatewayTransport};
use crate::server::handler::Server;
use crate::server::http::HttpServer;

/// A gateway served over Streamable HTTP: where clients connect, and how to stop it.
#[napi]
pub struct McpGateway {
    url: String,
    stop: CancellationToken,
    /// Cancelled once the calls in flight at close are answered.
    answered: CancellationToken,
    http: Arc<Mutex<Option<HttpServer>>>,
    /// Holds the event loop while the gateway listens (a threadsafe function does).
    keep_alive: Arc<Mutex<Option<KeepAlive>>>,
}

#[napi]
impl McpGateway {
    /// `http://<host>:<port><path>`, with the port actually bound.
    #[napi(getter)]
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// Stops listening: calls in flight are cancelled and answered with an `isError` result
    /// saying the gateway closed, then open sessions end. Idempotent; never rejects. The
    /// manager's shutdown stops it too.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        self.stop.cancel();
        let (http, keep_alive) = (self.http.clone(), self.keep_alive.clone());
        let answered = self.answered.clone();
        env.spawn_future(async move {
            answered.cancelled().await;
            stop_http(&http, &keep_alive).await;
            Ok(())
        })
    }
}

/// Why a call ends when the gateway closes (the client's answer says it).
const GATEWAY_CLOSED: &str = "the MCP gateway closed";

/// Once `ended` (the manager's shutdown) or `asked` (close(), or the stdio session's end) is
/// cancelled: the calls in flight are answered, then `answered` is cancelled (the transports
/// may stop).
async fn close_when(
    server: Arc<Server<ManagerTools>>,
    ended: CancellationToken,
    asked: CancellationToken,
    answered: CancellationToken,
) {
    tokio::select! {
        _ = ended.cancelled() => {}
        _ = asked.cancelled() => {}
    }
    server.close(GATEWAY_CLOSED).await;
    answered.cancel();
}

async fn stop_http(http: &Mutex<Option<HttpServer>>, keep_alive: &Mutex<Option<KeepAlive>>) {
    let server = http.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(server) = server {
        server.close().await;
    }
    keep_alive.lock().unwrap_or_else(|p| p.into_inner()).take();
}

#[napi]
impl McpManager {
    /// Serves the manager's agent tools (or a view's) as one MCP server: `{ transport: 'stdio' }`
    /// resolves when the client closes stdin or the manager shuts down; `{ transport: 'http',
    /// host?, port?, path?, stateless?, allowedOrigins?, allowedHosts? }` resolves an
    /// `McpGateway` once listening. Also `view?` (a view spec), `names?` (`'manager'` or
    /// `'upstream'`: the names tools and prompts are served under), `wrap?` (default true), `name?`,
    /// `version?`,
    /// `instructions?`, `limits?`, `toolTimeoutMs?`. Throws a TypeError naming a bad option;
    /// rejects after `shutdown()` or when it cannot listen.
    #[napi(
        ts_args_type = "options: McpGatewayOptions",
        ts_return_type = "Promise<McpGateway | undefined>"
    )]
    pub fn serve<'env>(
        &self,
        env: &'env Env,
        options: Unknown,
    ) -> Result<PromiseRaw<'env, Option<McpGateway>>> {
        let invalid = |message: String| type_error(env, message);
        let json = super::json_from_js(env, options)
            .map_err(|e| invalid(format!("serve: {}", e.reason)))?;
        let options =
            GatewayOptions::from_json(&json).map_err(|e| invalid(format!("serve: {e}")))?;
        let manager = self.core().clone();
        let view = match &options.view {
            None => None,
            Some(spec) => Some(
                manager
                    .view(spec.clone())
                    .map_err(|e| invalid(format!("serve: {e}")))?,
            ),
        };
        let keep_alive = match options.transport {
            GatewayTransport::Http(_) => {
                let noop = env.create_function_from_closure::<(), (), _>("serving", |_| Ok(()))?;
                Some(noop.build_threadsafe_function::<()>().build()?)
            }
            GatewayTransport::Stdio => None,
        };
        let ended = manager.shutting_down();
        env.spawn_future(async move {
            if ended.is_cancelled() {
                return Err(Error::from_reason("serve: the manager is shut down"));
            }
            let tools = ManagerTools::serving(manager, view, options.names, options.wrap);
            let server = Server::new(tools, options.server);
            crate::gateway::follow(&server);
            match options.transport {
                GatewayTransport::Stdio => {
                    let (asked, answered) = (CancellationToken::new(), CancellationToken::new());
                    ::napi::bindgen_prelude::spawn(close_when(
                        server.clone(),
                        ended,
                        asked.clone(),
                        answered.clone(),
                    ));
                    let served = crate::server::stdio::serve(
                        &server,
                        crate::server::process_stdio::stdin(),
                        crate::server::process_stdio::stdout(),
                        answered,
                    )
                    .await;
                    asked.cancel();
                    served.map_err(|e| Error::from_reason(format!("serve: {e}")))?;
                    Ok(None)
                }
                GatewayTransport::Http(http) => {
                    let listening = crate::server::http::serve(server.clone(), http)
                        .await
                        .map_err(|e| Error::from_reason(format!("serve: {e}")))?;
                    let url = listening.url.clone();
                    let (stop, answered) = (CancellationToken::new(), CancellationToken::new());
                    let http = Arc::new(Mutex::new(Some(listening)));
                    let keep_alive = Arc::new(Mutex::new(keep_alive));
                    // The manager's shutdown or close(), whichever comes first, stops it: the
                    // calls in flight answered first.
                    ::napi::bindgen_prelude::spawn({
                        let (answered, http, keep_alive) =
                            (answered.clone(), http.clone(), keep_alive.clone());
                        let closing = close_when(server, ended, stop.clone(), answered.clone());
                        async move {
                            closing.await;
                            stop_http(&http, &keep_alive).await;
                        }
                    });
                    Ok(Some(McpGateway {
                        url,
                        stop,
                        answered,
                        http,
                        keep_alive,
                    }))
                }
            }
        })
    }
}
