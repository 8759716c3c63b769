//! A line from a stdio server, read once for the [call lane](super::call_lane): an answer to
//! one of its requests, progress for one of its calls, or something for rmcp.
//!
//! rmcp reads every message through buffered untagged enums (the whole message, then the
//! result once per variant tried until one fits), i.e. every string of a large result is
//! copied and walked several times. An answer to a lane request is read in one pass straight
//! into a [`CallToolResult`], borrowing what it can. It must mean exactly what rmcp's reading
//! means: a result with any member `CallToolResult` does not know (which an earlier variant of
//! rmcp's `ServerResult` might claim), a line with both `result` and `error`, or anything odd
//! is read again the way rmcp reads it; and a line rmcp could not read at all is left to rmcp,
//! which drops it or answers it as it always did.

use std::fmt;

use rmcp::model::{
    CallToolResult, ContentBlock, ErrorData, JsonRpcMessage, MetaObject, ProgressNotificationParam,
    ResultType, ServerJsonRpcMessage, ServerNotification, ServerResult,
};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The first id of the lane's requests (and progress tokens): rmcp counts its own from 0 and
/// never gets here; JavaScript servers hold it exactly (below 2^53).
pub const LANE_BASE: u64 = 1 << 40;

/// What a server's answer to a lane request says.
#[derive(Debug)]
pub enum Reply {
    /// A tool result (the common case, read in one pass).
    Call(CallToolResult),
    /// Any other result, as rmcp reads it (`InputRequiredResult`, or one the call rejects).
    Result(ServerResult),
    /// A JSON-RPC error.
    Error(ErrorData),
}

/// What a line is to the lane.
#[derive(Debug)]
pub enum Line {
    /// An answer to lane request `id`.
    Reply(u64, Reply),
    /// Progress for the lane call whose token is this.
    Progress(ProgressNotificationParam),
    /// For rmcp.
    Other,
}

/// Reads `line` (no newline) for the lane.
pub fn read(line: &[u8]) -> Line {
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    // UTF-8 is checked once over the whole line, vectorised, and a valid line (what every
    // well-behaved server sends) is read as text: serde then skips the check it makes of every
    // string it reads, which for a large result was a slower second pass over it. A line that is
    // not UTF-8 is read as bytes, as before.
    let envelope = match simdutf8::basic::from_utf8(line) {
        Ok(text) => serde_json::from_str::<Envelope<'_>>(text),
        Err(_) => serde_json::from_slice::<Envelope<'_>>(line),
    };
    let Ok(envelope) = envelope else {
        return as_rmcp_reads_it(line);
    };
    if envelope.method {
        return if envelope.progress {
            as_rmcp_reads_it(line)
        } else {
            Line::Other
        };
    }
    let Some(id) = envelope.id.and_then(lane_id) else {
        return Line::Other;
    };
    if envelope.jsonrpc.map(RawValue::get) == Some("\"2.0\"") {
        match (envelope.result, envelope.error) {
            (Some(Attempt::Call(result)), None) => return Line::Reply(id, Reply::Call(*result)),
            (None, Some(error)) => {
                if let Ok(error) = serde_json::from_str::<ErrorData>(error.get()) {
                    return Line::Reply(id, Reply::Error(error));
                }
            }
            _ => {}
        }
    }
    as_rmcp_reads_it(line)
}

/// A lane id: an integer from [`LANE_BASE`] up, or a string of its digits (a server may echo
/// an id either way; `OwnAnswers` takes both too).
fn lane_id(raw: &RawValue) -> Option<u64> {
    let text = raw.get();
    let digits = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    digit_id(digits)
}

fn digit_id(digits: &str) -> Option<u64> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok().filter(|&id| id >= LANE_BASE)
}

/// `line` as rmcp reads it: an answer to a lane request or progress for a lane call, else
/// `Other` (for rmcp, which drops or answers it as it always did).
fn as_rmcp_reads_it(line: &[u8]) -> Line {
    fn lane(n: &rmcp::model::NumberOrString) -> Option<u64> {
        match n {
            rmcp::model::NumberOrString::Number(n) if *n >= LANE_BASE as i64 => Some(*n as u64),
            rmcp::model::NumberOrString::String(s) => digit_id(s),
            _ => None,
        }
    }
    match serde_json::from_slice::<ServerJsonRpcMessage>(line) {
        Ok(JsonRpcMessage::Response(response)) => match lane(&response.id) {
            Some(id) => Line::Reply(id, Reply::Result(response.result)),
            None => Line::Other,
        },
        Ok(JsonRpcMessage::Error(error)) => match error.id.as_ref().and_then(lane) {
            Some(id) => Line::Reply(id, Reply::Error(error.error)),
            None => Line::Other,
        },
        Ok(JsonRpcMessage::Notification(note)) => match note.notification {
            // Lane tokens are numbers: a string token is nobody's here, and stays rmcp's.
            ServerNotification::ProgressNotification(p)
                if matches!(&p.params.progress_token.0,
                    rmcp::model::NumberOrString::Number(n) if *n >= LANE_BASE as i64) =>
            {
                Line::Progress(p.params)
            }
            _ => Line::Other,
        },
        _ => Line::Other,
    }
}

