//! `manager.on(event, listener)` / `off(event, listener)`: listeners kept in a small JS emitter
//! (so `off` finds a listener by identity, as in Node's own emitters), fed from Rust through one
//! weak threadsafe function made when the first listener arrives. A listener never keeps Node
//! alive, and one that throws is skipped without reaching the manager.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use ::napi::bindgen_prelude::*;
use ::napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use serde_json::{Value, json};

use crate::events::{Event, EventKind, EventSink};

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
      if (list === undefined) return false;
      const i = list.lastIndexOf(fn);
      if (i < 0) return false;
      list.splice(i, 1);
      return true;
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
    /// Listeners of each kind (in [`EventKind::ALL`]'s order): an event nobody listens to is
    /// not even built, nor does it wake the JS thread (a gateway's CLI listening to `status`
    /// got every call's `toolCall` event sent to it).
    listening: [AtomicUsize; EventKind::ALL.len()],
}

fn slot(kind: EventKind) -> usize {
    EventKind::ALL.iter().position(|k| *k == kind).unwrap_or(0)
}

impl EventSink for JsEventSink {
    fn wants(&self, kind: EventKind) -> bool {
        self.listening[slot(kind)].load(Ordering::Relaxed) > 0
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
        let Some(kind) = EventKind::named(&name) else {
            return Err(Error::new(
                Status::InvalidArg,
                format!(
                    "{method}: event must be one of {}",
                    EventKind::ALL.map(|k| format!("'{}'", k.name())).join(", ")
                ),
            ));
        };
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
        let change: Function<FnArgs<(String, Unknown)>, Unknown> =
            emitter.get_named_property(method)?;
        let changed = change
            .bind(&emitter)?
            .call(FnArgs::from((name, listener)))?;
        let count = &self.sink.listening[slot(kind)];
        if method == "on" {
            count.fetch_add(1, Ordering::Relaxed);
        } else if changed.get_type()? == ValueType::Boolean && unsafe { changed.cast::<bool>()? } {
            count.fetch_sub(1, Ordering::Relaxed);
        }
        Ok(())
    }
}
