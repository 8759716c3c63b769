//! What a server says about its resources and prompts changing: its resource list, its prompt
//! list, one subscribed resource. Each session reports them to the [`CatalogChanges`] every
//! server of a manager shares, where whoever re-serves the servers (a gateway) follows them.
//! Nothing is built or sent while nobody follows.

use tokio::sync::broadcast;

/// How many changes a slow follower may fall behind before it misses some.
const BACKLOG: usize = 256;

/// One server's change, named by the server's configured name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogChange {
    /// `notifications/resources/list_changed`.
    Resources { server: String },
    /// `notifications/prompts/list_changed`.
    Prompts { server: String },
    /// `notifications/resources/updated` of a resource subscribed to.
    Updated { server: String, uri: String },
}

/// Where the sessions report changes, and where followers subscribe.
#[derive(Debug, Clone)]
pub struct CatalogChanges(broadcast::Sender<CatalogChange>);

impl Default for CatalogChanges {
    fn default() -> Self {
        Self(broadcast::Sender::new(BACKLOG))
    }
}

impl CatalogChanges {
    /// Sends `change` to the followers, if there are any (`make` is not run otherwise).
    pub fn report(&self, make: impl FnOnce() -> CatalogChange) {
        if self.0.receiver_count() > 0 {
            let _ = self.0.send(make());
        }
    }

    /// Every change from now on. A follower that falls behind misses the oldest (`Lagged`).
    pub fn follow(&self) -> broadcast::Receiver<CatalogChange> {
        self.0.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_reach_followers_and_nothing_is_made_without_one() {
        let changes = CatalogChanges::default();
        changes.report(|| unreachable!("nobody follows"));
        let mut follower = changes.follow();
        let update = CatalogChange::Updated {
            server: "a".into(),
            uri: "test://x".into(),
        };
        changes.report(|| update.clone());
        assert_eq!(follower.try_recv().ok(), Some(update));
    }
}
