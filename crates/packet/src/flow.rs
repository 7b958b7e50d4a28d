//! One pass over a whole frame: every header field an OpenFlow match can use.
//!
//! [`FlowKey::extract`] reads Ethernet, the VLAN tags, then ARP, IPv4 (options
//! skipped), IPv6 (extension headers walked) or MPLS, then TCP, UDP, SCTP, ICMP or
//! ICMPv6 (with the neighbor discovery target and link-layer addresses). It never
//! panics and never allocates. It fails only when the Ethernet header itself is cut
//! short; a later layer that is cut short or malformed leaves its fields (and those
//! of the layers above it) unset, and [`FlowKey::error`] says which layer and where.
//!
//! Frames a switch truncated (PACKET_IN's `miss_send_len`, 128 bytes by default) are
//! the normal case: IP payloads are read as far as they go (no more than the IP
//! length, so Ethernet padding is never mistaken for payload), and transport fields
//! need only their fixed header: 20 bytes of TCP (options not needed), 8 of UDP, 12
//! of SCTP, 4 of ICMP and ICMPv6 (24 for a neighbor solicitation or advertisement's
//! target).

use std::net::{Ipv4Addr, Ipv6Addr};

use openflow::MacAddr;

use crate::arp::{ArpPacket, ArpRepr};
use crate::error::{Error, Result};
use crate::ethernet::{EtherType, EthernetFrame};
use crate::icmpv6::{Icmpv6Packet, Icmpv6Type, NdOptionType};
use crate::ip::IpProtocol;
use crate::ipv4::Ipv4Packet;
use crate::ipv6::Ipv6Packet;
use crate::ipv6ext::Ipv6ExtHeaders;
use crate::macros::be16;
use crate::mpls::MplsEntry;
use crate::tcp::TcpPacket;

/// The outermost VLAN tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VlanKey {
    /// The TPID that introduced it (0x8100, 0x88a8 or 0x9100).
    pub tpid: u16,
    /// 12 bits.
    pub vid: u16,
    /// 3 bits.
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
}

/// The top MPLS label stack entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MplsKey {
    /// 20 bits.
    pub label: u32,
    /// 3 bits.
    pub tc: u8,
    /// Bottom of stack.
    pub bos: bool,
    /// Time to live.
    pub ttl: u8,
}

/// An Ethernet/IPv4 ARP packet's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArpKey {
    /// The ARP opcode.
    pub op: u16,
    /// Sender protocol address.
    pub spa: Ipv4Addr,
    /// Target protocol address.
    pub tpa: Ipv4Addr,
    /// Sender hardware address.
    pub sha: MacAddr,
    /// Target hardware address.
    pub tha: MacAddr,
}

/// Whether the IP packet is a fragment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IpFrag {
    /// Not a fragment.
    #[default]
    No,
    /// The first fragment: the transport header is here.
    First,
    /// A later fragment: no transport header.
    Later,
}

/// What IPv4 and IPv6 share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpKey {
    /// The IPv4 protocol, or the IPv6 upper-layer protocol after the extension
    /// headers (ESP and "no next header" included).
    pub proto: u8,
    /// 6 bits.
    pub dscp: u8,
    /// 2 bits.
    pub ecn: u8,
    /// TTL or hop limit.
    pub ttl: u8,
    /// Fragment status.
    pub frag: IpFrag,
}

/// IPv4 addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Key {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
}

/// IPv6 addresses, flow label and extension-header bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv6Key {
    /// Source address.
    pub src: Ipv6Addr,
    /// Destination address.
    pub dst: Ipv6Addr,
    /// 20 bits.
    pub flow_label: u32,
    /// OpenFlow's `IPV6_EXTHDR` bits ([`crate::ipv6ext::exthdr`]); 0 until the
    /// extension headers have been walked.
    pub exthdr: u16,
}

