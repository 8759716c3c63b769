//! The invariants of every parser that reads untrusted input, written once and checked by two
//! drivers: the property tests (`tests/fuzz_props.rs`, structured inputs from proptest) and the
//! coverage-guided fuzz targets (`fuzz/fuzz_targets/*.rs`, raw bytes from libFuzzer). Each
//! `check_*` panics, naming the broken invariant and the input, when one does not hold.
//!
//! The reference models here are written independently of the code under test (a JSON
//! validator, an event-stream line splitter, a look-alike fold and the marker regexes, the
//! encoders a server might use on a secret); where they repeat a rule, it is one the module
//! documents as its contract.

#![allow(dead_code)]

use std::collections::{HashMap, HashSet, VecDeque};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use serde_json::Value;

/// Panics with the invariant and a readable excerpt of the input.
macro_rules! broken {
    ($($arg:tt)*) => {
        panic!("invariant broken: {}", format!($($arg)*))
    };
}

/// Whether to check the invariants that open defects still break (the ignored tests at the end of tests/fuzz_props.rs):
/// `FUZZ_OPEN_DEFECTS=1`. Off by default so the suites stay green until they are fixed; each
/// such check names its defect, and tests/fuzz_props.rs has an ignored regression test per
/// defect that fails today.
pub fn open_defects() -> bool {
    std::env::var_os("FUZZ_OPEN_DEFECTS").is_some_and(|v| v != "0")
}

/// At most `n` characters of `s`, for messages.
pub fn excerpt(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        out.push('…');
    }
    out
}

fn contains_bytes(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && memchr::memmem::find(hay, needle).is_some()
}

// =====================================================================================
// A validating JSON scanner (no depth limit), for the stdio and JSON-RPC oracles.
// =====================================================================================

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonKind {
    Object,
    Array,
    String,
    Number,
    Literal,
}

/// One member of a top-level object: its key as written (between the quotes, escapes not
/// decoded) and, for a scalar, where its raw text is.
#[derive(Debug, Clone)]
pub struct TopMember {
    pub key: Vec<u8>,
    pub kind: JsonKind,
    pub raw: std::ops::Range<usize>,
}

#[derive(Debug, Clone)]
pub struct JsonInfo {
    /// Deepest container nesting (the root object or array is 1).
    pub depth: usize,
    /// The members of the root, when it is an object.
    pub members: Option<Vec<TopMember>>,
    /// Some object, at any depth, has a key twice (serde's structs reject that; `JSON.parse`
    /// keeps the last).
    pub duplicate_keys: bool,
}

struct Scan<'a> {
    s: &'a [u8],
    i: usize,
}

impl Scan<'_> {
    fn ws(&mut self) {
        while matches!(self.s.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.s.get(self.i) == Some(&b)).then(|| self.i += 1)
    }

    /// A string starting at the opening quote; returns the raw contents.
    fn string(&mut self) -> Option<std::ops::Range<usize>> {
        self.eat(b'"')?;
        let start = self.i;
        loop {
            let c = *self.s.get(self.i)?;
            match c {
                b'"' => {
                    let range = start..self.i;
                    self.i += 1;
                    return Some(range);
                }
                b'\\' => {
                    let e = *self.s.get(self.i + 1)?;
                    match e {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 2,
                        b'u' => {
                            let hex = self.s.get(self.i + 2..self.i + 6)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            self.i += 6;
                        }
                        _ => return None,
                    }
                }
                0..=0x1F => return None,
                _ => self.i += 1,
            }
        }
    }

    fn number(&mut self) -> Option<()> {
        let digits = |sc: &mut Self| {
            let from = sc.i;
            while sc.s.get(sc.i).is_some_and(u8::is_ascii_digit) {
                sc.i += 1;
            }
            sc.i > from
        };
        let _ = self.eat(b'-');
        match self.s.get(self.i)? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                digits(self);
            }
            _ => return None,
        }
        if self.eat(b'.').is_some() && !digits(self) {
            return None;
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !digits(self) {
                return None;
            }
        }
        Some(())
    }

    fn literal(&mut self) -> Option<()> {
        for word in [&b"true"[..], b"false", b"null"] {
            if self.s[self.i..].starts_with(word) {
                self.i += word.len();
                return Some(());
            }
        }
        None
    }
}

/// Validates `s` as one JSON text (RFC 8259, as serde_json reads it, minus its depth limit).
pub fn json_info(s: &[u8]) -> Option<JsonInfo> {
    let mut p = Scan { s, i: 0 };
    let mut stack: Vec<u8> = Vec::new();
    // The keys seen in each open object (innermost last).
    let mut keys: Vec<HashSet<Vec<u8>>> = Vec::new();
    let mut duplicate_keys = false;
    let mut depth = 0;
    let mut members: Option<Vec<TopMember>> = None;
    // The key of the root member whose value comes next.
    let mut key: Option<Vec<u8>> = None;
    loop {
        // A value.
        p.ws();
        let start = p.i;
        let c = *s.get(p.i)?;
        let mut opened = false;
        match c {
            b'{' | b'[' => {
                p.i += 1;
                if stack.len() == 1
                    && let Some(k) = key.take()
                {
                    members.as_mut()?.push(TopMember {
                        key: k,
                        kind: if c == b'{' {
                            JsonKind::Object
                        } else {
                            JsonKind::Array
                        },
                        raw: start..start,
                    });
                }
                stack.push(c);
                if c == b'{' {
                    keys.push(HashSet::new());
                }
                depth = depth.max(stack.len());
                if stack.len() == 1 && c == b'{' {
                    members = Some(Vec::new());
                }
                p.ws();
                let close = if c == b'{' { b'}' } else { b']' };
                if p.eat(close).is_some() {
                    stack.pop();
                    if c == b'{' {
                        keys.pop();
                    }
                } else {
                    opened = true;
                    if c == b'{' {
                        let k = p.string()?;
                        p.ws();
                        p.eat(b':')?;
                        duplicate_keys |= !keys.last_mut()?.insert(s[k.clone()].to_vec());
                        if stack.len() == 1 {
                            key = Some(s[k].to_vec());
                        }
                    }
                }
            }
            b'"' => {
                p.string()?;
            }
            b'-' | b'0'..=b'9' => p.number()?,
            _ => p.literal()?,
        }
        if opened {
            continue;
        }
        if stack.len() == 1
            && let Some(k) = key.take()
        {
            let kind = match c {
                b'"' => JsonKind::String,
                b'{' => JsonKind::Object,
                b'[' => JsonKind::Array,
                b't' | b'f' | b'n' => JsonKind::Literal,
                _ => JsonKind::Number,
            };
            members.as_mut()?.push(TopMember {
                key: k,
                kind,
                raw: start..p.i,
            });
        }
        // After a value: commas and closing brackets.
        loop {
            p.ws();
            let Some(&open) = stack.last() else {
                return (p.i == s.len()).then_some(JsonInfo {
                    depth,
                    members,
                    duplicate_keys,
                });
            };
            match *s.get(p.i)? {
                b',' => {
                    p.i += 1;
                    if open == b'{' {
                        p.ws();
                        let k = p.string()?;
                        p.ws();
                        p.eat(b':')?;
                        duplicate_keys |= !keys.last_mut()?.insert(s[k.clone()].to_vec());
                        if stack.len() == 1 {
                            key = Some(s[k].to_vec());
                        }
                    }
                    break;
                }
                b'}' if open == b'{' => {
                    p.i += 1;
                    stack.pop();
                    keys.pop();
                }
                b']' if open == b'[' => {
                    p.i += 1;
                    stack.pop();
                }
                _ => return None,
            }
        }
    }
}

/// Equal JSON, floats within a relative 1e-12 (serde_json's default float parsing is not
/// always correctly rounded, which is no concern here).
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, vx), (ky, vy))| kx == ky && same_json(vx, vy))
        }
        _ => a == b,
    }
}

fn is_recursion_error(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("recursion limit exceeded")
}

// =====================================================================================
// stdio framing: transport::stdio_lines::CheckedLines
// =====================================================================================

pub mod stdio {
    use super::*;
    use openclaw_mcp_native::transport::stdio_lines::{CheckedLines, MAX_NESTING, StreamFault};
    use rmcp::model::{JsonRpcMessage, NumberOrString, ServerJsonRpcMessage};
    use tokio::io::{AsyncRead, ReadBuf};

    /// rmcp's reader is given `max + 2` (stdio.rs), a bound that includes the newline: the
    /// longest line it accepts has `max + 1` bytes before the newline.
    pub fn rmcp_accepts(line_len: usize, max: usize) -> bool {
        line_len <= max.saturating_add(1)
    }

    /// Open defect: a line under the limit with invalid UTF-8 grows when it is repaired (each
    /// bad byte becomes the 3-byte U+FFFD) past rmcp's bound, and rmcp then drops the answer
    /// silently (its call waits for the timeout). Checked with [`open_defects`].
    pub fn check_rmcp_line_bound() -> bool {
        open_defects()
    }

