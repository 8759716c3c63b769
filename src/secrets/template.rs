//! `${VAR}` substitution inside plain `env`/`headers` values (current OpenClaw's
//! config syntax).
//!
//! - `${NAME}` with `NAME` matching `[A-Z_][A-Z0-9_]*` is replaced by the
//!   variable's value. A variable that is unset or empty is an error naming it
//!   (`Environment variable 'NAME' not set (from ${NAME})`); nothing is left
//!   half-substituted.
//! - `$${NAME}` is an escape: it produces the literal text `${NAME}`.
//! - Anything else is literal: `${lower}`, `${}`, `$NAME`, a lone `$`, `$$`
//!   not followed by `{NAME}`, an unclosed `${`.
//! - Substitution is single-pass: a value that itself contains `${…}` is not
//!   expanded again.

use secrecy::SecretString;
use secrecy::zeroize::Zeroizing;

use super::{EnvSource, SecretError};

/// Whether `value` contains a `${NAME}` reference or a `$${NAME}` escape.
pub fn has_env_refs(value: &str) -> bool {
    let b = value.as_bytes();
    (0..b.len().saturating_sub(1))
        .any(|i| b[i] == b'$' && b[i + 1] == b'{' && name_end(b, i + 2).is_some())
}

/// The index of the closing `}` when `b[start..]` is `NAME}` with a valid name.
fn name_end(b: &[u8], start: usize) -> Option<usize> {
    let first = *b.get(start)?;
    if !(first.is_ascii_uppercase() || first == b'_') {
        return None;
    }
    let mut j = start + 1;
    while let Some(&c) = b.get(j) {
        if c == b'}' {
            return Some(j);
        }
        if !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_') {
            return None;
        }
        j += 1;
    }
    None
}

/// One substituted value.
pub struct Substituted {
    /// The value with every reference replaced and every escape unescaped.
    pub value: SecretString,
    /// `(NAME, value)` for each distinct variable that was substituted, in
    /// first-use order (for registering with a redactor).
    pub vars: Vec<(String, SecretString)>,
}

/// Substitutes `${NAME}` references in `value` from `env` (see the module docs).
pub fn substitute_env_refs(value: &str, env: &EnvSource) -> Result<Substituted, SecretError> {
    let b = value.as_bytes();
    let mut out = Zeroizing::new(String::with_capacity(value.len() + 64));
    let mut vars: Vec<(String, SecretString)> = Vec::new();
    let mut i = 0;
    let mut literal_from = 0;
    while i < b.len() {
        if b[i] != b'$' {
            i += 1;
            continue;
        }
        // `$${NAME}` → `${NAME}`
        if b.get(i + 1) == Some(&b'$')
            && b.get(i + 2) == Some(&b'{')
            && let Some(end) = name_end(b, i + 3)
        {
            push(&mut out, &value[literal_from..i]);
            push(&mut out, &value[i + 1..=end]);
            i = end + 1;
            literal_from = i;
            continue;
        }
        if b.get(i + 1) == Some(&b'{')
            && let Some(end) = name_end(b, i + 2)
        {
            let name = &value[i + 2..end];
            let v = Zeroizing::new(match env.get(name) {
                Some(v) if !v.is_empty() => v,
                found => {
                    return Err(SecretError::VarNotSet {
                        name: name.to_owned(),
                        uri: format!("${{{name}}}"),
                        empty: found.is_some(),
                    });
                }
            });
            push(&mut out, &value[literal_from..i]);
            push(&mut out, &v);
            if !vars.iter().any(|(n, _)| n == name) {
                vars.push((name.to_owned(), SecretString::from(v.as_str())));
            }
            i = end + 1;
            literal_from = i;
            continue;
        }
        i += 1;
    }
    push(&mut out, &value[literal_from..]);
    Ok(Substituted {
        value: SecretString::from(out.as_str()),
        vars,
    })
}

/// Appends without ever reallocating in place (a reallocation would leave an
/// unzeroised copy of what was already written).
fn push(out: &mut Zeroizing<String>, s: &str) {
    if out.capacity() - out.len() < s.len() {
        let mut bigger = Zeroizing::new(String::with_capacity((out.len() + s.len()) * 2));
        bigger.push_str(out);
        *out = bigger;
    }
    out.push_str(s);
}
