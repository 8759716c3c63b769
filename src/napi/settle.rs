//! Tool-call promises, settled from tokio through one threadsafe function per manager.
//!
//! napi-rs's `spawn_future` creates a threadsafe function (a libuv handle and an env cleanup
//! hook) for every promise and tears it down again when the promise settles: measured at
//! ~48 µs per sequential call, ~9 µs per call in batches of 64, for a future that is already
//! done, i.e. more than the rest of a tool call. Here every call of a manager shares one
//! threadsafe function, and a call is not a tokio task of its own:
//!
//! - a call started alone is first polled on the JS thread (its request is written from
//!   there); calls started while others are in flight are queued, and one worker task starts
//!   all that were queued meanwhile, their requests written together ([`Starts`]);
//! - a started call waits parked on its waker; the thread that reads its answer (a worker, or
//!   the JS thread) goes on with it once its read is done
//!   ([`woken_here`](crate::transport::woken_here));
//! - a finished call is queued for the JS thread, and one wake settles every call that
//!   finished meanwhile ([`Outbox`]); a call's `onUpdate` updates go through the same queue,
//!   ahead of its result (no threadsafe function per `onUpdate`).
//!
//! The function holds the event loop only while calls are pending, so an idle manager never
//! keeps Node alive.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use crate::transport::woken_here;
use ::napi::bindgen_prelude::*;
use tokio_util::sync::CancellationToken;

use super::execute_js::{ExecuteJs, Listening};
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

type SettleFn = ThreadsafeFunction<(), (), (), Status, false, true, 0>;

/// What a call sends the JS thread: its `onUpdate`'s updates, then its result.
enum Out<T> {
    Settle(Settlement<T>),
    /// An update for the `onUpdate` of the call numbered so ([`ExecuteJs`]).
    Update(u64, serde_json::Value),
}

/// Finished calls and their updates waiting for the JS thread, and the function that wakes it
/// for them: one wake delivers everything queued meanwhile, in the order it was queued (node's
/// threadsafe functions would otherwise call back once per value, each in a callback scope of
/// its own).
struct Outbox<T> {
    queue: Arc<Mutex<Vec<Out<T>>>>,
    tsfn: SettleFn,
}

impl<T> Outbox<T> {
    /// Queues `settlement` for the JS thread.
    fn send(&self, settlement: Settlement<T>) {
        self.queue_up(Out::Settle(settlement));
    }

    /// Queues an update for call `n`'s `onUpdate`; a call's updates are queued before its
    /// result, so they reach JS before it.
    fn update(&self, n: u64, value: serde_json::Value) {
        self.queue_up(Out::Update(n, value));
    }

    /// The first one queued wakes the JS thread. (`Closing` means the environment is being
    /// torn down: nobody is left to tell.)
    fn queue_up(&self, out: Out<T>) {
        let first = {
            let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            queue.push(out);
            queue.len() == 1
        };
        if first {
            let _ = self.tsfn.call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

/// Where a call's updates go: its `onUpdate`, through the JS thread's queue.
pub struct Updates<T> {
    outbox: Arc<Outbox<T>>,
    n: u64,
}

impl<T> Updates<T> {
    pub fn send(&self, value: serde_json::Value) {
        self.outbox.update(self.n, value);
    }
}

pub struct Settler<T: ToNapiValue + Send + 'static> {
    outbox: Arc<Outbox<T>>,
    /// The JS half of `execute` (signals, `onUpdate`).
    execute_js: Arc<ExecuteJs>,
    starts: Arc<Starts>,
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
        let queue: Arc<Mutex<Vec<Out<T>>>> = Arc::default();
        let waiting = queue.clone();
        let execute_js = Arc::new(ExecuteJs::new(env)?);
        let updates = execute_js.clone();
        let noop = env.create_function_from_closure::<(), (), _>("settle", |_| Ok(()))?;
        let tsfn: SettleFn = noop
            .build_threadsafe_function::<()>()
            .weak::<true>()
            .callee_handled::<false>()
            .max_queue_size::<0>()
            .build_callback(move |ctx: ThreadsafeCallContext<()>| {
                let batch = std::mem::take(&mut *waiting.lock().unwrap_or_else(|p| p.into_inner()));
                for out in batch {
                    match out {
                        Out::Settle(settlement) => {
                            settle(ctx.env.raw(), settlement.deferred, settlement.value);
                            callback.settled(ctx.env.raw());
                        }
                        Out::Update(n, value) => updates.deliver(&ctx.env, n, value),
                    }
                }
                Ok(())
            })?;
        shared.raw.store(tsfn.raw(), Ordering::Relaxed);
        Ok(Self {
            outbox: Arc::new(Outbox { queue, tsfn }),
            execute_js,
            starts: Arc::default(),
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

    /// A tool set's `call(k, toolCallId, params, signal, onUpdate)` for its native
    /// `call(k, toolCallId, params, aborted, n)` (see [`ExecuteJs`]).
    pub fn execute_fn<'env>(&self, env: &'env Env, native: Unknown) -> Result<Unknown<'env>> {
        self.execute_js.wrap(env, native)
    }

    /// Call `n`'s abort listener cancels `cancel` while the guard lives.
    pub fn listen(&self, n: u64, cancel: CancellationToken) -> Listening {
        self.execute_js.listen(n, cancel)
    }

    /// Where call `n`'s updates go.
    pub fn updates(&self, n: u64) -> Updates<T> {
        Updates {
            outbox: self.outbox.clone(),
            n,
        }
    }

    /// A promise for `fut`, settled through the shared function.
    ///
    /// With no other call pending, `fut` is first polled here, on the JS thread (in the
    /// runtime's context): a tool call writes its request at once, without waiting for a
    /// worker to wake, and a call that is refused before any I/O settles at once. With calls in
    /// flight the JS thread is the busy one (it converts every argument and result): the call
    /// is queued for a worker to start ([`Starts`]). Either way it goes on only when something
    /// it waits for wakes it: on the thread that read its answer, right after the read (the
    /// JS thread, see [`super::output_poll`], or a worker), else as a task of its own.
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
            outbox: self.outbox.clone(),
        });
        if self.shared.pending() > 0 {
            // Calls in flight: the JS thread is the busy one, so the call starts on a worker,
            // with the others started meanwhile (see `Starts`).
            self.hold(env);
            self.starts.push(call);
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
        if self.outbox.tsfn.aborted() {
            return;
        }
        // The settle callback decrements on this same thread, so 0 here means nothing pending.
        if self.shared.pending.fetch_add(1, Ordering::Relaxed) == 0 {
            // SAFETY: the function is live (not aborted) and this is its JS thread.
            unsafe { sys::napi_ref_threadsafe_function(env.raw(), self.outbox.tsfn.raw()) };
        }
    }
}

