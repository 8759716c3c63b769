//! List changes on 2026-07-28 sessions: the revision has no unsolicited notifications, so the
//! client opens a `subscriptions/listen` stream for the lists it follows, and opens it again
//! when the stream breaks (a dropped HTTP response, a lagging reader) while the session lives.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, RoleClient, SubscriptionEnd};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::catalog_changes::CatalogChange;
use super::handler::CatalogCallback;
use crate::log::Log;

/// Streams opened again in a row without one notification in between before giving up.
const MAX_REOPENS: u32 = 5;

/// What a list change wakes.
pub struct ListChanges {
    pub tools: Arc<Notify>,
    /// Resource and prompt list changes (followed only when given).
    pub catalog: Option<CatalogCallback>,
}

/// Follows the server's tool (and resource and prompt) list changes until `stop` fires. Only for a
/// session without the `initialize` handshake, and only for the lists the server says change.
pub fn follow(
    server: String,
    peer: Peer<RoleClient>,
    changes: ListChanges,
    log: Log,
    stop: CancellationToken,
) {
    let Some(info) = peer.peer_info() else {
        return;
    };
    if info.protocol_version.has_initialize() {
        return;
    }
    let caps = &info.capabilities;
    let mut filter = SubscriptionFilter::builder();
    let mut any = false;
    if caps.tools.as_ref().and_then(|t| t.list_changed) == Some(true) {
        filter = filter.tools_list_changed();
        any = true;
    }
    if changes.catalog.is_some() {
        if caps.resources.as_ref().and_then(|r| r.list_changed) == Some(true) {
            filter = filter.resources_list_changed();
            any = true;
        }
        if caps.prompts.as_ref().and_then(|p| p.list_changed) == Some(true) {
            filter = filter.prompts_list_changed();
            any = true;
        }
    }
    if !any {
        return;
    }
    let filter = filter.build();
    tokio::spawn(async move {
        tokio::select! {
            _ = run(&server, &peer, filter, &changes, &log) => {}
            _ = stop.cancelled() => {}
        }
    });
}

async fn run(
    server: &str,
    peer: &Peer<RoleClient>,
    filter: SubscriptionFilter,
    changes: &ListChanges,
    log: &Log,
) {
    let mut reopens = 0;
    loop {
        let mut subscription = match peer.listen(filter.clone()).await {
            Ok(subscription) => subscription,
            Err(error) => {
                log.debug(&format!(
                    "MCP server '{server}': subscriptions/listen failed: {error}"
                ));
                return;
            }
        };
        if reopens > 0 {
            // Something may have changed while no stream was open.
            changes.tools.notify_one();
            if let Some(f) = &changes.catalog {
                let server = server.to_owned();
                f(CatalogChange::Resources {
                    server: server.clone(),
                });
                f(CatalogChange::Prompts { server });
            }
        }
        loop {
            match subscription.next().await {
                Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                    reopens = 0;
                    changes.tools.notify_one();
                }
                Ok(Some(ServerNotification::ResourceListChangedNotification(_))) => {
                    reopens = 0;
                    if let Some(f) = &changes.catalog {
                        f(CatalogChange::Resources {
                            server: server.to_owned(),
                        });
                    }
                }
                Ok(Some(ServerNotification::PromptListChangedNotification(_))) => {
                    reopens = 0;
                    if let Some(f) = &changes.catalog {
                        f(CatalogChange::Prompts {
                            server: server.to_owned(),
                        });
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        match subscription.end() {
            Some(SubscriptionEnd::Abrupt | SubscriptionEnd::Lagged { .. }) | None => {}
            // The server or we ended it on purpose.
            Some(_) => return,
        }
        reopens += 1;
        if reopens > MAX_REOPENS || peer.is_transport_closed() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100 * u64::from(reopens))).await;
    }
}