/// A message's top level, in one pass: a `result` is read as a tool result on the way.
struct Envelope<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: bool,
    /// `method` is `notifications/progress`.
    progress: bool,
    result: Option<Attempt>,
    error: Option<&'a RawValue>,
}

/// A `result` read as a tool result, or why it is not plainly one.
enum Attempt {
    Call(Box<CallToolResult>),
    /// It has members a tool result does not know, or misses what one needs.
    Unsure,
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Envelope<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EnvelopeVisitor(std::marker::PhantomData))
    }
}

struct EnvelopeVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for EnvelopeVisitor<'a> {
    type Value = Envelope<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut envelope = Envelope {
            jsonrpc: None,
            id: None,
            method: false,
            progress: false,
            result: None,
            error: None,
        };
        // A repeated member makes rmcp's reading fail: so does this one (the line goes to rmcp).
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match key.0.as_ref() {
                "jsonrpc" => once(&mut envelope.jsonrpc, map.next_value()?)?,
                "id" => once(&mut envelope.id, map.next_value()?)?,
                "method" => {
                    if envelope.method {
                        return Err(de::Error::duplicate_field("method"));
                    }
                    envelope.method = true;
                    let method: Key<'de> = map.next_value()?;
                    envelope.progress = method.0 == "notifications/progress";
                }
                "result" => once(&mut envelope.result, map.next_value()?)?,
                "error" => once(&mut envelope.error, map.next_value()?)?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(envelope)
    }
}

fn once<T, E: de::Error>(slot: &mut Option<T>, value: T) -> Result<(), E> {
    if slot.is_some() {
        return Err(E::custom("duplicate member"));
    }
    *slot = Some(value);
    Ok(())
}

/// A member name or a short string, borrowed when it has no escapes.
struct Key<'a>(std::borrow::Cow<'a, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(std::borrow::Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// A `result` that is not an object fails the one-pass reading: the line is then read as rmcp
/// reads it.
impl<'de> serde::Deserialize<'de> for Attempt {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(AttemptVisitor)
    }
}

struct AttemptVisitor;

