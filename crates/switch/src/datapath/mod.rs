//! Ports on Linux interfaces through AF_PACKET rings (owned by helper `datapath`; this
//! file gives the interface the agent codes against).

use std::io;
use std::os::fd::{AsRawFd, RawFd};

use openflow::MacAddr;

/// A port's counters (port statistics).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortCounters {
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub rx_dropped: u64,
    pub tx_dropped: u64,
    pub rx_errors: u64,
    pub tx_errors: u64,
}

/// One Linux interface opened as a switch port.
pub struct Port {
    _private: (),
}

impl Port {
    /// Opens `ifname` (it must exist; it is put in promiscuous mode).
    pub fn open(_ifname: &str) -> io::Result<Port> {
        unimplemented!("helper datapath")
    }

    pub fn name(&self) -> &str {
        unimplemented!("helper datapath")
    }

    /// The interface's hardware address.
    pub fn mac(&self) -> MacAddr {
        unimplemented!("helper datapath")
    }

    /// Whether the link is up (carrier).
    pub fn link_up(&self) -> bool {
        unimplemented!("helper datapath")
    }

    /// Calls `f` with each frame received and waiting, at most `max` of them, and
    /// returns how many. Frames sent by this port itself are not seen. No allocation.
    pub fn recv_batch(&mut self, _max: usize, _f: impl FnMut(&[u8])) -> usize {
        unimplemented!("helper datapath")
    }

    /// Queues a frame for sending; `false` if the transmit ring is full (the frame is
    /// dropped and counted).
    pub fn send(&mut self, _frame: &[u8]) -> bool {
        unimplemented!("helper datapath")
    }

    /// Hands queued frames to the kernel.
    pub fn flush(&mut self) -> io::Result<()> {
        unimplemented!("helper datapath")
    }

    pub fn counters(&self) -> PortCounters {
        unimplemented!("helper datapath")
    }
}

impl AsRawFd for Port {
    /// Readable when frames are waiting (for mio's `SourceFd`).
    fn as_raw_fd(&self) -> RawFd {
        unimplemented!("helper datapath")
    }
}