/// The transport header's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum L4Key {
    /// TCP ports and flags.
    Tcp {
        /// Source port.
        src: u16,
        /// Destination port.
        dst: u16,
        /// The 12 flag bits ([`crate::tcp::TcpFlags`]).
        flags: u16,
    },
    /// UDP ports.
    Udp {
        /// Source port.
        src: u16,
        /// Destination port.
        dst: u16,
    },
    /// SCTP ports.
    Sctp {
        /// Source port.
        src: u16,
        /// Destination port.
        dst: u16,
    },
    /// ICMP type and code.
    Icmpv4 {
        /// Message type.
        icmp_type: u8,
        /// Message code.
        code: u8,
    },
    /// ICMPv6 type and code.
    Icmpv6 {
        /// Message type.
        icmp_type: u8,
        /// Message code.
        code: u8,
    },
}

/// IPv6 neighbor discovery fields (solicitations and advertisements with code 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NdKey {
    /// The target address.
    pub target: Ipv6Addr,
    /// A solicitation's source link-layer address option.
    pub sll: Option<MacAddr>,
    /// An advertisement's target link-layer address option.
    pub tll: Option<MacAddr>,
}

/// Every field of a frame an OpenFlow 1.0 or 1.3 match can use. `None` means the
/// layer is absent, or was cut short or malformed (then [`error`](Self::error) says so).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FlowKey {
    /// Ethernet destination address.
    pub eth_dst: MacAddr,
    /// Ethernet source address.
    pub eth_src: MacAddr,
    /// The EtherType after the VLAN tags (values below 0x0600 are 802.3 lengths, kept
    /// as they are). If a tag is cut short, the TPID that announced it.
    pub eth_type: u16,
    /// The outermost VLAN tag.
    pub vlan: Option<VlanKey>,
    /// How many VLAN tags were read.
    pub vlan_depth: u8,
    /// The top MPLS label stack entry.
    pub mpls: Option<MplsKey>,
    /// ARP fields (Ethernet/IPv4 ARP only).
    pub arp: Option<ArpKey>,
    /// Fields IPv4 and IPv6 share.
    pub ip: Option<IpKey>,
    /// IPv4 addresses.
    pub ipv4: Option<Ipv4Key>,
    /// IPv6 addresses, flow label and extension-header bits.
    pub ipv6: Option<Ipv6Key>,
    /// Transport fields.
    pub l4: Option<L4Key>,
    /// Neighbor discovery fields.
    pub nd: Option<NdKey>,
    /// Offset of the header after the VLAN tags (ARP, IP, MPLS).
    pub l3_offset: usize,
    /// Offset of the transport header, when there is one.
    pub l4_offset: Option<usize>,
    /// The first layer that was cut short or malformed, with its offset in the frame.
    pub error: Option<Error>,
}

impl FlowKey {
    /// Reads every header of `frame` (an Ethernet frame without FCS). Fails only when
    /// the 14-byte Ethernet header is not all there.
    pub fn extract(frame: &[u8]) -> Result<FlowKey> {
        let eth = EthernetFrame::new_checked(frame)?;
        let mut key = FlowKey {
            eth_dst: eth.dst_addr(),
            eth_src: eth.src_addr(),
            eth_type: eth.ethertype_raw(),
            ..FlowKey::default()
        };
        let mut tags = eth.vlan_tags();
        for t in tags.by_ref() {
            match t {
                Ok(t) => {
                    if key.vlan.is_none() {
                        key.vlan = Some(VlanKey {
                            tpid: t.tpid.to_raw(),
                            vid: t.tag.vid(),
                            pcp: t.tag.pcp(),
                            dei: t.tag.dei(),
                        });
                    }
                    key.vlan_depth += 1;
                }
                Err(e) => {
                    key.eth_type = tags.ethertype().to_raw();
                    key.error = Some(e);
                    return Ok(key);
                }
            }
        }
        key.eth_type = tags.ethertype().to_raw();
        key.l3_offset = tags.offset();
        let l3 = tags.payload();
        let r = match tags.ethertype() {
            EtherType::Arp => key.read_arp(l3),
            EtherType::Ipv4 => key.read_ipv4(l3),
            EtherType::Ipv6 => key.read_ipv6(l3),
            EtherType::Mpls | EtherType::MplsMulticast => key.read_mpls(l3),
            _ => Ok(()),
        };
        if let Err(e) = r {
            key.error = Some(e);
        }
        Ok(key)
    }

