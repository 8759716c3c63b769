//! `secret://gcp/<secret>[#<version>]` and
//! `secret://gcp/projects/<project>/secrets/<secret>[#<version>]`: Google
//! Cloud Secret Manager `versions/<v>:access`, no SDK.
//!
//! - Version: the `#` part, default `latest`.
//! - Project: the one named in the reference; else `GOOGLE_CLOUD_PROJECT`,
//!   `GCLOUD_PROJECT`, the credential file's `project_id`, then its
//!   `quota_project_id`; else, with metadata-server credentials, the
//!   metadata server's `project/project-id`.
//! - Endpoint: `GCP_SECRET_MANAGER_ENDPOINT` (scheme + host, e.g.
//!   `http://127.0.0.1:9000`), default `https://secretmanager.googleapis.com`.
//! - Payload: `payload.data` (base64) must decode to UTF-8 text; when
//!   `payload.dataCrc32c` is present it must equal the CRC32C of the bytes.
//! - Application-default credentials, first that applies:
//!   `GOOGLE_APPLICATION_CREDENTIALS` (a `service_account` key file: an RS256
//!   JWT-bearer grant to its `token_uri`; or an `authorized_user` file: a
//!   refresh-token grant to its `token_uri`, default
//!   `https://oauth2.googleapis.com/token`); the gcloud well-known file
//!   (`$CLOUDSDK_CONFIG/application_default_credentials.json`, default
//!   `~/.config/gcloud/application_default_credentials.json`); the metadata
//!   server (`http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token`,
//!   `Metadata-Flavor: Google`; `GCE_METADATA_HOST` replaces the host).
//! - Access tokens are cached per credential until 60 s before they expire.
//!
//! Errors name the reference and give the HTTP status and the Google error
//! status only (`answered 404 (NOT_FOUND)`), never a body.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use secrecy::zeroize::Zeroizing;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

use super::support::{self, EnvSource, Wiped, b64, describe_failure, unix_now};
use super::{SecretError, SecretFuture, SecretProvider, SecretRef};

