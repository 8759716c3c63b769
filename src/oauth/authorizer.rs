//! OAuth for one remote server: the [`Bearer`] its transport asks for tokens.
//!
//! The first request goes out without a token; the server's 401 and its `WWW-Authenticate`
//! challenge start the spec's flow, which rmcp's `AuthorizationManager` carries out (protected
//! resource metadata, authorization server metadata, client identity, PKCE, `resource`,
//! `iss`). Tokens are looked up in the store under the issuer and the resource first; only when
//! none is usable does the grant run: client credentials by itself, an authorization code
//! through the host's `authorize` (or `login`). Tokens are refreshed shortly before they expire
//! and when the server refuses one; a 403 `insufficient_scope` steps the scopes up once.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use oauth2::TokenResponse;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, CredentialStore, JwtSigningAlgorithm,
    OAuthClientConfig, OAuthTokenResponse, StoredCredentials, WWWAuthenticateParams,
};
use secrecy::{ExposeSecret, SecretString};
use tokio::time::Instant;

use super::dpop::{Dpop, DpopHttp};
use super::store::{KeyedStore, store_key};
use super::{AuthState, OAuthHost};
use crate::config::{OAuthConfig, OAuthGrant};
use crate::log::Log;
use crate::transport::bearer::{Bearer, Refusal};

/// Refresh this long before a token expires (or at half its life, when that is sooner).
const REFRESH_AHEAD: Duration = Duration::from_secs(60);

/// What one start resolved for the grant: the client secret and the private key.
#[derive(Default, Clone)]
pub struct ClientSecrets {
    pub client_secret: Option<SecretString>,
    /// PEM text of `privateKeyFile`.
    pub private_key: Option<SecretString>,
    /// `idp.clientSecret` and `idp.idToken` (enterprise).
    pub idp_client_secret: Option<SecretString>,
    pub id_token: Option<SecretString>,
}

struct Cached {
    token: SecretString,
    refresh_at: Option<Instant>,
}

#[derive(Default)]
struct Flow {
    manager: Option<AuthorizationManager>,
    /// The store key of the tokens in use.
    key: Option<String>,
    /// Scope step-ups made (at most one).
    step_ups: u32,
    /// The authorization server of the last sign-in.
    metadata: Option<AuthorizationMetadata>,
    issuer: String,
    /// Scopes chosen by discovery when the manager that did it was replaced (DPoP).
    scopes_hint: Option<Vec<String>>,
}

pub struct Authorizer {
    server: String,
    resource: url::Url,
    config: OAuthConfig,
    host: OAuthHost,
    log: Log,
    secrets: Mutex<ClientSecrets>,
    flow: tokio::sync::Mutex<Flow>,
    cached: Mutex<Option<Cached>>,
    state: Mutex<AuthState>,
    /// This client's DPoP key, once an authorization server asked for DPoP-bound tokens.
    dpop: Mutex<Option<Arc<Dpop>>>,
}

impl Authorizer {
    pub fn new(
        server: &str,
        url: &str,
        config: OAuthConfig,
        host: OAuthHost,
        log: Log,
    ) -> Result<Arc<Self>, String> {
        let resource = url::Url::parse(url)
            .map_err(|e| format!("MCP server '{server}': invalid url for OAuth: {e}"))?;
        Ok(Arc::new(Self {
            server: server.to_owned(),
            resource,
            config,
            host,
            log,
            secrets: Mutex::new(ClientSecrets::default()),
            flow: tokio::sync::Mutex::new(Flow::default()),
            cached: Mutex::new(None),
            state: Mutex::new(AuthState::Unknown),
            dpop: Mutex::new(None),
        }))
    }

    /// The secrets resolved for this start (registered with the redactor by the caller).
    pub fn set_secrets(&self, secrets: ClientSecrets) {
        *self.secrets.lock().unwrap_or_else(|p| p.into_inner()) = secrets;
    }

    pub fn state(&self) -> AuthState {
        *self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set_state(&self, state: AuthState) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = state;
    }

