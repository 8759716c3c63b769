//! One tool call as the manager runs it: where it goes, what it carries, how it can end early.

use std::sync::Arc;

use rmcp::model::JsonObject;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use std::time::Instant;

use super::{Manager, View};
use crate::bridge;
use crate::config::ResultMode;
use crate::error::CallError;
use crate::events::{Event, ToolCallRecord};
use crate::hooks::{self, Before};
use crate::options::OnSuspicious;
use crate::security::hygiene::Hygiene;
use crate::session::Progress;
use crate::supervisor::Outcome;
use crate::tool_result::{RichParts, ToolCallResult, tool_error_text};

/// A tool call: the route it was offered under, its arguments, its cancellation and where its
/// progress goes.
pub struct CallRequest {
    /// The host's id for the call (what the `toolCall` event names); may be empty.
    pub tool_call_id: String,
    pub server_index: usize,
    /// The server's own name for the tool.
    pub tool: String,
    /// The name the tool was offered to the agent under.
    pub agent_name: String,
    pub arguments: Option<JsonObject>,
    pub cancel: CancellationToken,
    pub progress: Option<mpsc::UnboundedSender<Progress>>,
    /// The view the tool was offered through, if any: its servers and allow/deny apply too.
    pub view: Option<Arc<View>>,
    /// Keep the server's result as MCP content too (`RichParts::passthrough`), for a caller
    /// that serves it onward unwrapped (a gateway with `wrap: false`).
    pub passthrough: bool,
}

impl Manager {
    /// Runs one tool call the way `AgentTool.execute` does: never an `Err`, always an outcome.
    /// `agent_name` is the name the tool was offered under; `allow`/`deny` are checked again
    /// here, so a tool object kept from before a policy change cannot bypass it.
    pub async fn execute(
        &self,
        server_index: usize,
        tool: &str,
        agent_name: &str,
        arguments: Option<JsonObject>,
        cancel: &CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> ToolCallResult {
        self.execute_call(CallRequest {
            tool_call_id: String::new(),
            server_index,
            tool: tool.to_owned(),
            agent_name: agent_name.to_owned(),
            arguments,
            cancel: cancel.clone(),
            progress,
            view: None,
            passthrough: false,
        })
        .await
    }

    /// [`Self::execute`] of a whole request (its `tool_call_id` is what the `toolCall` event
    /// names).
    pub async fn execute_call(&self, call: CallRequest) -> ToolCallResult {
        let started = Instant::now();
        let mut call = call;
        let (result, outcome) = self.hooked_call(&mut call).await;
        self.record_call(&call, started, &result, outcome);
        result
    }

    /// The call between the host's hooks, when it gave any.
    async fn hooked_call(&self, call: &mut CallRequest) -> (ToolCallResult, &'static str) {
        let Some(server) = self.server(call.server_index) else {
            return (
                ToolCallResult::error("?", &call.tool, "unknown server"),
                "error",
            );
        };
        if self.hooks.before.is_none() && self.hooks.after.is_none() {
            return self.run_call(call).await;
        }
        let name = server.name();
        let tool = call.tool.clone();
        let tool = tool.as_str();
        let deadline = std::time::Duration::from_millis(server.config.tool_timeout_ms);
        let failed = |text: String, outcome: &'static str| {
            let text = self.log.redactor().redact(&text).into_owned();
            let result = ToolCallResult {
                text,
                ..ToolCallResult::error(name, tool, "")
            };
            (result, outcome)
        };
        let ctx = serde_json::json!({
            "server": name,
            "tool": tool,
            "agentTool": call.agent_name,
            "toolCallId": call.tool_call_id,
            "params": call.arguments.clone().map_or(serde_json::Value::Null, serde_json::Value::Object),
        });
        if let Some(before) = &self.hooks.before {
            let argument = serde_json::json!({ "ctx": ctx });
            let answer = self
                .ask_hook(before, argument, deadline, &call.cancel, "beforeToolCall")
                .await;
            let decision = match answer {
                Ok(answer) => hooks::read_before(answer.as_deref()),
                Err(why) => Before::Block(why),
            };
            match decision {
                Before::Proceed => {}
                Before::Replace(params) => call.arguments = Some(params),
                Before::Block(reason) => {
                    let why = format!("blocked by beforeToolCall: {reason}");
                    return failed(tool_error_text(name, tool, why), "denied");
                }
            }
        }
        let (result, outcome) = self.run_call(call).await;
        let Some(after) = &self.hooks.after else {
            return (result, outcome);
        };
        let argument = serde_json::json!({ "ctx": ctx, "result": result.to_json() });
        match self
            .ask_hook(after, argument, deadline, &call.cancel, "afterToolCall")
            .await
        {
            Ok(None) => (result, outcome),
            Ok(Some(answer)) => match hooks::read_after(&answer) {
                // Whatever it returns is wrapped again, unless it is the wrapped text as given.
                Some((text, false)) => {
                    let unchanged = text == result.text && !result.is_error();
                    // What a passthrough caller gets instead: the hook's text, unwrapped.
                    let given =
                        (call.passthrough && !unchanged).then(|| self.passthrough_text(&text));
                    let text = if unchanged {
                        text
                    } else {
                        self.wrap_untrusted(name, tool, &text)
                    };
                    let mut replaced = ToolCallResult::ok(text, name, tool);
                    replaced.rich = result.rich;
                    if given.is_some() {
                        replaced.rich.passthrough = given;
                    }
                    (replaced, outcome)
                }
                Some((text, true)) => failed(text, "error"),
                None => failed(
                    tool_error_text(
                        name,
                        tool,
                        "afterToolCall returned something that is not a tool result",
                    ),
                    "error",
                ),
            },
            Err(why) => failed(tool_error_text(name, tool, why), "error"),
        }
    }

