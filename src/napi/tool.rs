//! `AgentTool` objects: plain JS objects (spreadable, JSON-able) whose `execute` is a native
//! closure routing to the tool's server by index and by the server's own tool name.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use ::napi::bindgen_prelude::*;
use futures::FutureExt;
use rmcp::model::JsonObject;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::settle::Settler;
use crate::js_text::JsText;
use crate::manager::{AgentTool, CallRequest, Manager, View};
use crate::session::Progress;
use crate::tool_result::{ExternalContent, RichParts, ToolCallResult, tool_arguments};

/// `getAgentTools()` for one set of tools, made once per set in one of two ways:
///
/// - **Literal** (sets whose text is at most [`MAX_LITERAL_BYTES`]): a JS function whose body
///   is one array literal of every tool object; V8 clones fresh objects from the literal's
///   boilerplates, the fastest way there is (1,000 tools in about 1 ms), but compiling it costs
///   time and memory that grow faster than the set (100,000 tools: 2 s and about 700 MB).
/// - **Templates** (larger sets): the names, labels and descriptions as JS strings and every
///   schema as a parsed template, from one `JSON.parse`; each call makes fresh objects whose
///   `parameters` are deep copies of the templates. About twice the literal's time per call
///   for small sets, but linear in time and memory however large the set.
///
/// Either way each call returns fresh objects all the way down (docs/design.md).
pub struct ToolFactory {
    /// What the factory was built for: the agent name, the server and the discovery's schema
    /// text (compared by pointer: every discovery makes new ones) of each tool.
    key: Vec<(String, usize, Arc<str>)>,
    build: FunctionRef<(), Unknown<'static>>,
}

/// Sets whose literal source would be larger than this are built from templates.
const MAX_LITERAL_BYTES: usize = 1 << 20;

/// About the size of the text either builder needs for `tools`.
fn literal_size(tools: &[AgentTool]) -> usize {
    tools
        .iter()
        .map(|t| {
            t.tool.parameters_json.len()
                + t.tool.description.len()
                + t.tool.label.len()
                + t.name.len()
                + 80
        })
        .sum()
}

/// `(call, data) => build`: `data` is the JSON text `[names, labels, descriptions, schemas]`.
/// Only built-ins captured when it runs are used, so later changes to `JSON`, `Object` or
/// `Array` by user code do not reach it; a `__proto__` key is defined, never assigned (an
/// assignment would set the prototype).
const TEMPLATE_BUILDER: &str = r#"(function (call, data) {
  'use strict';
  const all = JSON.parse(data), keys = Object.keys, isArray = Array.isArray, define = Object.defineProperty;
  const names = all[0], labels = all[1], descriptions = all[2], schemas = all[3];
  function copy(v) {
    if (typeof v !== 'object' || v === null) return v;
    if (isArray(v)) {
      const a = [];
      for (let i = 0; i < v.length; i++) a[i] = copy(v[i]);
      return a;
    }
    const o = {}, ks = keys(v);
    for (let j = 0; j < ks.length; j++) {
      const k = ks[j];
      if (k === '__proto__') define(o, k, { value: copy(v[k]), writable: true, enumerable: true, configurable: true });
      else o[k] = copy(v[k]);
    }
    return o;
  }
  return function () {
    const out = [];
    for (let i = 0; i < names.length; i++) {
      out[i] = { name: names[i], label: labels[i], description: descriptions[i], parameters: copy(schemas[i]),
        execute: (a, b, c, d) => call(i, a, b, c, d) };
    }
    return out;
  };
})"#;

impl ToolFactory {
    pub fn matches(&self, tools: &[AgentTool]) -> bool {
        self.key.len() == tools.len()
            && self
                .key
                .iter()
                .zip(tools)
                .all(|((name, index, schema), tool)| {
                    *index == tool.server_index
                        && Arc::ptr_eq(schema, &tool.tool.parameters_json)
                        && *name == tool.name
                })
    }

