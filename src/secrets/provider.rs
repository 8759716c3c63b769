//! The provider trait and the resolver that dispatches `secret://` references.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use secrecy::SecretString;

use super::env::EnvSourceProvider;
use super::template::{has_env_refs, substitute_env_refs};
use super::uri::{BUILTIN_PROVIDERS, parse_syntax};
use super::{
    AwsProvider, EnvSource, ExecProvider, FileProvider, GcpProvider, ProviderDefinitions, Redactor,
    SecretError, SecretRef, VaultProvider, looks_like_credential_key,
};

/// The future a provider returns: boxed so that the trait stays object-safe
/// (`Arc<dyn SecretProvider>`), `Send` so resolution can run on any runtime
/// thread.
pub type SecretFuture<'a> =
    Pin<Box<dyn Future<Output = Result<SecretString, SecretError>> + Send + 'a>>;

/// One secret backend: a built-in one (`env`, `file`, `exec`, `aws`, `gcp`,
/// `vault`), an embedder's own, or a test double. Implement `resolve` as
/// `Box::pin(async move { … })`.
///
/// Contract for implementors: never put a resolved value into an error, a log
/// line or a `Debug` output; name the reference instead.
pub trait SecretProvider: Send + Sync {
    /// The `<provider>` part of the URIs this provider serves.
    fn name(&self) -> &str;

    /// Fetches the value for `r` (whose `provider` equals [`Self::name`]).
    fn resolve<'a>(&'a self, r: &'a SecretRef) -> SecretFuture<'a>;
}

/// The default overall deadline of [`SecretResolver::resolve`] and
/// [`SecretResolver::resolve_all`].
pub const DEFAULT_RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// Resolves `secret://` values through registered providers.
///
/// All `resolve*` methods must run inside a Tokio runtime with the time driver
/// enabled (they apply a deadline with `tokio::time`).
#[derive(Clone)]
pub struct SecretResolver {
    providers: HashMap<String, Arc<dyn SecretProvider>>,
    timeout: Duration,
    /// Where `${VAR}` substitutions read.
    env: EnvSource,
    /// When set, every resolved secret is registered here before it is returned.
    redactor: Option<Redactor>,
    /// The `secrets.providers` definitions installed, kept to rebuild providers for another
    /// environment ([`Self::for_env`]).
    definitions: ProviderDefinitions,
    /// The last resolver [`Self::for_env`] built, and for which variables: starts that see the
    /// same environment share it, and with it its providers' credential and token caches.
    /// Shared by clones.
    for_env_cache: Arc<Mutex<Option<DerivedResolver>>>,
}

/// A resolver rebuilt for a fixed set of variables.
type DerivedResolver = (Arc<BTreeMap<String, String>>, Arc<SecretResolver>);

impl Default for SecretResolver {
    fn default() -> Self {
        Self::with_default_providers()
    }
}

impl fmt::Debug for SecretResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretResolver")
            .field("providers", &self.provider_names())
            .field("timeout", &self.timeout)
            .field("env", &self.env)
            .field("redactor", &self.redactor.is_some())
            .field("definitions", &self.definitions)
            .finish()
    }
}

/// One input entry after parsing.
enum Slot<'v> {
    Plain(&'v str),
    /// Index into the list of unique references.
    Ref(usize),
    /// A plain value after `${VAR}` substitution.
    Substituted(SecretString),
}

impl SecretResolver {
    /// A resolver with no providers (every reference fails until one is registered).
    pub fn empty() -> Self {
        Self {
            providers: HashMap::new(),
            timeout: DEFAULT_RESOLVE_TIMEOUT,
            env: EnvSource::Process,
            redactor: None,
            definitions: ProviderDefinitions::default(),
            for_env_cache: Arc::default(),
        }
    }

    /// A resolver with every built-in provider (`env`, `file`, `aws`, `gcp`,
    /// `vault`, and `exec` without definitions) reading the process
    /// environment, and a 10 s deadline.
    pub fn with_default_providers() -> Self {
        Self::with_default_providers_in(EnvSource::Process)
    }

    /// Like [`Self::with_default_providers`], but every provider and every
    /// `${VAR}` substitution reads `env` (`HOME` included) instead of the
    /// process environment. The `exec` provider's children still inherit the
    /// process environment (see [`crate::secrets::ExecDefinition`]).
    pub fn with_default_providers_in(env: EnvSource) -> Self {
        let mut r = Self::empty();
        r.env = env.clone();
        r.register(EnvSourceProvider(env.clone()));
        let file = match (&env, env.home()) {
            (EnvSource::Fixed(_), Some(home)) => FileProvider::with_home(home),
            _ => FileProvider::new(),
        };
        r.register(file);
        r.register(AwsProvider::with_env(env.clone()));
        r.register(GcpProvider::with_env(env.clone()));
        r.register(VaultProvider::with_env(env));
        r.register(ExecProvider::default());
        r
    }

