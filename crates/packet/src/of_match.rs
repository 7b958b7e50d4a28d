//! A frame as an exact OpenFlow match: [`of10_match`] for OpenFlow 1.0's fixed
//! 12-tuple, [`oxm_match`] for 1.3's OXM list. Both go through [`FlowKey`], so they
//! read any bytes without panicking; fields the frame does not have, or that were cut
//! short, are left out (wildcarded in 1.0).

use openflow::of10::flow_match::{
    OFPFW_ALL, OFPFW_DL_DST, OFPFW_DL_SRC, OFPFW_DL_TYPE, OFPFW_DL_VLAN, OFPFW_DL_VLAN_PCP,
    OFPFW_IN_PORT, OFPFW_NW_DST_MASK, OFPFW_NW_PROTO, OFPFW_NW_SRC_MASK, OFPFW_NW_TOS,
    OFPFW_TP_DST, OFPFW_TP_SRC, OFP_VLAN_NONE,
};
use openflow::of13::oxm::{OFPVID_NONE, OFPVID_PRESENT};
use openflow::of13::{Oxm, OxmField};
use openflow::{of10, of13, MacAddr};

use crate::flow::{FlowKey, L4Key};

/// The `dl_type` OpenFlow 1.0 gives 802.3 frames (a length where the EtherType goes):
/// `OFP_DL_TYPE_NOT_ETH_TYPE` (spec 1.0.0 §5.2.3). LLC/SNAP is not parsed, so every
/// such frame gets it. The OXM match uses the same value, as Open vSwitch does.
pub const DL_TYPE_NOT_ETH_TYPE: u16 = 0x05ff;

/// The EtherType OpenFlow matches on.
fn dl_type(key: &FlowKey) -> u16 {
    if key.eth_type < 0x0600 {
        DL_TYPE_NOT_ETH_TYPE
    } else {
        key.eth_type
    }
}

/// The OpenFlow 1.0 match that matches exactly this frame arriving on `in_port`
/// (spec 1.0.0 §5.2.3, as Open vSwitch and POX build one from a packet):
///
/// * `in_port`, `dl_src`, `dl_dst`, `dl_type` (the EtherType after the VLAN tags;
///   0x05ff for 802.3 frames) always;
/// * `dl_vlan` the outer tag's id, or `OFP_VLAN_NONE` for an untagged frame, whose
///   `dl_vlan_pcp` is then wildcarded;
/// * IPv4: `nw_tos` (the DSCP in its high 6 bits), `nw_proto`, `nw_src`, `nw_dst`
///   exact (prefix 32); TCP and UDP ports, or the ICMP type and code in `tp_src` and
///   `tp_dst`; the transport fields are wildcarded for other protocols and for
///   fragments after the first;
/// * ARP: the low 8 bits of the opcode in `nw_proto`, the sender and target protocol
///   addresses in `nw_src` and `nw_dst`;
/// * everything else (IPv6, MPLS, LLDP, ...) wildcards the `nw_` and `tp_` fields.
///
/// Fields a truncated or malformed frame does not reach are wildcarded. A frame
/// shorter than an Ethernet header gives a match on `in_port` alone.
pub fn of10_match(frame: &[u8], in_port: u16) -> of10::Match {
    let mut m = of10::Match {
        in_port,
        wildcards: OFPFW_ALL & !OFPFW_IN_PORT,
        ..of10::Match::all()
    };
    let Ok(key) = FlowKey::extract(frame) else {
        return m;
    };
    let mut exact = OFPFW_DL_SRC | OFPFW_DL_DST | OFPFW_DL_TYPE | OFPFW_DL_VLAN;
    m.dl_src = key.eth_src;
    m.dl_dst = key.eth_dst;
    m.dl_type = dl_type(&key);
    match key.vlan {
        Some(v) => {
            m.dl_vlan = v.vid;
            m.dl_vlan_pcp = v.pcp;
            exact |= OFPFW_DL_VLAN_PCP;
        }
        None => m.dl_vlan = OFP_VLAN_NONE,
    }
    if let (Some(ip), Some(v4)) = (key.ip, key.ipv4) {
        m.nw_tos = ip.dscp << 2;
        m.nw_proto = ip.proto;
        m.nw_src = v4.src;
        m.nw_dst = v4.dst;
        exact |= OFPFW_NW_TOS | OFPFW_NW_PROTO | OFPFW_NW_SRC_MASK | OFPFW_NW_DST_MASK;
        let ports = match key.l4 {
            Some(L4Key::Tcp { src, dst, .. } | L4Key::Udp { src, dst }) => Some((src, dst)),
            Some(L4Key::Icmpv4 { icmp_type, code }) => Some((icmp_type.into(), code.into())),
            _ => None,
        };
        if let Some((src, dst)) = ports {
            m.tp_src = src;
            m.tp_dst = dst;
            exact |= OFPFW_TP_SRC | OFPFW_TP_DST;
        }
    } else if let Some(arp) = key.arp {
        m.nw_proto = arp.op as u8;
        m.nw_src = arp.spa;
        m.nw_dst = arp.tpa;
        exact |= OFPFW_NW_PROTO | OFPFW_NW_SRC_MASK | OFPFW_NW_DST_MASK;
    }
    m.wildcards &= !exact;
    m
}

