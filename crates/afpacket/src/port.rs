//! [`Port`]: one Linux interface opened as a packet socket with its rings mapped (see
//! the crate doc for the design and its measurements).

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use openflow::MacAddr;

use crate::iface::{describe, link_up};
use crate::mmsg::MmsgTx;
use crate::ring::{Rx, RxMeta, RxRing, RxRingV2, TxFull, TxLayout, TxRing};
use crate::sys::{self, Mapping};

/// The transmit path, by method.
pub(crate) enum TxKind {
    Mmsg(MmsgTx),
    Ring(TxRing),
}

/// The receive ring, by version.
pub(crate) enum RxKind {
    V2(RxRingV2),
    V3(RxRing),
}

/// A port's counters (port statistics).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// Frames delivered by [`Port::recv_batch`].
    pub rx_packets: u64,
    /// Frames queued by [`Port::send`] (less those a flush then dropped).
    pub tx_packets: u64,
    /// Bytes of the frames delivered.
    pub rx_bytes: u64,
    /// Bytes of the frames counted in `tx_packets`.
    pub tx_bytes: u64,
    /// Frames the kernel dropped because the receive ring was full.
    pub rx_dropped: u64,
    /// Frames refused by [`Port::send`] because the batch (or transmit ring) was full,
    /// dropped by the device on a flush, or dropped because the interface was down.
    pub tx_dropped: u64,
    /// Frames too large for the receive ring (skipped).
    pub rx_errors: u64,
    /// Frames refused by [`Port::send`] because they do not fit a slot, or refused by
    /// the kernel on [`Port::flush`].
    pub tx_errors: u64,
}

/// The layout of a port's rings (packet(7)'s `PACKET_VERSION`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingVersion {
    /// TPACKET_V2: fixed slots, each frame handed over (and woken for) as it comes:
    /// lowest latency at low rates, one wakeup per batch read under load.
    V2,
    /// TPACKET_V3: frames packed into blocks handed over when full or when the retire
    /// timer fires: fewer wakeups and denser memory, but a lone frame waits for the
    /// timer (up to `retire_ms`).
    V3,
}

/// How a port transmits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxMethod {
    /// Frames copied into a buffer of slots, one `sendmmsg(2)` per flush.
    Sendmmsg,
    /// A transmit ring (of the port's [`RingVersion`]): frames copied into shared
    /// slots, one `send(2)` per flush, the kernel's skbs built over the ring's pages.
    Ring,
}

/// The sizes of a port's rings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortConfig {
    /// The rings' layout.
    pub version: RingVersion,
    /// The transmit path.
    pub tx: TxMethod,
    /// Receive block size in bytes (a multiple of the page size). With V3 a 64-byte
    /// frame takes 144 bytes of a block, a 1514-byte one 1600; with V2 every frame
    /// takes a slot (2 KiB with MTU 1500).
    pub block_size: usize,
    /// Receive blocks.
    pub block_nr: usize,
    /// V3: how long the kernel keeps a block that is not full before handing it over,
    /// in milliseconds (the receive latency at low rates). Unused by V2.
    pub retire_ms: u32,
    /// Frames queued between flushes at most (a transmit ring's slots are rounded up to
    /// fill whole blocks).
    pub tx_frames: usize,
}

impl Default for PortConfig {
    /// TPACKET_V2, 4 MiB of receive ring (2,048 slots with MTU 1500; with V3, 32
    /// blocks of 128 KiB: about 29,000 64-byte frames or 2,600 full-size ones, and a
    /// 1 ms retire timer), sendmmsg with batches of up to 1,024 frames.
    fn default() -> Self {
        PortConfig {
            version: RingVersion::V2,
            tx: TxMethod::Sendmmsg,
            block_size: 128 * 1024,
            block_nr: 32,
            retire_ms: 1,
            tx_frames: 1024,
        }
    }
}

