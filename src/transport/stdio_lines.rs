//! A stdio server's output, cut into lines and checked before rmcp parses them.
//!
//! rmcp drops every line it cannot parse and reads on, which is right for the log lines some
//! servers print to stdout, but it leaves a call whose answer was dropped waiting for its
//! timeout. So each line is checked here first, and only the three things that can go wrong
//! with an answer the server did send are acted on:
//!
//! - **Too long** (over the message limit): a message that large cannot be framed and what
//!   follows belongs to it, so the stream ends and the reason goes to the [`StreamFault`]; every
//!   call in flight then fails naming the limit and the restart policy takes over.
//! - **Not UTF-8**: decoded lossily (U+FFFD for each bad sequence), as Node's stream decoding
//!   in the TypeScript SDK does, instead of dropped.
//! - **Nested deeper than the JSON parser goes** ([`MAX_NESTING`]): a response is replaced by
//!   an error response to the same id naming the limit, so its call fails at once; a request
//!   or notification is dropped, as rmcp would.
//!
//! The checks cost one UTF-8 validation per line and, only for a line with more brackets than
//! the nesting limit, one structural scan. Before them, a large answer to one of rmcp's
//! `tools/list` requests is cut down to the tools the client keeps
//! ([`listing_bound`](super::listing_bound)), so rmcp never parses the others.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

use super::json_peek::scan;

/// The deepest nesting serde_json parses (its recursion limit of 128 counts the level that
/// fails): rmcp drops a line nested deeper. A test below ties this to rmcp's parser.
pub const MAX_NESTING: usize = 127;

/// The line bound to give rmcp's reader behind a `CheckedLines` of `max`: a line that was
/// not UTF-8 is up to three times longer once repaired (each bad byte becomes U+FFFD, three
/// bytes), and rmcp's bound counts the newline. Never reached by a raw line: those end the
/// stream at `max`.
pub const fn rmcp_line_limit(max: usize) -> usize {
    max.saturating_mul(3).saturating_add(2)
}

/// Bytes read from the server at a time (a Linux pipe's default capacity).
const CHUNK: usize = 64 * 1024;

/// Why a server's output stream can no longer be trusted, once it cannot. Shared by the server's
/// handle (to tell a call that failed with the connection why) and each process spawned for it.
#[derive(Clone, Default)]
pub struct StreamFault(Arc<Mutex<Option<String>>>);

impl StreamFault {
    pub fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn set(&self, why: String) {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(why);
        }
    }

    pub(crate) fn clear(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// The server's stdout as checked lines (see the module docs). Ends at the first line longer
/// than `max_line` bytes (the newline not counted), recording why in the [`StreamFault`].
///
/// The state sits behind a lock shared with [`PollableOutput`]: another thread (the addon's
/// JS thread) may read the pipe in the reader's place while it is told to (see
/// [`CheckedLines::pollable`]); the lines it reads are checked, and given to the lane or queued
/// for the reader, exactly as the reader's own.
pub struct CheckedLines<R> {
    shared: Arc<Shared<R>>,
}

struct Shared<R> {
    state: Mutex<State<R>>,
}

struct State<R> {
    inner: R,
    max_line: usize,
    fault: StreamFault,
    /// Bytes read from the server, not yet looked at.
    chunk: Box<[u8]>,
    /// The line being read: no newline yet.
    line: Vec<u8>,
    /// Checked lines waiting for the reader, and how much of them it has taken.
    ready: Vec<u8>,
    served: usize,
    /// Lines handed to rmcp since its task last yielded (see [`LINES_PER_TURN`]).
    turn: usize,
    /// The server closed its end (what is left of an unterminated line is dropped, as rmcp does).
    eof: bool,
    /// A line went over the limit: nothing more is passed on.
    ended: bool,
    /// A read failed while another thread read in the reader's place: the reader gets it.
    failed: Option<std::io::Error>,
    /// Shown every line before rmcp parses it.
    hints: Option<std::sync::Arc<super::task_hints::TaskHints>>,
    /// Takes the lines that answer its calls before rmcp sees them; closed when the output ends.
    lane: Option<Arc<super::call_lane::CallLane>>,
    /// Cuts a large `tools/list` answer down to what the client keeps, before anything else
    /// looks at it.
    listing: Option<Arc<super::listing_bound::ListingBound>>,
    /// Another thread reads the pipe: the reader only takes what it queued.
    polled: bool,
    /// The reader, waiting for lines another thread reads.
    reader: Option<std::task::Waker>,
    /// The reader is gone (the session ended): nothing reads any more.
    closed: bool,
}

impl<R> CheckedLines<R> {
    pub fn new(inner: R, max_line: usize, fault: StreamFault) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    inner,
                    max_line,
                    fault,
                    chunk: vec![0; CHUNK].into_boxed_slice(),
                    line: Vec::new(),
                    ready: Vec::new(),
                    served: 0,
                    turn: 0,
                    eof: false,
                    ended: false,
                    failed: None,
                    hints: None,
                    lane: None,
                    listing: None,
                    polled: false,
                    reader: None,
                    closed: false,
                }),
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State<R>> {
        self.shared.lock()
    }

    /// Lines answering `lane`'s calls go to it, not to the reader.
    pub fn with_lane(self, lane: Arc<super::call_lane::CallLane>) -> Self {
        self.state().lane = Some(lane);
        self
    }

    /// Large answers to `tools/list` are cut down to what `listing` keeps.
    pub fn with_listing(self, listing: Arc<super::listing_bound::ListingBound>) -> Self {
        self.state().listing = Some(listing);
        self
    }

    /// Shows every line to `hints` (what rmcp's types drop about tasks).
    pub fn with_hints(self, hints: std::sync::Arc<super::task_hints::TaskHints>) -> Self {
        self.state().hints = Some(hints);
        self
    }
}

