//! `AgentTool` objects: plain JS objects (spreadable, JSON-able) whose `execute` is a native
//! closure routing to the tool's server by index and by the server's own tool name.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use ::napi::bindgen_prelude::*;
use ::napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use futures::FutureExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::client_handler::Progress;
use crate::manager::{AgentTool, Manager, ToolOutcome};

type UpdateFn = ThreadsafeFunction<Value, (), Value, Status, false, true>;
/// `EventTarget.addEventListener(type, listener, options)`.
type AddEventListener<'a> = Function<'a, FnArgs<(&'a str, Function<'a, (), ()>, Object<'a>)>, ()>;

/// JS's `JSON.parse`, looked up once per `getAgentTools()` call.
pub type JsonParse<'env> = Function<'env, String, Unknown<'env>>;

pub fn json_parse(env: &Env) -> Result<JsonParse<'_>> {
    let json: Object = env.get_global()?.get_named_property("JSON")?;
    json.get_named_property("parse")
}

pub fn agent_tool_object<'env>(
    env: &'env Env,
    parse: &JsonParse<'env>,
    manager: &Arc<Manager>,
    tool: AgentTool,
) -> Result<Object<'env>> {
    let mut object = Object::new(env)?;
    object.set("name", tool.name.as_str())?;
    object.set("label", tool.tool.label.as_str())?;
    object.set("description", tool.tool.description.as_str())?;
    // A fresh object per call, built by V8's own parser from the string made at discovery:
    // far cheaper than building it value by value through napi.
    object.set(
        "parameters",
        parse.call(tool.tool.parameters_json.to_string())?,
    )?;
    let manager = manager.clone();
    let server_index = tool.server_index;
    let server = tool.server;
    let mcp_name = tool.tool.mcp_name;
    let agent_name = tool.name;
    let execute = env.create_function_from_closure::<Unknown, _, _>("execute", move |ctx| {
        let call = AssertUnwindSafe(|| start_call(&ctx, &manager, server_index, &server, &mcp_name, &agent_name));
        match std::panic::catch_unwind(call) {
            Ok(result) => result,
            Err(_) => resolved(
                ctx.env,
                error_result(format!(
                    "MCP tool error ({server}/{mcp_name}): internal error (panic) in the native addon"
                )),
            ),
        }
    })?;
    object.set("execute", execute)?;
    Ok(object)
}

/// `execute(toolCallId, params, signal?, onUpdate?)`: never throws, always a Promise.
fn start_call(
    ctx: &FunctionCallContext,
    manager: &Arc<Manager>,
    server_index: usize,
    server: &str,
    tool: &str,
    agent_name: &str,
) -> Result<sys::napi_value> {
    let arg = |i: usize| -> Result<Option<Unknown>> {
        if i >= ctx.length() {
            return Ok(None);
        }
        let value: Unknown = ctx.get(i)?;
        match value.get_type()? {
            ValueType::Undefined | ValueType::Null => Ok(None),
            _ => Ok(Some(value)),
        }
    };

    let arguments = match arg(1)? {
        None => None,
        Some(value) if value.get_type()? == ValueType::Object => {
            match ctx.env.from_js_value::<Value, _>(value) {
                Ok(Value::Object(map)) => Some(map),
                Ok(_) => return bad_arguments(ctx.env, server, tool, "must be an object"),
                Err(e) => return bad_arguments(ctx.env, server, tool, &e.to_string()),
            }
        }
        Some(_) => return bad_arguments(ctx.env, server, tool, "must be an object"),
    };

    let cancel = CancellationToken::new();
    if let Some(signal) = arg(2)? {
        watch_abort_signal(ctx.env, signal, &cancel)?;
    }
    let progress = match arg(3)? {
        Some(value) if value.get_type()? == ValueType::Function => {
            let func: Function<Value, ()> = unsafe { value.cast()? };
            let update: UpdateFn = func
                .build_threadsafe_function::<Value>()
                .weak::<true>()
                .build()?;
            let (tx, rx) = mpsc::unbounded_channel();
            let forwarder = spawn_update_forwarder(
                manager.clone(),
                server.to_owned(),
                tool.to_owned(),
                rx,
                update,
            );
            Some((tx, forwarder))
        }
        _ => None,
    };
    let (progress, forwarder) = match progress {
        Some((tx, forwarder)) => (Some(tx), Some(forwarder)),
        None => (None, None),
    };

    let manager = manager.clone();
    let server = server.to_owned();
    let tool = tool.to_owned();
    let agent_name = agent_name.to_owned();
    let fut = async move {
        let run = manager.execute(
            server_index,
            &tool,
            &agent_name,
            arguments,
            &cancel,
            progress,
        );
        let outcome = AssertUnwindSafe(run).catch_unwind().await;
        // The call's progress sender is gone now; let the forwarder hand its last updates to
        // `onUpdate` before the result settles, so no update arrives after the result.
        if let Some(forwarder) = forwarder {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(1), forwarder).await;
        }
        Ok(match outcome {
            Ok(outcome) => outcome_value(outcome),
            Err(_) => error_result(format!(
                "MCP tool error ({server}/{tool}): internal error (panic) in the native addon"
            )),
        })
    };
    Ok(ctx.env.spawn_future(fut)?.raw())
}

