//! The servers' log messages (`notifications/message`), for whoever in the process follows them
//! (a gateway relays them to its own clients). They are the `serverLog` events the sessions
//! emit, already redacted (data and logger), taken off the way to the host's listeners: the
//! servers' event sink is a tee that also sends each one to a broadcast channel while anyone
//! follows it. Nothing is built or sent while nobody does.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::broadcast;

use super::Manager;
use crate::events::{Event, EventKind, EventSink, Events};

/// How many messages a slow follower may fall behind before it misses some.
const BACKLOG: usize = 256;

/// One server's log message, redacted.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerLog {
    /// The configured name of the server that sent it.
    pub server: String,
    /// Its level as the server named it (`debug` … `emergency`).
    pub level: String,
    /// The server's own logger name, if it gave one.
    pub logger: Option<String>,
    pub data: Value,
}

/// The servers' event sink: the host's events as before, and the log messages to followers.
pub(super) struct LogTee {
    host: Events,
    logs: broadcast::Sender<ServerLog>,
}

impl LogTee {
    /// The sink for the servers' sessions, and the channel followers subscribe to.
    pub(super) fn around(host: Events) -> (Events, broadcast::Sender<ServerLog>) {
        let logs = broadcast::Sender::new(BACKLOG);
        let tee = Arc::new(Self {
            host,
            logs: logs.clone(),
        });
        (Events::new(tee), logs)
    }
}

impl EventSink for LogTee {
    fn wants(&self, kind: EventKind) -> bool {
        self.host.wanted(kind) || (kind == EventKind::ServerLog && self.logs.receiver_count() > 0)
    }

    fn emit(&self, event: Event) {
        if let Event::ServerLog {
            server,
            level,
            logger,
            data,
        } = &event
            && self.logs.receiver_count() > 0
        {
            let _ = self.logs.send(ServerLog {
                server: server.clone(),
                level: level.clone(),
                logger: logger.clone(),
                data: data.clone(),
            });
        }
        self.host.emit_with(event.kind(), || event);
    }
}

impl Manager {
    /// Every server's log messages from now on, redacted, until the manager is dropped. A
    /// follower that falls more than a few hundred behind misses the oldest (`Lagged`).
    pub fn server_logs(&self) -> broadcast::Receiver<ServerLog> {
        self.server_logs.subscribe()
    }
}
