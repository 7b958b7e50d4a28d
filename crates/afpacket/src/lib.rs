//! # pharos-afpacket: Linux interfaces as packet ports
//!
//! Ports on Linux interfaces through AF_PACKET rings, and the Linux plumbing around
//! them: interface queries, network namespaces, thread scheduling.
//!
//! ## Why a crate of its own
//!
//! `pharos switch` forwards through these ports, and `pharos bench datapath`'s traffic
//! generator (`bench::datapath::gen`) sends and receives through them too: the same
//! rings, so the generator is as fast as a port can be and meets a switch with the I/O
//! the switch itself has. The bench must not depend on the switch it measures
//! (DESIGN.md), and a second copy of the rings in the bench would drift from the
//! switch's; so the rings sit below both, in a crate that knows Linux interfaces and
//! Ethernet frames and nothing of flow tables or OpenFlow (it borrows only the codec's
//! `MacAddr`, and the packet crate's checksum). The switch's AF_XDP ports stay in the
//! switch (the generator has no use for them) and use this crate's interface queries
//! and socket calls.
//!
//! The per-frame calls (`send`, `rx_ready`, `tx_pending`, `Outputs::send`) are
//! `#[inline]`: their callers, the switch's loop and the generator's, are in other
//! crates now, and were in this code's crate when it was the switch's.
//!
//! ## Layout
//!
//! ```text
//! port     Port, PortConfig, PortCounters, RingVersion, TxMethod: one interface, its
//!          receive ring and its transmit path (sendmmsg or a transmit ring)
//! among    recv_batch_among, Outputs: forwarding from one port's ring into others'
//! ring     the TPACKET_V2 / V3 receive ring walks and the transmit ring's slots
//! mmsg     the sendmmsg(2) transmit batch
//! csum     completing a TCP/UDP checksum left to offload
//! iface    interface index, address, MTU and link state by ioctl
//! sys      the system calls: socket options, the ring mapping, poll, clocks
//! threads  Sched (a thread's scheduling policy), napi_threads (an interface's NAPI
//!          kernel threads)
//! netns    named network namespaces, for tests and test beds (root and iproute2)
//! ```
//!
//! ## The ports
//!
//! A [`Port`] is one packet socket bound to one interface, with two rings mapped into
//! this process:
//!
//! - **receive**: a ring the kernel copies each frame into, read in place by
//!   [`Port::recv_batch`] with no system call and no copy. Two layouts
//!   ([`RingVersion`]):
//!   - TPACKET_V2 (the default): fixed slots, each handed over, and woken for, as its
//!     frame arrives. Under load one wakeup still brings every frame that came
//!     meanwhile.
//!   - TPACKET_V3: frames packed into blocks, a block handed over when full or when
//!     its retire timer fires (1 ms at least), so a lone frame waits for the timer.
//!
//!   V2 is the default for its latency; V3 forwards a little more under overload.
//!   Port to port on veth pairs (the bench's `datapath_baselines` example, `--rings`: 9
//!   interleaved rounds on a shared 2-core machine): median latency 16-57 µs with V2
//!   against 260-980 µs with V3 at 1 and 20 kpps, the V3 retire timer's doing; 64-byte
//!   throughput under overload 98-160 kpps with V2 against 117-192 kpps with V3 (V3
//!   ahead in 6 rounds of 9, by 6-35%). A switch port adding half a millisecond per hop
//!   at low load would lose the issue's latency test to the Linux bridge (5-8 µs);
//!   choose V3 where only throughput counts.
//!
//! - **transmit** ([`TxMethod`]): [`Port::send`] copies the frame into a batch,
//!   [`Port::flush`] hands the batch to the kernel in one system call:
//!   - `sendmmsg(2)` (the default): a fixed buffer of slots with their `mmsghdr`s and
//!     `iovec`s built once at open.
//!   - a transmit ring (of the receive ring's version): shared slots, one `send(2)`
//!     per flush, the kernel's skbs built over the ring's pages.
//!
//!   `sendmmsg` is the default because it was faster on veth: 435-575 against
//!   380-400 kframes/s at 64 bytes, 400-406 against 350-420 at 1518, one thread, 64
//!   frames per flush, interleaved (`datapath_baselines -- 1 --tx`, shared machine).
//!   The ring saves a copy but hands the receiver an skb whose payload is in page
//!   fragments, which a veth peer's stack then pulls; and a ring slot stays taken
//!   until the receiver frees the skb.
//!
//! The socket also sets `PACKET_IGNORE_OUTGOING` (a port does not read back the frames
//! it sends, nor any other frame leaving the interface), `PACKET_QDISC_BYPASS` (frames go
//! straight to the driver: a switch port has no use for a queueing discipline, and veth
//! has none by default), `PACKET_LOSS` (a malformed ring slot is skipped, not a stuck
//! ring),
//! and joins `PACKET_MR_PROMISC`, which the kernel undoes when the socket closes.
//!
//! The kernel takes an 802.1Q tag off a received frame before packet sockets see it
//! (it is in the ring's header instead); [`Port::recv_batch`] puts it back in place, so
//! the switch sees the frame as it was on the wire.
//!
//! ## Offloads
//!
//! Frames a local stack sends through a veth carry only a partial TCP/UDP checksum
//! (checksum offload: the kernel flags them `TP_STATUS_CSUMNOTREADY`): the port
//! completes the checksum in place before the switch sees the frame, as a NIC would.
//! A stack may also hand a veth one large TCP segment (TSO/GSO, up to 64 KiB): it
//! cannot leave through another port, and is counted in `tx_errors` there. Turn
//! segmentation offloads off on the hosts' interfaces (`ethtool -K <if> tso off gso
//! off`), as with Open vSwitch's userspace data path. Frames larger than the receive
//! ring holds are counted in `rx_errors` and skipped.
//!
//! ## Readiness
//!
//! The descriptor ([`AsRawFd`](std::os::fd::AsRawFd)) becomes readable when the kernel hands a frame (V2) or
//! a block (V3) over. With an edge-triggered poller (mio), keep calling
//! [`Port::recv_batch`] while it returns `max` (or while [`Port::rx_ready`] is true):
//! no new wakeup comes for frames already handed over. When the interface goes down the
//! kernel also flags an error on the socket (an error event in mio, every wakeup until
//! cleared): [`Port::take_error`] clears it; [`Port::link_up`] says whether the link
//! is up.
//!
//! ```no_run
//! use std::os::fd::AsRawFd;
//!
//! use afpacket::{wait_readable, Port};
//!
//! # fn main() -> std::io::Result<()> {
//! // A two-port wire: every frame read on one port leaves by the other. (With mio,
//! // register `SourceFd(&p1.as_raw_fd())`, which needs mio's `os-ext` feature.)
//! let mut p1 = Port::open("veth1")?;
//! let mut p2 = Port::open("veth2")?;
//! loop {
//!     wait_readable(p1.as_raw_fd(), 100);
//!     // As if edge-triggered: read until a batch comes back short.
//!     while p1.recv_batch(256, |frame| {
//!         p2.send(frame);
//!     }) == 256
//!     {}
//!     p2.flush()?;
//! }
//! # }
//! ```

mod among;
mod csum;
pub mod iface;
mod mmsg;
pub mod netns;
mod port;
mod ring;
pub mod sys;
mod threads;

pub use among::{recv_batch_among, Outputs};
pub use port::{Port, PortConfig, PortCounters, RingVersion, TxMethod};
pub use ring::RxMeta;
pub use sys::{realtime_ns, wait_readable};
pub use threads::{napi_threads, Sched};

#[cfg(test)]
mod tests;