    /// Installs OpenClaw `secrets.providers` definitions: replaces the `exec`
    /// provider with one holding `defs.exec`, and the `file` provider with one
    /// that also knows `defs.file` (for `secret://file/@<name>#<id>`).
    pub fn with_provider_definitions(mut self, defs: ProviderDefinitions) -> Self {
        let file = match (&self.env, self.env.home()) {
            (EnvSource::Fixed(_), Some(home)) => FileProvider::with_home(home),
            _ => FileProvider::new(),
        };
        self.register(file.with_definitions(defs.file.clone()));
        self.register(ExecProvider::new(defs.exec.clone()));
        self.definitions = defs;
        self
    }

    /// The same resolver reading `env` instead: the built-in providers (`env`, `file`, `aws`,
    /// `gcp`, `vault`, `exec` with this resolver's definitions) are rebuilt for it; providers
    /// registered under other names, the deadline and the redactor are kept.
    /// [`EnvSource::Process`] means the host has no view of its own: this resolver, reading
    /// whatever it was built to read. The last one built is reused while the variables are
    /// the same, so its providers' caches (AWS credentials, GCP tokens, Vault mounts) live on
    /// across starts.
    pub fn for_env(self: &Arc<Self>, env: EnvSource) -> Arc<Self> {
        let EnvSource::Fixed(vars) = env else {
            return Arc::clone(self);
        };
        let mut cache = self.for_env_cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((seen, resolver)) = cache.as_ref()
            && (Arc::ptr_eq(seen, &vars) || **seen == *vars)
        {
            return Arc::clone(resolver);
        }
        let mut rebuilt = Self::with_default_providers_in(EnvSource::Fixed(vars.clone()))
            .with_provider_definitions(self.definitions.clone())
            .with_timeout(self.timeout);
        rebuilt.redactor = self.redactor.clone();
        for (name, provider) in &self.providers {
            if !BUILTIN_PROVIDERS.contains(&name.as_str()) {
                rebuilt.register_arc(provider.clone());
            }
        }
        let rebuilt = Arc::new(rebuilt);
        *cache = Some((vars, Arc::clone(&rebuilt)));
        rebuilt
    }

    /// Registers every value this resolver returns from a reference with
    /// `redactor` before returning it: each fetched `secret://` value, and for
    /// `${VAR}` substitutions the variable's own value when the variable name
    /// or the entry key looks like a credential
    /// ([`crate::secrets::looks_like_credential_key`]). Plain values are not
    /// registered.
    pub fn with_redactor(mut self, redactor: Redactor) -> Self {
        self.redactor = Some(redactor);
        self
    }

    /// Where `${VAR}` substitutions read.
    pub fn env_source(&self) -> &EnvSource {
        &self.env
    }