impl<R> Shared<R> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<R>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl<R> State<R> {
    /// Takes `read` bytes from `chunk` into lines; false once a line went over the limit.
    fn take_chunk(&mut self, read: usize) -> bool {
        let mut rest = &self.chunk[..read];
        while let Some(newline) = memchr::memchr(b'\n', rest) {
            let (part, after) = rest.split_at(newline);
            rest = &after[1..];
            if self.line.len() + part.len() > self.max_line {
                return false;
            }
            if self.line.is_empty() {
                let cut = self.listing.as_deref().and_then(|l| l.answered(part));
                let part = cut.as_deref().unwrap_or(part);
                if let Some(hints) = &self.hints {
                    hints.observe(part);
                }
                if !lane_takes(self.lane.as_deref(), part) {
                    push_checked(&mut self.ready, part);
                }
            } else {
                self.line.extend_from_slice(part);
                if let Some(cut) = self.listing.as_deref().and_then(|l| l.answered(&self.line)) {
                    // The long line's buffer goes now, before rmcp reads the shorter one.
                    self.line = cut;
                }
                if let Some(hints) = &self.hints {
                    hints.observe(&self.line);
                }
                if !lane_takes(self.lane.as_deref(), &self.line) {
                    if self.ready.is_empty() && passes(&self.line) {
                        // A long line that needs no change is handed over, not copied.
                        self.line.push(b'\n');
                        std::mem::swap(&mut self.ready, &mut self.line);
                    } else {
                        push_checked(&mut self.ready, &self.line);
                    }
                }
                self.line.clear();
                release_if_large(&mut self.line);
            }
        }
        if self.line.len() + rest.len() > self.max_line {
            return false;
        }
        self.line.extend_from_slice(rest);
        true
    }

    /// `read` bytes came in (0: the server closed its end).
    fn took(&mut self, read: usize) {
        if read == 0 {
            self.eof = true;
            self.line = Vec::new();
            self.close_lane();
        } else if !self.take_chunk(read) {
            self.end_over_limit();
        }
    }

    fn end_over_limit(&mut self) {
        self.ended = true;
        self.line = Vec::new();
        self.fault.set(format!(
            "the server sent a message larger than the {}-byte limit; the session was ended",
            self.max_line
        ));
        self.close_lane();
    }

    /// No answer can come any more: the lane's waiting calls fail now.
    fn close_lane(&self) {
        if let Some(lane) = &self.lane {
            lane.close();
        }
    }

    /// Whether nothing more will be read.
    fn over(&self) -> bool {
        self.eof || self.ended || self.closed || self.failed.is_some()
    }
}

impl<R> Drop for CheckedLines<R> {
    fn drop(&mut self) {
        let mut state = self.state();
        state.closed = true;
        state.reader = None;
        state.close_lane();
    }
}