    /// The start of the error response that stands in for a response nested too deeply.
    pub const SYNTHETIC_PREFIX: &str = r#"{"jsonrpc":"2.0","id":"#;

    /// A pipe that hands out at most `steps[i]` bytes on its i-th read; a 0 step is one
    /// `Pending` (then the next step), as a pipe with nothing to read yet.
    struct Pipe<'a> {
        data: &'a [u8],
        at: usize,
        steps: &'a [usize],
        reads: usize,
        was_pending: bool,
    }

    impl AsyncRead for Pipe<'_> {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let this = &mut *self;
            let step = if this.steps.is_empty() {
                usize::MAX
            } else {
                this.steps[this.reads % this.steps.len()]
            };
            this.reads += 1;
            if step == 0 && !this.was_pending && this.at < this.data.len() {
                this.was_pending = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            this.was_pending = false;
            let take = (this.data.len() - this.at)
                .min(step.max(1))
                .min(buf.remaining());
            buf.put_slice(&this.data[this.at..this.at + take]);
            this.at += take;
            Poll::Ready(Ok(()))
        }
    }

    /// Everything `CheckedLines` passes on for `input`, read `out_buf` bytes at a time, and
    /// the fault it recorded.
    pub fn read_checked(
        input: &[u8],
        max: usize,
        steps: &[usize],
        out_buf: usize,
    ) -> (Vec<u8>, Option<String>) {
        let fault = StreamFault::default();
        let pipe = Pipe {
            data: input,
            at: 0,
            steps,
            reads: 0,
            was_pending: false,
        };
        let mut lines = CheckedLines::new(pipe, max, fault.clone());
        let mut cx = Context::from_waker(Waker::noop());
        let mut out = Vec::new();
        let mut buf = vec![0u8; out_buf.max(1)];
        let mut pending = 0;
        loop {
            let mut rb = ReadBuf::new(&mut buf);
            match Pin::new(&mut lines).poll_read(&mut cx, &mut rb) {
                Poll::Ready(Ok(())) => {
                    if rb.filled().is_empty() {
                        break;
                    }
                    out.extend_from_slice(rb.filled());
                }
                Poll::Ready(Err(e)) => broken!("the checked reader failed: {e}"),
                Poll::Pending => {
                    // The pipe is pending at most once per read it serves.
                    pending += 1;
                    if pending > 2 * input.len() + 4 {
                        broken!("the checked reader stays pending while its pipe has data");
                    }
                }
            }
        }
        (out, fault.get())
    }

    /// What rmcp makes of one line (as its reader does: a leading BOM and a trailing CR
    /// dropped).
    fn rmcp_decode(line: &str) -> Result<ServerJsonRpcMessage, serde_json::Error> {
        let line = line.strip_prefix('\u{FEFF}').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        serde_json::from_str(line)
    }

    /// The invariants of one line of server output, given what `CheckedLines` made of it
    /// alone (`out`: nothing, or one line with its newline).
    pub fn check_line(line: &[u8], out: &[u8], max: usize) {
        let lossy = String::from_utf8_lossy(line);
        let Ok(out_text) = std::str::from_utf8(out) else {
            broken!(
                "stdio output is not UTF-8 for line {:?}",
                excerpt(&lossy, 80)
            );
        };
        if !out.is_empty() {
            if !out.ends_with(b"\n") || out[..out.len() - 1].contains(&b'\n') {
                broken!("one input line became other than one output line: {out_text:?}");
            }
            if check_rmcp_line_bound() && !rmcp_accepts(out.len() - 1, max) {
                broken!(
                    "a line of {} bytes (limit {max}) was passed on as {} bytes, more than \
                     rmcp's reader takes (it would drop the answer and its call would wait \
                     for the timeout)",
                    line.len(),
                    out.len() - 1
                );
            }
        }
        let unchanged = out.len() == lossy.len() + 1 && out.starts_with(lossy.as_bytes());
        let brackets = lossy.bytes().filter(|b| matches!(b, b'{' | b'[')).count();
        let body = lossy.strip_prefix('\u{FEFF}').unwrap_or(&lossy);
        let info = json_info(body.as_bytes());

        if unchanged {
            // Whatever is passed on, serde_json must not give up on for depth: rmcp would
            // drop it (and the call it answers would wait for its timeout).
            if let Err(e) = serde_json::from_str::<Value>(body)
                && is_recursion_error(&e)
            {
                broken!(
                    "a line nested deeper than the parser goes was passed on unchanged: {:?}",
                    excerpt(&lossy, 120)
                );
            }
            if let Some(info) = &info
                && info.depth > MAX_NESTING
            {
                broken!(
                    "valid JSON {} levels deep was passed on unchanged",
                    info.depth
                );
            }
            return;
        }
        // A line is changed only when rmcp could not read it: nested too deeply, or holding
        // bytes that are not UTF-8 where JSON allows none (then even repaired it is not JSON).
        let repaired_not_json = std::str::from_utf8(line).is_err()
            && serde_json::from_str::<serde::de::IgnoredAny>(body).is_err();
        if brackets <= MAX_NESTING && !repaired_not_json {
            broken!(
                "a line with only {brackets} brackets was changed: {:?} -> {out_text:?}",
                excerpt(&lossy, 120)
            );
        }
        if let Some(info) = &info
            && info.depth <= MAX_NESTING
        {
            broken!(
                "valid JSON {} levels deep (within the limit) was changed: {:?}",
                info.depth,
                excerpt(&lossy, 120)
            );
        }
        if !out.is_empty() && !out_text.starts_with(SYNTHETIC_PREFIX) {
            broken!("a changed line is not the stand-in error response: {out_text:?}");
        }
        // A valid response too deep to parse: its call must fail at once with an error
        // response for the same id; a request or notification is dropped.
        let Some(JsonInfo {
            members: Some(members),
            ..
        }) = &info
        else {
            return;
        };
        let ids: Vec<&TopMember> = members.iter().filter(|m| m.key == b"id").collect();
        let has_method = members.iter().any(|m| m.key == b"method");
        let keys: HashSet<&[u8]> = members.iter().map(|m| m.key.as_slice()).collect();
        if keys.len() != members.len() {
            return; // duplicate keys: serde rejects them anyway
        }
        if has_method {
            if !out.is_empty() {
                broken!("a too-deep request or notification was answered: {out_text:?}");
            }
            return;
        }
        let [id] = ids.as_slice() else { return };
        let raw = &body.as_bytes()[id.raw.clone()];
        let expected = match id.kind {
            JsonKind::Number => match std::str::from_utf8(raw).ok().and_then(|t| t.parse().ok()) {
                Some(n) => NumberOrString::Number(n),
                None => return,
            },
            JsonKind::String if raw.len() <= 256 && !raw.contains(&b'\\') => {
                match std::str::from_utf8(&raw[1..raw.len() - 1]) {
                    Ok(s) => NumberOrString::String(s.into()),
                    Err(_) => return,
                }
            }
            _ => return,
        };
        if out.is_empty() {
            broken!(
                "a response nested {} levels deep, id {expected:?}, was dropped: its call \
                 would wait for the timeout",
                info.as_ref().map_or(0, |i| i.depth)
            );
        }
        match rmcp_decode(out_text.trim_end_matches('\n')) {
            Ok(JsonRpcMessage::Error(e)) if e.id.as_ref() == Some(&expected) => {
                if !e.error.message.contains("nested more than") {
                    broken!(
                        "the stand-in error does not name the limit: {}",
                        e.error.message
                    );
                }
            }
            other => broken!(
                "the stand-in for a too-deep response is not an error for id {expected:?}: \
                 {other:?}"
            ),
        }
    }

    /// Every invariant of `CheckedLines` on `input` (see the module docs of stdio_lines.rs).
    pub fn check(input: &[u8], max: usize, steps: &[usize], out_buf: usize) {
        let max = max.max(1);
        let (whole, whole_fault) = read_checked(input, max, &[], 1 << 16);
        let (split, split_fault) = read_checked(input, max, steps, out_buf);
        if whole != split || whole_fault != split_fault {
            broken!(
                "the output depends on how the pipe splits the input (steps {steps:?}, out \
                 buffer {out_buf})"
            );
        }
        // The stream is the concatenation of its lines, each checked alone, up to the first
        // line over the limit, where it ends naming the limit.
        let mut expected = Vec::new();
        let over;
        let mut rest = input;
        let mut lines = 0;
        loop {
            match memchr::memchr(b'\n', rest) {
                Some(i) => {
                    let line = &rest[..i];
                    rest = &rest[i + 1..];
                    if line.len() > max {
                        over = true;
                        break;
                    }
                    let mut one_input = line.to_vec();
                    one_input.push(b'\n');
                    let (one, fault) = read_checked(&one_input, max, &[], line.len() + 1);
                    if fault.is_some() {
                        broken!("a line within the limit set the fault: {fault:?}");
                    }
                    check_line(line, &one, max);
                    expected.extend_from_slice(&one);
                    lines += 1;
                }
                None => {
                    // An unterminated last line is dropped, unless it is already too long.
                    over = rest.len() > max;
                    break;
                }
            }
        }
        let _ = lines;
        if whole != expected {
            broken!(
                "the stream is not its lines checked one by one:\n got {:?}\nwant {:?}",
                excerpt(&String::from_utf8_lossy(&whole), 200),
                excerpt(&String::from_utf8_lossy(&expected), 200)
            );
        }
        match (&whole_fault, over) {
            (None, false) => {}
            (Some(why), true) if why.contains(&format!("larger than the {max}-byte limit")) => {}
            (fault, over) => broken!("fault {fault:?} but a line over the limit: {over}"),
        }
    }

    /// A response (or an error response) for `id` whose `result` holds `payload`: it reaches
    /// rmcp unchanged and decodes as a response for `id` when nested at most `MAX_NESTING`
    /// levels, and as an error response for `id` naming the limit when deeper.
    pub fn check_response_depth(id: i64, payload: &Value, extra_depth: usize, as_error: bool) {
        let mut nested = serde_json::to_string(payload).expect("serialises");
        for _ in 0..extra_depth {
            nested = format!("[{nested}]");
        }
        let line = if as_error {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32000,"message":"m","data":{nested}}}}}"#
            )
        } else {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"v":{nested}}}}}"#)
        };
        let info = json_info(line.as_bytes()).expect("generated JSON is valid");
        let input = format!("{line}\n");
        let (out, fault) = read_checked(input.as_bytes(), 1 << 20, &[], 1 << 16);
        assert!(fault.is_none());
        check_line(line.as_bytes(), &out, 1 << 20);
        let out = String::from_utf8(out).expect("UTF-8");
        let decoded = rmcp_decode(out.trim_end_matches('\n'));
        let want = NumberOrString::Number(id);
        match decoded {
            Ok(JsonRpcMessage::Response(r)) if info.depth <= MAX_NESTING && !as_error => {
                if r.id != want {
                    broken!("response decoded with id {:?}, sent {want:?}", r.id);
                }
            }
            Ok(JsonRpcMessage::Error(e)) if info.depth <= MAX_NESTING && as_error => {
                if e.id.as_ref() != Some(&want) {
                    broken!("error decoded with id {:?}, sent {want:?}", e.id);
                }
            }
            Ok(JsonRpcMessage::Error(e)) if info.depth > MAX_NESTING => {
                if e.id.as_ref() != Some(&want) || !e.error.message.contains("nested more than") {
                    broken!("too deep ({}) but the stand-in is {e:?}", info.depth);
                }
            }
            other => broken!(
                "a response {} levels deep (limit {MAX_NESTING}) reached the session as \
                 {other:?}",
                info.depth
            ),
        }
    }
}

