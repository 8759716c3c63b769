//! What the end of a JS environment stops.
//!
//! A worker thread that exits (or is terminated) tears its environment down while the addon
//! stays loaded for the other threads, and the tokio runtime with it. Nothing can then await
//! `shutdown()` or `close()`, and the JS objects are not finalized in a way that reaches the
//! core (tasks hold the core's `Arc`s). So every object that runs something for its environment
//! (a manager's servers, a server host's listener) registers its stop here, and the
//! environment's cleanup hook runs it: the servers are stopped and their process groups
//! killed on the runtime, as a `shutdown()` would.
//!
//! The hook holds what it stops (a token clone, a few `Arc`s), until the environment ends even
//! when the object was collected before: hooks cannot be removed from a finalizer, which Node
//! runs after the cleanup hooks at teardown, when the hook's data is already gone.

use ::napi::bindgen_prelude::{Env, Result};
use tokio_util::sync::CancellationToken;

/// Cancels `token` when `env` is torn down.
pub fn cancel_on_teardown(env: &Env, token: CancellationToken) -> Result<()> {
    on_teardown(env, move || token.cancel())
}

/// Runs `stop` on the JS thread when `env` is torn down (it must not call into JS: the
/// environment is ending).
pub fn on_teardown(env: &Env, stop: impl FnOnce() + 'static) -> Result<()> {
    env.add_env_cleanup_hook(stop, |stop| stop())?;
    Ok(())
}