/// One Linux interface opened as a switch port.
pub struct Port {
    /// The interface's name, as opened.
    name: String,
    /// Its index, to which the socket is bound.
    ifindex: i32,
    /// Its MTU when opened: the largest frame sent is MTU + 14 (+ 4 with a VLAN tag).
    pub(crate) mtu: usize,
    /// Its hardware address when opened.
    mac: MacAddr,
    /// The receive ring, walked in place.
    pub(crate) rx: RxKind,
    /// The transmit batch: sendmmsg's slots or the transmit ring.
    pub(crate) tx: TxKind,
    /// Receive counters kept here (packets, bytes, truncated frames); only the rx_*
    /// fields are used.
    pub(crate) rx_counters: PortCounters,
    /// Transmit counters kept here; only the tx_* fields are used (apart from the
    /// receive side's, so [`recv_batch_among`] can send on the port it reads).
    pub(crate) tx_counters: PortCounters,
    /// The kernel's ring-full drops, summed (PACKET_STATISTICS resets on each read, so
    /// `counters(&self)` adds what it reads here).
    kernel_drops: Cell<u64>,
    /// The rings' memory (dropped before the socket: fields drop in order).
    _mapping: Mapping,
    /// The packet socket, closed last.
    fd: OwnedFd,
}

// The raw pointers into the mapping are owned by the port alone.
unsafe impl Send for Port {}

impl Port {
    /// Opens `ifname` (it must exist; it is put in promiscuous mode).
    pub fn open(ifname: &str) -> io::Result<Port> {
        Port::open_with(ifname, &PortConfig::default())
    }