// =====================================================================================
// JSON-RPC decoding: rmcp's ServerJsonRpcMessage, as the session receives a line
// =====================================================================================

pub mod jsonrpc {
    use super::*;
    use rmcp::model::{JsonRpcMessage, NumberOrString, ServerJsonRpcMessage};

    #[derive(Debug)]
    enum Expect {
        Result(NumberOrString),
        Error(NumberOrString, i64, String),
    }

    /// A response the MCP spec calls well formed: `jsonrpc` "2.0", an integer or string id,
    /// no `method`, and either an object `result` or an `error` with an integer `code` (i32)
    /// and a string `message` (and, checked by the caller, no object with a key twice: serde's
    /// structs reject that where `JSON.parse` keeps the last; a server sending it is broken).
    fn well_formed(obj: &serde_json::Map<String, Value>) -> Option<Expect> {
        if obj.get("jsonrpc")? != "2.0" || obj.contains_key("method") {
            return None;
        }
        let id = match obj.get("id")? {
            Value::Number(n) => NumberOrString::Number(n.as_i64()?),
            Value::String(s) => NumberOrString::String(s.as_str().into()),
            _ => return None,
        };
        match (obj.get("result"), obj.get("error")) {
            (Some(Value::Object(_)), None) => Some(Expect::Result(id)),
            (None, Some(Value::Object(e))) => {
                let code = e.get("code")?.as_i64()?;
                i32::try_from(code).ok()?;
                let message = e.get("message")?.as_str()?.to_owned();
                Some(Expect::Error(id, code, message))
            }
            _ => None,
        }
    }

    /// rmcp reads `bytes` (lossily decoded, BOM and trailing CR dropped, as the session's
    /// reader hands it over) without panicking; a well-formed response (see [`well_formed`])
    /// is decoded as a response for its id (else its call would wait for the timeout); what
    /// rmcp decodes, it can write and read back.
    pub fn check(bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let decoded = serde_json::from_str::<ServerJsonRpcMessage>(text);
        let value = serde_json::from_str::<Value>(text);
        if decoded.is_ok() && value.is_err() {
            broken!(
                "rmcp decoded text that is not JSON: {:?}",
                excerpt(text, 200)
            );
        }
        if let Ok(Value::Object(obj)) = &value
            && let Some(expect) = well_formed(obj)
            && json_info(text.as_bytes()).is_some_and(|i| !i.duplicate_keys)
        {
            match (&decoded, &expect) {
                (Ok(JsonRpcMessage::Response(r)), Expect::Result(id)) if &r.id == id => {}
                (Ok(JsonRpcMessage::Error(e)), Expect::Error(id, code, message))
                    if e.id.as_ref() == Some(id)
                        && i64::from(e.error.code.0) == *code
                        && e.error.message == *message => {}
                (got, _) => broken!(
                    "a well-formed response was not decoded as one (its call would wait for \
                     the timeout): {:?} -> {got:?}",
                    excerpt(text, 300)
                ),
            }
        }
        if let Ok(msg) = decoded {
            let once = serde_json::to_string(&msg).expect("a decoded message serialises");
            if let Err(e) = serde_json::from_str::<ServerJsonRpcMessage>(&once) {
                broken!("rmcp cannot read back what it wrote ({e}): {once}");
            }
        }
    }
}

// =====================================================================================
// SSE: transport::sse_events::Decoder
// =====================================================================================

pub mod sse {
    use super::*;
    use openclaw_mcp_native::transport::sse_events::{Decoder, Event};

    const BOM: &[u8] = b"\xEF\xBB\xBF";

