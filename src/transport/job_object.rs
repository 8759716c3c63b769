//! Windows: a server's process tree held in a Job Object, the counterpart of a process group
//! plus the orphan guard on Unix.
//!
//! Each stdio server gets a job of its own with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`, and the
//! server process is assigned to it right after the spawn; everything it starts afterwards is
//! in the job too. Only this process holds the job's handle, so when the handle closes the
//! whole tree is killed: at [`ServerTree::kill`] (the last step of a termination), when the
//! `ServerTree` is dropped (a server dropped unterminated), and when the host dies in any way,
//! since Windows closes a dead process's handles. A process the server starts in the instant
//! between the spawn and the assignment escapes the job; a server that is still starting up
//! (an `npx` or `node` wrapper takes tens of milliseconds) has started nothing yet.

use std::io;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{OpenProcess, PROCESS_SET_QUOTA, PROCESS_TERMINATE};

/// A server's process tree; dropping it kills every process still in it.
pub struct ServerTree {
    job: HANDLE,
}

// The handle is a kernel object reference, usable from any thread.
unsafe impl Send for ServerTree {}
unsafe impl Sync for ServerTree {}

impl ServerTree {
    /// Puts the process `pid` (just spawned by us) into a new kill-on-close job.
    pub fn adopt(pid: u32) -> io::Result<Self> {
        unsafe {
            let job = CreateJobObjectW(std::ptr::null(), std::ptr::null());
            if job.is_null() {
                return Err(io::Error::last_os_error());
            }
            // From here on `tree` owns the handle and closes it on any early return.
            let tree = Self { job };
            let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
            limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            if SetInformationJobObject(
                job,
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            ) == 0
            {
                return Err(io::Error::last_os_error());
            }
            let process = OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, 0, pid);
            if process.is_null() {
                return Err(io::Error::last_os_error());
            }
            let assigned = AssignProcessToJobObject(job, process);
            let error = io::Error::last_os_error();
            CloseHandle(process);
            if assigned == 0 {
                return Err(error);
            }
            Ok(tree)
        }
    }

    /// Kills every process in the tree now.
    pub fn kill(&self) {
        unsafe {
            TerminateJobObject(self.job, 1);
        }
    }
}

impl Drop for ServerTree {
    fn drop(&mut self) {
        unsafe {
            CloseHandle(self.job);
        }
    }
}
