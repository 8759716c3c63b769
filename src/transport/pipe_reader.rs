//! A stdio server's stdout as tokio reads it, with a pause: while another thread reads the pipe
//! (see [`PollableOutput`](super::stdio_lines::PollableOutput)), tokio stops watching it, so
//! no worker is woken for output it would not read.
//!
//! tokio's `ChildStdout` stays registered with the runtime's poller for its whole life: every
//! line the server wrote woke a worker, even while the JS thread was the one reading it (one
//! wasted wake-up per tool call, seen in `strace`). This reader registers the pipe when it
//! reads and drops the registration on [`PipeReader::suspend`]; the next read registers it
//! again.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, Interest, ReadBuf};
use tokio::process::ChildStdout;

pub struct PipeReader {
    /// Registered with the runtime (reading), or not (suspended).
    pipe: Pipe,
    fd: RawFd,
}

enum Pipe {
    Watched(AsyncFd<OwnedFd>),
    Suspended(OwnedFd),
    /// Only while switching.
    Gone,
}

impl PipeReader {
    /// Takes the child's stdout (on the runtime).
    pub fn new(stdout: ChildStdout) -> io::Result<Self> {
        let fd = stdout.into_owned_fd()?;
        set_nonblocking(&fd)?;
        let raw = fd.as_raw_fd();
        Ok(Self {
            pipe: Pipe::Watched(watch(fd).map_err(|(_, error)| error)?),
            fd: raw,
        })
    }

    /// Stops tokio watching the pipe until the next read.
    pub fn suspend(&mut self) {
        if let Pipe::Watched(_) = &self.pipe
            && let Pipe::Watched(io) = std::mem::replace(&mut self.pipe, Pipe::Gone)
        {
            self.pipe = Pipe::Suspended(io.into_inner());
        }
    }
}

impl AsRawFd for PipeReader {
    fn as_raw_fd(&self) -> RawFd {
        self.fd
    }
}

impl AsyncRead for PipeReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Pipe::Suspended(_) = &this.pipe
            && let Pipe::Suspended(fd) = std::mem::replace(&mut this.pipe, Pipe::Gone)
        {
            match watch(fd) {
                Ok(io) => this.pipe = Pipe::Watched(io),
                Err((fd, error)) => {
                    this.pipe = Pipe::Suspended(fd);
                    return Poll::Ready(Err(error));
                }
            }
        }
        let Pipe::Watched(io) = &this.pipe else {
            return Poll::Ready(Err(io::Error::other("the server's stdout is closed")));
        };
        loop {
            let mut ready = std::task::ready!(io.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            // SAFETY: reading into our own initialised buffer, from an fd `io` keeps open.
            match ready.try_io(|io| {
                let read = unsafe {
                    libc::read(io.as_raw_fd(), unfilled.as_mut_ptr().cast(), unfilled.len())
                };
                if read < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(read as usize)
                }
            }) {
                Ok(Ok(read)) => {
                    buf.advance(read);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(error)) if error.kind() == io::ErrorKind::Interrupted => continue,
                Ok(Err(error)) => return Poll::Ready(Err(error)),
                Err(_would_block) => continue,
            }
        }
    }
}

/// Registers `fd` with the runtime (for reading).
fn watch(fd: OwnedFd) -> Result<AsyncFd<OwnedFd>, (OwnedFd, io::Error)> {
    // SAFETY: an `OwnedFd` stays open, and the same description, for as long as it is owned.
    unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.map_err(|e| e.into_parts())
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    let raw = fd.as_raw_fd();
    // SAFETY: plain fcntl on an fd we own.
    unsafe {
        let flags = libc::fcntl(raw, libc::F_GETFL);
        if flags < 0 || libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