    /// Calls a hook with `argument`, bounded by `deadline` and the call's cancellation.
    async fn ask_hook(
        &self,
        hook: &hooks::Hook,
        argument: serde_json::Value,
        deadline: std::time::Duration,
        cancel: &CancellationToken,
        which: &str,
    ) -> Result<Option<String>, String> {
        tokio::select! {
            answer = tokio::time::timeout(deadline, hook(argument.to_string())) => match answer {
                Ok(Ok(answer)) => Ok(answer),
                Ok(Err(why)) => Err(format!("{which} hook failed: {why}")),
                Err(_) => Err(format!(
                    "{which} hook did not answer within {} ms",
                    deadline.as_millis()
                )),
            },
            _ = cancel.cancelled() => {
                Err(format!("{which} hook interrupted: Tool call aborted by the caller"))
            }
        }
    }

    /// A call refused before it was made (its arguments could not be sent): the error result,
    /// recorded like any call.
    pub fn refuse_call(&self, call: &CallRequest, why: &str) -> ToolCallResult {
        let server = self.server(call.server_index);
        let server = server.as_ref().map_or("?", |s| s.name());
        let result = crate::tool_result::bad_arguments(server, &call.tool, why);
        self.record_call(call, Instant::now(), &result, "error");
        result
    }

    fn record_call(
        &self,
        call: &CallRequest,
        started: Instant,
        result: &ToolCallResult,
        outcome: &'static str,
    ) {
        let duration_ms = started.elapsed().as_millis() as u64;
        let server = self.server(call.server_index);
        // What the event says went wrong (its texts are masked already).
        let error = || {
            if result.is_error() {
                Some(result.text.clone())
            } else if result.rich.server_error || outcome == "error" {
                Some("the server flagged the result isError".to_owned())
            } else {
                None
            }
        };
        if let Some(server) = &server {
            let metrics = server.metrics();
            let outcome = Outcome::from_event(outcome);
            metrics.record_call(outcome, duration_ms);
            // The server failed the call (an aborted or denied call says nothing about it).
            if matches!(outcome, Outcome::Error | Outcome::Timeout)
                && let Some(error) = error()
            {
                metrics.record_error(error);
            }
        }
        self.events
            .emit_with(crate::events::EventKind::ToolCall, || {
                Event::ToolCall(ToolCallRecord {
                    server: server
                        .as_ref()
                        .map_or_else(|| "?".to_owned(), |s| s.name().to_owned()),
                    tool: call.tool.clone(),
                    agent_tool: call.agent_name.clone(),
                    tool_call_id: call.tool_call_id.clone(),
                    duration_ms,
                    outcome,
                    error: error(),
                    suspicious: result.rich.suspicious.clone(),
                })
            });
    }

    /// `result` as `onSuspicious` has it: returned with its findings, or (`'block'`) withheld
    /// behind an error result naming the rules.
    fn judged(
        &self,
        result: ToolCallResult,
        outcome: &'static str,
        server: &str,
        tool: &str,
    ) -> (ToolCallResult, &'static str) {
        if result.rich.suspicious.is_empty() || self.on_suspicious != OnSuspicious::Block {
            return (result, outcome);
        }
        let rules = result.rich.suspicious.join(", ");
        let mut blocked = ToolCallResult::error(
            server,
            tool,
            format!("the result was withheld: it reads like a prompt injection ({rules})"),
        );
        blocked.rich.suspicious = result.rich.suspicious;
        (blocked, "denied")
    }

