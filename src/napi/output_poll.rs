//! The JS thread reads a stdio server's answers itself while it waits for a single call.
//!
//! A tool call made alone (nothing else pending) is written from the JS thread (see
//! [`super::settle`]); its answer used to be read by a tokio worker, which finished the call
//! and handed the result back: a round trip of three threads (JS thread → server → worker →
//! JS thread), each hand-off a wake-up that costs tens of microseconds on an idle machine. Here
//! the JS thread waits on the server's stdout in its own event loop (a libuv poll handle on the
//! pipe) and reads the answer itself ([`PollableOutput::drain`]): the call it wakes goes on
//! right there and its result is queued to the same thread's settle function (no other thread
//! is woken), a round trip of two threads, as with a JavaScript client.
//!
//! Only while calls are few and answers small: once more than one call is pending the JS
//! thread is the busy one (it converts every argument and result), and a message over 64 KiB
//! would hold the event loop while it is read, checked, redacted and wrapped; then the handle
//! is stopped and the session's tokio reader reads again (and handles what it read on a
//! worker). It starts again when a call is made with none pending.
//! Everything the JS thread reads that is not an answer to a call (notifications, the server's
//! own requests, answers to rmcp's requests) is queued for the session's reader as before.
//! The handles never keep the event loop alive; pending calls do (the settle function's ref).
//!
//! Unix only: libuv cannot poll a pipe on Windows, where the tokio reader always reads.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ::napi::bindgen_prelude::*;

use super::settle::Shared;
use crate::transport::stdio_lines::{Drained, PollableOutput};
use crate::transport::woken_here;

type PollCb = extern "C" fn(*mut c_void, c_int, c_int);
type CloseCb = extern "C" fn(*mut c_void);

// libuv, as exported by the Node binary that loads the addon.
unsafe extern "C" {
    fn uv_handle_size(kind: c_int) -> usize;
    fn uv_poll_init(event_loop: *mut c_void, handle: *mut c_void, fd: c_int) -> c_int;
    fn uv_poll_start(handle: *mut c_void, events: c_int, cb: PollCb) -> c_int;
    fn uv_poll_stop(handle: *mut c_void) -> c_int;
    fn uv_close(handle: *mut c_void, cb: Option<CloseCb>);
    fn uv_unref(handle: *mut c_void);
    fn uv_handle_set_data(handle: *mut c_void, data: *mut c_void);
    fn uv_handle_get_data(handle: *const c_void) -> *mut c_void;
}

/// `UV_POLL` in libuv's `uv_handle_type`.
const UV_POLL: c_int = 8;
const UV_READABLE: c_int = 1;

/// The stdio outputs of one manager's sessions, and the poll handle of each on the JS thread.
pub struct OutputPolls {
    event_loop: *mut c_void,
    settle: Arc<Shared>,
    /// Outputs of sessions opened since the JS thread last looked (from tokio threads).
    incoming: Arc<Incoming>,
    /// One per output being watched. Touched on the JS thread only.
    watches: Mutex<Vec<WatchPtr>>,
    /// Some watch is stopped (more than one call was pending at its last wake).
    stopped: AtomicBool,
}

// SAFETY: `event_loop` is only used on the JS thread (in `watch`, the libuv
// callbacks and the cleanup hook, all of which run there); other threads only touch
// `incoming`.
unsafe impl Send for OutputPolls {}
unsafe impl Sync for OutputPolls {}

#[derive(Default)]
struct Incoming {
    outputs: Mutex<Vec<Arc<dyn PollableOutput>>>,
    any: AtomicBool,
}

struct Watch {
    /// libuv's handle (its storage, `uv_handle_size(UV_POLL)` bytes).
    handle: Box<[u64]>,
    output: Arc<dyn PollableOutput>,
    polls: *const OutputPolls,
    started: bool,
}

#[derive(Clone, Copy, PartialEq)]
struct WatchPtr(*mut Watch);
// SAFETY: dereferenced on the JS thread only.
unsafe impl Send for WatchPtr {}

impl OutputPolls {
    pub(super) fn new(env: &Env, settle: Arc<Shared>) -> Result<Arc<Self>> {
        let mut event_loop = std::ptr::null_mut();
        // SAFETY: plain napi call on the JS thread with a valid out-pointer.
        let status = unsafe { sys::napi_get_uv_event_loop(env.raw(), &mut event_loop) };
        if status != sys::Status::napi_ok || event_loop.is_null() {
            return Err(Error::new(Status::GenericFailure, "no libuv event loop"));
        }
        let polls = Arc::new(Self {
            event_loop: event_loop.cast(),
            settle,
            incoming: Arc::default(),
            watches: Mutex::default(),
            stopped: AtomicBool::new(false),
        });
        // The environment going away (a worker thread ending) closes every handle first.
        let hook = Arc::into_raw(polls.clone()) as *mut c_void;
        // SAFETY: `cleanup` takes back the reference leaked here, once.
        unsafe { sys::napi_add_env_cleanup_hook(env.raw(), Some(cleanup), hook) };
        Ok(polls)
    }

    /// What a manager's stdio sessions give their output to.
    pub(super) fn hook(&self) -> crate::transport::stdio_lines::WatchOutput {
        let incoming = self.incoming.clone();
        Arc::new(move |output| {
            incoming
                .outputs
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(output);
            incoming.any.store(true, Ordering::Release);
        })
    }

