//! Calls woken by a thread reading a server's output go on on that thread, right after the
//! read, instead of being handed to another thread.
//!
//! A tool call waits for its answer; the thread that reads the answer (a tokio worker, or the
//! addon's JS thread) wakes it. Handed to the scheduler, the woken call would be a task of its
//! own, polled later by whichever worker picks it up (a spawn, a queue, often a wake-up of the
//! other worker). What finishes a call once its answer is in (the bridge, the redactor, the
//! wrapper, the settlement) is short, so the reading thread runs it itself once it has handed
//! out every answer of what it read. Only a waker that asks for it ([`defer`]) goes on here;
//! everything else wakes as usual.
//!
//! The read runs inside [`reading`]; what is deferred during it runs after it, outside any lock
//! the read held, in the order it was woken. A call that waits again is parked again by its
//! own waker; a wake during the deferred work is not deferred (it is handed on as usual).

use std::cell::RefCell;

/// Work to go on with after the read.
pub type Deferred = Box<dyn FnOnce() + Send>;

thread_local! {
    static HERE: RefCell<Option<Vec<Deferred>>> = const { RefCell::new(None) };
}

/// Runs `read`; what is [deferred](defer) during it runs here, right after it. Inside another
/// `reading` on this thread, the outer one runs it.
pub fn reading<R>(read: impl FnOnce() -> R) -> R {
    let outer = HERE.with(|here| {
        let mut here = here.borrow_mut();
        let outer = here.is_some();
        if !outer {
            *here = Some(Vec::new());
        }
        outer
    });
    if outer {
        return read();
    }
    // Dropped on unwinding too: a panic in `read` leaves no collector behind, and what it
    // woke still goes on. Each piece of work runs on even if one before it panics (a call left
    // behind would never settle); the first panic is passed on after them, unless one is
    // already unwinding.
    struct Take;
    impl Drop for Take {
        fn drop(&mut self) {
            let woken = HERE.with(|here| here.borrow_mut().take().unwrap_or_default());
            let mut panicked = None;
            for go_on in woken {
                if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(go_on)) {
                    panicked.get_or_insert(panic);
                }
            }
            if let Some(panic) = panicked {
                if !std::thread::panicking() {
                    std::panic::resume_unwind(panic);
                }
            }
        }
    }
    let take = Take;
    let result = read();
    drop(take);
    result
}

/// Whether a read is under way on this thread (work [deferred](defer) now goes on after it).
pub fn active() -> bool {
    HERE.with(|here| here.try_borrow().is_ok_and(|here| here.is_some()))
}

/// Keeps `go_on` for after the read under way on this thread ([`active`]); with none, runs it
/// now.
pub fn defer(go_on: Deferred) {
    let go_on = HERE.with(|here| match here.try_borrow_mut() {
        Ok(mut here) => match here.as_mut() {
            Some(woken) => {
                woken.push(go_on);
                None
            }
            None => Some(go_on),
        },
        Err(_) => Some(go_on),
    });
    if let Some(go_on) = go_on {
        go_on();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn deferred_work_runs_after_the_read_in_order() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let inner = log.clone();
        reading(|| {
            for k in 0..3 {
                let log = inner.clone();
                assert!(active());
                defer(Box::new(move || log.lock().unwrap().push(k)));
            }
            inner.lock().unwrap().push(9);
        });
        assert_eq!(*log.lock().unwrap(), [9, 0, 1, 2]);
    }

    #[test]
    fn outside_a_read_work_runs_at_once() {
        assert!(!active());
        let ran = Arc::new(Mutex::new(Vec::new()));
        let log = ran.clone();
        defer(Box::new(move || log.lock().unwrap().push("at once")));
        assert_eq!(*ran.lock().unwrap(), ["at once"]);
        // Nor is anything deferred during the deferred work itself.
        let log = ran.clone();
        reading(|| {
            defer(Box::new(move || {
                let inner = log.clone();
                log.lock()
                    .unwrap()
                    .push(if active() { "still reading" } else { "after" });
                defer(Box::new(move || {
                    inner.lock().unwrap().push("nested at once")
                }));
            }));
        });
        assert_eq!(*ran.lock().unwrap(), ["at once", "after", "nested at once"]);
    }

    #[test]
    fn a_nested_read_leaves_its_work_to_the_outer_one() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let inner = log.clone();
        reading(|| {
            reading(|| {
                let log = inner.clone();
                defer(Box::new(move || log.lock().unwrap().push("woken")));
            });
            inner.lock().unwrap().push("outer read done");
        });
        assert_eq!(*log.lock().unwrap(), ["outer read done", "woken"]);
    }

    #[test]
    fn a_panicking_read_still_runs_what_it_woke() {
        let ran = Arc::new(Mutex::new(false));
        let flag = ran.clone();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            reading(|| {
                defer(Box::new(move || *flag.lock().unwrap() = true));
                panic!("read failed");
            })
        }));
        assert!(caught.is_err());
        assert!(*ran.lock().unwrap());
        assert!(!active());
    }
}
