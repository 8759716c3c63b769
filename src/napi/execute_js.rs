//! The part of a tool's `execute(toolCallId, params, signal, onUpdate)` written in JavaScript:
//! the abort signal's listener and the `onUpdate` callback.
//!
//! Both are JS objects the call must talk to from the JS thread, and doing that through napi
//! cost more than the rest of a tiny call: a listener function made from a Rust closure for
//! every call (never removed, so a signal shared by many calls collected listeners and Node
//! warned of a leak after ten), a threadsafe function for every `onUpdate` (a libuv handle
//! opened and closed per call) and a task forwarding the updates to it. Here, per manager, one
//! small JS function does it in JS:
//!
//! - it reads `signal.aborted` (a signal already aborted cancels the call before it starts)
//!   and, for the calls running with the signal, keeps one `abort` listener on it that cancels
//!   them by number, removed again once the last of them has settled (an agent run passes one
//!   signal to all its calls: twenty at once are one listener, not twenty);
//! - it keeps `onUpdate` under the call's number; the call's updates are queued for the JS
//!   thread with its result (in the order they came, so none arrives after the result) and
//!   handed to it by number ([`ExecuteJs::deliver`]).
//!
//! A `signal` that is not a usable `AbortSignal` (`aborted` not a boolean, a getter or
//! `addEventListener` that throws) counts as no signal; an `onUpdate` that throws is ignored.
//! Either way the call goes on.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ::napi::bindgen_prelude::*;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Called once per manager with the native `cancel(n)`; gives `[wrap, deliver]`.
///
/// `wrap(call)` turns a tool set's native `call(k, toolCallId, params, aborted, n, updates)`
/// into the `call(k, toolCallId, params, signal, onUpdate)` its `execute` functions use; `n` is
/// 0 for a call with neither a listener nor `onUpdate`, else the call's number (listened to
/// and/or updated by that number), and `updates` whether it has an `onUpdate` (only then is
/// progress asked of the server). `deliver(n, update)` hands an update to call `n`'s
/// `onUpdate`.
const SOURCE: &str = r#"(function (cancel) {
  'use strict'
  const updates = new Map()
  // signal -> { calls: Set of call numbers, listener }: one listener per signal however many
  // calls share it, removed when the last of them settles.
  const listening = new WeakMap()
  let last = 0
  function deliver(n, update) {
    const onUpdate = updates.get(n)
    if (onUpdate === undefined) return
    try { onUpdate(update) } catch {}
  }
  function listen(signal, add, n) {
    let entry = listening.get(signal)
    if (entry === undefined) {
      const calls = new Set()
      const listener = () => {
        listening.delete(signal)
        for (const call of calls) cancel(call)
      }
      try { add.call(signal, 'abort', listener, { once: true }) } catch { return undefined }
      entry = { calls, listener }
      listening.set(signal, entry)
    }
    entry.calls.add(n)
    return entry
  }
  function unlisten(signal, entry, n) {
    entry.calls.delete(n)
    if (entry.calls.size === 0 && listening.get(signal) === entry) {
      listening.delete(signal)
      try { signal.removeEventListener('abort', entry.listener) } catch {}
    }
  }
  function wrap(call) {
    return function (k, toolCallId, params, signal, onUpdate) {
      let aborted = false
      let add
      if (typeof signal === 'object' && signal !== null) {
        try {
          const state = signal.aborted
          if (state === true) aborted = true
          else if (state === false) add = signal.addEventListener
        } catch {}
      }
      const listens = typeof add === 'function'
      const update = typeof onUpdate === 'function' ? onUpdate : undefined
      if (!listens && update === undefined) return call(k, toolCallId, params, aborted, 0)
      const n = ++last
      if (update !== undefined) updates.set(n, update)
      let promise
      try {
        promise = call(k, toolCallId, params, aborted, n, update !== undefined)
      } catch (error) {
        updates.delete(n)
        throw error
      }
      const entry = listens ? listen(signal, add, n) : undefined
      const done = () => {
        updates.delete(n)
        if (entry !== undefined) unlisten(signal, entry, n)
      }
      promise.then(done, done)
      return promise
    }
  }
  return [wrap, deliver]
})"#;

type Wrap = FunctionRef<FnArgs<(Unknown<'static>,)>, Unknown<'static>>;
type Deliver = FunctionRef<FnArgs<(f64, Value)>, ()>;

/// The JS half of one manager's `execute` functions, and the cancellation of its calls by
/// number.
pub(super) struct ExecuteJs {
    wrap: Wrap,
    deliver: Deliver,
    listened: Arc<Listened>,
}

/// Calls whose signal is listened to, by number, while they run.
#[derive(Default)]
struct Listened(Mutex<HashMap<u64, CancellationToken>>);

impl Listened {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, CancellationToken>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A running call's place among the listened ones; dropped when the call ends.
pub(super) struct Listening {
    listened: Arc<Listened>,
    n: u64,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.listened.lock().remove(&self.n);
    }
}

impl ExecuteJs {
    /// Compiles the JS half (JS thread, once per manager).
    pub(super) fn new(env: &Env) -> Result<Self> {
        let listened = Arc::new(Listened::default());
        let by_number = listened.clone();
        let cancel = env.create_function_from_closure::<f64, (), _>("cancel", move |ctx| {
            if let Ok(n) = ctx.get::<f64>(0)
                && let Some(token) = by_number.lock().get(&(n as u64))
            {
                token.cancel();
            }
            Ok(())
        })?;
        let outer: Function<Unknown, Object> = env.run_script(SOURCE)?;
        let pair = outer.call(cancel.to_unknown())?;
        let wrap: Function<FnArgs<(Unknown<'static>,)>, Unknown<'static>> = pair.get_element(0)?;
        let deliver: Function<FnArgs<(f64, Value)>, ()> = pair.get_element(1)?;
        Ok(Self {
            wrap: wrap.create_ref()?,
            deliver: deliver.create_ref()?,
            listened,
        })
    }

    /// A tool set's `call(k, toolCallId, params, signal, onUpdate)` for its native `call`.
    pub(super) fn wrap<'env>(&self, env: &'env Env, native: Unknown) -> Result<Unknown<'env>> {
        // SAFETY: `native` is a live value of this env's current scope; the lifetime is only
        // widened to pass it through the reference's call.
        let native: Unknown<'static> =
            unsafe { Unknown::from_raw_unchecked(env.raw(), native.raw()) };
        let wrapped = self.wrap.borrow_back(env)?.call(FnArgs::from((native,)))?;
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), wrapped.raw()) })
    }

    /// Call `n`'s abort listener cancels `cancel` until the returned guard is dropped.
    pub(super) fn listen(&self, n: u64, cancel: CancellationToken) -> Listening {
        self.listened.lock().insert(n, cancel);
        Listening {
            listened: self.listened.clone(),
            n,
        }
    }

    /// Hands `update` to call `n`'s `onUpdate`, if it is still there (JS thread).
    pub(super) fn deliver(&self, env: &Env, n: u64, update: Value) {
        let delivered = self
            .deliver
            .borrow_back(env)
            .and_then(|deliver| deliver.call(FnArgs::from((n as f64, update))));
        if delivered.is_err() {
            // `deliver` catches what `onUpdate` throws; anything else (no memory) is dropped
            // here, as a failed update never stops a call.
            let mut exception = std::ptr::null_mut();
            // SAFETY: plain napi call on the JS thread with a valid out-pointer.
            unsafe { sys::napi_get_and_clear_last_exception(env.raw(), &mut exception) };
        }
    }
}
