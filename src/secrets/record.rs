//! The inputs of `resolveSecret(value)` and `resolveSecrets(record)` as JS passes them (any
//! value at all), checked with errors that say what was wrong.

use serde_json::{Map, Value};

use super::{ExposeSecret, SecretResolver};

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null or undefined",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `resolveSecret`'s argument: a string.
pub fn secret_value(value: &Value) -> Result<&str, String> {
    value
        .as_str()
        .ok_or_else(|| format!("resolveSecret: expected a string, got {}", kind(value)))
}

/// `resolveSecrets`' argument: a record of strings, in its own key order. `null` and
/// `undefined` are an empty record, as in the original.
pub fn record_entries(record: &Value) -> Result<Vec<(String, String)>, String> {
    let map = match record {
        Value::Null => return Ok(Vec::new()),
        Value::Object(map) => map,
        other => {
            return Err(format!(
                "resolveSecrets: expected an object of strings, got {}",
                kind(other)
            ));
        }
    };
    map.iter()
        .map(|(key, value)| match value {
            Value::String(s) => Ok((key.clone(), s.clone())),
            other => Err(format!(
                "resolveSecrets: the value of '{key}' is {}, not a string",
                kind(other)
            )),
        })
        .collect()
}

/// `resolveSecret(value)`: a plain value as it is, a reference fetched.
pub async fn resolve_value(resolver: &SecretResolver, value: &Value) -> Result<String, String> {
    let value = secret_value(value)?;
    let secret = resolver.resolve(value).await.map_err(|e| e.to_string())?;
    Ok(secret.expose_secret().to_owned())
}

/// `resolveSecrets(record)`: every value resolved in parallel, keys in the record's order; any
/// failure fails the whole call.
pub async fn resolve_record(resolver: &SecretResolver, record: &Value) -> Result<Value, String> {
    let entries = record_entries(record)?;
    let resolved = resolver
        .resolve_all(&entries)
        .await
        .map_err(|e| e.to_string())?;
    let mut out = Map::with_capacity(resolved.len());
    for (key, value) in resolved {
        out.insert(key, Value::String(value.expose_secret().to_owned()));
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::EnvSource;
    use serde_json::json;

    #[tokio::test]
    async fn order_is_the_records() {
        let resolver =
            SecretResolver::with_default_providers_in(EnvSource::fixed([("A", "1"), ("B", "2")]));
        let record = json!({"z": "secret://env/B", "a": "plain", "m": "secret://env/A", "b": "x"});
        let out = resolve_record(&resolver, &record).await.unwrap();
        let keys: Vec<_> = out.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["z", "a", "m", "b"]);
        assert_eq!(out["z"], "2");
        assert_eq!(out["m"], "1");
    }

    #[tokio::test]
    async fn bad_input_is_a_clear_error() {
        let resolver =
            SecretResolver::with_default_providers_in(EnvSource::fixed::<[(&str, &str); 0], _, _>(
                [],
            ));
        assert_eq!(
            resolve_record(&resolver, &Value::Null).await.unwrap(),
            json!({})
        );
        assert_eq!(
            resolve_record(&resolver, &json!(42)).await.unwrap_err(),
            "resolveSecrets: expected an object of strings, got a number"
        );
        assert_eq!(
            resolve_record(&resolver, &json!({"k": 1}))
                .await
                .unwrap_err(),
            "resolveSecrets: the value of 'k' is a number, not a string"
        );
        assert_eq!(
            secret_value(&Value::Null).unwrap_err(),
            "resolveSecret: expected a string, got null or undefined"
        );
    }
}
