//! The set of servers a gateway configured: start them all, hand out their tools, run tool
//! calls, build the resource context, shut everything down.

mod call;
mod catalog;
mod metrics;
mod names;
mod passthrough;
mod pins;
mod prometheus;
mod reload;
mod roster;
mod scan;
mod server_logs;
mod subscriptions;
mod upstream;
mod view;

pub use call::CallRequest;
pub use catalog::{PromptArgumentInfo, PromptInfo, PromptOutcome, ResourceInfo};
pub use metrics::MetricsEntry;
pub use reload::ReloadReport;
pub use server_logs::ServerLog;

use names::NameTable;
use roster::Roster;
pub use upstream::UpstreamOffers;
pub use view::{View, ViewSpec};

use std::sync::{Arc, Mutex};

use rmcp::model::ReadResourceRequestParams;
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

use crate::bridge::NameScheme;
use crate::bridge::rich::ResultLimits;
use crate::config::{McpConfig, ResultMode};
use crate::error::CallError;
use crate::events::{Event, Events};
use crate::hooks::Hooks;
use crate::host_env::HostEnvironment;
use crate::log::{Log, LogSink};
use crate::options::Detection;
use crate::policy::ToolPolicy;
use crate::secrets::{EnvSource, Redactor, SecretResolver};
use crate::security::hygiene::Hygiene;
use crate::security::{self, WrapFormat, WrapOptions};
use crate::session::Progress;
use crate::status::Status;
use crate::supervisor::{self, Server, Snapshot, ToolEntry};
use crate::tool_result::{ExternalContent, ProgressUpdate, tool_error_text};

pub use crate::options::ManagerOptions;

/// What `getStatus()` reports per server.
#[derive(Debug, Clone)]
pub struct StatusEntry {
    pub name: String,
    pub status: Status,
    pub tool_count: usize,
    /// The transport of the last successful connection (`stdio`, `streamable-http`, `sse`).
    pub transport: Option<&'static str>,
    /// A session is up: false while an idle or lazy server has no process.
    pub running: bool,
    /// The protocol revision the last session negotiated.
    pub protocol_version: Option<String>,
    /// OAuth servers: where the sign-in stands.
    pub auth: Option<crate::oauth::AuthState>,
}

/// An agent tool with the routing it needs: which server, under which name there.
#[derive(Debug, Clone)]
pub struct AgentTool {
    /// The agent-facing name: provider-safe and unique across the manager.
    pub name: String,
    pub server_index: usize,
    pub server: String,
    pub tool: ToolEntry,
}

/// A running supervisor: what stops it, and its task.
struct Running {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

pub struct Manager {
    roster: std::sync::RwLock<Arc<Roster>>,
    /// Bumped whenever the roster changes (`reconfigure`).
    roster_changed: watch::Sender<u64>,
    /// One `reconfigure` (or `start`) at a time.
    reload: tokio::sync::Mutex<()>,
    runtime: Arc<supervisor::RuntimeOptions>,
    log: Log,
    resolver: Arc<SecretResolver>,
    wrap_format: WrapFormat,
    events: Events,
    /// What the servers' sessions emit to: `events`, and their log messages to
    /// [`Self::server_logs`]'s followers.
    server_events: Events,
    server_logs: tokio::sync::broadcast::Sender<ServerLog>,
    /// Resource subscriptions held on the servers for a gateway's clients.
    subscriptions: subscriptions::Held,
    hooks: Hooks,
    results: ResultMode,
    hygiene: Option<bool>,
    /// `detection` and `onSuspicious`.
    detection: Detection,
    /// `detectionModel`: whether the enhanced detector's learned stage reads results.
    detection_model: bool,
    on_suspicious: crate::options::OnSuspicious,
    pinning: crate::config::PinPolicy,
    pins: pins::PinBook,
    scanner: scan::Scanner,
    result_limits: ResultLimits,
    name_scheme: NameScheme,
    policy: ToolPolicy,
    host_env: Arc<dyn HostEnvironment>,
    names: Mutex<Option<Arc<NameTable>>>,
    shutdown: CancellationToken,
    /// The running supervisors by slot; `None` once shut down.
    tasks: Mutex<Option<std::collections::HashMap<usize, Running>>>,
    started: std::sync::atomic::AtomicBool,
    stopped: watch::Sender<bool>,
}

impl Manager {
    /// A manager whose lines go to `sink`, with a redactor of its own and a resolver with every
    /// built-in provider and `options.secret_providers` (what the JS constructor builds).
    pub fn with_sink(config: McpConfig, options: ManagerOptions, sink: Arc<dyn LogSink>) -> Self {
        let log = Log::new(sink, Redactor::default());
        // The resolver masks what it substitutes (a `${TOKEN}` inside `Bearer ${TOKEN}`) with the
        // manager's redactor, on top of what the supervisor registers.
        let resolver = Arc::new(
            SecretResolver::with_default_providers()
                .with_provider_definitions(options.secret_providers.clone())
                .with_redactor(log.redactor().clone()),
        );
        Self::new(config, options, log, resolver)
    }