    pub fn new(
        env: &Env,
        manager: &Arc<Manager>,
        settler: &Arc<Settler<CallResult>>,
        tools: Vec<AgentTool>,
        view: Option<&Arc<View>>,
    ) -> Result<Self> {
        let literal = literal_size(&tools) <= MAX_LITERAL_BYTES;
        let text = if literal {
            factory_source(&tools)
        } else {
            factory_data(&tools)
        };
        let key = tools
            .iter()
            .map(|t| {
                (
                    t.name.clone(),
                    t.server_index,
                    t.tool.parameters_json.clone(),
                )
            })
            .collect();
        let routes: Arc<[Route]> = tools
            .into_iter()
            .map(|t| Route {
                server_index: t.server_index,
                server: t.server,
                mcp_name: t.tool.mcp_name,
                agent_name: t.name,
                view: view.cloned(),
            })
            .collect();
        let manager = manager.clone();
        let settler = settler.clone();
        // `call(k, toolCallId, params, aborted, n, updates)`: the one native function behind
        // every tool's `execute` of this set, behind the JS half that turns `signal` and
        // `onUpdate` into `aborted`, `n` and `updates` (see `execute_js`).
        let execute_js = settler.clone();
        let call = env.create_function_from_closure::<Unknown, _, _>("execute", move |ctx| {
            let route = ctx
                .get::<u32>(0)
                .ok()
                .and_then(|k| routes.get(k as usize))
                .ok_or_else(|| Error::new(Status::InvalidArg, "unknown tool"))?;
            let call = AssertUnwindSafe(|| start_call(&ctx, 1, &manager, &settler, route));
            match std::panic::catch_unwind(call) {
                Ok(result) => result,
                Err(_) => settler.resolved(
                    ctx.env,
                    CallResult::from(ToolCallResult::error(
                        &route.server,
                        &route.mcp_name,
                        PANIC_MESSAGE,
                    )),
                ),
            }
        })?;
        let call = execute_js.execute_fn(env, call.to_unknown())?;
        let failed = |e: Error| {
            Error::new(
                e.status,
                format!("building the agent tools failed: {}", e.reason),
            )
        };
        let build = if literal {
            let outer: Function<Unknown, Function<(), Unknown<'static>>> =
                env.run_script(&text).map_err(failed)?;
            outer.call(call).map_err(failed)?
        } else {
            let outer: Function<FnArgs<(Unknown, String)>, Function<(), Unknown<'static>>> =
                env.run_script(TEMPLATE_BUILDER).map_err(failed)?;
            outer.call(FnArgs::from((call, text))).map_err(failed)?
        };
        Ok(Self {
            key,
            build: build.create_ref()?,
        })
    }

    /// A fresh array of fresh tool objects.
    pub fn build<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        let tools = self.build.borrow_back(env)?.call(())?;
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), tools.raw()) })
    }
}

/// `getAgentTools()` of a manager or a view: the builder of its current tool set, made again
/// when the set changes.
#[derive(Default)]
pub struct AgentTools(std::sync::Mutex<Option<Arc<ToolFactory>>>);

impl AgentTools {
    /// Fresh tool objects for `tools` (which `view`, if any, shows).
    pub fn build<'env>(
        &self,
        env: &'env Env,
        manager: &Arc<Manager>,
        settler: &Arc<Settler<CallResult>>,
        tools: Vec<AgentTool>,
        view: Option<&Arc<View>>,
    ) -> Result<Unknown<'env>> {
        if tools.is_empty() {
            return Ok(env.create_array(0)?.to_unknown());
        }
        // Never held while JS runs (a schema with `__proto__` calls the global `JSON.parse`,
        // which user code could have replaced with something that calls back in here).
        let cached = {
            let factory = self.0.lock().unwrap_or_else(|p| p.into_inner());
            factory.as_ref().filter(|f| f.matches(&tools)).cloned()
        };
        let factory = match cached {
            Some(factory) => factory,
            None => {
                let factory = Arc::new(ToolFactory::new(env, manager, settler, tools, view)?);
                *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(factory.clone());
                factory
            }
        };
        factory.build(env)
    }
}

/// Where a tool's calls go.
struct Route {
    server_index: usize,
    server: String,
    mcp_name: String,
    agent_name: String,
    view: Option<Arc<View>>,
}

impl Route {
    fn request(&self, tool_call_id: String, arguments: Option<JsonObject>) -> CallRequest {
        CallRequest {
            tool_call_id,
            server_index: self.server_index,
            tool: self.mcp_name.clone(),
            agent_name: self.agent_name.clone(),
            arguments,
            cancel: CancellationToken::new(),
            progress: None,
            view: self.view.clone(),
            passthrough: false,
        }
    }
}

