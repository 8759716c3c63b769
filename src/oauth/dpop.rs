//! DPoP (RFC 9449, MCP SEP-1932): tokens bound to a key this client holds, used when the
//! authorization server advertises `dpop_signing_alg_values_supported` with ES256.
//!
//! One P-256 key per server (in memory, for the life of the manager); a proof JWT per request
//! (`htm`, `htu`, `iat`, a random `jti`, `ath` for resource requests, the latest `nonce` each
//! server gave). Token requests get their proof from [`DpopHttp`], which wraps the OAuth HTTP
//! client rmcp's `AuthorizationManager` sends them through and retries once with a nonce when
//! the token endpoint answers `use_dpop_nonce`; resource requests get theirs from the
//! authorizer's request headers.

use std::sync::{Arc, Mutex};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use oauth2::http;
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRedirectPolicy, OAuthHttpRequest,
};

const NONCE_HEADER: &str = "dpop-nonce";

/// A client's DPoP key and the nonces servers gave it.
pub struct Dpop {
    key: EcdsaKeyPair,
    jwk: serde_json::Value,
    random: SystemRandom,
    /// The authorization server's latest nonce.
    as_nonce: Mutex<Option<String>>,
    /// The resource server's latest nonce.
    rs_nonce: Mutex<Option<String>>,
}

impl Dpop {
    pub fn new() -> Result<Self, String> {
        let random = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random)
            .map_err(|_| "a DPoP key could not be generated".to_owned())?;
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref())
            .map_err(|_| "a DPoP key could not be read back".to_owned())?;
        // The public key is the uncompressed point 0x04 || X || Y.
        let point = key.public_key().as_ref();
        if point.len() != 65 || point[0] != 4 {
            return Err("unexpected DPoP public key form".to_owned());
        }
        let jwk = serde_json::json!({
            "kty": "EC",
            "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
        });
        Ok(Self {
            key,
            jwk,
            random,
            as_nonce: Mutex::new(None),
            rs_nonce: Mutex::new(None),
        })
    }

    /// A proof for `method` on `url` (its query and fragment are not part of `htu`), bound to
    /// `access_token` when given, carrying `nonce` when given.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, String> {
        let mut htu = url::Url::parse(url).map_err(|e| format!("DPoP htu {url}: {e}"))?;
        htu.set_query(None);
        htu.set_fragment(None);
        let mut jti = [0u8; 16];
        aws_lc_rs::rand::SecureRandom::fill(&self.random, &mut jti)
            .map_err(|_| "no randomness for a DPoP proof".to_owned())?;
        let iat = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let header = serde_json::json!({ "typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk });
        let mut claims = serde_json::json!({
            "jti": URL_SAFE_NO_PAD.encode(jti),
            "htm": method,
            "htu": htu.as_str(),
            "iat": iat,
        });
        if let Some(token) = access_token {
            let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, token.as_bytes());
            claims["ath"] = URL_SAFE_NO_PAD.encode(digest.as_ref()).into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .key
            .sign(&self.random, signing_input.as_bytes())
            .map_err(|_| "a DPoP proof could not be signed".to_owned())?;
        Ok(format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }

    /// A proof for a request to the resource server.
    pub fn resource_proof(&self, method: &str, url: &str, token: &str) -> Result<String, String> {
        let nonce = self
            .rs_nonce
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        self.proof(method, url, Some(token), nonce.as_deref())
    }

    /// Remembers the resource server's nonce; `true` when it is a new one (worth a retry).
    pub fn resource_nonce(&self, nonce: &str) -> bool {
        let mut slot = self.rs_nonce.lock().unwrap_or_else(|p| p.into_inner());
        let new = slot.as_deref() != Some(nonce);
        *slot = Some(nonce.to_owned());
        new
    }
}

/// The OAuth HTTP client of a DPoP server (registration, token and refresh requests; discovery
/// happened before, through rmcp's address-filtering client). Token requests (form POSTs) get a
/// proof; a `use_dpop_nonce` answer is retried once with the nonce the server gave. Requests
/// are sent by our own reqwest client, redirects as each request asks.
pub struct DpopHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    dpop: Arc<Dpop>,
}

/// The most of an answer read.
const MAX_ANSWER: usize = 1024 * 1024;

impl DpopHttp {
    pub fn new(dpop: Arc<Dpop>) -> Result<Self, String> {
        Ok(Self {
            follow: super::http_client(crate::http_client::Redirects::SameOrigin307And308)?,
            stop: super::http_client(crate::http_client::Redirects::Never)?,
            dpop,
        })
    }
}

type HttpError = Box<dyn std::error::Error + Send + Sync>;

fn error(text: impl Into<String>) -> HttpError {
    text.into().into()
}

impl OAuthHttpClient for DpopHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let OAuthHttpRequest {
                request,
                redirect_policy,
                timeout,
                ..
            } = request;
            let client = match redirect_policy {
                OAuthHttpRedirectPolicy::Stop => &self.stop,
                _ => &self.follow,
            };
            let token_request = request.method() == http::Method::POST
                && request
                    .headers()
                    .get(http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|t| t.starts_with("application/x-www-form-urlencoded"));
            let uri = request.uri().to_string();
            let method = reqwest::Method::from_bytes(request.method().as_str().as_bytes())
                .map_err(|e| error(e.to_string()))?;
            for round in 0..2 {
                let mut builder = client.request(method.clone(), &uri);
                for (name, value) in request.headers() {
                    builder = builder.header(name.as_str(), value.as_bytes());
                }
                if let Some(timeout) = timeout {
                    builder = builder.timeout(timeout);
                }
                if token_request {
                    let nonce = self
                        .dpop
                        .as_nonce
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .clone();
                    let proof = self.dpop.proof("POST", &uri, None, nonce.as_deref())?;
                    builder = builder.header("dpop", proof);
                }
                let response = builder
                    .body(request.body().clone())
                    .send()
                    .await
                    .map_err(|e| error(crate::http_client::error_chain(&e)))?;
                let status = response.status().as_u16();
                let headers: Vec<(String, Vec<u8>)> = response
                    .headers()
                    .iter()
                    .map(|(n, v)| (n.as_str().to_owned(), v.as_bytes().to_vec()))
                    .collect();
                let body = match crate::transport::net::read_bounded(response, MAX_ANSWER).await {
                    Ok(crate::transport::net::Body::Complete(body)) => body,
                    Ok(crate::transport::net::Body::TooLarge) => {
                        return Err(error(format!("an OAuth answer exceeds {MAX_ANSWER} bytes")));
                    }
                    Err(e) => return Err(error(crate::http_client::error_chain(&e))),
                };
                let fresh = headers
                    .iter()
                    .find(|(n, _)| n == NONCE_HEADER)
                    .and_then(|(_, v)| String::from_utf8(v.clone()).ok());
                if let Some(fresh) = &fresh {
                    *self.dpop.as_nonce.lock().unwrap_or_else(|p| p.into_inner()) =
                        Some(fresh.clone());
                }
                let asks_nonce = token_request
                    && status == 400
                    && fresh.is_some()
                    && String::from_utf8_lossy(&body).contains("use_dpop_nonce");
                if round == 0 && asks_nonce {
                    continue;
                }
                let mut answer = http::Response::builder().status(status);
                for (name, value) in headers {
                    answer = answer.header(name, value);
                }
                return answer.body(body).map_err(|e| error(e.to_string()));
            }
            Err(error("the token endpoint asked for a DPoP nonce twice"))
        })
    }
}
