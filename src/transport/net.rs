//! HTTP plumbing shared by the Streamable HTTP client and the legacy SSE transport: the target
//! URL and how it is shown, the server's [client](crate::http_client) (its `caFile`, the
//! redirects it follows, its connect timeout), the server's own headers, bounded body reads and
//! plain-language error descriptions.
//!
//! Nothing here formats a header value or a query string into a message.

use std::error::Error as StdError;
use std::time::Duration;

use futures::StreamExt;
use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use secrecy::{ExposeSecret, SecretString};

use crate::secrets::Redactor;

use crate::http_client::{self, ClientOptions, Redirects, Roots, error_chain};

/// Most bytes of an error response body that are read (to find a JSON-RPC error in it).
pub const MAX_ERROR_BODY: usize = 64 * 1024;

/// Headers the transports set themselves; a configured header may not replace them.
const RESERVED: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "host",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "transfer-encoding",
    "connection",
];

/// The server's URL and the form of it that may appear in messages.
#[derive(Clone, Debug)]
pub struct Target {
    pub url: Url,
    /// `scheme://host[:port]/path`: no user info, query or fragment (they may carry secrets).
    pub shown: String,
}

impl Target {
    pub fn parse(url: &str) -> Result<Self, String> {
        let parsed = Url::parse(url).map_err(|e| format!("invalid server url: {e}"))?;
        let shown = show_url(&parsed);
        match parsed.scheme() {
            "http" | "https" => {}
            other => {
                return Err(format!(
                    "unsupported url scheme '{other}' in {shown} (expected http or https)"
                ));
            }
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(format!("server url {shown} has no host"));
        }
        Ok(Self { url: parsed, shown })
    }
}

/// A URL as it may be shown: scheme, host, port and path only.
pub fn show_url(url: &Url) -> String {
    let mut shown = format!("{}://{}", url.scheme(), url.host_str().unwrap_or(""));
    if let Some(port) = url.port() {
        shown.push_str(&format!(":{port}"));
    }
    shown.push_str(url.path());
    shown
}

/// The configured headers as a header map whose values are marked sensitive (never shown by
/// `Debug`). Errors name the header, never its value.
pub fn user_headers(headers: &[(String, SecretString)]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("invalid header name '{name}'"))?;
        if RESERVED.contains(&header.as_str()) {
            return Err(format!(
                "header '{name}' is set by the transport and cannot be configured"
            ));
        }
        let mut value = HeaderValue::from_str(value.expose_secret()).map_err(|_| {
            format!("header '{name}' has a value that is not a valid HTTP header value")
        })?;
        value.set_sensitive(true);
        map.append(header, value);
    }
    Ok(map)
}

/// Builds the HTTP client for one server: the system's roots plus `ca_file`, a connect timeout,
/// and redirects followed only within the server's origin (307/308, which keep method and body).
/// Any other redirect is handed back unfollowed and reported by the caller.
pub fn build_client(
    ca_file: Option<&str>,
    connect_timeout: Duration,
) -> Result<reqwest::Client, String> {
    let roots = match ca_file {
        None => Roots::Platform,
        Some(path) => {
            let pem =
                std::fs::read(path).map_err(|e| format!("cannot read caFile '{path}': {e}"))?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                format!(
                    "caFile '{path}' is not a PEM certificate bundle: {}",
                    error_chain(&e)
                )
            })?;
            if certs.is_empty() {
                return Err(format!("caFile '{path}' holds no PEM certificate"));
            }
            Roots::PlatformAnd(certs)
        }
    };
    http_client::build(ClientOptions {
        connect_timeout,
        // A stream stays open as long as the server keeps it.
        request_timeout: None,
        // Keep connections short-lived: a pooled connection to a restarted server is a
        // stale one.
        pool_idle_timeout: Some(Duration::from_secs(30)),
        redirects: Redirects::SameOrigin307And308,
        use_proxy: true,
        user_agent: None,
        roots,
    })
    .map_err(|e| format!("cannot set up the HTTP client: {}", error_chain(&e)))
}

