//! `hooks: { beforeToolCall?, afterToolCall? }` for the core: each JS hook behind an adapter
//! that always returns a promise of JSON text (or `null`), so a sync hook, an async one and one
//! that throws all arrive in Rust as one settled future; called through a weak threadsafe
//! function, so a hook never keeps Node alive.

use std::sync::Arc;

use ::napi::bindgen_prelude::*;
use ::napi::threadsafe_function::ThreadsafeFunction;

use crate::hooks::{Hook, HookAnswer, Hooks};

/// `(hook) => (text) => Promise<string | null>`: the argument is `{ ctx }` or `{ ctx, result }`
/// as JSON; the hook is called as `hook(ctx)` or `hook(ctx, result)`; its answer goes back as
/// JSON (`null` for `undefined`); a throw or a rejection becomes a rejection with its message.
const ADAPTER: &str = r#"(function (hook, after) {
  'use strict';
  const parse = JSON.parse, stringify = JSON.stringify;
  return function (text) {
    return Promise.resolve()
      .then(() => {
        const arg = parse(text);
        return after ? hook(arg.ctx, arg.result) : hook(arg.ctx);
      })
      .then(
        (answer) => (answer === undefined || answer === null ? null : stringify(answer)),
        (e) => { throw new Error(e instanceof Error ? e.message : String(e)); },
      );
  };
})"#;

type HookFn = ThreadsafeFunction<String, Promise<Option<String>>, String, Status, false, true>;

/// The hooks of a `hooks` option object; a member that is not a function is an error naming it.
pub fn from_object(env: &Env, hooks: &Object) -> Result<Hooks> {
    let hook = |name: &str, after: bool| -> Result<Option<Hook>> {
        let Some(value) = hooks.get::<Unknown>(name)? else {
            return Ok(None);
        };
        match value.get_type()? {
            ValueType::Undefined | ValueType::Null => return Ok(None),
            ValueType::Function => {}
            _ => {
                return Err(Error::new(
                    Status::InvalidArg,
                    format!(
                        "Invalid hooks.{name}: expected a function, got {}",
                        super::type_name(&value)
                    ),
                ));
            }
        }
        let adapter: Function<FnArgs<(Unknown, bool)>, Function<String, Promise<Option<String>>>> =
            env.run_script(ADAPTER)?;
        let adapted = adapter.call(FnArgs::from((value, after)))?;
        let tsfn: HookFn = adapted
            .build_threadsafe_function::<String>()
            .weak::<true>()
            .build()?;
        let tsfn = Arc::new(tsfn);
        let hook: Hook = Arc::new(move |argument: String| -> HookAnswer {
            let tsfn = tsfn.clone();
            Box::pin(async move {
                let promise = tsfn
                    .call_async_catch(argument)
                    .await
                    .map_err(|e| e.reason.clone())?;
                promise.await.map_err(|e| e.reason.clone())
            })
        });
        Ok(Some(hook))
    };
    Ok(Hooks {
        before: hook("beforeToolCall", false)?,
        after: hook("afterToolCall", true)?,
    })
}