/// The token endpoint of authorized-user files that do not name one.
pub const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
/// The production Secret Manager endpoint.
pub const DEFAULT_SECRET_MANAGER_ENDPOINT: &str = "https://secretmanager.googleapis.com";
const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), table-driven. Hand
/// written: 20 lines instead of a dependency for one checksum per secret.
pub fn crc32c(data: &[u8]) -> u32 {
    static TABLE: OnceLock<[u32; 256]> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, slot) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ 0x82F6_3B78
                } else {
                    c >> 1
                };
            }
            *slot = c;
        }
        t
    });
    let mut crc = !0u32;
    for &b in data {
        crc = table[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// Where a reference points.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    project: Option<String>,
    secret: String,
    version: String,
}

fn valid_segment(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && s != "."
        && s != ".."
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn parse_target(r: &SecretRef) -> Result<Target, String> {
    let version = match r.field.as_deref() {
        None | Some("") => "latest".to_owned(),
        Some(v) => v.to_owned(),
    };
    let parts: Vec<&str> = r.path.split('/').collect();
    let (project, secret) = match parts.as_slice() {
        [s] => (None, *s),
        ["projects", p, "secrets", s] => (Some((*p).to_owned()), *s),
        _ => {
            return Err("expected secret://gcp/<secret>[#<version>] or \
                 secret://gcp/projects/<project>/secrets/<secret>[#<version>]"
                .to_owned());
        }
    };
    if !valid_segment(secret) {
        return Err(format!("'{secret}' is not a valid secret id"));
    }
    if let Some(p) = &project
        && !valid_segment(p)
    {
        return Err(format!("'{p}' is not a valid project id"));
    }
    if !valid_segment(&version) {
        return Err(format!("'{version}' is not a valid version"));
    }
    Ok(Target {
        project,
        secret: secret.to_owned(),
        version,
    })
}

#[derive(Deserialize)]
struct CredentialFile {
    #[serde(rename = "type")]
    kind: Option<String>,
    project_id: Option<String>,
    quota_project_id: Option<String>,
    // service_account
    client_email: Option<String>,
    private_key: Option<Wiped>,
    private_key_id: Option<String>,
    token_uri: Option<String>,
    // authorized_user
    client_id: Option<String>,
    client_secret: Option<Wiped>,
    refresh_token: Option<Wiped>,
}

enum Credentials {
    ServiceAccount {
        email: String,
        key_pkcs8: Zeroizing<Vec<u8>>,
        key_id: Option<String>,
        token_uri: String,
    },
    AuthorizedUser {
        client_id: String,
        client_secret: SecretString,
        refresh_token: SecretString,
        token_uri: String,
        quota_project: Option<String>,
    },
    Metadata {
        host: String,
    },
}

impl Credentials {
    fn cache_key(&self) -> String {
        match self {
            Self::ServiceAccount {
                email, token_uri, ..
            } => format!("sa {email} {token_uri}"),
            Self::AuthorizedUser {
                client_id,
                token_uri,
                ..
            } => format!("user {client_id} {token_uri}"),
            Self::Metadata { host } => format!("metadata {host}"),
        }
    }
}

struct Discovered {
    creds: Credentials,
    /// The file's project_id, then quota_project_id.
    file_project: Option<String>,
    /// Where they came from, for messages.
    source: String,
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: Option<Wiped>,
    expires_in: Option<u64>,
}

#[derive(Deserialize)]
struct AccessAnswer {
    payload: Option<Payload>,
}

#[derive(Deserialize)]
struct Payload {
    data: Option<Wiped>,
    #[serde(rename = "dataCrc32c")]
    data_crc32c: Option<serde_json::Value>,
}

struct CachedToken {
    token: SecretString,
    expires: u64,
}

/// The `gcp` provider. See the module docs.
pub struct GcpProvider {
    env: EnvSource,
    client: OnceLock<reqwest::Client>,
    metadata_client: OnceLock<reqwest::Client>,
    tokens: tokio::sync::Mutex<HashMap<String, CachedToken>>,
}

impl std::fmt::Debug for GcpProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GcpProvider")
            .field("env", &self.env)
            .finish_non_exhaustive()
    }
}

impl Default for GcpProvider {
    fn default() -> Self {
        Self::new()
    }
}

/// The DER bytes of the first `-----BEGIN PRIVATE KEY-----` block.
fn pem_pkcs8(pem: &str) -> Option<Zeroizing<Vec<u8>>> {
    const BEGIN: &str = "-----BEGIN PRIVATE KEY-----";
    const END: &str = "-----END PRIVATE KEY-----";
    let start = pem.find(BEGIN)? + BEGIN.len();
    let end = pem[start..].find(END)? + start;
    b64::decode(&pem[start..end])
}

/// An RS256-signed JWT for the service-account grant.
fn service_account_jwt(
    email: &str,
    key_pkcs8: &[u8],
    key_id: Option<&str>,
    token_uri: &str,
    now: u64,
) -> Result<Zeroizing<String>, String> {
    let key = RsaKeyPair::from_pkcs8(key_pkcs8)
        .map_err(|_| "the service-account private_key is not a usable RSA PKCS#8 key".to_owned())?;
    let mut header = serde_json::json!({ "alg": "RS256", "typ": "JWT" });
    if let Some(kid) = key_id {
        header["kid"] = serde_json::Value::from(kid);
    }
    let claims = serde_json::json!({
        "iss": email,
        "scope": SCOPE,
        "aud": token_uri,
        "iat": now,
        "exp": now + 3600,
    });
    let mut signing_input = b64::url_nopad(header.to_string().as_bytes());
    signing_input.push('.');
    signing_input.push_str(&b64::url_nopad(claims.to_string().as_bytes()));
    let mut sig = vec![0u8; key.public_modulus_len()];
    key.sign(
        &RSA_PKCS1_SHA256,
        &SystemRandom::new(),
        signing_input.as_bytes(),
        &mut sig,
    )
    .map_err(|_| "signing the JWT failed".to_owned())?;
    let mut jwt = Zeroizing::new(signing_input);
    jwt.push('.');
    jwt.push_str(&b64::url_nopad(&sig));
    Ok(jwt)
}

