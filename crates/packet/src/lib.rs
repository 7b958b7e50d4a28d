//! # pharos-packet: zero-copy packet views, builders, and OpenFlow flow keys
//!
//! What a controller needs from the frames it sees in PACKET_IN and sends in
//! PACKET_OUT: read the headers without copying, build frames (ARP replies, LLDP
//! probes, ICMP errors), and turn a frame into the fields an OpenFlow match holds.
//!
//! ## Layout
//!
//! ```text
//! error      Error (parse: layer, offset, what was needed, what was there), EmitError
//! checksum   the Internet checksum, IPv4/IPv6 pseudo-headers
//! ethernet   Ethernet II: EthernetFrame view, EthernetRepr, EtherType
//! vlan       802.1Q/802.1ad tags, stacked (TPIDs 0x8100, 0x88a8, 0x9100): VlanTag, VlanRepr, VlanTags walker
//! mpls       MPLS label stack entries: MplsEntry, MplsRepr
//! arp        ARP: ArpPacket (any sizes), ArpRepr (Ethernet/IPv4)
//! ip         IpProtocol
//! ipv4       IPv4 with options, header checksum: Ipv4Packet, Ipv4Repr
//! ipv6       IPv6 fixed header: Ipv6Packet, Ipv6Repr
//! ipv6ext    IPv6 extension headers: Ipv6ExtHeader, the bounded Ipv6ExtHeaders walker,
//!            UpperLayer, Ipv6ExtHeaderRepr, Ipv6FragmentRepr, the IPV6_EXTHDR bits
//! icmpv4     ICMP: Icmpv4Packet, Icmpv4Repr
//! icmpv6     ICMPv6 and neighbor discovery: Icmpv6Packet, NdOptions, Icmpv6Repr
//! tcp        TCP: TcpPacket, TcpOptions walker, TcpRepr
//! udp        UDP: UdpPacket, UdpRepr
//! sctp       SCTP common header: SctpPacket (ports only)
//! lldp       LLDP: LldpTlvs walker, validated LldpPdu view, LldpRepr builder
//! flow       FlowKey: one pass over a frame, every field an OpenFlow match can use
//! of_match   of10_match and oxm_match: a frame as an exact OpenFlow 1.0 / 1.3 match
//! ```
//!
//! ## Views and reprs
//!
//! Each protocol has, as smoltcp's `wire` module does:
//!
//! * a **view** `Foo<T: AsRef<[u8]>>` over a buffer: `new_unchecked`, `new_checked`
//!   (which validates every length once), getters through `AsRef`, setters through
//!   `AsMut`, and its byte layout in a private `mod field` of ranges. Views copy
//!   nothing: `EthernetFrame::src_addr` reads 6 bytes and returns them, and that is
//!   the whole cost. The hot path uses views and [`FlowKey`].
//! * a **repr** `FooRepr`, owned (borrowing payloads and strings from the buffer it was
//!   parsed from), with `parse`, `buffer_len` and `emit(&self, buf: &mut [u8])`.
//!   Emitting writes `buffer_len()` bytes and returns that number; a buffer too short
//!   or a value too wide for its field is an [`EmitError`], never a panic or a silent
//!   truncation. Header-only reprs (Ethernet, VLAN, IPv4, IPv6, extension headers,
//!   MPLS) leave the payload to the caller; the others write the whole message and
//!   compute its checksum (TCP, UDP and ICMPv6 over the pseudo-header given).
//!
//! Parsing and emitting are inverse: for every repr, `parse(emit(r)) == r` (property
//! tested). Reprs do not keep checksums: `emit` computes them, and views have
//! `verify_checksum`.
//!
//! A frame is built layer by layer into one buffer, outside in:
//!
//! ```
//! use packet::ethernet::{EtherType, EthernetRepr};
//! use packet::arp::{ArpOperation, ArpRepr};
//! use openflow::MacAddr;
//!
//! let eth = EthernetRepr {
//!     dst_addr: MacAddr::BROADCAST,
//!     src_addr: MacAddr([0, 0, 0x5e, 0, 0x53, 1]),
//!     ethertype: EtherType::Arp,
//! };
//! let arp = ArpRepr {
//!     operation: ArpOperation::Request,
//!     source_hardware_addr: eth.src_addr,
//!     source_protocol_addr: [192, 0, 2, 1].into(),
//!     target_hardware_addr: MacAddr::ZERO,
//!     target_protocol_addr: [192, 0, 2, 2].into(),
//! };
//! let mut frame = vec![0u8; eth.buffer_len() + arp.buffer_len()];
//! let n = eth.emit(&mut frame)?;
//! arp.emit(&mut frame[n..])?;
//! let key = packet::FlowKey::extract(&frame)?;
//! assert_eq!(key.arp.unwrap().tpa, std::net::Ipv4Addr::new(192, 0, 2, 2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## What is supported, and what is not
//!
//! * Ethernet II; 802.3 frames (a length where the EtherType goes) are read as an
//!   unknown EtherType, LLC/SNAP is not parsed. No FCS.
//! * VLAN stacks up to [`vlan::MAX_VLAN_TAGS`] deep with any mix of the three TPIDs.
//! * MPLS: label stack entries; what is under the stack is not guessed at.
//! * ARP: the view reads any address sizes; reprs and flow keys are Ethernet/IPv4.
//! * IPv4: options are kept as bytes, not interpreted. Fragments are recognised;
//!   reassembly is not done.
//! * IPv6: hop-by-hop, routing, fragment, destination options and AH headers are
//!   walked (at most [`ipv6ext::MAX_EXT_HEADERS`]); ESP ends the walk. Jumbograms are
//!   not supported.
//! * ICMPv6: echo, neighbor solicitation and advertisement are typed, with their
//!   link-layer address options; other messages (router discovery, redirects, MLD,
//!   errors) are read through the generic view and kept as bytes in reprs.
//! * TCP options are walked and kept as bytes (MSS and window scale have helpers).
//! * SCTP: the common header only; chunks and the CRC32c are not handled.
//! * LLDP: all TLV framing and the 802.1AB length rules; chassis and port id,
//!   TTL, port description, system name and description, organisation-specific TLVs
//!   are typed; the others (capabilities, management address, unknown) kept as bytes.
//! * Not supported: IPv4 options by kind, IGMP, GRE and other tunnels, PBB, VXLAN,
//!   Geneve, 802.11, checksum offload shortcuts.
//!
//! ## The panic contract
//!
//! Nothing in this crate panics on any input bytes once a view has been made with
//! `new_checked` (or its `check_len` has passed): every getter of a checked view reads
//! only what was validated, and every walker (VLAN tags, IPv6 extension headers and
//! options, TCP options, ND options, LLDP TLVs) bounds-checks each step and reports a
//! bad length as an [`Error`]. [`FlowKey::extract`] and the match extractors take any
//! bytes at all. Only views built with `new_unchecked` can panic, in their getters,
//! when the buffer is too short; their docs say so. Emitting never panics.
//! Nothing on the parse path allocates except [`lldp::LldpRepr::parse`], whose lists
//! of optional TLVs are `Vec`s.

#![warn(missing_docs)]

mod macros;

pub mod arp;
pub mod checksum;
pub mod error;
pub mod ethernet;
pub mod ethertype;
pub mod flow;
#[doc(hidden)]
pub mod fuzz;
pub mod icmpv4;
pub mod icmpv6;
pub mod ip;
pub mod ipv4;
pub mod ipv6;
pub mod ipv6ext;
pub mod lldp;
pub mod mpls;
pub mod of_match;
pub mod sctp;
pub mod tcp;
pub mod udp;
pub mod vlan;

pub use error::{EmitError, EmitResult, Error, Result};
pub use flow::FlowKey;
pub use of_match::{of10_match, oxm_match};

/// A byte range within a header, as the private `field` modules spell layouts.
type Field = core::ops::Range<usize>;

#[cfg(test)]
#[rustfmt::skip]
mod testdata;