impl<'de> Visitor<'de> for AttemptVisitor {
    type Value = Attempt;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a result")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Attempt, A::Error> {
        // The members rmcp's `CallToolResult` reads, read the same way.
        let mut result_type: Option<Option<ResultType>> = None;
        let mut content: Option<Option<Vec<ContentBlock>>> = None;
        let mut structured: Option<serde_json::Value> = None;
        let mut is_error: Option<Option<bool>> = None;
        let mut meta: Option<Option<MetaObject>> = None;
        let mut unknown = false;
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match key.0.as_ref() {
                "resultType" => once(&mut result_type, map.next_value()?)?,
                "content" => once(&mut content, map.next_value()?)?,
                "structuredContent" => once(&mut structured, map.next_value()?)?,
                "isError" => once(&mut is_error, map.next_value()?)?,
                "_meta" => once(&mut meta, map.next_value()?)?,
                _ => {
                    unknown = true;
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let result_type = result_type.flatten();
        let content = content.flatten();
        let is_error = is_error.flatten();
        let complete = result_type.as_ref().is_none_or(ResultType::is_complete);
        let known = content.is_some() || structured.is_some() || is_error.is_some();
        if unknown || !complete || !known {
            return Ok(Attempt::Unsure);
        }
        let mut result = CallToolResult::default();
        result.result_type = result_type;
        result.content = content.unwrap_or_default();
        result.structured_content = structured;
        result.is_error = is_error;
        result.meta = meta.flatten();
        Ok(Attempt::Call(Box::new(result)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What rmcp makes of `line`, in the lane's terms.
    fn rmcp_reading(line: &str) -> String {
        let body = line.strip_prefix('\u{feff}').unwrap_or(line);
        let body = body.strip_suffix('\r').unwrap_or(body);
        match serde_json::from_str::<ServerJsonRpcMessage>(body) {
            Ok(JsonRpcMessage::Response(r)) => match r.result {
                ServerResult::CallToolResult(c) => {
                    format!("call {}", serde_json::to_string(&c).unwrap())
                }
                other => format!("result {}", serde_json::to_string(&other).unwrap()),
            },
            Ok(JsonRpcMessage::Error(e)) => {
                format!("error {}", serde_json::to_string(&e.error).unwrap())
            }
            Ok(JsonRpcMessage::Notification(n)) => match n.notification {
                ServerNotification::ProgressNotification(p) => {
                    format!("progress {}", serde_json::to_string(&p.params).unwrap())
                }
                _ => "other".to_owned(),
            },
            _ => "other".to_owned(),
        }
    }

    fn lane_reading(line: &str) -> String {
        match read(line.as_bytes()) {
            Line::Reply(id, reply) => {
                assert_eq!(id, LANE_BASE + 7);
                match reply {
                    Reply::Call(c) => format!("call {}", serde_json::to_string(&c).unwrap()),
                    Reply::Result(ServerResult::CallToolResult(c)) => {
                        format!("call {}", serde_json::to_string(&c).unwrap())
                    }
                    Reply::Result(other) => {
                        format!("result {}", serde_json::to_string(&other).unwrap())
                    }
                    Reply::Error(e) => format!("error {}", serde_json::to_string(&e).unwrap()),
                }
            }
            Line::Progress(p) => format!("progress {}", serde_json::to_string(&p).unwrap()),
            Line::Other => "other".to_owned(),
        }
    }

    #[test]
    fn answers_mean_what_they_mean_to_rmcp() {
        let id = LANE_BASE + 7;
        let results = [
            r#"{"content":[{"type":"text","text":"hi \u00e9 \"q\""}]}"#,
            r#"{"content":[],"isError":true}"#,
            r#"{"isError":false}"#,
            r#"{"structuredContent":null}"#,
            r#"{"structuredContent":{"a":[1,2]},"content":null}"#,
            r#"{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}],"_meta":{"k":1}}"#,
            r#"{"content":[],"resultType":"complete"}"#,
            r#"{"content":[],"resultType":"input_required"}"#,
            r#"{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}}}"#,
            r#"{}"#,
            r#"{"content":[],"tools":[]}"#,
            r#"{"tools":[]}"#,
            r#"{"content":[],"messages":[]}"#,
            r#"{"content":[{"type":"nonsense"}]}"#,
            r#"{"content":{"type":"text"}}"#,
            r#"{"content":[],"content":[]}"#,
            r#"{"isError":null}"#,
            r#"{"isError":"yes"}"#,
            r#"[]"#,
            r#"null"#,
            r#"7"#,
        ];
        let mut lines = Vec::new();
        for result in results {
            lines.push(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
            ));
            lines.push(format!(
                r#"{{"result":{result},"jsonrpc":"2.0","id":{id}}}"#
            ));
        }
        lines.extend([
            format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"bad"}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":"x","message":"bad"}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":1,"message":"m"}},"result":{{"content":[]}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":{id},"id":{id},"result":{{"content":[]}}}}"#),
            format!(r#"{{"jsonrpc":"1.0","id":{id},"result":{{"content":[]}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":"{id}","result":{{"content":[]}}}}"#),
            format!(r#"{{"id":{id},"result":{{"content":[]}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"x","result":{{"content":[]}}}}"#),
            format!("\u{feff}{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[]}}}}\r"),
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"messages":[],"content":[{{"type":"nonsense"}}]}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{id},"progress":1.5,"total":3,"message":"m"}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{id},"progress":"x"}}}}"#),
        ]);
        for line in &lines {
            // The lane reads each line as rmcp does ("other": left to rmcp).
            assert_eq!(lane_reading(line), rmcp_reading(line), "{line}");
        }
    }

    /// UTF-8 is checked before parsing, so a line is read as text or as bytes: a line with bytes
    /// that are not UTF-8 in a string is still read as rmcp reads it (not at all: it is left to
    /// `stdio_lines`' repair), and a valid one keeps its non-ASCII text whole.
    #[test]
    fn lines_are_read_alike_as_text_and_as_bytes() {
        let id = LANE_BASE + 7;
        let line = |text: &[u8]| {
            let mut line = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#
            )
            .into_bytes();
            line.extend_from_slice(text);
            line.extend_from_slice(b"\"}]}}");
            line
        };
        let bad = line(b"caf\xe9 \xff");
        assert!(serde_json::from_slice::<ServerJsonRpcMessage>(&bad).is_err());
        assert!(matches!(read(&bad), Line::Other));
        let good = String::from_utf8(line("caf\u{e9} \u{65e5}\\n\u{1F600}".as_bytes())).unwrap();
        let reading = lane_reading(&good);
        assert_eq!(reading, rmcp_reading(&good));
        assert!(reading.starts_with("call ") && reading.contains("caf\u{e9} \u{65e5}\\n\u{1F600}"));
    }

    #[test]
    fn only_lane_ids_and_tokens_are_taken() {
        for line in [
            r#"{"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1099511627783.0,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":-1099511627783,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1099511627783,"method":"roots/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"1099511627783","progress":1}}"#,
            "not json",
            "",
        ] {
            assert!(matches!(read(line.as_bytes()), Line::Other), "{line}");
        }
    }
}
