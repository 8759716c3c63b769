//! `class McpServerHost` for JS: tools written in JS served as an MCP server (the core's
//! `server` module does the serving; this file converts).
//!
//! Each tool's handler sits behind an adapter that calls it as `handler(args, { signal,
//! progress, log, requestId })` and always returns a promise of text: `r<JSON>` for what it
//! returned (sync or async), `e<message>` for what it threw, so nothing it does can reject in
//! Rust. `progress` and `log` reach the call's notices through one native function per tool;
//! `signal` is aborted when the core drops the call (the client cancelled, the time ran out, the
//! host closed). Handlers are called through weak threadsafe functions: a host that is not
//! serving never keeps Node alive; while it serves, one ref'd threadsafe function (HTTP) or the
//! stdio session's own promise does, until `close()`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use ::napi::bindgen_prelude::*;
use ::napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use indexmap::IndexMap;
use napi_derive::napi;
use rmcp::model::Tool;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::server::handler::Server;
use crate::server::http::HttpServer;
use crate::server::options::{self, ServerOptions};
use crate::server::provider::{
    CallContext, CallFuture, Cancel, JsonObject, LogLevel, Notices, ToolProvider, result_from_json,
};
use crate::server::validate;

/// `(handler, report, levels) => [call(id, argsText, requestIdText), abort(id, reason)]`.
/// `report(id, 0, progress, total, message)` and `report(id, 1, levelIndex, undefined, dataText)`.
const ADAPTER: &str = r#"(function (handler, report, levels) {
  'use strict';
  const parse = JSON.parse, stringify = JSON.stringify, controllers = new Map();
  const message = (e) => (e instanceof Error ? e.message : String(e));
  const finite = (n) => typeof n === 'number' && Number.isFinite(n);
  return [
    function (id, argsText, requestIdText) {
      const controller = new AbortController();
      controllers.set(id, controller);
      return Promise.resolve()
        .then(() => {
          const ctx = Object.freeze({
            signal: controller.signal,
            requestId: parse(requestIdText),
            progress(progress, total, text) {
              if (!finite(progress)) throw new TypeError('progress(progress, total?, message?): progress must be a finite number');
              if (total !== undefined && total !== null && !finite(total)) throw new TypeError('progress(progress, total?, message?): total must be a finite number');
              if (text !== undefined && text !== null && typeof text !== 'string') throw new TypeError('progress(progress, total?, message?): message must be a string');
              report(id, 0, progress, total ?? undefined, text ?? undefined);
            },
            log(level, data) {
              const i = levels.indexOf(level);
              if (i < 0) throw new TypeError('log(level, data): level must be one of ' + levels.join(', '));
              const text = stringify(data === undefined ? null : data);
              report(id, 1, i, undefined, text === undefined ? 'null' : text);
            },
          });
          return handler(parse(argsText), ctx);
        })
        .then(
          (value) => {
            try {
              const text = stringify(value);
              return 'r' + (text === undefined ? 'null' : text);
            } catch (e) {
              return 'ethe tool returned a value that is not JSON: ' + message(e);
            }
          },
          (e) => 'e' + message(e),
        )
        .finally(() => controllers.delete(id));
    },
    function (id, reason) {
      const controller = controllers.get(id);
      if (controller) {
        controllers.delete(id);
        controller.abort(new Error(reason));
      }
    },
  ];
})"#;

type CallFn = ThreadsafeFunction<
    FnArgs<(u32, String, String)>,
    Promise<String>,
    FnArgs<(u32, String, String)>,
    Status,
    false,
    true,
>;
type AbortFn =
    ThreadsafeFunction<FnArgs<(u32, String)>, (), FnArgs<(u32, String)>, Status, false, true>;
pub(super) type KeepAlive = ThreadsafeFunction<(), (), (), Status, false, false>;

struct JsTool {
    tool: Tool,
    timeout: Option<Duration>,
    call: Arc<CallFn>,
    abort: Arc<AbortFn>,
}

