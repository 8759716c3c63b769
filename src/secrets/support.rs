//! Plumbing shared by the network and process providers: the environment they
//! read ([`EnvSource`]), HTTP clients, bounded body reads, safe error summaries
//! (a status code and the provider's error code, never a body), a zeroising
//! JSON string type, base64 and UTC time helpers.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use secrecy::SecretString;
use secrecy::zeroize::Zeroizing;
use serde::{Deserialize, Deserializer};

use crate::http_client::{self, ClientOptions, Redirects, Roots};

/// Where a provider reads its configuration variables (`AWS_*`, `VAULT_*`,
/// `GOOGLE_*`, `HOME`, and the `${VAR}` substitutions of the resolver).
///
/// [`EnvSource::Process`] reads the host environment at resolve time (the
/// default); [`EnvSource::fixed`] pins a map, so tests and embedders can run
/// providers side by side without touching the process environment.
#[derive(Clone, Default)]
pub enum EnvSource {
    #[default]
    Process,
    Fixed(Arc<BTreeMap<String, String>>),
}

impl fmt::Debug for EnvSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Process => f.write_str("EnvSource::Process"),
            // Values may be credentials: keys only.
            Self::Fixed(m) => f
                .debug_tuple("EnvSource::Fixed")
                .field(&m.keys().collect::<Vec<_>>())
                .finish(),
        }
    }
}

impl EnvSource {
    /// The host environment.
    pub fn process() -> Self {
        Self::Process
    }

    /// A fixed set of variables; nothing else is visible.
    pub fn fixed<I, K, V>(vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        Self::Fixed(Arc::new(
            vars.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        ))
    }

    /// The variable's value; `None` when unset (or, for the process, not Unicode).
    pub fn get(&self, name: &str) -> Option<String> {
        match self {
            Self::Process => std::env::var(name).ok(),
            Self::Fixed(m) => m.get(name).cloned(),
        }
    }

    /// Like [`Self::get`], but an empty value counts as unset.
    pub fn get_nonempty(&self, name: &str) -> Option<String> {
        self.get(name).filter(|v| !v.is_empty())
    }

    /// `$HOME`.
    pub fn home(&self) -> Option<PathBuf> {
        self.get_nonempty("HOME").map(PathBuf::from)
    }

    /// `~` and `~/…` expanded with [`Self::home`]; anything else unchanged.
    pub fn expand_tilde(&self, path: &str) -> PathBuf {
        let rest = if path == "~" {
            Some("")
        } else {
            path.strip_prefix("~/")
        };
        match (rest, self.home()) {
            (Some(""), Some(h)) => h,
            (Some(r), Some(h)) => h.join(r),
            _ => PathBuf::from(path),
        }
    }
}

/// Largest response body any provider reads (1 MiB).
pub(crate) const MAX_BODY_BYTES: usize = 1 << 20;

/// The providers' HTTP client: no redirects followed, the crate's user agent, a request
/// timeout. `metadata`: for link-local metadata services: no proxy, short timeouts. `roots`:
/// trust only these certificates (`VAULT_CACERT`).
pub(crate) fn http_client(
    metadata: bool,
    roots: Option<Vec<reqwest::Certificate>>,
) -> Result<reqwest::Client, String> {
    http_client::build(ClientOptions {
        connect_timeout: if metadata {
            Duration::from_secs(1)
        } else {
            Duration::from_secs(10)
        },
        request_timeout: Some(if metadata {
            Duration::from_secs(3)
        } else {
            Duration::from_secs(60)
        }),
        pool_idle_timeout: None,
        redirects: Redirects::Never,
        use_proxy: !metadata,
        user_agent: Some(concat!("openclaw-mcp-native/", env!("CARGO_PKG_VERSION"))),
        roots: roots.map_or(Roots::Platform, Roots::Only),
    })
    .map_err(|e| format!("cannot build an HTTP client: {}", without_url(&e)))
}

/// A `reqwest::Error` as the providers report it: what kind of failure, and its innermost
/// cause (bounded); never its URL (a URL may carry a query the caller did not mean to print)
/// nor any body.
pub(crate) fn without_url(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else if e.is_request() {
        "request failed"
    } else if e.is_body() || e.is_decode() {
        "reading the response failed"
    } else if e.is_builder() {
        "invalid request"
    } else {
        "HTTP error"
    };
    match http_client::innermost_cause(e) {
        Some(c) => format!("{kind} ({})", truncate_chars(&c, 160)),
        None => kind.to_owned(),
    }
}

