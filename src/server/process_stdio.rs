//! This process's stdin and stdout as the stdio server reads and writes them: watched by the
//! runtime's poller when they are pipes or sockets, instead of read and written on tokio's
//! blocking pool.
//!
//! `tokio::io::stdin()` and `stdout()` do every read and write on a blocking-pool thread, so a
//! request served over stdio crossed two more threads than the call itself needs (the pool
//! thread that read it and the one that wrote the answer, each waking and woken by a worker),
//! the main reason the gateway's tiny call was slower than the same gateway on the TypeScript
//! SDK, which reads and writes on its one thread (issue 37). Here a pipe or a socket is read
//! and written by the worker that serves the request, when the poller says it is ready.
//!
//! Neither changes how the descriptors behave for anyone else: a pipe is opened again through
//! `/proc/self/fd` (a description of its own, made non-blocking), and a socket is read and
//! written with `MSG_DONTWAIT` (no flag on the description at all). Anything else (a terminal,
//! a file, no `/proc`) and every other platform use tokio's own.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The process's stdin.
pub fn stdin() -> Stdio<tokio::io::Stdin> {
    #[cfg(target_os = "linux")]
    if let Some(stream) = imp::FdStream::open(0, tokio::io::Interest::READABLE) {
        return Stdio::Watched(stream);
    }
    Stdio::Tokio(tokio::io::stdin())
}

/// The process's stdout.
pub fn stdout() -> Stdio<tokio::io::Stdout> {
    #[cfg(target_os = "linux")]
    if let Some(stream) = imp::FdStream::open(1, tokio::io::Interest::WRITABLE) {
        return Stdio::Watched(stream);
    }
    Stdio::Tokio(tokio::io::stdout())
}

/// Stdin or stdout, watched by the runtime or tokio's own.
pub enum Stdio<T> {
    #[cfg(target_os = "linux")]
    Watched(imp::FdStream),
    Tokio(T),
}