    /// A call is made with none pending (JS thread): every session's output is watched from
    /// here on, so its answer is read on this thread.
    pub(super) fn watch(self: &Arc<Self>, _env: &Env) {
        let incoming = self.incoming.any.swap(false, Ordering::Acquire);
        let stopped = self.stopped.swap(false, Ordering::Relaxed);
        if !incoming && !stopped {
            return;
        }
        let fresh = if incoming {
            std::mem::take(
                &mut *self
                    .incoming
                    .outputs
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()),
            )
        } else {
            Vec::new()
        };
        let mut watches = self.lock();
        // Outputs of sessions that ended while their watch was stopped.
        watches.retain(|&watch| {
            // SAFETY: listed watches are live; this is the JS thread.
            let over = unsafe { (*watch.0).output.is_over() };
            if over {
                close(watch);
            }
            !over
        });
        for output in fresh {
            if output.is_over() {
                continue;
            }
            if let Some(watch) = self.open(output) {
                watches.push(watch);
            }
        }
        for &watch in watches.iter() {
            start(watch);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<WatchPtr>> {
        self.watches.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A stopped handle for `output`, or none when libuv refuses it (the tokio reader reads on).
    fn open(&self, output: Arc<dyn PollableOutput>) -> Option<WatchPtr> {
        // SAFETY: plain libuv query.
        let size = unsafe { uv_handle_size(UV_POLL) };
        let words = size.div_ceil(std::mem::size_of::<u64>());
        let watch = Box::into_raw(Box::new(Watch {
            handle: vec![0u64; words].into_boxed_slice(),
            output,
            polls: self,
            started: false,
        }));
        // SAFETY: the handle's storage is as large as libuv says and lives as long as the
        // watch; this is the loop's thread. On failure libuv has not kept the handle.
        unsafe {
            let handle = (*watch).handle.as_mut_ptr().cast::<c_void>();
            if uv_poll_init(self.event_loop, handle, (*watch).output.fd()) != 0 {
                drop(Box::from_raw(watch));
                return None;
            }
            uv_handle_set_data(handle, watch.cast());
            uv_unref(handle);
        }
        Some(WatchPtr(watch))
    }

    /// Forgets `watch` and closes its handle.
    fn remove(&self, watch: WatchPtr) {
        self.lock().retain(|&w| w != watch);
        close(watch);
    }
}

/// Starts watching (JS thread): the JS thread reads from now on.
fn start(watch: WatchPtr) {
    // SAFETY: a live watch, on the loop's thread.
    unsafe {
        let watch = &mut *watch.0;
        if watch.started {
            return;
        }
        watch.output.set_polled(true);
        if uv_poll_start(watch.handle.as_mut_ptr().cast(), UV_READABLE, on_readable) == 0 {
            watch.started = true;
        } else {
            watch.output.set_polled(false);
        }
    }
}

/// Stops watching (JS thread): the tokio reader reads again.
fn stop(watch: WatchPtr) {
    // SAFETY: a live watch, on the loop's thread.
    unsafe {
        let watch = &mut *watch.0;
        if watch.started {
            uv_poll_stop(watch.handle.as_mut_ptr().cast());
            watch.started = false;
        }
        watch.output.set_polled(false);
    }
}

/// Stops `watch` and closes its handle; the watch is freed once libuv is done with it.
fn close(watch: WatchPtr) {
    stop(watch);
    // SAFETY: a live, unlisted watch on the loop's thread; `closed` frees it, once.
    unsafe { uv_close((*watch.0).handle.as_mut_ptr().cast(), Some(closed)) };
}

extern "C" fn closed(handle: *mut c_void) {
    // SAFETY: the data is the watch `open` leaked for this handle, closed once.
    unsafe { drop(Box::from_raw(uv_handle_get_data(handle).cast::<Watch>())) };
}

extern "C" fn on_readable(handle: *mut c_void, status: c_int, _events: c_int) {
    // A panic must not unwind into libuv.
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: the data is the live watch of this handle (freed only after `uv_close`,
        // after which libuv calls no more of its callbacks); this is the loop's thread.
        let watch = WatchPtr(unsafe { uv_handle_get_data(handle).cast::<Watch>() });
        let (output, polls) = unsafe { ((*watch.0).output.clone(), &*(*watch.0).polls) };
        if status < 0 {
            polls.remove(watch);
            return;
        }
        // The calls this read wakes go on here, once it is done; they settle through the
        // manager's settle function, as from a worker, so a call's log lines and events still
        // come before its result.
        woken_here::reading(|| {
            let drained = output.drain();
            match drained {
                Drained::Over => polls.remove(watch),
                // A large message: a worker reads and handles it, the event loop stays free.
                Drained::HandedOver => {
                    stop(watch);
                    polls.stopped.store(true, Ordering::Relaxed);
                }
                Drained::Open if polls.settle.pending() > 1 => {
                    stop(watch);
                    polls.stopped.store(true, Ordering::Relaxed);
                }
                Drained::Open => {}
            }
        });
    });
}

unsafe extern "C" fn cleanup(data: *mut c_void) {
    // SAFETY: the reference `new` leaked for this hook, taken back once.
    let polls = unsafe { Arc::from_raw(data.cast::<OutputPolls>()) };
    let watches = std::mem::take(&mut *polls.lock());
    for watch in watches {
        close(watch);
    }
}
