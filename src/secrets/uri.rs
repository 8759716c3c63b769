//! `secret://<provider>/<path>[#<field>]` references.

use std::fmt;

use super::SecretError;

/// The scheme prefix that marks a value as a reference.
pub const SECRET_SCHEME: &str = "secret://";

/// Provider names this crate knows and implements: `env`, `file`, `gcp`,
/// `aws`, `vault` (the design's), and `exec` (the canonical form of OpenClaw's
/// exec SecretRefs, `secret://exec/<provider>#<id>`).
pub const BUILTIN_PROVIDERS: &[&str] = &["env", "file", "gcp", "aws", "vault", "exec"];

/// A parsed reference. It holds no secret: `Debug`/`Display` are safe to log.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SecretRef {
    pub provider: String,
    pub path: String,
    /// The part after the LAST `#`, if any (may be empty).
    pub field: Option<String>,
}

impl SecretRef {
    /// The URI this reference was parsed from (parsing round-trips exactly).
    pub fn uri(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for SecretRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SECRET_SCHEME}{}/{}", self.provider, self.path)?;
        if let Some(field) = &self.field {
            write!(f, "#{field}")?;
        }
        Ok(())
    }
}

/// Whether `v` is a `secret://` reference (as opposed to a plain value).
pub fn is_secret_uri(v: &str) -> bool {
    v.starts_with(SECRET_SCHEME)
}

/// Syntax only: any provider name is accepted.
pub(crate) fn parse_syntax(v: &str) -> Result<Option<SecretRef>, SecretError> {
    let Some(rest) = v.strip_prefix(SECRET_SCHEME) else {
        return Ok(None);
    };
    let invalid = || SecretError::InvalidUri { uri: v.to_owned() };
    let (provider, remainder) = rest.split_once('/').ok_or_else(invalid)?;
    let (path, field) = match remainder.rfind('#') {
        Some(i) => (&remainder[..i], Some(remainder[i + 1..].to_owned())),
        None => (remainder, None),
    };
    if path.is_empty() {
        return Err(invalid());
    }
    Ok(Some(SecretRef {
        provider: provider.to_owned(),
        path: path.to_owned(),
        field,
    }))
}

/// Parses a value. `Ok(None)`: not a `secret://` value (a plain value, used as
/// is). Errors: `Invalid secret URI: <v> (missing path)` when there is no
/// `/<path>`, `Unsupported secret provider '<p>' in URI: <v>` when `<p>` is not
/// one of [`BUILTIN_PROVIDERS`] (a [`crate::secrets::SecretResolver`] also
/// accepts the names of providers registered on it, see
/// [`crate::secrets::SecretResolver::parse`]).
pub fn parse_secret_uri(v: &str) -> Result<Option<SecretRef>, SecretError> {
    let parsed = parse_syntax(v)?;
    if let Some(r) = &parsed
        && !BUILTIN_PROVIDERS.contains(&r.provider.as_str())
    {
        return Err(SecretError::UnsupportedProvider {
            provider: r.provider.clone(),
            uri: v.to_owned(),
        });
    }
    Ok(parsed)
}
