//! `secret://vault/<mount>/<path>#<field>`: HashiCorp Vault / OpenBao KV
//! secrets engines, version 1 and 2, over the HTTP API.
//!
//! - Server: `VAULT_ADDR` (required). Token: `VAULT_TOKEN`, else the token
//!   file `~/.vault-token`. `VAULT_NAMESPACE` is sent as `X-Vault-Namespace`.
//!   `VAULT_CACERT` names a PEM bundle that then is the only set of trusted
//!   roots for the connection. Each `VAULT_*` variable falls back to
//!   OpenBao's `BAO_*` spelling.
//! - The mount and its KV version are detected with
//!   `GET /v1/sys/internal/ui/mounts/<mount>/<path>` (what the `vault kv` CLI
//!   does): the answer's `path` is the mount (it may span several segments),
//!   `options.version` its KV version. The result is cached per
//!   address + namespace + mount. A 404 there (servers without that endpoint)
//!   means KV v1.
//! - KV v2 reads `GET /v1/<mount>/data/<path>` and takes `data.data.<field>`;
//!   a path that already starts with `data/` is used as is (so the API-style
//!   `secret://vault/secret/data/app#password` works too). KV v1 reads
//!   `GET /v1/<mount>/<path>` and takes `data.<field>`.
//! - `#field` is required. Strings are used as they are; numbers, booleans,
//!   objects as JSON text; a missing or null field is an error.
//!
//! Errors name the reference and give the HTTP status and Vault's first error
//! phrase when it is short and plain (`answered 403 (permission denied)`),
//! never a body.

use std::collections::HashMap;
use std::sync::Mutex;

use secrecy::SecretString;
use secrecy::zeroize::Zeroizing;

use super::support::{self, EnvSource, describe_failure, json_value_to_secret};
use super::{SecretError, SecretFuture, SecretProvider, SecretRef};

/// `(VAULT_ADDR, namespace)` → known mounts (with trailing `/`) and their KV version.
type MountCache = HashMap<(String, String), Vec<(String, u8)>>;

/// The `vault` provider. See the module docs.
pub struct VaultProvider {
    env: EnvSource,
    /// HTTP clients by CA bundle path (`""`: the default roots).
    clients: Mutex<HashMap<String, reqwest::Client>>,
    mounts: Mutex<MountCache>,
}

impl std::fmt::Debug for VaultProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VaultProvider")
            .field("env", &self.env)
            .finish_non_exhaustive()
    }
}

