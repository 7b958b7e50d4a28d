//! A port on an AF_XDP socket ([`XdpPort`]): the same operations as the AF_PACKET
//! [`super::Port`], for a data path that skips the kernel's socket-buffer path (issue 17;
//! why, in [`super::xdp`]).
//!
//! One socket on the interface's receive queue 0, with a memory area (UMEM) of its own:
//! 4,096 frames of 2 KiB, half lent to the kernel for receiving (the fill ring), half
//! for sending. [`XdpPort::recv_batch`] hands each received frame to its caller in
//! place and gives the frame back to the fill ring; [`XdpPort::send`] copies a frame
//! into a free sending frame, and [`XdpPort::flush`] puts the batch on the transmit
//! ring and wakes the kernel (one `sendto`), taking back the frames it has sent. The
//! kernel picks zero-copy where the driver has it and copies otherwise (veth).
//!
//! Limits, each refused with an error at open rather than met later:
//!
//! - one receive queue: frames the NIC steers to another queue would go to the kernel's
//!   stack, unseen by the switch, so an interface with more is refused;
//! - an interface already running an XDP program is refused ([`super::xdp`]).
//!
//! On veth, native XDP runs in the NAPI poll of the core that *sent* the frame (the
//! peer's): for the switch's own core to do that work, turn on threaded NAPI on the
//! interface (`/sys/class/net/IF/threaded`) and pin its NAPI thread with the switch
//! ([`XdpPort::napi_threaded`]).

use std::ffi::CString;
use std::io;
use std::num::NonZeroU32;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;

use afpacket::{iface, napi_threads, sys, Sched};
use openflow::MacAddr;
use xdpilone::xdp::XdpDesc;
use xdpilone::{DeviceQueue, IfInfo, RingRx, RingTx, Socket, SocketConfig, Umem, UmemConfig, User};

use super::xdp::{Redirect, XdpMode};
use super::PortCounters;

/// Frames in a port's area, and their size.
const FRAMES: u32 = 4096;
const FRAME_SIZE: u32 = 2048;
/// Frames lent to the kernel for receiving; the rest are for sending.
const RX_FRAMES: u32 = FRAMES / 2;

/// Anonymous, page-aligned memory for the UMEM; unmapped on drop.
struct Area {
    ptr: NonNull<u8>,
    len: usize,
}

impl Area {
    fn new(len: usize) -> io::Result<Area> {
        // SAFETY: an anonymous private mapping, no address hint; checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Area {
            ptr: NonNull::new(p.cast()).expect("mmap gave a non-null address"),
            len,
        })
    }

    fn slice(&self) -> NonNull<[u8]> {
        NonNull::slice_from_raw_parts(self.ptr, self.len)
    }

    /// The bytes at `[at, at + len)`, which the caller owns (not lent to the kernel).
    fn get(&self, at: u64, len: u32) -> Option<&[u8]> {
        let (at, len) = (at as usize, len as usize);
        (at.checked_add(len)? <= self.len)
            // SAFETY: in bounds (checked); the frame is the caller's, so the kernel does
            // not write it while the slice lives.
            .then(|| unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(at), len) })
    }

    fn put(&mut self, at: u64, bytes: &[u8]) {
        let at = at as usize;
        assert!(at + bytes.len() <= self.len, "a frame within the area");
        // SAFETY: in bounds (asserted); a free sending frame, which the kernel does not
        // touch until it is on the transmit ring.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.as_ptr().add(at), bytes.len())
        };
    }
}

