//! The `sendmmsg(2)` transmit path: frames copied into a fixed buffer of slots, one
//! `mmsghdr` and `iovec` per slot prepared at open, sent in one system call per flush.

use std::io;
use std::os::fd::RawFd;

use super::ring::TxFull;

/// A batch of frames waiting for `sendmmsg(2)`.
pub(super) struct MmsgTx {
    /// `cap` slots of `slot` bytes each (written through `base` only, as the iovecs
    /// point into it too).
    _buf: Box<[u8]>,
    /// The start of `_buf`, through which frames are copied into their slots.
    base: *mut u8,
    /// Bytes per slot: the largest frame the port sends.
    slot: usize,
    /// One per slot, pointing into `buf`; the length set per frame.
    iov: Box<[libc::iovec]>,
    /// One per slot, pointing at its `iov` (boxed: the pointers stay valid when the
    /// port moves).
    msgs: Box<[libc::mmsghdr]>,
    /// Slots filled.
    count: usize,
    /// Slots of `0..count` already sent (a flush stopped by a full send buffer resumes
    /// here).
    sent: usize,
}

/// What a flush did.
pub(super) struct Flushed {
    /// Frames the kernel refused and that were dropped (a device that drops: ENOBUFS).
    pub(super) dropped: u64,
    /// Their bytes, taken back from the transmit counters.
    pub(super) dropped_bytes: u64,
}

impl MmsgTx {
    pub(super) fn new(cap: usize, slot: usize) -> MmsgTx {
        let mut buf = vec![0u8; cap * slot].into_boxed_slice();
        let base = buf.as_mut_ptr();
        let mut iov: Box<[libc::iovec]> = (0..cap)
            .map(|i| libc::iovec {
                iov_base: base.wrapping_add(i * slot) as *mut libc::c_void,
                iov_len: 0,
            })
            .collect();
        let msgs = iov
            .iter_mut()
            .map(|v| {
                // SAFETY: mmsghdr is plain old data; all zeroes is valid (no address,
                // no control data).
                let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
                m.msg_hdr.msg_iov = v;
                m.msg_hdr.msg_iovlen = 1;
                m
            })
            .collect();
        MmsgTx {
            _buf: buf,
            base,
            slot,
            iov,
            msgs,
            count: 0,
            sent: 0,
        }
    }

    pub(super) fn pending(&self) -> usize {
        self.count - self.sent
    }

    /// Copies `frame` into the next slot.
    pub(super) fn push(&mut self, frame: &[u8]) -> Result<(), TxFull> {
        if frame.len() > self.slot {
            return Err(TxFull::TooBig);
        }
        if self.count == self.iov.len() {
            return Err(TxFull::Ring);
        }
        // SAFETY: slot `count` lies in the buffer and the frame fits it (checked).
        unsafe {
            std::ptr::copy_nonoverlapping(
                frame.as_ptr(),
                self.base.add(self.count * self.slot),
                frame.len(),
            )
        };
        self.iov[self.count].iov_len = frame.len();
        self.count += 1;
        Ok(())
    }

    /// Sends what is queued. A full send buffer (`EAGAIN`) leaves the rest queued; a
    /// frame the device drops (`ENOBUFS`) is dropped and counted; any other error is
    /// returned with the rest still queued (see [`MmsgTx::discard`]).
    pub(super) fn flush(&mut self, fd: RawFd) -> (Flushed, io::Result<()>) {
        let mut flushed = Flushed {
            dropped: 0,
            dropped_bytes: 0,
        };
        while self.sent < self.count {
            let n = (self.count - self.sent) as libc::c_uint;
            // SAFETY: msgs[sent..count] are valid headers over iovecs into `buf`.
            let rc = unsafe {
                libc::sendmmsg(
                    fd,
                    self.msgs[self.sent..].as_mut_ptr(),
                    n,
                    libc::MSG_DONTWAIT,
                )
            };
            if rc < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EAGAIN) => return (flushed, Ok(())),
                    Some(libc::ENOBUFS) => {
                        flushed.dropped += 1;
                        flushed.dropped_bytes += self.iov[self.sent].iov_len as u64;
                        self.sent += 1;
                    }
                    _ => return (flushed, Err(e)),
                }
            } else {
                self.sent += rc as usize;
            }
        }
        self.count = 0;
        self.sent = 0;
        (flushed, Ok(()))
    }

    /// Drops every frame not sent; returns how many and their bytes.
    pub(super) fn discard(&mut self) -> (usize, u64) {
        let n = self.count - self.sent;
        let bytes = self.iov[self.sent..self.count]
            .iter()
            .map(|v| v.iov_len as u64)
            .sum();
        self.count = 0;
        self.sent = 0;
        (n, bytes)
    }
}
