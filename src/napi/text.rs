//! Strings across the boundary without V8's UTF-8 passes: text goes to JS as Latin-1 or UTF-16
//! ([`JsText`]), which V8 only copies, and comes from JS as UTF-16 code units (a copy for V8's
//! two-byte strings), converted in Rust.

use ::napi::JsString;
use ::napi::bindgen_prelude::*;

use crate::js_text::{JsText, from_utf16};

pub fn js_string<'env>(env: &'env Env, text: JsText) -> Result<JsString<'env>> {
    match text {
        JsText::Ascii(text) => env.create_string_latin1(text.as_bytes()),
        JsText::Latin1(bytes) => env.create_string_latin1(bytes),
        JsText::Utf16(units) => env.create_string_utf16(units),
    }
}

/// A JS string as Rust text; lone surrogates become U+FFFD, as with napi's UTF-8 conversion.
/// The flag is true when the text is exactly the JS string (nothing was replaced).
pub fn rust_string(value: JsString) -> Result<(String, bool)> {
    let units = value.into_utf16()?;
    // napi writes a terminating NUL after the string's code units.
    let units = units.as_slice();
    Ok(from_utf16(&units[..units.len().saturating_sub(1)]))
}

/// `head + body + tail` as one JS string, where `body` is already in JS. V8 joins long strings
/// without copying them (a rope), so a large unchanged body is never converted back.
pub fn concat<'env>(
    env: &'env Env,
    head: JsText,
    body: JsString<'env>,
    tail: JsText,
) -> Result<JsString<'env>> {
    let string: Function<Unknown, Unknown> = env.get_global()?.get_named_property("String")?;
    let prototype: Object = string.get_named_property("prototype")?;
    let concat: Function<FnArgs<(JsString, JsString)>, JsString> =
        prototype.get_named_property("concat")?;
    let head = js_string(env, head)?;
    let tail = js_string(env, tail)?;
    concat.apply(head, FnArgs::from((body, tail)))
}
