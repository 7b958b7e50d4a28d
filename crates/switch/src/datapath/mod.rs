//! The switch's ports: Linux interfaces read and written in batches.
//!
//! - AF_PACKET ports ([`Port`]: mapped receive rings, `sendmmsg(2)` or transmit rings,
//!   no allocation per frame) are the `afpacket` crate's, named here as the switch's.
//!   They sit in a crate below the switch because `pharos bench datapath`'s traffic
//!   generator sends and receives through the same rings, and the bench must not
//!   depend on the switch it measures (the reasons and the measurements behind each
//!   choice are in that crate's doc).
//! - AF_XDP ports ([`xsk::XdpPort`], with the XDP program that feeds them in [`xdp`]):
//!   the switch's alone, for a data path that skips the kernel's socket-buffer path.
//!
//! ```text
//! xdp   the XDP program redirecting an interface's frames to its AF_XDP socket
//! xsk   XdpPort: an AF_XDP socket and its UMEM, the port's rings, NAPI settings
//! ```

pub mod xdp;
pub mod xsk;

pub use afpacket::{
    realtime_ns, recv_batch_among, wait_readable, Outputs, Port, PortConfig, PortCounters,
    RingVersion, RxMeta, Sched, TxMethod,
};

#[cfg(test)]
mod tests;
