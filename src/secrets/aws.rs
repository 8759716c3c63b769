//! `secret://aws/<name or ARN>[#<json field>]`: AWS Secrets Manager
//! `GetSecretValue`, signed with Signature Version 4, no SDK.
//!
//! - Value: `SecretString`, or `SecretBinary` decoded from base64 (it must be
//!   UTF-8 to be usable as an env/header value). With `#field`, the value is
//!   parsed as a JSON object and that member is returned (strings as is,
//!   numbers/booleans/objects as JSON text).
//! - Credentials, first that applies: `AWS_ACCESS_KEY_ID` +
//!   `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`); the profile
//!   (`AWS_PROFILE`, default `default`) in `AWS_SHARED_CREDENTIALS_FILE`
//!   (default `~/.aws/credentials`), then in `AWS_CONFIG_FILE` (default
//!   `~/.aws/config`); container credentials
//!   (`AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` / `…_FULL_URI`, with
//!   `AWS_CONTAINER_AUTHORIZATION_TOKEN[_FILE]`); EC2 instance metadata
//!   (IMDSv2: token `PUT`, then `GET`s; skipped when
//!   `AWS_EC2_METADATA_DISABLED=true`; `AWS_EC2_METADATA_SERVICE_ENDPOINT`
//!   moves it). Container and instance credentials are cached until five
//!   minutes before their `Expiration`.
//! - Region: the ARN's region; else `AWS_REGION`, `AWS_DEFAULT_REGION`, the
//!   profile's `region` in the config file.
//! - Endpoint: `AWS_ENDPOINT_URL_SECRETS_MANAGER`, `AWS_ENDPOINT_URL`, else
//!   `https://secretsmanager.<region>.amazonaws.com` (`.amazonaws.com.cn` for
//!   `cn-` regions).
//!
//! Errors name the reference and give the HTTP status and AWS error code only
//! (`answered 400 (ResourceNotFoundException)`), never a body.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use aws_lc_rs::{digest, hmac};
use secrecy::zeroize::Zeroizing;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

use super::support::{
    self, EnvSource, Wiped, b64, civil_from_unix, describe_failure, hex, parse_rfc3339, unix_now,
};
use super::{SecretError, SecretFuture, SecretProvider, SecretRef};

/// An access key, optionally with a session token. `Debug` shows the key id only.
#[derive(Clone)]
pub struct AwsCredentials {
    pub access_key_id: String,
    pub secret_access_key: SecretString,
    pub session_token: Option<SecretString>,
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("session_token", &self.session_token.is_some())
            .finish_non_exhaustive()
    }
}

/// RFC 3986 percent-encoding: everything but `A-Z a-z 0-9 - _ . ~` (and `/`
/// when `keep_slash`) as `%XX` (upper-case hex), as SigV4 requires.
fn uri_encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len() * 3);
    for &b in s.as_bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn sha256_hex(data: &[u8]) -> String {
    hex(digest::digest(&digest::SHA256, data).as_ref())
}

fn hmac_sha256(key: &[u8], data: &[u8]) -> Zeroizing<Vec<u8>> {
    let k = hmac::Key::new(hmac::HMAC_SHA256, key);
    Zeroizing::new(hmac::sign(&k, data).as_ref().to_vec())
}

/// The `Host` header value reqwest sends for `url` (the port only when it is
/// not the scheme's default).
fn host_header(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_owned(),
    }
}