/// Whether `lane` takes `line`: read as it is, or as it stands checked (repaired, or in place
/// of what cannot be read, see the module docs) when it does not pass unchanged.
fn lane_takes(lane: Option<&super::call_lane::CallLane>, line: &[u8]) -> bool {
    let Some(lane) = lane else {
        return false;
    };
    if lane.take(line) {
        return true;
    }
    if passes(line) {
        return false;
    }
    let mut checked = Vec::new();
    push_checked(&mut checked, line);
    checked.pop();
    !checked.is_empty() && lane.take(&checked)
}

impl<R: AsyncRead + Unpin> AsyncRead for CheckedLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        // The lane calls this read answers go on here once it is done (see `woken_here`).
        super::woken_here::reading(|| self.read_lines(cx, buf))
    }
}

impl<R: AsyncRead + Unpin> CheckedLines<R> {
    fn read_lines(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let mut state = self.state();
        let this = &mut *state;
        loop {
            if this.served < this.ready.len() {
                if this.turn == LINES_PER_TURN {
                    // rmcp's task goes to the back of the queue; it comes back at once.
                    this.turn = 0;
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                let (take, lines) = lines_to_hand_over(
                    &this.ready[this.served..],
                    buf.remaining(),
                    LINES_PER_TURN - this.turn,
                );
                this.turn += lines;
                buf.put_slice(&this.ready[this.served..this.served + take]);
                this.served += take;
                if this.served == this.ready.len() {
                    this.ready.clear();
                    this.served = 0;
                    release_if_large(&mut this.ready);
                }
                return Poll::Ready(Ok(()));
            }
            if let Some(error) = this.failed.take() {
                this.eof = true;
                return Poll::Ready(Err(error));
            }
            if this.ended || this.eof {
                return Poll::Ready(Ok(()));
            }
            if this.polled {
                // Another thread reads; it wakes the reader when it queued lines.
                this.reader = Some(cx.waker().clone());
                return Poll::Pending;
            }
            let mut chunk = ReadBuf::new(&mut this.chunk);
            let Poll::Ready(read) = Pin::new(&mut this.inner).poll_read(cx, &mut chunk) else {
                // rmcp waits for the server: its task yields here anyway.
                this.turn = 0;
                // Kept for whoever reads in the reader's place from now on (see `drain`).
                if !this
                    .reader
                    .as_ref()
                    .is_some_and(|w| w.will_wake(cx.waker()))
                {
                    this.reader = Some(cx.waker().clone());
                }
                return Poll::Pending;
            };
            if let Err(error) = read {
                this.close_lane();
                return Poll::Ready(Err(error));
            }
            let read = chunk.filled().len();
            this.took(read);
        }
    }
}

/// How many lines rmcp is handed before its task yields (see [`lines_to_hand_over`]).
const LINES_PER_TURN: usize = 64;

/// How much of `ready` (whole lines, read already) to hand to rmcp now: at most `room` bytes
/// and `lines` lines. Lines already read cost the reader no I/O, so tokio's budget never
/// makes rmcp's task yield while it goes through them, and rmcp spawns a task for every
/// notification: with one worker, a flood of 100,000 notifications spawned them faster than
/// they ran (182 MB, and calls to other servers waited 400 ms). So rmcp's task yields after
/// [`LINES_PER_TURN`] lines, behind the tasks it spawned meanwhile.
fn lines_to_hand_over(ready: &[u8], room: usize, lines: usize) -> (usize, usize) {
    let within = &ready[..ready.len().min(room)];
    let mut take = 0;
    let mut counted = 0;
    while take < within.len() && counted < lines {
        take = memchr::memchr(b'\n', &within[take..]).map_or(within.len(), |n| take + n + 1);
        counted += 1;
    }
    (take, counted)
}

/// A server's output that another thread can read in the reader's place: it waits until the
/// file descriptor is readable and calls [`PollableOutput::drain`]. The addon's JS thread does,
/// so that the answer to a call it is waiting for is read, and the call finished, without a
/// hand-off through a tokio worker.
#[cfg(unix)]
pub trait PollableOutput: Send + Sync {
    /// The pipe to wait on (readable); open as long as this is.
    fn fd(&self) -> std::os::fd::RawFd;
    /// From now on (`true`) the caller reads, or (`false`) the reader reads again.
    fn set_polled(&self, polled: bool);
    /// Reads, without blocking, whatever the server has written; lines go where the reader's
    /// own would. [`Drained::Over`]: nothing more will come (the server closed its end, the
    /// stream was ended, or the session is gone): stop waiting on the pipe.
    /// [`Drained::HandedOver`]: a message of more than 64 KiB is arriving; the reader reads it
    /// (stop waiting on the pipe until told to read again).
    fn drain(&self) -> Drained;
    /// Whether nothing more will be read (the session is gone or its output ended).
    fn is_over(&self) -> bool;
}

/// Given the output of every stdio session as it opens, so that another thread can read it
/// (see [`PollableOutput`]); by default nobody does.
#[derive(Clone, Default)]
pub struct OutputWatcher(#[cfg(unix)] Option<WatchOutput>);

/// What an [`OutputWatcher`] calls with each session's output.
#[cfg(unix)]
pub type WatchOutput = Arc<dyn Fn(Arc<dyn PollableOutput>) + Send + Sync>;

impl std::fmt::Debug for OutputWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputWatcher")
    }
}