/// The literal builder's source: one array literal of every tool object (names, labels and
/// descriptions as JSON string literals, each schema as its JSON text, valid JavaScript since
/// ES2019). A schema with a `__proto__` key goes through `JSON.parse`, since a literal would
/// set the prototype instead of the property.
fn factory_source(tools: &[AgentTool]) -> String {
    fn string(out: &mut String, value: &str) {
        // serde_json escapes quotes, backslashes and control characters; U+2028/U+2029 are
        // legal in JS string literals since ES2019.
        out.push_str(&serde_json::to_string(value).unwrap_or_else(|_| "\"\"".to_owned()));
    }
    let size = literal_size(tools);
    let mut out = String::with_capacity(size + 64);
    out.push_str("(function (call) { return function () { return [");
    for (k, tool) in tools.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str("\n{name:");
        string(&mut out, &tool.name);
        out.push_str(",label:");
        string(&mut out, &tool.tool.label);
        out.push_str(",description:");
        string(&mut out, &tool.tool.description);
        out.push_str(",parameters:");
        let schema = &*tool.tool.parameters_json;
        if schema.contains("\"__proto__\"") {
            out.push_str("JSON.parse(");
            string(&mut out, schema);
            out.push(')');
        } else {
            out.push_str(schema);
        }
        out.push_str(&format!(",execute:(a,b,c,d)=>call({k},a,b,c,d)}}"));
    }
    out.push_str("]; }; })");
    out
}

/// `[names, labels, descriptions, schemas]` as one JSON text (each schema is already JSON).
fn factory_data(tools: &[AgentTool]) -> String {
    fn strings<'a>(out: &mut String, values: impl Iterator<Item = &'a str>) {
        out.push('[');
        for (i, value) in values.enumerate() {
            if i > 0 {
                out.push(',');
            }
            // serde_json escapes quotes, backslashes and control characters.
            out.push_str(&serde_json::to_string(value).unwrap_or_else(|_| "\"\"".to_owned()));
        }
        out.push(']');
    }
    let mut out = String::with_capacity(literal_size(tools));
    out.push('[');
    strings(&mut out, tools.iter().map(|t| t.name.as_str()));
    out.push(',');
    strings(&mut out, tools.iter().map(|t| t.tool.label.as_str()));
    out.push(',');
    strings(&mut out, tools.iter().map(|t| t.tool.description.as_str()));
    out.push_str(",[");
    for (i, tool) in tools.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&tool.tool.parameters_json);
    }
    out.push_str("]]");
    out
}