    /// The event-stream format (WHATWG HTML, "Interpreting an event stream") with the
    /// decoder's documented bounds, written line-first: the whole input is cut into lines
    /// (CRLF, CR or LF), then each line is interpreted. Returns the events dispatched and
    /// whether the stream failed (a line over `limit` bytes, or an event whose `data` plus
    /// its joining newlines plus its `event` values exceed `limit`).
    pub fn reference(input: &[u8], limit: usize) -> (Vec<Event>, bool) {
        let limit = limit.max(1);
        let input = input.strip_prefix(BOM).unwrap_or(input);
        let mut lines: Vec<&[u8]> = Vec::new();
        let mut start = 0;
        let mut i = 0;
        while i < input.len() {
            match input[i] {
                b'\r' => {
                    lines.push(&input[start..i]);
                    if input.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    start = i + 1;
                }
                b'\n' => {
                    lines.push(&input[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        let unterminated = &input[start..];

        let mut events = Vec::new();
        let mut data: Vec<String> = Vec::new();
        let mut event: Option<String> = None;
        let mut id: Option<String> = None;
        let mut retry: Option<u64> = None;
        let mut size = 0usize;
        for line in lines {
            if line.len() > limit {
                return (events, true);
            }
            if line.is_empty() {
                if !data.is_empty() {
                    events.push(Event {
                        event: event.take(),
                        data: data.join("\n"),
                        id: id.take(),
                        retry: retry.take(),
                    });
                } else if id.is_some() || retry.is_some() {
                    events.push(Event {
                        event: event.take(),
                        data: String::new(),
                        id: id.take(),
                        retry: retry.take(),
                    });
                }
                data.clear();
                event = None;
                size = 0;
                continue;
            }
            if line[0] == b':' {
                continue;
            }
            let (field, value) = match line.iter().position(|&b| b == b':') {
                Some(c) => {
                    let v = &line[c + 1..];
                    (&line[..c], v.strip_prefix(b" ").unwrap_or(v))
                }
                None => (line, &b""[..]),
            };
            let text = || String::from_utf8_lossy(value).into_owned();
            match field {
                b"data" => {
                    size += value.len() + usize::from(!data.is_empty());
                    if size > limit {
                        return (events, true);
                    }
                    data.push(text());
                }
                b"event" => {
                    size += value.len();
                    if size > limit {
                        return (events, true);
                    }
                    event = Some(text());
                }
                b"id" if !value.contains(&0) => id = Some(text()),
                b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                    retry = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
                }
                _ => {}
            }
        }
        (events, unterminated.len() > limit)
    }

    fn decode(chunks: &[&[u8]], limit: usize) -> (Vec<Event>, bool) {
        let mut d = Decoder::new(limit);
        let mut out = VecDeque::new();
        let mut failed = false;
        for c in chunks {
            if d.feed(c, &mut out).is_err() {
                failed = true;
                // Once failed, it stays failed.
                if d.feed(b"data: x\n\n", &mut out).is_ok() {
                    broken!("the decoder accepted input after failing");
                }
                break;
            }
        }
        (out.into_iter().collect(), failed)
    }

    /// The decoder on `input` fed whole, and fed in `cuts` pieces, equals the reference.
    /// (A BOM is skipped only when it arrives whole in the first chunk, as documented, so
    /// the first piece of an input starting with 0xEF is at least 4 bytes.)
    pub fn check(input: &[u8], limit: usize, cuts: &[usize]) {
        let (want, want_failed) = reference(input, limit);
        let (got, failed) = decode(&[input], limit);
        if (&got, failed) != (&want, want_failed) {
            broken!(
                "decoder != reference (limit {limit}) on {:?}:\n got {got:?} failed {failed}\n\
                 want {want:?} failed {want_failed}",
                excerpt(&String::from_utf8_lossy(input), 300)
            );
        }
        let mut pieces: Vec<&[u8]> = Vec::new();
        let mut rest = input;
        for (n, &cut) in cuts.iter().enumerate() {
            let mut take = cut.min(rest.len());
            if n == 0 && input.first() == Some(&0xEF) {
                take = take.max(4).min(rest.len());
            }
            let (a, b) = rest.split_at(take);
            pieces.push(a);
            rest = b;
        }
        pieces.push(rest);
        let (split, split_failed) = decode(&pieces, limit);
        if (&split, split_failed) != (&want, want_failed) {
            broken!(
                "decoder fed in pieces {:?} differs from whole:\n got {split:?}\nwant {want:?}",
                pieces.iter().map(|p| p.len()).collect::<Vec<_>>()
            );
        }
    }

    /// How an event is written: line endings, `field:value` or `field: value`, comments.
    #[derive(Debug, Clone)]
    pub struct Style {
        /// 0: LF, 1: CR, 2: CRLF, chosen per line in turn.
        pub endings: Vec<u8>,
        pub space_after_colon: Vec<bool>,
        /// Comment lines before each event.
        pub comments: Vec<String>,
    }

    /// Events written in any style decode to the same events.
    pub fn check_round_trip(events: &[Event], style: &Style) {
        let mut text = Vec::new();
        let mut line_no = 0usize;
        let mut after_cr = false;
        let mut push_line = |text: &mut Vec<u8>, line: &str| {
            text.extend_from_slice(line.as_bytes());
            let mut e = if style.endings.is_empty() {
                0
            } else {
                style.endings[line_no % style.endings.len()] % 3
            };
            // A CR then an empty line ended by LF would read as one CRLF.
            if after_cr && line.is_empty() && e == 0 {
                e = 1;
            }
            after_cr = e == 1;
            text.extend_from_slice(match e {
                0 => b"\n",
                1 => b"\r",
                _ => b"\r\n",
            });
            line_no += 1;
        };
        let field = |name: &str, value: &str, n: usize| {
            let space = value.starts_with(' ')
                || style
                    .space_after_colon
                    .get(n % style.space_after_colon.len().max(1))
                    == Some(&true);
            format!("{name}:{}{value}", if space { " " } else { "" })
        };
        for (n, ev) in events.iter().enumerate() {
            if let Some(c) = style.comments.get(n) {
                push_line(&mut text, &format!(":{c}"));
            }
            if let Some(e) = &ev.event {
                push_line(&mut text, &field("event", e, n));
            }
            if let Some(id) = &ev.id {
                push_line(&mut text, &field("id", id, n + 1));
            }
            if let Some(r) = ev.retry {
                push_line(&mut text, &field("retry", &r.to_string(), n + 2));
            }
            for (k, part) in ev.data.split('\n').enumerate() {
                push_line(&mut text, &field("data", part, n + k));
            }
            push_line(&mut text, "");
        }
        let (got, failed) = decode(&[&text], 1 << 20);
        if failed || got != events {
            broken!(
                "events do not survive the event-stream format:\n sent {events:?}\n text {:?}\n \
                 got {got:?} (failed {failed})",
                String::from_utf8_lossy(&text)
            );
        }
        check(&text, 1 << 20, &[1, 2, 3, 5, 8, 13]);
    }
}

// =====================================================================================
// The wrapper and sanitiser: security::{wrap_external_content_with_id, sanitize_content}
// =====================================================================================

pub mod wrap {
    use super::*;
    use openclaw_mcp_native::security::{
        WrapFormat, WrapOptions, detect_suspicious_patterns, sanitize_content,
        wrap_external_content_parts, wrap_external_content_with_id,
    };
    use std::sync::OnceLock;

    /// JavaScript's `\s` (WhiteSpace and LineTerminator).
    const JS_SPACE: &str = r"[\t\n\x0B\x0C\r \u{A0}\u{1680}\u{2000}-\u{200A}\u{2028}\u{2029}\u{202F}\u{205F}\u{3000}\u{FEFF}]";

    /// An ASCII word matched as JavaScript's non-Unicode `i` flag does (ASCII case only).
    fn ci(word: &str) -> String {
        word.chars()
            .map(|c| {
                if c.is_ascii_alphabetic() {
                    format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase())
                } else {
                    regex::escape(&c.to_string())
                }
            })
            .collect()
    }

    struct Markers {
        start: regex::Regex,
        end: regex::Regex,
    }

    /// OpenClaw's marker patterns (flags `gi`) on the folded text.
    fn markers(format: WrapFormat) -> &'static Markers {
        static ID: OnceLock<Markers> = OnceLock::new();
        static LEGACY: OnceLock<Markers> = OnceLock::new();
        let build = |legacy: bool| {
            let sep = format!("(?:{JS_SPACE}|_)+");
            let id_attr = format!(r#"(?:{JS_SPACE}+{}=\\*"[^"]*\\*")?"#, ci("id"));
            let make = |words: &[&str]| {
                let body = if legacy {
                    ci(&format!("<<<{}>>>", words.join("_")))
                } else {
                    let words: Vec<String> = words.iter().map(|w| ci(w)).collect();
                    format!("<<<{JS_SPACE}*{}{id_attr}{JS_SPACE}*>>>", words.join(&sep))
                };
                regex::Regex::new(&body).expect("marker regex")
            };
            Markers {
                start: make(&["EXTERNAL", "UNTRUSTED", "CONTENT"]),
                end: make(&["END", "EXTERNAL", "UNTRUSTED", "CONTENT"]),
            }
        };
        match format {
            WrapFormat::Id => ID.get_or_init(|| build(false)),
            WrapFormat::Legacy => LEGACY.get_or_init(|| build(true)),
        }
    }

    /// The fold OpenClaw applies before matching markers: fullwidth ASCII letters to ASCII,
    /// angle-bracket look-alikes to `<` `>`, and (id format) six invisible characters
    /// deleted. Returns the folded text and, per folded byte, the original offset.
    pub fn fold(text: &str, format: WrapFormat) -> (String, Vec<usize>) {
        const LT: [char; 6] = [
            '\u{FF1C}', '\u{2329}', '\u{3008}', '\u{2039}', '\u{27E8}', '\u{FE64}',
        ];
        const GT: [char; 6] = [
            '\u{FF1E}', '\u{232A}', '\u{3009}', '\u{203A}', '\u{27E9}', '\u{FE65}',
        ];
        const LT_NEW: [char; 8] = [
            '\u{AB}', '\u{300A}', '\u{27EA}', '\u{27EC}', '\u{27EE}', '\u{276C}', '\u{276E}',
            '\u{2C2}',
        ];
        const GT_NEW: [char; 8] = [
            '\u{BB}', '\u{300B}', '\u{27EB}', '\u{27ED}', '\u{27EF}', '\u{276D}', '\u{276F}',
            '\u{2C3}',
        ];
        const DELETED: [char; 6] = [
            '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{AD}',
        ];
        let current = format == WrapFormat::Id;
        let mut out = String::with_capacity(text.len());
        let mut map = Vec::with_capacity(text.len());
        for (at, c) in text.char_indices() {
            let folded = match c {
                '\u{FF21}'..='\u{FF3A}' | '\u{FF41}'..='\u{FF5A}' => {
                    char::from_u32(c as u32 - 0xFF21 + 0x41)
                }
                c if LT.contains(&c) || (current && LT_NEW.contains(&c)) => Some('<'),
                c if GT.contains(&c) || (current && GT_NEW.contains(&c)) => Some('>'),
                c if current && DELETED.contains(&c) => None,
                c => Some(c),
            };
            if let Some(f) = folded {
                for _ in 0..f.len_utf8() {
                    map.push(at);
                }
                out.push(f);
            }
        }
        (out, map)
    }

    /// Original offsets of every start and end marker OpenClaw's patterns find in `text`.
    pub fn marker_starts(text: &str, format: WrapFormat) -> (Vec<usize>, Vec<usize>) {
        let (folded, map) = fold(text, format);
        let m = markers(format);
        let at = |re: &regex::Regex| re.find_iter(&folded).map(|x| map[x.start()]).collect();
        (at(&m.start), at(&m.end))
    }

    fn marker(word: &str, format: WrapFormat, id: &str) -> String {
        match format {
            WrapFormat::Id => format!("<<<{word} id=\"{id}\">>>"),
            WrapFormat::Legacy => format!("<<<{word}>>>"),
        }
    }

    pub struct Input<'a> {
        pub content: &'a str,
        pub source: &'a str,
        pub sender: Option<&'a str>,
        pub subject: Option<&'a str>,
        pub task_name: Option<&'a str>,
        pub include_warning: bool,
        pub legacy: bool,
        pub mcp_server_label: bool,
        /// 16 lowercase hex digits.
        pub id: &'a str,
    }

    /// The wrapped text has the envelope's shape, its content is the sanitised content, and
    /// it holds exactly one start and one end marker (by the format's own marker patterns,
    /// look-alikes folded): the envelope's. Sanitising is idempotent. In the legacy format the
    /// metadata is inserted raw (as the format does), so there only the content is checked.
    pub fn check(inp: &Input<'_>) {
        let format = if inp.legacy {
            WrapFormat::Legacy
        } else {
            WrapFormat::Id
        };
        let opts = WrapOptions {
            source: inp.source,
            sender: inp.sender,
            subject: inp.subject,
            task_name: inp.task_name,
            include_warning: inp.include_warning,
            format,
            mcp_server_label: inp.mcp_server_label,
        };
        let out = wrap_external_content_with_id(inp.content, &opts, inp.id);
        let sanitized = sanitize_content(inp.content, format);
        let start = marker("EXTERNAL_UNTRUSTED_CONTENT", format, inp.id);
        let end = marker("END_EXTERNAL_UNTRUSTED_CONTENT", format, inp.id);
        let tail = format!("\n{end}");
        let ctx = || excerpt(inp.content, 300);

        if !out.ends_with(&tail) {
            broken!(
                "the wrapped text does not end with the end marker: {:?}",
                ctx()
            );
        }
        let before_tail = &out[..out.len() - tail.len()];
        if !before_tail.ends_with(&*sanitized) {
            broken!(
                "the wrapped content is not the sanitised content: {:?}",
                ctx()
            );
        }
        let head = &before_tail[..before_tail.len() - sanitized.len()];
        if !head.ends_with("\n---\n") {
            broken!("the head does not end with the separator");
        }
        let head_start = if inp.include_warning {
            if !head.starts_with("SECURITY NOTICE:") {
                broken!("the warning is missing");
            }
            head.find("\n\n\n<<<").map(|i| i + 3)
        } else {
            head.starts_with("\n<<<").then_some(1)
        };
        let Some(head_start) = head_start else {
            broken!("the start marker is not where the envelope puts it: {head:?}");
        };
        if !head[head_start..].starts_with(&start) {
            broken!("the start marker is not where the envelope puts it: {head:?}");
        }
        if head.contains("\n---\n") && head.find("\n---\n") != Some(head.len() - 5) && !inp.legacy {
            broken!("an id-format metadata value broke out of its line: {head:?}");
        }

        // The parts API gives the same text (its id is fresh: put ours in).
        let parts = wrap_external_content_parts(inp.content, &opts);
        if *parts.body != *sanitized {
            broken!("wrap_external_content_parts' body differs from sanitize_content");
        }
        // Detection: the legacy list is the id list's first patterns.
        let id_hits = detect_suspicious_patterns(inp.content, WrapFormat::Id);
        let legacy_hits = detect_suspicious_patterns(inp.content, WrapFormat::Legacy);
        let mut it = id_hits.iter();
        if !legacy_hits.iter().all(|h| it.any(|x| x == h)) || id_hits.len() > legacy_hits.len() + 2
        {
            broken!("legacy detection {legacy_hits:?} is not a prefix subset of {id_hits:?}");
        }
        // In the legacy format the metadata is inserted raw (as that format does): only the
        // content is the wrapper's to sanitise there.
        let metadata_raw = inp.legacy
            && [inp.sender, inp.subject]
                .iter()
                .any(|v| v.is_some_and(|v| !v.is_empty()));
        // The envelope's own markers are the only ones carrying its id (look-alikes folded,
        // case ignored): content cannot forge them.
        let (folded, _) = fold(&out, format);
        let folded = folded.to_ascii_lowercase();
        for m in [&start, &end].into_iter().filter(|_| !metadata_raw) {
            let n = folded.matches(&m.to_ascii_lowercase()).count();
            if n != 1 {
                broken!("{m} appears {n} times in the wrapped text of {:?}", ctx());
            }
        }
        // Open defect (id format): OpenClaw's single sanitising pass can leave marker-like
        // text (a replacement completing a marker, a dropped match hiding one; golden vector
        // marker/escaped-quote-nesting pins one such output), and metadata values sanitised
        // one by one can form a marker across lines. Checked with `open_defects()`.
        if !inp.legacy && !open_defects() {
            return;
        }
        // No marker-like text survives inside.
        let (starts, ends) = marker_starts(&sanitized, format);
        if !starts.is_empty() || !ends.is_empty() {
            let (text, _) = fold(&sanitized, format);
            broken!(
                "marker-like text survived sanitising ({} start, {} end) in {:?}\n-> {:?}",
                starts.len(),
                ends.len(),
                ctx(),
                excerpt(&text, 300)
            );
        }
        if !metadata_raw {
            let (starts, ends) = marker_starts(&out, format);
            let end_at = out.len() - tail.len() + 1;
            if starts != [head_start] || ends != [end_at] {
                broken!(
                    "the wrapped text has start markers at {starts:?} (want [{head_start}]) \
                     and end markers at {ends:?} (want [{end_at}]): {:?}",
                    ctx()
                );
            }
        }
        let again = sanitize_content(&sanitized, format);
        if again != sanitized {
            broken!(
                "sanitising is not idempotent: {:?} -> {:?} -> {:?}",
                ctx(),
                excerpt(&sanitized, 300),
                excerpt(&again, 300)
            );
        }
    }
}

// =====================================================================================
// Schema conversion: bridge::convert_schema
// =====================================================================================

pub mod schema {
    use super::*;
    use openclaw_mcp_native::bridge::{MAX_DEPTH, convert_schema};

    const TYPES: [&str; 5] = ["object", "string", "number", "boolean", "array"];

    fn node(v: &Value, level: usize, path: &str) {
        let Value::Object(m) = v else {
            broken!("{path}: a converted schema node is not an object: {v}");
        };
        if level > MAX_DEPTH + 1 {
            broken!("{path}: converted schema nested past MAX_DEPTH + 1 ({level})");
        }
        for k in m.keys() {
            if !matches!(
                k.as_str(),
                "type"
                    | "properties"
                    | "required"
                    | "items"
                    | "patternProperties"
                    | "description"
                    | "const"
                    | "anyOf"
                    | "not"
            ) {
                broken!("{path}: unexpected key {k:?} in a converted node");
            }
        }
        if let Some(d) = m.get("description")
            && matches!(d, Value::Null | Value::Bool(false))
        {
            broken!("{path}: a falsy description was copied: {d}");
        }
        if m.contains_key("const") {
            let t = m.get("type").and_then(Value::as_str);
            let want = match &m["const"] {
                Value::String(_) => "string",
                Value::Number(_) => "number",
                Value::Bool(_) => "boolean",
                _ => "object",
            };
            if t != Some(want) {
                broken!("{path}: a literal's type {t:?} is not typeof its value ({want})");
            }
            return;
        }
        if let Some(Value::Array(any)) = m.get("anyOf") {
            if any.len() < 2 {
                broken!("{path}: anyOf with fewer than two literals");
            }
            for (i, a) in any.iter().enumerate() {
                if a.get("const").is_none() {
                    broken!("{path}.anyOf[{i}] is not a literal");
                }
            }
            return;
        }
        match m.get("type") {
            None => {}
            Some(Value::String(t)) if TYPES.contains(&t.as_str()) => {}
            Some(t) => broken!("{path}: type {t} is not one the agent schema uses"),
        }
        if let Some(items) = m.get("items") {
            node(items, level + 1, &format!("{path}.items"));
        }
        if let Some(props) = m.get("properties") {
            let Value::Object(props) = props else {
                broken!("{path}: properties is not an object");
            };
            if props.contains_key("__proto__") {
                broken!("{path}: a __proto__ property survived");
            }
            for (k, p) in props {
                node(p, level + 1, &format!("{path}.{k}"));
            }
            if let Some(req) = m.get("required") {
                let Value::Array(req) = req else {
                    broken!("{path}: required is not an array");
                };
                if req.is_empty() {
                    broken!("{path}: an empty required array is kept");
                }
                // Names of properties, unique, in property order.
                let order: Vec<&str> = props.keys().map(String::as_str).collect();
                let mut last = None;
                for r in req {
                    let Some(r) = r.as_str() else {
                        broken!("{path}: required holds a non-string {r}");
                    };
                    let Some(pos) = order.iter().position(|k| *k == r) else {
                        broken!("{path}: required names {r:?}, which is not a property");
                    };
                    if last.is_some_and(|l| pos <= l) {
                        broken!("{path}: required is not unique and in property order");
                    }
                    last = Some(pos);
                }
            }
        } else if m.contains_key("required") {
            broken!("{path}: required without properties");
        }
    }

    /// Whatever the input, the converted schema is an object schema built only from the
    /// agent's node kinds, bounded in depth, with `required` naming its own properties
    /// (unique, in property order); the root keeps every property name of an object
    /// `properties` but `__proto__`; conversion is deterministic and its output serialises
    /// and reads back equal.
    pub fn check(input: Option<&Value>) {
        let out = convert_schema(input);
        if out.get("type").and_then(Value::as_str) != Some("object")
            || !out.get("properties").is_some_and(Value::is_object)
        {
            broken!("the root is not an object schema: {out}");
        }
        node(&out, 0, "(root)");
        if let Some(Value::Object(root)) = input
            && root.get("type").and_then(Value::as_str) == Some("object")
            && let Some(Value::Object(props)) = root.get("properties")
        {
            let want: HashSet<&str> = props
                .keys()
                .map(String::as_str)
                .filter(|k| *k != "__proto__")
                .collect();
            let got: HashSet<&str> = out["properties"]
                .as_object()
                .map(|o| o.keys().map(String::as_str).collect())
                .unwrap_or_default();
            if want != got {
                broken!("property names changed: {want:?} -> {got:?}");
            }
        }
        if convert_schema(input) != out {
            broken!("conversion is not deterministic");
        }
        let text = serde_json::to_string(&out).expect("serialises");
        let back: Value = serde_json::from_str(&text).expect("reads back");
        if !same_json(&back, &out) {
            broken!("the converted schema does not read back equal: {text}");
        }
        // Converting the result again stays well formed too.
        node(&convert_schema(Some(&out)), 0, "(reconverted)");
    }
}

// =====================================================================================
// Tool naming: bridge::naming::assign_tool_names_reserving
// =====================================================================================

pub mod naming {
    use super::*;
    use openclaw_mcp_native::bridge::naming::{
        NameScheme, ServerTools, assign_tool_names_reserving, compat_tool_name,
        derived_name_message, is_provider_safe_name, stable_hash8,
    };

    #[derive(Debug, Clone)]
    pub struct Server {
        pub name: String,
        pub prefix: Option<String>,
        pub tools: Vec<String>,
    }

    /// Every tool of every server gets a provider-safe name (`^[A-Za-z0-9_-]{1,64}$`) that no
    /// other tool and no reserved name has (exactly in the compat scheme, case-insensitively
    /// in OpenClaw's); compat names are kept exactly when they are usable, derived ones end
    /// in the tool's stable hash; log messages for derived names have no control characters.
    pub fn check(servers: &[Server], reserved: &[String]) {
        let st: Vec<ServerTools<'_>> = servers
            .iter()
            .map(|s| ServerTools {
                server: &s.name,
                prefix: s.prefix.as_deref(),
                tools: s.tools.iter().map(String::as_str).collect(),
            })
            .collect();
        let reserved_refs: Vec<&str> = reserved.iter().map(String::as_str).collect();
        for scheme in [NameScheme::Compat, NameScheme::OpenClaw] {
            let out = assign_tool_names_reserving(&st, scheme, &reserved_refs);
            if out.len() != st.len() || out.iter().zip(&st).any(|(o, s)| o.len() != s.tools.len()) {
                broken!("{scheme:?}: the result's shape differs from the input's");
            }
            if assign_tool_names_reserving(&st, scheme, &reserved_refs) != out {
                broken!("{scheme:?}: naming is not deterministic");
            }
            let fold = |n: &str| match scheme {
                NameScheme::Compat => n.to_owned(),
                NameScheme::OpenClaw => n.to_lowercase(),
            };
            let reserved_set: HashSet<String> = reserved.iter().map(|r| fold(r)).collect();
            let mut seen: HashMap<String, (usize, usize)> = HashMap::new();
            // Compat names already given (to know when a compat name must be kept).
            let mut compat_taken: HashSet<String> = HashSet::new();
            for (i, (names, s)) in out.iter().zip(&st).enumerate() {
                for (j, (a, tool)) in names.iter().zip(&s.tools).enumerate() {
                    let what = || format!("{scheme:?} server {:?} tool {tool:?}", s.server);
                    if !is_provider_safe_name(&a.name)
                        || a.name.len() > 64
                        || a.name.is_empty()
                        || !a
                            .name
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                    {
                        broken!("{}: name {:?} is not provider-safe", what(), a.name);
                    }
                    if let Some(prev) = seen.insert(fold(&a.name), (i, j)) {
                        broken!("{}: name {:?} also given to {prev:?}", what(), a.name);
                    }
                    if reserved_set.contains(&fold(&a.name)) {
                        broken!("{}: name {:?} is reserved", what(), a.name);
                    }
                    let msg = derived_name_message(s.server, tool, a);
                    if msg.is_some() != a.derived.is_some() {
                        broken!("{}: a message iff the name was derived", what());
                    }
                    if let Some(m) = &msg
                        && m.chars().any(char::is_control)
                    {
                        broken!("{}: the log message has control characters: {m:?}", what());
                    }
                    if scheme == NameScheme::Compat {
                        let compat = compat_tool_name(s.server, s.prefix, tool);
                        if a.derived.is_none() != (a.name == compat) {
                            broken!(
                                "{}: derived {:?} but name {:?} vs compat {compat:?}",
                                what(),
                                a.derived,
                                a.name
                            );
                        }
                        let usable = is_provider_safe_name(&compat)
                            && !reserved_set.contains(&compat)
                            && !compat_taken.contains(&compat);
                        if usable && a.derived.is_some() {
                            broken!("{}: the usable compat name {compat:?} was not kept", what());
                        }
                        if is_provider_safe_name(&compat) {
                            compat_taken.insert(compat);
                        }
                        if a.derived.is_some() {
                            let hash = stable_hash8(s.server, tool);
                            let ok = a.name.ends_with(&format!("_{hash}"))
                                || a.name.rsplit_once('_').is_some_and(|(head, n)| {
                                    n.bytes().all(|b| b.is_ascii_digit())
                                        && head.ends_with(&format!("_{hash}"))
                                });
                            if !ok {
                                broken!("{}: derived name {:?} lacks its hash", what(), a.name);
                            }
                        }
                    } else if !a.name.contains("__") {
                        broken!("{}: OpenClaw name {:?} has no '__'", what(), a.name);
                    }
                }
            }
        }
    }
}

// =====================================================================================
// Config shapes: config::{detect_config_shape, extract_mcp_config, validate_mcp_config, …}
// =====================================================================================

pub mod config {
    use super::*;
    use openclaw_mcp_native::config::{
        ConfigShape, ExtractOptions, check_transports, detect_config_shape, extract_mcp_config,
        manager_configs_for_openclaw, parse_manager_config, validate_mcp_config,
    };

    fn converted(shape: ConfigShape) -> bool {
        matches!(
            shape,
            ConfigShape::OpenClawMcp | ConfigShape::McpServers | ConfigShape::Acp
        )
    }

    /// No input panics; errors are messages; detection agrees with extraction; a converted
    /// shape's config always validates (documented); validation fills defaults idempotently;
    /// `parse_manager_config` accepts exactly what validation accepts.
    pub fn check(root: &Value, agent: Option<&str>) {
        let detected = detect_config_shape(root);
        if let Err(e) = &detected
            && e.is_empty()
        {
            broken!("detection failed with an empty message");
        }
        let mut auto = None;
        for shape in std::iter::once(None).chain(ConfigShape::ALL.into_iter().map(Some)) {
            let r = extract_mcp_config(root, &ExtractOptions { agent, shape });
            match &r {
                Ok(ex) => {
                    if let Some(s) = shape
                        && ex.shape != s
                    {
                        broken!("asked for {s:?}, extracted {:?}", ex.shape);
                    }
                    if converted(ex.shape)
                        && let Err(e) = validate_mcp_config(&ex.config)
                    {
                        broken!(
                            "a converted {:?} config does not validate: {e}\n{}",
                            ex.shape,
                            excerpt(&ex.config.to_string(), 400)
                        );
                    }
                    if ex.warnings.iter().any(String::is_empty) {
                        broken!("an empty warning");
                    }
                    serde_json::to_string(&ex.config).expect("the config serialises");
                }
                Err(e) if e.is_empty() => broken!("extraction failed with an empty message"),
                Err(_) => {}
            }
            if shape.is_none() {
                auto = Some(r);
            }
        }
        let auto = auto.expect("ran");
        match (&detected, &auto) {
            (Ok(s), Ok(ex)) => {
                let again = extract_mcp_config(
                    root,
                    &ExtractOptions {
                        agent,
                        shape: Some(*s),
                    },
                );
                if ex.shape != *s || again.as_ref().ok() != Some(ex) {
                    broken!("detected {s:?}, but extraction without the option differs");
                }
            }
            (Err(d), Err(e)) if d == e => {}
            (Ok(_), Err(_)) => {}
            (d, e) => broken!(
                "detection {d:?} but extraction {:?}",
                e.as_ref().map(|x| x.shape)
            ),
        }
        let validated = validate_mcp_config(root);
        match &validated {
            Ok(v) => {
                match validate_mcp_config(&v.data) {
                    Ok(again) if again.data == v.data => {}
                    Ok(_) => broken!("filling defaults twice changes the config"),
                    Err(e) => broken!("the defaults-filled config does not validate: {e}"),
                }
                if check_transports(root).is_err() {
                    broken!("a valid config has an unknown transport");
                }
            }
            Err(e) if e.is_empty() => broken!("validation failed with an empty message"),
            Err(_) => {}
        }
        let managed = parse_manager_config(root);
        if managed.is_ok() != validated.is_ok() {
            broken!(
                "parse_manager_config {} but validate_mcp_config {}",
                managed.is_ok(),
                validated.is_ok()
            );
        }
        if let Ok(per_agent) = manager_configs_for_openclaw(root) {
            let mut ids = HashSet::new();
            for (id, config) in &per_agent {
                if !ids.insert(id) {
                    broken!("agent {id:?} listed twice");
                }
                if detected == Ok(ConfigShape::OpenClawMcp)
                    && let Err(e) = validate_mcp_config(config)
                {
                    broken!("agent {id:?}'s converted config does not validate: {e}");
                }
            }
        }
    }

    /// [`check`] on text, as `load_config_file` reads it.
    pub fn check_text(bytes: &[u8], agent: Option<&str>) {
        if let Ok(root) = serde_json::from_slice::<Value>(bytes) {
            check(&root, agent);
        }
    }
}

// =====================================================================================
// secret:// references: secrets::{parse_secret_uri, secret_ref_to_uri}
// =====================================================================================

pub mod secret_uri {
    use super::*;
    use openclaw_mcp_native::secrets::{
        BUILTIN_PROVIDERS, SECRET_SCHEME, parse_secret_uri, secret_ref_to_uri,
    };

    /// Parsing: a value without the scheme is plain; a reference round-trips exactly
    /// (`uri()` gives the input back, parsing that gives the same reference); the provider
    /// has no `/`, the path is not empty, the field has no `#`; it fails exactly when the path
    /// is missing or the provider is not built in, naming the value.
    pub fn check(v: &str) {
        match parse_secret_uri(v) {
            Ok(None) => {
                if v.starts_with(SECRET_SCHEME) {
                    broken!("a secret:// value was taken as plain: {v:?}");
                }
            }
            Ok(Some(r)) => {
                if r.uri() != v {
                    broken!("{v:?} parsed to {r:?}, which prints as {:?}", r.uri());
                }
                if parse_secret_uri(&r.uri()).ok().flatten().as_ref() != Some(&r) {
                    broken!("{r:?} does not parse back to itself");
                }
                if r.provider.contains('/')
                    || r.path.is_empty()
                    || r.field.as_ref().is_some_and(|f| f.contains('#'))
                    || !BUILTIN_PROVIDERS.contains(&r.provider.as_str())
                {
                    broken!("{v:?} parsed to a malformed reference {r:?}");
                }
            }
            Err(e) => {
                let rest = v.strip_prefix(SECRET_SCHEME);
                let Some(rest) = rest else {
                    broken!("a plain value failed to parse: {v:?}: {e}");
                };
                let well_formed = rest.split_once('/').is_some_and(|(p, rem)| {
                    let path = rem.rsplit_once('#').map_or(rem, |(p, _)| p);
                    !path.is_empty() && BUILTIN_PROVIDERS.contains(&p)
                });
                if well_formed {
                    broken!("a well-formed reference failed: {v:?}: {e}");
                }
                if e.to_string().is_empty() || e.uri() != v {
                    broken!("the error does not name the value: {e}");
                }
            }
        }
    }

    /// An OpenClaw SecretRef object that converts gives a `secret://` string that parses to
    /// the reference it stands for.
    pub fn check_ref_object(obj: &serde_json::Map<String, Value>) {
        let Ok(uri) = secret_ref_to_uri(obj) else {
            return;
        };
        let parsed = match parse_secret_uri(&uri) {
            Ok(Some(r)) => r,
            other => broken!("SecretRef {obj:?} became {uri:?}, which parses as {other:?}"),
        };
        let s = |k: &str| obj.get(k).and_then(Value::as_str).unwrap_or("");
        let (provider, path, field) = match s("source") {
            "env" => ("env", s("id").to_owned(), None),
            "file" => (
                "file",
                format!("@{}", s("provider")),
                Some(s("id").to_owned()),
            ),
            "exec" => ("exec", s("provider").to_owned(), Some(s("id").to_owned())),
            other => broken!("source {other:?} converted"),
        };
        if parsed.provider != provider || parsed.path != path || parsed.field != field {
            broken!("SecretRef {obj:?} became {uri:?}, which parses as {parsed:?}");
        }
        check(&uri);
    }
}

// =====================================================================================
// The redactor: secrets::Redactor
// =====================================================================================

pub mod redact {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    use openclaw_mcp_native::secrets::{Redactor, SecretString};

    /// The spellings of a value the redactor documents (src/secrets/redact.rs).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Enc {
        Raw,
        /// `JSON.stringify` / serde_json.
        Json,
        /// JSON text inside a JSON string.
        JsonTwice,
        /// Python's `json.dumps`: every non-ASCII character as `\uXXXX`.
        JsonAscii,
        /// Go's `encoding/json`: also `<`, `>`, `&`, U+2028/9 as `\uXXXX`.
        JsonGo,
        /// `encodeURIComponent`, upper- and lower-case hex.
        UriComponent,
        UriComponentLower,
        /// RFC 3986 unreserved characters kept.
        Rfc3986,
        /// Form encoding (space as `+`).
        Form,
        Base64,
        Base64NoPad,
        Base64Url,
        Base64UrlNoPad,
    }

    pub const ENCODINGS: [Enc; 13] = [
        Enc::Raw,
        Enc::Json,
        Enc::JsonTwice,
        Enc::JsonAscii,
        Enc::JsonGo,
        Enc::UriComponent,
        Enc::UriComponentLower,
        Enc::Rfc3986,
        Enc::Form,
        Enc::Base64,
        Enc::Base64NoPad,
        Enc::Base64Url,
        Enc::Base64UrlNoPad,
    ];

    fn json_body(s: &str) -> String {
        let quoted = serde_json::to_string(s).expect("a string serialises");
        quoted[1..quoted.len() - 1].to_owned()
    }

    fn u_escape(out: &mut String, c: char) {
        let mut units = [0u16; 2];
        for u in c.encode_utf16(&mut units) {
            out.push_str(&format!("\\u{u:04x}"));
        }
    }

    fn percent(s: &str, keep_extra: &[u8], plus_for_space: bool, lower: bool) -> String {
        let mut out = String::new();
        for &b in s.as_bytes() {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) || keep_extra.contains(&b) {
                out.push(b as char);
            } else if b == b' ' && plus_for_space {
                out.push('+');
            } else if lower {
                out.push_str(&format!("%{b:02x}"));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    }

    pub fn encode(s: &str, enc: Enc) -> String {
        match enc {
            Enc::Raw => s.to_owned(),
            Enc::Json => json_body(s),
            Enc::JsonTwice => json_body(&json_body(s)),
            Enc::JsonAscii | Enc::JsonGo => {
                let mut out = String::new();
                for c in json_body(s).chars() {
                    let go = enc == Enc::JsonGo
                        && matches!(c, '<' | '>' | '&' | '\u{2028}' | '\u{2029}');
                    if go || (enc == Enc::JsonAscii && !c.is_ascii()) {
                        u_escape(&mut out, c);
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            Enc::UriComponent => percent(s, b"!*'()", false, false),
            Enc::UriComponentLower => percent(s, b"!*'()", false, true),
            Enc::Rfc3986 => percent(s, b"", false, false),
            Enc::Form => percent(s, b"", true, false),
            Enc::Base64 => STANDARD.encode(s),
            Enc::Base64NoPad => STANDARD_NO_PAD.encode(s),
            Enc::Base64Url => URL_SAFE.encode(s),
            Enc::Base64UrlNoPad => URL_SAFE_NO_PAD.encode(s),
        }
    }

    /// The base64 characters that depend only on `s` when it sits at byte offset `shift`
    /// (mod 3) inside a longer base64 text, in both alphabets.
    pub fn base64_cores(s: &str) -> Vec<String> {
        let mut out = Vec::new();
        for shift in 0..3usize {
            let mut bytes = vec![0u8; shift];
            bytes.extend_from_slice(s.as_bytes());
            let enc = STANDARD_NO_PAD.encode(&bytes);
            let first = (8 * shift).div_ceil(6);
            let end = 8 * (shift + s.len()) / 6;
            if end > first {
                let core = enc[first..end].to_owned();
                out.push(core.replace('+', "-").replace('/', "_"));
                out.push(core);
            }
        }
        out
    }

    /// One piece of the text the redactor is given.
    #[derive(Debug, Clone)]
    pub enum Piece {
        /// Unrelated text (may itself hold pieces of a secret's spelling: those are allowed
        /// to stay).
        Filler(String),
        /// A secret in one of its spellings.
        Secret(usize, Enc),
        /// A secret inside a longer base64 text (a Basic `Authorization` header, say).
        InBase64 {
            secret: usize,
            before: Vec<u8>,
            after: Vec<u8>,
            url_safe: bool,
        },
    }

    /// How the text ends: a cut-off start of a spelling (at least `MIN_CUT_PREFIX` bytes),
    /// then nothing, `…` or `...`.
    #[derive(Debug, Clone)]
    pub struct Cut {
        pub secret: usize,
        pub enc: Enc,
        /// Bytes of the spelling kept (moved down to a character boundary).
        pub keep: usize,
        /// 0: nothing, 1: `…`, 2: `...`.
        pub ellipsis: u8,
    }

    /// Builds the text; returns it and the filler (text that is not a secret).
    pub fn build(secrets: &[String], pieces: &[Piece], cut: Option<&Cut>) -> (String, Vec<String>) {
        let mut text = String::new();
        let mut fillers: Vec<String> = vec![String::new()];
        for p in pieces {
            match p {
                Piece::Filler(f) => {
                    text.push_str(f);
                    fillers.last_mut().expect("one").push_str(f);
                }
                Piece::Secret(i, enc) => {
                    text.push_str(&encode(&secrets[i % secrets.len()], *enc));
                    fillers.push(String::new());
                }
                Piece::InBase64 {
                    secret,
                    before,
                    after,
                    url_safe,
                } => {
                    let mut bytes = before.clone();
                    bytes.extend_from_slice(secrets[secret % secrets.len()].as_bytes());
                    bytes.extend_from_slice(after);
                    text.push_str(&if *url_safe {
                        URL_SAFE.encode(&bytes)
                    } else {
                        STANDARD.encode(&bytes)
                    });
                    fillers.push(String::new());
                }
            }
        }
        if let Some(c) = cut {
            let form = encode(&secrets[c.secret % secrets.len()], c.enc);
            let mut keep = c.keep.min(form.len().saturating_sub(1));
            while keep > 0 && !form.is_char_boundary(keep) {
                keep -= 1;
            }
            // MIN_CUT_PREFIX in src/secrets/redact.rs (not exported).
            if keep >= 8 {
                text.push_str(&form[..keep]);
                text.push_str(match c.ellipsis % 3 {
                    0 => "",
                    1 => "…",
                    _ => "...",
                });
            }
        }
        (text, fillers)
    }

    /// Every run of a spelling of `s` that spells at least 8 whole bytes of `s`, shortest
    /// first from each start: per-character units for the textual spellings, 6-bit units for
    /// base64 at each of the three byte alignments in both alphabets.
    ///
    /// Each run comes with what is left of it without its first character and without its
    /// last, where that character is a whole unit of one ASCII character: a run that is filler
    /// text plus one character of the piece before or after it (a base64 edge character, which
    /// the redactor documents as staying visible) is that filler continued by coincidence, not
    /// a leak. What is left spells at least 6 of the 8 bytes, all of them filler.
    pub fn runs_of_8_bytes(s: &str) -> Vec<(String, Vec<String>)> {
        const MIN: usize = 8;
        let mut runs = Vec::new();
        for enc in ENCODINGS {
            if matches!(
                enc,
                Enc::Base64 | Enc::Base64NoPad | Enc::Base64Url | Enc::Base64UrlNoPad
            ) {
                continue;
            }
            // JSON and percent encodings spell a string one character at a time.
            let units: Vec<(String, usize)> = s
                .chars()
                .map(|c| (encode(&c.to_string(), enc), c.len_utf8()))
                .collect();
            for i in 0..units.len() {
                let (mut text, mut bytes) = (String::new(), 0);
                for (u, n) in &units[i..] {
                    text.push_str(u);
                    bytes += n;
                    if bytes >= MIN {
                        let mut trims = Vec::new();
                        if units[i].0.len() == 1 {
                            trims.push(text[1..].to_owned());
                        }
                        if u.len() == 1 {
                            trims.push(text[..text.len() - 1].to_owned());
                        }
                        runs.push((text, trims));
                        break;
                    }
                }
            }
        }
        for shift in 0..3usize {
            let mut bytes = vec![0u8; shift];
            bytes.extend_from_slice(s.as_bytes());
            let enc = STANDARD_NO_PAD.encode(&bytes);
            let chars = enc.len();
            // Bytes of `s` whose 8 bits all lie in characters a..b.
            let whole = |a: usize, b: usize| {
                let lo = shift.max((6 * a).div_ceil(8));
                let hi = (shift + s.len()).min(6 * b / 8);
                hi.saturating_sub(lo)
            };
            for a in 0..chars {
                if let Some(b) = (a + 1..=chars).find(|&b| whole(a, b) >= MIN) {
                    let url = |t: &str| t.replace('+', "-").replace('/', "_");
                    let trims = vec![enc[a + 1..b].to_owned(), enc[a..b - 1].to_owned()];
                    runs.push((url(&enc[a..b]), trims.iter().map(|t| url(t)).collect()));
                    runs.push((enc[a..b].to_owned(), trims));
                }
            }
        }
        runs
    }

    /// After redaction, no run of any documented spelling of a registered secret that spells
    /// 8 or more of its bytes is left (see [`runs_of_8_bytes`]), unless that run was in the
    /// filler text itself; a 6- or 7-byte secret is not left whole. Redacting the result again
    /// changes nothing.
    pub fn check(secrets: &[String], pieces: &[Piece], cut: Option<&Cut>) {
        if secrets.is_empty() {
            return;
        }
        let (text, fillers) = build(secrets, pieces, cut);
        let r = Redactor::new();
        for s in secrets {
            r.register(&SecretString::from(s.clone()));
        }
        let out = r.redact(&text);
        let allowed = |w: &[u8]| fillers.iter().any(|f| contains_bytes(f.as_bytes(), w));
        for s in secrets {
            if s.len() < 8 {
                if s.len() >= openclaw_mcp_native::secrets::MIN_REDACT_LEN
                    && out.contains(s.as_str())
                    && !allowed(s.as_bytes())
                {
                    broken!("secret {s:?} survived whole in {:?}", excerpt(&out, 400));
                }
                continue;
            }
            let runs = runs_of_8_bytes(s);
            let ac =
                aho_corasick::AhoCorasick::new(runs.iter().map(|r| &r.0)).expect("runs automaton");
            let present: HashSet<usize> = ac
                .find_overlapping_iter(out.as_ref())
                .map(|m| m.pattern().as_usize())
                .collect();
            for (run, trims) in present.into_iter().map(|i| &runs[i]) {
                let trim_allowed = trims.iter().any(|t| allowed(t.as_bytes()));
                if !allowed(run.as_bytes()) && !trim_allowed {
                    broken!(
                        "{run:?}, 8 bytes of secret {s:?} in one of its spellings, survived \
                         redaction:\n text {:?}\n  out {:?}",
                        excerpt(&text, 400),
                        excerpt(&out, 400)
                    );
                }
            }
        }
        let twice = r.redact(&out);
        if twice != out {
            broken!(
                "redacting the redacted text masks more: {:?} -> {:?}",
                excerpt(&out, 300),
                excerpt(&twice, 300)
            );
        }
    }
}
