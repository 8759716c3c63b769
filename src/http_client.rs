//! The reqwest client every network caller builds (the Streamable HTTP and SSE transports, the
//! AWS, GCP and Vault secret providers) and the one way a reqwest error is put into words.
//!
//! reqwest's own `Display` names the request's full URL, query included, and a query may carry
//! a credential: the descriptions here never print a reqwest error's top line, only what it is
//! and its causes.

use std::error::Error as StdError;
use std::time::Duration;

use reqwest::StatusCode;

/// Which redirects a client follows.
#[derive(Clone, Copy, Debug)]
pub enum Redirects {
    /// None: a redirect is the answer.
    Never,
    /// 307 and 308 (which keep the method and body) within the first request's origin, at most
    /// ten; any other redirect is handed back unfollowed for the caller to report.
    SameOrigin307And308,
}

/// The certificates a client trusts.
pub enum Roots {
    /// The platform's.
    Platform,
    /// The platform's and these.
    PlatformAnd(Vec<reqwest::Certificate>),
    /// These alone.
    Only(Vec<reqwest::Certificate>),
}

/// How a client is built. TLS is rustls (the crate's only reqwest TLS feature).
pub struct ClientOptions {
    pub connect_timeout: Duration,
    /// Limit on a whole request, the answer included; `None` for none (a stream stays open).
    pub request_timeout: Option<Duration>,
    /// How long an idle pooled connection is kept; `None` for reqwest's default.
    pub pool_idle_timeout: Option<Duration>,
    pub redirects: Redirects,
    /// Whether the proxy environment variables (`HTTPS_PROXY`, …) apply.
    pub use_proxy: bool,
    /// `None`: no `User-Agent` header.
    pub user_agent: Option<&'static str>,
    pub roots: Roots,
}

/// A client built as `options` say. The caller words the error (with [`error_chain`] or
/// [`innermost_cause`]).
pub fn build(options: ClientOptions) -> Result<reqwest::Client, reqwest::Error> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(options.connect_timeout)
        .redirect(match options.redirects {
            Redirects::Never => reqwest::redirect::Policy::none(),
            Redirects::SameOrigin307And308 => reqwest::redirect::Policy::custom(|attempt| {
                let same_origin = attempt
                    .previous()
                    .first()
                    .is_some_and(|first| first.origin() == attempt.url().origin());
                let keeps_body = matches!(
                    attempt.status(),
                    StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
                );
                if same_origin && keeps_body && attempt.previous().len() <= 10 {
                    attempt.follow()
                } else {
                    attempt.stop()
                }
            }),
        });
    if let Some(timeout) = options.request_timeout {
        builder = builder.timeout(timeout);
    }
    if let Some(idle) = options.pool_idle_timeout {
        builder = builder.pool_idle_timeout(idle);
    }
    if !options.use_proxy {
        builder = builder.no_proxy();
    }
    if let Some(agent) = options.user_agent {
        builder = builder.user_agent(agent);
    }
    builder = match options.roots {
        Roots::Platform => builder,
        Roots::PlatformAnd(certs) => builder.tls_certs_merge(certs),
        Roots::Only(certs) => builder.tls_certs_only(certs),
    };
    builder.build()
}

/// One link of an error chain as it may be shown: a reqwest error (whose `Display` names the
/// URL) becomes "invalid request" when it is a builder error and nothing otherwise; any other
/// error is its message.
fn link_text(error: &(dyn StdError + 'static)) -> String {
    match error.downcast_ref::<reqwest::Error>() {
        Some(re) if re.is_builder() => "invalid request".to_owned(),
        Some(_) => String::new(),
        None => error.to_string(),
    }
}

/// An error's message followed by its causes, joined by `": "`, deduplicated (a link whose
/// text an earlier one contains is left out), without reqwest's URL-bearing top line or hyper's
/// `client error (…)` wrapper.
pub fn error_chain(error: &(dyn StdError + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(e) = current {
        let text = link_text(e).trim().to_owned();
        // hyper's wrapper adds nothing a reader needs.
        let noise = text.starts_with("client error (");
        if !noise && !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        current = e.source();
    }
    parts.join(": ")
}

/// The deepest cause of a reqwest error, usually the useful part ("Connection refused");
/// `None` when it has no cause or the cause says nothing.
pub fn innermost_cause(error: &reqwest::Error) -> Option<String> {
    let mut innermost = None;
    let mut current = StdError::source(error);
    while let Some(e) = current {
        innermost = Some(e);
        current = e.source();
    }
    innermost.map(link_text).filter(|text| !text.is_empty())
}