    /// Builds a supervisor per enabled server, in config order. Nothing starts yet. `resolver`
    /// is used as given (`options.secret_providers` is [`Self::with_sink`]'s to apply).
    pub fn new(
        config: McpConfig,
        options: ManagerOptions,
        log: Log,
        resolver: Arc<SecretResolver>,
    ) -> Self {
        let runtime = Arc::new(options.runtime);
        let (server_events, server_logs) = server_logs::LogTee::around(options.events.clone());
        let servers = config
            .servers
            .into_iter()
            .filter(|s| s.enabled)
            .map(|s| Server::new(s, log.clone(), runtime.clone(), server_events.clone()))
            .collect();
        Self {
            roster: std::sync::RwLock::new(Arc::new(Roster::new(servers))),
            roster_changed: watch::channel(0).0,
            reload: tokio::sync::Mutex::new(()),
            runtime,
            log,
            resolver,
            wrap_format: options.wrap_format,
            events: options.events,
            server_events,
            server_logs,
            subscriptions: Default::default(),
            hooks: options.hooks,
            results: options.results,
            hygiene: options.hygiene,
            detection: options.detection,
            detection_model: options.detection_model,
            on_suspicious: options.on_suspicious,
            pinning: options.pinning,
            pins: pins::PinBook::new(options.pin_store),
            scanner: scan::Scanner::default(),
            result_limits: options.result_limits,
            name_scheme: options.name_scheme,
            policy: options.policy,
            host_env: options.host_env,
            names: Mutex::new(None),
            shutdown: CancellationToken::new(),
            tasks: Mutex::new(Some(std::collections::HashMap::new())),
            started: std::sync::atomic::AtomicBool::new(false),
            stopped: watch::channel(false).0,
        }
    }

    /// Starts every server at once and resolves when each has either connected or failed its
    /// first attempt (restarts go on in the background). Never fails; a second call does nothing.
    pub async fn start(&self) {
        let env = self.host_env.current().await;
        self.start_in(env).await
    }

    /// [`Self::start`] with the host environment as the caller read it at this moment (what
    /// first starts inherit and resolve `secret://env/…` from); restarts ask the manager's
    /// [`HostEnvironment`] again.
    pub async fn start_in(&self, env: EnvSource) {
        let _one_at_a_time = self.reload.lock().await;
        if self.started.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        self.pins.preload(&self.log).await;
        let roster = self.roster();
        let waits: Vec<_> = roster
            .current()
            .filter_map(|(slot, server)| self.launch(slot, server, &env))
            .collect();
        for rx in waits {
            let _ = rx.await;
        }
    }

