//! The approved definition of every tool the manager has seen, by server and tool name, and
//! what a listing's tools get against it: a tool seen for the first time is approved as it is
//! (trust on first use); one whose definition differs from the approved one is reported once
//! per new definition, and withheld where the server's `pinning` is `enforce`, until
//! `approveTools` accepts it. Kept in a file when the manager was given `pinStore` (written
//! whole, atomically, mode 0600), in the host's `{ get, set }` store when it gave one (read once
//! before the first start, written by one background task, the newest state winning), else in
//! memory for the manager's lifetime.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::log::Log;
use crate::options::PinStore;
use crate::security::pinning::Pin;
use crate::supervisor::ToolEntry;

/// A tool whose definition is not the approved one.
pub(super) struct Mismatch {
    pub tool: String,
    pub changed: Vec<&'static str>,
}

#[derive(Default)]
struct Book {
    loaded: bool,
    approved: BTreeMap<String, BTreeMap<String, Pin>>,
    /// (server, tool, new definition) already reported.
    reported: HashSet<(String, String, [String; 5])>,
    /// Per server: the tool list (by pointer) and generation a verdict was made for.
    verdicts: HashMap<String, (usize, u64, Arc<Vec<bool>>)>,
    generation: u64,
}

pub(super) struct PinBook {
    store: Option<PinStore>,
    book: Mutex<Book>,
    /// The host store's newest text to write (its writer task sends the latest only).
    pending: tokio::sync::watch::Sender<Option<String>>,
}

impl PinBook {
    pub fn new(store: Option<PinStore>) -> Self {
        Self {
            store,
            book: Mutex::new(Book::default()),
            pending: tokio::sync::watch::channel(None).0,
        }
    }

    /// With a host store: reads it (once) and starts the task that writes it. Called before
    /// the first start, where a runtime runs.
    pub async fn preload(&self, log: &Log) {
        let Some(PinStore::Host { get, set }) = &self.store else {
            return;
        };
        if self.book.lock().unwrap_or_else(|p| p.into_inner()).loaded {
            return;
        }
        let text = match get(crate::hooks::callback_argument(None, ())).await {
            Ok(answer) => answer.and_then(|json| match serde_json::from_str::<Value>(&json) {
                Ok(Value::String(text)) => Some(Ok(text)),
                Ok(Value::Null) => None,
                _ => Some(Err(())),
            }),
            Err(e) => {
                log.warn(&format!(
                    "pinStore.get failed ({e}); every tool is new to it"
                ));
                None
            }
        };
        {
            let mut book = self.book.lock().unwrap_or_else(|p| p.into_inner());
            book.loaded = true;
            match text {
                None => {}
                Some(Ok(text)) => match parse(&text) {
                    Some(approved) => book.approved = approved,
                    None => log.warn("pinStore: not a store this package wrote; every tool is new to it"),
                },
                Some(Err(())) => log.warn(
                    "pinStore.get must return the text set() was given, or nothing; every tool is new to it",
                ),
            }
        }
        let mut pending = self.pending.subscribe();
        let (set, log) = (set.clone(), log.clone());
        tokio::spawn(async move {
            while pending.changed().await.is_ok() {
                let Some(text) = pending.borrow_and_update().clone() else {
                    continue;
                };
                let argument = crate::hooks::callback_argument(None, text);
                if let Err(e) = set(argument).await {
                    log.warn(&format!("pinStore.set failed: {e}"));
                }
            }
        });
    }