    /// Opens `ifname` with rings of the given sizes.
    pub fn open_with(ifname: &str, config: &PortConfig) -> io::Result<Port> {
        let page = page_size();
        if config.block_size == 0
            || config.block_size % page != 0
            || config.block_nr == 0
            || config.tx_frames == 0
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("ring sizes {config:?}: block_size must be a multiple of {page}"),
            ));
        }
        // Protocol 0: no frame is queued to the socket until it is bound, with its rings.
        // SAFETY: plain socket(2).
        let raw = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        };
        if raw < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("packet socket: {e}")));
        }
        // SAFETY: `raw` is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let s = fd.as_raw_fd();

        let (ifindex, mac, mtu) = describe(s, ifname)?;

        let sol = libc::SOL_PACKET;
        // enum tpacket_versions: TPACKET_V1, TPACKET_V2, TPACKET_V3.
        let version: libc::c_int = match config.version {
            RingVersion::V2 => 1,
            RingVersion::V3 => 2,
        };
        sys::setsockopt(s, sol, libc::PACKET_VERSION, &version, "PACKET_VERSION")?;
        sys::setsockopt(s, sol, libc::PACKET_LOSS, &1i32, "PACKET_LOSS")?;
        sys::setsockopt(
            s,
            sol,
            libc::PACKET_QDISC_BYPASS,
            &1i32,
            "PACKET_QDISC_BYPASS",
        )?;
        sys::setsockopt(
            s,
            sol,
            libc::PACKET_IGNORE_OUTGOING,
            &1i32,
            "PACKET_IGNORE_OUTGOING (Linux 4.20)",
        )?;

        // Receive ring. V3: the frame size is meaningless (frames are packed in
        // blocks) but the kernel checks frame_nr == block_nr * block_size / frame_size.
        // V2: slots hold the header (frame at offset 66 or so) and a full-size frame.
        let rx_frame = match config.version {
            RingVersion::V3 => 2048usize.min(config.block_size),
            RingVersion::V2 => (80 + mtu + 18).next_power_of_two(),
        };
        if rx_frame > config.block_size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "block_size {} is smaller than a slot ({rx_frame})",
                    config.block_size
                ),
            ));
        }
        let rx_frame_nr = config.block_size / rx_frame * config.block_nr;
        let rx_req = libc::tpacket_req3 {
            tp_block_size: config.block_size as u32,
            tp_block_nr: config.block_nr as u32,
            tp_frame_size: rx_frame as u32,
            tp_frame_nr: rx_frame_nr as u32,
            tp_retire_blk_tov: match config.version {
                RingVersion::V3 => config.retire_ms,
                RingVersion::V2 => 0,
            },
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        sys::setsockopt(s, sol, libc::PACKET_RX_RING, &rx_req, "PACKET_RX_RING")?;

        // Transmit: ring slots hold the header plus MTU + Ethernet header + VLAN tag,
        // in a power of two (so slots tile pages), in blocks of at least a page;
        // sendmmsg's slots hold just the frame.
        let tx_layout = match config.version {
            RingVersion::V2 => TxLayout::V2,
            RingVersion::V3 => TxLayout::V3,
        };
        let rx_len = config.block_size * config.block_nr;
        let (mapping, tx, tx_len) = match config.tx {
            TxMethod::Ring => {
                let tx_frame = (tx_layout.data + mtu + 18).next_power_of_two();
                let tx_block = tx_frame.max(page).max(64 * 1024);
                let per_block = tx_block / tx_frame;
                let tx_block_nr = config.tx_frames.div_ceil(per_block);
                let tx_frame_nr = tx_block_nr * per_block;
                let tx_req = libc::tpacket_req3 {
                    tp_block_size: tx_block as u32,
                    tp_block_nr: tx_block_nr as u32,
                    tp_frame_size: tx_frame as u32,
                    tp_frame_nr: tx_frame_nr as u32,
                    tp_retire_blk_tov: 0,
                    tp_sizeof_priv: 0,
                    tp_feature_req_word: 0,
                };
                sys::setsockopt(s, sol, libc::PACKET_TX_RING, &tx_req, "PACKET_TX_RING")?;
                let tx_len = tx_block * tx_block_nr;
                let mapping = Mapping::map(s, rx_len + tx_len)?;
                let ring = TxRing::new(
                    mapping.base.wrapping_add(rx_len),
                    tx_frame,
                    tx_frame_nr,
                    tx_layout,
                );
                (mapping, TxKind::Ring(ring), tx_len)
            }
            TxMethod::Sendmmsg => {
                let slot = mtu + 18;
                let mapping = Mapping::map(s, rx_len)?;
                (
                    mapping,
                    TxKind::Mmsg(MmsgTx::new(config.tx_frames, slot)),
                    config.tx_frames * (slot + 512),
                )
            }
        };
        let rx = match config.version {
            RingVersion::V3 => RxKind::V3(RxRing::new(
                mapping.base,
                config.block_size,
                config.block_nr,
            )),
            RingVersion::V2 => RxKind::V2(RxRingV2::new(mapping.base, rx_frame, rx_frame_nr)),
        };

        // Until the receiver frees them, sent frames are charged to the socket's send
        // buffer: make it hold a whole batch so one flush is not cut short.
        let sndbuf = i32::try_from(tx_len * 2).unwrap_or(i32::MAX);
        if sys::setsockopt(
            s,
            libc::SOL_SOCKET,
            libc::SO_SNDBUFFORCE,
            &sndbuf,
            "SO_SNDBUFFORCE",
        )
        .is_err()
        {
            sys::setsockopt(s, libc::SOL_SOCKET, libc::SO_SNDBUF, &sndbuf, "SO_SNDBUF")?;
        }

        // SAFETY: sockaddr_ll is plain old data.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = ifindex;
        // SAFETY: a valid sockaddr_ll of the given length.
        let rc = unsafe {
            libc::bind(
                s,
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("bind to {ifname}: {e}")));
        }

        let mreq = libc::packet_mreq {
            mr_ifindex: ifindex,
            mr_type: libc::PACKET_MR_PROMISC as u16,
            mr_alen: 0,
            mr_address: [0; 8],
        };
        sys::setsockopt(
            s,
            sol,
            libc::PACKET_ADD_MEMBERSHIP,
            &mreq,
            "PACKET_ADD_MEMBERSHIP",
        )?;

        Ok(Port {
            name: ifname.to_owned(),
            ifindex,
            mtu,
            mac: MacAddr(mac),
            rx,
            tx,
            rx_counters: PortCounters::default(),
            tx_counters: PortCounters::default(),
            kernel_drops: Cell::new(0),
            _mapping: mapping,
            fd,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The interface's index (in the network namespace the port was opened in).
    pub fn ifindex(&self) -> i32 {
        self.ifindex
    }

    /// The interface's MTU when the port was opened.
    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// The interface's hardware address.
    pub fn mac(&self) -> MacAddr {
        self.mac
    }

    /// Whether the link is up: administratively up (`IFF_UP`) with carrier (the
    /// driver's link state, `ETHTOOL_GLINK`, read as it is now; `IFF_RUNNING`, which
    /// the kernel updates a moment later, where the driver has no ethtool). A veth
    /// loses its carrier when its peer goes down. Two ioctls; call it from a timer,
    /// not per frame.
    pub fn link_up(&self) -> bool {
        link_up(self.fd.as_raw_fd(), &self.name)
    }

    /// Calls `f` with each frame received and waiting, at most `max` of them, and
    /// returns how many. Frames sent by this port itself are not seen. No allocation.
    pub fn recv_batch(&mut self, max: usize, mut f: impl FnMut(&[u8])) -> usize {
        self.recv_batch_meta(max, |frame, _| f(frame))
    }

    /// [`Port::recv_batch`] with each frame's kernel timestamp and wire length.
    pub fn recv_batch_meta(&mut self, max: usize, mut f: impl FnMut(&[u8], RxMeta)) -> usize {
        let counters = &mut self.rx_counters;
        let mut delivered = 0;
        let each = |rx: Rx<'_>| match rx {
            Rx::Frame(frame, meta) => {
                counters.rx_packets += 1;
                counters.rx_bytes += frame.len() as u64;
                delivered += 1;
                f(frame, meta);
            }
            Rx::Truncated => counters.rx_errors += 1,
        };
        match &mut self.rx {
            RxKind::V3(ring) => ring.walk(max, each),
            RxKind::V2(ring) => ring.walk(max, each),
        };
        delivered
    }

    /// Takes the error the kernel flagged on the socket (`SO_ERROR`; `ENETDOWN` after
    /// the interface went down), so a poller stops reporting it.
    pub fn take_error(&self) -> Option<io::Error> {
        sys::take_error(self.fd.as_raw_fd())
    }

    /// Whether frames are waiting in the receive ring (no system call).
    #[inline]
    pub fn rx_ready(&self) -> bool {
        match &self.rx {
            RxKind::V3(ring) => ring.ready(),
            RxKind::V2(ring) => ring.ready(),
        }
    }

    /// Queues a frame for sending; `false` if the transmit ring is full (the frame is
    /// dropped and counted).
    #[inline]
    pub fn send(&mut self, frame: &[u8]) -> bool {
        send_on(&mut self.tx, &mut self.tx_counters, self.mtu, frame)
    }

    /// Frames queued by [`Port::send`] that the kernel may not have taken yet (0 when
    /// it took them all; otherwise an upper bound). Flush again while it is not 0.
    #[inline]
    pub fn tx_pending(&self) -> usize {
        match &self.tx {
            TxKind::Mmsg(tx) => tx.pending(),
            TxKind::Ring(tx) => tx.pending,
        }
    }

    /// Hands queued frames to the kernel. Frames it could not take now (its send
    /// buffer full: `EAGAIN`) stay queued for the next flush; frames the device drops
    /// (`ENOBUFS`) are counted in `tx_dropped`. When the interface is down the queued
    /// frames are dropped (counted in `tx_dropped`) and the error returned.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.tx_pending() == 0 {
            return Ok(());
        }
        let mut result = self.flush_once();
        if let Err(e) = &result {
            // The kernel reports a link that went down as an error on the socket, once,
            // even when the link is back up by now (nothing was sent): try again.
            if e.raw_os_error() == Some(libc::ENETDOWN) && self.link_up() {
                result = self.flush_once();
            }
        }
        if let Err(e) = result {
            // Take back every frame the kernel has not taken, so no stale frame leaves
            // when the link comes back.
            let (n, bytes) = match &mut self.tx {
                TxKind::Mmsg(tx) => tx.discard(),
                TxKind::Ring(tx) => tx.discard_pending(),
            };
            self.tx_counters.tx_dropped += n as u64;
            self.tx_counters.tx_packets -= n as u64;
            self.tx_counters.tx_bytes -= bytes;
            return Err(e);
        }
        Ok(())
    }

    fn flush_once(&mut self) -> io::Result<()> {
        let fd = self.fd.as_raw_fd();
        match &mut self.tx {
            TxKind::Mmsg(tx) => {
                let (flushed, result) = tx.flush(fd);
                self.tx_counters.tx_dropped += flushed.dropped;
                self.tx_counters.tx_packets -= flushed.dropped;
                self.tx_counters.tx_bytes -= flushed.dropped_bytes;
                result
            }
            TxKind::Ring(tx) => {
                // One send(2) with no buffer: the kernel sends every slot marked, in
                // order, from its head. A full send buffer or device queue (EAGAIN,
                // ENOBUFS) leaves the slot it stopped at marked, for the next flush.
                // SAFETY: send(2) with no buffer: the kernel reads the transmit ring.
                let rc = unsafe { libc::send(fd, std::ptr::null(), 0, libc::MSG_DONTWAIT) };
                if rc < 0 {
                    let e = io::Error::last_os_error();
                    if !matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::ENOBUFS)) {
                        return Err(e);
                    }
                }
                tx.settle();
                Ok(())
            }
        }
    }

    pub fn counters(&self) -> PortCounters {
        if let Ok(stats) = sys::getsockopt::<TpacketStatsV3>(
            self.fd.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
        ) {
            self.kernel_drops
                .set(self.kernel_drops.get() + stats.tp_drops as u64);
        }
        PortCounters {
            rx_dropped: self.kernel_drops.get(),
            tx_packets: self.tx_counters.tx_packets,
            tx_bytes: self.tx_counters.tx_bytes,
            tx_dropped: self.tx_counters.tx_dropped,
            tx_errors: self.tx_counters.tx_errors,
            ..self.rx_counters
        }
    }
}

