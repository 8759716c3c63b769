//! Where OAuth tokens live between starts: a store of opaque text values under a key made of the
//! authorization server's issuer and the protected resource (never a server's name alone, so a
//! renamed or re-pointed server never picks up another resource's tokens). Three stores: the
//! host's own (`oauth.store`, through hooks), a directory of files (`oauth.dir`), and memory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use secrecy::SecretString;

use crate::hooks::Hook;
use crate::secrets::Redactor;

/// A store of text values by key. Errors are plain text for the user (never a value).
pub trait TokenStore: Send + Sync {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<String>, String>>;
    fn set<'a>(&'a self, key: &'a str, value: String) -> BoxFuture<'a, Result<(), String>>;
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), String>>;
}

/// The key of one resource's tokens at one authorization server: `"<issuer> <resource>"`
/// (neither holds a space).
pub fn store_key(issuer: &str, resource: &str) -> String {
    format!("{issuer} {resource}")
}

/// Tokens for the life of the process (the default when the host names no store).
#[derive(Default)]
pub struct MemoryStore(Mutex<HashMap<String, String>>);

impl TokenStore for MemoryStore {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<String>, String>> {
        let value = self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned();
        Box::pin(async move { Ok(value) })
    }
    fn set<'a>(&'a self, key: &'a str, value: String) -> BoxFuture<'a, Result<(), String>> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.to_owned(), value);
        Box::pin(async { Ok(()) })
    }
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), String>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
        Box::pin(async { Ok(()) })
    }
}

/// One file per key in a directory the host names: the file's name is the SHA-256 of the key
/// (a URL makes a poor file name), mode 0600, replaced atomically; the directory is created
/// with mode 0700.
pub struct FileStore {
    dir: PathBuf,
}

impl FileStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &str) -> PathBuf {
        let name = crate::digest::sha256_hex(key.as_bytes());
        self.dir.join(format!("{name}.json"))
    }

    fn ensure_dir(&self) -> std::io::Result<()> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        builder.create(&self.dir)
    }

    fn failed(&self, what: &str, error: std::io::Error) -> String {
        format!(
            "the OAuth token store {} could not be {what}: {error}",
            self.dir.display()
        )
    }
}

impl TokenStore for FileStore {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            let path = self.path(key);
            match tokio::fs::read_to_string(&path).await {
                Ok(text) => Ok(Some(text)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(self.failed("read", e)),
            }
        })
    }
    fn set<'a>(&'a self, key: &'a str, value: String) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let path = self.path(key);
            let this = self.dir.clone();
            tokio::task::spawn_blocking(move || {
                FileStore { dir: this }.ensure_dir()?;
                crate::atomic_file::write(&path, value.as_bytes())
            })
            .await
            .map_err(|e| format!("the OAuth token store could not be written: {e}"))?
            .map_err(|e| self.failed("written", e))
        })
    }
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            match tokio::fs::remove_file(self.path(key)).await {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(self.failed("cleared", e)),
            }
        })
    }
}

/// The host's store: `get(key)`, `set(key, value)`, `delete(key)` (each hook takes JSON text
/// `{ "request": key }`, or `{ "request": [key, value] }` for `set`).
pub struct HookStore {
    pub get: Hook,
    pub set: Hook,
    pub delete: Hook,
}

impl TokenStore for HookStore {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            let answer = (self.get)(crate::hooks::callback_argument(None, key))
                .await
                .map_err(|e| format!("oauth.store.get failed: {e}"))?;
            match answer.map(|text| serde_json::from_str::<serde_json::Value>(&text)) {
                None | Some(Ok(serde_json::Value::Null)) => Ok(None),
                Some(Ok(serde_json::Value::String(value))) => Ok(Some(value)),
                Some(_) => Err("oauth.store.get must return a string, null or undefined".into()),
            }
        })
    }
    fn set<'a>(&'a self, key: &'a str, value: String) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            (self.set)(crate::hooks::callback_argument(None, (key, value)))
                .await
                .map(drop)
                .map_err(|e| format!("oauth.store.set failed: {e}"))
        })
    }
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            (self.delete)(crate::hooks::callback_argument(None, key))
                .await
                .map(drop)
                .map_err(|e| format!("oauth.store.delete failed: {e}"))
        })
    }
}

/// rmcp's credential store for one key of a [`TokenStore`]. Every token it loads or saves is
/// registered with the redactor first, so no log line or result can show it.
pub(super) struct KeyedStore {
    pub store: Arc<dyn TokenStore>,
    pub key: String,
    pub redactor: Redactor,
}

impl KeyedStore {
    fn register(&self, credentials: &StoredCredentials) {
        use oauth2::TokenResponse;
        if let Some(tokens) = &credentials.token_response {
            self.redactor
                .register(&SecretString::from(tokens.access_token().secret().clone()));
            if let Some(refresh) = tokens.refresh_token() {
                self.redactor
                    .register(&SecretString::from(refresh.secret().clone()));
            }
        }
    }
}

fn store_error(text: String) -> AuthError {
    AuthError::CredentialStoreError(text)
}

#[async_trait::async_trait]
impl CredentialStore for KeyedStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let Some(text) = self.store.get(&self.key).await.map_err(store_error)? else {
            return Ok(None);
        };
        // A value this client cannot read is treated as no value: the user signs in again.
        let Ok(credentials) = serde_json::from_str::<StoredCredentials>(&text) else {
            return Ok(None);
        };
        self.register(&credentials);
        Ok(Some(credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.register(&credentials);
        let text = serde_json::to_string(&credentials)
            .map_err(|e| store_error(format!("the tokens could not be encoded: {e}")))?;
        self.store.set(&self.key, text).await.map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.store.delete(&self.key).await.map_err(store_error)
    }
}
