//! The `oauth` option: `{ authorize?, store?, dir? }` → the core's `OAuthHost`. `authorize(url,
//! { server, signal })` and the store's `get(key)`, `set(key, value)`, `delete(key)` are called
//! through the same weak threadsafe adapters as the other host callbacks.

use std::sync::Arc;

use ::napi::bindgen_prelude::*;

use super::client_requests::present;

use crate::oauth::{FileStore, HookStore, OAuthHost};

/// `(store) => [get, set, delete]`, each taking what the adapter hands it.
const STORE_SHIM: &str = r#"(function (store) {
  'use strict';
  return [
    (key) => store.get(key),
    (pair) => store.set(pair[0], pair[1]),
    (key) => store.delete(key),
  ];
})"#;

fn invalid(what: &str, value: &Unknown) -> Error {
    Error::new(
        Status::InvalidArg,
        format!("Invalid oauth{what}, got {}", super::type_name(value)),
    )
}

/// The `oauth` member of the constructor's options (absent: tokens in memory, no `authorize`).
pub fn from_options(env: &Env, options: &Object) -> Result<OAuthHost> {
    let Some(value) = present(options, "oauth")? else {
        return Ok(OAuthHost::default());
    };
    if value.get_type()? != ValueType::Object {
        return Err(invalid(
            ": expected an object { authorize?, store?, dir? }",
            &value,
        ));
    }
    let object: Object = unsafe { value.cast()? };
    let mut host = OAuthHost::default();
    if let Some(authorize) = present(&object, "authorize")? {
        if authorize.get_type()? != ValueType::Function {
            return Err(invalid(".authorize: expected a function", &authorize));
        }
        host.authorize = Some(super::client_requests::callback(env, authorize, true)?);
    }
    let dir = match present(&object, "dir")? {
        None => None,
        Some(dir) if dir.get_type()? == ValueType::String => {
            let dir: String = unsafe { dir.cast::<String>()? };
            if dir.is_empty() {
                return Err(Error::new(
                    Status::InvalidArg,
                    "Invalid oauth.dir: expected a directory path, got an empty string",
                ));
            }
            Some(dir)
        }
        Some(other) => return Err(invalid(".dir: expected a string", &other)),
    };
    match (present(&object, "store")?, dir) {
        (Some(_), Some(_)) => {
            return Err(Error::new(
                Status::InvalidArg,
                "Invalid oauth: give store or dir, not both",
            ));
        }
        (Some(store), None) => {
            if store.get_type()? != ValueType::Object {
                return Err(invalid(
                    ".store: expected an object { get, set, delete }",
                    &store,
                ));
            }
            let [get, set, delete] = super::client_requests::method_hooks(
                env,
                STORE_SHIM,
                store,
                ["get", "set", "delete"],
                |method, other| match other {
                    Some(other) => invalid(&format!(".store.{method}: expected a function"), other),
                    None => Error::new(
                        Status::InvalidArg,
                        format!("Invalid oauth.store: missing the {method}(…) method"),
                    ),
                },
            )?;
            host.store = Arc::new(HookStore { get, set, delete });
        }
        (None, Some(dir)) => host.store = Arc::new(FileStore::new(dir)),
        (None, None) => {}
    }
    Ok(host)
}