/// Why a call ends when the host closes (its `signal`'s reason, and the client's answer).
const HOST_CLOSED: &str = "the MCP server host closed";

/// The host's tools as the core's provider.
#[derive(Default)]
struct JsTools {
    /// The host's stop token (cancelled by `close()`).
    closed: CancellationToken,
    tools: RwLock<IndexMap<String, Arc<JsTool>>>,
    /// The notices of the calls in flight, by call id (what `progress`/`log` reach).
    calls: Arc<Mutex<HashMap<u32, Notices>>>,
    next: AtomicU32,
}

impl JsTools {
    fn get(&self, name: &str) -> Option<Arc<JsTool>> {
        self.tools
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }
}

/// Aborts the handler's `signal` when the call is dropped before it settled, and forgets the
/// call's notices either way.
struct CallGuard {
    abort: Arc<AbortFn>,
    calls: Arc<Mutex<HashMap<u32, Notices>>>,
    id: u32,
    cancel: Cancel,
    /// The host's `close()`, which ends every call too.
    closed: CancellationToken,
    settled: bool,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
        if !self.settled {
            let reason = if self.closed.is_cancelled() {
                HOST_CLOSED.to_owned()
            } else {
                self.cancel.reason()
            };
            self.abort.call(
                FnArgs::from((self.id, reason)),
                ThreadsafeFunctionCallMode::NonBlocking,
            );
        }
    }
}

impl ToolProvider for JsTools {
    fn tools(&self) -> Vec<Tool> {
        self.tools
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .map(|t| t.tool.clone())
            .collect()
    }

    fn tool(&self, name: &str) -> Option<Tool> {
        self.get(name).map(|t| t.tool.clone())
    }

    fn timeout(&self, name: &str) -> Option<Duration> {
        self.get(name).and_then(|t| t.timeout)
    }

    fn call(&self, name: &str, args: JsonObject, ctx: CallContext) -> CallFuture {
        let tool = self.get(name);
        let calls = self.calls.clone();
        let closed = self.closed.clone();
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let name = name.to_owned();
        Box::pin(async move {
            let Some(tool) = tool else {
                return Err(format!("Tool '{name}' was removed"));
            };
            calls
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(id, ctx.notices.clone());
            let mut guard = CallGuard {
                abort: tool.abort.clone(),
                calls,
                id,
                cancel: ctx.cancel.clone(),
                closed,
                settled: false,
            };
            let arguments = Value::Object(args).to_string();
            let promise = tool
                .call
                .call_async_catch(FnArgs::from((id, arguments, ctx.request_id)))
                .await
                .map_err(|e| format!("Tool '{name}' could not be run: {}", e.reason))?;
            let answer = promise.await;
            guard.settled = true;
            let text = answer.map_err(|e| format!("Tool '{name}' failed: {}", e.reason))?;
            match text.split_at_checked(1) {
                Some(("r", json)) => {
                    let value: Value = serde_json::from_str(json)
                        .map_err(|e| format!("Tool '{name}' returned unreadable JSON: {e}"))?;
                    result_from_json(value).map_err(|why| format!("Tool '{name}': {why}"))
                }
                Some(("e", message)) => Err(message.to_owned()),
                _ => Err(format!("Tool '{name}' gave no answer")),
            }
        })
    }
}

/// What serving holds; kept alive by the serving tasks as well as the JS object, so a host
/// nobody references keeps serving until `close()`.
struct HostState {
    stop: CancellationToken,
    closed: AtomicBool,
    stdio: AtomicBool,
    http: Mutex<Option<HttpServer>>,
    /// Holds the event loop while HTTP is served.
    keep_alive: Mutex<Option<KeepAlive>>,
}

#[napi(object)]
pub struct McpServerHttpInfo {
    /// Where clients connect: `http://<host>:<port><path>`, with the port actually bound.
    pub url: String,
}