    fn read_arp(&mut self, l3: &[u8]) -> Result<()> {
        let r = ArpPacket::new_checked(l3)
            .and_then(|p| ArpRepr::parse(&p))
            .map_err(|e| e.at(self.l3_offset))?;
        self.arp = Some(ArpKey {
            op: r.operation.to_raw(),
            spa: r.source_protocol_addr,
            tpa: r.target_protocol_addr,
            sha: r.source_hardware_addr,
            tha: r.target_hardware_addr,
        });
        Ok(())
    }

    fn read_mpls(&mut self, l3: &[u8]) -> Result<()> {
        let e = MplsEntry::new_checked(l3).map_err(|e| e.at(self.l3_offset))?;
        self.mpls = Some(MplsKey {
            label: e.label(),
            tc: e.tc(),
            bos: e.bos(),
            ttl: e.ttl(),
        });
        Ok(())
    }

    fn read_ipv4(&mut self, l3: &[u8]) -> Result<()> {
        let base = self.l3_offset;
        let p = Ipv4Packet::new_unchecked(l3);
        p.check_header().map_err(|e| e.at(base))?;
        if p.version() != 4 {
            return Err(bad_version("ipv4", base, p.version(), "must be 4"));
        }
        let frag = match (p.is_fragment(), p.frag_offset()) {
            (false, _) => IpFrag::No,
            (true, 0) => IpFrag::First,
            (true, _) => IpFrag::Later,
        };
        self.ipv4 = Some(Ipv4Key {
            src: p.src_addr(),
            dst: p.dst_addr(),
        });
        self.ip = Some(IpKey {
            proto: p.protocol().to_raw(),
            dscp: p.dscp(),
            ecn: p.ecn(),
            ttl: p.ttl(),
            frag,
        });
        if frag == IpFrag::Later {
            return Ok(());
        }
        let full = usize::from(p.total_len()).saturating_sub(p.header_len());
        self.read_l4(
            p.protocol(),
            p.payload_available(),
            full,
            base + p.header_len(),
        )
    }

    fn read_ipv6(&mut self, l3: &[u8]) -> Result<()> {
        let base = self.l3_offset;
        let p = Ipv6Packet::new_unchecked(l3);
        p.check_header().map_err(|e| e.at(base))?;
        if p.version() != 6 {
            return Err(bad_version("ipv6", base, p.version(), "must be 6"));
        }
        let mut v6 = Ipv6Key {
            src: p.src_addr(),
            dst: p.dst_addr(),
            flow_label: p.flow_label(),
            exthdr: 0,
        };
        self.ipv6 = Some(v6);
        let payload = p.payload_available();
        let up = Ipv6ExtHeaders::new(p.next_header(), payload, 0)
            .walk()
            .map_err(|e| e.at(base + crate::ipv6::HEADER_LEN))?;
        v6.exthdr = up.exthdr;
        self.ipv6 = Some(v6);
        let frag = match up.fragment {
            None => IpFrag::No,
            Some(f) if f.is_first() => IpFrag::First,
            Some(_) => IpFrag::Later,
        };
        self.ip = Some(IpKey {
            proto: up.protocol.to_raw(),
            dscp: p.dscp(),
            ecn: p.ecn(),
            ttl: p.hop_limit(),
            frag,
        });
        if !up.has_header() {
            return Ok(());
        }
        // `up.offset` is within `payload`, which the walk never reads past.
        let l4 = payload.get(up.offset..).unwrap_or(&[]);
        let full = usize::from(p.payload_len()).saturating_sub(up.offset);
        self.read_l4(
            up.protocol,
            l4,
            full,
            base + crate::ipv6::HEADER_LEN + up.offset,
        )
    }