impl Default for VaultProvider {
    fn default() -> Self {
        Self::new()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Each path segment percent-encoded (RFC 3986 unreserved kept), `/` kept.
fn encode_path(p: &str) -> String {
    p.split('/')
        .map(|seg| {
            let mut out = String::with_capacity(seg.len());
            for &b in seg.as_bytes() {
                if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                    out.push(b as char);
                } else {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            out
        })
        .collect::<Vec<_>>()
        .join("/")
}

impl VaultProvider {
    /// `VAULT_<name>`, else OpenBao's `BAO_<name>`.
    fn var(&self, name: &str) -> Option<String> {
        self.env
            .get_nonempty(&format!("VAULT_{name}"))
            .or_else(|| self.env.get_nonempty(&format!("BAO_{name}")))
    }

    /// Reads the process environment at resolve time.
    pub fn new() -> Self {
        Self::with_env(EnvSource::Process)
    }

    /// Reads `env` instead of the process environment.
    pub fn with_env(env: EnvSource) -> Self {
        Self {
            env,
            clients: Mutex::new(HashMap::new()),
            mounts: Mutex::new(HashMap::new()),
        }
    }

    async fn client(&self) -> Result<reqwest::Client, String> {
        let ca = self.var("CACERT").unwrap_or_default();
        if let Some(c) = lock(&self.clients).get(&ca) {
            return Ok(c.clone());
        }
        let roots = if ca.is_empty() {
            None
        } else {
            let path = self.env.expand_tilde(&ca);
            let pem = tokio::fs::read(&path)
                .await
                .map_err(|e| format!("cannot read VAULT_CACERT {}: {e}", path.display()))?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|_| {
                format!(
                    "VAULT_CACERT {} is not a PEM certificate bundle",
                    path.display()
                )
            })?;
            if certs.is_empty() {
                return Err(format!(
                    "VAULT_CACERT {} holds no certificate",
                    path.display()
                ));
            }
            Some(certs)
        };
        let c = support::http_client(false, roots)?;
        lock(&self.clients).insert(ca, c.clone());
        Ok(c)
    }

    async fn token(&self) -> Result<Zeroizing<String>, String> {
        if let Some(t) = self.var("TOKEN") {
            return Ok(Zeroizing::new(t.trim().to_owned()));
        }
        let path = self.env.expand_tilde("~/.vault-token");
        match tokio::fs::read(&path).await {
            Ok(bytes) => {
                let bytes = Zeroizing::new(bytes);
                let t = std::str::from_utf8(&bytes)
                    .map_err(|_| format!("{} is not UTF-8", path.display()))?
                    .trim();
                if t.is_empty() {
                    Err(format!(
                        "no Vault token: VAULT_TOKEN is not set and {} is empty",
                        path.display()
                    ))
                } else {
                    Ok(Zeroizing::new(t.to_owned()))
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
                "no Vault token: VAULT_TOKEN is not set and {} does not exist",
                path.display()
            )),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    fn request(
        &self,
        client: &reqwest::Client,
        url: String,
        token: &str,
        namespace: &str,
    ) -> reqwest::RequestBuilder {
        let mut req = client.get(url).header("x-vault-token", token);
        if !namespace.is_empty() {
            req = req.header("x-vault-namespace", namespace);
        }
        req
    }

    /// The mount holding `path` and its KV version.
    async fn mount_of(
        &self,
        client: &reqwest::Client,
        addr: &str,
        namespace: &str,
        token: &str,
        path: &str,
    ) -> Result<(String, u8), String> {
        let key = (addr.to_owned(), namespace.to_owned());
        if let Some(list) = lock(&self.mounts).get(&key)
            && let Some(hit) = list
                .iter()
                .filter(|(m, _)| path.starts_with(m.as_str()))
                .max_by_key(|(m, _)| m.len())
        {
            return Ok(hit.clone());
        }
        let url = format!("{addr}/v1/sys/internal/ui/mounts/{}", encode_path(path));
        let resp = support::send(self.request(client, url, token, namespace))
            .await
            .map_err(|e| format!("Vault at {addr} not reachable: {e}"))?;
        let (mount, version) = if resp.status.as_u16() == 404 {
            // No preflight endpoint: treat the first segment as a KV v1 mount.
            let first = path.split('/').next().unwrap_or_default();
            (format!("{first}/"), 1)
        } else if !resp.status.is_success() {
            return Err(format!("Vault mount lookup {}", describe_failure(&resp)));
        } else {
            let v: serde_json::Value = serde_json::from_slice(&resp.body).map_err(|_| {
                "Vault's mount lookup answered with a body that is not JSON".to_owned()
            })?;
            let mount = v
                .pointer("/data/path")
                .and_then(serde_json::Value::as_str)
                .filter(|m| !m.is_empty())
                .ok_or_else(|| "Vault's mount lookup named no mount".to_owned())?;
            let mount = if mount.ends_with('/') {
                mount.to_owned()
            } else {
                format!("{mount}/")
            };
            if !path.starts_with(&mount) {
                return Err(format!(
                    "Vault's mount lookup gave mount '{mount}', which does not hold the path"
                ));
            }
            let version = match v.pointer("/data/options/version") {
                Some(serde_json::Value::String(s)) if s == "2" => 2,
                Some(serde_json::Value::Number(n)) if n.as_u64() == Some(2) => 2,
                _ => 1,
            };
            (mount, version)
        };
        lock(&self.mounts)
            .entry(key)
            .or_default()
            .push((mount.clone(), version));
        Ok((mount, version))
    }

    async fn fetch(&self, r: &SecretRef) -> Result<SecretString, String> {
        let field = match r.field.as_deref() {
            Some(f) if !f.is_empty() => f,
            _ => {
                return Err(
                    "Vault references need a #field (secret://vault/<mount>/<path>#<field>)"
                        .to_owned(),
                );
            }
        };
        let path = r.path.trim_matches('/');
        if !path.contains('/') {
            return Err("expected secret://vault/<mount>/<path>#<field>".to_owned());
        }
        if path
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..")
        {
            return Err("the path has an empty, '.' or '..' segment".to_owned());
        }
        let addr = self
            .var("ADDR")
            .ok_or_else(|| "VAULT_ADDR is not set".to_owned())?;
        let addr = addr.trim_end_matches('/').to_owned();
        let parsed =
            reqwest::Url::parse(&addr).map_err(|e| format!("invalid VAULT_ADDR '{addr}': {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("invalid VAULT_ADDR '{addr}': not http(s)"));
        }
        let namespace = self
            .var("NAMESPACE")
            .map(|n| n.trim_matches('/').to_owned())
            .unwrap_or_default();
        let token = self.token().await?;
        let client = self.client().await?;

        let (mount, version) = self
            .mount_of(&client, &addr, &namespace, &token, path)
            .await?;
        let rest = &path[mount.len()..];
        if rest.is_empty() {
            return Err(format!(
                "the path names the mount '{mount}' but no secret in it"
            ));
        }
        let api_path = if version == 2 && !rest.starts_with("data/") {
            format!("{mount}data/{rest}")
        } else {
            format!("{mount}{rest}")
        };
        let url = format!("{addr}/v1/{}", encode_path(&api_path));
        let resp = support::send(self.request(&client, url, &token, &namespace))
            .await
            .map_err(|e| format!("Vault at {addr} not reachable: {e}"))?;
        if !resp.status.is_success() {
            let what = match resp.status.as_u16() {
                404 => "Vault found no secret there: ".to_owned(),
                _ => "Vault ".to_owned(),
            };
            return Err(format!("{what}{}", describe_failure(&resp)));
        }
        let v: serde_json::Value = serde_json::from_slice(&resp.body).map_err(|_| {
            format!(
                "Vault answered {} with a body that is not JSON",
                resp.status.as_u16()
            )
        })?;
        let data_ptr = if version == 2 { "/data/data" } else { "/data" };
        let data = v
            .pointer(data_ptr)
            .and_then(serde_json::Value::as_object)
            .ok_or_else(|| format!("the answer has no {data_ptr} object (KV v{version})"))?;
        let member = data
            .get(field)
            .ok_or_else(|| format!("field '{field}' not found in the secret"))?;
        json_value_to_secret(member).ok_or_else(|| format!("field '{field}' is null"))
    }
}

impl SecretProvider for VaultProvider {
    fn name(&self) -> &str {
        "vault"
    }

    fn resolve<'a>(&'a self, r: &'a SecretRef) -> SecretFuture<'a> {
        Box::pin(async move {
            self.fetch(r)
                .await
                .map_err(|cause| SecretError::cannot_resolve(r, cause))
        })
    }
}