/// `application/x-www-form-urlencoded` body; values percent-encoded.
fn form(pairs: &[(&str, &str)]) -> Zeroizing<String> {
    let mut out = Zeroizing::new(String::with_capacity(
        pairs.iter().map(|(k, v)| k.len() + v.len() * 3 + 2).sum(),
    ));
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(k);
        out.push('=');
        for &b in v.as_bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

impl GcpProvider {
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
            tokens: tokio::sync::Mutex::new(HashMap::new()),
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

    fn metadata_host(&self) -> String {
        self.env
            .get_nonempty("GCE_METADATA_HOST")
            .unwrap_or_else(|| "metadata.google.internal".to_owned())
    }

    async fn load_file(&self, path: &PathBuf, source: String) -> Result<Discovered, String> {
        let bytes = match tokio::fs::read(path).await {
            Ok(b) => Zeroizing::new(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!("{source} {} not found", path.display()));
            }
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let f: CredentialFile = serde_json::from_slice(&bytes)
            .map_err(|_| format!("{} is not a credentials JSON file", path.display()))?;
        let file_project = f
            .project_id
            .clone()
            .filter(|p| !p.is_empty())
            .or_else(|| f.quota_project_id.clone().filter(|p| !p.is_empty()));
        let creds = match f.kind.as_deref() {
            Some("service_account") => {
                let email = f
                    .client_email
                    .ok_or_else(|| format!("{} has no client_email", path.display()))?;
                let pem = f
                    .private_key
                    .ok_or_else(|| format!("{} has no private_key", path.display()))?;
                let key_pkcs8 = pem_pkcs8(&pem.0).ok_or_else(|| {
                    format!(
                        "the private_key in {} is not a PEM PKCS#8 key",
                        path.display()
                    )
                })?;
                Credentials::ServiceAccount {
                    email,
                    key_pkcs8,
                    key_id: f.private_key_id,
                    token_uri: f.token_uri.unwrap_or_else(|| DEFAULT_TOKEN_URI.to_owned()),
                }
            }
            Some("authorized_user") => {
                let (Some(client_id), Some(secret), Some(refresh)) =
                    (f.client_id, f.client_secret, f.refresh_token)
                else {
                    return Err(format!(
                        "{} lacks client_id, client_secret or refresh_token",
                        path.display()
                    ));
                };
                Credentials::AuthorizedUser {
                    client_id,
                    client_secret: secret.into_secret(),
                    refresh_token: refresh.into_secret(),
                    token_uri: f.token_uri.unwrap_or_else(|| DEFAULT_TOKEN_URI.to_owned()),
                    quota_project: f.quota_project_id.filter(|p| !p.is_empty()),
                }
            }
            other => {
                return Err(format!(
                    "{} has credential type '{}', expected 'service_account' or 'authorized_user'",
                    path.display(),
                    support::truncate_chars(other.unwrap_or("(none)"), 40)
                ));
            }
        };
        Ok(Discovered {
            creds,
            file_project,
            source: format!("{source} {}", path.display()),
        })
    }

    /// Application-default credentials (see the module docs).
    async fn discover(&self) -> Result<Discovered, String> {
        if let Some(p) = self.env.get_nonempty("GOOGLE_APPLICATION_CREDENTIALS") {
            let path = self.env.expand_tilde(&p);
            return self
                .load_file(&path, "GOOGLE_APPLICATION_CREDENTIALS".to_owned())
                .await;
        }
        let well_known = match self.env.get_nonempty("CLOUDSDK_CONFIG") {
            Some(dir) => self
                .env
                .expand_tilde(&dir)
                .join("application_default_credentials.json"),
            None => self
                .env
                .expand_tilde("~/.config/gcloud/application_default_credentials.json"),
        };
        if tokio::fs::try_exists(&well_known).await.unwrap_or(false) {
            return self
                .load_file(&well_known, "gcloud credentials".to_owned())
                .await;
        }
        let host = self.metadata_host();
        Ok(Discovered {
            source: format!("metadata server {host}"),
            creds: Credentials::Metadata { host },
            file_project: None,
        })
    }

    async fn token(&self, creds: &Credentials) -> Result<SecretString, String> {
        let key = creds.cache_key();
        let mut cache = self.tokens.lock().await;
        if let Some(t) = cache.get(&key)
            && unix_now() + 60 < t.expires
        {
            return Ok(t.token.clone());
        }
        let (token, expires_in) = self.fetch_token(creds).await?;
        cache.insert(
            key,
            CachedToken {
                token: token.clone(),
                expires: unix_now() + expires_in,
            },
        );
        Ok(token)
    }

    async fn fetch_token(&self, creds: &Credentials) -> Result<(SecretString, u64), String> {
        let (req, what) = match creds {
            Credentials::ServiceAccount {
                email,
                key_pkcs8,
                key_id,
                token_uri,
            } => {
                let jwt = service_account_jwt(
                    email,
                    key_pkcs8,
                    key_id.as_deref(),
                    token_uri,
                    unix_now(),
                )?;
                let body = form(&[
                    ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                    ("assertion", &jwt),
                ]);
                (
                    self.client()?
                        .post(token_uri)
                        .header("content-type", "application/x-www-form-urlencoded")
                        .body(body.as_str().to_owned()),
                    format!("token endpoint {token_uri}"),
                )
            }
            Credentials::AuthorizedUser {
                client_id,
                client_secret,
                refresh_token,
                token_uri,
                ..
            } => {
                let body = form(&[
                    ("grant_type", "refresh_token"),
                    ("client_id", client_id),
                    ("client_secret", client_secret.expose_secret()),
                    ("refresh_token", refresh_token.expose_secret()),
                ]);
                (
                    self.client()?
                        .post(token_uri)
                        .header("content-type", "application/x-www-form-urlencoded")
                        .body(body.as_str().to_owned()),
                    format!("token endpoint {token_uri}"),
                )
            }
            Credentials::Metadata { host } => (
                self.metadata_client()?
                    .get(format!(
                        "http://{host}/computeMetadata/v1/instance/service-accounts/default/token"
                    ))
                    .header("metadata-flavor", "Google"),
                format!("metadata server {host}"),
            ),
        };
        let resp = support::send(req)
            .await
            .map_err(|e| format!("{what} not reachable: {e}"))?;
        if !resp.status.is_success() {
            return Err(format!("{what} {}", describe_failure(&resp)));
        }
        let t: TokenAnswer = serde_json::from_slice(&resp.body)
            .map_err(|_| format!("{what} answered with a body that is not a token JSON"))?;
        let token = t
            .access_token
            .ok_or_else(|| format!("{what} answered without an access_token"))?;
        Ok((
            token.into_secret(),
            t.expires_in.unwrap_or(3600).min(86_400),
        ))
    }

    async fn metadata_project(&self, host: &str) -> Result<String, String> {
        let resp = support::send(
            self.metadata_client()?
                .get(format!(
                    "http://{host}/computeMetadata/v1/project/project-id"
                ))
                .header("metadata-flavor", "Google"),
        )
        .await?;
        if !resp.status.is_success() {
            return Err(describe_failure(&resp));
        }
        let p = String::from_utf8_lossy(&resp.body).trim().to_owned();
        if valid_segment(&p) {
            Ok(p)
        } else {
            Err("the metadata server's project id is not usable".to_owned())
        }
    }

    async fn fetch(&self, r: &SecretRef) -> Result<SecretString, String> {
        let target = parse_target(r)?;
        let found = self.discover().await?;
        let project = match target
            .project
            .clone()
            .or_else(|| self.env.get_nonempty("GOOGLE_CLOUD_PROJECT"))
            .or_else(|| self.env.get_nonempty("GCLOUD_PROJECT"))
            .or_else(|| found.file_project.clone())
        {
            Some(p) => p,
            None => match &found.creds {
                Credentials::Metadata { host } => {
                    self.metadata_project(host).await.map_err(|e| {
                        format!(
                            "no GCP project (name it in the reference or set GOOGLE_CLOUD_PROJECT); \
                             the metadata server at {host}: {e}"
                        )
                    })?
                }
                _ => {
                    return Err(
                        "no GCP project (name it in the reference, set GOOGLE_CLOUD_PROJECT, \
                         or use a credential file with project_id)"
                            .to_owned(),
                    );
                }
            },
        };
        if !valid_segment(&project) {
            return Err(format!("'{project}' is not a valid project id"));
        }
        let token = self
            .token(&found.creds)
            .await
            .map_err(|e| format!("no access token from {}: {e}", found.source))?;
        let endpoint = self
            .env
            .get_nonempty("GCP_SECRET_MANAGER_ENDPOINT")
            .unwrap_or_else(|| DEFAULT_SECRET_MANAGER_ENDPOINT.to_owned());
        let url = format!(
            "{}/v1/projects/{project}/secrets/{}/versions/{}:access",
            endpoint.trim_end_matches('/'),
            target.secret,
            target.version
        );
        let mut bearer = Zeroizing::new(String::with_capacity(7 + token.expose_secret().len()));
        bearer.push_str("Bearer ");
        bearer.push_str(token.expose_secret());
        let mut req = self
            .client()?
            .get(&url)
            .header("authorization", bearer.as_str());
        if let Credentials::AuthorizedUser {
            quota_project: Some(q),
            ..
        } = &found.creds
        {
            req = req.header("x-goog-user-project", q.as_str());
        }
        let resp = support::send(req)
            .await
            .map_err(|e| format!("Secret Manager at {endpoint} not reachable: {e}"))?;
        if !resp.status.is_success() {
            return Err(format!("Secret Manager {}", describe_failure(&resp)));
        }
        let answer: AccessAnswer = serde_json::from_slice(&resp.body).map_err(|_| {
            format!(
                "Secret Manager answered {} with a body that is not AccessSecretVersion JSON",
                resp.status.as_u16()
            )
        })?;
        let payload = answer
            .payload
            .ok_or_else(|| "the answer has no payload".to_owned())?;
        let data = payload.data.map(|d| d.0).unwrap_or_default();
        let bytes =
            b64::decode(&data).ok_or_else(|| "payload.data is not valid base64".to_owned())?;
        if let Some(expected) = &payload.data_crc32c {
            let expected = match expected {
                serde_json::Value::String(s) => s.parse::<u64>().ok(),
                serde_json::Value::Number(n) => n.as_u64(),
                _ => None,
            }
            .ok_or_else(|| "payload.dataCrc32c is not a number".to_owned())?;
            let actual = u64::from(crc32c(&bytes));
            if actual != expected {
                return Err(format!(
                    "payload checksum mismatch (CRC32C {actual} != dataCrc32c {expected}): the data was corrupted in transit"
                ));
            }
        }
        match std::str::from_utf8(&bytes) {
            Ok(s) => Ok(SecretString::from(s)),
            Err(_) => Err(format!(
                "the payload ({} bytes) is not UTF-8 text, so it cannot be used as an env or header value",
                bytes.len()
            )),
        }
    }
}

impl SecretProvider for GcpProvider {
    fn name(&self) -> &str {
        "gcp"
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

    #[test]
    fn crc32c_known_values() {
        // RFC 3720 B.4 test vectors.
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xffu8; 32]), 0x62A8_AB43);
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn targets() {
        let r = |path: &str, field: Option<&str>| SecretRef {
            provider: "gcp".into(),
            path: path.into(),
            field: field.map(str::to_owned),
        };
        assert_eq!(
            parse_target(&r("db", None)).unwrap(),
            Target {
                project: None,
                secret: "db".into(),
                version: "latest".into()
            }
        );
        assert_eq!(
            parse_target(&r("projects/p-1/secrets/db", Some("3"))).unwrap(),
            Target {
                project: Some("p-1".into()),
                secret: "db".into(),
                version: "3".into()
            }
        );
        assert!(parse_target(&r("a/b", None)).is_err());
        assert!(parse_target(&r("db", Some("1?x"))).is_err());
        assert!(parse_target(&r("projects/../secrets/db", None)).is_err());
    }
}