    fn cached_token(&self) -> Option<(SecretString, bool)> {
        let cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        cached.as_ref().map(|c| {
            let fresh = c.refresh_at.is_none_or(|at| Instant::now() < at);
            (c.token.clone(), fresh)
        })
    }

    fn forget_token(&self) {
        *self.cached.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Keeps `token` for the next requests; `expires_in` from the token response.
    fn keep(&self, token: SecretString, expires_in: Option<Duration>) {
        self.log.redactor().register(&token);
        let refresh_at = expires_in.map(|life| {
            let ahead = REFRESH_AHEAD.min(life / 2);
            Instant::now() + life.saturating_sub(ahead)
        });
        *self.cached.lock().unwrap_or_else(|p| p.into_inner()) = Some(Cached { token, refresh_at });
        self.set_state(AuthState::Authorized);
    }

    fn keep_response(&self, response: &OAuthTokenResponse) {
        self.keep(
            SecretString::from(response.access_token().secret().clone()),
            response.expires_in(),
        );
    }

    /// What is left of the life of the token stored under `key` (`None`: unknown).
    async fn stored_life(&self, key: &str) -> Option<Duration> {
        let text = self.host.store.get(key).await.ok()??;
        let stored: rmcp::transport::auth::StoredCredentials = serde_json::from_str(&text).ok()?;
        let life = stored.token_response?.expires_in()?;
        let received = stored.token_received_at?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_secs();
        Some(life.saturating_sub(Duration::from_secs(now.saturating_sub(received))))
    }

    /// A message for the user about `error` (redacted: an error body may echo a value).
    fn failed(&self, what: &str, error: impl std::fmt::Display) -> String {
        let text = format!("{what}: {error}");
        self.log.redactor().redact(&text).into_owned()
    }

    fn login_hint(&self) -> String {
        format!(
            "the server needs an OAuth sign-in: give the manager an oauth.authorize callback, \
             or sign in once with `openclaw-mcp-native login {}` (with the same oauth store)",
            self.server
        )
    }

    async fn new_manager(&self) -> Result<AuthorizationManager, String> {
        AuthorizationManager::new(self.resource.as_str())
            .await
            .map_err(|e| self.failed("OAuth could not start", e))
    }

    /// Discovery from the challenge, then the stored tokens, then the grant.
    async fn sign_in(
        &self,
        flow: &mut Flow,
        challenge: Option<&str>,
        refused: Option<&SecretString>,
    ) -> Result<(), String> {
        let mut manager = self.new_manager().await?;
        let resolution = manager
            .resolve_metadata_from_challenge(challenge)
            .await
            .map_err(|e| self.failed("OAuth discovery failed", e))?;
        let issuer = resolution
            .metadata
            .issuer
            .clone()
            .or_else(|| {
                url::Url::parse(&resolution.metadata.authorization_endpoint)
                    .ok()
                    .map(|u| u.origin().ascii_serialization())
            })
            .unwrap_or_default();
        flow.metadata = Some(resolution.metadata.clone());
        flow.issuer = issuer.clone();
        flow.scopes_hint = None;
        if challenge.is_some_and(offers_dpop) && supports_dpop(&resolution.metadata) {
            // Discovery went through rmcp's address-filtering client; registration, tokens
            // and refreshes go through one that adds DPoP proofs.
            flow.scopes_hint = Some(manager.select_initial_scopes(&[]).await);
            let http = DpopHttp::new(self.dpop_key()?)
                .map_err(|e| self.failed("DPoP could not start", e))?;
            manager = AuthorizationManager::new_with_oauth_http_client(
                self.resource.as_str(),
                Arc::new(http),
            )
            .await
            .map_err(|e| self.failed("OAuth could not start", e))?;
        }
        manager.set_metadata(resolution.metadata);
        let key = store_key(&issuer, self.resource.as_str());
        manager.set_credential_store(KeyedStore {
            store: self.host.store.clone(),
            key: key.clone(),
            redactor: self.log.redactor().clone(),
        });
        if self.from_store(&mut manager, &key, refused).await? {
            flow.key = Some(key);
            flow.manager = Some(manager);
            return Ok(());
        }
        flow.key = Some(key);
        let manager = match self.config.grant {
            OAuthGrant::ClientCredentials => self.client_credentials(manager, &[]).await?,
            OAuthGrant::AuthorizationCode => {
                self.authorization_code(manager, flow.scopes_hint.clone())
                    .await?
            }
            OAuthGrant::JwtBearer | OAuthGrant::Enterprise => {
                self.assertion_grant(flow, manager, &[]).await?
            }
        };
        flow.manager = Some(manager);
        Ok(())
    }

    /// This client's DPoP key (made on first use, kept for the life of the manager).
    fn dpop_key(&self) -> Result<Arc<Dpop>, String> {
        let mut slot = self.dpop.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(key) = &*slot {
            return Ok(key.clone());
        }
        let key = Arc::new(Dpop::new().map_err(|e| self.failed("DPoP could not start", e))?);
        *slot = Some(key.clone());
        Ok(key)
    }

    fn dpop(&self) -> Option<Arc<Dpop>> {
        self.dpop.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A grant by assertion (workload identity, enterprise-managed), with `extra` scopes on top
    /// of the configured or discovered ones; the tokens are stored like any other.
    async fn assertion_grant(
        &self,
        flow: &Flow,
        manager: AuthorizationManager,
        extra: &[String],
    ) -> Result<AuthorizationManager, String> {
        let metadata = flow
            .metadata
            .as_ref()
            .ok_or_else(|| self.failed("OAuth", "no authorization server metadata"))?;
        let mut scopes = if self.config.scopes.is_empty() {
            manager.select_initial_scopes(&[]).await
        } else {
            self.config.scopes.clone()
        };
        for scope in extra {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        let resource = self.resource.as_str();
        let client_id = self.config.client_id.clone().unwrap_or_default();
        let response = match self.config.grant {
            OAuthGrant::JwtBearer => {
                let path = self.config.assertion_file.as_deref().unwrap_or_default();
                let assertion = tokio::fs::read_to_string(path).await.map_err(|e| {
                    self.failed(
                        "auth.assertionFile",
                        format_args!("'{path}' could not be read: {e}"),
                    )
                })?;
                let assertion = SecretString::from(assertion);
                self.log.redactor().register(&assertion);
                super::assertion_grant::jwt_bearer(
                    &metadata.token_endpoint,
                    &assertion,
                    self.config.client_id.as_deref(),
                    resource,
                    &scopes,
                )
                .await
                .map_err(|e| self.failed("the jwt-bearer grant failed", e))?
            }
            _ => {
                let idp = self
                    .config
                    .idp
                    .as_ref()
                    .ok_or_else(|| self.failed("auth", "no idp"))?;
                let ClientSecrets {
                    idp_client_secret: idp_secret,
                    id_token,
                    client_secret: secret,
                    ..
                } = self.secrets();
                let id_token =
                    id_token.ok_or_else(|| self.failed("auth.idp.idToken", "not resolved"))?;
                super::assertion_grant::enterprise(
                    super::assertion_grant::Idp {
                        issuer: &idp.issuer,
                        token_endpoint: &idp.token_endpoint,
                        client_id: &idp.client_id,
                        client_secret: idp_secret.as_ref(),
                        id_token: &id_token,
                    },
                    super::assertion_grant::ResourceServer {
                        issuer: &flow.issuer,
                        token_endpoint: &metadata.token_endpoint,
                        client_id: &client_id,
                        client_secret: secret.as_ref(),
                    },
                    resource,
                    &scopes,
                )
                .await
                .map_err(|e| self.failed("enterprise-managed authorization", e))?
            }
        };
        if let Some(key) = &flow.key {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .ok();
            let store = KeyedStore {
                store: self.host.store.clone(),
                key: key.clone(),
                redactor: self.log.redactor().clone(),
            };
            store
                .save(
                    StoredCredentials::new(client_id, Some(response.clone()), scopes, now)
                        .with_issuer(Some(flow.issuer.clone())),
                )
                .await
                .map_err(|e| self.failed("the OAuth tokens could not be stored", e))?;
        }
        self.keep_response(&response);
        Ok(manager)
    }

    /// Uses the stored tokens when there are any the server has not just refused (refreshing
    /// them when needed). `Ok(false)`: none usable.
    async fn from_store(
        &self,
        manager: &mut AuthorizationManager,
        key: &str,
        refused: Option<&SecretString>,
    ) -> Result<bool, String> {
        let stored = manager
            .initialize_from_store()
            .await
            .map_err(|e| self.failed("the stored OAuth tokens could not be read", e))?;
        if !stored {
            return Ok(false);
        }
        self.configure_client(manager)?;
        match manager.get_access_token().await {
            Ok(token) if refused.is_none_or(|r| r.expose_secret() != token) => {
                let life = self.stored_life(key).await;
                self.keep(SecretString::from(token), life);
                return Ok(true);
            }
            Ok(_) => {}
            Err(AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_)) => {
                return Ok(false);
            }
            Err(e) => return Err(self.failed("the stored OAuth tokens could not be used", e)),
        }
        // The stored token is the one just refused: refresh it.
        match manager.refresh_token().await {
            Ok(response) => {
                self.keep_response(&response);
                Ok(true)
            }
            Err(e) => {
                self.log
                    .debug(&self.failed("refreshing the stored token failed", e));
                Ok(false)
            }
        }
    }

    /// A pre-registered client's id and secret, when the config has them.
    fn configure_client(&self, manager: &mut AuthorizationManager) -> Result<(), String> {
        let Some(id) = &self.config.client_id else {
            return Ok(());
        };
        if self.config.grant == OAuthGrant::ClientCredentials {
            return Ok(());
        }
        let mut client = OAuthClientConfig::new(id.clone(), self.config.redirect_uri())
            .with_scopes(self.config.scopes.clone());
        if let Some(secret) = self.secrets().client_secret {
            client = client.with_client_secret(secret.expose_secret());
        }
        manager
            .configure_client(client)
            .map_err(|e| self.failed("the OAuth client could not be configured", e))
    }

    /// The secrets this start resolved.
    fn secrets(&self) -> ClientSecrets {
        self.secrets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The client credentials grant (a machine client), with `extra` scopes on top of the
    /// configured ones.
    async fn client_credentials(
        &self,
        mut manager: AuthorizationManager,
        extra: &[String],
    ) -> Result<AuthorizationManager, String> {
        let client_id = self.config.client_id.clone().unwrap_or_default();
        let mut scopes = self.config.scopes.clone();
        for scope in extra {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        let resource = Some(self.resource.to_string());
        let secrets = self.secrets();
        let config = match (secrets.private_key, secrets.client_secret) {
            (Some(pem), _) => ClientCredentialsConfig::PrivateKeyJwt {
                client_id,
                signing_algorithm: signing_algorithm(pem.expose_secret()).ok_or_else(|| {
                    self.failed(
                        "privateKeyFile",
                        "not a PEM RSA or EC (P-256, P-384) private key",
                    )
                })?,
                signing_key: pem.expose_secret().as_bytes().to_vec(),
                token_endpoint_audience: None,
                scopes,
                resource,
            },
            (None, Some(secret)) => ClientCredentialsConfig::ClientSecret {
                client_id,
                client_secret: secret.expose_secret().to_owned(),
                scopes,
                resource,
            },
            (None, None) => {
                return Err(self.failed(
                    "client credentials",
                    "neither clientSecret nor privateKeyFile resolved",
                ));
            }
        };
        manager
            .validate_client_credentials_metadata(&config)
            .and_then(|()| manager.configure_client_credentials(&config))
            .map_err(|e| self.failed("the client credentials grant is not possible", e))?;
        // rmcp 3.9's client credentials exchange holds a non-Send form serializer across an
        // await (its private_key_jwt branch), so its future cannot run on a worker; it runs on
        // a blocking thread of the same runtime instead.
        let handle = tokio::runtime::Handle::current();
        let (manager, exchanged) = tokio::task::spawn_blocking(move || {
            let exchanged = handle.block_on(manager.exchange_client_credentials(&config));
            (manager, exchanged)
        })
        .await
        .map_err(|e| self.failed("the client credentials grant failed", e))?;
        let response =
            exchanged.map_err(|e| self.failed("the client credentials grant failed", e))?;
        self.keep_response(&response);
        Ok(manager)
    }

    /// The authorization code grant through the host's `authorize`.
    async fn authorization_code(
        &self,
        manager: AuthorizationManager,
        scopes_hint: Option<Vec<String>>,
    ) -> Result<AuthorizationManager, String> {
        if self.host.authorize.is_none() {
            self.set_state(AuthState::LoginRequired);
            return Err(self.login_hint());
        }
        let mut request = AuthorizationRequest::new(self.config.redirect_uri())
            .with_client_name("OpenClaw (mcp-native)");
        request = match scopes_hint {
            _ if !self.config.scopes.is_empty() => request.with_scopes(self.config.scopes.clone()),
            Some(hint) if !hint.is_empty() => request.with_scopes(hint),
            _ => request.with_initial_scope_selection(),
        };
        if let Some(id) = &self.config.client_id {
            request = request.with_preregistered_client(id.clone());
            if let Some(secret) = self.secrets().client_secret {
                request = request.with_client_secret(secret.expose_secret());
            }
        } else if let Some(url) = &self.config.client_metadata_url {
            request = request.with_client_metadata_url(url.clone());
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| self.failed("OAuth authorization could not start", e))?;
        let url = session.get_authorization_url().to_owned();
        self.finish_authorization(session, &url).await
    }

    /// Hands `url` to the host and exchanges what it answers (a callback URL, or a code).
    async fn finish_authorization(
        &self,
        session: AuthorizationSession,
        url: &str,
    ) -> Result<AuthorizationManager, String> {
        let Some(authorize) = &self.host.authorize else {
            self.set_state(AuthState::LoginRequired);
            return Err(self.login_hint());
        };
        let argument = crate::hooks::callback_argument(Some(&self.server), url);
        let answer = authorize(argument)
            .await
            .map_err(|e| self.failed("oauth.authorize failed", e))?;
        let answer = match answer.map(|text| serde_json::from_str::<serde_json::Value>(&text)) {
            Some(Ok(serde_json::Value::String(answer))) if !answer.trim().is_empty() => answer,
            _ => {
                return Err(self.failed(
                    "oauth.authorize",
                    "expected a promise of the callback URL or the authorization code",
                ));
            }
        };
        let answer = answer.trim();
        let exchanged = if answer.starts_with("http://") || answer.starts_with("https://") {
            session.handle_callback_url(answer).await
        } else {
            let state = url::Url::parse(url)
                .ok()
                .and_then(|u| {
                    u.query_pairs()
                        .find(|(k, _)| k == "state")
                        .map(|(_, v)| v.into_owned())
                })
                .unwrap_or_default();
            session.handle_callback(answer, &state).await
        };
        let response = exchanged.map_err(|e| self.failed("OAuth sign-in failed", e))?;
        self.keep_response(&response);
        Ok(session.auth_manager)
    }

    /// A 403 `insufficient_scope`: ask once more with the scopes the server named.
    async fn step_up(&self, flow: &mut Flow, challenge: Option<&str>) -> Result<(), String> {
        let scope = challenge
            .map(|c| WWWAuthenticateParams::parse(c, &self.resource))
            .and_then(|p| p.scope)
            .unwrap_or_default();
        if flow.step_ups >= 1 {
            return Err(self.failed(
                "the server still refuses the token for insufficient scope after one step-up",
                format_args!("it asks for '{scope}'"),
            ));
        }
        flow.step_ups += 1;
        let Some(manager) = flow.manager.take() else {
            return self.sign_in(flow, challenge, None).await;
        };
        let extra: Vec<String> = scope.split_whitespace().map(str::to_owned).collect();
        let manager = match self.config.grant {
            OAuthGrant::ClientCredentials => self.client_credentials(manager, &extra).await?,
            OAuthGrant::JwtBearer | OAuthGrant::Enterprise => {
                self.assertion_grant(flow, manager, &extra).await?
            }
            OAuthGrant::AuthorizationCode => {
                if self.host.authorize.is_none() {
                    flow.manager = Some(manager);
                    self.set_state(AuthState::LoginRequired);
                    return Err(self.login_hint());
                }
                let url = manager
                    .request_scope_upgrade(&scope)
                    .await
                    .map_err(|e| self.failed("the scope step-up could not start", e))?;
                let session = AuthorizationSession::for_scope_upgrade(
                    manager,
                    url.clone(),
                    self.config.redirect_uri(),
                );
                self.finish_authorization(session, &url).await?
            }
        };
        flow.manager = Some(manager);
        Ok(())
    }

    async fn on_refusal(&self, refusal: Refusal) -> Result<(), String> {
        let mut flow = self.flow.lock().await;
        // Another request got a new token while this one waited.
        if let (Some(sent), Some((current, _))) = (&refusal.sent, self.cached_token())
            && sent.expose_secret() != current.expose_secret()
        {
            return Ok(());
        }
        let challenge = refusal.challenge.as_deref();
        // A DPoP resource server asking for its nonce: the same token, a new proof.
        if let (Some(dpop), Some(nonce)) = (self.dpop(), refusal.nonce.as_deref())
            && challenge.is_some_and(|c| c.contains("use_dpop_nonce"))
            && dpop.resource_nonce(nonce)
        {
            return Ok(());
        }
        if refusal.status == 403 {
            return self.step_up(&mut flow, challenge).await;
        }
        if refusal.sent.is_some()
            && let Some(manager) = &flow.manager
        {
            match manager.refresh_token().await {
                Ok(response) => {
                    self.keep_response(&response);
                    return Ok(());
                }
                Err(e) => self
                    .log
                    .debug(&self.failed("refreshing the refused token failed", e)),
            }
        }
        self.forget_token();
        let result = self
            .sign_in(&mut flow, challenge, refusal.sent.as_ref())
            .await;
        if result.is_err() && self.state() != AuthState::LoginRequired {
            self.set_state(AuthState::Failed);
        }
        result
    }

    /// Signs out: the stored tokens of this server's resource are deleted (the key learned by
    /// the last sign-in, else found by discovery).
    pub async fn sign_out(&self) -> Result<bool, String> {
        let mut flow = self.flow.lock().await;
        self.forget_token();
        flow.manager = None;
        let key = match flow.key.take() {
            Some(key) => key,
            None => {
                let manager = self.new_manager().await?;
                let resolution = manager
                    .resolve_metadata()
                    .await
                    .map_err(|e| self.failed("OAuth discovery failed", e))?;
                let Some(issuer) = resolution.metadata.issuer else {
                    return Ok(false);
                };
                store_key(&issuer, self.resource.as_str())
            }
        };
        let had = self.host.store.get(&key).await.ok().flatten().is_some();
        self.host.store.delete(&key).await?;
        self.set_state(AuthState::LoginRequired);
        Ok(had)
    }
}

impl Bearer for Authorizer {
    fn token(&self) -> BoxFuture<'_, Result<Option<SecretString>, String>> {
        Box::pin(async move {
            match self.cached_token() {
                Some((token, true)) => Ok(Some(token)),
                None => Ok(None),
                Some((stale, false)) => {
                    let flow = self.flow.lock().await;
                    if let Some((token, true)) = self.cached_token() {
                        return Ok(Some(token));
                    }
                    let Some(manager) = &flow.manager else {
                        return Ok(Some(stale));
                    };
                    match manager.refresh_token().await {
                        Ok(response) => {
                            self.keep_response(&response);
                            Ok(Some(SecretString::from(
                                response.access_token().secret().clone(),
                            )))
                        }
                        // No refresh token, or the server would not: the old token is used
                        // until the server refuses it, which starts a new sign-in.
                        Err(e) => {
                            self.log.debug(
                                &self.failed("refreshing the token ahead of expiry failed", e),
                            );
                            self.keep(stale.clone(), None);
                            Ok(Some(stale))
                        }
                    }
                }
            }
        })
    }

    fn refused(&self, refusal: Refusal) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(self.on_refusal(refusal))
    }

    fn present(
        &self,
        method: &str,
        url: &str,
        token: &SecretString,
    ) -> Vec<(reqwest::header::HeaderName, reqwest::header::HeaderValue)> {
        use crate::transport::bearer::sensitive;
        let Some(dpop) = self.dpop() else {
            return sensitive(&format!("Bearer {}", token.expose_secret()))
                .map(|v| (reqwest::header::AUTHORIZATION, v))
                .into_iter()
                .collect();
        };
        let proof = match dpop.resource_proof(method, url, token.expose_secret()) {
            Ok(proof) => proof,
            Err(e) => {
                self.log.warn(&self.failed("DPoP", e));
                return Vec::new();
            }
        };
        [
            (
                reqwest::header::AUTHORIZATION,
                sensitive(&format!("DPoP {}", token.expose_secret())),
            ),
            (
                reqwest::header::HeaderName::from_static("dpop"),
                sensitive(&proof),
            ),
        ]
        .into_iter()
        .filter_map(|(name, value)| Some((name, value?)))
        .collect()
    }
}

/// Whether a `WWW-Authenticate` value offers the DPoP scheme (the resource server takes
/// DPoP-bound tokens; RFC 9449 §7.1). An authorization server that can issue them is not
/// enough: a resource server that only knows `Bearer` would refuse them.
fn offers_dpop(challenge: &str) -> bool {
    challenge.split(',').any(|part| {
        let part = part.trim_start();
        part.len() >= 4
            && part[..4].eq_ignore_ascii_case("dpop")
            && part[4..].chars().next().is_none_or(|c| c == ' ')
    })
}

/// Whether the authorization server issues DPoP-bound tokens for ES256 proofs.
fn supports_dpop(metadata: &AuthorizationMetadata) -> bool {
    metadata
        .additional_fields
        .get("dpop_signing_alg_values_supported")
        .and_then(|v| v.as_array())
        .is_some_and(|algs| algs.iter().any(|a| a.as_str() == Some("ES256")))
}

/// The JWT algorithm for a PEM private key: ES256 / ES384 for EC keys on P-256 / P-384, RS256
/// for RSA keys.
fn signing_algorithm(pem: &str) -> Option<JwtSigningAlgorithm> {
    use base64::Engine as _;
    let body: String = pem
        .lines()
        .filter(|l| !l.starts_with("-----") && !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .ok()?;
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
    const P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
    const P384: &[u8] = &[0x2b, 0x81, 0x04, 0x00, 0x22];
    let has = |oid: &[u8]| der.windows(oid.len()).any(|w| w == oid);
    if pem.contains("RSA PRIVATE KEY") || has(RSA) {
        Some(JwtSigningAlgorithm::RS256)
    } else if has(P384) {
        Some(JwtSigningAlgorithm::ES384)
    } else if has(P256) {
        Some(JwtSigningAlgorithm::ES256)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dpop_only_when_the_resource_offers_the_scheme() {
        assert!(offers_dpop(
            r#"DPoP resource_metadata="https://r/.well-known/x""#
        ));
        assert!(offers_dpop(r#"Bearer realm="r", DPoP algs="ES256""#));
        assert!(offers_dpop("dpop"));
        assert!(!offers_dpop(r#"Bearer resource_metadata="https://r/dpop""#));
        assert!(!offers_dpop("DPoPish x"));
    }

    #[test]
    fn signing_algorithm_reads_the_key_type() {
        // A P-256 key in PKCS#8 (generated for this test only).
        let p256 = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgjXYARP9h6MNqBV1R
sjC2p3pi2DwZf6027tkXMS5oormhRANCAASlqaGwWy4f0+hOLmUkfVlyM++9Fag6
sHJ/vQ6TiizODUsheFC9fHMPyEES5dmDuK7X19tYt4Lv9pdV5RowNFSH
-----END PRIVATE KEY-----";
        assert!(matches!(
            signing_algorithm(p256),
            Some(JwtSigningAlgorithm::ES256)
        ));
        assert!(signing_algorithm("not a key").is_none());
    }
}