/// Tools written in JS, served as an MCP server over stdio or Streamable HTTP.
#[napi]
pub struct McpServerHost {
    tools: Arc<JsTools>,
    server: Arc<Server<JsTools>>,
    state: Arc<HostState>,
}

/// A `TypeError` with `message`, thrown.
pub(super) fn type_error(env: &Env, message: String) -> Error {
    match env.throw_type_error(&message, None) {
        Ok(()) => Error::new(Status::PendingException, message),
        Err(_) => Error::new(Status::InvalidArg, message),
    }
}

#[napi]
impl McpServerHost {
    /// `{ name, version, instructions?, limits?, toolTimeoutMs? }`; throws a TypeError naming a
    /// bad option. Nothing is served until `serveStdio()` or `serveHttp()`.
    #[napi(constructor, ts_args_type = "options: McpServerHostOptions")]
    pub fn new(env: &Env, options: Unknown) -> Result<Self> {
        let json = super::json_from_js(env, options)
            .map_err(|e| type_error(env, format!("McpServerHost: {}", e.reason)))?;
        let options = ServerOptions::from_json(&json)
            .map_err(|e| type_error(env, format!("McpServerHost: {e}")))?;
        let stop = CancellationToken::new();
        let tools = Arc::new(JsTools {
            closed: stop.clone(),
            ..JsTools::default()
        });
        let host = Self {
            server: Server::new(tools.clone(), options),
            tools,
            state: Arc::new(HostState {
                stop,
                closed: AtomicBool::new(false),
                stdio: AtomicBool::new(false),
                http: Mutex::default(),
                keep_alive: Mutex::default(),
            }),
        };
        // A worker that ends without close() stops serving all the same.
        let (state, server) = (host.state.clone(), host.server.clone());
        super::env_teardown::on_teardown(env, move || {
            ::napi::bindgen_prelude::spawn(close(state, server));
        })?;
        Ok(host)
    }

