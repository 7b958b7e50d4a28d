//! [`Sender`]: one stream's frames sent on one interface at its rate, each stamped and
//! recorded with the clocks it was sent by.

use std::io;
use std::mem;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::frame::{parse_stamp, FrameSpec, Stamp};
use super::iface::{enable_hw_stamps, Iface};
use super::socket::{packet_socket, pick, recv_stamped};
use super::stream::{Pacing, StreamSpec, TsSource, TxRecord};
use super::{last_err, now_ns, sys, ProbeError};

/// Sends probe frames on one interface and collects their transmit stamps.
pub struct Sender {
    /// The interface.
    iface: Iface,
    /// The bound `AF_PACKET` socket (protocol 0: it receives nothing but its error queue).
    fd: OwnedFd,
    /// Sent frames whose kernel stamp has not come back yet, by `(stream, seq)`.
    pending: std::collections::HashMap<(u32, u64), usize>,
    /// All records, in send order.
    records: Vec<TxRecord>,
    /// Scratch for error-queue reads.
    scratch: Vec<u8>,
    /// Whether the socket asks for transmit stamps (no for [`Sender::open_unstamped`]).
    stamping: bool,
}

impl Sender {
    /// Opens `iface` for sending, with software (and hardware, where the NIC has it)
    /// transmit stamps.
    pub fn open(iface: &str) -> Result<Sender, ProbeError> {
        let iface = Iface::lookup(iface)?;
        enable_hw_stamps(&iface.name);
        let flags =
            sys::SOF_TX_SOFTWARE | sys::SOF_SOFTWARE | sys::SOF_TX_HARDWARE | sys::SOF_RAW_HARDWARE;
        let fd = packet_socket(&iface, 0, flags)?;
        Ok(Sender {
            iface,
            fd,
            pending: Default::default(),
            records: Vec::new(),
            scratch: vec![0; 2048],
            stamping: true,
        })
    }

    /// Opens `iface` for sending without transmit stamps (a forwarder's output: no error
    /// queue to read after each frame).
    pub fn open_unstamped(iface: &str) -> Result<Sender, ProbeError> {
        let iface = Iface::lookup(iface)?;
        let fd = packet_socket(&iface, 0, 0)?;
        Ok(Sender {
            iface,
            fd,
            pending: Default::default(),
            records: Vec::new(),
            scratch: vec![0; 2048],
            stamping: false,
        })
    }

    /// The interface.
    pub fn iface(&self) -> &Iface {
        &self.iface
    }