/// Queues `frame` on a port's transmit path (the body of [`Port::send`]).
#[inline]
pub(crate) fn send_on(
    tx: &mut TxKind,
    counters: &mut PortCounters,
    mtu: usize,
    frame: &[u8],
) -> bool {
    // Larger than the interface takes (MTU + Ethernet header + one VLAN tag): the
    // kernel would refuse it; count it here instead.
    if frame.len() > mtu + 18 || frame.len() < 14 {
        counters.tx_errors += 1;
        return false;
    }
    let pushed = match tx {
        TxKind::Mmsg(tx) => tx.push(frame),
        TxKind::Ring(tx) => tx.push(frame),
    };
    match pushed {
        Ok(()) => {
            counters.tx_packets += 1;
            counters.tx_bytes += frame.len() as u64;
            true
        }
        Err(TxFull::Ring) => {
            counters.tx_dropped += 1;
            false
        }
        Err(TxFull::TooBig) => {
            counters.tx_errors += 1;
            false
        }
    }
}

impl AsRawFd for Port {
    /// Readable when frames are waiting (for mio's `SourceFd`).
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl std::fmt::Debug for Port {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Port")
            .field("name", &self.name)
            .field("ifindex", &self.ifindex)
            .field("mac", &self.mac)
            .finish_non_exhaustive()
    }
}

/// `struct tpacket_stats_v3` (with Default, for `getsockopt`).
#[derive(Default)]
#[repr(C)]
struct TpacketStatsV3 {
    /// Frames the socket received since the last read.
    tp_packets: u32,
    /// Frames dropped for a full ring since the last read.
    tp_drops: u32,
    /// Times the V3 queue was frozen (unused; part of the kernel's layout).
    tp_freeze_q_cnt: u32,
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}