/// Calls the JS thread started while others were in flight, waiting for a worker to start
/// them. One task starts every call queued by the time it runs: it polls each until it first
/// waits (a tool call writes its request then), and their requests go out together, one
/// `write` per server ([`corked`](crate::transport::stdin_writer::corked)). A call is not a
/// task of its own: it is parked on its waker, and the thread that reads its answer goes on
/// with it ([`woken_here`]).
#[derive(Default)]
struct Starts(Mutex<Vec<Box<dyn Rest>>>);

impl Starts {
    /// Queues `call`; the first one queued spawns the task that starts them.
    fn push(self: &Arc<Self>, call: Box<dyn Rest>) {
        let first = {
            let mut queued = self.0.lock().unwrap_or_else(|p| p.into_inner());
            queued.push(call);
            queued.len() == 1
        };
        if first {
            let starts = self.clone();
            ::napi::bindgen_prelude::spawn(async move { starts.start() });
        }
    }

    /// Starts every call queued now (on a worker); a call queued after this took them
    /// spawns the next task.
    fn start(&self) {
        let queued = std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()));
        let runtime = tokio::runtime::Handle::current();
        crate::transport::stdin_writer::corked(|| {
            for call in queued {
                // (The calls' own futures catch their panics; this keeps the others going
                // if anything else panicked.)
                let runtime = runtime.clone();
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                    call.poll_here(runtime)
                }));
            }
        });
    }
}

/// A tool call's future with its promise, until it is done.
struct Call<F, T: ToNapiValue + Send + 'static> {
    fut: Pin<Box<F>>,
    deferred: Deferred,
    outbox: Arc<Outbox<T>>,
}

/// A call waiting for a wake, whatever its type.
trait Rest: Send {
    /// Runs it to its end on the runtime, then settles it through the shared function.
    fn spawn_on(self: Box<Self>, runtime: &tokio::runtime::Handle);
    /// Polls it here, on this thread (in `runtime`'s context): the JS thread, the worker that
    /// starts it, or the thread that read what woke it; else it waits for its next wake.
    /// Done, it is settled through the shared function like any other call, so what it sent
    /// the JS thread before (log lines, events) still arrives before its result.
    fn poll_here(self: Box<Self>, runtime: tokio::runtime::Handle);
}

impl<F, T> Call<F, T>
where
    F: Future<Output = T> + Send + 'static,
    T: ToNapiValue + Send + 'static,
{
    /// The call run to its end, then settled through the shared function.
    async fn finish(self: Box<Self>) {
        let Call {
            fut,
            deferred,
            outbox,
        } = *self;
        let value = fut.await;
        outbox.send(Settlement { deferred, value });
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
                self.outbox.send(Settlement {
                    deferred: self.deferred,
                    value,
                });
            }
            Poll::Pending => wake.park(self, runtime),
        }
    }
}

/// The waker of a call polled outside a task of its own: the first wake sends the rest of the
/// call on (a wake during the poll, once it returns): to the thread reading what woke it,
/// after its read, or else to the runtime as a task.
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
                // Woken by a thread reading the answer: the call goes on there, after the read.
                if woken_here::active() {
                    woken_here::defer(Box::new(move || rest.poll_here(runtime)));
                } else {
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
