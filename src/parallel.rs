//! Two pieces of work on one long text at once, on two cores.
//!
//! A tool result is scanned for suspicious patterns and wrapped: both read the whole text and
//! neither needs the other. For a long text the scan runs on a short-lived thread of its own
//! while the caller wraps, which takes the scan's time (about 1 ms per MB) off the call where a
//! core is free. Starting a thread costs tens of microseconds, so a text under [`MIN_BYTES`]
//! is not worth one; and at most one fewer such threads than the machine has cores run at
//! once, so a busy host is not oversubscribed: beyond that the work runs one piece after the
//! other on the caller's thread, as it always did.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// The shortest text worth a second thread.
pub const MIN_BYTES: usize = 256 << 10;

/// `(aside(), here())`: `aside` on a thread of its own while `here` runs on the caller's
/// thread, when `bytes` (the length of the text both work on) is at least [`MIN_BYTES`] and a
/// core is free; else one after the other. A panic in either reaches the caller.
pub fn both<A, RA, B, RB>(bytes: usize, aside: A, here: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    RA: Send,
    B: FnOnce() -> RB,
{
    both_within(&ASIDE, spare_cores(), bytes, aside, here)
}

fn spare_cores() -> usize {
    static SPARE: OnceLock<usize> = OnceLock::new();
    *SPARE.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, usize::from)
            .saturating_sub(1)
    })
}

/// Threads started by [`both`] and not yet joined.
static ASIDE: AtomicUsize = AtomicUsize::new(0);

/// A claim on one of `limit` threads counted by `.0`.
struct Claim<'a>(&'a AtomicUsize);

impl<'a> Claim<'a> {
    fn take(count: &'a AtomicUsize, limit: usize) -> Option<Self> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            })
            .ok()
            .map(|_| Claim(count))
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

fn both_within<A, RA, B, RB>(
    count: &AtomicUsize,
    limit: usize,
    bytes: usize,
    aside: A,
    here: B,
) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    RA: Send,
    B: FnOnce() -> RB,
{
    let claim = if bytes >= MIN_BYTES {
        Claim::take(count, limit)
    } else {
        None
    };
    let Some(_claim) = claim else {
        let a = aside();
        return (a, here());
    };
    // Taken by the thread, or back here if it could not be started.
    let aside = Mutex::new(Some(aside));
    let take = || aside.lock().unwrap_or_else(|p| p.into_inner()).take();
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("mcp-native-scan".into())
            .spawn_scoped(scope, || take().map(|work| work()));
        let b = here();
        let a = match thread.map(|thread| thread.join()) {
            Ok(Ok(Some(a))) => a,
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            // Not started: the work is still here.
            Ok(Ok(None)) | Err(_) => take().map(|work| work()).expect("the work is run once"),
        };
        (a, b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread::{ThreadId, current};

    fn threads(count: &AtomicUsize, limit: usize, bytes: usize) -> (ThreadId, ThreadId) {
        both_within(count, limit, bytes, || current().id(), || current().id())
    }

    #[test]
    fn a_long_text_is_worked_on_two_threads_while_a_core_is_free() {
        let count = AtomicUsize::new(0);
        let (aside, here) = threads(&count, 1, MIN_BYTES);
        assert_ne!(aside, here);
        assert_eq!(here, current().id());
        let (aside, here) = threads(&count, 1, MIN_BYTES - 1);
        assert_eq!(aside, here);
        // No core to spare, or the one there is busy: one after the other.
        let (aside, here) = threads(&count, 0, usize::MAX);
        assert_eq!(aside, here);
        let (aside, here) = both_within(
            &count,
            1,
            MIN_BYTES,
            || current().id(),
            || threads(&count, 1, MIN_BYTES),
        );
        assert_ne!(aside, here.0);
        assert_eq!(here.0, here.1);
        assert_eq!(count.load(Ordering::Acquire), 0);
    }

    #[test]
    fn the_results_and_a_panic_reach_the_caller() {
        let count = AtomicUsize::new(0);
        let text = "x".repeat(MIN_BYTES);
        let (a, b) = both_within(&count, 1, text.len(), || text.len(), || text.as_str());
        assert_eq!((a, b), (MIN_BYTES, text.as_str()));
        let panicked = std::panic::catch_unwind(|| {
            both_within(&count, 1, MIN_BYTES, || panic!("scan failed"), || 1)
        });
        assert!(panicked.is_err());
        assert_eq!(count.load(Ordering::Acquire), 0);
    }
}