pub(crate) fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((cut, _)) => format!("{}…", &s[..cut]),
    }
}

/// A response: status, the headers that identify errors, and the body in a
/// zeroise-on-drop buffer (it may hold a secret).
pub(crate) struct Response {
    pub status: reqwest::StatusCode,
    pub error_type_header: Option<String>,
    pub body: Zeroizing<Vec<u8>>,
}

/// Sends `req` and reads at most [`MAX_BODY_BYTES`] of the answer.
pub(crate) async fn send(req: reqwest::RequestBuilder) -> Result<Response, String> {
    let mut resp = req.send().await.map_err(|e| without_url(&e))?;
    let status = resp.status();
    let error_type_header = resp
        .headers()
        .get("x-amzn-errortype")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    // Sized up front from Content-Length (bounded) so that growth reallocations,
    // which would leave unzeroised copies behind, are rare.
    let hint = resp
        .content_length()
        .map(|n| (n as usize).min(MAX_BODY_BYTES))
        .unwrap_or(4096);
    let mut body = Zeroizing::new(Vec::with_capacity(hint));
    while let Some(chunk) = resp.chunk().await.map_err(|e| without_url(&e))? {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(format!(
                "the response is larger than {MAX_BODY_BYTES} bytes (status {})",
                status.as_u16()
            ));
        }
        if body.capacity() < body.len() + chunk.len() {
            let mut bigger = Zeroizing::new(Vec::with_capacity(
                (body.len() + chunk.len()).max(body.capacity() * 2),
            ));
            bigger.extend_from_slice(&body);
            body = bigger;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Response {
        status,
        error_type_header,
        body,
    })
}

fn safe_code(s: &str, allow_spaces: bool) -> Option<String> {
    let s = s.trim();
    if s.is_empty() || s.len() > 120 {
        return None;
    }
    let ok = s.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(c, '_' | '.' | '-' | ':')
            || (allow_spaces && c == ' ')
    });
    ok.then(|| s.to_owned())
}

/// The provider's error code in a failed response, if it has a recognisable
/// one: AWS `x-amzn-ErrorType` / JSON `__type` / XML `<Code>`, GCP
/// `error.status`, OAuth `error`, a JSON `code`, or Vault's first `errors`
/// entry when it is a short plain phrase (`permission denied`). Only a bounded
/// token of a restricted alphabet is returned, never the body.
pub(crate) fn error_code(resp: &Response) -> Option<String> {
    if let Some(h) = &resp.error_type_header {
        let h = h.split(':').next().unwrap_or_default();
        if let Some(c) = safe_code(h, false) {
            return Some(c);
        }
    }
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&resp.body) {
        let pick = |p: &str| v.pointer(p).and_then(serde_json::Value::as_str);
        if let Some(t) = pick("/__type") {
            let t = t.rsplit('#').next().unwrap_or(t);
            if let Some(c) = safe_code(t, false) {
                return Some(c);
            }
        }
        for p in ["/error/status", "/error", "/code", "/Code"] {
            if let Some(c) = pick(p).and_then(|s| safe_code(s, false)) {
                return Some(c);
            }
        }
        if let Some(c) = pick("/errors/0").and_then(|s| safe_code(s, true)) {
            return Some(c);
        }
        return None;
    }
    // XML (AWS query APIs, moto): <Code>X</Code>.
    let text = String::from_utf8_lossy(&resp.body);
    let start = text.find("<Code>")? + "<Code>".len();
    let end = text[start..].find("</Code>")? + start;
    safe_code(&text[start..end], false)
}

/// `answered <status> (<code>)`, or `answered <status>` when no code is known.
pub(crate) fn describe_failure(resp: &Response) -> String {
    match error_code(resp) {
        Some(c) => format!("answered {} ({c})", resp.status.as_u16()),
        None => format!("answered {}", resp.status.as_u16()),
    }
}

/// A JSON string deserialised straight into a zeroise-on-drop buffer.
/// (serde_json may still use an internal scratch buffer for strings with
/// escapes; that copy is not wiped.)
pub(crate) struct Wiped(pub Zeroizing<String>);

impl<'de> Deserialize<'de> for Wiped {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|s| Wiped(Zeroizing::new(s)))
    }
}

