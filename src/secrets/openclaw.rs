//! Current OpenClaw's reference forms: SecretRef objects
//! (`{ source, provider, id }`) and the `secrets.providers` definitions that
//! back them.
//!
//! A SecretRef object in an `env`/`headers` value is turned into a canonical
//! `secret://` string at validation time (see [`secret_ref_to_uri`]):
//!
//! | SecretRef | canonical string |
//! |---|---|
//! | `{ source: "env", provider?, id }` | `secret://env/<id>` |
//! | `{ source: "file", provider, id }` | `secret://file/@<provider>#<id>` |
//! | `{ source: "exec", provider, id }` | `secret://exec/<provider>#<id>` |
//!
//! Grammar (OpenClaw's): `provider` `^[a-z][a-z0-9_-]{0,63}$` (optional for
//! `env`, default `default`, and otherwise unused: env refs always read the
//! host environment); env ids `^[A-Z][A-Z0-9_]{0,127}$`; file ids an absolute
//! JSON pointer (`/…`) or `value` (singleValue providers), without `#`; exec
//! ids `^[A-Za-z0-9][A-Za-z0-9._:/-]{0,255}$`. `source: "store"` is not
//! supported.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value};

use super::exec::{DEFAULT_EXEC_MAX_OUTPUT, DEFAULT_EXEC_TIMEOUT, ExecDefinition};
use super::file::{DEFAULT_FILE_MAX_BYTES, FileDefinition, FileMode, is_provider_alias};

fn is_env_id(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && b[0].is_ascii_uppercase()
        && b.iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == b'_')
}

fn is_exec_id(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 256
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b':' | b'/' | b'-'))
}

fn is_file_id(s: &str) -> bool {
    (s == "value" || s.starts_with('/')) && !s.contains('#') && s.len() <= 1024
}

/// Whether `v` is shaped like a SecretRef object (an object with a `source` key).
pub fn is_secret_ref_object(v: &Value) -> bool {
    v.as_object().is_some_and(|o| o.contains_key("source"))
}

/// The canonical `secret://` string for a SecretRef object (see the module
/// docs), or a message saying what is wrong with it (no value is quoted but
/// the short, grammar-checked `source`/`provider`/`id`).
pub fn secret_ref_to_uri(obj: &Map<String, Value>) -> Result<String, String> {
    for key in obj.keys() {
        if !matches!(key.as_str(), "source" | "provider" | "id") {
            return Err(format!(
                "Invalid SecretRef: unrecognized key '{}' (expected source, provider, id)",
                super::support::truncate_chars(key, 40)
            ));
        }
    }
    let text = |k: &str| -> Result<Option<&str>, String> {
        match obj.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(format!("Invalid SecretRef: '{k}' must be a string")),
        }
    };
    let source = text("source")?.ok_or("Invalid SecretRef: 'source' is required")?;
    let provider = text("provider")?;
    let id = text("id")?.ok_or("Invalid SecretRef: 'id' is required")?;
    if let Some(p) = provider
        && !is_provider_alias(p)
    {
        return Err("Invalid SecretRef: 'provider' must match ^[a-z][a-z0-9_-]{0,63}$".to_owned());
    }
    let need_provider = || {
        provider.ok_or_else(|| {
            format!("Invalid SecretRef: source '{source}' needs a 'provider' (a secrets.providers entry)")
        })
    };
    match source {
        "env" => {
            if !is_env_id(id) {
                return Err(
                    "Invalid SecretRef: an env id must match ^[A-Z][A-Z0-9_]{0,127}$".to_owned(),
                );
            }
            Ok(format!("secret://env/{id}"))
        }
        "file" => {
            let p = need_provider()?;
            if !is_file_id(id) {
                return Err(
                    "Invalid SecretRef: a file id must be a JSON pointer ('/…', no '#') or 'value'"
                        .to_owned(),
                );
            }
            Ok(format!("secret://file/@{p}#{id}"))
        }
        "exec" => {
            let p = need_provider()?;
            if !is_exec_id(id) {
                return Err(
                    "Invalid SecretRef: an exec id must match ^[A-Za-z0-9][A-Za-z0-9._:/-]{0,255}$"
                        .to_owned(),
                );
            }
            Ok(format!("secret://exec/{p}#{id}"))
        }
        "store" => Err("Invalid SecretRef: source 'store' is not supported here".to_owned()),
        other => Err(format!(
            "Invalid SecretRef: source '{}' is not one of env, file, exec",
            super::support::truncate_chars(other, 40)
        )),
    }
}

/// The `secrets.providers` section of an `openclaw.json`: the definitions
/// that `file` and `exec` SecretRefs name. `env` entries are accepted and
/// ignored (env refs always read the host environment).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderDefinitions {
    pub exec: BTreeMap<String, ExecDefinition>,
    pub file: BTreeMap<String, FileDefinition>,
}

