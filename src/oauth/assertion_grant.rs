//! Grants by assertion, for clients no person signs in to:
//! - workload identity federation (SEP-1933): the RFC 7523 jwt-bearer grant with a token the
//!   workload's platform issues (a Kubernetes projected token, a cloud identity token), read
//!   from its file at each grant because such tokens rotate;
//! - enterprise-managed authorization (SEP-990): the enterprise IdP's identity token exchanged
//!   (RFC 8693) for an ID-JAG, and that for an access token with the jwt-bearer grant — rmcp's
//!   `enterprise` module does both exchanges.
//!
//! Token endpoints must be HTTPS, or HTTP on loopback; redirects are never followed.

use oauth2::ClientSecret;
use rmcp::transport::auth::OAuthTokenResponse;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
};
use secrecy::{ExposeSecret, SecretString};

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// The most of a token endpoint's answer read.
const MAX_ANSWER: usize = 256 * 1024;

/// HTTPS, or HTTP to a loopback host.
fn check_endpoint(endpoint: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(endpoint).map_err(|e| format!("token endpoint {endpoint}: {e}"))?;
    let loopback = match url.host() {
        Some(url::Host::Domain(host)) => host.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    if url.scheme() == "https" || (url.scheme() == "http" && loopback) {
        Ok(url)
    } else {
        Err(format!(
            "token endpoint {}://{}: HTTPS is required (HTTP only on loopback)",
            url.scheme(),
            url.host_str().unwrap_or("")
        ))
    }
}

/// The jwt-bearer grant with `assertion` at `token_endpoint`, for `resource`.
pub async fn jwt_bearer(
    token_endpoint: &str,
    assertion: &SecretString,
    client_id: Option<&str>,
    resource: &str,
    scopes: &[String],
) -> Result<OAuthTokenResponse, String> {
    let url = check_endpoint(token_endpoint)?;
    let mut form: Vec<(&str, &str)> = vec![
        ("grant_type", JWT_BEARER),
        ("assertion", assertion.expose_secret().trim()),
        ("resource", resource),
    ];
    if let Some(id) = client_id {
        form.push(("client_id", id));
    }
    let scope = scopes.join(" ");
    if !scope.is_empty() {
        form.push(("scope", &scope));
    }
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&form)
        .finish();
    let response = super::http_client(crate::http_client::Redirects::Never)?
        .post(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(body)
        .send()
        .await
        .map_err(|e| {
            format!(
                "the token request failed: {}",
                crate::http_client::error_chain(&e)
            )
        })?;
    let status = response.status();
    let body = match crate::transport::net::read_bounded(response, MAX_ANSWER).await {
        Ok(crate::transport::net::Body::Complete(body)) => body,
        Ok(crate::transport::net::Body::TooLarge) => {
            return Err(format!(
                "the token endpoint's answer exceeds {MAX_ANSWER} bytes"
            ));
        }
        Err(e) => {
            return Err(format!(
                "the token endpoint's answer could not be read: {e}"
            ));
        }
    };
    if !status.is_success() {
        // An OAuth error names itself; its description may quote the assertion, so only the
        // code is shown.
        let code = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
            .unwrap_or_default();
        return Err(format!(
            "the token endpoint answered HTTP {} {code}",
            status.as_u16()
        ));
    }
    serde_json::from_slice::<OAuthTokenResponse>(&body)
        .map_err(|e| format!("the token endpoint's answer is not a token response: {e}"))
}

/// Where the enterprise IdP is and who this client is there.
pub struct Idp<'a> {
    pub issuer: &'a str,
    pub token_endpoint: &'a str,
    pub client_id: &'a str,
    pub client_secret: Option<&'a SecretString>,
    pub id_token: &'a SecretString,
}

/// This client at the resource's authorization server.
pub struct ResourceServer<'a> {
    pub issuer: &'a str,
    pub token_endpoint: &'a str,
    pub client_id: &'a str,
    pub client_secret: Option<&'a SecretString>,
}

fn authentication(secret: Option<&SecretString>) -> EmaClientAuthentication {
    match secret {
        Some(secret) => EmaClientAuthentication::ClientSecretBasic(ClientSecret::new(
            secret.expose_secret().to_owned(),
        )),
        None => EmaClientAuthentication::None,
    }
}

/// Enterprise-managed authorization: identity token → ID-JAG (at the IdP) → access token (at
/// the resource's authorization server).
pub async fn enterprise(
    idp: Idp<'_>,
    resource_as: ResourceServer<'_>,
    resource: &str,
    scopes: &[String],
) -> Result<OAuthTokenResponse, String> {
    let http = rmcp::transport::auth::default_oauth_http_client()
        .map_err(|e| format!("enterprise authorization could not start: {e}"))?;
    let request = EmaExchangeRequest::new_with_id_token(
        EmaAuthorizationServer::new(idp.issuer, idp.token_endpoint, idp.client_id)
            .with_client_authentication(authentication(idp.client_secret)),
        EmaAuthorizationServer::new(
            resource_as.issuer,
            resource_as.token_endpoint,
            resource_as.client_id,
        )
        .with_client_authentication(authentication(resource_as.client_secret)),
        resource,
        idp.id_token.expose_secret(),
    )
    .with_scopes(scopes.iter().cloned());
    let token = request
        .exchange(&http, &http)
        .await
        .map_err(|e| format!("enterprise authorization failed: {e}"))?;
    // The token as a token response (what the store and the refresh logic keep).
    let mut answer = serde_json::json!({
        "access_token": token.access_token.secret(),
        "token_type": "Bearer",
    });
    if let Some(life) = token.expires_in {
        answer["expires_in"] = life.as_secs().into();
    }
    serde_json::from_value(answer).map_err(|e| format!("enterprise authorization: {e}"))
}
