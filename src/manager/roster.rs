//! Which servers a manager runs: every server it has ever run keeps its slot, and the
//! configured ones are listed in config order. A slot is never reused, so a tool object made
//! before a `reconfigure` never reaches another server than the one it was made for (a removed
//! or replaced server answers that it is closed).

use std::sync::Arc;

use crate::supervisor::Server;

pub(super) struct Roster {
    slots: Vec<Arc<Server>>,
    /// The slots of the configured servers, in config order.
    order: Vec<usize>,
}

impl Roster {
    pub fn new(servers: Vec<Arc<Server>>) -> Self {
        Self {
            order: (0..servers.len()).collect(),
            slots: servers,
        }
    }

    /// The server in `slot`, configured or not any more.
    pub fn get(&self, slot: usize) -> Option<&Arc<Server>> {
        self.slots.get(slot)
    }

    /// The configured servers with their slots, in config order.
    pub fn current(&self) -> impl ExactSizeIterator<Item = (usize, &Arc<Server>)> {
        self.order.iter().map(|&slot| (slot, &self.slots[slot]))
    }

    /// The configured server named `name`.
    pub fn named(&self, name: &str) -> Option<(usize, &Arc<Server>)> {
        self.current().find(|(_, s)| s.name() == name)
    }

    /// This roster with `order` as the configured servers (slots of this one, or of `added`,
    /// which get the slots after the last one).
    pub fn with(&self, order: Vec<Entry>) -> Self {
        let mut slots = self.slots.clone();
        let order = order
            .into_iter()
            .map(|entry| match entry {
                Entry::Kept(slot) => slot,
                Entry::New(server) => {
                    slots.push(server);
                    slots.len() - 1
                }
            })
            .collect();
        Self { slots, order }
    }
}

/// A configured server of a new roster: one kept from the old one, or a new one.
pub(super) enum Entry {
    Kept(usize),
    New(Arc<Server>),
}