    /// Adds `provider`, replacing any provider of the same name.
    pub fn register<P: SecretProvider + 'static>(&mut self, provider: P) -> &mut Self {
        self.register_arc(Arc::new(provider))
    }

    /// Adds a shared provider, replacing any provider of the same name.
    pub fn register_arc(&mut self, provider: Arc<dyn SecretProvider>) -> &mut Self {
        self.providers.insert(provider.name().to_owned(), provider);
        self
    }

    /// Sets the overall deadline used by [`Self::resolve`] and [`Self::resolve_all`].
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The overall deadline.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Registered provider names, sorted.
    pub fn provider_names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.providers.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }

    /// Like [`crate::secrets::parse_secret_uri`], but a provider registered on this
    /// resolver counts as supported too.
    pub fn parse(&self, value: &str) -> Result<Option<SecretRef>, SecretError> {
        let parsed = parse_syntax(value)?;
        if let Some(r) = &parsed {
            let p = r.provider.as_str();
            if !self.providers.contains_key(p) && !BUILTIN_PROVIDERS.contains(&p) {
                return Err(SecretError::UnsupportedProvider {
                    provider: r.provider.clone(),
                    uri: value.to_owned(),
                });
            }
        }
        Ok(parsed)
    }

    /// Fetches one reference, without a deadline.
    pub async fn resolve_ref(&self, r: &SecretRef) -> Result<SecretString, SecretError> {
        match self.providers.get(&r.provider) {
            Some(p) => p.resolve(r).await,
            None if BUILTIN_PROVIDERS.contains(&r.provider.as_str()) => {
                Err(SecretError::ProviderNotAvailable {
                    provider: r.provider.clone(),
                    uri: r.uri(),
                })
            }
            None => Err(SecretError::UnsupportedProvider {
                provider: r.provider.clone(),
                uri: r.uri(),
            }),
        }
    }

    async fn resolve_ref_until(
        &self,
        r: &SecretRef,
        deadline: tokio::time::Instant,
        timeout: Duration,
    ) -> Result<SecretString, SecretError> {
        match tokio::time::timeout_at(deadline, self.resolve_ref(r)).await {
            Ok(res) => res,
            Err(_) => Err(SecretError::Timeout {
                uri: r.uri(),
                ms: timeout.as_millis(),
            }),
        }
    }

    /// Resolves one value: a plain value comes back as is (wrapped), a
    /// `secret://` reference is fetched within the resolver's deadline.
    pub async fn resolve(&self, value: &str) -> Result<SecretString, SecretError> {
        match self.parse(value)? {
            None if has_env_refs(value) => {
                let sub = substitute_env_refs(value, &self.env)?;
                if let Some(red) = &self.redactor {
                    for (name, v) in &sub.vars {
                        if looks_like_credential_key(name) {
                            red.register(v);
                        }
                    }
                }
                Ok(sub.value)
            }
            None => Ok(SecretString::from(value)),
            Some(r) => {
                let deadline = tokio::time::Instant::now() + self.timeout;
                let v = self.resolve_ref_until(&r, deadline, self.timeout).await?;
                if let Some(red) = &self.redactor {
                    red.register(&v);
                }
                Ok(v)
            }
        }
    }

    /// [`Self::resolve_all_with_timeout`] with the resolver's deadline.
    pub async fn resolve_all(
        &self,
        entries: &[(String, String)],
    ) -> Result<Vec<(String, SecretString)>, SecretError> {
        self.resolve_all_with_timeout(entries, self.timeout).await
    }

    /// Resolves every value of `entries` (an `env` or `headers` map), keys and
    /// order kept.
    ///
    /// - Every value is parsed first; the first invalid one (in entry order)
    ///   fails the call before anything is fetched. Plain values get their
    ///   `${VAR}` references substituted in this step (a missing variable
    ///   fails the call the same way).
    /// - Each distinct URI is fetched once, all of them concurrently.
    /// - Any failure fails the whole call (the first failure observed).
    /// - The whole call is bounded by `timeout`; on expiry the error names a
    ///   reference that was still pending: `Timed out resolving <uri> after <n> ms`.
    pub async fn resolve_all_with_timeout(
        &self,
        entries: &[(String, String)],
        timeout: Duration,
    ) -> Result<Vec<(String, SecretString)>, SecretError> {
        let mut unique: Vec<SecretRef> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut slots: Vec<Slot<'_>> = Vec::with_capacity(entries.len());
        let mut var_values: Vec<SecretString> = Vec::new();
        for (key, value) in entries {
            match self.parse(value)? {
                None if has_env_refs(value) => {
                    let sub = substitute_env_refs(value, &self.env)?;
                    let key_is_credential = looks_like_credential_key(key);
                    for (name, v) in sub.vars {
                        if key_is_credential || looks_like_credential_key(&name) {
                            var_values.push(v);
                        }
                    }
                    slots.push(Slot::Substituted(sub.value));
                }
                None => slots.push(Slot::Plain(value)),
                Some(r) => {
                    let i = *index.entry(value.as_str()).or_insert_with(|| {
                        unique.push(r);
                        unique.len() - 1
                    });
                    slots.push(Slot::Ref(i));
                }
            }
        }

        let deadline = tokio::time::Instant::now() + timeout;
        let fetched: Vec<SecretString> = futures::future::try_join_all(
            unique
                .iter()
                .map(|r| self.resolve_ref_until(r, deadline, timeout)),
        )
        .await?;

        if let Some(red) = &self.redactor {
            for v in fetched.iter().chain(&var_values) {
                red.register(v);
            }
        }

        Ok(entries
            .iter()
            .zip(slots)
            .map(|((key, _), slot)| {
                let value = match slot {
                    Slot::Plain(v) => SecretString::from(v),
                    Slot::Ref(i) => fetched[i].clone(),
                    Slot::Substituted(v) => v,
                };
                (key.clone(), value)
            })
            .collect())
    }
}

#[cfg(test)]
mod for_env_tests {
    use super::*;

    #[test]
    fn starts_that_see_the_same_environment_share_one_resolver() {
        let base = Arc::new(SecretResolver::with_default_providers());
        let vars = || EnvSource::fixed([("A", "1"), ("HOME", "/h")]);
        let first = base.for_env(vars());
        // Equal variables in a new map (each start reads process.env afresh): the same one.
        assert!(Arc::ptr_eq(&first, &base.for_env(vars())));
        // Other variables: a new one, which is then the one kept.
        let other = base.for_env(EnvSource::fixed([("A", "2")]));
        assert!(!Arc::ptr_eq(&first, &other));
        assert!(Arc::ptr_eq(
            &other,
            &base.for_env(EnvSource::fixed([("A", "2")]))
        ));
        // No view of its own: the base itself.
        assert!(Arc::ptr_eq(&base, &base.for_env(EnvSource::Process)));
    }
}
