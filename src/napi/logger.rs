//! The JS `logger` option as a [`LogSink`]: one weak threadsafe function per method, so a
//! logger never keeps Node alive, called without waiting, with any exception it throws ignored.

use ::napi::bindgen_prelude::*;
use ::napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

use crate::log::{Level, LogSink};

type LogFn = ThreadsafeFunction<String, (), String, Status, false, true>;

pub struct JsLogSink {
    debug: Option<LogFn>,
    info: Option<LogFn>,
    warn: Option<LogFn>,
    error: Option<LogFn>,
}

impl JsLogSink {
    /// Picks up whichever of `debug`/`info`/`warn`/`error` the object has, bound to it.
    pub fn from_object(logger: &Object) -> Result<Self> {
        let method = |name: &str| -> Result<Option<LogFn>> {
            let Some(value) = logger.get::<Unknown>(name)? else {
                return Ok(None);
            };
            if value.get_type()? != ValueType::Function {
                return Ok(None);
            }
            let func: Function<String, ()> = unsafe { value.cast()? };
            let bound = func.bind(logger)?;
            Ok(Some(
                bound
                    .build_threadsafe_function::<String>()
                    .weak::<true>()
                    .build()?,
            ))
        };
        Ok(Self {
            debug: method("debug")?,
            info: method("info")?,
            warn: method("warn")?,
            error: method("error")?,
        })
    }
}

impl JsLogSink {
    fn method(&self, level: Level) -> Option<&LogFn> {
        match level {
            Level::Debug => self.debug.as_ref(),
            Level::Info => self.info.as_ref(),
            Level::Warn => self.warn.as_ref(),
            Level::Error => self.error.as_ref(),
        }
    }
}

impl LogSink for JsLogSink {
    fn wants(&self, level: Level) -> bool {
        self.method(level).is_some()
    }

    fn log(&self, level: Level, message: &str) {
        if let Some(func) = self.method(level) {
            func.call_with_return_value(
                message.to_owned(),
                ThreadsafeFunctionCallMode::NonBlocking,
                |_result, _env| Ok(()),
            );
        }
    }
}