    /// Reads the transport header in `b`, the bytes present of a transport packet of
    /// `full` bytes at `offset`.
    fn read_l4(&mut self, proto: IpProtocol, b: &[u8], full: usize, offset: usize) -> Result<()> {
        let need = |layer, n: usize| {
            if b.len() < n {
                Err(Error::Truncated {
                    layer,
                    offset,
                    needed: n,
                    available: b.len(),
                })
            } else {
                Ok(())
            }
        };
        let key = match proto {
            IpProtocol::Tcp => {
                need("tcp", crate::tcp::HEADER_LEN)?;
                let t = TcpPacket::new_unchecked(b);
                L4Key::Tcp {
                    src: t.src_port(),
                    dst: t.dst_port(),
                    flags: t.flags().0,
                }
            }
            IpProtocol::Udp => {
                need("udp", crate::udp::HEADER_LEN)?;
                L4Key::Udp {
                    src: be16(b, 0),
                    dst: be16(b, 2),
                }
            }
            IpProtocol::Sctp => {
                need("sctp", crate::sctp::HEADER_LEN)?;
                L4Key::Sctp {
                    src: be16(b, 0),
                    dst: be16(b, 2),
                }
            }
            IpProtocol::Icmp if self.ipv4.is_some() => {
                need("icmp", 4)?;
                L4Key::Icmpv4 {
                    icmp_type: b[0],
                    code: b[1],
                }
            }
            IpProtocol::Icmpv6 if self.ipv6.is_some() => {
                need("icmpv6", 4)?;
                self.l4 = Some(L4Key::Icmpv6 {
                    icmp_type: b[0],
                    code: b[1],
                });
                self.l4_offset = Some(offset);
                return self.read_nd(b, full, offset);
            }
            _ => return Ok(()),
        };
        self.l4 = Some(key);
        self.l4_offset = Some(offset);
        Ok(())
    }

    /// Neighbor discovery fields, as Open vSwitch reads them: code 0 solicitations
    /// and advertisements; the first link-layer address option of the kind the type
    /// sends; options not walked past an error.
    fn read_nd(&mut self, b: &[u8], full: usize, offset: usize) -> Result<()> {
        let t = Icmpv6Type::from_raw(b[0]);
        if b[1] != 0 || !matches!(t, Icmpv6Type::NeighborSolicit | Icmpv6Type::NeighborAdvert) {
            return Ok(());
        }
        let p = Icmpv6Packet::new_checked(b).map_err(|e| e.at(offset))?;
        let mut nd = NdKey {
            target: p.nd_target().unwrap_or(Ipv6Addr::UNSPECIFIED),
            sll: None,
            tll: None,
        };
        let mut result = Ok(());
        for o in p.nd_options() {
            match o {
                Ok(o) if o.data.len() == 6 => match (t, o.kind) {
                    (Icmpv6Type::NeighborSolicit, NdOptionType::SourceLinkLayerAddr) => {
                        nd.sll = nd.sll.or(o.link_layer_addr());
                    }
                    (Icmpv6Type::NeighborAdvert, NdOptionType::TargetLinkLayerAddr) => {
                        nd.tll = nd.tll.or(o.link_layer_addr());
                    }
                    _ => {}
                },
                Ok(_) => {}
                Err(e) => {
                    result = Err(e.at(offset));
                    break;
                }
            }
        }
        self.nd = Some(nd);
        // Options cut off by a truncated capture may have held a link-layer address
        // (and an option cut in the middle is the capture's doing, not the sender's).
        if b.len() < full {
            result = Err(Error::Truncated {
                layer: "icmpv6",
                offset,
                needed: full,
                available: b.len(),
            });
        }
        result
    }

    /// The transport source port (TCP, UDP, SCTP).
    pub fn tp_src(&self) -> Option<u16> {
        match self.l4? {
            L4Key::Tcp { src, .. } | L4Key::Udp { src, .. } | L4Key::Sctp { src, .. } => Some(src),
            _ => None,
        }
    }

    /// The transport destination port (TCP, UDP, SCTP).
    pub fn tp_dst(&self) -> Option<u16> {
        match self.l4? {
            L4Key::Tcp { dst, .. } | L4Key::Udp { dst, .. } | L4Key::Sctp { dst, .. } => Some(dst),
            _ => None,
        }
    }
}

fn bad_version(layer: &'static str, offset: usize, version: u8, reason: &'static str) -> Error {
    Error::BadValue {
        layer,
        field: "version",
        offset,
        value: version.into(),
        reason,
    }
}

#[cfg(test)]
#[path = "flow_tests.rs"]
mod tests;
