//! OAuth 2.1 for remote MCP servers (`auth: { type: 'oauth', … }`): the authorizer each such
//! server's transport asks for tokens, the stores tokens live in between starts, and what the
//! host lends the flow (its `authorize` step and its store).

mod assertion_grant;
mod authorizer;
mod dpop;
mod store;

use std::sync::Arc;

pub use authorizer::{Authorizer, ClientSecrets};
pub use store::{FileStore, HookStore, MemoryStore, TokenStore, store_key};

use crate::hooks::Hook;

/// The HTTP client of the grants this package sends itself (workload identity, DPoP token
/// requests): proxies honoured, the platform's roots, 30 s per request.
fn http_client(redirects: crate::http_client::Redirects) -> Result<reqwest::Client, String> {
    crate::http_client::build(crate::http_client::ClientOptions {
        connect_timeout: std::time::Duration::from_secs(10),
        request_timeout: Some(std::time::Duration::from_secs(30)),
        pool_idle_timeout: None,
        redirects,
        use_proxy: true,
        user_agent: None,
        roots: crate::http_client::Roots::Platform,
    })
    .map_err(|e| crate::http_client::error_chain(&e))
}

/// What the host gives every OAuth server of a manager.
#[derive(Clone)]
pub struct OAuthHost {
    /// `authorize(url, { server })`: shows the user `url` and resolves with the callback URL
    /// the browser was sent to, or the code. `None`: a server that needs a user ends `error`.
    pub authorize: Option<Hook>,
    pub store: Arc<dyn TokenStore>,
}

impl Default for OAuthHost {
    fn default() -> Self {
        Self {
            authorize: None,
            store: Arc::new(MemoryStore::default()),
        }
    }
}

impl std::fmt::Debug for OAuthHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthHost")
            .field("authorize", &self.authorize.is_some())
            .finish_non_exhaustive()
    }
}

/// Where a server's sign-in stands (`getStatus()`'s `auth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthState {
    /// No token asked for yet.
    Unknown,
    Authorized,
    /// A user must sign in (no `authorize` callback, or the refresh token was rejected).
    LoginRequired,
    /// The flow failed (discovery, the grant, the store).
    Failed,
}

impl AuthState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unknown => "pending",
            Self::Authorized => "authorized",
            Self::LoginRequired => "login-required",
            Self::Failed => "error",
        }
    }
}