    /// The call itself, and its outcome for the audit record.
    async fn run_call(&self, call: &mut CallRequest) -> (ToolCallResult, &'static str) {
        let allowed = self.permits(call);
        let passthrough = call.passthrough;
        let (arguments, progress) = (call.arguments.take(), call.progress.take());
        let (server_index, tool, agent_name, cancel) = (
            call.server_index,
            call.tool.as_str(),
            call.agent_name.as_str(),
            &call.cancel,
        );
        let Some(server) = self.server(server_index) else {
            return (ToolCallResult::error("?", tool, "unknown server"), "error");
        };
        let server = &*server;
        let name = server.name();
        let started = Instant::now();
        if allowed && let Some(builtin) = server.builtin(tool) {
            let answer = tokio::select! {
                answer = self.run_builtin(server, builtin, arguments) => answer,
                _ = cancel.cancelled() => Err(CallError::Aborted.to_string()),
            };
            return match answer {
                Ok(text) => {
                    let kept = passthrough.then(|| self.passthrough_text(&text));
                    let text = self.wrap_untrusted(name, tool, &text);
                    let mut out = ToolCallResult::ok(text, name, tool);
                    out.rich.passthrough = kept;
                    (out, "ok")
                }
                Err(why) => {
                    let text = self
                        .log
                        .redactor()
                        .redact(&tool_error_text(name, tool, why))
                        .into_owned();
                    (
                        ToolCallResult {
                            text,
                            ..ToolCallResult::error(name, tool, "")
                        },
                        "error",
                    )
                }
            };
        }
        let clean = self.hygiene_on(server);
        let arguments = if clean {
            given_back(server, tool, arguments)
        } else {
            arguments
        };
        let result = if allowed {
            server.call_tool(tool, arguments, cancel, progress).await
        } else {
            Err(CallError::Refused(format!(
                "tool '{agent_name}' is not allowed by the tool policy (allow/deny)"
            )))
        };
        let elapsed = started.elapsed().as_millis();
        match result {
            Ok(result) => {
                self.log
                    .debug_with(|| format!("MCP tool call {name}/{tool} took {elapsed} ms"));
                let (mode, limits) = self.result_settings(server);
                let outcome = if result.is_error == Some(true) {
                    "error"
                } else {
                    "ok"
                };
                let removed = |counts: Hygiene| (counts.total() > 0).then_some(counts);
                let kept = passthrough.then(|| self.passthrough_result(result.clone(), clean));
                if mode == ResultMode::Compat {
                    let text = bridge::result::result_text(result);
                    let (text, counts, suspicious) = self.wrap_checked(name, tool, &text, clean);
                    let mut out = ToolCallResult::ok(text, name, tool);
                    out.rich.hygiene = removed(counts);
                    out.rich.suspicious = suspicious;
                    out.rich.passthrough = kept;
                    return self.judged(out, outcome, name, tool);
                }
                let schema = server.output_schema(tool);
                match bridge::rich::rich_result(result, schema.as_deref(), &limits) {
                    Ok(rich) => {
                        let (text, counts, suspicious) =
                            self.wrap_checked(name, tool, &rich.text, clean);
                        let mut out = ToolCallResult::ok(text, name, tool);
                        out.rich = RichParts {
                            images: rich.images,
                            structured: rich.structured.map(|v| self.redact_value(v)),
                            server_error: rich.is_error,
                            hygiene: removed(counts),
                            suspicious,
                            passthrough: kept,
                        };
                        self.judged(out, outcome, name, tool)
                    }
                    Err(why) => {
                        let text = tool_error_text(name, tool, why);
                        let result = ToolCallResult {
                            text: self.log.redactor().redact(&text).into_owned(),
                            ..ToolCallResult::error(name, tool, "")
                        };
                        (result, "error")
                    }
                }
            }
            Err(error) => {
                self.log.debug_with(|| {
                    format!("MCP tool call {name}/{tool} took {elapsed} ms (error)")
                });
                let outcome = match &error {
                    CallError::Timeout(_) => "timeout",
                    CallError::Aborted => "aborted",
                    CallError::Refused(_) => "denied",
                    _ => "error",
                };
                let result = ToolCallResult {
                    text: self.error_text(name, tool, &error),
                    ..ToolCallResult::error(name, tool, "")
                };
                (result, outcome)
            }
        }
    }
}

/// `arguments` with every cleaned `enum`/`const` value of `tool`'s schema (as the hygiene pass
/// offered it to the model) given back as the server listed it.
fn given_back(
    server: &crate::supervisor::Server,
    tool: &str,
    arguments: Option<JsonObject>,
) -> Option<JsonObject> {
    let mut arguments = arguments?;
    if let Some(schema) = server.hygienic_schema(tool)
        && !schema.restore.is_empty()
    {
        for value in arguments.values_mut() {
            schema.restore.apply(value);
        }
    }
    Some(arguments)
}