impl OutputWatcher {
    #[cfg(unix)]
    pub fn new(watch: WatchOutput) -> Self {
        Self(Some(watch))
    }

    /// Offers `lines` to the watcher, if there is one.
    #[cfg(unix)]
    pub fn offer<R: PipeSource>(&self, lines: &CheckedLines<R>) {
        if let Some(watch) = &self.0 {
            watch(lines.pollable());
        }
    }

    #[cfg(not(unix))]
    pub fn offer<R>(&self, _lines: &CheckedLines<R>) {}
}

/// A line this long, still unfinished, is left to the reader (see [`PollableOutput::drain`]).
#[cfg(unix)]
const HAND_OVER: usize = CHUNK;

/// What [`PollableOutput::drain`] found.
#[cfg(unix)]
#[derive(Debug, PartialEq, Eq)]
pub enum Drained {
    /// Read what there was; more may come.
    Open,
    /// A large message is on its way: the reader reads from here on (stop waiting on the
    /// pipe; [`PollableOutput::set_polled`] to read again).
    HandedOver,
    /// Nothing more will come.
    Over,
}

/// A pipe another thread can read in the reader's place: while it does, the reader's own
/// watch on it is suspended (no wake-ups for output the reader would not read).
#[cfg(unix)]
pub trait PipeSource: std::os::fd::AsRawFd + Send + 'static {
    fn suspend(&mut self);
}

#[cfg(unix)]
impl PipeSource for super::pipe_reader::PipeReader {
    fn suspend(&mut self) {
        super::pipe_reader::PipeReader::suspend(self);
    }
}

#[cfg(unix)]
impl<R: PipeSource> CheckedLines<R> {
    /// The handle through which another thread may read in the reader's place.
    pub fn pollable(&self) -> Arc<dyn PollableOutput> {
        self.shared.clone()
    }
}

#[cfg(unix)]
impl<R: PipeSource> PollableOutput for Shared<R> {
    fn fd(&self) -> std::os::fd::RawFd {
        self.lock().inner.as_raw_fd()
    }

    fn set_polled(&self, polled: bool) {
        let mut state = self.lock();
        state.polled = polled;
        if polled {
            state.inner.suspend();
        } else {
            // The reader may be waiting on lines nobody reads any more.
            if let Some(reader) = state.reader.take() {
                reader.wake();
            }
        }
    }

    fn drain(&self) -> Drained {
        let mut state = self.lock();
        let this = &mut *state;
        if !this.polled || this.over() {
            return if this.over() {
                Drained::Over
            } else {
                Drained::Open
            };
        }
        let fd = this.inner.as_raw_fd();
        let queued = this.ready.len();
        loop {
            // SAFETY: `fd` is open while `inner` is, and the buffer is ours for its length.
            let read = unsafe { libc::read(fd, this.chunk.as_mut_ptr().cast(), this.chunk.len()) };
            if read >= 0 {
                let read = read as usize;
                this.took(read);
                if !this.over()
                    && (this.line.len() >= HAND_OVER || this.ready.len() - this.served >= HAND_OVER)
                {
                    // A large message is coming: reading and handling it would hold the
                    // caller's thread (the JS thread) for milliseconds. Or rmcp has not taken
                    // what was read for it yet: reading on would only queue more, without
                    // bound (a flood of notifications). The reader reads from here on, as
                    // fast as rmcp takes it.
                    this.polled = false;
                    if let Some(reader) = this.reader.take() {
                        reader.wake();
                    }
                    return Drained::HandedOver;
                }
                // A short read emptied the pipe: the caller's poll tells when more comes
                // (trying again would only find nothing, one more system call per answer).
                if this.over() || read < this.chunk.len() {
                    break;
                }
                continue;
            }
            let error = std::io::Error::last_os_error();
            match error.kind() {
                std::io::ErrorKind::Interrupted => continue,
                std::io::ErrorKind::WouldBlock => break,
                _ => {
                    this.close_lane();
                    this.failed = Some(error);
                    break;
                }
            }
        }
        if (this.ready.len() != queued || this.over())
            && let Some(reader) = this.reader.take()
        {
            reader.wake();
        }
        if this.over() {
            Drained::Over
        } else {
            Drained::Open
        }
    }

