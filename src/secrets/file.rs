//! `secret://file/<path>[#<field>]`: a whole file, or one `KEY=VALUE` line of it.

use std::path::{Path, PathBuf};

use secrecy::SecretString;
use secrecy::zeroize::Zeroizing;

use super::{SecretError, SecretFuture, SecretProvider, SecretRef};

/// Reads files on Tokio's blocking pool (so it needs a Tokio runtime; no `fs`
/// feature required).
///
/// - `~` and `~/…` expand to the home directory (`$HOME` read at resolve time,
///   unless [`FileProvider::with_home`] fixed one); `~user` is not expanded.
/// - Without a field: the content with trailing whitespace trimmed.
/// - With a field: the content parsed as `.env` lines (see [`dotenv_lookup`]).
///
/// The raw file bytes are held in a zeroize-on-drop buffer.
#[derive(Debug, Clone, Default)]
pub struct FileProvider {
    home: Option<PathBuf>,
}

impl FileProvider {
    pub fn new() -> Self {
        Self::default()
    }

    /// Uses `home` for `~` instead of `$HOME`.
    pub fn with_home(home: impl Into<PathBuf>) -> Self {
        Self {
            home: Some(home.into()),
        }
    }

    fn expand(&self, path: &str) -> PathBuf {
        let rest = if path == "~" {
            Some("")
        } else {
            path.strip_prefix("~/")
        };
        let home = || {
            self.home
                .clone()
                .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
        };
        match rest.and_then(|r| home().map(|h| (h, r))) {
            Some((h, "")) => h,
            Some((h, r)) => h.join(r),
            None => PathBuf::from(path),
        }
    }
}

/// Looks `field` up in `.env`-style text: `KEY=VALUE` lines; blank lines and
/// lines starting with `#` are skipped; an optional `export ` prefix is allowed;
/// key and value are trimmed; one pair of matching surrounding `"` or `'` is
/// stripped from the value (no escape processing, no inline comments: a `#`
/// inside a value is part of it); lines without `=` or with an empty key are
/// ignored; the last duplicate wins.
pub fn dotenv_lookup<'a>(text: &'a str, field: &str) -> Option<&'a str> {
    let mut found = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line
            .strip_prefix("export ")
            .map(str::trim_start)
            .unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if key.is_empty() || key != field {
            continue;
        }
        found = Some(unquote(value.trim()));
    }
    found
}

fn unquote(v: &str) -> &str {
    let b = v.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        &v[1..v.len() - 1]
    } else {
        v
    }
}

fn display(p: &Path) -> String {
    p.display().to_string()
}

impl SecretProvider for FileProvider {
    fn name(&self) -> &str {
        "file"
    }

    fn resolve<'a>(&'a self, r: &'a SecretRef) -> SecretFuture<'a> {
        Box::pin(async move {
            let path = self.expand(&r.path);
            let shown = display(&path);
            let read_path = path.clone();
            let read =
                tokio::task::spawn_blocking(move || std::fs::read(read_path).map(Zeroizing::new))
                    .await
                    .unwrap_or_else(|_| Err(std::io::Error::other("the read task failed")));
            let bytes = match read {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(SecretError::FileNotFound {
                        path: shown,
                        uri: r.uri(),
                    });
                }
                Err(e) => {
                    return Err(SecretError::FileRead {
                        path: shown,
                        uri: r.uri(),
                        reason: e.to_string(),
                    });
                }
            };
            let Ok(text) = std::str::from_utf8(&bytes) else {
                return Err(SecretError::FileRead {
                    path: shown,
                    uri: r.uri(),
                    reason: "not valid UTF-8".to_owned(),
                });
            };
            match &r.field {
                None => Ok(SecretString::from(text.trim_end())),
                Some(field) => match dotenv_lookup(text, field) {
                    Some(v) => Ok(SecretString::from(v)),
                    None => Err(SecretError::FieldNotFound {
                        field: field.clone(),
                        path: shown,
                        uri: r.uri(),
                    }),
                },
            }
        })
    }
}