impl Drop for Area {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// One interface opened as a switch port through AF_XDP (module doc).
pub struct XdpPort {
    name: String,
    mac: MacAddr,
    mtu: usize,
    // Dropped first: no frame is redirected to a closing socket.
    redirect: Redirect,
    rx: RingRx,
    tx: RingTx,
    device: DeviceQueue,
    _user: User,
    _socket: Socket,
    _umem: Umem,
    // After the UMEM: the kernel's registration of the area goes with the socket.
    area: Area,
    /// A datagram socket for the interface's ioctls (an AF_XDP socket takes none).
    ctl: OwnedFd,
    /// Sending frames not queued or in flight.
    free: Vec<u64>,
    /// Queued by `send`, put on the transmit ring by `flush`.
    pending: Vec<XdpDesc>,
    /// Received frames to give back to the fill ring.
    refill: Vec<u64>,
    counters: PortCounters,
    /// The interface's `threaded` setting before [`XdpPort::napi_threaded`] changed
    /// it, written back when the port closes.
    threaded_before: Option<String>,
    /// The interface's NAPI thread, once [`XdpPort::napi_threaded`] found it.
    napi_thread: Option<i32>,
    /// Its scheduling before [`XdpPort::napi_realtime`] changed it, put back when the
    /// port closes.
    napi_sched_before: Option<Sched>,
    /// The last wakeup failed for good (the interface down): what is on the transmit
    /// ring waits for a later flush to find it up.
    stalled: bool,
}

fn errno(what: &str, ifname: &str, e: xdpilone::Errno) -> io::Error {
    let e = io::Error::from_raw_os_error(e.get_raw());
    io::Error::new(e.kind(), format!("{what} on {ifname}: {e}"))
}

impl XdpPort {
    /// Opens `ifname` (needs root): the redirect program attached in `mode`, the socket
    /// bound to queue 0, the fill ring full.
    pub fn open(ifname: &str, mode: XdpMode) -> io::Result<XdpPort> {
        // SAFETY: plain socket creation; the descriptor is owned below.
        let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor we own.
        let ctl = unsafe { OwnedFd::from_raw_fd(raw) };
        let (_, mac, mtu) = iface::describe(ctl.as_raw_fd(), ifname)?;
        if mtu + 18 > (FRAME_SIZE - 256) as usize {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("{ifname}: MTU {mtu} is larger than an AF_XDP port's frames take"),
            ));
        }
        let queues = rx_queues(ifname);
        if queues > 1 {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "{ifname} has {queues} receive queues; an AF_XDP port reads one \
                     (ethtool -L {ifname} combined 1)"
                ),
            ));
        }
        let redirect = Redirect::attach(ifname, mode, 1)?;
        let area = Area::new((FRAMES * FRAME_SIZE) as usize)?;
        let config = UmemConfig {
            fill_size: RX_FRAMES,
            complete_size: FRAMES - RX_FRAMES,
            frame_size: FRAME_SIZE,
            headroom: 0,
            flags: 0,
        };
        // SAFETY: the area is page-aligned, and lives as long as the port, after the
        // UMEM (field order).
        let umem = unsafe { Umem::new(config, area.slice()) }
            .map_err(|e| errno("registering the UMEM", ifname, e))?;
        let mut info = IfInfo::invalid();
        let cname = CString::new(ifname).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("{ifname:?}: a NUL"))
        })?;
        info.from_name(&cname)
            .map_err(|e| errno("finding the interface", ifname, e))?;
        info.set_queue(0);
        let socket = Socket::with_shared(&info, &umem)
            .map_err(|e| errno("creating the AF_XDP socket", ifname, e))?;
        let mut device = umem
            .fq_cq(&socket)
            .map_err(|e| errno("the fill and completion rings", ifname, e))?;
        let rings = SocketConfig {
            rx_size: NonZeroU32::new(RX_FRAMES),
            tx_size: NonZeroU32::new(FRAMES - RX_FRAMES),
            bind_flags: SocketConfig::XDP_BIND_NEED_WAKEUP,
        };
        let user = umem
            .rx_tx(&socket, &rings)
            .map_err(|e| errno("the receive and transmit rings", ifname, e))?;
        umem.bind(&user)
            .map_err(|e| errno("binding the AF_XDP socket", ifname, e))?;
        let rx = user
            .map_rx()
            .map_err(|e| errno("mapping the receive ring", ifname, e))?;
        let tx = user
            .map_tx()
            .map_err(|e| errno("mapping the transmit ring", ifname, e))?;
        // Every sending frame in flight at once: each is an skb charged to the socket
        // until the peer frees it (copy mode). Above the system's cap where allowed (root).
        let sndbuf = (FRAMES - RX_FRAMES) as libc::c_int * 4096;
        if sys::setsockopt(
            rx.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUFFORCE,
            &sndbuf,
            "SO_SNDBUFFORCE",
        )
        .is_err()
        {
            let _ = sys::setsockopt(
                rx.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_SNDBUF,
                &sndbuf,
                "SO_SNDBUF",
            );
        }
        redirect.set_socket(0, rx.as_raw_fd())?;
        {
            let mut fill = device.fill(RX_FRAMES);
            let lent = fill.insert((0..RX_FRAMES).map(|i| u64::from(i * FRAME_SIZE)));
            fill.commit();
            debug_assert_eq!(lent, RX_FRAMES);
        }
        Ok(XdpPort {
            name: ifname.to_string(),
            mac: MacAddr(mac),
            mtu,
            redirect,
            rx,
            tx,
            device,
            _user: user,
            _socket: socket,
            _umem: umem,
            area,
            ctl,
            free: (RX_FRAMES..FRAMES)
                .rev()
                .map(|i| u64::from(i * FRAME_SIZE))
                .collect(),
            pending: Vec::with_capacity((FRAMES - RX_FRAMES) as usize),
            refill: Vec::with_capacity(RX_FRAMES as usize),
            counters: PortCounters::default(),
            threaded_before: None,
            napi_thread: None,
            napi_sched_before: None,
            stalled: false,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn mac(&self) -> MacAddr {
        self.mac
    }

    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// Whether the link is up, as [`super::Port::link_up`] reads it.
    pub fn link_up(&self) -> bool {
        iface::link_up(self.ctl.as_raw_fd(), &self.name)
    }

    /// Calls `f` with each received frame, at most `max`, in place; returns how many.
    /// No allocation.
    pub fn recv_batch(&mut self, max: usize, mut f: impl FnMut(&[u8])) -> usize {
        let mut rx = self.rx.receive(max.min(u32::MAX as usize) as u32);
        let mut n = 0;
        while let Some(desc) = rx.read() {
            match self.area.get(desc.addr, desc.len) {
                Some(frame) => {
                    self.counters.rx_packets += 1;
                    self.counters.rx_bytes += frame.len() as u64;
                    f(frame);
                    n += 1;
                }
                None => self.counters.rx_errors += 1,
            }
            self.refill.push(desc.addr & !u64::from(FRAME_SIZE - 1));
        }
        rx.release();
        if !self.refill.is_empty() {
            let device = &mut self.device;
            let given = place_all(&self.refill, |rest| {
                let mut fill = device.fill(rest.len() as u32);
                let n = fill.insert(rest.iter().copied());
                fill.commit();
                n
            });
            // The fill ring holds every receiving frame, so there is room for all.
            self.refill.drain(..given);
            if self.device.needs_wakeup() {
                self.device.wake();
            }
        }
        n
    }

    /// Whether received frames wait (no system call).
    pub fn rx_ready(&mut self) -> bool {
        self.rx.available() > 0
    }

    /// Queues a copy of `frame`; `false` when it was dropped (no free frame, or too
    /// large), counted.
    pub fn send(&mut self, frame: &[u8]) -> bool {
        if frame.len() > self.mtu + 18 || frame.len() < 14 {
            self.counters.tx_errors += 1;
            return false;
        }
        if self.free.is_empty() {
            self.reap();
        }
        let Some(at) = self.free.pop() else {
            self.counters.tx_dropped += 1;
            return false;
        };
        self.area.put(at, frame);
        self.pending.push(XdpDesc {
            addr: at,
            len: frame.len() as u32,
            options: 0,
        });
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += frame.len() as u64;
        true
    }

    /// Frames queued and not yet flushed.
    pub fn tx_pending(&self) -> usize {
        self.pending.len()
    }

    /// Frames flushed that the kernel has not sent yet: call [`XdpPort::flush`] again
    /// later while there are any, unless [`XdpPort::stalled`].
    pub fn tx_in_flight(&self) -> usize {
        self.tx.pending() as usize
    }

    /// The last flush found the interface unable to send (down): the frames in flight
    /// stay on the ring, which the port cannot take back, until a flush finds it up
    /// again. Flushing again before then is useless.
    pub fn stalled(&self) -> bool {
        self.stalled
    }

    /// Puts the queued frames on the transmit ring and wakes the kernel to send them.
    /// A failure to send (the interface down) is returned once, when it starts; the
    /// flushes after it return `Ok` until the interface sends again, while frames
    /// queued meanwhile wait on the ring as long as it has room and are dropped
    /// (counted) after that.
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            let ring = &mut self.tx;
            let put = place_all(&self.pending, |rest| {
                let mut tx = ring.transmit(rest.len() as u32);
                let n = tx.insert(rest.iter().copied());
                tx.commit();
                n
            });
            // Frames the ring had no room for (it holds every sending frame, so only
            // after a kernel that stopped sending): dropped, their frames free again.
            for d in self.pending.drain(put..) {
                self.free.push(d.addr);
                self.counters.tx_dropped += 1;
                self.counters.tx_packets -= 1;
                self.counters.tx_bytes -= u64::from(d.len);
            }
            self.pending.clear();
        }
        // In copy mode the kernel sends at most 32 frames per wakeup: wake it until the
        // ring is drained or a wakeup sends nothing (the socket's send buffer full of
        // frames the peer has not taken yet, or the link down). What stays is sent by a
        // later flush ([`XdpPort::tx_in_flight`]).
        let mut idle = 0;
        while self.tx.pending() > 0 && idle < 2 {
            let before = self.tx.pending();
            // SAFETY: a zero-length send on the port's own socket, which wakes its
            // transmit ring.
            let rc = unsafe {
                libc::sendto(
                    self.rx.as_raw_fd(),
                    std::ptr::null(),
                    0,
                    libc::MSG_DONTWAIT,
                    std::ptr::null(),
                    0,
                )
            };
            if rc < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    // Its budget spent with more to send, or out of send buffer for now.
                    Some(libc::EAGAIN) | Some(libc::EBUSY) | Some(libc::ENOBUFS) => {}
                    _ => {
                        self.reap();
                        if std::mem::replace(&mut self.stalled, true) {
                            return Ok(());
                        }
                        return Err(io::Error::new(
                            e.kind(),
                            format!("sending on {}: {e}", self.name),
                        ));
                    }
                }
            }
            self.stalled = false;
            if self.tx.pending() < before {
                idle = 0;
            } else {
                idle += 1;
            }
        }
        self.reap();
        Ok(())
    }

    /// Takes back the frames the kernel has sent.
    fn reap(&mut self) {
        // A read gives what the ring's cached view holds, refreshed only when that is
        // nothing: read again until a read finds none.
        loop {
            let mut done = self.device.complete(FRAMES - RX_FRAMES);
            let mut n = 0;
            while let Some(addr) = done.read() {
                self.free.push(addr & !u64::from(FRAME_SIZE - 1));
                n += 1;
            }
            done.release();
            if n == 0 {
                break;
            }
        }
    }

    /// The port's counters; `rx_dropped` adds the kernel's drops (ring full, no
    /// frame to fill).
    pub fn counters(&self) -> PortCounters {
        let mut c = self.counters;
        if let Ok(s) = self.device.statistics_v2() {
            c.rx_dropped = s.rx_dropped + s.rx_ring_full;
            c.rx_errors += s.rx_invalid_descs;
            c.tx_errors += s.tx_invalid_descs;
        }
        c
    }

    /// Takes the error the kernel flagged on the socket, if any.
    pub fn take_error(&self) -> Option<io::Error> {
        sys::take_error(self.as_raw_fd())
    }

    /// The interface's NAPI thread for this port, made threaded if it was not, pinned
    /// to `cpus` (the switch's own): on veth, native XDP otherwise runs on the sending
    /// core (module doc). Returns the thread's pid. Changes a setting of the interface
    /// (`/sys/class/net/IF/threaded`); the port puts it back as it was when it closes.
    pub fn napi_threaded(&mut self, cpus: &[usize]) -> io::Result<i32> {
        let path = threaded_path(&self.name);
        let io_err = |e: io::Error| io::Error::new(e.kind(), format!("{path}: {e}"));
        let before = std::fs::read_to_string(&path).map_err(io_err)?;
        if before.trim() != "1" {
            std::fs::write(&path, "1").map_err(io_err)?;
            self.threaded_before
                .get_or_insert(before.trim().to_string());
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        loop {
            if let Some(&pid) = napi_threads(&self.name).first() {
                pin(pid, cpus)?;
                self.napi_thread = Some(pid);
                return Ok(pid);
            }
            if std::time::Instant::now() > deadline {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "no NAPI thread for {} after turning threaded NAPI on",
                        self.name
                    ),
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Runs the port's NAPI thread ([`XdpPort::napi_threaded`] first) as a real-time
    /// thread, `SCHED_FIFO` at `priority`, until the port closes. With the switch's own
    /// thread at the same priority, neither preempts the other (each runs until it has
    /// nothing to do) and both preempt ordinary threads, such as the kernel's
    /// housekeeping, that would otherwise hold the core for milliseconds while the
    /// interface's ring (256 frames on veth) overflows.
    pub fn napi_realtime(&mut self, priority: i32) -> io::Result<()> {
        let Some(pid) = self.napi_thread else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{}: no NAPI thread (threaded NAPI first)", self.name),
            ));
        };
        let before = Sched::fifo(priority).set(pid)?;
        self.napi_sched_before.get_or_insert(before);
        Ok(())
    }

    pub fn ifname(&self) -> &str {
        self.redirect.ifname()
    }
}