    /// Adds a tool; sessions already open are sent `notifications/tools/list_changed`. Throws a
    /// TypeError naming a bad field, an Error for a name already added.
    #[napi(ts_args_type = "tool: McpServerTool")]
    pub fn add_tool(&self, env: &Env, tool: Unknown) -> Result<()> {
        if tool.get_type()? != ValueType::Object {
            return Err(type_error(
                env,
                format!(
                    "addTool: the tool must be an object {{ name, description, inputSchema, handler, ... }}, got {}",
                    super::type_name(&tool)
                ),
            ));
        }
        let object: Object = unsafe { tool.cast()? };
        let handler = object.get::<Unknown>("handler")?;
        match &handler {
            Some(h) if h.get_type()? == ValueType::Function => {}
            other => {
                let got = other.as_ref().map_or("undefined", super::type_name);
                return Err(type_error(
                    env,
                    format!("addTool: handler must be a function, got {got}"),
                ));
            }
        }
        let handler = handler.ok_or_else(|| Error::from_reason("handler"))?;
        // JSON.stringify leaves the handler out.
        let mut definition = super::json_from_js(env, tool)
            .map_err(|e| type_error(env, format!("addTool: {}", e.reason)))?;
        let timeout_ms = definition
            .as_object_mut()
            .and_then(|o| o.remove("timeoutMs"));
        let timeout = options::timeout_ms(timeout_ms.as_ref(), "timeoutMs")
            .map_err(|e| type_error(env, format!("addTool: {e}")))?;
        let tool = validate::tool_definition(definition)
            .map_err(|(field, why)| type_error(env, format!("addTool: {field} {why}")))?;
        let name = tool.name.to_string();
        if self.tools.get(&name).is_some() {
            return Err(Error::new(
                Status::InvalidArg,
                format!("addTool: a tool named '{name}' was already added (removeTool it first)"),
            ));
        }
        let (call, abort) = self.adapt(env, handler)?;
        self.tools
            .tools
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                name,
                Arc::new(JsTool {
                    tool,
                    timeout,
                    call,
                    abort,
                }),
            );
        self.tools_changed(None);
        Ok(())
    }

    /// Removes a tool (calls in flight finish); `true` when there was one. Open sessions are sent
    /// `notifications/tools/list_changed`.
    #[napi(ts_args_type = "name: string")]
    pub fn remove_tool(&self, name: Unknown) -> Result<bool> {
        let name = super::text::rust_string(super::string_arg("removeTool", "name", name)?)?.0;
        let removed = self
            .tools
            .tools
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .shift_remove(&name)
            .is_some();
        if removed {
            self.tools_changed(Some(name));
        }
        Ok(removed)
    }

    /// The names of the tools, in the order `tools/list` gives them.
    #[napi]
    pub fn tool_names(&self) -> Vec<String> {
        self.tools
            .tools
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    /// Serves MCP over this process's stdin and stdout until the client closes stdin or
    /// `close()` is called; resolves then. Only JSON-RPC lines are written to stdout (nothing
    /// else in the process may write there). Rejects when the host is closed, already serves
    /// stdio, or the client's handshake is wrong.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn serve_stdio<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let refused = if self.state.closed.load(Ordering::SeqCst) {
            Some("serveStdio: the host is closed")
        } else if self.state.stdio.swap(true, Ordering::SeqCst) {
            Some("serveStdio: already serving stdio")
        } else {
            None
        };
        let (server, state) = (self.server.clone(), self.state.clone());
        env.spawn_future(async move {
            if let Some(refused) = refused {
                return Err(Error::from_reason(refused));
            }
            let stop = state.stop.child_token();
            crate::server::stdio::serve(
                &server,
                crate::server::process_stdio::stdin(),
                crate::server::process_stdio::stdout(),
                stop,
            )
            .await
            .map_err(Error::from_reason)
        })
    }

    /// Serves MCP over Streamable HTTP; resolves `{ url }` once listening. Options: `host`
    /// (default `127.0.0.1`), `port` (default 0: a free one), `path` (default `/mcp`),
    /// `stateless` (default false: sessions), `allowedOrigins`, `allowedHosts`. Throws a
    /// TypeError naming a bad option; rejects when the host is closed, already serves HTTP, or
    /// cannot listen.
    #[napi(
        ts_args_type = "options?: McpServerHttpOptions",
        ts_return_type = "Promise<McpServerHttpInfo>"
    )]
    pub fn serve_http<'env>(
        &self,
        env: &'env Env,
        options: Option<Unknown>,
    ) -> Result<PromiseRaw<'env, McpServerHttpInfo>> {
        let json = match options {
            Some(value) => super::json_from_js(env, value)
                .map_err(|e| type_error(env, format!("serveHttp: {}", e.reason)))?,
            None => Value::Null,
        };
        let options =
            options::http_options(&json).map_err(|e| type_error(env, format!("serveHttp: {e}")))?;
        let refused = if self.state.closed.load(Ordering::SeqCst) {
            Some("serveHttp: the host is closed".to_owned())
        } else {
            let mut keep_alive = self
                .state
                .keep_alive
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if keep_alive.is_some() {
                Some("serveHttp: already serving HTTP".to_owned())
            } else {
                let noop = env.create_function_from_closure::<(), (), _>("serving", |_| Ok(()))?;
                *keep_alive = Some(noop.build_threadsafe_function::<()>().build()?);
                None
            }
        };
        let (server, state) = (self.server.clone(), self.state.clone());
        env.spawn_future(async move {
            if let Some(refused) = refused {
                return Err(Error::from_reason(refused));
            }
            match crate::server::http::serve(server, options).await {
                Ok(http) => {
                    let url = http.url.clone();
                    *state.http.lock().unwrap_or_else(|p| p.into_inner()) = Some(http);
                    if state.closed.load(Ordering::SeqCst) {
                        // close() ran while we were binding.
                        close_http(&state).await;
                        return Err(Error::from_reason("serveHttp: the host was closed"));
                    }
                    // Serving holds the host until close().
                    let held = state.clone();
                    ::napi::bindgen_prelude::spawn(async move {
                        held.stop.cancelled().await;
                        drop(held);
                    });
                    Ok(McpServerHttpInfo { url })
                }
                Err(e) => {
                    state
                        .keep_alive
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .take();
                    Err(Error::from_reason(format!("serveHttp: {e}")))
                }
            }
        })
    }

    /// Stops serving: calls in flight are cancelled (their `signal` aborted) and answered with
    /// an `isError` result saying the host closed, then sessions end, the HTTP server stops
    /// listening, and the host no longer keeps Node alive. Idempotent; never rejects.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> Result<PromiseRaw<'env, ()>> {
        let closing = close(self.state.clone(), self.server.clone());
        env.spawn_future(async move {
            closing.await;
            Ok(())
        })
    }
}

