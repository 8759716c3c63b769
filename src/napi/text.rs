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
pub fn rust_string(value: JsString) -> Result<String> {
    let units = value.into_utf16()?;
    // napi writes a terminating NUL after the string's code units.
    let units = units.as_slice();
    Ok(from_utf16(&units[..units.len().saturating_sub(1)]))
}

/// A function result that becomes a JS string.
pub struct Text(pub JsText);

impl ToNapiValue for Text {
    unsafe fn to_napi_value(env: sys::napi_env, value: Self) -> Result<sys::napi_value> {
        Ok(js_string(&Env::from_raw(env), value.0)?.raw())
    }
}
