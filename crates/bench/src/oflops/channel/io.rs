//! The socket under a channel: waiting with `poll(2)`, reads stamped by the kernel
//! (`SO_TIMESTAMPING`), writes within the timeout.

use std::io::{ErrorKind, Write};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use super::{now_ns, Channel, ChannelError, Result};

pub(super) fn io_err(what: &str, source: std::io::Error) -> ChannelError {
    ChannelError::Io {
        what: what.to_string(),
        source,
    }
}

/// poll(2) on one descriptor; returns the revents (0 on timeout).
pub(super) fn poll_fd(fd: i32, events: i16, timeout: Duration) -> std::io::Result<i16> {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    // Round up: a sub-millisecond wait must still wait.
    let ms = if ms == 0 && !timeout.is_zero() { 1 } else { ms };
    loop {
        // SAFETY: one valid pollfd, count 1.
        let r = unsafe { libc::poll(&mut p, 1, ms) };
        if r >= 0 {
            return Ok(if r == 0 { 0 } else { p.revents });
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

impl Channel {
    /// Reads what the socket has, waiting up to `left` for something.
    pub(super) fn fill(&mut self, left: Duration, what: &str) -> Result<()> {
        let ev =
            poll_fd(self.stream.as_raw_fd(), libc::POLLIN, left).map_err(|e| io_err(what, e))?;
        if ev == 0 {
            return Ok(());
        }
        self.read_once(what)
    }

    /// One non-blocking read into the buffer, with the kernel's receive stamp.
    pub(super) fn read_once(&mut self, what: &str) -> Result<()> {
        let old = self.rbuf.len();
        self.rbuf.resize(old + (1 << 16), 0);
        let (r, kernel) = recv_stamped(self.stream.as_raw_fd(), &mut self.rbuf[old..]);
        let at = match kernel {
            Some(t) => {
                self.kernel_stamps += 1;
                t
            }
            None => now_ns(),
        };
        match r {
            Ok(0) => {
                self.rbuf.truncate(old);
                Err(ChannelError::Closed {
                    during: what.to_string(),
                })
            }
            Ok(n) => {
                self.rbuf.truncate(old + n);
                self.reads += 1;
                self.last_read_ns = at;
                Ok(())
            }
            Err(e) => {
                self.rbuf.truncate(old);
                if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted {
                    Ok(())
                } else {
                    Err(io_err(what, e))
                }
            }
        }
    }

    /// Writes all of `bytes`, reading meanwhile whatever the switch sends (kept for
    /// later), bounded by the channel's timeout without progress.
    pub(super) fn write_all(&mut self, mut bytes: &[u8]) -> Result<()> {
        let mut last_progress = Instant::now();
        while !bytes.is_empty() {
            match self.stream.write(bytes) {
                Ok(0) => {
                    return Err(ChannelError::Closed {
                        during: "sending".into(),
                    })
                }
                Ok(n) => {
                    bytes = &bytes[n..];
                    last_progress = Instant::now();
                    continue;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e)
                    if e.kind() == ErrorKind::BrokenPipe
                        || e.kind() == ErrorKind::ConnectionReset =>
                {
                    return Err(ChannelError::Closed {
                        during: "sending".into(),
                    })
                }
                Err(e) => return Err(io_err("sending to the switch", e)),
            }
            let left = (last_progress + self.timeout).saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ChannelError::Timeout {
                    what: "the bytes we send (it stopped reading)".into(),
                    after: self.timeout,
                });
            }
            let ev = poll_fd(self.stream.as_raw_fd(), libc::POLLIN | libc::POLLOUT, left)
                .map_err(|e| io_err("sending to the switch", e))?;
            if ev & libc::POLLIN != 0 {
                // Keep what arrives; its frames are parsed by the next receive.
                self.read_once("sending")?;
            }
        }
        Ok(())
    }
}

/// `SO_TIMESTAMPING` and its flags (Linux values; not every libc exports them).
const SO_TIMESTAMPING: libc::c_int = 37;
const SOF_TIMESTAMPING_RX_SOFTWARE: u32 = 1 << 3;
const SOF_TIMESTAMPING_SOFTWARE: u32 = 1 << 4;

/// Asks for software receive stamps on the control socket (best effort).
pub(super) fn enable_rx_stamps(fd: i32) {
    let flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
    // SAFETY: a u32 that lives through the call, its size given.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_TIMESTAMPING,
            &flags as *const u32 as *const libc::c_void,
            std::mem::size_of::<u32>() as libc::socklen_t,
        )
    };
}

/// A non-blocking `recvmsg` into `buf`: the bytes read, and the kernel's software
/// receive stamp of the last segment read (ns, `CLOCK_REALTIME`) when there is one.
pub(super) fn recv_stamped(fd: i32, buf: &mut [u8]) -> (std::io::Result<usize>, Option<u64>) {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let mut control = [0u64; 16];
    // SAFETY: msghdr is plain data; zeros are valid.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: msg points at iov, buf and control, which outlive the call.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return (Err(std::io::Error::last_os_error()), None);
    }
    let mut stamp = None;
    // SAFETY: the CMSG macros walk the control buffer the kernel filled, within
    // msg_controllen; SCM_TIMESTAMPING data is three timespecs.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == SO_TIMESTAMPING {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const [libc::timespec; 3]);
                let t = ts[0];
                if t.tv_sec != 0 || t.tv_nsec != 0 {
                    stamp = Some(t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64);
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    (Ok(n as usize), stamp)
}