/// The OpenFlow 1.3 OXM match that matches exactly this frame arriving on `in_port`,
/// with every field whose prerequisites (spec 1.3.5 §7.2.3.6, Table 12) the frame
/// meets, in field-id order (so each prerequisite comes before the fields that need
/// it):
///
/// * `IN_PORT`, `ETH_DST`, `ETH_SRC`, `ETH_TYPE` (after the VLAN tags; 0x05ff for
///   802.3 frames) always; `VLAN_VID` always (`OFPVID_PRESENT | vid` or
///   `OFPVID_NONE`), `VLAN_PCP` only for a tagged frame;
/// * IPv4 and IPv6: `IP_DSCP`, `IP_ECN`, `IP_PROTO`; `IPV4_SRC`/`DST`, or
///   `IPV6_SRC`/`DST`/`FLABEL`;
/// * `TCP_`, `UDP_`, `SCTP_` ports, `ICMPV4_`/`ICMPV6_` type and code, when the
///   transport header is there (not in fragments after the first);
/// * `IPV6_ND_TARGET` for neighbor solicitations and advertisements,
///   `IPV6_ND_SLL` / `IPV6_ND_TLL` when they carry the option;
/// * ARP: `ARP_OP`, `ARP_SPA`, `ARP_TPA`, `ARP_SHA`, `ARP_THA`;
/// * MPLS: `MPLS_LABEL`, `MPLS_TC`, `MPLS_BOS` of the top entry.
///
/// `IPV6_EXTHDR` is left out: Open vSwitch and most switches reject it, and
/// [`FlowKey::ipv6`]'s `exthdr` has the bits for a caller who wants them. A frame
/// shorter than an Ethernet header gives a match on `IN_PORT` alone.
pub fn oxm_match(frame: &[u8], in_port: u32) -> of13::oxm::Match {
    let mut f: Vec<Oxm> = Vec::with_capacity(16);
    let int = |field, v: u64| Oxm::basic(field, v);
    f.push(int(OxmField::InPort, in_port.into()));
    let Ok(key) = FlowKey::extract(frame) else {
        return of13::oxm::Match::new(f);
    };
    f.push(Oxm::basic(OxmField::EthDst, key.eth_dst));
    f.push(Oxm::basic(OxmField::EthSrc, key.eth_src));
    f.push(int(OxmField::EthType, dl_type(&key).into()));
    match key.vlan {
        Some(v) => {
            f.push(int(OxmField::VlanVid, u64::from(OFPVID_PRESENT | v.vid)));
            f.push(int(OxmField::VlanPcp, v.pcp.into()));
        }
        None => f.push(int(OxmField::VlanVid, OFPVID_NONE.into())),
    }
    if let Some(ip) = key.ip {
        f.push(int(OxmField::IpDscp, ip.dscp.into()));
        f.push(int(OxmField::IpEcn, ip.ecn.into()));
        f.push(int(OxmField::IpProto, ip.proto.into()));
    }
    if let Some(v4) = key.ipv4 {
        f.push(Oxm::basic(OxmField::Ipv4Src, v4.src));
        f.push(Oxm::basic(OxmField::Ipv4Dst, v4.dst));
    }
    // IP_PROTO is the prerequisite of every transport field: only with `ip` set.
    if key.ip.is_some() {
        let ports = |f: &mut Vec<Oxm>, (s, d): (OxmField, OxmField), src: u16, dst: u16| {
            f.push(int(s, src.into()));
            f.push(int(d, dst.into()));
        };
        match key.l4 {
            Some(L4Key::Tcp { src, dst, .. }) => {
                ports(&mut f, (OxmField::TcpSrc, OxmField::TcpDst), src, dst)
            }
            Some(L4Key::Udp { src, dst }) => {
                ports(&mut f, (OxmField::UdpSrc, OxmField::UdpDst), src, dst)
            }
            Some(L4Key::Sctp { src, dst }) => {
                ports(&mut f, (OxmField::SctpSrc, OxmField::SctpDst), src, dst)
            }
            Some(L4Key::Icmpv4 { icmp_type, code }) => {
                f.push(int(OxmField::Icmpv4Type, icmp_type.into()));
                f.push(int(OxmField::Icmpv4Code, code.into()));
            }
            _ => {}
        }
    }
    if let Some(arp) = key.arp {
        f.push(int(OxmField::ArpOp, arp.op.into()));
        f.push(Oxm::basic(OxmField::ArpSpa, arp.spa));
        f.push(Oxm::basic(OxmField::ArpTpa, arp.tpa));
        f.push(Oxm::basic(OxmField::ArpSha, arp.sha));
        f.push(Oxm::basic(OxmField::ArpTha, arp.tha));
    }
    if let Some(v6) = key.ipv6 {
        f.push(Oxm::basic(OxmField::Ipv6Src, v6.src));
        f.push(Oxm::basic(OxmField::Ipv6Dst, v6.dst));
        f.push(int(OxmField::Ipv6Flabel, v6.flow_label.into()));
    }
    if let (Some(_), Some(L4Key::Icmpv6 { icmp_type, code })) = (key.ip, key.l4) {
        f.push(int(OxmField::Icmpv6Type, icmp_type.into()));
        f.push(int(OxmField::Icmpv6Code, code.into()));
        if let Some(nd) = key.nd {
            f.push(Oxm::basic(OxmField::Ipv6NdTarget, nd.target));
            let ll = |f: &mut Vec<Oxm>, field, a: Option<MacAddr>| {
                if let Some(a) = a {
                    f.push(Oxm::basic(field, a));
                }
            };
            ll(&mut f, OxmField::Ipv6NdSll, nd.sll);
            ll(&mut f, OxmField::Ipv6NdTll, nd.tll);
        }
    }
    if let Some(mpls) = key.mpls {
        f.push(int(OxmField::MplsLabel, mpls.label.into()));
        f.push(int(OxmField::MplsTc, mpls.tc.into()));
        f.push(int(OxmField::MplsBos, mpls.bos.into()));
    }
    of13::oxm::Match::new(f)
}

#[cfg(test)]
#[path = "of_match_tests.rs"]
mod tests;
