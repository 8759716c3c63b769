//! Tool results built by one JS function made once per environment, instead of field by
//! field through napi.
//!
//! Field by field was about twenty napi calls per result, each property name copied to a C
//! string and looked up in V8's string table, and each property *assigned*: a setter user code
//! put on `Object.prototype` (for `text`, `content`, …) ran, and the property was then missing
//! from the result. One call of a function whose body is object literals makes the same object
//! from V8's boilerplates, defining own properties only: faster (with many calls in flight the
//! JS thread is what bounds them), and nothing user code changes reaches it. The rarer parts
//! (images, `structuredContent`, hygiene, suspicious findings) come as one JSON text, read by
//! the `JSON.parse` captured when the builder was made, and are defined, never assigned.

use ::napi::bindgen_prelude::*;

use crate::tool_result::EXTERNAL_SOURCE;

/// What the environment's instance data holds: a reference to the builder.
struct Builder(sys::napi_ref);

fn source() -> String {
    let source = serde_json::to_string(EXTERNAL_SOURCE).unwrap_or_default();
    format!(
        r#"(function () {{
  'use strict';
  const parse = JSON.parse, define = Object.defineProperty, hasOwn = Object.hasOwn;
  const put = (o, k, v) => define(o, k, {{ value: v, writable: true, enumerable: true, configurable: true }});
  return function (text, server, tool, extra) {{
    const content = [{{ type: 'text', text: text }}];
    const details = server === undefined ? {{ error: true }}
      : {{ externalContent: {{ untrusted: true, source: {source}, server: server, tool: tool, wrapped: true }} }};
    if (extra !== undefined) {{
      const x = parse(extra), images = x.images;
      for (let i = 0; i < images.length; i++) {{
        put(content, i + 1, {{ type: 'image', data: images[i][0], mimeType: images[i][1] }});
      }}
      if (hasOwn(x, 'structured')) put(details, 'structuredContent', x.structured);
      if (x.error === true) put(details, 'error', true);
      if (hasOwn(x, 'hygiene')) put(details, 'hygiene', x.hygiene);
      if (hasOwn(x, 'suspicious')) put(details, 'suspicious', x.suspicious);
    }}
    return {{ content: content, details: details }};
  }};
}})()"#
    )
}

/// `{ content: [{ type: 'text', text }, …images], details }` as `ToolCallResult::to_json`
/// shows it: `details.externalContent` for `external` (`(server, tool)`), else `error: true`;
/// `extra` the JSON text of `{ images: [[data, mimeType]…], structured?, error, hygiene?,
/// suspicious? }` when there is any of those.
pub fn tool_result(
    env: &Env,
    text: sys::napi_value,
    external: Option<(&str, &str)>,
    extra: Option<&str>,
) -> Result<sys::napi_value> {
    let builder = builder(env)?;
    let mut undefined = std::ptr::null_mut();
    // SAFETY: plain napi call on the JS thread with a valid out-pointer.
    unsafe { check(sys::napi_get_undefined(env.raw(), &mut undefined))? };
    let (server, tool) = match external {
        Some((server, tool)) => (
            env.create_string(server)?.raw(),
            env.create_string(tool)?.raw(),
        ),
        None => (undefined, undefined),
    };
    let extra = match extra {
        Some(extra) => env.create_string(extra)?.raw(),
        None => undefined,
    };
    let args = [text, server, tool, extra];
    let mut result = std::ptr::null_mut();
    // SAFETY: plain napi call on the JS thread with valid handles and out-pointers.
    unsafe {
        check(sys::napi_call_function(
            env.raw(),
            undefined,
            builder,
            args.len(),
            args.as_ptr(),
            &mut result,
        ))?;
    }
    Ok(result)
}

/// The environment's builder, made on first use.
fn builder(env: &Env) -> Result<sys::napi_value> {
    let reference = match env.get_instance_data::<Builder>()? {
        Some(builder) => builder.0,
        None => {
            let function: Unknown = env.run_script(source())?;
            let mut reference = std::ptr::null_mut();
            // SAFETY: a valid function handle; the reference lives as long as the environment
            // (its instance data is never replaced).
            unsafe {
                check(sys::napi_create_reference(
                    env.raw(),
                    function.raw(),
                    1,
                    &mut reference,
                ))?
            };
            env.set_instance_data(Builder(reference), (), |_| {})?;
            reference
        }
    };
    let mut function = std::ptr::null_mut();
    // SAFETY: the reference is strong and belongs to this environment.
    unsafe {
        check(sys::napi_get_reference_value(
            env.raw(),
            reference,
            &mut function,
        ))?
    };
    Ok(function)
}

fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(
            Status::from(status),
            "building a tool result failed",
        ))
    }
}
