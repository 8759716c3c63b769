//! A bounded decoder for `text/event-stream` bodies (the WHATWG event-stream format), shared by
//! the Streamable HTTP client and the legacy SSE transport.
//!
//! Bytes are fed in as they arrive; complete events come out. Nothing grows without bound: a line
//! and an event's accumulated data are both capped at the configured size, and the decoder fails
//! (the caller then ends the stream) as soon as the cap is crossed, before buffering more.

use std::collections::VecDeque;

/// One dispatched event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field; `None` means the default type, `message`.
    pub event: Option<String>,
    pub data: String,
    /// The `id:` field of this event, when it had one.
    pub id: Option<String>,
    pub retry: Option<u64>,
}

impl Event {
    /// True for `message` events (no type, an empty type, or `message`).
    pub fn is_message(&self) -> bool {
        matches!(self.event.as_deref(), None | Some("") | Some("message"))
    }
}

/// The stream sent a line or an event larger than the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge {
    pub limit: usize,
}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "an SSE event exceeded the {}-byte message limit",
            self.limit
        )
    }
}

impl std::error::Error for TooLarge {}

pub struct Decoder {
    limit: usize,
    line: Vec<u8>,
    /// The previous byte was a CR (a following LF belongs to the same line break).
    after_cr: bool,
    /// Still at the very start of the stream (a UTF-8 BOM is skipped there).
    at_start: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
    retry: Option<u64>,
    /// Bytes retained for the event being built.
    size: usize,
    failed: bool,
}

impl Decoder {
    pub fn new(limit: usize) -> Self {
        Self {
            limit: limit.max(1),
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            event: None,
            data: String::new(),
            has_data: false,
            id: None,
            retry: None,
            size: 0,
            failed: false,
        }
    }

    /// Feeds a chunk; complete events are appended to `out`. After an error the decoder stays
    /// failed.
    pub fn feed(&mut self, mut chunk: &[u8], out: &mut VecDeque<Event>) -> Result<(), TooLarge> {
        if self.failed {
            return Err(TooLarge { limit: self.limit });
        }
        if self.at_start {
            // Skip a BOM only if it arrives whole in the first chunk (servers do not send one).
            if let Some(rest) = chunk.strip_prefix(b"\xEF\xBB\xBF") {
                chunk = rest;
            }
            if !chunk.is_empty() {
                self.at_start = false;
            }
        }
        for &byte in chunk {
            if self.after_cr {
                self.after_cr = false;
                if byte == b'\n' {
                    continue;
                }
            }
            match byte {
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(out)?;
                }
                b'\n' => self.end_line(out)?,
                _ => {
                    if self.line.len() >= self.limit {
                        return Err(self.fail());
                    }
                    self.line.push(byte);
                }
            }
        }
        Ok(())
    }

    fn fail(&mut self) -> TooLarge {
        self.failed = true;
        self.line = Vec::new();
        self.data = String::new();
        TooLarge { limit: self.limit }
    }

    fn end_line(&mut self, out: &mut VecDeque<Event>) -> Result<(), TooLarge> {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line[0] == b':' {
            // A comment (keep-alive).
            return Ok(());
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &b""[..]),
        };
        match field {
            b"data" => {
                let added = value.len() + usize::from(self.has_data);
                if self.size.saturating_add(added) > self.limit {
                    return Err(self.fail());
                }
                self.size += added;
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            b"event" => {
                if self.size.saturating_add(value.len()) > self.limit {
                    return Err(self.fail());
                }
                self.size += value.len();
                self.event = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"id" if !value.contains(&0) => {
                self.id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut VecDeque<Event>) {
        let event = self.event.take();
        let id = self.id.take();
        let retry = self.retry.take();
        self.size = 0;
        if !self.has_data {
            // Per the spec an event without data is not dispatched; keep `retry` and `id`
            // visible all the same (a server may send them alone to set up resumption).
            if id.is_some() || retry.is_some() {
                out.push_back(Event {
                    event,
                    data: String::new(),
                    id,
                    retry,
                });
            }
            return;
        }
        self.has_data = false;
        out.push_back(Event {
            event,
            data: std::mem::take(&mut self.data),
            id,
            retry,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(limit: usize, chunks: &[&[u8]]) -> Result<Vec<Event>, TooLarge> {
        let mut d = Decoder::new(limit);
        let mut out = VecDeque::new();
        for c in chunks {
            d.feed(c, &mut out)?;
        }
        Ok(out.into_iter().collect())
    }

    #[test]
    fn events_split_across_chunks_and_line_endings() {
        let events = decode(
            1024,
            &[
                b"\xEF\xBB\xBFevent: endpoint\r\ndata: /messages?x=1\r",
                b"\n\r\n: ping\n\ndata: {\"a\"",
                b":1}\ndata: two\n\n",
            ],
        )
        .unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].event.as_deref(), Some("endpoint"));
        assert_eq!(events[0].data, "/messages?x=1");
        assert!(events[1].is_message());
        assert_eq!(events[1].data, "{\"a\":1}\ntwo");
    }

    #[test]
    fn ids_and_retry() {
        let events = decode(64, &[b"id: 7\nretry: 1500\ndata:x\n\nid: 8\n\n"]).unwrap();
        assert_eq!(events[0].id.as_deref(), Some("7"));
        assert_eq!(events[0].retry, Some(1500));
        assert_eq!(events[0].data, "x");
        assert_eq!(events[1].id.as_deref(), Some("8"));
        assert_eq!(events[1].data, "");
    }

    #[test]
    fn oversized_line_and_event_fail_early() {
        let long = vec![b'a'; 100];
        assert!(decode(50, &[b"data: ", &long]).is_err());
        assert!(
            decode(
                50,
                &[
                    b"data: 0123456789012345678901234567890\n",
                    b"data: 0123456789012345678901234567890\n"
                ]
            )
            .is_err()
        );
        // Comments do not count towards the event size.
        assert!(
            decode(
                50,
                &[
                    b": 0123456789012345678901234567890\n",
                    b": 0123456789012345678901234567890\n"
                ]
            )
            .is_ok()
        );
    }
}
