//! `secret://` references in `env` and `headers`: parsing, resolution through
//! pluggable providers, the plaintext-credential warning, and the redactor
//! that keeps resolved values out of text leaving the process.
//!
//! Resolved values are held as [`secrecy::SecretString`] and never appear in an
//! error or a `Debug` output; errors name the reference instead.

mod env;
mod error;
mod file;
mod plaintext;
mod provider;
mod redact;
mod uri;

pub use env::EnvProvider;
pub use error::SecretError;
pub use file::{FileProvider, dotenv_lookup};
pub use plaintext::{looks_like_credential_key, plaintext_credential_warnings};
pub use provider::{DEFAULT_RESOLVE_TIMEOUT, SecretFuture, SecretProvider, SecretResolver};
pub use redact::{MIN_REDACT_LEN, REDACTED, Redactor};
pub use uri::{BUILTIN_PROVIDERS, SECRET_SCHEME, SecretRef, is_secret_uri, parse_secret_uri};

/// Re-exported so callers need not depend on `secrecy` directly.
pub use secrecy::{ExposeSecret, SecretString};
