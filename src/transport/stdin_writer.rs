//! A stdio server's stdin, shared by rmcp and the [call lane](super::call_lane): whole lines
//! only, in the order they were handed over.
//!
//! A line is written at once, by the thread handing it over, when nothing is queued ahead of it
//! and the pipe takes it (Unix: a non-blocking `write`); otherwise it is queued, and one
//! flusher task writes the queue, many lines per `write`. rmcp's side ([`RmcpStdin`]) is an
//! `AsyncWrite` that hands over only whole lines (its encoder may write a message in pieces)
//! and whose flush waits until its lines are in the pipe, so a server that stops reading
//! still holds rmcp up as before. When rmcp closes or drops its side, the flusher writes what
//! is queued and closes the pipe: the server sees end of input.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use std::cell::RefCell;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::process::ChildStdin;
use tokio::sync::Notify;

/// The server's stdin: cheap to clone, shared by every writer.
#[derive(Clone)]
pub struct StdinWriter {
    inner: Arc<Inner>,
}

struct Inner {
    state: Mutex<State>,
    /// Wakes the flusher (a permit is kept when it is not waiting).
    wake: Notify,
}

#[derive(Default)]
struct State {
    /// Whole lines waiting for the flusher.
    queued: Vec<u8>,
    /// The flusher holds bytes taken from `queued`: a direct write would overtake them.
    writing: bool,
    /// Bytes handed over in total, and bytes in the pipe in total.
    accepted: u64,
    written: u64,
    /// rmcp's flush waiting for `written` to reach its mark.
    flush_waiter: Option<Waker>,
    /// rmcp closed its side: stdin closes once the queue is written.
    closing: bool,
    /// The pipe is closed (or broke): nothing more is written. Set before the pipe's file
    /// descriptor is closed, under the lock every direct write holds.
    closed: Option<io::ErrorKind>,
    #[cfg(unix)]
    fd: std::os::fd::RawFd,
}

impl StdinWriter {
    /// Takes over `stdin`: the flusher task owns it from now on.
    pub fn new(stdin: ChildStdin) -> Self {
        let state = State {
            #[cfg(unix)]
            fd: std::os::fd::AsRawFd::as_raw_fd(&stdin),
            ..State::default()
        };
        let inner = Arc::new(Inner {
            state: Mutex::new(state),
            wake: Notify::new(),
        });
        tokio::spawn(flush(inner.clone(), stdin));
        Self { inner }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands over whole lines (each ending in a newline). Returns the mark `written` must reach
    /// for them to be in the pipe. Fails once the pipe is closed or closing.
    pub fn write_lines(&self, lines: &[u8]) -> io::Result<u64> {
        let mut state = self.lock();
        if let Some(kind) = state.closed {
            return Err(io::Error::new(kind, "the server's stdin is closed"));
        }
        if state.closing {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the server's stdin is closing",
            ));
        }
        state.accepted += lines.len() as u64;
        let mark = state.accepted;
        if let Some(first) = self.cork(&mut state, lines) {
            drop(state);
            if first {
                CORKED.with(|corked| {
                    if let Some(corked) = corked.borrow_mut().as_mut() {
                        corked.push(self.clone());
                    }
                });
            }
            return Ok(mark);
        }
        let rest = match direct_write(&mut state, lines) {
            Ok(rest) => rest,
            Err(error) => {
                // The flusher ends (and closes the pipe) when it sees `closed`.
                drop(state);
                self.inner.wake.notify_one();
                return Err(error);
            }
        };
        if !rest.is_empty() {
            state.queued.extend_from_slice(rest);
            drop(state);
            self.inner.wake.notify_one();
        }
        Ok(mark)
    }

    /// Under [`corked`], queues `lines` for the end of it: `Some(true)` if this thread must
    /// write them then (the queue was empty), `Some(false)` if whoever holds the queue
    /// already does (a flusher woken for it, or another corked thread). `None`: not corked.
    fn cork(&self, state: &mut State, lines: &[u8]) -> Option<bool> {
        if !CORKED.with(|corked| corked.try_borrow().is_ok_and(|c| c.is_some())) {
            return None;
        }
        let first = state.queued.is_empty();
        state.queued.extend_from_slice(lines);
        Some(first)
    }

    /// The end of a [`corked`] stretch: writes what is queued, as the flusher would, when
    /// nothing is being written ahead of it; what the pipe does not take now, the flusher
    /// writes.
    fn uncork(&self) {
        let mut state = self.lock();
        if state.queued.is_empty() || state.closed.is_some() {
            return;
        }
        // rmcp's flush may wait for what is written here.
        let mut waiter = None;
        if !state.writing {
            let queued = std::mem::take(&mut state.queued);
            let written = direct_write(&mut state, &queued);
            waiter = state.flush_waiter.take();
            match written {
                // The buffer goes back for the next stretch.
                Ok([]) => {
                    state.queued = queued;
                    state.queued.clear();
                }
                Ok(rest) => state.queued = rest.to_vec(),
                Err(_) => {}
            }
        }
        // The flusher writes what is left, or closes the pipe that broke.
        let for_flusher = state.writing || !state.queued.is_empty() || state.closed.is_some();
        drop(state);
        if let Some(waiter) = waiter {
            waiter.wake();
        }
        if for_flusher {
            self.inner.wake.notify_one();
        }
    }

    /// rmcp's side of the pipe.
    pub fn for_rmcp(&self) -> RmcpStdin {
        RmcpStdin {
            writer: self.clone(),
            partial: Vec::new(),
            mark: 0,
            shut: false,
            listing: None,
        }
    }

    fn close(&self) {
        self.lock().closing = true;
        self.inner.wake.notify_one();
    }
}

