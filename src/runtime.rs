//! The tokio runtime the addon runs on: one worker fewer than the machine has cores, and at
//! least one.
//!
//! In Node the JS thread is always one of the busy threads: it converts every argument and
//! result and settles every call. A worker per core besides it leaves more threads wanting a
//! core than there are cores, and the workers then hand calls to each other and wake each
//! other up (on two cores, two workers took 7.4 µs of CPU per call at 64 calls in flight,
//! one worker 5.7; `bench/prof/threads.mjs`). The JS thread plus the workers make one
//! thread per core. `TOKIO_WORKER_THREADS`, when set, still decides, as in any tokio runtime.

/// The number of workers for a machine with `cores` cores.
pub fn workers(cores: usize) -> usize {
    cores.saturating_sub(1).max(1)
}

/// A multi-threaded runtime with [`workers`] workers (or `TOKIO_WORKER_THREADS`), all drivers
/// enabled.
pub fn build() -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        builder.worker_threads(workers(cores));
    }
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_core_is_left_to_the_js_thread() {
        assert_eq!(workers(0), 1);
        assert_eq!(workers(1), 1);
        assert_eq!(workers(2), 1);
        assert_eq!(workers(3), 2);
        assert_eq!(workers(16), 15);
    }

    #[test]
    fn the_runtime_runs_tasks() {
        let runtime = build().unwrap();
        assert_eq!(
            runtime.block_on(async { tokio::spawn(async { 7 }).await.unwrap() }),
            7
        );
    }
}