fn millis(path: &str, v: &Value, max: u64) -> Result<Duration, String> {
    match v.as_f64() {
        Some(f) if f.is_finite() && f > 0.0 && f <= max as f64 => {
            Ok(Duration::from_millis(f.ceil() as u64))
        }
        _ => Err(format!(
            "{path}: Must be a positive number of milliseconds, at most {max}"
        )),
    }
}

fn bytes(path: &str, v: &Value) -> Result<usize, String> {
    match v.as_u64() {
        Some(n) if n > 0 && n <= 64 << 20 => Ok(n as usize),
        _ => Err(format!(
            "{path}: Must be a positive integer, at most {}",
            64 << 20
        )),
    }
}

fn strings(path: &str, v: &Value) -> Result<Vec<String>, String> {
    let arr = v
        .as_array()
        .ok_or_else(|| format!("{path}: Expected array"))?;
    arr.iter()
        .enumerate()
        .map(|(i, s)| {
            s.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{path}.{i}: Expected string"))
        })
        .collect()
}

impl ProviderDefinitions {
    /// Reads `secrets.providers` of an `openclaw.json` root; empty when absent.
    pub fn from_openclaw_json(root: &Value) -> Result<Self, String> {
        match root.get("secrets").and_then(|s| s.get("providers")) {
            None | Some(Value::Null) => Ok(Self::default()),
            Some(p) => Self::from_providers(p),
        }
    }

    /// Reads a `secrets.providers` object (`{ <alias>: { source, … } }`).
    /// Errors are path-qualified (`secrets.providers.<alias>.<key>: …`).
    pub fn from_providers(providers: &Value) -> Result<Self, String> {
        let map = providers
            .as_object()
            .ok_or("secrets.providers: Expected object")?;
        let mut out = Self::default();
        for (alias, def) in map {
            let base = format!("secrets.providers.{alias}");
            if !is_provider_alias(alias) {
                return Err(format!(
                    "{base}: provider names must match ^[a-z][a-z0-9_-]{{0,63}}$"
                ));
            }
            let obj = def
                .as_object()
                .ok_or_else(|| format!("{base}: Expected object"))?;
            let source = obj
                .get("source")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{base}.source: Expected string"))?;
            match source {
                "exec" => {
                    let command = obj
                        .get("command")
                        .and_then(Value::as_str)
                        .filter(|c| !c.is_empty())
                        .ok_or_else(|| format!("{base}.command: Expected a non-empty string"))?;
                    let mut d = ExecDefinition::new(command);
                    if let Some(a) = obj.get("args") {
                        d.args = strings(&format!("{base}.args"), a)?;
                    }
                    d.timeout = match obj.get("timeoutMs") {
                        Some(t) => millis(&format!("{base}.timeoutMs"), t, 600_000)?,
                        None => DEFAULT_EXEC_TIMEOUT,
                    };
                    d.max_output_bytes = match obj.get("maxOutputBytes") {
                        Some(b) => bytes(&format!("{base}.maxOutputBytes"), b)?,
                        None => DEFAULT_EXEC_MAX_OUTPUT,
                    };
                    if let Some(p) = obj.get("passEnv") {
                        d.pass_env = Some(strings(&format!("{base}.passEnv"), p)?);
                    }
                    if let Some(e) = obj.get("env") {
                        let m = e
                            .as_object()
                            .ok_or_else(|| format!("{base}.env: Expected object"))?;
                        for (k, v) in m {
                            let v = v
                                .as_str()
                                .ok_or_else(|| format!("{base}.env.{k}: Expected string"))?;
                            d.env.push((k.clone(), v.to_owned()));
                        }
                    }
                    out.exec.insert(alias.clone(), d);
                }
                "file" => {
                    let path = obj
                        .get("path")
                        .and_then(Value::as_str)
                        .filter(|p| !p.is_empty())
                        .ok_or_else(|| format!("{base}.path: Expected a non-empty string"))?;
                    let mode = match obj.get("mode").and_then(Value::as_str) {
                        None | Some("json") => FileMode::Json,
                        Some("singleValue") => FileMode::SingleValue,
                        Some(_) => {
                            return Err(format!("{base}.mode: Expected 'json' or 'singleValue'"));
                        }
                    };
                    let mut d = FileDefinition::new(path, mode);
                    d.max_bytes = match obj.get("maxBytes") {
                        Some(b) => bytes(&format!("{base}.maxBytes"), b)?,
                        None => DEFAULT_FILE_MAX_BYTES,
                    };
                    out.file.insert(alias.clone(), d);
                }
                "env" => {}
                other => {
                    return Err(format!(
                        "{base}.source: '{}' is not supported (env, file, exec)",
                        super::support::truncate_chars(other, 40)
                    ));
                }
            }
        }
        Ok(out)
    }
}