impl<T: AsyncRead + Unpin> AsyncRead for Stdio<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(target_os = "linux")]
            Stdio::Watched(stream) => Pin::new(stream).poll_read(cx, buf),
            Stdio::Tokio(stream) => Pin::new(stream).poll_read(cx, buf),
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Stdio<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            #[cfg(target_os = "linux")]
            Stdio::Watched(stream) => Pin::new(stream).poll_write(cx, data),
            Stdio::Tokio(stream) => Pin::new(stream).poll_write(cx, data),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(target_os = "linux")]
            Stdio::Watched(stream) => Pin::new(stream).poll_flush(cx),
            Stdio::Tokio(stream) => Pin::new(stream).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(target_os = "linux")]
            Stdio::Watched(stream) => Pin::new(stream).poll_shutdown(cx),
            Stdio::Tokio(stream) => Pin::new(stream).poll_shutdown(cx),
        }
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use super::*;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    use std::task::ready;
    use tokio::io::Interest;
    use tokio::io::unix::AsyncFd;

    pub struct FdStream {
        io: AsyncFd<OwnedFd>,
        /// Read and written with `recv`/`send` and `MSG_DONTWAIT`; else `read`/`write` on a
        /// non-blocking description of its own.
        socket: bool,
    }

    impl FdStream {
        /// `fd` (0 or 1) watched by the runtime for `interest` (reading or writing), if it is a
        /// pipe or a socket and can be; must run on the runtime.
        pub fn open(fd: RawFd, interest: Interest) -> Option<Self> {
            // SAFETY: fstat with a valid out-pointer.
            let mut stat: libc::stat = unsafe { std::mem::zeroed() };
            if unsafe { libc::fstat(fd, &mut stat) } != 0 {
                return None;
            }
            let (own, socket) = match stat.st_mode & libc::S_IFMT {
                libc::S_IFIFO => (reopen(fd)?, false),
                libc::S_IFSOCK => {
                    // SAFETY: dup of an open descriptor; the copy is ours to close.
                    let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
                    if copy < 0 {
                        return None;
                    }
                    (unsafe { OwnedFd::from_raw_fd(copy) }, true)
                }
                _ => return None,
            };
            // SAFETY: an `OwnedFd` stays open, and the same description, for as long as it is
            // owned.
            let io = unsafe { AsyncFd::register_with_interest(own, interest) }.ok()?;
            Some(Self { io, socket })
        }
    }

    /// A pipe opened again, non-blocking, as a description of its own (the same access mode).
    fn reopen(fd: RawFd) -> Option<OwnedFd> {
        // SAFETY: F_GETFL on an open descriptor.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 {
            return None;
        }
        let path = std::ffi::CString::new(format!("/proc/self/fd/{fd}")).ok()?;
        let mode = flags & libc::O_ACCMODE;
        // SAFETY: open of a NUL-terminated path; the result is ours to close.
        let own = unsafe {
            libc::open(
                path.as_ptr(),
                mode | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY,
            )
        };
        (own >= 0).then(|| unsafe { OwnedFd::from_raw_fd(own) })
    }

    fn result(n: isize) -> io::Result<usize> {
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    impl AsyncRead for FdStream {
        fn poll_read(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            loop {
                let mut guard = ready!(self.io.poll_read_ready(cx))?;
                let socket = self.socket;
                let unfilled = buf.initialize_unfilled();
                let read = guard.try_io(|io| {
                    let fd = io.as_raw_fd();
                    let (ptr, len) = (unfilled.as_mut_ptr().cast(), unfilled.len());
                    // SAFETY: reads into the unfilled part of `buf`, at most its length.
                    result(unsafe {
                        if socket {
                            libc::recv(fd, ptr, len, libc::MSG_DONTWAIT)
                        } else {
                            libc::read(fd, ptr, len)
                        }
                    })
                });
                match read {
                    Ok(Ok(n)) => {
                        buf.advance(n);
                        return Poll::Ready(Ok(()));
                    }
                    Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Ok(Err(e)) => return Poll::Ready(Err(e)),
                    Err(_would_block) => continue,
                }
            }
        }
    }

    impl AsyncWrite for FdStream {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            data: &[u8],
        ) -> Poll<io::Result<usize>> {
            loop {
                let mut guard = ready!(self.io.poll_write_ready(cx))?;
                let socket = self.socket;
                let written = guard.try_io(|io| {
                    let fd = io.as_raw_fd();
                    let (ptr, len) = (data.as_ptr().cast(), data.len());
                    // SAFETY: writes from `data`, at most its length.
                    result(unsafe {
                        if socket {
                            libc::send(fd, ptr, len, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL)
                        } else {
                            libc::write(fd, ptr, len)
                        }
                    })
                });
                match written {
                    Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Ok(result) => return Poll::Ready(result),
                    Err(_would_block) => continue,
                }
            }
        }

        fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::imp::FdStream;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};

    fn pipe() -> (OwnedFd, OwnedFd) {
        let mut fds = [0; 2];
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
    }

    fn nonblocking(fd: &OwnedFd) -> bool {
        unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) & libc::O_NONBLOCK != 0 }
    }

    #[tokio::test]
    async fn a_pipe_is_read_and_written_through_a_description_of_its_own() {
        let (read, write) = pipe();
        let mut reader =
            FdStream::open(read.as_raw_fd(), Interest::READABLE).expect("a pipe is watched");
        let mut writer =
            FdStream::open(write.as_raw_fd(), Interest::WRITABLE).expect("a pipe is watched");
        // The descriptors the process was given stay blocking.
        assert!(!nonblocking(&read) && !nonblocking(&write));
        let big = vec![b'x'; 1 << 20]; // more than a pipe holds: the write waits for the read
        let sent = big.clone();
        let writing = tokio::spawn(async move {
            writer.write_all(&sent).await.unwrap();
            writer
        });
        let mut got = vec![0; big.len()];
        reader.read_exact(&mut got).await.unwrap();
        assert_eq!(got, big);
        drop(writing.await.unwrap());
        drop(write);
        assert_eq!(
            reader.read(&mut [0; 8]).await.unwrap(),
            0,
            "EOF once every writer is gone"
        );
    }

    #[tokio::test]
    async fn a_socket_is_read_and_written_without_its_flags_changing() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut ours = FdStream::open(a.as_raw_fd(), Interest::READABLE | Interest::WRITABLE)
            .expect("a socket is watched");
        let theirs = tokio::net::UnixStream::from_std({
            b.set_nonblocking(true).unwrap();
            b
        })
        .unwrap();
        ours.write_all(b"ping\n").await.unwrap();
        let mut line = [0; 5];
        let mut theirs = theirs;
        theirs.read_exact(&mut line).await.unwrap();
        assert_eq!(&line, b"ping\n");
        theirs.write_all(b"pong\n").await.unwrap();
        ours.read_exact(&mut line).await.unwrap();
        assert_eq!(&line, b"pong\n");
        let flags = unsafe { libc::fcntl(a.as_raw_fd(), libc::F_GETFL) };
        assert_eq!(flags & libc::O_NONBLOCK, 0);
    }

    #[tokio::test]
    async fn a_file_is_left_to_tokio() {
        let file = std::fs::File::open("/proc/self/status").unwrap();
        assert!(FdStream::open(file.as_raw_fd(), Interest::READABLE).is_none());
    }
}