    /// The servers as they are configured now.
    fn roster(&self) -> Arc<Roster> {
        self.roster
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The server in `slot` (configured, or removed by a `reconfigure` and closed).
    fn server(&self, slot: usize) -> Option<Arc<Server>> {
        self.roster().get(slot).cloned()
    }

    /// Starts the supervisor of the server in `slot`; the receiver fires once its first
    /// connection attempt has ended. `None` after shutdown.
    fn launch(
        &self,
        slot: usize,
        server: &Arc<Server>,
        env: &EnvSource,
    ) -> Option<oneshot::Receiver<()>> {
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        let tasks = tasks.as_mut()?;
        for warning in crate::secrets::plaintext_credential_warnings(
            server.name(),
            &server.config.env,
            &server.config.headers,
        ) {
            self.log.warn(&warning);
        }
        let (tx, rx) = oneshot::channel();
        let stop = self.shutdown.child_token();
        let context = supervisor::SuperviseContext {
            resolver: self.resolver.clone(),
            host_env: self.host_env.clone(),
            start_env: env.clone(),
            shutdown: stop.clone(),
        };
        let task = tokio::spawn(supervisor::supervise(server.clone(), context, tx));
        tasks.insert(slot, Running { stop, task });
        Some(rx)
    }

    pub fn status(&self) -> Vec<StatusEntry> {
        self.roster()
            .current()
            .map(|(_, s)| {
                let snap = s.snapshot();
                StatusEntry {
                    name: s.name().to_owned(),
                    status: snap.status,
                    tool_count: snap.tools.len(),
                    transport: snap.transport,
                    running: snap.running,
                    protocol_version: snap.protocol_version,
                    auth: s.auth_state(),
                }
            })
            .collect()
    }

    /// The tools of every ready server that policy allows: servers in config order, tools in
    /// `tools/list` order, named by [`Self::name_table`].
    pub fn agent_tools(&self) -> Vec<AgentTool> {
        self.agent_tools_in(None)
    }

    /// [`Self::agent_tools`] as `view` shows them: its servers, named by its scheme over those
    /// servers alone (what a manager of just those servers would name them), allowed by its
    /// allow/deny and by the manager's (under the manager's names).
    pub fn agent_tools_in(&self, view: Option<&View>) -> Vec<AgentTool> {
        let roster = self.roster();
        let servers: Vec<_> = roster.current().collect();
        let snapshots: Vec<_> = servers.iter().map(|(_, s)| s.snapshot()).collect();
        let table = self.name_table(&roster, &snapshots);
        let (shown, view_table) = match view {
            Some(view) => {
                let (shown, table) = self.view_names(view, &servers, &snapshots);
                (shown, Some(table))
            }
            None => ((0..servers.len()).collect(), None),
        };
        let mut out = Vec::new();
        for (k, &index) in shown.iter().enumerate() {
            let (slot, server) = servers[index];
            let snap = &snapshots[index];
            if snap.status != Status::Ready {
                continue;
            }
            let own = &table.names[index];
            let names = view_table.as_ref().map_or(own, |t| &t.names[k]);
            let clean = self.hygiene_on(server);
            let pinned = self.withheld(server, &snap.tools);
            for (k, ((tool, name), own)) in snap.tools.iter().zip(names).zip(own).enumerate() {
                if pinned.as_ref().is_some_and(|w| w[k]) {
                    continue;
                }
                if self.policy.allows(own) && view.is_none_or(|v| v.policy.allows(name)) {
                    let mut tool = tool.clone();
                    if clean {
                        clean_definition(&mut tool);
                    }
                    out.push(AgentTool {
                        name: name.clone(),
                        server_index: slot,
                        server: server.name().to_owned(),
                        tool,
                    });
                }
            }
        }
        out
    }

    /// A view of this manager (see [`View`]): `spec.servers` must name configured servers.
    pub fn view(&self, spec: ViewSpec) -> Result<Arc<View>, String> {
        if let Some(servers) = &spec.servers {
            let roster = self.roster();
            if let Some(unknown) = servers.iter().find(|s| roster.named(s).is_none()) {
                return Err(format!("Invalid view: no MCP server named '{unknown}'"));
            }
        }
        Ok(Arc::new(View::new(spec)))
    }

    /// Which of `servers` (positions) `view` shows, and their names in the view: named by its
    /// scheme over those servers alone.
    fn view_names(
        &self,
        view: &View,
        servers: &[(usize, &Arc<Server>)],
        snapshots: &[Snapshot],
    ) -> (Vec<usize>, Arc<NameTable>) {
        let shown: Vec<usize> = (0..servers.len())
            .filter(|&i| view.shows(servers[i].1.name()))
            .collect();
        let subset: Vec<_> = shown.iter().map(|&i| servers[i]).collect();
        let snaps: Vec<_> = shown.iter().map(|&i| snapshots[i].clone()).collect();
        let scheme = view.scheme.unwrap_or(self.name_scheme);
        let table = names::table(&view.names, &subset, &snaps, scheme, None);
        (shown, table)
    }

    /// Whether `call` may run: the manager's allow/deny on the name it was offered under. For
    /// a call through a view, whatever name it presents: the view must show the server, and
    /// the view's allow/deny (on the view's name for the tool) and the manager's (on the
    /// manager's) must both allow it.
    fn permits(&self, call: &CallRequest) -> bool {
        if !self.pin_allows(call) {
            return false;
        }
        let Some(view) = &call.view else {
            return self.policy.allows(&call.agent_name);
        };
        let roster = self.roster();
        let servers: Vec<_> = roster.current().collect();
        let Some(position) = servers
            .iter()
            .position(|(slot, _)| *slot == call.server_index)
        else {
            return false;
        };
        let snapshots: Vec<_> = servers.iter().map(|(_, s)| s.snapshot()).collect();
        let Some(at) = snapshots[position]
            .tools
            .iter()
            .position(|t| t.mcp_name == call.tool)
        else {
            return false;
        };
        let own = self.name_table(&roster, &snapshots);
        let (shown, table) = self.view_names(view, &servers, &snapshots);
        let Some(k) = shown.iter().position(|&i| i == position) else {
            return false;
        };
        self.policy.allows(&own.names[position][at]) && view.policy.allows(&table.names[k][at])
    }

    /// Which of `tools` (a listing of `server`) are withheld because their definition is not
    /// the approved one and the server's `pinning` is `enforce`; `None` when none can be
    /// (`off` or `warn`). Reports each new mismatch once: a warning and a
    /// `toolDefinitionChanged` event.
    fn withheld(&self, server: &Server, tools: &Arc<Vec<ToolEntry>>) -> Option<Arc<Vec<bool>>> {
        use crate::config::PinPolicy;
        let policy = server.config.pinning.unwrap_or(self.pinning);
        if policy == PinPolicy::Off || tools.is_empty() {
            return None;
        }
        let (verdict, mismatches) = self.pins.check(server.name(), tools, &self.log);
        let instructions = server
            .snapshot()
            .peer
            .and_then(|p| p.peer_info().and_then(|i| i.instructions.clone()));
        let (flagged, findings) = self.scanner.scan(
            server.name(),
            tools,
            instructions.as_deref(),
            self.wrap_format,
            self.detection,
        );
        let enforce = policy == PinPolicy::Enforce;
        for f in findings {
            let what = match &f.tool {
                Some(tool) => format!("tool '{tool}'"),
                None => "instructions".to_owned(),
            };
            let withheld = enforce && f.tool.is_some();
            self.log.warn(&format!(
                "MCP server '{}' {what} may carry instructions to the model ({}){}",
                server.name(),
                f.findings.join(", "),
                if withheld { ": withheld" } else { "" },
            ));
            self.events
                .emit_with(crate::events::EventKind::ToolFlagged, || {
                    Event::ToolFlagged {
                        server: server.name().to_owned(),
                        tool: f.tool.clone(),
                        findings: f.findings.clone(),
                        withheld,
                    }
                });
        }
        for m in mismatches {
            self.log.warn(&format!(
                "MCP server '{}' changed the definition of tool '{}' since it was approved ({}): {}; approveTools('{}') accepts it",
                server.name(),
                m.tool,
                m.changed.join(", "),
                if enforce { "withheld" } else { "still offered" },
                server.name(),
            ));
            self.events
                .emit_with(crate::events::EventKind::ToolDefinitionChanged, || {
                    Event::ToolDefinitionChanged {
                        server: server.name().to_owned(),
                        tool: m.tool.clone(),
                        changed: m.changed.iter().map(|c| (*c).to_owned()).collect(),
                        withheld: enforce,
                    }
                });
        }
        enforce.then(|| {
            Arc::new(
                verdict
                    .iter()
                    .zip(flagged.iter())
                    .map(|(ok, flagged)| !ok || *flagged)
                    .collect(),
            )
        })
    }

    /// Whether `call`'s tool is offered as far as pinning goes (only `enforce` withholds).
    fn pin_allows(&self, call: &CallRequest) -> bool {
        let Some(server) = self.server(call.server_index) else {
            return true;
        };
        if server.config.pinning.unwrap_or(self.pinning) != crate::config::PinPolicy::Enforce {
            return true;
        }
        let snap = server.snapshot();
        let Some(withheld) = self.withheld(&server, &snap.tools) else {
            return true;
        };
        snap.tools
            .iter()
            .position(|t| t.mcp_name == call.tool)
            .is_none_or(|at| !withheld[at])
    }

    /// `setRoots(roots)`: the roots every server gets from now on, and
    /// `notifications/roots/list_changed` to every ready server. Fails, changing nothing, when
    /// the manager was not given `roots` (it declared no roots capability to its servers).
    pub async fn set_roots(&self, roots: crate::session::RootsSource) -> Result<usize, String> {
        let Some(slot) = &self.runtime.client_requests.roots else {
            return Err(
                "setRoots: the manager was created without the roots option, so its servers were told it has no roots"
                    .to_owned(),
            );
        };
        *slot.write().unwrap_or_else(|p| p.into_inner()) = roots;
        let peers: Vec<_> = self
            .roster()
            .current()
            .filter_map(|(_, s)| s.ready_peer().ok())
            .collect();
        let mut told = 0;
        for peer in peers {
            if peer.notify_roots_list_changed().await.is_ok() {
                told += 1;
            }
        }
        Ok(told)
    }

    /// `approveTools(server, names?)`: the current definitions of `server`'s tools (those
    /// named, by the server's own names, or all) become the approved ones; returns the names
    /// approved. Withheld tools are offered again (`toolsChanged` says so).
    pub fn approve_tools(
        &self,
        server: &str,
        names: Option<&[String]>,
    ) -> Result<Vec<String>, String> {
        let roster = self.roster();
        let Some((_, found)) = roster.named(server) else {
            return Err(format!("approveTools: no MCP server named '{server}'"));
        };
        let snap = found.snapshot();
        let done = self.pins.approve(server, &snap.tools, names, &self.log);
        self.roster_changed.send_modify(|n| *n += 1);
        Ok(done)
    }

    /// The manager's agent names for the configured servers (see [`names`]); derived names
    /// are logged.
    fn name_table(&self, roster: &Roster, snapshots: &[Snapshot]) -> Arc<NameTable> {
        let servers: Vec<_> = roster.current().collect();
        names::table(
            &self.names,
            &servers,
            snapshots,
            self.name_scheme,
            Some(&self.log),
        )
    }

    /// Emits `toolsChanged` whenever a server publishes a tool list whose agent tools differ
    /// from the last one seen (added, removed, or changed in label, description or schema),
    /// until shutdown. Does nothing without an event sink. The host spawns it once.
    pub async fn watch_tool_changes(self: Arc<Self>) {
        if !self.events.enabled() {
            return;
        }
        // The agent tools last seen, by server name (a server a reconfigure restarted is the
        // same server here: only what its tools became counts).
        let mut last: std::collections::HashMap<String, Vec<(String, ToolEntry)>> =
            std::collections::HashMap::new();
        self.each_tool_list_change(|| {
            let roster = self.roster();
            let snapshots: Vec<Snapshot> = roster.current().map(|(_, s)| s.snapshot()).collect();
            let table = self.name_table(&roster, &snapshots);
            let mut seen = std::collections::HashMap::with_capacity(snapshots.len());
            for (index, ((_, server), snap)) in roster.current().zip(&snapshots).enumerate() {
                let withheld = self.withheld(server, &snap.tools);
                let now: Vec<(String, ToolEntry)> = table.names[index]
                    .iter()
                    .cloned()
                    .zip(snap.tools.iter().cloned())
                    .enumerate()
                    .filter(|(k, _)| withheld.as_ref().is_none_or(|w| !w[*k]))
                    .map(|(_, pair)| pair)
                    .filter(|(name, _)| self.policy.allows(name))
                    .collect();
                let before = last.remove(server.name()).unwrap_or_default();
                self.emit_tools_changed(server.name(), &before, &now);
                seen.insert(server.name().to_owned(), now);
            }
            // Servers a reconfigure removed: their tools are gone.
            for (server, before) in last.drain() {
                self.emit_tools_changed(&server, &before, &[]);
            }
            last = seen;
            std::future::ready(())
        })
        .await
    }

    /// Runs `look` now and again after every publish of a server's tool list and every change
    /// of the roster (a reload), until shutdown: what follows the agent tools (the
    /// `toolsChanged` event, a gateway's `tools/list_changed`). It listens before `look`
    /// looks, so a publish in between is never missed.
    pub async fn each_tool_list_change<F, Fut>(&self, mut look: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        let mut roster_changed = self.roster_changed.subscribe();
        loop {
            roster_changed.mark_unchanged();
            let roster = self.roster();
            let mut waits: Vec<_> = roster
                .current()
                .map(|(_, s)| Box::pin(s.tools_published().notified()))
                .collect();
            for wait in &mut waits {
                wait.as_mut().enable();
            }
            look().await;
            // (`select_all` of nothing would panic: a manager may have no servers, for now.)
            let published = async move {
                if waits.is_empty() {
                    std::future::pending::<()>().await;
                } else {
                    futures::future::select_all(waits).await;
                }
            };
            tokio::select! {
                _ = published => {}
                _ = roster_changed.changed() => {}
                _ = self.shutdown.cancelled() => return,
            }
        }
    }

    /// `toolsChanged` for one server whose agent tools went from `before` to `now`, when they
    /// differ.
    fn emit_tools_changed(
        &self,
        server: &str,
        before: &[(String, ToolEntry)],
        now: &[(String, ToolEntry)],
    ) {
        let find = |list: &[(String, ToolEntry)], name: &str| {
            list.iter().find(|(n, _)| n == name).map(|(_, t)| t.clone())
        };
        let mut added = Vec::new();
        let mut changed = Vec::new();
        for (name, tool) in now {
            match find(before, name) {
                None => added.push(name.clone()),
                Some(old) if !same_definition(&old, tool) => changed.push(name.clone()),
                Some(_) => {}
            }
        }
        let removed: Vec<String> = before
            .iter()
            .filter(|(name, _)| find(now, name).is_none())
            .map(|(name, _)| name.clone())
            .collect();
        if !(added.is_empty() && removed.is_empty() && changed.is_empty()) {
            self.events
                .emit_with(crate::events::EventKind::ToolsChanged, || {
                    Event::ToolsChanged {
                        server: server.to_owned(),
                        added,
                        removed,
                        changed,
                    }
                });
        }
    }

    /// A server's result mode and caps: its own where it set them, else the manager's.
    fn result_settings(&self, server: &Server) -> (ResultMode, ResultLimits) {
        let own = &server.config.results;
        let base = &self.result_limits;
        let pick = |own: Option<u64>, base: usize| own.map_or(base, |n| n as usize);
        (
            own.mode.unwrap_or(self.results),
            ResultLimits {
                max_result_chars: pick(own.max_result_chars, base.max_result_chars),
                max_images: pick(own.max_images, base.max_images),
                max_image_bytes: pick(own.max_image_bytes, base.max_image_bytes),
                max_result_bytes: pick(own.max_result_bytes, base.max_result_bytes),
            },
        )
    }

    /// A JSON value with every resolved secret in its strings masked (its JSON text through
    /// the redactor; a value the mask would break is replaced by the masked text).
    fn redact_value(&self, value: serde_json::Value) -> serde_json::Value {
        let text = value.to_string();
        match self.log.redactor().redact(&text) {
            std::borrow::Cow::Borrowed(_) => value,
            std::borrow::Cow::Owned(masked) => {
                serde_json::from_str(&masked).unwrap_or(serde_json::Value::String(masked))
            }
        }
    }

    /// The contract's error text, with any secret value masked.
    pub fn error_text(&self, server: &str, tool: &str, error: &CallError) -> String {
        let text = tool_error_text(server, tool, error);
        self.log.redactor().redact(&text).into_owned()
    }

    /// What `onUpdate` gets for one progress notification of a call to `server`'s `tool`: the
    /// server's text redacted, checked and wrapped like any result.
    pub fn progress_update(&self, server: &str, tool: &str, progress: &Progress) -> ProgressUpdate {
        let text = ProgressUpdate::raw_text(
            progress.progress,
            progress.total,
            progress.message.as_deref(),
        );
        ProgressUpdate {
            text: self.wrap_untrusted(server, tool, &text),
            progress: progress.progress,
            total: progress.total,
            external: ExternalContent {
                server: server.to_owned(),
                tool: tool.to_owned(),
            },
        }
    }

    /// Cancelled when the manager shuts down (a child token: cancelling it stops nothing).
    pub fn shutting_down(&self) -> CancellationToken {
        self.shutdown.child_token()
    }

    /// The manager's own shutdown token: cancelling it starts stopping every server without
    /// waiting, as dropping the manager does. For a host whose environment ends while the
    /// manager still runs (a worker thread that exits), where nothing could await `shutdown()`.
    pub fn teardown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// What masks every secret value the manager knows (they are registered as servers start).
    pub fn redactor(&self) -> Redactor {
        self.log.redactor().clone()
    }

    /// Masks secrets, logs suspicious patterns, wraps as untrusted content from `server`
    /// (after the text hygiene pass when the server has it on).
    pub fn wrap_untrusted(&self, server: &str, tool: &str, text: &str) -> String {
        let clean = self
            .roster()
            .named(server)
            .is_some_and(|(_, s)| self.hygiene_on(s));
        self.wrap_checked(server, tool, text, clean).0
    }

    /// Whether `server`'s texts go through the hygiene pass: its own `hygiene`, else the
    /// manager's, else on in rich mode and off in compat mode.
    fn hygiene_on(&self, server: &Server) -> bool {
        let mode = server.config.results.mode.unwrap_or(self.results);
        server
            .config
            .hygiene
            .or(self.hygiene)
            .unwrap_or(mode == ResultMode::Rich)
    }

    /// [`Self::wrap_untrusted`] with the hygiene decision made, and what it removed.
    fn wrap_checked(
        &self,
        server: &str,
        tool: &str,
        text: &str,
        clean: bool,
    ) -> (String, Hygiene, Vec<&'static str>) {
        let text = self.log.redactor().redact(text);
        let (text, counts, hidden) = if clean {
            let cleaned = security::hygiene::clean(&text);
            let text = std::borrow::Cow::Owned(cleaned.text.into_owned());
            (text, cleaned.counts, cleaned.hidden)
        } else {
            (text, Hygiene::default(), String::new())
        };
        let (wrapped, suspicious) = self.wrap_detected(server, tool, &text, &hidden);
        (wrapped, counts, suspicious)
    }

    /// Logs the suspicious patterns of `text` (and of `hidden`, what invisible tag characters
    /// spelled in it) and wraps `text`.
    /// With `detection: 'enhanced'`, the enhanced detector's findings are returned too.
    fn wrap_detected(
        &self,
        server: &str,
        tool: &str,
        text: &str,
        hidden: &str,
    ) -> (String, Vec<&'static str>) {
        let (detection, format, learned) = (self.detection, self.wrap_format, self.detection_model);
        let scan = || {
            let mut found = detection.detect_result(text, format, learned);
            if !hidden.is_empty() {
                for pattern in detection.detect_result(hidden, format, learned) {
                    if !found.contains(&pattern) {
                        found.push(pattern);
                    }
                }
            }
            found
        };
        let wrap = || {
            security::wrap_external_content(
                text,
                &WrapOptions {
                    source: crate::tool_result::EXTERNAL_SOURCE,
                    sender: Some(server),
                    subject: None,
                    task_name: None,
                    include_warning: true,
                    format,
                    mcp_server_label: true,
                },
            )
        };
        // A long text is scanned on a second core while it is wrapped.
        let (found, wrapped) = crate::parallel::both(text.len(), scan, wrap);
        if !found.is_empty() {
            self.log.warn(&format!(
                "MCP server '{server}' tool '{tool}' returned suspicious patterns: {}",
                found.join(", ")
            ));
        }
        let findings = match self.detection {
            Detection::Enhanced => found,
            Detection::OpenClaw => Vec::new(),
        };
        (wrapped, findings)
    }

    /// Resources of every ready server, read and wrapped, as one block of text.
    pub async fn resource_context(&self) -> String {
        self.resource_context_in(None).await
    }

    /// [`Self::resource_context`] of the servers `view` shows.
    pub async fn resource_context_in(&self, view: Option<&View>) -> String {
        let mut blocks = Vec::new();
        let roster = self.roster();
        for (_, server) in roster.current() {
            if view.is_some_and(|v| !v.shows(server.name())) {
                continue;
            }
            if server.status() != Status::Ready || !server.config.resources {
                continue;
            }
            // Only servers that declare resources are asked (the original asked every server
            // and logged "Method not found" for those without).
            if !server
                .ready_peer()
                .is_ok_and(|p| catalog::declares_resources(&p))
            {
                continue;
            }
            // `resourceRefreshMs`: a block is reused that long, until the server says its
            // resources changed or it reconnects.
            let block = match server.resource_cache().get() {
                Some(block) => Ok(block),
                None => self.server_resources(server).await.inspect(|block| {
                    server
                        .resource_cache()
                        .put(block.clone(), server.resource_refresh());
                }),
            };
            match block {
                Ok(block) if !block.is_empty() => blocks.push(block),
                Ok(_) => {}
                Err(error) => self.log.warn(&format!(
                    "Failed to get resources from '{}': {error}",
                    server.name()
                )),
            }
        }
        blocks.join("\n\n")
    }

    async fn server_resources(&self, server: &Server) -> Result<String, CallError> {
        let peer = server.ready_peer()?;
        let timeout = std::time::Duration::from_millis(server.config.timeout_ms);
        let resources = upstream::answer_within(timeout, peer.list_all_resources()).await?;
        let filter = &server.config.resource_filter;
        let name = server.name();
        let mut sections = Vec::new();
        for resource in resources
            .iter()
            .filter(|r| filter.is_empty() || filter.contains(&r.uri))
        {
            let read = upstream::answer_within(
                timeout,
                peer.read_resource(ReadResourceRequestParams::new(resource.uri.clone())),
            )
            .await;
            match read {
                Ok(result) => {
                    let text = catalog::resource_text(&result.contents);
                    let wrapped = self.wrap_untrusted(name, &resource.uri, &text);
                    sections.push(format!(
                        "### {} ({})\n{wrapped}",
                        resource.name, resource.uri
                    ));
                }
                Err(error) => self.log.warn(&format!(
                    "Failed to read MCP resource '{}' from '{name}': {}",
                    resource.uri,
                    self.log.redactor().redact(&error.to_string())
                )),
            }
        }
        if sections.is_empty() {
            return Ok(String::new());
        }
        Ok(format!(
            "## MCP Resources from {name}\n\n{}",
            sections.join("\n\n")
        ))
    }

    /// Stops every server (stdin closed, then SIGTERM, then SIGKILL to its whole process group,
    /// all servers in parallel). Idempotent; concurrent callers all wait for the same end.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        let tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner()).take();
        match tasks {
            Some(tasks) => {
                for (_, running) in tasks {
                    let _ = running.task.await;
                }
                // Servers that never started report `closed` too.
                for (_, server) in self.roster().current() {
                    if server.status() != Status::Closed {
                        server.mark_closed();
                    }
                }
                self.stopped.send_replace(true);
            }
            None => {
                let mut rx = self.stopped.subscribe();
                let _ = rx.wait_for(|done| *done).await;
            }
        }
    }
}

impl Drop for Manager {
    /// A manager dropped without `shutdown()` (its JS object collected) still stops its servers.
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// A tool's label, description and parameter schema through the hygiene pass (a copy only
/// when it changes; the schema was cleaned once, when it was listed).
fn clean_definition(tool: &mut ToolEntry) {
    for text in [&mut tool.label, &mut tool.description] {
        if let std::borrow::Cow::Owned(cleaned) = security::hygiene::clean(text).text {
            *text = cleaned;
        }
    }
    if let Some(schema) = &tool.hygienic {
        tool.parameters_json = schema.json.clone();
    }
}

/// Whether two listings of a tool offer the agent the same thing.
fn same_definition(a: &ToolEntry, b: &ToolEntry) -> bool {
    a.label == b.label && a.description == b.description && a.parameters_json == b.parameters_json
}
