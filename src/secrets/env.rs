//! `secret://env/<NAME>`: a variable of the host process environment.

use secrecy::SecretString;

use super::{EnvSource, SecretError, SecretFuture, SecretProvider, SecretRef};

/// Reads `std::env::var_os(path)`. A `#field` is ignored, as in the original.
/// An empty value is accepted (compat).
#[derive(Debug, Clone, Copy, Default)]
pub struct EnvProvider;

impl SecretProvider for EnvProvider {
    fn name(&self) -> &str {
        "env"
    }

    fn resolve<'a>(&'a self, r: &'a SecretRef) -> SecretFuture<'a> {
        Box::pin(async move {
            let name = r.path.as_str();
            match std::env::var_os(name) {
                None => Err(SecretError::EnvNotSet {
                    name: name.to_owned(),
                    uri: r.uri(),
                }),
                Some(os) => match os.into_string() {
                    Ok(s) => Ok(SecretString::from(s)),
                    // The rejected OsString is dropped here, never formatted.
                    Err(_) => Err(SecretError::EnvNotUnicode {
                        name: name.to_owned(),
                        uri: r.uri(),
                    }),
                },
            }
        })
    }
}

/// `secret://env/<NAME>` read from an [`EnvSource`] (the resolver built by
/// [`crate::secrets::SecretResolver::with_default_providers_in`] uses it, so a
/// fixed environment applies to every provider alike).
#[derive(Debug, Clone, Default)]
pub(crate) struct EnvSourceProvider(pub EnvSource);

impl SecretProvider for EnvSourceProvider {
    fn name(&self) -> &str {
        "env"
    }

    fn resolve<'a>(&'a self, r: &'a SecretRef) -> SecretFuture<'a> {
        Box::pin(async move {
            if let EnvSource::Process = self.0 {
                return EnvProvider.resolve(r).await;
            }
            match self.0.get(&r.path) {
                Some(v) => Ok(SecretString::from(v)),
                None => Err(SecretError::EnvNotSet {
                    name: r.path.clone(),
                    uri: r.uri(),
                }),
            }
        })
    }
}