thread_local! {
    /// The writers lines were queued for under [`corked`] on this thread.
    static CORKED: RefCell<Option<Vec<StdinWriter>>> = const { RefCell::new(None) };
}

/// Runs `f`; the lines it hands over on this thread go out together after it, many lines per
/// `write` (one per server), instead of one `write` each. For a stretch that starts many
/// calls at once. Lines handed over by other threads meanwhile keep their place behind the
/// queued ones. Nested, the outer stretch writes.
pub fn corked<R>(f: impl FnOnce() -> R) -> R {
    let outer = CORKED.with(|corked| {
        let mut corked = corked.borrow_mut();
        let outer = corked.is_some();
        if !outer {
            *corked = Some(Vec::new());
        }
        outer
    });
    if outer {
        return f();
    }
    // On unwinding too: what was queued is still written.
    struct Uncork;
    impl Drop for Uncork {
        fn drop(&mut self) {
            let writers = CORKED.with(|corked| corked.borrow_mut().take().unwrap_or_default());
            for writer in writers {
                writer.uncork();
            }
        }
    }
    let uncork = Uncork;
    let result = f();
    drop(uncork);
    result
}

/// Writes what the pipe takes now, when nothing is queued ahead; returns what is left.
#[cfg(unix)]
fn direct_write<'a>(state: &mut State, lines: &'a [u8]) -> io::Result<&'a [u8]> {
    if state.writing || !state.queued.is_empty() {
        return Ok(lines);
    }
    let mut rest = lines;
    while !rest.is_empty() {
        // SAFETY: `fd` is the pipe the flusher owns; it is closed only after `closed` is set
        // under this lock, which is held here.
        let n = unsafe { libc::write(state.fd, rest.as_ptr().cast(), rest.len()) };
        if n >= 0 {
            state.written += n as u64;
            rest = &rest[n as usize..];
            continue;
        }
        let error = io::Error::last_os_error();
        match error.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => break,
            kind => {
                state.closed = Some(kind);
                return Err(error);
            }
        }
    }
    Ok(rest)
}

#[cfg(not(unix))]
fn direct_write<'a>(_state: &mut State, lines: &'a [u8]) -> io::Result<&'a [u8]> {
    Ok(lines)
}

