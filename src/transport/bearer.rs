//! Bearer tokens on the remote transports. The transport asks for the token of each request and
//! reports a refusal (401, or 403 `insufficient_scope`) with the server's `WWW-Authenticate`
//! challenge; whoever holds the tokens (the OAuth layer) decides what happens next. A request
//! is sent again at most [`MAX_AUTH_RETRIES`] times.

use futures::future::BoxFuture;
use std::sync::Arc;

use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue, WWW_AUTHENTICATE};
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
    /// A `DPoP-Nonce` the server gave with the refusal.
    pub nonce: Option<String>,
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
        let nonce = response
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        acts.then(|| Self {
            status,
            challenge,
            sent: sent.cloned(),
            nonce,
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
    /// The headers presenting `token` on a `method` request to `url`: `Authorization: Bearer`
    /// unless the holder binds its tokens to a key (DPoP).
    fn present(
        &self,
        _method: &str,
        _url: &str,
        token: &SecretString,
    ) -> Vec<(HeaderName, HeaderValue)> {
        sensitive(&format!("Bearer {}", token.expose_secret()))
            .map(|value| (AUTHORIZATION, value))
            .into_iter()
            .collect()
    }
}

/// A header value marked sensitive (never printed by the HTTP stack), if `text` is one.
pub fn sensitive(text: &str) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(text).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// `builder` with the headers that present `token` (from `holder`), when there is a token.
pub fn authorize(
    builder: reqwest::RequestBuilder,
    holder: Option<&Arc<dyn Bearer>>,
    method: &str,
    url: &str,
    token: Option<&SecretString>,
) -> reqwest::RequestBuilder {
    let (Some(holder), Some(token)) = (holder, token) else {
        return builder;
    };
    let mut builder = builder;
    for (name, value) in holder.present(method, url, token) {
        builder = builder.header(name, value);
    }
    builder
}

/// Why [`send`] got no answer.
pub enum Unsent<E> {
    /// The request could not be sent (what `send` said).
    Failed(E),
    /// The server refused the token and no new one could be had (a message for the user).
    Refused(String),
}

/// Sends what `build` makes through `send`, with `holder`'s token when there is a holder; when
/// the server refuses the token, the holder gets a new one and the request is built and sent
/// again, at most [`MAX_AUTH_RETRIES`] times. Without a holder: one `build`, one `send`.
pub async fn send<E, Fut>(
    holder: Option<&Arc<dyn Bearer>>,
    method: &str,
    url: &str,
    mut build: impl FnMut() -> reqwest::RequestBuilder,
    mut send: impl FnMut(reqwest::RequestBuilder) -> Fut,
) -> Result<reqwest::Response, Unsent<E>>
where
    Fut: std::future::Future<Output = Result<reqwest::Response, E>>,
{
    let mut retries = 0;
    loop {
        let token = match holder {
            Some(holder) => holder.token().await.map_err(Unsent::Refused)?,
            None => None,
        };
        let builder = authorize(build(), holder, method, url, token.as_ref());
        let response = send(builder).await.map_err(Unsent::Failed)?;
        if let Some(holder) = holder
            && retries < MAX_AUTH_RETRIES
            && let Some(refusal) = Refusal::of(&response, token.as_ref())
        {
            retries += 1;
            drop(response);
            holder.refused(refusal).await.map_err(Unsent::Refused)?;
            continue;
        }
        return Ok(response);
    }
}