/// `execute(toolCallId, params, signal?, onUpdate?)`: never throws, always a Promise.
/// `first` is the position of `toolCallId` among the native function's arguments.
fn start_call(
    ctx: &FunctionCallContext,
    first: usize,
    manager: &Arc<Manager>,
    settler: &Settler<CallResult>,
    route: &Route,
) -> Result<sys::napi_value> {
    let server = route.server.as_str();
    let tool = route.mcp_name.as_str();
    let arg = |i: usize| -> Result<Option<Unknown>> {
        let i = first + i;
        if i >= ctx.length() {
            return Ok(None);
        }
        let value: Unknown = ctx.get(i)?;
        match value.get_type()? {
            ValueType::Undefined | ValueType::Null => Ok(None),
            _ => Ok(Some(value)),
        }
    };

    // The `toolCall` event names the call; anything but a string names it "".
    let call_id = match arg(0)? {
        Some(value) if value.get_type()? == ValueType::String => String::from_unknown(value)?,
        _ => String::new(),
    };

    // `params` as the TypeScript SDK sends it: `JSON.stringify` (`toJSON`, dropped `undefined`),
    // by V8 in one call; a cycle or a BigInt is V8's TypeError, reported as such.
    let arguments = match arg(1)? {
        None => Ok(None),
        Some(value) if value.get_type()? == ValueType::Object => {
            match super::json_text(ctx.env, value) {
                Ok(text) => tool_arguments(text.as_deref()).map(Some),
                Err(e) => Err(e.reason),
            }
        }
        Some(_) => tool_arguments(None).map(Some),
    };
    let arguments = match arguments {
        Ok(arguments) => arguments,
        Err(why) => {
            let refused = manager.refuse_call(&route.request(call_id, None), &why);
            return settler.resolved(ctx.env, CallResult::from(refused));
        }
    };

    // Set by the JS half (`execute_js`): the signal was already aborted, the call's number (0:
    // neither an abort listener nor `onUpdate`), and whether it has an `onUpdate`.
    let cancel = CancellationToken::new();
    if matches!(arg(2)?, Some(value) if value.get_type()? == ValueType::Boolean && unsafe { value.cast::<bool>()? })
    {
        cancel.cancel();
    }
    let n = match arg(3)? {
        Some(value) if value.get_type()? == ValueType::Number => {
            (unsafe { value.cast::<f64>()? }) as u64
        }
        _ => 0,
    };
    let wants_updates = matches!(arg(4)?, Some(value) if value.get_type()? == ValueType::Boolean && unsafe { value.cast::<bool>()? });
    let listening = (n != 0).then(|| settler.listen(n, cancel.clone()));
    // Progress is asked of the server only for a call with an `onUpdate`.
    let (progress, updates) = if n != 0 && wants_updates {
        let (tx, rx) = mpsc::unbounded_channel();
        (Some(tx), Some((rx, settler.updates(n))))
    } else {
        (None, None)
    };

    let manager = manager.clone();
    let mut request = route.request(call_id, arguments);
    request.cancel = cancel;
    request.progress = progress;
    let server = server.to_owned();
    let tool = tool.to_owned();
    let fut = async move {
        let _listening = listening;
        let run = AssertUnwindSafe(manager.execute_call(request)).catch_unwind();
        let outcome = match updates {
            None => run.await,
            Some((mut rx, updates)) => {
                // Updates are queued for JS as they come, and what came with the answer after
                // them: all of them before the result.
                let mut run = std::pin::pin!(run);
                let send = |progress: &Progress| {
                    updates.send(manager.progress_update(&server, &tool, progress).to_json());
                };
                let outcome = std::future::poll_fn(|cx| {
                    while let std::task::Poll::Ready(Some(progress)) = rx.poll_recv(cx) {
                        send(&progress);
                    }
                    run.as_mut().poll(cx)
                })
                .await;
                while let Ok(progress) = rx.try_recv() {
                    send(&progress);
                }
                outcome
            }
        };
        CallResult::from(
            outcome.unwrap_or_else(|_| ToolCallResult::error(&server, &tool, PANIC_MESSAGE)),
        )
    };
    settler.spawn(ctx.env, fut)
}

/// What the binding says when a panic was caught on the way.
const PANIC_MESSAGE: &str = "internal error (panic) in the native addon";

/// A [`ToolCallResult`] on its way to JS: the text converted on the tokio worker that finished
/// the call, so the JS thread only copies it, then built straight into JS objects (no
/// intermediate JSON value), field for field as [`ToolCallResult::to_json`] shows it.
pub struct CallResult {
    text: JsText,
    external: Option<ExternalContent>,
    rich: RichParts,
}

impl From<ToolCallResult> for CallResult {
    fn from(result: ToolCallResult) -> Self {
        Self {
            text: JsText::new(result.text),
            external: result.external,
            rich: result.rich,
        }
    }
}

impl ToNapiValue for CallResult {
    unsafe fn to_napi_value(env: sys::napi_env, value: Self) -> Result<sys::napi_value> {
        let env = Env::from_raw(env);
        let text = super::text::js_string(&env, value.text)?;
        let RichParts {
            images,
            structured,
            server_error,
            hygiene,
            suspicious,
            // (Only a gateway asks for it; an agent tool's call never does.)
            passthrough: _,
        } = value.rich;
        let plain = images.is_empty()
            && structured.is_none()
            && hygiene.is_none()
            && suspicious.is_empty()
            && !server_error;
        let extra = (!plain).then(|| {
            let mut extra = serde_json::Map::new();
            let images: Vec<_> = images
                .into_iter()
                .map(|image| serde_json::json!([image.data, image.mime_type]))
                .collect();
            extra.insert("images".into(), images.into());
            if let Some(structured) = structured {
                extra.insert("structured".into(), structured);
            }
            extra.insert("error".into(), server_error.into());
            if let Some(hygiene) = hygiene {
                extra.insert("hygiene".into(), hygiene.to_json());
            }
            if !suspicious.is_empty() {
                extra.insert("suspicious".into(), serde_json::json!(suspicious));
            }
            serde_json::Value::Object(extra).to_string()
        });
        let external = value
            .external
            .as_ref()
            .map(|e| (e.server.as_str(), e.tool.as_str()));
        super::result_shape::tool_result(&env, text.raw(), external, extra.as_deref())
    }
}
