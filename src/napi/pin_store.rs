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
    let object: Object = unsafe { value.cast()? };
    for method in ["get", "set"] {
        match super::oauth::present(&object, method)? {
            Some(f) if f.get_type()? == ValueType::Function => {}
            _ => {
                return Err(Error::new(
                    Status::InvalidArg,
                    format!(
                        "Invalid pinStore: expected the path of a file or an object {{ get, set }} \
                         (missing the {method}(…) method)"
                    ),
                ));
            }
        }
    }
    let mut hooks =
        super::client_requests::method_hooks(env, PIN_STORE_SHIM, value, 2)?.into_iter();
    let mut next = || {
        hooks
            .next()
            .ok_or_else(|| Error::new(Status::GenericFailure, "pinStore shim"))
    };
    Ok(crate::options::PinStore::Host {
        get: next()?,
        set: next()?,
    })
}
