//! `sampling`, `elicitation` and `roots` options for the core (`session::ClientRequests`):
//! each JS callback behind an adapter that gives it `(request, { server, signal })` (roots:
//! `({ server, signal })`) and always returns a promise of JSON text, so sync, async and
//! throwing callbacks look alike; the core dropping its future aborts `signal`. Called through
//! weak threadsafe functions: a callback never keeps Node alive.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, RwLock};

use ::napi::bindgen_prelude::*;
use ::napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

use crate::hooks::{Hook, HookAnswer};
use crate::session::{ClientRequests, RootsSource, parse_roots};

/// `(callback, withRequest) => [call(id, text), abort(id)]`.
const ADAPTER: &str = r#"(function (callback, withRequest) {
  'use strict';
  const parse = JSON.parse, stringify = JSON.stringify, controllers = new Map();
  return [
    function (id, text) {
      const controller = new AbortController();
      controllers.set(id, controller);
      return Promise.resolve()
        .then(() => {
          const arg = parse(text), ctx = { server: arg.server, signal: controller.signal };
          return withRequest ? callback(arg.request, ctx) : callback(ctx);
        })
        .then(
          (answer) => (answer === undefined || answer === null ? null : stringify(answer)),
          (e) => { throw new Error(e instanceof Error ? e.message : String(e)); },
        )
        .finally(() => controllers.delete(id));
    },
    function (id) {
      const controller = controllers.get(id);
      if (controller) {
        controllers.delete(id);
        controller.abort(new Error('the server request ended (cancelled, timed out or shut down)'));
      }
    },
  ];
})"#;

type CallFn = ThreadsafeFunction<
    FnArgs<(u32, String)>,
    Promise<Option<String>>,
    FnArgs<(u32, String)>,
    Status,
    false,
    true,
>;
type AbortFn = ThreadsafeFunction<u32, (), u32, Status, false, true>;

/// Aborts the callback's `signal` when the call is dropped before it settled.
struct AbortOnDrop {
    abort: Arc<AbortFn>,
    id: u32,
    settled: bool,
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if !self.settled {
            self.abort
                .call(self.id, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

/// The core callback for the JS function `value` (`option` names it in errors).
pub(super) fn callback(env: &Env, value: Unknown, with_request: bool) -> Result<Hook> {
    let adapter: Function<FnArgs<(Unknown, bool)>, Array> = env.run_script(ADAPTER)?;
    let pair = adapter.call(FnArgs::from((value, with_request)))?;
    let call: Function<FnArgs<(u32, String)>, Promise<Option<String>>> = pair
        .get(0)?
        .ok_or_else(|| Error::new(Status::GenericFailure, "adapter"))?;
    let abort: Function<u32, ()> = pair
        .get(1)?
        .ok_or_else(|| Error::new(Status::GenericFailure, "adapter"))?;
    let call: Arc<CallFn> = Arc::new(
        call.build_threadsafe_function::<FnArgs<(u32, String)>>()
            .weak::<true>()
            .build()?,
    );
    let abort: Arc<AbortFn> = Arc::new(
        abort
            .build_threadsafe_function::<u32>()
            .weak::<true>()
            .build()?,
    );
    let next = Arc::new(AtomicU32::new(0));
    Ok(Arc::new(move |argument: String| -> HookAnswer {
        let (call, abort) = (call.clone(), abort.clone());
        let id = next.fetch_add(1, Ordering::Relaxed);
        Box::pin(async move {
            let mut guard = AbortOnDrop {
                abort,
                id,
                settled: false,
            };
            let promise = call
                .call_async_catch(FnArgs::from((id, argument)))
                .await
                .map_err(|e| e.reason.clone())?;
            let answer = promise.await.map_err(|e| e.reason.clone());
            guard.settled = true;
            answer
        })
    }))
}

/// `object[name]`, unless undefined or null.
pub(super) fn present(object: &Object, name: &str) -> Result<Option<Unknown<'static>>> {
    Ok(object
        .get::<Unknown>(name)?
        .filter(|v| !matches!(v.get_type(), Ok(ValueType::Undefined | ValueType::Null))))
}

/// Hooks for the `methods` of a host object, in that order: each must be a function (else
/// `bad(method, what it is instead)`); `shim` (JS source of `(object) => [f, …]`) picks them,
/// each then called through [`callback`]'s adapter.
pub(super) fn method_hooks<const N: usize>(
    env: &Env,
    shim: &str,
    object: Unknown,
    methods: [&str; N],
    bad: impl Fn(&str, Option<&Unknown>) -> Error,
) -> Result<[Hook; N]> {
    let host: Object = unsafe { object.cast()? };
    for method in methods {
        match present(&host, method)? {
            Some(f) if f.get_type()? == ValueType::Function => {}
            other => return Err(bad(method, other.as_ref())),
        }
    }
    let shim: Function<Unknown, Array> = env.run_script(shim)?;
    let picked = shim.call(object)?;
    let hooks = (0..N as u32)
        .map(|i| {
            let f: Unknown = picked
                .get(i)?
                .ok_or_else(|| Error::new(Status::GenericFailure, "a method shim"))?;
            callback(env, f, true)
        })
        .collect::<Result<Vec<Hook>>>()?;
    hooks
        .try_into()
        .map_err(|_| Error::new(Status::GenericFailure, "a method shim"))
}

fn expected(option: &str, what: &str, value: &Unknown) -> Error {
    Error::new(
        Status::InvalidArg,
        format!(
            "Invalid {option}: expected {what}, got {}",
            super::type_name(value)
        ),
    )
}

/// A roots value: an array of `{ uri, name? }` or a function returning one.
pub fn roots_source(env: &Env, value: Unknown, option: &str) -> Result<RootsSource> {
    match value.get_type()? {
        ValueType::Function => Ok(RootsSource::Callback(callback(env, value, false)?)),
        ValueType::Object => {
            let json = super::json_from_js(env, value)?;
            let roots = parse_roots(&json)
                .map_err(|e| Error::new(Status::InvalidArg, format!("Invalid {option}: {e}")))?;
            Ok(RootsSource::List(roots))
        }
        _ => Err(expected(
            option,
            "an array of { uri, name? } or a function returning one",
            &value,
        )),
    }
}

/// The `sampling`, `elicitation` and `roots` members of the constructor's options.
pub fn from_options(env: &Env, options: &Object) -> Result<ClientRequests> {
    let function = |name: &str| -> Result<Option<Hook>> {
        let Some(value) = present(options, name)? else {
            return Ok(None);
        };
        if value.get_type()? != ValueType::Function {
            return Err(expected(name, "a function", &value));
        }
        Ok(Some(callback(env, value, true)?))
    };
    Ok(ClientRequests {
        sampling: function("sampling")?,
        elicitation: function("elicitation")?,
        roots: match present(options, "roots")? {
            None => None,
            Some(value) => Some(Arc::new(RwLock::new(roots_source(env, value, "roots")?))),
        },
    })
}
