//! Resource subscriptions held on the servers for whoever re-serves them (a gateway's clients):
//! one upstream subscription per server and URI however many downstream subscribers share
//! it, made by the first and ended by the last. On a 2025-11-25 (or older) session that is
//! `resources/subscribe` and `resources/unsubscribe`; on a 2026-07-28 session, which has no
//! such requests, a `subscriptions/listen` stream for that URI held open until the last
//! subscriber leaves. A server that restarts lost its subscriptions: [`Manager::renew_resource_subscriptions`]
//! makes them again on its new session. The servers' `notifications/resources/updated` reach
//! the followers of [`Manager::catalog_changes`].

#![allow(deprecated)] // resources/subscribe is legacy-only in rmcp; older servers use it

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::time::Instant;

use rmcp::model::{
    ServerNotification, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use tokio::sync::broadcast;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::Manager;
use super::catalog::declares_subscribe;
use super::upstream::answer_within;
use crate::error::CallError;
use crate::session::{CatalogChange, CatalogChanges};
use crate::status::Status;
use crate::supervisor::Server;

/// The subscriptions held, by (server, URI).
#[derive(Default)]
pub(super) struct Held(tokio::sync::Mutex<HashMap<(String, String), Subscription>>);

struct Subscription {
    /// Downstream subscribers sharing it.
    count: usize,
    /// The session it was made on (when that session became ready).
    made_on: Option<Instant>,
    /// A 2026-07-28 subscription's stream, ended when dropped.
    stream: Option<DropGuard>,
}

impl Manager {
    /// Every server's resource and prompt changes from now on (resource updates only of what
    /// is subscribed). A follower that falls more than a few hundred behind misses the oldest.
    pub fn catalog_changes(&self) -> broadcast::Receiver<CatalogChange> {
        self.runtime.catalog_changes.follow()
    }

    /// Subscribes to `uri` on `server` for one more subscriber: upstream only for the first.
    /// Fails (and counts nothing) when the server is unknown, cannot be started, does not
    /// offer resource subscriptions, or refuses.
    pub async fn subscribe_resource(&self, server: &str, uri: &str) -> Result<(), CallError> {
        let server = self.server_named(server).map_err(CallError::Refused)?;
        let key = (server.name().to_owned(), uri.to_owned());
        let mut held = self.subscriptions.0.lock().await;
        if let Some(subscription) = held.get_mut(&key) {
            subscription.count += 1;
            return Ok(());
        }
        let mut subscription = Subscription {
            count: 1,
            made_on: None,
            stream: None,
        };
        self.subscribe_upstream(&server, uri, &mut subscription)
            .await?;
        held.insert(key, subscription);
        Ok(())
    }

    /// One subscriber of `uri` on `server` leaves; the last one ends the upstream subscription
    /// (a failure to end it is only logged: the server may be gone). Not subscribed: nothing.
    pub async fn release_resource(&self, server: &str, uri: &str) {
        let key = (server.to_owned(), uri.to_owned());
        let mut held = self.subscriptions.0.lock().await;
        let Entry::Occupied(mut entry) = held.entry(key) else {
            return;
        };
        entry.get_mut().count -= 1;
        if entry.get().count > 0 || entry.remove().stream.is_some() {
            // Still shared, or a 2026-07-28 stream (ended as its guard drops).
            return;
        }
        let Ok(server) = self.server_named(server) else {
            return;
        };
        let Ok(peer) = server.ready_peer() else {
            return; // its session is gone, and the subscription with it
        };
        let unsubscribe = peer.unsubscribe(UnsubscribeRequestParams::new(uri.to_owned()));
        if answer_within(server.request_timeout(), unsubscribe)
            .await
            .is_err()
        {
            self.log.debug(&format!(
                "MCP server '{}': resources/unsubscribe of a resource failed",
                server.name()
            ));
        }
    }

    /// Makes again, on each ready server's current session, the subscriptions made on an
    /// earlier one (a restart, a wake from idle): what a follower of the servers' states calls
    /// after each change. A server that is not ready keeps its subscriptions for later.
    pub async fn renew_resource_subscriptions(&self) {
        let mut held = self.subscriptions.0.lock().await;
        for ((name, uri), subscription) in held.iter_mut() {
            let Ok(server) = self.server_named(name) else {
                continue;
            };
            let snapshot = server.snapshot();
            if snapshot.status != Status::Ready || snapshot.ready_since == subscription.made_on {
                continue;
            }
            if let Err(error) = self.subscribe_upstream(&server, uri, subscription).await {
                self.log.warn(&format!(
                    "MCP server '{name}': a resource subscription could not be made again: {}",
                    self.log.redactor().redact(&error.to_string())
                ));
            }
        }
    }

    /// Makes `subscription` on `server`'s session (started if idle).
    async fn subscribe_upstream(
        &self,
        server: &Server,
        uri: &str,
        subscription: &mut Subscription,
    ) -> Result<(), CallError> {
        let peer = self.awake(server).await?;
        let made_on = server.snapshot().ready_since;
        if !declares_subscribe(&peer) {
            return Err(CallError::Refused(format!(
                "MCP server '{}' does not offer resource subscriptions",
                server.name()
            )));
        }
        let timeout = server.request_timeout();
        let legacy = (peer.peer_info()).is_some_and(|i| i.protocol_version.has_initialize());
        if legacy {
            let subscribe = peer.subscribe(SubscribeRequestParams::new(uri.to_owned()));
            answer_within(timeout, subscribe).await?;
            subscription.stream = None;
        } else {
            let filter = SubscriptionFilter::builder()
                .resource_subscriptions([uri])
                .build();
            let stream = answer_within(timeout, peer.listen(filter)).await?;
            let stop = CancellationToken::new();
            tokio::spawn(forward_updates(
                server.name().to_owned(),
                stream,
                self.runtime.catalog_changes.clone(),
                stop.clone(),
            ));
            subscription.stream = Some(stop.drop_guard());
        }
        subscription.made_on = made_on;
        Ok(())
    }
}

/// A 2026-07-28 subscription's updates to the followers, until `stop` (then the stream is
/// cancelled) or the stream ends.
async fn forward_updates(
    server: String,
    mut stream: rmcp::service::Subscription,
    changes: CatalogChanges,
    stop: CancellationToken,
) {
    loop {
        let next = tokio::select! {
            next = stream.next() => next,
            _ = stop.cancelled() => {
                let _ = stream.cancel().await;
                return;
            }
        };
        match next {
            Ok(Some(ServerNotification::ResourceUpdatedNotification(update))) => {
                changes.report(|| CatalogChange::Updated {
                    server: server.clone(),
                    uri: update.params.uri,
                });
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => return,
        }
    }
}