    /// Sends one frame as it is (no record kept); returns [`now_ns`] just before the send.
    pub fn send_raw(&mut self, frame: &[u8]) -> Result<i64, ProbeError> {
        let t = now_ns();
        // SAFETY: frame is a valid buffer; the socket is bound, so send(2) needs no address.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        if n < 0 {
            return Err(last_err(format!("send on {}", self.iface.name)));
        }
        if self.stamping {
            self.drain_errqueue();
        }
        Ok(t)
    }

    /// Sends frames as they are in `sendmmsg(2)` calls (no records kept). Returns how many
    /// the kernel took: fewer when its queue was full.
    pub fn send_raw_many(&mut self, frames: &mut [Vec<u8>]) -> Result<usize, ProbeError> {
        let n = self.sendmmsg_all(frames)?;
        if self.stamping {
            self.drain_errqueue();
        }
        Ok(n)
    }

    fn sendmmsg_all(&self, frames: &mut [Vec<u8>]) -> Result<usize, ProbeError> {
        let n = frames.len();
        let mut iovs: Vec<libc::iovec> = frames
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: zeroed mmsghdr is valid; each points at one iovec that outlives the call.
        let mut msgs: Vec<libc::mmsghdr> = iovs
            .iter_mut()
            .map(|iov| {
                let mut m: libc::mmsghdr = unsafe { mem::zeroed() };
                m.msg_hdr.msg_iov = iov;
                m.msg_hdr.msg_iovlen = 1;
                m
            })
            .collect();
        let mut done = 0;
        while done < n {
            // SAFETY: msgs[done..] are valid mmsghdrs; the socket is bound.
            let r = unsafe {
                libc::sendmmsg(
                    self.fd.as_raw_fd(),
                    msgs[done..].as_mut_ptr(),
                    (n - done) as libc::c_uint,
                    0,
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::ENOBUFS) || e.raw_os_error() == Some(libc::EAGAIN)
                {
                    break;
                }
                return Err(ProbeError::Io {
                    context: format!("sendmmsg on {}", self.iface.name),
                    source: e,
                });
            }
            if r == 0 {
                break;
            }
            done += r as usize;
        }
        Ok(done)
    }

    /// Sends one probe frame built from `spec` with `stamp` (its `user_tx_ns` is filled in)
    /// and records it. Returns the frame's index in [`Sender::records`].
    pub fn send_frame(
        &mut self,
        spec: &FrameSpec,
        mut stamp: Stamp,
        buf: &mut Vec<u8>,
    ) -> Result<usize, ProbeError> {
        stamp.user_tx_ns = now_ns();
        spec.build_into(&stamp, buf);
        // SAFETY: as in send_raw.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), buf.as_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            // A full queue drops the frame, as a switch port would: counted as lost.
            if e.raw_os_error() != Some(libc::ENOBUFS) && e.raw_os_error() != Some(libc::EAGAIN) {
                return Err(ProbeError::Io {
                    context: format!("send on {}", self.iface.name),
                    source: e,
                });
            }
        }
        let i = self.records.len();
        self.records.push(TxRecord {
            stream: stamp.stream,
            seq: stamp.seq,
            template: stamp.template,
            user_ns: stamp.user_tx_ns,
            kernel_ns: None,
            source: TsSource::User,
        });
        self.pending.insert((stamp.stream, stamp.seq), i);
        Ok(i)
    }

    /// Sends frames `first .. first + n` of `spec` in one `sendmmsg(2)` (one user-space
    /// time for all) and records them. Frames the kernel refuses for a full queue are
    /// recorded all the same, and counted lost.
    fn send_batch(
        &mut self,
        spec: &StreamSpec,
        first: u64,
        n: usize,
        bufs: &mut Vec<Vec<u8>>,
    ) -> Result<(), ProbeError> {
        bufs.resize_with(n.max(bufs.len()), || Vec::with_capacity(2048));
        let user_tx_ns = now_ns();
        let mut stamps = Vec::with_capacity(n);
        for (i, buf) in bufs.iter_mut().enumerate().take(n) {
            let seq = first + i as u64;
            let t = (seq % spec.templates.len() as u64) as usize;
            let stamp = Stamp {
                stream: spec.id,
                seq,
                template: t as u32,
                user_tx_ns,
            };
            spec.templates[t].build_into(&stamp, buf);
            stamps.push(stamp);
        }
        self.sendmmsg_all(&mut bufs[..n])?;
        for st in stamps {
            self.pending.insert((st.stream, st.seq), self.records.len());
            self.records.push(TxRecord {
                stream: st.stream,
                seq: st.seq,
                template: st.template,
                user_ns: st.user_tx_ns,
                kernel_ns: None,
                source: TsSource::User,
            });
        }
        Ok(())
    }

    /// Reads the transmit stamps the kernel has queued so far.
    pub fn drain_errqueue(&mut self) {
        loop {
            let r = match recv_stamped(
                &self.fd,
                &mut self.scratch,
                libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT,
            ) {
                Ok(r) => r,
                Err(_) => return,
            };
            let n = r.len.min(self.scratch.len());
            let Some((ns, src)) = pick(r.sw_ns, r.hw_ns) else {
                continue;
            };
            if let Some(s) = parse_stamp(&self.scratch[..n]) {
                if let Some(i) = self.pending.remove(&(s.stream, s.seq)) {
                    self.records[i].kernel_ns = Some(ns);
                    self.records[i].source = src;
                }
            }
        }
    }

    /// Sends `spec`'s stream until its count or duration is reached or `stop` is set, then
    /// waits up to 20 ms for the last transmit stamps. Returns this stream's records.
    pub fn run(
        &mut self,
        spec: &StreamSpec,
        stop: &AtomicBool,
    ) -> Result<Vec<TxRecord>, ProbeError> {
        if spec.templates.is_empty() {
            return Err(ProbeError::Invalid(
                "a stream needs at least one frame template".into(),
            ));
        }
        for t in &spec.templates {
            t.check()?;
        }
        if spec.rate_pps.is_nan() || spec.rate_pps <= 0.0 {
            return Err(ProbeError::Invalid(format!("bad rate {}", spec.rate_pps)));
        }
        // Fine-grained sleeps: the default 50 µs timer slack would double a 100 µs nap.
        // SAFETY: prctl with plain integers, for this thread only.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0u64, 0u64, 0u64) };
        let first = self.records.len();
        let interval = 1e9 / spec.rate_pps;
        let start = Instant::now();
        let end = spec.duration.map(|d| start + d);
        let limit = spec.count.unwrap_or(u64::MAX);
        let mut buf = Vec::with_capacity(2048);
        let mut bufs: Vec<Vec<u8>> = Vec::new();
        let mut seq: u64 = 0;
        while seq < limit && !stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            if end.is_some_and(|e| now >= e) {
                break;
            }
            let due = start + Duration::from_nanos((seq as f64 * interval) as u64);
            if now < due {
                match spec.pacing {
                    Pacing::Spin => std::hint::spin_loop(),
                    Pacing::Sleep => {
                        self.drain_errqueue();
                        let left = due - Instant::now().min(due);
                        std::thread::sleep(left.max(Duration::from_micros(100)));
                    }
                }
                continue;
            }
            let batch = match spec.pacing {
                Pacing::Spin => 1,
                // Every frame due by now, in one sendmmsg(2), at most 64.
                Pacing::Sleep => {
                    let due_now = ((now - start).as_nanos() as f64 / interval) as u64 + 1;
                    due_now.saturating_sub(seq).clamp(1, 64).min(limit - seq)
                }
            };
            if batch == 1 {
                let t = (seq % spec.templates.len() as u64) as usize;
                let stamp = Stamp {
                    stream: spec.id,
                    seq,
                    template: t as u32,
                    user_tx_ns: 0,
                };
                self.send_frame(&spec.templates[t], stamp, &mut buf)?;
            } else {
                self.send_batch(spec, seq, batch as usize, &mut bufs)?;
            }
            let before = seq;
            seq += batch;
            if seq / 64 != before / 64 {
                self.drain_errqueue();
            }
        }
        let wait_end = Instant::now() + Duration::from_millis(20);
        while !self.pending.is_empty() && Instant::now() < wait_end {
            self.drain_errqueue();
            std::thread::sleep(Duration::from_micros(500));
        }
        self.pending.clear();
        Ok(self.records[first..].to_vec())
    }

    /// Every frame this sender recorded.
    pub fn records(&self) -> &[TxRecord] {
        &self.records
    }
}
