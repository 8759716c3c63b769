//! `reconfigure`: a new config applied to a running manager. Servers whose definition did not
//! change keep their process, their in-flight calls and their slot (so their tool objects go
//! on working); changed ones are stopped and started again in a new slot; removed ones are
//! stopped; added ones started.

use std::sync::Arc;

use super::Manager;
use super::roster::Entry;
use crate::config::McpConfig;
use crate::secrets::EnvSource;
use crate::supervisor::Server;

/// What `reconfigure` did, by server name (config order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReloadReport {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub restarted: Vec<String>,
    pub unchanged: Vec<String>,
}

impl Manager {
    /// Applies `config` (already validated): see the module. Resolves once every added or
    /// restarted server has connected or failed its first attempt (when the manager was
    /// started; before `start()` nothing is started). `env` is the host environment new starts
    /// read. Fails only after shutdown, changing nothing.
    pub async fn reconfigure(
        &self,
        config: McpConfig,
        env: EnvSource,
    ) -> Result<ReloadReport, String> {
        let _one_at_a_time = self.reload.lock().await;
        if self.shutdown.is_cancelled() {
            return Err("reconfigure: the manager is shut down".to_owned());
        }
        let old = self.roster();
        let mut report = ReloadReport::default();
        let mut order = Vec::new();
        let mut fresh = Vec::new();
        let mut stop = Vec::new();
        let wanted: Vec<_> = config.servers.into_iter().filter(|s| s.enabled).collect();
        for config in wanted {
            let name = config.name.clone();
            match old.named(&name) {
                Some((slot, server)) if server.config == config => {
                    report.unchanged.push(name);
                    order.push(Entry::Kept(slot));
                }
                found => {
                    let server = Server::new(
                        config,
                        self.log.clone(),
                        self.runtime.clone(),
                        self.server_events.clone(),
                    );
                    match found {
                        Some((slot, old_server)) => {
                            server.remember_tools(old_server.snapshot().tools);
                            report.restarted.push(name);
                            stop.push(slot);
                        }
                        None => report.added.push(name),
                    }
                    fresh.push(server.clone());
                    order.push(Entry::New(server));
                }
            }
        }
        for (slot, server) in old.current() {
            let name = server.name();
            let kept = report.unchanged.iter().any(|n| n == name)
                || report.restarted.iter().any(|n| n == name);
            if !kept {
                report.removed.push(name.to_owned());
                stop.push(slot);
            }
        }
        let roster = Arc::new(old.with(order));
        *self.roster.write().unwrap_or_else(|p| p.into_inner()) = roster.clone();
        self.roster_changed.send_modify(|n| *n += 1);

        // Stop what went away (in parallel), then start what is new.
        let stopping: Vec<_> = {
            let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
            stop.iter()
                .filter_map(|slot| tasks.as_mut().and_then(|t| t.remove(slot)))
                .collect()
        };
        for running in &stopping {
            running.stop.cancel();
        }
        for running in stopping {
            let _ = running.task.await;
        }
        for slot in &stop {
            if let Some(server) = roster.get(*slot) {
                server.mark_closed();
            }
        }
        if self.started.load(std::sync::atomic::Ordering::SeqCst) {
            let waits: Vec<_> = roster
                .current()
                .filter(|(_, s)| fresh.iter().any(|f| Arc::ptr_eq(f, s)))
                .filter_map(|(slot, server)| self.launch(slot, server, &env))
                .collect();
            for rx in waits {
                let _ = rx.await;
            }
        }
        Ok(report)
    }
}
