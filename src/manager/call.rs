//! One tool call as the manager runs it: where it goes, what it carries, how it can end early.

use std::sync::Arc;

use rmcp::model::JsonObject;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::View;
use crate::session::Progress;

/// A tool call: the route it was offered under, its arguments, its cancellation and where its
/// progress goes.
pub struct CallRequest {
    /// The host's id for the call (what the `toolCall` event names); may be empty.
    pub tool_call_id: String,
    pub server_index: usize,
    /// The server's own name for the tool.
    pub tool: String,
    /// The name the tool was offered to the agent under.
    pub agent_name: String,
    pub arguments: Option<JsonObject>,
    pub cancel: CancellationToken,
    pub progress: Option<mpsc::UnboundedSender<Progress>>,
    /// The view the tool was offered through, if any: its servers and allow/deny apply too.
    pub view: Option<Arc<View>>,
}