/// The flusher: writes the queue whenever there is one; closes stdin when told to (once the
/// queue is written) or when the pipe breaks.
async fn flush(inner: Arc<Inner>, mut stdin: ChildStdin) {
    let mut batch = Vec::new();
    loop {
        {
            let mut state = inner.state.lock().unwrap_or_else(|p| p.into_inner());
            if state.closed.is_some() {
                break;
            }
            if state.queued.is_empty() {
                if state.closing {
                    state.closed = Some(io::ErrorKind::BrokenPipe);
                    break;
                }
            } else {
                std::mem::swap(&mut batch, &mut state.queued);
                state.writing = true;
            }
        }
        if batch.is_empty() {
            inner.wake.notified().await;
            continue;
        }
        let outcome = stdin.write_all(&batch).await;
        let mut state = inner.state.lock().unwrap_or_else(|p| p.into_inner());
        state.writing = false;
        state.written += batch.len() as u64;
        if let Err(error) = outcome {
            state.closed = Some(error.kind());
        }
        if let Some(waker) = state.flush_waiter.take() {
            waker.wake();
        }
        batch.clear();
        if batch.capacity() > 1 << 20 {
            batch = Vec::new();
        }
    }
    let waiter = {
        let mut state = inner.state.lock().unwrap_or_else(|p| p.into_inner());
        state.queued = Vec::new();
        state.flush_waiter.take()
    };
    if let Some(waker) = waiter {
        waker.wake();
    }
    // `closed` is set: no direct write can reach the descriptor once it is closed here.
    drop(stdin);
}

/// rmcp's writer: collects what its encoder writes and hands it over a whole line at a time.
pub struct RmcpStdin {
    writer: StdinWriter,
    /// The start of a line not yet complete.
    partial: Vec<u8>,
    /// `written` must reach this for everything handed over to be in the pipe.
    mark: u64,
    shut: bool,
    /// Told of every line before it is written, to know its `tools/list` requests.
    listing: Option<std::sync::Arc<super::listing_bound::ListingBound>>,
}

impl RmcpStdin {
    /// `listing` is told of each line rmcp sends before it is written (so before its answer
    /// can come).
    pub fn telling(mut self, listing: std::sync::Arc<super::listing_bound::ListingBound>) -> Self {
        self.listing = Some(listing);
        self
    }
}

impl AsyncWrite for RmcpStdin {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let Some(last) = memchr::memrchr(b'\n', buf) else {
            this.partial.extend_from_slice(buf);
            return Poll::Ready(Ok(buf.len()));
        };
        let mark = if this.partial.is_empty() {
            if let Some(listing) = &this.listing {
                listing.sent(&buf[..=last]);
            }
            this.writer.write_lines(&buf[..=last])?
        } else {
            this.partial.extend_from_slice(&buf[..=last]);
            if let Some(listing) = &this.listing {
                listing.sent(&this.partial);
            }
            let mark = this.writer.write_lines(&this.partial);
            this.partial.clear();
            mark?
        };
        this.mark = mark;
        this.partial.extend_from_slice(&buf[last + 1..]);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut state = self.writer.lock();
        if state.written >= self.mark {
            return Poll::Ready(Ok(()));
        }
        if let Some(kind) = state.closed {
            return Poll::Ready(Err(io::Error::new(kind, "the server's stdin is closed")));
        }
        state.flush_waiter = Some(cx.waker().clone());
        Poll::Pending
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.as_mut().poll_flush(cx))?;
        self.shut = true;
        self.writer.close();
        Poll::Ready(Ok(()))
    }
}

