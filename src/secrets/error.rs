//! The error type of secret parsing and resolution.
//!
//! Every variant names the reference (the `secret://` URI, a path, a field or a
//! variable name), never a resolved value: a URI is a reference and safe to print.

/// A failed parse or resolution. `Display` gives the contract's exact messages;
/// [`SecretError::uri`] says which reference failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// `secret://<provider>` without a `/<path>` (or with an empty path).
    #[error("Invalid secret URI: {uri} (missing path)")]
    InvalidUri { uri: String },
    /// A provider name that is neither built in nor registered.
    #[error("Unsupported secret provider '{provider}' in URI: {uri}")]
    UnsupportedProvider { provider: String, uri: String },
    /// A known provider (`gcp`, `aws`, `vault`, …) with no implementation registered.
    #[error(
        "Secret provider '{provider}' is not available in this build yet (secret://{provider}/...)"
    )]
    ProviderNotAvailable { provider: String, uri: String },
    /// `secret://env/NAME` with `NAME` unset.
    #[error("Environment variable '{name}' not set (from secret://env/{name})")]
    EnvNotSet { name: String, uri: String },
    /// `secret://env/NAME` whose value is not valid Unicode.
    #[error("Environment variable '{name}' is not valid Unicode (from secret://env/{name})")]
    EnvNotUnicode { name: String, uri: String },
    /// `secret://file/PATH` with no such file. `path` is after `~` expansion.
    #[error("File not found: {path}")]
    FileNotFound { path: String, uri: String },
    /// `secret://file/PATH#FIELD` with no `FIELD=` line.
    #[error("Field '{field}' not found in {path}")]
    FieldNotFound {
        field: String,
        path: String,
        uri: String,
    },
    /// The file exists but could not be read (permissions, a directory, not UTF-8).
    /// `reason` never contains file content.
    #[error("Cannot read {path}: {reason}")]
    FileRead {
        path: String,
        uri: String,
        reason: String,
    },
    /// `${NAME}` inside a plain value with `NAME` unset or empty. `uri` is `${NAME}`.
    #[error(
        "Environment variable '{name}' {} (from ${{{name}}})",
        if *empty { "is empty" } else { "not set" }
    )]
    VarNotSet {
        name: String,
        uri: String,
        empty: bool,
    },
    /// Resolution did not finish within the resolver's deadline.
    #[error("Timed out resolving {uri} after {ms} ms")]
    Timeout { uri: String, ms: u128 },
    /// Any other failure reported by a provider. Providers must keep values out
    /// of `message`.
    #[error("{message}")]
    Provider {
        provider: String,
        uri: String,
        message: String,
    },
}

impl SecretError {
    /// The `secret://` reference (or the raw value, for [`SecretError::InvalidUri`])
    /// that failed.
    pub fn uri(&self) -> &str {
        match self {
            Self::InvalidUri { uri }
            | Self::UnsupportedProvider { uri, .. }
            | Self::ProviderNotAvailable { uri, .. }
            | Self::EnvNotSet { uri, .. }
            | Self::EnvNotUnicode { uri, .. }
            | Self::FileNotFound { uri, .. }
            | Self::FieldNotFound { uri, .. }
            | Self::FileRead { uri, .. }
            | Self::VarNotSet { uri, .. }
            | Self::Timeout { uri, .. }
            | Self::Provider { uri, .. } => uri,
        }
    }

    /// A provider-specific failure for `r`, shown as given.
    pub fn provider(r: &crate::secrets::SecretRef, message: impl Into<String>) -> Self {
        Self::Provider {
            provider: r.provider.clone(),
            uri: r.uri(),
            message: message.into(),
        }
    }

    /// A provider-specific failure for `r`, shown as
    /// `Cannot resolve <uri>: <cause>`. `cause` must hold no value and no
    /// response body.
    pub fn cannot_resolve(r: &crate::secrets::SecretRef, cause: impl std::fmt::Display) -> Self {
        let uri = r.uri();
        Self::Provider {
            provider: r.provider.clone(),
            message: format!("Cannot resolve {uri}: {cause}"),
            uri,
        }
    }
}
