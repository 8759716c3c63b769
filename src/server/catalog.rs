//! What a [`super::provider::ToolProvider`] may serve besides tools: resources, resource
//! templates, resource subscriptions, prompts and completions, and notices of their lists
//! changing. A provider says which it [`Offers`]; the handler declares those capabilities
//! alone and answers every other of these methods -32601 (Method not found), as it does for a
//! provider with tools only (the default: `McpServerHost`).

use futures::future::BoxFuture;
use rmcp::ErrorData;

/// Which capabilities besides tools a provider serves now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Offers {
    pub resources: bool,
    /// `resources/subscribe` and `resources/unsubscribe` (only with `resources`).
    pub subscribe: bool,
    pub prompts: bool,
    pub completions: bool,
    /// The provider tells the server when its resource and prompt lists change
    /// (`listChanged` of those it offers).
    pub list_changed: bool,
}

impl Offers {
    /// Resource subscriptions are served (they need resources).
    pub fn subscriptions(&self) -> bool {
        self.resources && self.subscribe
    }
}

/// An answer of one of these methods: the result, or the JSON-RPC error to send.
pub type CatalogFuture<T> = BoxFuture<'static, Result<T, ErrorData>>;

/// The answer of a method the provider does not serve: -32601.
pub fn not_served<M: rmcp::model::ConstString, T: Send + 'static>() -> CatalogFuture<T> {
    Box::pin(std::future::ready(Err(ErrorData::method_not_found::<M>())))
}
