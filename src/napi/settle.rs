//! Tool-call promises, settled from tokio through one threadsafe function per manager.
//!
//! napi-rs's `spawn_future` creates a threadsafe function (a libuv handle and an env cleanup
//! hook) for every promise and tears it down again when the promise settles: measured at
//! ~48 µs per sequential call, ~9 µs per call in batches of 64, for a future that is already
//! done, i.e. more than the rest of a tool call. Here every call of a manager shares one
//! threadsafe function: the JS thread creates the promise and runs the call until it first
//! waits (a request is written from there), tokio runs the rest, and the result comes back
//! through the shared function, whose callback resolves the promise. The function
//! holds the event loop only while calls are pending, so an idle manager never keeps Node
//! alive.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

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
    /// The stdio outputs the JS thread reads while a call is alone (none: the workers read).
    #[cfg(unix)]
    polls: Option<Arc<super::output_poll::OutputPolls>>,
}

/// What the settle callback needs too.
pub(super) struct Shared {
    /// Calls started and not yet settled. Changed only on the JS thread.
    pending: AtomicUsize,
    /// The shared function itself, to let the loop go when the last call settles.
    raw: AtomicPtr<sys::napi_threadsafe_function__>,
}

impl Shared {
    /// Calls started and not yet settled (read on the JS thread).
    pub(super) fn pending(&self) -> usize {
        self.pending.load(Ordering::Relaxed)
    }

    /// A call was settled (on the JS thread, in the settle callback): the last one lets the
    /// event loop go.
    fn settled(&self, env: sys::napi_env) {
        let raw = self.raw.load(Ordering::Relaxed);
        if self.pending.fetch_sub(1, Ordering::Relaxed) == 1 && !raw.is_null() {
            // SAFETY: the function is live (it is calling us) and this is its JS thread.
            unsafe { sys::napi_unref_threadsafe_function(env, raw) };
        }
    }
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
                settle(ctx.env.raw(), ctx.value.deferred, ctx.value.value);
                callback.settled(ctx.env.raw());
                Ok(())
            })?;
        shared.raw.store(tsfn.raw(), Ordering::Relaxed);
        Ok(Self {
            tsfn: Arc::new(tsfn),
            #[cfg(unix)]
            polls: super::output_poll::OutputPolls::new(env, shared.clone()).ok(),
            shared,
        })
    }

    /// What the manager's stdio sessions give their output to, for the JS thread to read.
    pub fn output_watcher(&self) -> crate::transport::stdio_lines::OutputWatcher {
        #[cfg(unix)]
        if let Some(polls) = &self.polls {
            return crate::transport::stdio_lines::OutputWatcher::new(polls.hook());
        }
        Default::default()
    }

    /// A promise for `fut`, settled through the shared function.
    ///
    /// With no other call pending, `fut` is first polled here, on the JS thread (in the
    /// runtime's context): a tool call writes its request at once, without waiting for a
    /// worker to wake, and a call that is refused before any I/O settles at once. Only when
    /// something it waits for wakes it does it go on: on the JS thread itself when that is what
    /// woke it (it read the answer from the server's output, see [`super::output_poll`]),
    /// else spawned from the waking thread (for an answer, the worker that read it, which then
    /// runs the call next, so no thread is woken just to go on with a call). With calls in
    /// flight the JS thread is the busy one (it converts every argument and result): the call
    /// is spawned at once and starts on a worker.
    pub fn spawn<F>(&self, env: &Env, fut: F) -> Result<sys::napi_value>
    where
        F: std::future::Future<Output = T> + Send + 'static,
    {
        let (deferred, promise) = create_promise(env)?;
        // Boxed: a tool call's future is several kilobytes, and moving it into a task would
        // otherwise copy it (memmove was ~3 % of the CPU of 64 calls in flight).
        let fut = Box::pin(fut);
        let call = Box::new(Call {
            fut,
            deferred,
            tsfn: self.tsfn.clone(),
        });
        if self.shared.pending() > 0 {
            // Calls in flight: the JS thread is the busy one, so the call starts on a worker.
            self.hold(env);
            ::napi::bindgen_prelude::spawn(call.finish());
            return Ok(promise);
        }
        #[cfg(unix)]
        if let Some(polls) = &self.polls {
            // The answer is read on this thread (the call is alone).
            polls.watch(env);
        }
        let mut call = call;
        let wake = Arc::new(FirstWake::default());
        let waker = Waker::from(wake.clone());
        let (polled, runtime) = ::napi::bindgen_prelude::within_runtime_if_available(|| {
            let polled = call.fut.as_mut().poll(&mut Context::from_waker(&waker));
            (polled, tokio::runtime::Handle::current())
        });
        if let Poll::Ready(value) = polled {
            settle(env.raw(), call.deferred, value);
            return Ok(promise);
        }
        self.hold(env);
        wake.park(call, runtime);
        Ok(promise)
    }
    /// A promise already resolved with `value`.
    pub fn resolved(&self, env: &Env, value: T) -> Result<sys::napi_value> {
        let (deferred, promise) = create_promise(env)?;
        settle(env.raw(), deferred, value);
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

/// A tool call's future with its promise, until it is done.
struct Call<F, T: ToNapiValue + Send + 'static> {
    fut: Pin<Box<F>>,
    deferred: Deferred,
    tsfn: Arc<SettleFn<T>>,
}

