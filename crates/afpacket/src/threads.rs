//! Kernel and user threads: a thread's scheduling policy ([`Sched`]), and the kernel
//! threads doing an interface's NAPI ([`napi_threads`]), which the switch's AF_XDP ports
//! pin and make real-time and `pharos bench datapath` pins beside the device under test.

use std::io;

/// The kernel threads doing threaded NAPI for `ifname` (`napi/IFNAME-ID`).
pub fn napi_threads(ifname: &str) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
        let rest = comm
            .trim_end()
            .strip_prefix("napi/")?
            .strip_prefix(ifname)?;
        rest.starts_with('-').then_some(pid)
    })
    .collect()
}

/// A thread's scheduling policy and real-time priority (`sched_getscheduler`,
/// `sched_getparam`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sched {
    /// `SCHED_OTHER`, `SCHED_FIFO`, ...: how the kernel schedules the thread.
    pub policy: libc::c_int,
    /// The real-time priority (1 to 99 for `SCHED_FIFO`; 0 for the normal policies).
    pub priority: libc::c_int,
}

impl Sched {
    /// `SCHED_FIFO` at `priority` (1 to 99).
    pub fn fifo(priority: libc::c_int) -> Sched {
        Sched {
            policy: libc::SCHED_FIFO,
            priority,
        }
    }

    /// Thread `tid`'s (0: the calling thread).
    pub fn of(tid: libc::pid_t) -> io::Result<Sched> {
        // SAFETY: plain queries about a thread; `param` is written by the call.
        let policy = unsafe { libc::sched_getscheduler(tid) };
        if policy < 0 {
            return Err(sched_error("reading the scheduling policy of", tid));
        }
        let mut param = libc::sched_param { sched_priority: 0 };
        if unsafe { libc::sched_getparam(tid, &mut param) } < 0 {
            return Err(sched_error("reading the scheduling priority of", tid));
        }
        Ok(Sched {
            policy,
            priority: param.sched_priority,
        })
    }

    /// Gives thread `tid` (0: the calling thread) this policy; returns what it had.
    pub fn set(self, tid: libc::pid_t) -> io::Result<Sched> {
        let before = Sched::of(tid)?;
        let param = libc::sched_param {
            sched_priority: self.priority,
        };
        // SAFETY: a valid parameter for the call's duration.
        if unsafe { libc::sched_setscheduler(tid, self.policy, &param) } < 0 {
            return Err(sched_error("setting the scheduling policy of", tid));
        }
        Ok(before)
    }
}

fn sched_error(what: &str, tid: libc::pid_t) -> io::Error {
    let e = io::Error::last_os_error();
    let whom = if tid == 0 {
        "this thread".to_string()
    } else {
        format!("thread {tid}")
    };
    io::Error::new(e.kind(), format!("{what} {whom}: {e}"))
}