/// Why a request could not be made, in words, naming the URL: connection refused, DNS
/// failure, TLS failure, timeout, a connection dropped while reading.
pub fn describe(error: &reqwest::Error, target: &Target) -> String {
    let cause = error_chain(error);
    let lower = cause.to_ascii_lowercase();
    let (lead, what) = if error.is_timeout() {
        ("cannot connect to", "timed out")
    } else if error.is_dns() || lower.contains("dns error") || lower.contains("lookup address") {
        ("cannot connect to", "DNS lookup failed")
    } else if lower.contains("certificate")
        || lower.contains("tls")
        || lower.contains("handshake")
        || lower.contains("invalidcontenttype")
        || lower.contains("corrupt message")
    {
        ("cannot connect to", "TLS handshake failed")
    } else if has_io_kind(error, std::io::ErrorKind::ConnectionRefused) {
        ("cannot connect to", "connection refused")
    } else if error.is_connect() {
        ("cannot connect to", "connection failed")
    } else if error.is_body() || error.is_decode() {
        ("the connection to", "broke while reading the answer")
    } else {
        ("the request to", "failed")
    };
    if cause.is_empty() {
        format!("{lead} {}: {what}", target.shown)
    } else {
        format!("{lead} {}: {what} ({cause})", target.shown)
    }
}

/// Whether a link of `error`'s source chain is an I/O error of `kind`.
pub fn has_io_kind(error: &(dyn StdError + 'static), kind: std::io::ErrorKind) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == kind)
        {
            return true;
        }
        current = e.source();
    }
    false
}

/// True when the failure means the server cannot be reached (as opposed to an HTTP answer).
pub fn is_unreachable(error: &reqwest::Error) -> bool {
    error.is_connect() || error.is_timeout() || error.is_request() || error.is_body()
}

/// The outcome of reading a body with a limit.
pub enum Body {
    Complete(Vec<u8>),
    TooLarge,
}

/// Reads a response body, stopping as soon as it passes `limit` bytes.
pub async fn read_bounded(
    response: reqwest::Response,
    limit: usize,
) -> Result<Body, reqwest::Error> {
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Ok(Body::TooLarge);
    }
    // The chunks are kept as they come and joined once at the end: growing one buffer would
    // copy it at every doubling (the allocator may not be able to grow it in place), holding
    // up to half again the limit at the peak.
    let mut stream = response.bytes_stream();
    let mut chunks = Vec::new();
    let mut total = 0usize;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if chunk.len() > limit - total {
            return Ok(Body::TooLarge);
        }
        total += chunk.len();
        chunks.push(chunk);
    }
    let mut body = Vec::with_capacity(total);
    for chunk in chunks {
        body.extend_from_slice(&chunk);
    }
    Ok(Body::Complete(body))
}

/// A short, single-line view of a body for error messages.
pub fn preview(body: &[u8], redactor: &Redactor) -> String {
    let text = String::from_utf8_lossy(body);
    // Masked before it is cut: a cut can leave half a secret that no longer matches.
    let text = redactor.redact(&text);
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let trimmed = one_line.split_whitespace().collect::<Vec<_>>().join(" ");
    if trimmed.chars().count() > 160 {
        let cut: String = trimmed.chars().take(160).collect();
        format!("{cut}…")
    } else {
        trimmed
    }
}

/// The message for an HTTP redirect that was not followed.
pub fn redirect_refused(response: &reqwest::Response, target: &Target) -> String {
    let status = response.status();
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|loc| response.url().join(loc).ok());
    match location {
        Some(to) if to.origin() != target.url.origin() => format!(
            "{} answered HTTP {} redirecting to another origin ({}); not followed: the server's \
             headers are only sent to its own origin",
            target.shown,
            status.as_u16(),
            show_url(&to)
        ),
        Some(to) => format!(
            "{} answered HTTP {} redirecting to {}; only 307/308 redirects are followed, configure \
             the new url instead",
            target.shown,
            status.as_u16(),
            show_url(&to)
        ),
        None => format!(
            "{} answered HTTP {} without a usable Location",
            target.shown,
            status.as_u16()
        ),
    }
}

/// The media type of a response, lower-cased, without parameters.
pub fn content_type(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
}
