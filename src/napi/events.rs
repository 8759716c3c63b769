//! `manager.on(event, listener)` / `off(event, listener)`: listeners kept in a small JS emitter
//! (so `off` finds a listener by identity, as in Node's own emitters), fed from Rust through one
//! weak threadsafe function made when the first listener arrives. A listener never keeps Node
//! alive, and one that throws is skipped without reaching the manager.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use ::napi::bindgen_prelude::*;
use ::napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use serde_json::{Value, json};

use crate::events::{Event, EventSink};

/// The names a listener may subscribe to.
pub const EVENT_NAMES: [&str; 6] = [
    "status",
    "toolsChanged",
    "toolCall",
    "serverLog",
    "toolDefinitionChanged",
    "toolFlagged",
];

/// `(manager) => { on, off, emit }`: the manager's emitter, made at its first use and kept on
/// the manager object itself (a non-enumerable property), so it lives and dies with it.
/// `emit` takes `{ name, payload }`.
const EMITTER: &str = r#"(function (manager) {
  'use strict';
  const key = '__mcpNativeEvents';
  if (Object.prototype.hasOwnProperty.call(manager, key)) return manager[key];
  const listeners = new Map();
  const emitter = {
    on(name, fn) {
      let list = listeners.get(name);
      if (list === undefined) listeners.set(name, (list = []));
      list.push(fn);
    },
    off(name, fn) {
      const list = listeners.get(name);
      if (list === undefined) return;
      const i = list.lastIndexOf(fn);
      if (i >= 0) list.splice(i, 1);
    },
    emit(event) {
      const list = listeners.get(event.name);
      if (list === undefined) return;
      for (const fn of list.slice()) {
        try { fn(event.payload); } catch (_) { /* a listener's failure is its own */ }
      }
    },
  };
  Object.defineProperty(manager, key, { value: emitter });
  return emitter;
})"#;

type EmitFn = ThreadsafeFunction<Value, (), Value, Status, false, true>;

/// The Rust side: events become `{ name, payload }` calls of the emitter's `emit`.
#[derive(Default)]
pub struct JsEventSink {
    emit: OnceLock<EmitFn>,
    /// Some listener was ever added (until then no event is even built).
    listening: AtomicBool,
}

impl EventSink for JsEventSink {
    fn wants(&self) -> bool {
        self.listening.load(Ordering::Relaxed)
    }

    fn emit(&self, event: Event) {
        if let Some(emit) = self.emit.get() {
            let call = json!({ "name": event.name(), "payload": event.payload() });
            emit.call(call, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

/// A manager's listeners.
pub struct Listeners {
    sink: Arc<JsEventSink>,
}

impl Listeners {
    pub fn new(sink: Arc<JsEventSink>) -> Self {
        Self { sink }
    }

    /// `on` or `off` on `manager` (the JS object), after checking the arguments (a bad one
    /// throws, naming it).
    pub fn change(
        &self,
        env: &Env,
        manager: Object,
        method: &str,
        event: Unknown,
        listener: Unknown,
    ) -> Result<()> {
        let name = match event.get_type()? {
            ValueType::String => String::from_unknown(event)?,
            _ => String::new(),
        };
        if !EVENT_NAMES.contains(&name.as_str()) {
            return Err(Error::new(
                Status::InvalidArg,
                format!(
                    "{method}: event must be one of {}",
                    EVENT_NAMES.map(|n| format!("'{n}'")).join(", ")
                ),
            ));
        }
        if listener.get_type()? != ValueType::Function {
            return Err(Error::new(
                Status::InvalidArg,
                format!(
                    "{method}: listener must be a function, got {}",
                    super::type_name(&listener)
                ),
            ));
        }
        let emitter_of: Function<Object, Object> = env.run_script(EMITTER)?;
        let emitter = emitter_of.call(manager)?;
        if method == "on" && self.sink.emit.get().is_none() {
            let emit: Function<Value, ()> = emitter.get_named_property("emit")?;
            let emit = emit
                .bind(&emitter)?
                .build_threadsafe_function::<Value>()
                .weak::<true>()
                .build()?;
            let _ = self.sink.emit.set(emit);
        }
        let change: Function<FnArgs<(String, Unknown)>, ()> = emitter.get_named_property(method)?;
        change
            .bind(&emitter)?
            .call(FnArgs::from((name, listener)))?;
        if method == "on" {
            self.sink.listening.store(true, Ordering::Relaxed);
        }
        Ok(())
    }
}
