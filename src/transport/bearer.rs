//! Bearer tokens on the remote transports. The transport asks for the token of each request and
//! reports a refusal (401, or 403 `insufficient_scope`) with the server's `WWW-Authenticate`
//! challenge; whoever holds the tokens (the OAuth layer) decides what happens next. A request
//! is sent again at most [`MAX_AUTH_RETRIES`] times.

use futures::future::BoxFuture;
use reqwest::header::{AUTHORIZATION, HeaderValue, WWW_AUTHENTICATE};
use secrecy::{ExposeSecret, SecretString};

/// How many times one request is sent again after its token was refused.
pub const MAX_AUTH_RETRIES: u32 = 2;

/// A refusal the server gave a request.
pub struct Refusal {
    /// 401 or 403.
    pub status: u16,
    /// The `WWW-Authenticate` header, if any.
    pub challenge: Option<String>,
    /// The token the refused request carried.
    pub sent: Option<SecretString>,
}

impl Refusal {
    /// The refusal in `response`, if it is one the token holder can act on: any 401, and a 403
    /// whose challenge says `insufficient_scope`.
    pub fn of(response: &reqwest::Response, sent: Option<&SecretString>) -> Option<Self> {
        let status = response.status().as_u16();
        let challenge = response
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let acts = status == 401
            || (status == 403
                && challenge
                    .as_deref()
                    .is_some_and(|c| c.contains("insufficient_scope")));
        acts.then(|| Self {
            status,
            challenge,
            sent: sent.cloned(),
        })
    }
}

/// Whoever holds a server's tokens.
pub trait Bearer: Send + Sync {
    /// The token for the next request (`None`: send it without one, and learn from the
    /// refusal). Refreshes first when the token is about to expire.
    fn token(&self) -> BoxFuture<'_, Result<Option<SecretString>, String>>;
    /// The server refused a request: get a token it will take (refresh, sign in, step up the
    /// scopes), or say why not — a message for the user, naming no token.
    fn refused(&self, refusal: Refusal) -> BoxFuture<'_, Result<(), String>>;
}

/// `builder` with `Authorization: Bearer <token>` (marked sensitive), when there is a token.
pub fn authorize(
    builder: reqwest::RequestBuilder,
    token: Option<&SecretString>,
) -> reqwest::RequestBuilder {
    let Some(token) = token else {
        return builder;
    };
    match HeaderValue::from_str(&format!("Bearer {}", token.expose_secret())) {
        Ok(mut value) => {
            value.set_sensitive(true);
            builder.header(AUTHORIZATION, value)
        }
        Err(_) => builder,
    }
}