/// `close()`: the answers first, then the transports they travel on.
fn close(
    state: Arc<HostState>,
    server: Arc<Server<JsTools>>,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    state.closed.store(true, Ordering::SeqCst);
    async move {
        server.close(HOST_CLOSED).await;
        state.stop.cancel();
        close_http(&state).await;
    }
}

impl McpServerHost {
    /// The adapter's `call` and `abort` for `handler`, as weak threadsafe functions.
    fn adapt(&self, env: &Env, handler: Unknown) -> Result<(Arc<CallFn>, Arc<AbortFn>)> {
        let calls = self.tools.calls.clone();
        let report = env.create_function_from_closure::<Unknown, (), _>("report", move |ctx| {
            let id: u32 = ctx.get(0)?;
            let kind: u32 = ctx.get(1)?;
            let number: f64 = ctx.get(2)?;
            let total: Option<f64> = ctx.get(3)?;
            let text: Option<String> = ctx.get(4)?;
            let notices = calls
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&id)
                .cloned();
            // A call that has ended takes nothing more.
            let Some(notices) = notices else {
                return Ok(());
            };
            if kind == 0 {
                notices.progress(number, total, text);
            } else if let Some(level) = LogLevel::from_index(number as u8) {
                let data = text
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .unwrap_or(Value::Null);
                notices.log(level, data);
            }
            Ok(())
        })?;
        let levels = LogLevel::NAMES.map(str::to_owned).to_vec();
        let adapter: Function<FnArgs<(Unknown, Function<Unknown, ()>, Vec<String>)>, Array> =
            env.run_script(ADAPTER)?;
        let pair = adapter.call(FnArgs::from((handler, report, levels)))?;
        let call: Function<FnArgs<(u32, String, String)>, Promise<String>> = pair
            .get(0)?
            .ok_or_else(|| Error::new(Status::GenericFailure, "adapter"))?;
        let abort: Function<FnArgs<(u32, String)>, ()> = pair
            .get(1)?
            .ok_or_else(|| Error::new(Status::GenericFailure, "adapter"))?;
        let call: CallFn = call
            .build_threadsafe_function::<FnArgs<(u32, String, String)>>()
            .weak::<true>()
            .build()?;
        let abort: AbortFn = abort
            .build_threadsafe_function::<FnArgs<(u32, String)>>()
            .weak::<true>()
            .build()?;
        Ok((Arc::new(call), Arc::new(abort)))
    }

    /// Tells open sessions the tools changed (nothing when none is open).
    fn tools_changed(&self, removed: Option<String>) {
        let server = self.server.clone();
        ::napi::bindgen_prelude::spawn(async move {
            server.tools_changed(removed.as_deref()).await;
        });
    }
}

/// Stops the HTTP server, if one runs, and lets the event loop go.
async fn close_http(state: &HostState) {
    let http = state.http.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(http) = http {
        http.close().await;
    }
    state
        .keep_alive
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
}