impl Wiped {
    pub fn into_secret(self) -> SecretString {
        SecretString::from(self.0.as_str())
    }
}

/// A JSON value as a secret string: strings as they are, numbers and booleans
/// in their JSON spelling, objects and arrays as compact JSON; `None` for null.
pub(crate) fn json_value_to_secret(v: &serde_json::Value) -> Option<SecretString> {
    match v {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(SecretString::from(s.as_str())),
        other => Some(SecretString::from(
            Zeroizing::new(other.to_string()).as_str(),
        )),
    }
}

pub(crate) mod b64 {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    use secrecy::zeroize::Zeroizing;

    /// Standard alphabet, padding optional, whitespace ignored (PEM).
    pub fn decode(s: &str) -> Option<Zeroizing<Vec<u8>>> {
        let compact: Zeroizing<String> =
            Zeroizing::new(s.chars().filter(|c| !c.is_ascii_whitespace()).collect());
        let trimmed = compact.trim_end_matches('=');
        let mut padded = Zeroizing::new(String::with_capacity(trimmed.len() + 3));
        padded.push_str(trimmed);
        while !padded.len().is_multiple_of(4) {
            padded.push('=');
        }
        STANDARD.decode(padded.as_bytes()).ok().map(Zeroizing::new)
    }

    pub fn url_nopad(bytes: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(bytes)
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `(year, month, day, hour, minute, second)` in UTC for Unix seconds.
pub(crate) fn civil_from_unix(secs: u64) -> (i64, u32, u32, u32, u32, u32) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        m,
        d,
        (rem / 3600) as u32,
        ((rem % 3600) / 60) as u32,
        (rem % 60) as u32,
    )
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)` into Unix seconds.
pub(crate) fn parse_rfc3339(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> { s.get(r)?.parse().ok() };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        rest = &r[n..];
    }
    let offset: i64 = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && (rest.starts_with('+') || rest.starts_with('-')) => {
            let oh: i64 = rest.get(1..3)?.parse().ok()?;
            let om: i64 = rest.get(4..6)?.parse().ok()?;
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (oh * 3600 + om * 60)
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo as u32, d as u32);
    let t = days * 86_400 + h * 3600 + mi * 60 + se - offset;
    u64::try_from(t).ok()
}

/// Lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_round_trips() {
        assert_eq!(civil_from_unix(0), (1970, 1, 1, 0, 0, 0));
        assert_eq!(civil_from_unix(1_440_938_160), (2015, 8, 30, 12, 36, 0));
        assert_eq!(parse_rfc3339("2015-08-30T12:36:00Z"), Some(1_440_938_160));
        assert_eq!(
            parse_rfc3339("2015-08-30T14:36:00.123+02:00"),
            Some(1_440_938_160)
        );
        assert_eq!(parse_rfc3339("2024-02-29T00:00:00Z"), Some(1_709_164_800));
        assert_eq!(parse_rfc3339("nope"), None);
    }

    #[test]
    fn error_codes_never_carry_bodies() {
        let r = |body: &str, h: Option<&str>| Response {
            status: reqwest::StatusCode::BAD_REQUEST,
            error_type_header: h.map(str::to_owned),
            body: Zeroizing::new(body.as_bytes().to_vec()),
        };
        assert_eq!(
            error_code(&r(
                r#"{"__type":"com.amazon#ResourceNotFoundException","message":"x"}"#,
                None
            ))
            .as_deref(),
            Some("ResourceNotFoundException")
        );
        assert_eq!(
            error_code(&r("", Some("AccessDeniedException:http://internal"))).as_deref(),
            Some("AccessDeniedException")
        );
        assert_eq!(
            error_code(&r("<E><Code>SignatureDoesNotMatch</Code></E>", None)).as_deref(),
            Some("SignatureDoesNotMatch")
        );
        assert_eq!(
            error_code(&r(r#"{"errors":["permission denied"]}"#, None)).as_deref(),
            Some("permission denied")
        );
        assert_eq!(
            error_code(&r(r#"{"error":{"code":404,"status":"NOT_FOUND"}}"#, None)).as_deref(),
            Some("NOT_FOUND")
        );
        // Anything outside the restricted alphabet is dropped.
        assert_eq!(
            error_code(&r(r#"{"errors":["value was \"hunter2\""]}"#, None)),
            None
        );
    }
}