impl Drop for RmcpStdin {
    /// rmcp's transport is gone: the session is over, stdin closes.
    fn drop(&mut self) {
        if !self.shut {
            self.writer.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncBufReadExt;

    async fn all_lines(out: tokio::process::ChildStdout) -> Vec<String> {
        let mut lines = tokio::io::BufReader::new(out).lines();
        let mut all = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            all.push(line);
        }
        all
    }

    fn cat() -> tokio::process::Child {
        tokio::process::Command::new("cat")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn lines_from_both_sides_arrive_whole_and_stdin_closes_with_rmcp() {
        let mut child = cat();
        let writer = StdinWriter::new(child.stdin.take().unwrap());
        let mut rmcp = writer.for_rmcp();
        let out = child.stdout.take().unwrap();
        let reader = tokio::spawn(all_lines(out));
        // Lines larger than a pipe's buffer, from several threads, while rmcp writes pieces.
        let big = "x".repeat(200_000);
        let mut tasks = Vec::new();
        for t in 0..4 {
            let writer = writer.clone();
            let big = big.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..50 {
                    writer
                        .write_lines(format!("lane {t} {i} {big}\n").as_bytes())
                        .unwrap();
                }
            }));
        }
        for i in 0..50 {
            rmcp.write_all(format!("rmcp {i} ").as_bytes())
                .await
                .unwrap();
            rmcp.write_all(format!("{big} end\nrm").as_bytes())
                .await
                .unwrap();
            rmcp.write_all(b"cp tail\n").await.unwrap();
            rmcp.flush().await.unwrap();
        }
        for task in tasks {
            task.await.unwrap();
        }
        rmcp.shutdown().await.unwrap();
        drop(rmcp);
        let lines = reader.await.unwrap();
        assert_eq!(lines.len(), 4 * 50 + 2 * 50);
        for line in &lines {
            let whole = (line.starts_with("lane ") && line.ends_with(&big))
                || (line.starts_with("rmcp ") && line.ends_with(" end"))
                || line == "rmcp tail";
            assert!(whole, "a line was cut or interleaved: {}", &line[..40]);
        }
        // Each writer's lines keep their order.
        for t in 0..4 {
            let seen: Vec<usize> = lines
                .iter()
                .filter_map(|l| l.strip_prefix(&format!("lane {t} ")))
                .map(|l| l.split(' ').next().unwrap().parse().unwrap())
                .collect();
            assert_eq!(seen, (0..50).collect::<Vec<_>>());
        }
        assert!(writer.write_lines(b"late\n").is_err());
    }

    /// On one thread: the flusher runs only when the test waits, so nothing but the corked
    /// stretch itself can write while it is open (the flusher may take corked lines early when
    /// it happens to run meanwhile, which is allowed but would make the counts racy).
    #[tokio::test]
    async fn corked_lines_go_out_together_in_order_and_rmcps_flush_learns_of_it() {
        struct Wakes(std::sync::atomic::AtomicUsize);
        impl std::task::Wake for Wakes {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let mut child = cat();
        let writer = StdinWriter::new(child.stdin.take().unwrap());
        let out = child.stdout.take().unwrap();
        let reader = tokio::spawn(all_lines(out));
        let mut rmcp = writer.for_rmcp();
        let wakes = Arc::new(Wakes(std::sync::atomic::AtomicUsize::new(0)));
        let waker = Waker::from(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        corked(|| {
            for i in 0..50 {
                writer
                    .write_lines(format!("corked {i}\n").as_bytes())
                    .unwrap();
            }
            // rmcp's line on this thread is corked too; its flush waits for it.
            assert!(
                Pin::new(&mut rmcp)
                    .poll_write(&mut cx, b"rmcp\n")
                    .is_ready()
            );
            assert!(Pin::new(&mut rmcp).poll_flush(&mut cx).is_pending());
            // Nothing is in the pipe yet.
            assert_eq!(writer.lock().written, 0);
        });
        // All of it in one `write`, and rmcp's flush told.
        let (written, accepted) = {
            let state = writer.lock();
            (state.written, state.accepted)
        };
        assert_eq!(written, accepted);
        assert_eq!(wakes.0.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(Pin::new(&mut rmcp).poll_flush(&mut cx).is_ready());
        // Another thread's line, handed over meanwhile, goes behind what is corked.
        let from_elsewhere = writer.clone();
        corked(|| {
            for i in 50..100 {
                writer
                    .write_lines(format!("corked {i}\n").as_bytes())
                    .unwrap();
                if i == 70 {
                    std::thread::scope(|scope| {
                        scope.spawn(|| from_elsewhere.write_lines(b"elsewhere\n").unwrap());
                    });
                }
            }
        });
        writer.write_lines(b"after\n").unwrap();
        rmcp.shutdown().await.unwrap();
        drop(rmcp);
        let mut expected: Vec<String> = (0..50).map(|i| format!("corked {i}")).collect();
        expected.push("rmcp".to_owned());
        expected.extend((50..=70).map(|i| format!("corked {i}")));
        expected.push("elsewhere".to_owned());
        expected.extend((71..100).map(|i| format!("corked {i}")));
        expected.push("after".to_owned());
        assert_eq!(reader.await.unwrap(), expected);
    }

    #[tokio::test]
    async fn a_broken_pipe_fails_writes_and_rmcps_flush() {
        let mut child = cat();
        let writer = StdinWriter::new(child.stdin.take().unwrap());
        child.kill().await.unwrap();
        let mut rmcp = writer.for_rmcp();
        let mut failed = false;
        for _ in 0..100 {
            let line = format!("{}\n", "y".repeat(100_000));
            if writer.write_lines(line.as_bytes()).is_err() {
                failed = true;
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(failed, "writes to a dead server kept succeeding");
        assert!(rmcp.write_all(b"x\n").await.is_err() || rmcp.flush().await.is_err());
    }
}