impl Drop for XdpPort {
    fn drop(&mut self) {
        if let (Some(pid), Some(before)) = (self.napi_thread, self.napi_sched_before) {
            // (Gone already if threaded NAPI was turned off meanwhile.)
            if let Err(e) = before.set(pid) {
                tracing::debug!(pid, error = %e, "could not put the NAPI thread's scheduling back");
            }
        }
        if let Some(before) = &self.threaded_before {
            let path = threaded_path(&self.name);
            if let Err(e) = std::fs::write(&path, before) {
                tracing::warn!(path, error = %e, "could not put threaded NAPI back as it was");
            }
        }
    }
}

/// Where an interface's threaded NAPI is turned on and off.
fn threaded_path(ifname: &str) -> String {
    format!("/sys/class/net/{ifname}/threaded")
}

impl AsRawFd for XdpPort {
    /// Readable when received frames wait.
    fn as_raw_fd(&self) -> RawFd {
        self.rx.as_raw_fd()
    }
}

/// Puts all of `items` on a ring through `put`, which places what fits of a slice and
/// says how many. A reservation gives what the ring's cached view says is free,
/// refreshed only when that is nothing, so one call may place fewer than fit: call
/// again until all are placed or none fit. Returns how many were placed.
fn place_all<T>(items: &[T], mut put: impl FnMut(&[T]) -> u32) -> usize {
    let mut done = 0;
    while done < items.len() {
        let n = put(&items[done..]) as usize;
        if n == 0 {
            break;
        }
        done += n;
    }
    done
}

/// Receive queues of `ifname` (its `queues/rx-N` entries in sysfs; 1 when unreadable).
fn rx_queues(ifname: &str) -> usize {
    std::fs::read_dir(format!("/sys/class/net/{ifname}/queues"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("rx-"))
                .count()
        })
        .unwrap_or(1)
        .max(1)
}

fn pin(pid: i32, cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; CPU_SET writes within it for indices below its
    // size (checked).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c < libc::CPU_SETSIZE as usize {
            unsafe { libc::CPU_SET(c, &mut set) };
        }
    }
    // SAFETY: a valid set for the size passed.
    let rc = unsafe { libc::sched_setaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("pinning thread {pid}: {e}"),
        ));
    }
    Ok(())
}
