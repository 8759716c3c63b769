//! Only answers to requests this client sent reach rmcp.
//!
//! A server that answers an id it was never asked (a stray, a duplicate, an answer sent before
//! the request) is answering nobody. rmcp would take it for the answer to whatever it is
//! waiting for with that id, and during `initialize` it ends the handshake on any id it does
//! not expect ("conflict initialized response id"). The TypeScript SDK ignores such answers;
//! so does this wrapper, remembering the ids of the requests sent and letting each be answered
//! once.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use rmcp::model::{JsonRpcMessage, NumberOrString};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// Requests remembered while unanswered; past this the oldest are forgotten (calls that
/// timed out long ago, whose late answers nobody waits for).
const MAX_OPEN: usize = 65_536;

#[derive(Default)]
struct Open {
    ids: HashSet<String>,
    order: VecDeque<String>,
}

/// The same request id whether a server echoes it as a number or as a string of its digits.
fn key(id: &NumberOrString) -> String {
    match id {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => s.to_string(),
    }
}

pub struct OwnAnswers<T> {
    inner: T,
    open: Arc<Mutex<Open>>,
}

impl<T> OwnAnswers<T> {
    pub fn new(inner: T) -> Self {
        Self {
            inner,
            open: Arc::default(),
        }
    }

    /// Whether `id` is an open request of ours; it is answered now.
    fn answers(&self, id: &NumberOrString) -> bool {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        open.ids.remove(&key(id))
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for OwnAnswers<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(request) = &item {
            let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
            let id = key(&request.id);
            if open.ids.insert(id.clone()) {
                open.order.push_back(id);
            }
            while open.ids.len() > MAX_OPEN {
                let Some(oldest) = open.order.pop_front() else {
                    break;
                };
                open.ids.remove(&oldest);
            }
            // Ids answered in the meantime leave the front of the queue.
            let Open { ids, order } = &mut *open;
            while order.front().is_some_and(|id| !ids.contains(id)) {
                order.pop_front();
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            let id = match &message {
                JsonRpcMessage::Response(response) => Some(&response.id),
                JsonRpcMessage::Error(error) => error.id.as_ref(),
                _ => None,
            };
            match id {
                Some(id) if !self.answers(id) => {
                    tracing::debug!("ignoring an answer to request {id:?}, which is not open");
                }
                _ => return Some(message),
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
