//! Strings across the boundary without V8's UTF-8 passes: text goes to JS as Latin-1 or UTF-16
//! ([`JsText`]), which V8 only copies, or for a long text keeps where it is (an external
//! string), and comes from JS as UTF-16 code units (a copy for V8's two-byte strings), converted
//! in Rust.

use std::ffi::{CStr, c_void};
use std::sync::OnceLock;

use ::napi::JsString;
use ::napi::bindgen_prelude::*;

use crate::js_text::{JsText, from_utf16};

pub fn js_string<'env>(env: &'env Env, text: JsText) -> Result<JsString<'env>> {
    match text {
        JsText::Ascii(text) => latin1(env, text.into_bytes()),
        JsText::Latin1(bytes) => latin1(env, bytes),
        JsText::Utf16(units) => utf16(env, units),
    }
}

/// From this many bytes a text is handed to V8 as an external string: V8 keeps the buffer the
/// text was converted into, where a copy would take a fresh allocation in its heap (for a long
/// text, pages that fault in one by one on the JS thread), and the buffer is freed when the
/// string is collected. Shorter texts are copied, which costs less than an external string's
/// bookkeeping.
const EXTERNAL_FROM_BYTES: usize = 64 << 10;

/// Up to this many characters: V8 refuses a longer string, and disposes of what it was given
/// itself when it does, so an external string never comes near its limit (2^29 - 24).
const EXTERNAL_UP_TO: usize = 1 << 28;

fn latin1(env: &Env, bytes: Vec<u8>) -> Result<JsString<'_>> {
    static CREATE: OnceLock<Option<CreateExternal<u8>>> = OnceLock::new();
    let create = CREATE.get_or_init(|| node_api(c"node_api_create_external_string_latin1"));
    match external(env, *create, bytes) {
        // SAFETY: a string value Node just made in this env.
        Ok(value) => unsafe { JsString::from_napi_value(env.raw(), value) },
        Err(bytes) => env.create_string_latin1(&bytes),
    }
}

fn utf16(env: &Env, units: Vec<u16>) -> Result<JsString<'_>> {
    static CREATE: OnceLock<Option<CreateExternal<u16>>> = OnceLock::new();
    let create = CREATE.get_or_init(|| node_api(c"node_api_create_external_string_utf16"));
    match external(env, *create, units) {
        // SAFETY: a string value Node just made in this env.
        Ok(value) => unsafe { JsString::from_napi_value(env.raw(), value) },
        Err(units) => env.create_string_utf16(&units),
    }
}

/// `node_api_create_external_string_latin1` / `_utf16` (Node 20.4+, 18.18+).
type CreateExternal<T> = unsafe extern "C" fn(
    sys::napi_env,
    *mut T,
    isize,
    sys::napi_finalize,
    *mut c_void,
    *mut sys::napi_value,
    *mut bool,
) -> sys::napi_status;

/// The Node-API function `name` when the running Node has it. Looked up at run time: linking
/// it would make the addon fail to load (or abort at the first call) on a Node without it,
/// and napi-rs declares it only with its `napi10` feature, which would require it everywhere.
#[cfg(unix)]
fn node_api<T>(name: &CStr) -> Option<CreateExternal<T>> {
    // SAFETY: `dlsym` with `RTLD_DEFAULT` looks `name` up among the process's global symbols,
    // where Node's own N-API functions are; a symbol of that name has the signature Node's
    // `node_api.h` declares for it, which `CreateExternal` spells out.
    unsafe {
        let symbol = libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr());
        (!symbol.is_null()).then(|| std::mem::transmute::<*mut c_void, CreateExternal<T>>(symbol))
    }
}

/// (Windows: not looked up; long texts are copied, as before.)
#[cfg(not(unix))]
fn node_api<T>(_name: &CStr) -> Option<CreateExternal<T>> {
    None
}

/// `data` as an external string, or back when it is short, too long, or Node has no external
/// strings (or refused this one).
fn external<T, B: AsRef<[T]> + 'static>(
    env: &Env,
    create: Option<CreateExternal<T>>,
    data: B,
) -> std::result::Result<sys::napi_value, B> {
    let len = data.as_ref().len();
    let bytes = std::mem::size_of_val(data.as_ref());
    let Some(create) = create.filter(|_| bytes >= EXTERNAL_FROM_BYTES && len <= EXTERNAL_UP_TO)
    else {
        return Err(data);
    };
    // The box is the finalizer's hint; moving `data` into it leaves its buffer where it is.
    let data = Box::into_raw(Box::new(data));
    // SAFETY: `data` was just made from a box and is not freed before the call returns.
    let chars = unsafe { (*data).as_ref().as_ptr() };
    let mut value = std::ptr::null_mut();
    let mut copied = false;
    // SAFETY: `chars` points to `len` characters that stay put until `release` frees them,
    // which Node calls once: when the string is collected, or before returning if it copied
    // them. V8 only reads them (the API takes `*mut` for no reason of ours).
    let status = unsafe {
        create(
            env.raw(),
            chars.cast_mut(),
            len as isize,
            Some(release::<B>),
            data.cast(),
            &mut value,
            &mut copied,
        )
    };
    if status != sys::Status::napi_ok {
        // Refused before V8 was given the buffer (its length is within V8's limit, the one
        // refusal after that), so the finalizer will not run: the text is still ours.
        // SAFETY: `data` came from `Box::into_raw` above and nothing else owns it.
        return Err(*unsafe { Box::from_raw(data) });
    }
    Ok(value)
}

/// Frees an external string's text once V8 no longer needs it.
unsafe extern "C" fn release<B>(_env: sys::napi_env, _data: *mut c_void, hint: *mut c_void) {
    // SAFETY: `hint` is the box `external` made, which Node hands to this finalizer once.
    drop(unsafe { Box::from_raw(hint.cast::<B>()) });
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
