//! `secret://file/<path>[#<field>]`: a whole file, or one `KEY=VALUE` line of it.
//!
//! `secret://file/@<provider>#<id>` (the canonical form of an OpenClaw
//! `{ source: "file", provider, id }` SecretRef) reads through the
//! `secrets.providers.<provider>` definition instead: `mode: "json"` (the
//! default) takes the string at the JSON pointer `<id>` of the file;
//! `mode: "singleValue"` takes the whole file (trailing whitespace trimmed)
//! and requires the id `value`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    definitions: Arc<BTreeMap<String, FileDefinition>>,
}

/// How an OpenClaw file provider's file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileMode {
    /// A JSON document; ids are JSON pointers (`/a/b`).
    #[default]
    Json,
    /// The whole file is the value; the id must be `value`.
    SingleValue,
}

/// Default `maxBytes` of a file provider definition.
pub const DEFAULT_FILE_MAX_BYTES: usize = 1 << 20;

/// One `secrets.providers.<name>` entry with `source: "file"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDefinition {
    /// `~` is expanded.
    pub path: String,
    pub mode: FileMode,
    pub max_bytes: usize,
}

impl FileDefinition {
    pub fn new(path: impl Into<String>, mode: FileMode) -> Self {
        Self {
            path: path.into(),
            mode,
            max_bytes: DEFAULT_FILE_MAX_BYTES,
        }
    }
}

/// `^[a-z][a-z0-9_-]{0,63}$`: an OpenClaw provider alias.
pub(crate) fn is_provider_alias(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'_' | b'-'))
}

impl FileProvider {
    pub fn new() -> Self {
        Self::default()
    }

    /// Uses `home` for `~` instead of `$HOME`.
    pub fn with_home(home: impl Into<PathBuf>) -> Self {
        Self {
            home: Some(home.into()),
            ..Self::default()
        }
    }

    /// Adds OpenClaw file-provider definitions (`secret://file/@<name>#<id>`).
    pub fn with_definitions(mut self, defs: BTreeMap<String, FileDefinition>) -> Self {
        self.definitions = Arc::new(defs);
        self
    }

    async fn resolve_alias(&self, r: &SecretRef, alias: &str) -> Result<SecretString, SecretError> {
        let fail = |cause: String| SecretError::cannot_resolve(r, cause);
        let Some(def) = self.definitions.get(alias) else {
            return Err(fail(format!(
                "no file provider '{alias}' is defined (secrets.providers.{alias} with source \"file\")"
            )));
        };
        let id = r.field.as_deref().unwrap_or_default();
        let path = self.expand(&def.path);
        let shown = display(&path);
        let max = def.max_bytes;
        let read_path = path.clone();
        let read = tokio::task::spawn_blocking(move || -> std::io::Result<Zeroizing<Vec<u8>>> {
            use std::io::Read as _;
            let f = std::fs::File::open(read_path)?;
            let mut buf = Zeroizing::new(Vec::with_capacity(max.min(64 * 1024) + 1));
            // Read at most max + 1 bytes, growing without leaving unzeroised copies.
            let mut limited = f.take(max as u64 + 1);
            let mut chunk = Zeroizing::new([0u8; 8192]);
            loop {
                let n = limited.read(&mut chunk[..])?;
                if n == 0 {
                    break;
                }
                if buf.capacity() < buf.len() + n {
                    let mut bigger = Zeroizing::new(Vec::with_capacity((buf.len() + n) * 2));
                    bigger.extend_from_slice(&buf);
                    buf = bigger;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            Ok(buf)
        })
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
            Err(e) => return Err(fail(format!("cannot read {shown}: {e}"))),
        };
        if bytes.len() > max {
            return Err(fail(format!(
                "{shown} is larger than {max} bytes (maxBytes)"
            )));
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return Err(fail(format!("{shown} is not valid UTF-8")));
        };
        match def.mode {
            FileMode::SingleValue => {
                if id != "value" {
                    return Err(fail(format!(
                        "file provider '{alias}' is singleValue: the id must be 'value'"
                    )));
                }
                Ok(SecretString::from(text.trim_end()))
            }
            FileMode::Json => {
                if !id.starts_with('/') {
                    return Err(fail(format!(
                        "the id must be a JSON pointer starting with '/' (file provider '{alias}')"
                    )));
                }
                let doc: serde_json::Value = serde_json::from_str(text)
                    .map_err(|_| fail(format!("{shown} is not valid JSON")))?;
                match doc.pointer(id) {
                    Some(serde_json::Value::String(s)) => Ok(SecretString::from(s.as_str())),
                    Some(_) => Err(fail(format!(
                        "the value at {id} in {shown} is not a string"
                    ))),
                    None => Err(SecretError::FieldNotFound {
                        field: id.to_owned(),
                        path: shown,
                        uri: r.uri(),
                    }),
                }
            }
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
            if let Some(alias) = r.path.strip_prefix('@')
                && is_provider_alias(alias)
            {
                return self.resolve_alias(r, alias).await;
            }
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
