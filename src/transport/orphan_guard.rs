//! Kills server process groups when the host process dies without shutting down.
//!
//! Why not `PR_SET_PDEATHSIG`: on Linux it fires when the *thread* that spawned the child exits,
//! not the process, and the tokio runtime's threads come and go; and it only reaches the direct
//! child, never an `npx`/`sh -c` wrapper's children. Instead, the first stdio spawn forks one small
//! guard process (no exec, so it costs a few copy-on-write pages). The host keeps the write end of
//! a pipe; the guard keeps the read end and a table of live server process groups, sent to it as
//! fixed-size records. When the host dies for any reason, even SIGKILL, the kernel closes the
//! write end, the guard reads EOF, sends SIGTERM to every group it holds, waits up to a second,
//! SIGKILLs what is left and exits. While the host lives the guard sleeps in `read`.
//!
//! The forked child runs only async-signal-safe calls (no allocation, no locks, no panics): the
//! host is multi-threaded and another thread may hold the allocator's lock at fork time.

#[cfg(unix)]
mod imp {
    use std::io::Write;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::sync::{Mutex, OnceLock};

    const OP_ADD: i32 = 1;
    const OP_REMOVE: i32 = 2;
    const MAX_GROUPS: usize = 4096;

    struct Guard {
        writer: Mutex<std::fs::File>,
        pid: libc::pid_t,
    }

    static GUARD: OnceLock<Option<Guard>> = OnceLock::new();

