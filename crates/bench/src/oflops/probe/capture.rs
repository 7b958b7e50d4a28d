//! [`Capture`]: the probe frames arriving on a set of interfaces, each recorded with
//! its stamp and the port it came out of.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::frame::parse_stamp;
use super::iface::{enable_hw_stamps, Iface};
use super::socket::{packet_socket, pick, recv_stamped, setsockopt_int};
use super::stream::{RxRecord, TsSource};
use super::{now_ns, sys, ProbeError};

/// What a capture keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureOptions {
    /// Keep the bytes of the first this-many frames per stream and port (to check what a
    /// switch changed).
    pub keep_bytes: usize,
    /// Keep capturing this long after the senders stop (frames still in the switch).
    pub linger: Duration,
}

impl Default for CaptureOptions {
    fn default() -> CaptureOptions {
        CaptureOptions {
            keep_bytes: 4,
            linger: Duration::from_millis(100),
        }
    }
}

/// The frame as it was on the wire: `frame` with the tag the kernel stripped put back
/// after the MAC addresses.
fn with_tag(frame: &[u8], vlan: Option<(u16, u16)>) -> Vec<u8> {
    match vlan {
        Some((tpid, tci)) if frame.len() >= 12 => {
            let mut v = Vec::with_capacity(frame.len() + 4);
            v.extend_from_slice(&frame[..12]);
            v.extend_from_slice(&tpid.to_be_bytes());
            v.extend_from_slice(&tci.to_be_bytes());
            v.extend_from_slice(&frame[12..]);
            v
        }
        _ => frame.to_vec(),
    }
}

/// Captures probe frames on one or more interfaces with receive stamps. Frames this
/// machine sends on those interfaces are not captured, nor frames without the [`super::MAGIC`].
pub struct Capture {
    /// The interfaces, in the order of [`RxRecord::port`].
    ifaces: Vec<Iface>,
    /// One bound socket per interface.
    fds: Vec<OwnedFd>,
    /// What to keep.
    opts: CaptureOptions,
    /// Frames kept with their bytes, per (stream, port).
    kept: std::collections::HashMap<(u32, usize), usize>,
    /// Frames seen that carry no probe payload (other traffic on the ports).
    other: u64,
}

impl Capture {
    /// Opens each interface for capture, with software (and hardware) receive stamps.
    pub fn open(ifaces: &[&str], opts: CaptureOptions) -> Result<Capture, ProbeError> {
        let mut out = Capture {
            ifaces: Vec::new(),
            fds: Vec::new(),
            opts,
            kept: Default::default(),
            other: 0,
        };
        for name in ifaces {
            let iface = Iface::lookup(name)?;
            enable_hw_stamps(&iface.name);
            let flags = sys::SOF_RX_SOFTWARE
                | sys::SOF_SOFTWARE
                | sys::SOF_RX_HARDWARE
                | sys::SOF_RAW_HARDWARE;
            let fd = packet_socket(&iface, sys::ETH_P_ALL, flags)?;
            // Not our own transmissions (kernel 4.20+; sll_pkttype is checked as well).
            let _ = setsockopt_int(&fd, libc::SOL_PACKET, sys::PACKET_IGNORE_OUTGOING, 1);
            // The VLAN tag the kernel strips on receive, to put back (see `Received::vlan`).
            setsockopt_int(&fd, libc::SOL_PACKET, sys::PACKET_AUXDATA, 1).map_err(|e| {
                ProbeError::Io {
                    context: format!("PACKET_AUXDATA on {}", iface.name),
                    source: e,
                }
            })?;
            out.ifaces.push(iface);
            out.fds.push(fd);
        }
        // Frames queued before the bind finished (or sent by a previous run) are old:
        // drop them so a record is always from this run.
        let mut buf = vec![0u8; 256];
        for fd in &out.fds {
            while recv_stamped(fd, &mut buf, libc::MSG_DONTWAIT).is_ok() {}
        }
        Ok(out)
    }

    /// The capture interfaces' names, in port order.
    pub fn ports(&self) -> Vec<String> {
        self.ifaces.iter().map(|i| i.name.clone()).collect()
    }

    /// Frames seen without a probe payload.
    pub fn other_frames(&self) -> u64 {
        self.other
    }

    /// Reads what has arrived, without waiting, into `out`.
    pub fn poll_into(&mut self, out: &mut Vec<RxRecord>, buf: &mut [u8]) {
        for port in 0..self.fds.len() {
            while let Ok(r) = recv_stamped(&self.fds[port], buf, libc::MSG_DONTWAIT) {
                if r.pkttype == sys::PACKET_OUTGOING {
                    continue;
                }
                let n = r.len.min(buf.len());
                let Some(s) = parse_stamp(&buf[..n]) else {
                    self.other += 1;
                    continue;
                };
                let (rx_ns, source) = pick(r.sw_ns, r.hw_ns).unwrap_or((now_ns(), TsSource::User));
                let kept = self.kept.entry((s.stream, port)).or_insert(0);
                let bytes = (*kept < self.opts.keep_bytes).then(|| with_tag(&buf[..n], r.vlan));
                if bytes.is_some() {
                    *kept += 1;
                }
                out.push(RxRecord {
                    stream: s.stream,
                    seq: s.seq,
                    template: s.template,
                    user_tx_ns: s.user_tx_ns,
                    port,
                    rx_ns,
                    source,
                    len: r.len + if r.vlan.is_some() { 4 } else { 0 },
                    bytes,
                });
            }
        }
    }

    /// Waits up to `timeout` for any interface to have a frame.
    fn wait(&self, timeout: Duration) {
        let mut pfds: Vec<libc::pollfd> = self
            .fds
            .iter()
            .map(|f| libc::pollfd {
                fd: f.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: pfds is a valid array of pollfd.
        unsafe {
            libc::poll(
                pfds.as_mut_ptr(),
                pfds.len() as libc::nfds_t,
                timeout.as_millis().max(1) as libc::c_int,
            )
        };
    }

    /// Captures until `stop` is set (then for [`CaptureOptions::linger`] more) or `deadline`.
    pub fn run(&mut self, stop: &AtomicBool, deadline: Option<Instant>) -> Vec<RxRecord> {
        let mut out = Vec::new();
        let mut buf = vec![0u8; 9216];
        let mut stop_at: Option<Instant> = None;
        loop {
            self.poll_into(&mut out, &mut buf);
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                break;
            }
            if stop_at.is_none() && stop.load(Ordering::Relaxed) {
                stop_at = Some(now + self.opts.linger);
            }
            if stop_at.is_some_and(|s| now >= s) {
                break;
            }
            self.wait(Duration::from_millis(5));
        }
        out
    }
}
