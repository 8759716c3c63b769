//! Agent names for a set of servers, computed over every server's LAST-KNOWN tools (ready or
//! not) in config order, so a name depends only on the config and the tool lists, never on
//! which servers happen to be up; recomputed only when one of them published a new list.

use std::sync::{Arc, Mutex};

use crate::bridge::{self, NameScheme, ServerTools};
use crate::log::Log;
use crate::supervisor::{Server, Snapshot, ToolEntry};

/// The names, and the servers (by slot) and tool lists they were computed for (lists compared
/// by pointer: a supervisor publishes a new list on every discovery).
pub(super) struct NameTable {
    pub slots: Vec<usize>,
    pub lists: Vec<Arc<Vec<ToolEntry>>>,
    /// Per server (in the order given), the agent name of each tool.
    pub names: Vec<Vec<String>>,
}

/// The table for `servers` (slot, server) with their `snapshots`, from `cache` when it was
/// computed for the same lists. With `log`, each derived name is logged when it first appears.
pub(super) fn table(
    cache: &Mutex<Option<Arc<NameTable>>>,
    servers: &[(usize, &Arc<Server>)],
    snapshots: &[Snapshot],
    scheme: NameScheme,
    log: Option<&Log>,
) -> Arc<NameTable> {
    let mut cached = cache.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(table) = cached.as_ref()
        && table.lists.len() == snapshots.len()
        && table
            .slots
            .iter()
            .copied()
            .eq(servers.iter().map(|(slot, _)| *slot))
        && table
            .lists
            .iter()
            .zip(snapshots)
            .all(|(a, b)| Arc::ptr_eq(a, &b.tools))
    {
        return table.clone();
    }
    let inputs: Vec<ServerTools<'_>> = servers
        .iter()
        .zip(snapshots)
        .map(|((_, server), snap)| ServerTools {
            server: server.name(),
            prefix: server.config.tool_prefix.as_deref(),
            tools: snap.tools.iter().map(|t| t.mcp_name.as_str()).collect(),
        })
        .collect();
    let assigned = bridge::assign_tool_names(&inputs, scheme);
    let previous = cached.take();
    let slots: Vec<usize> = servers.iter().map(|(slot, _)| *slot).collect();
    let mut names = Vec::with_capacity(assigned.len());
    for (index, server_names) in assigned.iter().enumerate() {
        let mut list = Vec::with_capacity(server_names.len());
        // The same server's names last time, wherever it was in the order then.
        let before = previous.as_ref().and_then(|p| {
            let at = p.slots.iter().position(|&s| s == slots[index])?;
            p.names.get(at)
        });
        for (position, name) in server_names.iter().enumerate() {
            let unchanged = before
                .and_then(|l| l.get(position))
                .is_some_and(|old| *old == name.name);
            if !unchanged
                && let Some(log) = log
                && let Some(message) = bridge::derived_name_message(
                    inputs[index].server,
                    inputs[index].tools[position],
                    name,
                )
            {
                log.info(&message);
            }
            list.push(name.name.clone());
        }
        names.push(list);
    }
    let table = Arc::new(NameTable {
        slots,
        lists: snapshots.iter().map(|s| s.tools.clone()).collect(),
        names,
    });
    *cached = Some(table.clone());
    table
}
