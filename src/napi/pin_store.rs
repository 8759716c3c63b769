//! An object `pinStore` option: the host's `{ get, set }` store of approved tool definitions,
//! called through the same weak threadsafe adapters as the other host callbacks.

use ::napi::bindgen_prelude::*;

/// `(store) => [get, set]` for `pinStore`.
const PIN_STORE_SHIM: &str = r#"(function (store) {
  'use strict';
  return [() => store.get(), (text) => store.set(text)];
})"#;

/// An object `pinStore`: `{ get(): text | null | undefined, set(text) }`, each may return a
/// promise.
pub fn from_js(env: &Env, value: Unknown) -> Result<crate::options::PinStore> {
    let [get, set] = super::client_requests::method_hooks(
        env,
        PIN_STORE_SHIM,
        value,
        ["get", "set"],
        |method, _| {
            Error::new(
                Status::InvalidArg,
                format!(
                    "Invalid pinStore: expected the path of a file or an object {{ get, set }} \
                     (missing the {method}(…) method)"
                ),
            )
        },
    )?;
    Ok(crate::options::PinStore::Host { get, set })
}