    fn is_over(&self) -> bool {
        self.lock().over()
    }
}

/// An empty buffer that grew past this is freed rather than kept for the next line: an idle
/// server holds no copy of the largest message it ever sent.
const KEEP_CAPACITY: usize = 1 << 20;

fn release_if_large(buf: &mut Vec<u8>) {
    if buf.capacity() > KEEP_CAPACITY {
        *buf = Vec::new();
    }
}

/// Whether `line` passes unchanged.
fn passes(line: &[u8]) -> bool {
    simdutf8::basic::from_utf8(line).is_ok()
        && !(may_nest_deeper(line, MAX_NESTING) && scan(line).depth > MAX_NESTING)
}

/// Appends `line` and a newline to `out`, or what stands in for it (see the module docs).
fn push_checked(out: &mut Vec<u8>, line: &[u8]) {
    let repaired = match simdutf8::basic::from_utf8(line) {
        Ok(_) => None,
        Err(_) => Some(String::from_utf8_lossy(line).into_owned()),
    };
    let line = repaired.as_deref().map_or(line, str::as_bytes);
    if may_nest_deeper(line, MAX_NESTING) && scan(line).depth > MAX_NESTING {
        let problem = format!(
            "the server's response is nested more than {MAX_NESTING} levels deep, deeper than this client parses"
        );
        push_unreadable(out, line, &problem);
        return;
    }
    // Bytes that were not UTF-8 outside a string leave a line that is not JSON even decoded
    // (read as rmcp reads it: after a byte-order mark).
    let body = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
    if repaired.is_some() && serde_json::from_slice::<serde::de::IgnoredAny>(body).is_err() {
        let problem = "the server's response is not valid JSON (it holds bytes that are not UTF-8)";
        push_unreadable(out, line, problem);
        return;
    }
    out.extend_from_slice(line);
    out.push(b'\n');
}

