//! The switch's ports as OpenFlow sees them: a number, the I/O behind it ([`PortIo`]),
//! the controller-set configuration (PORT_MOD) and the link state last reported
//! (PORT_STATUS); and their descriptions in each version's structure.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

use openflow::common::PortCounters as OfCounters;
use openflow::types::FixedStr;
use openflow::{of10, of13, MacAddr};

use crate::datapath::xsk::XdpPort;
use crate::datapath::{Port, PortCounters};

/// What the switch needs of a port's I/O: [`Port`] implements it; tests put a fake
/// behind it.
pub trait PortIo {
    fn name(&self) -> &str;
    fn mac(&self) -> MacAddr;
    fn link_up(&self) -> bool;
    /// Calls `f` with each waiting frame, at most `max`; returns how many.
    fn recv_batch(&mut self, max: usize, f: impl FnMut(&[u8])) -> usize;
    /// Queues a frame; `false` when it was dropped.
    fn send(&mut self, frame: &[u8]) -> bool;
    fn flush(&mut self) -> io::Result<()>;
    fn counters(&self) -> PortCounters;
    /// Readable when frames wait (polled by the switch's loop).
    fn raw_fd(&self) -> RawFd;
    /// Takes an error the socket reports (an interface gone down), so that polling
    /// stops reporting it.
    fn take_error(&self) -> Option<io::Error> {
        None
    }
    /// Frames flushed that the kernel has not taken yet (an AF_XDP port's transmit
    /// ring): the loop flushes again next turn.
    fn tx_in_flight(&self) -> bool {
        false
    }
}

impl PortIo for Port {
    fn name(&self) -> &str {
        Port::name(self)
    }
    fn mac(&self) -> MacAddr {
        Port::mac(self)
    }
    fn link_up(&self) -> bool {
        Port::link_up(self)
    }
    #[inline]
    fn recv_batch(&mut self, max: usize, f: impl FnMut(&[u8])) -> usize {
        Port::recv_batch(self, max, f)
    }
    #[inline]
    fn send(&mut self, frame: &[u8]) -> bool {
        Port::send(self, frame)
    }
    fn flush(&mut self) -> io::Result<()> {
        Port::flush(self)
    }
    fn counters(&self) -> PortCounters {
        Port::counters(self)
    }
    fn raw_fd(&self) -> RawFd {
        self.as_raw_fd()
    }
    fn take_error(&self) -> Option<io::Error> {
        Port::take_error(self)
    }
}

impl PortIo for XdpPort {
    fn name(&self) -> &str {
        XdpPort::name(self)
    }
    fn mac(&self) -> MacAddr {
        XdpPort::mac(self)
    }
    fn link_up(&self) -> bool {
        XdpPort::link_up(self)
    }
    #[inline]
    fn recv_batch(&mut self, max: usize, f: impl FnMut(&[u8])) -> usize {
        XdpPort::recv_batch(self, max, f)
    }
    #[inline]
    fn send(&mut self, frame: &[u8]) -> bool {
        XdpPort::send(self, frame)
    }
    fn flush(&mut self) -> io::Result<()> {
        XdpPort::flush(self)
    }
    fn counters(&self) -> PortCounters {
        XdpPort::counters(self)
    }
    fn raw_fd(&self) -> RawFd {
        self.as_raw_fd()
    }
    fn take_error(&self) -> Option<io::Error> {
        XdpPort::take_error(self)
    }
    fn tx_in_flight(&self) -> bool {
        // Not while the interface is down: the loop would only spin.
        XdpPort::tx_in_flight(self) > 0 && !self.stalled()
    }
}

/// `ofp_port_config` bits the switch honours (the same bits in 1.0 and 1.3, but
/// `NO_FLOOD`, which 1.3 dropped).
pub mod config {
    /// The port is administratively down: nothing received or sent.
    pub const PORT_DOWN: u32 = 1 << 0;
    /// Frames received are dropped.
    pub const NO_RECV: u32 = 1 << 2;
    /// Not an output of flood (1.0).
    pub const NO_FLOOD: u32 = 1 << 4;
    /// Frames to it are dropped.
    pub const NO_FWD: u32 = 1 << 5;
    /// No PACKET_IN for frames received on it.
    pub const NO_PACKET_IN: u32 = 1 << 6;
    /// Every bit above, for PORT_MOD's mask.
    pub const SUPPORTED: u32 = PORT_DOWN | NO_RECV | NO_FLOOD | NO_FWD | NO_PACKET_IN;
}