/// A call waiting for a wake, whatever its type.
trait Rest: Send {
    /// Runs it to its end on the runtime, then settles it through the shared function.
    fn spawn_on(self: Box<Self>, runtime: &tokio::runtime::Handle);
    /// Polls it here, on the JS thread (in `runtime`'s context), else it waits for its next
    /// wake. Done, it is settled through the shared function like any other call, so what it
    /// sent the JS thread before (log lines, events) still arrives before its result.
    fn poll_here(self: Box<Self>, runtime: tokio::runtime::Handle);
}

impl<F, T> Call<F, T>
where
    F: Future<Output = T> + Send + 'static,
    T: ToNapiValue + Send + 'static,
{
    /// The call run to its end, then settled through the shared function (`Closing` means
    /// the environment is being torn down: nobody is left to tell).
    async fn finish(self: Box<Self>) {
        let Call {
            fut,
            deferred,
            tsfn,
        } = *self;
        let value = fut.await;
        let _ = tsfn.call(
            Settlement { deferred, value },
            ThreadsafeFunctionCallMode::NonBlocking,
        );
    }
}

impl<F, T> Rest for Call<F, T>
where
    F: Future<Output = T> + Send + 'static,
    T: ToNapiValue + Send + 'static,
{
    fn spawn_on(self: Box<Self>, runtime: &tokio::runtime::Handle) {
        runtime.spawn(self.finish());
    }

    fn poll_here(mut self: Box<Self>, runtime: tokio::runtime::Handle) {
        let wake = Arc::new(FirstWake::default());
        let waker = Waker::from(wake.clone());
        let polled = {
            let _entered = runtime.enter();
            self.fut.as_mut().poll(&mut Context::from_waker(&waker))
        };
        match polled {
            Poll::Ready(value) => {
                let _ = self.tsfn.call(
                    Settlement {
                        deferred: self.deferred,
                        value,
                    },
                    ThreadsafeFunctionCallMode::NonBlocking,
                );
            }
            Poll::Pending => wake.park(self, runtime),
        }
    }
}

thread_local! {
    /// While the JS thread reads a server's output: the calls that reading woke, to go on
    /// here once it is done (see [`woken_here`]).
    static WOKEN_HERE: std::cell::RefCell<Option<Vec<Woken>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `read` (on the JS thread); the calls it wakes are not spawned on the runtime but go
/// on here, on this thread, right after it ([`WokenHere::run`]).
pub(super) struct WokenHere(Vec<Woken>);

/// A call woken on the JS thread, and the runtime it belongs to.
type Woken = (Box<dyn Rest>, tokio::runtime::Handle);

pub(super) fn woken_here<R>(read: impl FnOnce() -> R) -> (R, WokenHere) {
    WOKEN_HERE.with(|slot| *slot.borrow_mut() = Some(Vec::new()));
    let result = read();
    let woken = WOKEN_HERE.with(|slot| slot.borrow_mut().take().unwrap_or_default());
    (result, WokenHere(woken))
}

impl WokenHere {
    /// Goes on with each woken call here, on the JS thread.
    pub(super) fn run(self) {
        for (call, runtime) in self.0 {
            call.poll_here(runtime);
        }
    }
}

/// The waker of a call polled on the JS thread: the first wake sends the rest of the call on
/// (a wake during the poll, once it returns): on the runtime, or on the JS thread when that is
/// the thread reading what woke it.
#[derive(Default)]
struct FirstWake(Mutex<Slot>);

#[derive(Default)]
enum Slot {
    /// The poll is under way.
    #[default]
    Polling,
    /// ... and something woke the call meanwhile.
    WokenWhilePolling,
    /// Waiting for its first wake.
    Parked(Box<dyn Rest>, tokio::runtime::Handle),
    /// Sent on (later wakes are its own).
    Spawned,
}

impl FirstWake {
    fn lock(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The poll returned pending: the rest waits here for a wake (or runs now, if one came
    /// during the poll).
    fn park(&self, rest: Box<dyn Rest>, runtime: tokio::runtime::Handle) {
        let mut slot = self.lock();
        if matches!(*slot, Slot::WokenWhilePolling) {
            *slot = Slot::Spawned;
            drop(slot);
            rest.spawn_on(&runtime);
        } else {
            *slot = Slot::Parked(rest, runtime);
        }
    }
}

impl Wake for FirstWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut slot = self.lock();
        match std::mem::replace(&mut *slot, Slot::Spawned) {
            Slot::Polling | Slot::WokenWhilePolling => *slot = Slot::WokenWhilePolling,
            Slot::Parked(rest, runtime) => {
                drop(slot);
                let rest = WOKEN_HERE.with(|here| match here.try_borrow_mut() {
                    Ok(mut here) => match here.as_mut() {
                        Some(here) => {
                            here.push((rest, runtime.clone()));
                            None
                        }
                        None => Some(rest),
                    },
                    Err(_) => Some(rest),
                });
                if let Some(rest) = rest {
                    rest.spawn_on(&runtime);
                }
            }
            Slot::Spawned => {}
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
fn settle<T: ToNapiValue>(env: sys::napi_env, deferred: Deferred, value: T) {
    // SAFETY: called on the JS thread that created `deferred`, which is settled exactly once.
    unsafe {
        match T::to_napi_value(env, value) {
            Ok(value) => {
                sys::napi_resolve_deferred(env, deferred.0, value);
            }
            Err(error) => {
                let error = JsError::from(error).into_value(env);
                sys::napi_reject_deferred(env, deferred.0, error);
            }
        }
    }
}
