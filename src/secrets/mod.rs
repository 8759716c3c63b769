//! `secret://` references in `env` and `headers`: parsing, resolution through
//! pluggable providers, OpenClaw's `${VAR}` and SecretRef forms, the
//! plaintext-credential warning, and the redactor that keeps resolved values
//! out of text leaving the process.
//!
//! Resolved values are held as [`secrecy::SecretString`] and never appear in an
//! error or a `Debug` output; errors name the reference instead. Providers:
//! `env`, `file` (this crate's originals), `aws`, `gcp`, `vault` (network
//! backends, one file each), `exec` (OpenClaw's exec protocol). See
//! `docs/secrets.md`.

pub mod aws;
mod env;
mod error;
mod exec;
mod file;
pub mod gcp;
mod openclaw;
mod plaintext;
mod provider;
mod record;
mod redact;
mod support;
mod template;
mod uri;
mod vault;

pub use aws::{AwsCredentials, AwsProvider};
pub use env::EnvProvider;
pub use error::SecretError;
pub use exec::{DEFAULT_EXEC_MAX_OUTPUT, DEFAULT_EXEC_TIMEOUT, ExecDefinition, ExecProvider};
pub use file::{DEFAULT_FILE_MAX_BYTES, FileDefinition, FileMode, FileProvider, dotenv_lookup};
pub use gcp::GcpProvider;
pub use openclaw::{ProviderDefinitions, is_secret_ref_object, secret_ref_to_uri};
pub use plaintext::{looks_like_credential_key, plaintext_credential_warnings};
pub use provider::{DEFAULT_RESOLVE_TIMEOUT, SecretFuture, SecretProvider, SecretResolver};
pub use record::{record_entries, resolve_record, resolve_value, secret_value};
pub use redact::{MIN_REDACT_LEN, REDACTED, Redactor};
pub use support::EnvSource;
pub use template::{Substituted, has_env_refs, substitute_env_refs};
pub use uri::{BUILTIN_PROVIDERS, SECRET_SCHEME, SecretRef, is_secret_uri, parse_secret_uri};
pub use vault::VaultProvider;

/// Re-exported so callers need not depend on `secrecy` directly.
pub use secrecy::{ExposeSecret, SecretString};