    fn guard() -> Option<&'static Guard> {
        GUARD.get_or_init(start).as_ref()
    }

    /// The guard's pid, once started (for tests and diagnostics).
    pub fn pid() -> Option<i32> {
        guard().map(|g| g.pid)
    }

    pub fn register(pgid: i32) {
        send(OP_ADD, pgid);
    }

    pub fn unregister(pgid: i32) {
        send(OP_REMOVE, pgid);
    }

    fn send(op: i32, pgid: i32) {
        let Some(guard) = guard() else { return };
        let mut record = [0u8; 8];
        record[..4].copy_from_slice(&op.to_ne_bytes());
        record[4..].copy_from_slice(&pgid.to_ne_bytes());
        // One 8-byte write is atomic on a pipe (PIPE_BUF >= 512), so records never interleave.
        let mut writer = guard.writer.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writer.write_all(&record);
    }

    fn start() -> Option<Guard> {
        let mut fds = [0 as libc::c_int; 2];
        // O_CLOEXEC: server children must not inherit the write end, or EOF would never come.
        if unsafe { pipe_cloexec(&mut fds) } != 0 {
            tracing::warn!("orphan guard: pipe failed; servers may outlive a crashed host");
            return None;
        }
        // A host started with fds 0-2 closed gets the pipe there, where the guard's /dev/null
        // would overwrite its end and anything printing to stdout would write records.
        let (Some(read_fd), Some(write_fd)) = (unsafe { above_stdio(fds[0]) }, unsafe {
            above_stdio(fds[1])
        }) else {
            tracing::warn!("orphan guard: fcntl failed; servers may outlive a crashed host");
            return None;
        };
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            unsafe {
                libc::close(read_fd);
                libc::close(write_fd);
            }
            tracing::warn!("orphan guard: fork failed; servers may outlive a crashed host");
            return None;
        }
        if pid == 0 {
            unsafe { guard_main(read_fd, write_fd) }
        }
        unsafe { libc::close(read_fd) };
        let writer = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(write_fd) });
        debug_assert!(writer.as_raw_fd() == write_fd);
        Some(Guard {
            writer: Mutex::new(writer),
            pid,
        })
    }

    /// `fd` itself when it is above 2; otherwise a close-on-exec copy of it at 3 or above (the
    /// original is closed). `None` (and `fd` closed) when that fails.
    unsafe fn above_stdio(fd: libc::c_int) -> Option<libc::c_int> {
        if fd > 2 {
            return Some(fd);
        }
        unsafe {
            let moved = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3);
            libc::close(fd);
            (moved >= 0).then_some(moved)
        }
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    unsafe fn pipe_cloexec(fds: &mut [libc::c_int; 2]) -> libc::c_int {
        unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    unsafe fn pipe_cloexec(fds: &mut [libc::c_int; 2]) -> libc::c_int {
        unsafe {
            if libc::pipe(fds.as_mut_ptr()) != 0 {
                return -1;
            }
            libc::fcntl(fds[0], libc::F_SETFD, libc::FD_CLOEXEC);
            libc::fcntl(fds[1], libc::F_SETFD, libc::FD_CLOEXEC);
        }
        0
    }

    /// The guard process. Never returns.
    unsafe fn guard_main(read_fd: libc::c_int, write_fd: libc::c_int) -> ! {
        unsafe {
            libc::close(write_fd);
            // Own session: the terminal's Ctrl-C and a `kill -- -<host group>` do not reach it.
            libc::setsid();
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            // Keep only the pipe: holding the host's sockets or a parent's stdout pipe open would
            // be visible to others (a reader waiting for EOF on the host's output, say).
            let devnull = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            if devnull >= 0 {
                libc::dup2(devnull, 0);
                libc::dup2(devnull, 1);
                libc::dup2(devnull, 2);
            }
            let fd = 3;
            if read_fd != fd {
                libc::dup2(read_fd, fd);
            }
            close_from(fd + 1);
            #[cfg(target_os = "linux")]
            libc::prctl(
                libc::PR_SET_NAME,
                c"mcp-orphan-guard".as_ptr() as libc::c_ulong,
                0,
                0,
                0,
            );

            let mut groups = [0 as libc::pid_t; MAX_GROUPS];
            let mut count = 0usize;
            let mut record = [0u8; 8];
            let mut filled = 0usize;
            loop {
                let n = libc::read(
                    fd,
                    record.as_mut_ptr().add(filled) as *mut libc::c_void,
                    8 - filled,
                );
                if n < 0 {
                    // Reading errno this way does not allocate.
                    if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                        continue;
                    }
                    break;
                }
                if n == 0 {
                    break;
                }
                filled += n as usize;
                if filled < 8 {
                    continue;
                }
                filled = 0;
                let op = i32::from_ne_bytes([record[0], record[1], record[2], record[3]]);
                let pgid = i32::from_ne_bytes([record[4], record[5], record[6], record[7]]);
                if pgid <= 1 {
                    continue;
                }
                if op == OP_ADD && count < MAX_GROUPS {
                    groups[count] = pgid;
                    count += 1;
                } else if op == OP_REMOVE {
                    let mut i = 0;
                    while i < count {
                        if groups[i] == pgid {
                            count -= 1;
                            groups[i] = groups[count];
                        } else {
                            i += 1;
                        }
                    }
                }
            }
            // The host is gone: take every group down, politely first.
            for &pgid in &groups[..count] {
                libc::kill(-pgid, libc::SIGTERM);
            }
            let pause = libc::timespec {
                tv_sec: 0,
                tv_nsec: 20_000_000,
            };
            for _ in 0..50 {
                let mut alive = false;
                for &pgid in &groups[..count] {
                    if libc::kill(-pgid, 0) == 0 {
                        alive = true;
                    }
                }
                if !alive {
                    break;
                }
                libc::nanosleep(&pause, std::ptr::null_mut());
            }
            for &pgid in &groups[..count] {
                libc::kill(-pgid, libc::SIGKILL);
            }
            libc::_exit(0)
        }
    }

    unsafe fn close_from(first: libc::c_int) {
        #[cfg(target_os = "linux")]
        unsafe {
            if libc::syscall(
                libc::SYS_close_range,
                first as libc::c_uint,
                libc::c_uint::MAX,
                0,
            ) == 0
            {
                return;
            }
        }
        unsafe {
            let max = libc::sysconf(libc::_SC_OPEN_MAX);
            let max = if max <= 0 || max > 65536 {
                65536
            } else {
                max as libc::c_int
            };
            for fd in first..max {
                libc::close(fd);
            }
        }
    }
}

#[cfg(not(unix))]
mod imp {
    // Windows: each server's tree is in a kill-on-close Job Object whose only handle this
    // process holds (`super::super::job_object`), so the system kills the tree when the host
    // dies; there is nothing for a guard to do.
    pub fn pid() -> Option<i32> {
        None
    }
    pub fn register(_pgid: i32) {}
    pub fn unregister(_pgid: i32) {}
}

pub use imp::{pid, register, unregister};