/// Signs a request with AWS Signature Version 4 and returns the headers to add
/// to it: `x-amz-date`, `x-amz-security-token` (with a session token) and
/// `authorization`.
///
/// `headers` are the request's other headers, all of which are signed (pass
/// at least `content-type`); `host` is derived from `url` and signed too, so
/// the request must be sent to exactly that URL. The canonical URI is the
/// URL's (already escaped) path escaped once more, as for every service but
/// S3. `unix_secs` is the signing time.
#[allow(clippy::too_many_arguments)]
pub fn sigv4_headers(
    method: &str,
    url: &reqwest::Url,
    headers: &[(&str, &str)],
    body: &[u8],
    region: &str,
    service: &str,
    creds: &AwsCredentials,
    unix_secs: u64,
) -> Vec<(String, String)> {
    let (y, mo, d, h, mi, s) = civil_from_unix(unix_secs);
    let date = format!("{y:04}{mo:02}{d:02}");
    let amz_date = format!("{date}T{h:02}{mi:02}{s:02}Z");

    let path = url.path();
    let canonical_uri = if path.is_empty() {
        "/".to_owned()
    } else {
        path.split('/')
            .map(|seg| uri_encode(seg, false))
            .collect::<Vec<_>>()
            .join("/")
    };
    let mut query: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| (uri_encode(&k, false), uri_encode(&v, false)))
        .collect();
    query.sort();
    let canonical_query = query
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");

    let mut all: Vec<(String, String)> = headers
        .iter()
        .map(|(k, v)| {
            (
                k.to_ascii_lowercase(),
                v.split_whitespace().collect::<Vec<_>>().join(" "),
            )
        })
        .collect();
    all.push(("host".to_owned(), host_header(url)));
    all.push(("x-amz-date".to_owned(), amz_date.clone()));
    if let Some(t) = &creds.session_token {
        all.push((
            "x-amz-security-token".to_owned(),
            t.expose_secret().to_owned(),
        ));
    }
    all.sort_by(|a, b| a.0.cmp(&b.0));
    let canonical_headers: String = all.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let signed_headers = all
        .iter()
        .map(|(k, _)| k.as_str())
        .collect::<Vec<_>>()
        .join(";");

    let canonical_request = format!(
        "{method}\n{canonical_uri}\n{canonical_query}\n{canonical_headers}\n{signed_headers}\n{}",
        sha256_hex(body)
    );
    let scope = format!("{date}/{region}/{service}/aws4_request");
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        sha256_hex(canonical_request.as_bytes())
    );
    let mut k_secret = Zeroizing::new(String::with_capacity(
        4 + creds.secret_access_key.expose_secret().len(),
    ));
    k_secret.push_str("AWS4");
    k_secret.push_str(creds.secret_access_key.expose_secret());
    let k_date = hmac_sha256(k_secret.as_bytes(), date.as_bytes());
    let k_region = hmac_sha256(&k_date, region.as_bytes());
    let k_service = hmac_sha256(&k_region, service.as_bytes());
    let k_signing = hmac_sha256(&k_service, b"aws4_request");
    let signature = hex(&hmac_sha256(&k_signing, string_to_sign.as_bytes()));

    let mut out = vec![("x-amz-date".to_owned(), amz_date)];
    if let Some(t) = &creds.session_token {
        out.push((
            "x-amz-security-token".to_owned(),
            t.expose_secret().to_owned(),
        ));
    }
    out.push((
        "authorization".to_owned(),
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed_headers}, Signature={signature}",
            creds.access_key_id
        ),
    ));
    out
}

/// The `[section]` of an INI-style AWS file: `key = value` lines, `#`/`;`
/// comments, keys lower-cased. `None` when there is no such section.
fn ini_section(text: &str, section: &str) -> Option<HashMap<String, Zeroizing<String>>> {
    let mut current: Option<bool> = None;
    let mut found: Option<HashMap<String, Zeroizing<String>>> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let hit = name.trim() == section;
            current = Some(hit);
            if hit && found.is_none() {
                found = Some(HashMap::new());
            }
            continue;
        }
        if current == Some(true)
            && let Some((k, v)) = line.split_once('=')
            && let Some(map) = found.as_mut()
        {
            map.insert(
                k.trim().to_ascii_lowercase(),
                Zeroizing::new(v.trim().to_owned()),
            );
        }
    }
    found
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct RemoteCreds {
    access_key_id: Option<String>,
    secret_access_key: Option<Wiped>,
    token: Option<Wiped>,
    expiration: Option<String>,
    code: Option<String>,
}

#[derive(Deserialize)]
struct GetSecretValueOut {
    #[serde(rename = "SecretString")]
    secret_string: Option<Wiped>,
    #[serde(rename = "SecretBinary")]
    secret_binary: Option<Wiped>,
}

struct Cached {
    key: String,
    creds: AwsCredentials,
    expires: u64,
}

/// The `aws` provider. See the module docs.
pub struct AwsProvider {
    env: EnvSource,
    client: OnceLock<reqwest::Client>,
    metadata_client: OnceLock<reqwest::Client>,
    cache: tokio::sync::Mutex<Option<Cached>>,
}

impl std::fmt::Debug for AwsProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsProvider")
            .field("env", &self.env)
            .finish_non_exhaustive()
    }
}