    /// For each of `tools` (a server's listing), whether its definition is the approved one
    /// (or new, and now approved), and the mismatches not reported before. Cached per listing.
    pub fn check(
        &self,
        server: &str,
        tools: &Arc<Vec<ToolEntry>>,
        log: &Log,
    ) -> (Arc<Vec<bool>>, Vec<Mismatch>) {
        let mut book = self.book.lock().unwrap_or_else(|p| p.into_inner());
        let key = Arc::as_ptr(tools) as usize;
        if let Some((list, generation, verdict)) = book.verdicts.get(server)
            && *list == key
            && *generation == book.generation
        {
            return (verdict.clone(), Vec::new());
        }
        self.load(&mut book, log);
        let mut dirty = false;
        let mut verdict = Vec::with_capacity(tools.len());
        let mut mismatches = Vec::new();
        for tool in tools.iter() {
            let Some(pin) = &tool.pin else {
                verdict.push(true);
                continue;
            };
            let approved = book.approved.entry(server.to_owned()).or_default();
            match approved.get(&tool.mcp_name) {
                None => {
                    approved.insert(tool.mcp_name.clone(), (**pin).clone());
                    dirty = true;
                    verdict.push(true);
                }
                Some(known) => {
                    let changed = known.changed_fields(pin);
                    if changed.is_empty() {
                        if known.annotations != pin.annotations {
                            // Annotations are hints, tracked apart: the new ones are kept.
                            approved.insert(tool.mcp_name.clone(), (**pin).clone());
                            dirty = true;
                        }
                        verdict.push(true);
                    } else {
                        let seen = (server.to_owned(), tool.mcp_name.clone(), pin.fields.clone());
                        if book.reported.insert(seen) {
                            mismatches.push(Mismatch {
                                tool: tool.mcp_name.clone(),
                                changed,
                            });
                        }
                        verdict.push(false);
                    }
                }
            }
        }
        if dirty {
            self.save(&book, log);
        }
        let verdict = Arc::new(verdict);
        let generation = book.generation;
        book.verdicts
            .insert(server.to_owned(), (key, generation, verdict.clone()));
        (verdict, mismatches)
    }

    /// Approves the current definitions of `tools` of `server` (those named in `names`, or
    /// all); returns the names approved.
    pub fn approve(
        &self,
        server: &str,
        tools: &[ToolEntry],
        names: Option<&[String]>,
        log: &Log,
    ) -> Vec<String> {
        let mut book = self.book.lock().unwrap_or_else(|p| p.into_inner());
        self.load(&mut book, log);
        let mut done = Vec::new();
        for tool in tools {
            let Some(pin) = &tool.pin else { continue };
            if names.is_some_and(|n| !n.contains(&tool.mcp_name)) {
                continue;
            }
            book.approved
                .entry(server.to_owned())
                .or_default()
                .insert(tool.mcp_name.clone(), (**pin).clone());
            done.push(tool.mcp_name.clone());
        }
        book.reported
            .retain(|(s, t, _)| !(s == server && done.contains(t)));
        book.generation += 1;
        self.save(&book, log);
        done
    }

    fn load(&self, book: &mut Book, log: &Log) {
        if book.loaded {
            return;
        }
        book.loaded = true;
        let Some(PinStore::File(path)) = &self.store else {
            return;
        };
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                log.warn(&format!(
                    "pinStore {}: cannot read it ({e}); every tool is new to it",
                    path.display()
                ));
                return;
            }
        };
        match parse(&text) {
            Some(approved) => book.approved = approved,
            None => log.warn(&format!(
                "pinStore {}: not a store this package wrote; every tool is new to it",
                path.display()
            )),
        }
    }

    fn save(&self, book: &Book, log: &Log) {
        let Some(store) = &self.store else { return };
        let servers: serde_json::Map<String, Value> = book
            .approved
            .iter()
            .map(|(server, tools)| {
                let tools: serde_json::Map<String, Value> = tools
                    .iter()
                    .map(|(tool, pin)| (tool.clone(), pin.to_json()))
                    .collect();
                (server.clone(), Value::Object(tools))
            })
            .collect();
        let text = serde_json::json!({ "version": 1, "servers": servers }).to_string();
        match store {
            PinStore::File(path) => {
                if let Err(e) = crate::atomic_file::write(path, text.as_bytes()) {
                    log.warn(&format!(
                        "pinStore {}: cannot write it: {e}",
                        path.display()
                    ));
                }
            }
            PinStore::Host { .. } => {
                self.pending.send_replace(Some(text));
            }
        }
    }
}

/// The approved definitions in a store's text, if it is a store this package wrote.
fn parse(text: &str) -> Option<BTreeMap<String, BTreeMap<String, Pin>>> {
    let v = serde_json::from_str::<Value>(text).ok()?;
    let servers = v.get("servers")?.as_object()?.clone();
    let mut approved = BTreeMap::new();
    for (server, tools) in servers {
        let mut pins = BTreeMap::new();
        for (tool, pin) in tools.as_object()? {
            pins.insert(tool.clone(), Pin::from_json(pin)?);
        }
        approved.insert(server, pins);
    }
    Some(approved)
}
