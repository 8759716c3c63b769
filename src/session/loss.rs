//! Loss detection: a session whose server is gone must end, even when the transport itself
//! would keep waiting (rmcp's Streamable HTTP worker outlives a server that is gone).

use std::time::Duration;

use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio_util::sync::CancellationToken;

/// Ends the session (`receive()` returns `None`, so rmcp's service stops) once `lost` fires.
///
/// Messages already on their way when it fires (typically the error answer of the call that
/// found the server gone) are still handed over, each within a short grace.
pub struct EndOnLoss<T> {
    inner: T,
    lost: CancellationToken,
    /// Messages handed over since `lost` fired.
    drained: Option<usize>,
}

/// How long, once the server is gone, a message already on its way may take to arrive.
const DRAIN_GRACE: Duration = Duration::from_millis(100);
/// At most this many messages are handed over once the server is gone.
const DRAIN_MAX: usize = 64;

impl<T> EndOnLoss<T> {
    pub fn new(inner: T, lost: CancellationToken) -> Self {
        Self {
            inner,
            lost,
            drained: None,
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for EndOnLoss<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.drained.is_none() {
            tokio::select! {
                biased;
                message = self.inner.receive() => return message,
                _ = self.lost.cancelled() => self.drained = Some(0),
            }
        }
        let drained = self.drained.as_mut()?;
        if *drained >= DRAIN_MAX {
            return None;
        }
        *drained += 1;
        tokio::time::timeout(DRAIN_GRACE, self.inner.receive())
            .await
            .ok()
            .flatten()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