/// One port of the switch.
#[derive(Debug)]
pub struct PortSlot<P> {
    /// Its OpenFlow number (1..0xff00).
    pub port_no: u32,
    /// Its I/O.
    pub io: P,
    /// `ofp_port_config` bits ([`config`]), as PORT_MOD left them.
    pub config: u32,
    /// The link state the controllers were last told of.
    pub link_up: bool,
    /// Frames sent since the last flush (the loop flushes only these ports).
    pub dirty: bool,
    /// Frames dropped on the way out by the configuration (NO_FWD, PORT_DOWN).
    pub tx_dropped: u64,
    /// When the port was added (1.3 port statistics' duration).
    pub since: Instant,
}

/// Link speed reported for every port, in kb/s (veth has none; 10 Gb/s, as Open
/// vSwitch reports for an unknown speed).
const SPEED_KBPS: u32 = 10_000_000;

impl<P: PortIo> PortSlot<P> {
    pub fn new(port_no: u32, io: P, now: Instant) -> PortSlot<P> {
        let link_up = io.link_up();
        PortSlot {
            port_no,
            io,
            config: 0,
            link_up,
            dirty: false,
            tx_dropped: 0,
            since: now,
        }
    }

    /// Whether frames may leave by this port.
    #[inline]
    pub fn can_send(&self) -> bool {
        self.config & (config::PORT_DOWN | config::NO_FWD) == 0
    }

    /// Whether frames received on it go into the tables.
    #[inline]
    pub fn can_receive(&self) -> bool {
        self.config & (config::PORT_DOWN | config::NO_RECV) == 0
    }

    /// Sends `frame`, unless the configuration forbids it.
    #[inline]
    pub fn send(&mut self, frame: &[u8]) {
        if self.can_send() {
            self.io.send(frame);
            self.dirty = true;
        } else {
            self.tx_dropped += 1;
        }
    }

    fn name16(&self) -> FixedStr<16> {
        let name = self.io.name();
        // A Linux interface name fits in 15 bytes; cut anything longer.
        let cut = &name[..name.len().min(15)];
        FixedStr::new(cut).unwrap_or_default()
    }

    /// The 1.0 `ofp_phy_port`.
    pub fn phy_port_v10(&self) -> of10::PhyPort {
        let f = of10::port::OFPPF_10GB_FD | of10::port::OFPPF_COPPER;
        of10::PhyPort {
            port_no: self.port_no as u16,
            hw_addr: self.io.mac(),
            name: self.name16(),
            config: self.config,
            state: if self.link_up {
                0
            } else {
                of10::port::OFPPS_LINK_DOWN
            },
            curr: f,
            advertised: 0,
            supported: f,
            peer: 0,
        }
    }

    /// The 1.3 `ofp_port`.
    pub fn port_v13(&self) -> of13::Port {
        use of13::port::{features, state};
        let f = features::F_10GB_FD | features::F_COPPER;
        of13::Port {
            port_no: self.port_no,
            hw_addr: self.io.mac(),
            name: self.name16(),
            // 1.3 has no NO_FLOOD bit (§7.2.1: "OFPPC_NO_FLOOD" was removed).
            config: self.config & !config::NO_FLOOD,
            state: if self.link_up {
                state::LIVE
            } else {
                state::LINK_DOWN
            },
            curr: f,
            advertised: 0,
            supported: f,
            peer: 0,
            curr_speed: SPEED_KBPS,
            max_speed: SPEED_KBPS,
        }
    }

    /// Counters for port statistics.
    pub fn counters(&self) -> OfCounters {
        let c = self.io.counters();
        OfCounters {
            rx_packets: c.rx_packets,
            tx_packets: c.tx_packets,
            rx_bytes: c.rx_bytes,
            tx_bytes: c.tx_bytes,
            rx_dropped: c.rx_dropped,
            tx_dropped: c.tx_dropped + self.tx_dropped,
            rx_errors: c.rx_errors,
            tx_errors: c.tx_errors,
            ..OfCounters::default()
        }
    }
}