fn bad_arguments(env: &Env, server: &str, tool: &str, why: &str) -> Result<sys::napi_value> {
    resolved(
        env,
        error_result(format!(
            "MCP tool error ({server}/{tool}): tool arguments {why}"
        )),
    )
}

fn resolved(env: &Env, value: Value) -> Result<sys::napi_value> {
    Ok(env.spawn_future(async move { Ok(value) })?.raw())
}

/// An already-aborted signal cancels at once; otherwise an `abort` listener cancels the token.
fn watch_abort_signal(env: &Env, signal: Unknown, cancel: &CancellationToken) -> Result<()> {
    if signal.get_type()? != ValueType::Object {
        return Ok(());
    }
    let signal: Object = unsafe { signal.cast()? };
    if signal.get::<bool>("aborted")?.unwrap_or(false) {
        cancel.cancel();
        return Ok(());
    }
    let Some(add) = signal.get::<Unknown>("addEventListener")? else {
        return Ok(());
    };
    if add.get_type()? != ValueType::Function {
        return Ok(());
    }
    let add: AddEventListener = unsafe { add.cast()? };
    let token = cancel.clone();
    let on_abort = env.create_function_from_closure::<(), (), _>("onAbort", move |_ctx| {
        token.cancel();
        Ok(())
    })?;
    let mut options = Object::new(env)?;
    options.set("once", true)?;
    add.apply(signal, FnArgs::from(("abort", on_abort, options)))?;
    Ok(())
}

/// Forwards a call's progress notifications to its `onUpdate`, wrapped like any server text.
fn spawn_update_forwarder(
    manager: Arc<Manager>,
    server: String,
    tool: String,
    mut rx: mpsc::UnboundedReceiver<Progress>,
    update: UpdateFn,
) -> tokio::task::JoinHandle<()> {
    ::napi::bindgen_prelude::spawn(async move {
        while let Some(progress) = rx.recv().await {
            let text = match &progress.message {
                Some(message) => message.clone(),
                None => match progress.total {
                    Some(total) => format!("progress {}/{}", progress.progress, total),
                    None => format!("progress {}", progress.progress),
                },
            };
            let value = json!({
                "content": [{ "type": "text", "text": manager.wrap_untrusted(&server, &tool, &text) }],
                "details": {
                    "progress": progress.progress,
                    "total": progress.total,
                    "externalContent": { "untrusted": true, "source": "mcp_server", "server": server, "tool": tool, "wrapped": true },
                },
            });
            update.call_with_return_value(
                value,
                ThreadsafeFunctionCallMode::NonBlocking,
                |_r, _e| Ok(()),
            );
        }
    })
}

pub fn outcome_value(outcome: ToolOutcome) -> Value {
    match outcome {
        ToolOutcome::Ok { text, server, tool } => json!({
            "content": [{ "type": "text", "text": text }],
            "details": {
                "externalContent": {
                    "untrusted": true,
                    "source": "mcp_server",
                    "server": server,
                    "tool": tool,
                    "wrapped": true,
                },
            },
        }),
        ToolOutcome::Err { text } => error_result(text),
    }
}

fn error_result(text: String) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "details": { "error": true } })
}