impl Default for AwsProvider {
    fn default() -> Self {
        Self::new()
    }
}

struct Profile {
    name: String,
    credentials: Option<HashMap<String, Zeroizing<String>>>,
    config: Option<HashMap<String, Zeroizing<String>>>,
    credentials_path: PathBuf,
    config_path: PathBuf,
}

async fn read_optional(path: &PathBuf) -> Result<Option<Zeroizing<String>>, String> {
    match tokio::fs::read(path).await {
        Ok(bytes) => {
            let bytes = Zeroizing::new(bytes);
            match std::str::from_utf8(&bytes) {
                Ok(s) => Ok(Some(Zeroizing::new(s.to_owned()))),
                Err(_) => Err(format!("{} is not valid UTF-8", path.display())),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

impl AwsProvider {
    /// Reads the process environment at resolve time.
    pub fn new() -> Self {
        Self::with_env(EnvSource::Process)
    }

    /// Reads `env` instead of the process environment.
    pub fn with_env(env: EnvSource) -> Self {
        Self {
            env,
            client: OnceLock::new(),
            metadata_client: OnceLock::new(),
            cache: tokio::sync::Mutex::new(None),
        }
    }

    fn client(&self) -> Result<&reqwest::Client, String> {
        if let Some(c) = self.client.get() {
            return Ok(c);
        }
        let c = support::http_client(false, None)?;
        Ok(self.client.get_or_init(|| c))
    }

    fn metadata_client(&self) -> Result<&reqwest::Client, String> {
        if let Some(c) = self.metadata_client.get() {
            return Ok(c);
        }
        let c = support::http_client(true, None)?;
        Ok(self.metadata_client.get_or_init(|| c))
    }

    async fn profile(&self) -> Result<Profile, String> {
        let name = self
            .env
            .get_nonempty("AWS_PROFILE")
            .unwrap_or_else(|| "default".to_owned());
        let credentials_path = match self.env.get_nonempty("AWS_SHARED_CREDENTIALS_FILE") {
            Some(p) => self.env.expand_tilde(&p),
            None => self.env.expand_tilde("~/.aws/credentials"),
        };
        let config_path = match self.env.get_nonempty("AWS_CONFIG_FILE") {
            Some(p) => self.env.expand_tilde(&p),
            None => self.env.expand_tilde("~/.aws/config"),
        };
        let credentials = read_optional(&credentials_path)
            .await?
            .and_then(|t| ini_section(&t, &name));
        let config = read_optional(&config_path).await?.and_then(|t| {
            ini_section(&t, &format!("profile {name}")).or_else(|| {
                if name == "default" {
                    ini_section(&t, "default")
                } else {
                    None
                }
            })
        });
        Ok(Profile {
            name,
            credentials,
            config,
            credentials_path,
            config_path,
        })
    }

    fn region(&self, r: &SecretRef, profile: &Profile) -> Result<String, String> {
        if r.path.starts_with("arn:") {
            let parts: Vec<&str> = r.path.split(':').collect();
            if parts.len() >= 7 && parts[2] == "secretsmanager" && !parts[3].is_empty() {
                return Ok(parts[3].to_owned());
            }
        }
        if let Some(region) = self
            .env
            .get_nonempty("AWS_REGION")
            .or_else(|| self.env.get_nonempty("AWS_DEFAULT_REGION"))
        {
            return Ok(region);
        }
        if let Some(region) = profile
            .config
            .as_ref()
            .and_then(|c| c.get("region"))
            .filter(|r| !r.is_empty())
        {
            return Ok(region.to_string());
        }
        Err(format!(
            "no AWS region (use an ARN, set AWS_REGION or AWS_DEFAULT_REGION, or set region for profile '{}' in {})",
            profile.name,
            profile.config_path.display()
        ))
    }

    fn endpoint(&self, region: &str) -> Result<reqwest::Url, String> {
        let raw = self
            .env
            .get_nonempty("AWS_ENDPOINT_URL_SECRETS_MANAGER")
            .or_else(|| self.env.get_nonempty("AWS_ENDPOINT_URL"))
            .unwrap_or_else(|| {
                let suffix = if region.starts_with("cn-") {
                    "amazonaws.com.cn"
                } else {
                    "amazonaws.com"
                };
                format!("https://secretsmanager.{region}.{suffix}")
            });
        let mut url = reqwest::Url::parse(&raw)
            .map_err(|e| format!("invalid Secrets Manager endpoint '{raw}': {e}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "invalid Secrets Manager endpoint '{raw}': not http(s)"
            ));
        }
        if url.path().is_empty() {
            url.set_path("/");
        }
        url.set_query(None);
        url.set_fragment(None);
        Ok(url)
    }

    /// The credential chain (see the module docs).
    async fn credentials(&self, profile: &Profile) -> Result<AwsCredentials, String> {
        // 1. Environment.
        let akid = self.env.get_nonempty("AWS_ACCESS_KEY_ID");
        let secret = self
            .env
            .get_nonempty("AWS_SECRET_ACCESS_KEY")
            .map(Zeroizing::new);
        match (akid, secret) {
            (Some(access_key_id), Some(secret)) => {
                return Ok(AwsCredentials {
                    access_key_id,
                    secret_access_key: SecretString::from(secret.as_str()),
                    session_token: self
                        .env
                        .get_nonempty("AWS_SESSION_TOKEN")
                        .map(|t| SecretString::from(Zeroizing::new(t).as_str())),
                });
            }
            (Some(_), None) => {
                return Err("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not".into());
            }
            (None, Some(_)) => {
                return Err("AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not".into());
            }
            (None, None) => {}
        }

        // 2. Shared files.
        for (section, path) in [
            (&profile.credentials, &profile.credentials_path),
            (&profile.config, &profile.config_path),
        ] {
            let Some(section) = section else { continue };
            let id = section.get("aws_access_key_id").filter(|v| !v.is_empty());
            let key = section
                .get("aws_secret_access_key")
                .filter(|v| !v.is_empty());
            match (id, key) {
                (Some(id), Some(key)) => {
                    return Ok(AwsCredentials {
                        access_key_id: id.to_string(),
                        secret_access_key: SecretString::from(key.as_str()),
                        session_token: section
                            .get("aws_session_token")
                            .filter(|v| !v.is_empty())
                            .map(|t| SecretString::from(t.as_str())),
                    });
                }
                (Some(_), None) | (None, Some(_)) => {
                    return Err(format!(
                        "profile '{}' in {} has only one of aws_access_key_id and aws_secret_access_key",
                        profile.name,
                        path.display()
                    ));
                }
                (None, None) => {}
            }
        }

        // 3. Container credentials.
        let relative = self
            .env
            .get_nonempty("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
        let full = self.env.get_nonempty("AWS_CONTAINER_CREDENTIALS_FULL_URI");
        if relative.is_some() || full.is_some() {
            let url = match (relative, full) {
                (Some(rel), _) => format!("http://169.254.170.2{rel}"),
                (None, Some(full)) => full,
                (None, None) => unreachable!(),
            };
            return self
                .cached("container", &url, || self.container_credentials(&url))
                .await
                .map_err(|e| format!("container credentials: {e}"));
        }

        // 4. Instance metadata (IMDSv2).
        let disabled = self
            .env
            .get("AWS_EC2_METADATA_DISABLED")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        if disabled {
            return Err(format!(
                "no AWS credentials found (environment, profile '{}' in {} or {}, container; \
                 instance metadata disabled by AWS_EC2_METADATA_DISABLED)",
                profile.name,
                profile.credentials_path.display(),
                profile.config_path.display()
            ));
        }
        let endpoint = self
            .env
            .get_nonempty("AWS_EC2_METADATA_SERVICE_ENDPOINT")
            .unwrap_or_else(|| "http://169.254.169.254".to_owned());
        let endpoint = endpoint.trim_end_matches('/').to_owned();
        self.cached("imds", &endpoint, || self.imds_credentials(&endpoint))
            .await
            .map_err(|e| {
                format!(
                    "no AWS credentials found (environment, profile '{}' in {} or {}, container; \
                     instance metadata at {endpoint}: {e})",
                    profile.name,
                    profile.credentials_path.display(),
                    profile.config_path.display()
                )
            })
    }

    async fn cached<F, Fut>(&self, kind: &str, at: &str, fetch: F) -> Result<AwsCredentials, String>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<(AwsCredentials, Option<u64>), String>>,
    {
        let key = format!("{kind} {at}");
        let mut guard = self.cache.lock().await;
        if let Some(c) = guard.as_ref()
            && c.key == key
            && unix_now() + 300 < c.expires
        {
            return Ok(c.creds.clone());
        }
        let (creds, expires) = fetch().await?;
        *guard = expires.map(|expires| Cached {
            key,
            creds: creds.clone(),
            expires,
        });
        Ok(creds)
    }

    fn parse_remote(body: &[u8]) -> Result<(AwsCredentials, Option<u64>), String> {
        let c: RemoteCreds = serde_json::from_slice(body).map_err(|_| {
            format!(
                "the answer is not valid credentials JSON ({} bytes)",
                body.len()
            )
        })?;
        if let Some(code) = &c.code
            && code != "Success"
        {
            return Err(format!(
                "the answer's Code is '{}'",
                support::truncate_chars(code, 40)
            ));
        }
        let (Some(access_key_id), Some(secret)) = (c.access_key_id, c.secret_access_key) else {
            return Err("the answer has no AccessKeyId/SecretAccessKey".to_owned());
        };
        Ok((
            AwsCredentials {
                access_key_id,
                secret_access_key: secret.into_secret(),
                session_token: c.token.map(Wiped::into_secret),
            },
            c.expiration.as_deref().and_then(parse_rfc3339),
        ))
    }

    async fn container_credentials(
        &self,
        url: &str,
    ) -> Result<(AwsCredentials, Option<u64>), String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("invalid URI '{url}': {e}"))?;
        let host = parsed.host_str().unwrap_or_default();
        let allowed_http = matches!(
            host,
            "127.0.0.1"
                | "localhost"
                | "[::1]"
                | "169.254.170.2"
                | "169.254.170.23"
                | "[fd00:ec2::23]"
        ) || host.starts_with("127.");
        match parsed.scheme() {
            "https" => {}
            "http" if allowed_http => {}
            _ => {
                return Err(format!(
                    "refusing {url}: plain http is allowed only to loopback and the ECS/EKS agent addresses"
                ));
            }
        }
        let token = match self
            .env
            .get_nonempty("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
        {
            Some(file) => Some(
                read_optional(&self.env.expand_tilde(&file))
                    .await?
                    .ok_or_else(|| format!("token file {file} not found"))?,
            ),
            None => self
                .env
                .get_nonempty("AWS_CONTAINER_AUTHORIZATION_TOKEN")
                .map(Zeroizing::new),
        };
        let mut req = self.metadata_client()?.get(parsed);
        if let Some(t) = &token {
            req = req.header("authorization", t.trim());
        }
        let resp = support::send(req).await?;
        if !resp.status.is_success() {
            return Err(describe_failure(&resp));
        }
        Self::parse_remote(&resp.body)
    }

    async fn imds_credentials(
        &self,
        endpoint: &str,
    ) -> Result<(AwsCredentials, Option<u64>), String> {
        let client = self.metadata_client()?;
        let resp = support::send(
            client
                .put(format!("{endpoint}/latest/api/token"))
                .header("x-aws-ec2-metadata-token-ttl-seconds", "21600"),
        )
        .await?;
        if !resp.status.is_success() {
            return Err(format!("token request {}", describe_failure(&resp)));
        }
        let token = Zeroizing::new(String::from_utf8_lossy(&resp.body).trim().to_owned());
        let base = format!("{endpoint}/latest/meta-data/iam/security-credentials/");
        let resp = support::send(
            client
                .get(&base)
                .header("x-aws-ec2-metadata-token", token.as_str()),
        )
        .await?;
        if !resp.status.is_success() {
            return Err(format!("role request {}", describe_failure(&resp)));
        }
        let roles = String::from_utf8_lossy(&resp.body).into_owned();
        let role = roles
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .ok_or_else(|| "no instance role is attached".to_owned())?;
        if role.contains('/') || role.contains("..") {
            return Err("the instance role name is not usable".to_owned());
        }
        let resp = support::send(
            client
                .get(format!("{base}{role}"))
                .header("x-aws-ec2-metadata-token", token.as_str()),
        )
        .await?;
        if !resp.status.is_success() {
            return Err(format!("credentials request {}", describe_failure(&resp)));
        }
        Self::parse_remote(&resp.body)
    }

    async fn fetch(&self, r: &SecretRef) -> Result<SecretString, String> {
        let profile = self.profile().await?;
        let region = self.region(r, &profile)?;
        let url = self.endpoint(&region)?;
        let creds = self.credentials(&profile).await?;

        let body = serde_json::json!({ "SecretId": r.path }).to_string();
        let content_type = "application/x-amz-json-1.1";
        let target = "secretsmanager.GetSecretValue";
        let signed = sigv4_headers(
            "POST",
            &url,
            &[("content-type", content_type), ("x-amz-target", target)],
            body.as_bytes(),
            &region,
            "secretsmanager",
            &creds,
            unix_now(),
        );
        let mut req = self
            .client()?
            .post(url.clone())
            .header("content-type", content_type)
            .header("x-amz-target", target)
            .body(body);
        for (k, v) in &signed {
            req = req.header(k.as_str(), v.as_str());
        }
        let resp = support::send(req)
            .await
            .map_err(|e| format!("AWS Secrets Manager at {url} not reachable: {e}"))?;
        if !resp.status.is_success() {
            return Err(format!("AWS Secrets Manager {}", describe_failure(&resp)));
        }
        let out: GetSecretValueOut = serde_json::from_slice(&resp.body).map_err(|_| {
            format!(
                "AWS Secrets Manager answered {} with a body that is not GetSecretValue JSON ({} bytes)",
                resp.status.as_u16(),
                resp.body.len()
            )
        })?;
        let text: Zeroizing<String> = match (out.secret_string, out.secret_binary) {
            (Some(s), _) => s.0,
            (None, Some(b)) => {
                let bytes = b64::decode(&b.0)
                    .ok_or_else(|| "SecretBinary is not valid base64".to_owned())?;
                match std::str::from_utf8(&bytes) {
                    Ok(s) => Zeroizing::new(s.to_owned()),
                    Err(_) => {
                        return Err(format!(
                            "SecretBinary ({} bytes) is not UTF-8 text, so it cannot be used as an env or header value",
                            bytes.len()
                        ));
                    }
                }
            }
            (None, None) => {
                return Err("the answer has neither SecretString nor SecretBinary".into());
            }
        };
        match &r.field {
            None => Ok(SecretString::from(text.as_str())),
            Some(field) => select_json_field(&text, field),
        }
    }
}

/// `#field` of a JSON-object secret (shared with tests through the provider).
pub(crate) fn select_json_field(text: &str, field: &str) -> Result<SecretString, String> {
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|_| format!("the secret is not JSON, so field '{field}' cannot be selected"))?;
    let obj = v.as_object().ok_or_else(|| {
        format!("the secret is not a JSON object, so field '{field}' cannot be selected")
    })?;
    let member = obj
        .get(field)
        .ok_or_else(|| format!("field '{field}' not found in the secret"))?;
    support::json_value_to_secret(member).ok_or_else(|| format!("field '{field}' is null"))
}

impl SecretProvider for AwsProvider {
    fn name(&self) -> &str {
        "aws"
    }

    fn resolve<'a>(&'a self, r: &'a SecretRef) -> SecretFuture<'a> {
        Box::pin(async move {
            self.fetch(r)
                .await
                .map_err(|cause| SecretError::cannot_resolve(r, cause))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of the AWS SigV4 documentation (IAM ListUsers, GET),
    /// whose published signature is
    /// 5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7.
    #[test]
    fn sigv4_matches_the_documented_example() {
        let url =
            reqwest::Url::parse("https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08")
                .unwrap();
        let creds = AwsCredentials {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: SecretString::from("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
            session_token: None,
        };
        // 2015-08-30T12:36:00Z
        let h = sigv4_headers(
            "GET",
            &url,
            &[(
                "content-type",
                "application/x-www-form-urlencoded; charset=utf-8",
            )],
            b"",
            "us-east-1",
            "iam",
            &creds,
            1_440_938_160,
        );
        let auth = &h.iter().find(|(k, _)| k == "authorization").unwrap().1;
        assert_eq!(
            auth,
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, \
             SignedHeaders=content-type;host;x-amz-date, \
             Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
        );
    }

    #[test]
    fn ini_sections() {
        let text = "[default]\naws_access_key_id = A\n# c\n[profile x]\nregion=eu-west-1\n";
        assert_eq!(
            ini_section(text, "default").unwrap()["aws_access_key_id"].as_str(),
            "A"
        );
        assert_eq!(
            ini_section(text, "profile x").unwrap()["region"].as_str(),
            "eu-west-1"
        );
        assert!(ini_section(text, "nope").is_none());
    }
}