/// In place of a line rmcp would drop: an error response naming `problem` when the line is a
/// response with a recognisable id (so its call fails at once), else nothing (a request or
/// notification nobody can answer, or nothing to answer).
fn push_unreadable(out: &mut Vec<u8>, line: &[u8], problem: &str) {
    let shape = scan(line);
    let Some(id) = shape.id.filter(|_| !shape.has_method) else {
        return;
    };
    let error = serde_json::json!({ "code": -32700, "message": problem });
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(&line[id]);
    out.extend_from_slice(br#","error":"#);
    out.extend_from_slice(error.to_string().as_bytes());
    out.extend_from_slice(b"}\n");
}

/// Whether `line` has more opening brackets than `limit` (inside strings too): only then can it
/// nest deeper. Fast: a vectorised count.
fn may_nest_deeper(line: &[u8], limit: usize) -> bool {
    memchr::memchr2_iter(b'{', b'[', line).nth(limit).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn nested(depth: usize, id_first: bool) -> String {
        let body = format!("{}1{}", "[".repeat(depth - 2), "]".repeat(depth - 2));
        if id_first {
            format!(r#"{{"jsonrpc":"2.0","id":7,"result":{{"x":{body}}}}}"#)
        } else {
            format!(r#"{{"result":{{"x":{body}}},"jsonrpc":"2.0","id":"a\"b"}}"#)
        }
    }

    fn checked(input: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for line in input.split_inclusive(|&b| b == b'\n') {
            push_checked(&mut out, line.strip_suffix(b"\n").unwrap_or(line));
        }
        out
    }

    #[test]
    fn the_nesting_limit_is_the_parsers() {
        type Rx = rmcp::model::ServerJsonRpcMessage;
        assert!(serde_json::from_str::<Rx>(&nested(MAX_NESTING, true)).is_ok());
        assert!(serde_json::from_str::<Rx>(&nested(MAX_NESTING + 1, true)).is_err());
    }

    #[test]
    fn a_response_too_deep_becomes_an_error_for_its_id() {
        for (id_first, id) in [
            (true, serde_json::json!(7)),
            (false, serde_json::json!("a\"b")),
        ] {
            let out = checked(nested(100_000, id_first).as_bytes());
            let reply: serde_json::Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(reply["id"], id);
            let message = reply["error"]["message"].as_str().unwrap();
            assert!(message.contains("nested more than 127 levels"), "{message}");
        }
        // At the limit the line passes unchanged.
        let ok = nested(MAX_NESTING, true);
        assert_eq!(checked(ok.as_bytes()), format!("{ok}\n").into_bytes());
    }

    #[test]
    fn a_request_or_notification_too_deep_is_dropped() {
        let deep = "[".repeat(200);
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{deep}}}"#
        );
        let note = format!(
            r#"{{"params":{{"x":{deep}}},"method":"notifications/progress","jsonrpc":"2.0"}}"#
        );
        assert!(checked(request.as_bytes()).is_empty());
        assert!(checked(note.as_bytes()).is_empty());
        // Brackets inside strings do not count as nesting.
        let quoted = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"t":"{deep}\\\"{deep}"}}}}"#);
        assert_eq!(
            checked(quoted.as_bytes()),
            format!("{quoted}\n").into_bytes()
        );
    }

    #[test]
    fn invalid_utf8_outside_strings_fails_the_response_it_breaks() {
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":4,\xff\xfe\"result\":{}}\n";
        let reply: serde_json::Value = serde_json::from_slice(&checked(line)).unwrap();
        assert_eq!(reply["id"], 4);
        assert_eq!(
            reply["error"]["message"],
            "the server's response is not valid JSON (it holds bytes that are not UTF-8)"
        );
        // A log line with such bytes (no id) is dropped: rmcp would ignore it anyway.
        assert!(checked(b"log \xff line\n").is_empty());
    }

    #[test]
    fn a_byte_order_mark_does_not_make_a_repaired_line_unreadable() {
        // Found by fuzzing (stdio_lines): rmcp skips a leading BOM, so this check must too.
        let line = b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"a\xffb\"}}\n";
        let out = checked(line);
        assert!(out.starts_with("\u{feff}".as_bytes()), "{out:?}");
        let reply: serde_json::Value = serde_json::from_slice(&out[3..]).unwrap();
        assert_eq!(reply["result"]["t"], "a\u{FFFD}b");
    }

    #[test]
    fn invalid_utf8_is_decoded_lossily() {
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"a\xff\xfeb\xe2\x82\"}}\n";
        let out = checked(line);
        let reply: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(reply["result"]["t"], "a\u{FFFD}\u{FFFD}b\u{FFFD}");
    }

    async fn read_all(input: Vec<u8>, max: usize, chunk_reads: usize) -> (Vec<u8>, Option<String>) {
        let fault = StreamFault::default();
        // A reader that hands out `chunk_reads` bytes at a time, as a pipe may.
        let reader = tokio_test_reader(input, chunk_reads);
        let mut lines = CheckedLines::new(reader, max, fault.clone());
        let mut out = Vec::new();
        lines.read_to_end(&mut out).await.unwrap();
        (out, fault.get())
    }

    /// A reader that hands out at most `step` bytes per read, as a pipe may.
    fn tokio_test_reader(input: Vec<u8>, step: usize) -> impl AsyncRead + Unpin {
        struct Dribble(std::io::Cursor<Vec<u8>>, usize);
        impl AsyncRead for Dribble {
            fn poll_read(
                mut self: Pin<&mut Self>,
                _cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<std::io::Result<()>> {
                let at = self.0.position() as usize;
                let data = self.0.get_ref();
                let take = (data.len() - at).min(self.1).min(buf.remaining());
                buf.put_slice(&data[at..at + take]);
                self.0.set_position((at + take) as u64);
                Poll::Ready(Ok(()))
            }
        }
        Dribble(std::io::Cursor::new(input), step)
    }

    /// rmcp spawns a task for each notification it reads. A reader whose lines are already
    /// read never waits, so without a yield the tasks it spawned would not run until the flood
    /// ended (with one worker: every notification a task at once). An in-memory reader stands
    /// in for the pipe; `hostile-servers.spec.ts` floods a real server.
    #[test]
    fn a_flood_of_lines_lets_the_tasks_it_spawns_run() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use tokio::io::AsyncBufReadExt;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (outstanding, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (now, peak) = (outstanding.clone(), most.clone());
        // rmcp's loop is a task of its own.
        let count = runtime.block_on(runtime.spawn(async move {
            let input: Vec<u8> = (0..20_000)
                .flat_map(|i| {
                    format!("{{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{{\"i\":{i}}}}}\n")
                        .into_bytes()
                })
                .collect();
            let lines = CheckedLines::new(
                tokio_test_reader(input, CHUNK),
                1 << 20,
                StreamFault::default(),
            );
            let mut reader = tokio::io::BufReader::new(lines);
            let mut line = Vec::new();
            let mut count = 0;
            while reader.read_until(b'\n', &mut line).await.unwrap() > 0 {
                line.clear();
                count += 1;
                peak.fetch_max(now.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                let done = now.clone();
                tokio::spawn(async move {
                    done.fetch_sub(1, Ordering::SeqCst);
                });
            }
            count
        }));
        assert_eq!(count.unwrap(), 20_000);
        let most = most.load(Ordering::SeqCst);
        assert!(
            most <= 2 * LINES_PER_TURN,
            "{most} spawned tasks waited at once"
        );
    }

    #[tokio::test]
    async fn lines_split_across_reads_arrive_whole_and_checked() {
        let deep = nested(1000, false);
        let input = format!("log line\n{{\"a\":1}}\n{deep}\n{{\"b\":\"\u{e9}\"}}\nunterminated");
        for step in [1, 3, 7, 4096, usize::MAX / 2] {
            let step = step.min(input.len());
            let (out, fault) = read_all(input.clone().into_bytes(), 10_000, step).await;
            let text = String::from_utf8(out).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), 4, "step {step}: {text}");
            assert_eq!(lines[0], "log line");
            assert_eq!(lines[1], "{\"a\":1}");
            assert!(lines[2].contains("\"error\""), "{}", lines[2]);
            assert_eq!(lines[3], "{\"b\":\"\u{e9}\"}");
            assert_eq!(fault, None);
        }
    }

    #[tokio::test]
    async fn a_large_listing_answer_is_cut_before_the_reader_gets_it() {
        use super::super::listing_bound::{ListingBound, TRIM_FROM};
        let tools: Vec<String> = (0..10_000)
            .map(|i| format!(r#"{{"name":"t{i}","inputSchema":{{"type":"object"}}}}"#))
            .collect();
        let answer = |id: u32| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{}]}}}}"#,
                tools.join(",")
            )
        };
        assert!(answer(5).len() > TRIM_FROM);
        // The answer to the listing request is cut; the same answer again (nobody asked) and
        // the lines around it pass as they are.
        let input = format!("log\n{}\n{}\n{{\"b\":2}}\n", answer(5), answer(5));
        for step in [4096, CHUNK] {
            let bound = ListingBound::new(2, Arc::new(|name: &str| name != "t0"));
            bound.sent(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}\n");
            let reader = tokio_test_reader(input.clone().into_bytes(), step);
            let mut lines = CheckedLines::new(reader, 1 << 22, StreamFault::default())
                .with_listing(bound.clone());
            let mut out = Vec::new();
            lines.read_to_end(&mut out).await.unwrap();
            let text = String::from_utf8(out).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), 4);
            assert_eq!(lines[0], "log");
            assert_eq!(
                lines[1],
                r#"{"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"t1","inputSchema":{"type":"object"}},{"name":"t2","inputSchema":{"type":"object"}}]}}"#
            );
            assert_eq!(lines[2], answer(5));
            assert_eq!(lines[3], "{\"b\":2}");
            // t3..t9999 were wanted and left out; t0 was not wanted.
            assert_eq!(bound.take_beyond(), 9_997);
        }
    }

    #[tokio::test]
    async fn a_line_over_the_limit_ends_the_stream_naming_it() {
        let input = format!("{{\"a\":1}}\n{}\n{{\"b\":2}}\n", "x".repeat(101)).into_bytes();
        for step in [1, 50, 1000] {
            let (out, fault) = read_all(input.clone(), 100, step).await;
            assert_eq!(out, b"{\"a\":1}\n");
            assert!(fault.unwrap().contains("larger than the 100-byte limit"));
        }
        // Exactly at the limit passes.
        let at = format!("{}\n", "y".repeat(100));
        let (out, fault) = read_all(at.clone().into_bytes(), 100, 33).await;
        assert_eq!(out, at.into_bytes());
        assert_eq!(fault, None);
    }

    /// The other thread (the JS thread) reads while a call is alone; if rmcp does not take the
    /// lines it reads as fast as a server writes them, it hands reading back to the reader
    /// instead of queueing them without bound.
    #[cfg(unix)]
    #[tokio::test]
    async fn the_other_thread_does_not_read_ahead_of_rmcp_without_bound() {
        let mut child = tokio::process::Command::new("yes")
            .arg("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}")
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let pipe =
            crate::transport::pipe_reader::PipeReader::new(child.stdout.take().unwrap()).unwrap();
        let lines = CheckedLines::new(pipe, 1 << 22, StreamFault::default());
        let output = lines.pollable();
        output.set_polled(true);
        let mut handed_over = false;
        for _ in 0..2_000 {
            let mut fd = libc::pollfd {
                fd: output.fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            assert!(
                unsafe { libc::poll(&mut fd, 1, 10_000) } > 0,
                "`yes` stopped writing"
            );
            if output.drain() == Drained::HandedOver {
                handed_over = true;
                break;
            }
        }
        let queued = lines.state().ready.len();
        assert!(
            handed_over,
            "still reading with {queued} bytes queued for rmcp"
        );
        assert!(queued < HAND_OVER + CHUNK, "{queued} bytes queued");
    }

    /// Another thread reading in the reader's place (as the addon's JS thread does): the reader
    /// gets every line, in order, whoever read it; a large message is handed back; after
    /// `set_polled(false)` the reader reads itself again. Real child process, real pipe.
    #[cfg(unix)]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn another_thread_reads_in_the_readers_place() {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        let mut child = tokio::process::Command::new("cat")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let pipe =
            crate::transport::pipe_reader::PipeReader::new(child.stdout.take().unwrap()).unwrap();
        let lines = CheckedLines::new(pipe, 1 << 22, StreamFault::default());
        let output = lines.pollable();
        let mut reader = BufReader::new(lines).lines();

        // The other thread: waits for the pipe and drains it, until told to stop.
        output.set_polled(true);
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (resumed, resume) = std::sync::mpsc::channel::<()>();
        let drainer = {
            let (output, stop) = (output.clone(), stop.clone());
            std::thread::spawn(move || {
                let (mut drains, mut handed_over) = (0, 0);
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let mut fd = libc::pollfd {
                        fd: output.fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    // SAFETY: one valid pollfd.
                    if unsafe { libc::poll(&mut fd, 1, 20) } <= 0 {
                        continue;
                    }
                    match output.drain() {
                        Drained::Open => drains += 1,
                        Drained::HandedOver => {
                            handed_over += 1;
                            // Back to reading once the reader has the large line (the
                            // addon does at its next lone call).
                            resume.recv().unwrap();
                            output.set_polled(true);
                        }
                        Drained::Over => break,
                    }
                }
                (drains, handed_over)
            })
        };
        let line = |round: usize| {
            if round == 25 {
                "x".repeat(300_000)
            } else {
                format!("{{\"n\":{round},\"t\":\"\u{e9}\"}}")
            }
        };
        // Written from another task: the pipe holds 64 KiB, the large line needs a reader.
        let writer = tokio::spawn(async move {
            for round in 0..50 {
                stdin
                    .write_all(format!("{}\n", line(round)).as_bytes())
                    .await
                    .unwrap();
            }
            stdin
        });
        for round in 0..50 {
            let got = reader.next_line().await.unwrap().unwrap();
            assert_eq!(got, line(round), "round {round}");
            if round == 25 {
                resumed.send(()).unwrap();
            }
        }
        let mut stdin = writer.await.unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let (drains, handed_over) = drainer.join().unwrap();
        assert_eq!(handed_over, 1, "the 300 KB line is handed over, once");
        assert!(drains >= 1, "the other thread read lines ({drains} drains)");

        // The reader reads by itself again.
        output.set_polled(false);
        stdin.write_all(b"after\n").await.unwrap();
        assert_eq!(reader.next_line().await.unwrap().unwrap(), "after");
        drop(stdin);
        assert_eq!(reader.next_line().await.unwrap(), None);
        assert!(output.is_over());
    }
}
