//! Tool-call promises, settled from tokio through one threadsafe function per manager.
//!
//! napi-rs's `spawn_future` creates a threadsafe function (a libuv handle and an env cleanup
//! hook) for every promise and tears it down again when the promise settles: measured at
//! ~48 µs per sequential call, ~9 µs per call in batches of 64, for a future that is already
//! done, i.e. more than the rest of a tool call. Here every call of a manager shares one
//! threadsafe function: the JS thread creates the promise, tokio runs the call, and the result
//! comes back through the shared function, whose callback resolves the promise. The function
//! holds the event loop only while calls are pending, so an idle manager never keeps Node
//! alive.

use std::sync::Arc;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use ::napi::bindgen_prelude::*;
use ::napi::threadsafe_function::{
    ThreadsafeCallContext, ThreadsafeFunction, ThreadsafeFunctionCallMode,
};

/// A promise's resolver. Used only on the JS thread that made it; it travels through tokio
/// untouched.
struct Deferred(sys::napi_deferred);

// SAFETY: the pointer is only dereferenced by napi on the JS thread (in `settle`); other
// threads merely carry it.
unsafe impl Send for Deferred {}

struct Settlement<T> {
    deferred: Deferred,
    value: T,
}

type SettleFn<T> = ThreadsafeFunction<Settlement<T>, (), (), Status, false, true, 0>;

pub struct Settler<T: ToNapiValue + Send + 'static> {
    tsfn: Arc<SettleFn<T>>,
    shared: Arc<Shared>,
}

/// What the settle callback needs too.
struct Shared {
    /// Calls started and not yet settled. Changed only on the JS thread.
    pending: AtomicUsize,
    /// The shared function itself, to let the loop go when the last call settles.
    raw: AtomicPtr<sys::napi_threadsafe_function__>,
}

impl<T: ToNapiValue + Send + 'static> Settler<T> {
    pub fn new(env: &Env) -> Result<Self> {
        let shared = Arc::new(Shared {
            pending: AtomicUsize::new(0),
            raw: AtomicPtr::new(std::ptr::null_mut()),
        });
        let callback = shared.clone();
        let noop = env.create_function_from_closure::<(), (), _>("settle", |_| Ok(()))?;
        let tsfn: SettleFn<T> = noop
            .build_threadsafe_function::<Settlement<T>>()
            .weak::<true>()
            .callee_handled::<false>()
            .max_queue_size::<0>()
            .build_callback(move |ctx: ThreadsafeCallContext<Settlement<T>>| {
                settle(&ctx.env, ctx.value.deferred, ctx.value.value);
                let raw = callback.raw.load(Ordering::Relaxed);
                if callback.pending.fetch_sub(1, Ordering::Relaxed) == 1 && !raw.is_null() {
                    // SAFETY: the function is live (it is calling us) and this is its JS thread.
                    unsafe { sys::napi_unref_threadsafe_function(ctx.env.raw(), raw) };
                }
                Ok(())
            })?;
        shared.raw.store(tsfn.raw(), Ordering::Relaxed);
        Ok(Self {
            tsfn: Arc::new(tsfn),
            shared,
        })
    }

    /// A promise for `fut`, run on tokio and settled through the shared function.
    pub fn spawn<F>(&self, env: &Env, fut: F) -> Result<sys::napi_value>
    where
        F: std::future::Future<Output = T> + Send + 'static,
    {
        let (deferred, promise) = create_promise(env)?;
        self.hold(env);
        let tsfn = self.tsfn.clone();
        // Boxed: a tool call's future is several kilobytes, and the task would otherwise copy
        // it from the closure into its own state when first polled (memmove was ~3 % of the
        // CPU of 64 calls in flight).
        let fut = Box::pin(fut);
        ::napi::bindgen_prelude::spawn(async move {
            let value = fut.await;
            // `Closing` means the environment is being torn down: nobody is left to tell.
            let _ = tsfn.call(
                Settlement { deferred, value },
                ThreadsafeFunctionCallMode::NonBlocking,
            );
        });
        Ok(promise)
    }

    /// A promise already resolved with `value`.
    pub fn resolved(&self, env: &Env, value: T) -> Result<sys::napi_value> {
        let (deferred, promise) = create_promise(env)?;
        settle(env, deferred, value);
        Ok(promise)
    }

    /// Keeps the event loop alive while calls are pending, and only then; called on the JS
    /// thread, before the call is spawned.
    fn hold(&self, env: &Env) {
        if self.tsfn.aborted() {
            return;
        }
        // The settle callback decrements on this same thread, so 0 here means nothing pending.
        if self.shared.pending.fetch_add(1, Ordering::Relaxed) == 0 {
            // SAFETY: the function is live (not aborted) and this is its JS thread.
            unsafe { sys::napi_ref_threadsafe_function(env.raw(), self.tsfn.raw()) };
        }
    }
}

fn create_promise(env: &Env) -> Result<(Deferred, sys::napi_value)> {
    let mut deferred = std::ptr::null_mut();
    let mut promise = std::ptr::null_mut();
    // SAFETY: plain napi call on the JS thread with valid out-pointers.
    let status = unsafe { sys::napi_create_promise(env.raw(), &mut deferred, &mut promise) };
    if status != sys::Status::napi_ok {
        return Err(Error::new(
            Status::from(status),
            "creating a promise failed",
        ));
    }
    Ok((Deferred(deferred), promise))
}

/// Resolves with `value` as JS; if building that value fails, rejects with the failure.
fn settle<T: ToNapiValue>(env: &Env, deferred: Deferred, value: T) {
    // SAFETY: called on the JS thread that created `deferred`, which is settled exactly once.
    unsafe {
        match T::to_napi_value(env.raw(), value) {
            Ok(value) => {
                sys::napi_resolve_deferred(env.raw(), deferred.0, value);
            }
            Err(error) => {
                let error = JsError::from(error).into_value(env.raw());
                sys::napi_reject_deferred(env.raw(), deferred.0, error);
            }
        }
    }
}
