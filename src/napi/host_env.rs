//! Node's `process.env` (the JS object, which a gateway or a test may have replaced) as the
//! core's [`HostEnvironment`]: read on the JS thread when asked, through a weak threadsafe
//! function for restarts, so an idle manager never keeps Node alive.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ::napi::bindgen_prelude::*;
use ::napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

use crate::host_env::HostEnvironment;
use crate::secrets::EnvSource;

/// `process.env` as JSON text: every enumerable key whose value is not `undefined`, as a string
/// (what `child_process.spawn` makes of an `env` object).
const READ_ENV: &str = "(function () { const e = process.env, o = {}; \
    for (const k in e) { const v = e[k]; if (v !== undefined) o[k] = String(v); } \
    return JSON.stringify(o); })";

/// How long a restart waits for the JS thread before it uses the last environment it saw.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

type ReadFn = ThreadsafeFunction<(), String, (), Status, false, true>;

/// The reader compiled once per manager (or per call, for the free functions).
pub fn reader<'env>(env: &'env Env) -> Result<Function<'env, (), String>> {
    env.run_script(READ_ENV)
}

/// `process.env` now; this process's own environment when it cannot be read.
pub fn read_now(read: &Function<(), String>) -> EnvSource {
    match read.call(()) {
        Ok(text) => parse(&text).unwrap_or(EnvSource::Process),
        Err(_) => EnvSource::Process,
    }
}

fn parse(text: &str) -> Option<EnvSource> {
    let vars: BTreeMap<String, String> = serde_json::from_str(text).ok()?;
    Some(EnvSource::Fixed(Arc::new(vars)))
}

pub struct JsEnvironment {
    read: ReadFn,
    /// The last environment read, for when the JS thread cannot answer.
    last: Mutex<EnvSource>,
}

impl JsEnvironment {
    pub fn new(read: &Function<(), String>) -> Result<Self> {
        Ok(Self {
            read: read
                .build_threadsafe_function::<()>()
                .weak::<true>()
                .build()?,
            last: Mutex::new(EnvSource::Process),
        })
    }

    /// Records what a read on the JS thread saw.
    pub fn remember(&self, env: &EnvSource) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = env.clone();
    }

    fn last(&self) -> EnvSource {
        self.last.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl HostEnvironment for JsEnvironment {
    fn current(&self) -> Pin<Box<dyn Future<Output = EnvSource> + Send + '_>> {
        Box::pin(async move {
            let (tx, rx) = tokio::sync::oneshot::channel();
            // The JS thread only reads; the text is parsed here.
            let status = self.read.call_with_return_value(
                (),
                ThreadsafeFunctionCallMode::NonBlocking,
                move |text: Result<String>, _env| {
                    let _ = tx.send(text.ok());
                    Ok(())
                },
            );
            if status != Status::Ok {
                return self.last();
            }
            let read = tokio::time::timeout(READ_TIMEOUT, rx).await;
            let text = read.ok().and_then(|received| received.ok()).flatten();
            match text.and_then(|t| parse(&t)) {
                Some(env) => {
                    self.remember(&env);
                    env
                }
                None => self.last(),
            }
        })
    }
}
