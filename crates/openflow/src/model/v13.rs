//! The OpenFlow 1.3 encoders of the model: the match as OXM TLVs (1.3 §7.2.3), the
//! actions, and the apply-actions instruction that carries them.

use super::action::Action;
use super::matching::{Match, Vlan};
use crate::error::{not_in, EncodeResult};
use crate::header::Version;
use crate::of13::action::ActionType as A13;
use crate::of13::instruction::InstructionType;
use crate::of13::oxm::OxmField;
use crate::wire::{pad_to, LenMark, Put};

/// `OFPVID_PRESENT`: set in an OXM VLAN_VID value when a tag is present.
const VID_PRESENT: u16 = 0x1000;

/// Writes one OpenFlow-basic OXM TLV: header then value (and mask when given).
#[inline]
fn oxm(out: &mut Vec<u8>, field: OxmField, value: &[u8], mask: Option<&[u8]>) {
    let has_mask = mask.is_some() as u8;
    let len = value.len() * (1 + has_mask as usize);
    out.put_u16(0x8000);
    out.put_u8(field.to_raw() << 1 | has_mask);
    out.put_u8(len as u8);
    out.put_slice(value);
    if let Some(m) = mask {
        out.put_slice(m);
    }
}

/// Writes `m` as an OXM `ofp_match`, padded to 8, or says which 1.3 prerequisite it
/// lacks. Inlined into [`super::FlowMod`]'s encoder, as it was when both were one file
/// (a call of its own costs the 1.3 FLOW_MOD; see the codec bench).
#[inline]
pub(super) fn emit_match_v13(m: &Match, out: &mut Vec<u8>) -> EncodeResult<()> {
    const V: Version = Version::V1_3;
    let start = out.len();
    out.put_u16(1); // OFPMT_OXM
    let len = LenMark::new(out, start, "ofp_match");
    if let Some(p) = m.in_port {
        oxm(out, OxmField::InPort, &p.to_be_bytes(), None);
    }
    if let Some(md) = m.metadata {
        oxm(out, OxmField::Metadata, &md.to_be_bytes(), None);
    }
    if let Some(a) = m.eth_dst {
        oxm(
            out,
            OxmField::EthDst,
            &a.0,
            m.eth_dst_mask.as_ref().map(|x| &x.0[..]),
        );
    } else if m.eth_dst_mask.is_some() {
        return Err(not_in(V, "an eth_dst mask without an eth_dst"));
    }
    if let Some(a) = m.eth_src {
        oxm(
            out,
            OxmField::EthSrc,
            &a.0,
            m.eth_src_mask.as_ref().map(|x| &x.0[..]),
        );
    } else if m.eth_src_mask.is_some() {
        return Err(not_in(V, "an eth_src mask without an eth_src"));
    }
    if let Some(t) = m.eth_type {
        oxm(out, OxmField::EthType, &t.to_be_bytes(), None);
    }
    match m.vlan {
        Some(Vlan::Untagged) => oxm(out, OxmField::VlanVid, &0u16.to_be_bytes(), None),
        Some(Vlan::Id(v)) => oxm(
            out,
            OxmField::VlanVid,
            &(VID_PRESENT | (v & 0x0fff)).to_be_bytes(),
            None,
        ),
        None => {}
    }
    if let Some(p) = m.vlan_pcp {
        // 1.3 §7.2.3.8: VLAN_PCP requires VLAN_VID != NONE.
        if !matches!(m.vlan, Some(Vlan::Id(_))) {
            return Err(not_in(V, "a vlan_pcp match without a VLAN id"));
        }
        oxm(out, OxmField::VlanPcp, &[p], None);
    }
    // §7.2.3.8 prerequisites: the IP fields need ETH_TYPE 0x0800 or 0x86dd, the ARP
    // fields 0x0806, and the transport fields an IP_PROTO saying which header.
    let is_ip = matches!(m.eth_type, Some(0x0800) | Some(0x86dd));
    let is_arp = m.eth_type == Some(0x0806);
    if let Some(d) = m.ip_dscp {
        if !is_ip {
            return Err(not_in(V, "an ip_dscp match without eth_type IPv4 or IPv6"));
        }
        oxm(out, OxmField::IpDscp, &[d], None);
    }
    if let Some(p) = m.ip_proto {
        if is_arp {
            oxm(out, OxmField::ArpOp, &(p as u16).to_be_bytes(), None);
        } else if is_ip {
            oxm(out, OxmField::IpProto, &[p], None);
        } else {
            return Err(not_in(
                V,
                "an ip_proto match without eth_type IPv4, IPv6 or ARP",
            ));
        }
    }
    for (pfx, ip_field, arp_field) in [
        (m.ipv4_src, OxmField::Ipv4Src, OxmField::ArpSpa),
        (m.ipv4_dst, OxmField::Ipv4Dst, OxmField::ArpTpa),
    ] {
        if let Some(p) = pfx {
            let field = match m.eth_type {
                Some(0x0800) => ip_field,
                Some(0x0806) => arp_field,
                _ => {
                    return Err(not_in(
                        V,
                        "an IPv4 address match without eth_type IPv4 or ARP",
                    ))
                }
            };
            let addr = (u32::from(p.addr) & p.mask()).to_be_bytes();
            let mask = p.mask().to_be_bytes();
            oxm(out, field, &addr, (p.len < 32).then_some(&mask[..]));
        }
    }
    for (pfx, field) in [
        (m.ipv6_src, OxmField::Ipv6Src),
        (m.ipv6_dst, OxmField::Ipv6Dst),
    ] {
        if let Some(p) = pfx {
            if m.eth_type != Some(0x86dd) {
                return Err(not_in(V, "an IPv6 address match without eth_type IPv6"));
            }
            let addr = (u128::from(p.addr) & p.mask()).to_be_bytes();
            let mask = p.mask().to_be_bytes();
            oxm(out, field, &addr, (p.len < 128).then_some(&mask[..]));
        }
    }
    if m.tp_src.is_some() || m.tp_dst.is_some() {
        let ((src, dst), narrow) = match (is_ip, m.ip_proto) {
            (true, Some(6)) => ((OxmField::TcpSrc, OxmField::TcpDst), false),
            (true, Some(17)) => ((OxmField::UdpSrc, OxmField::UdpDst), false),
            (true, Some(132)) => ((OxmField::SctpSrc, OxmField::SctpDst), false),
            (true, Some(1)) if m.eth_type == Some(0x0800) => {
                ((OxmField::Icmpv4Type, OxmField::Icmpv4Code), true)
            }
            (true, Some(58)) if m.eth_type == Some(0x86dd) => {
                ((OxmField::Icmpv6Type, OxmField::Icmpv6Code), true)
            }
            _ => {
                return Err(not_in(
                    V,
                    "a transport port match without ip_proto TCP, UDP, SCTP or ICMP",
                ))
            }
        };
        for (v, field) in [(m.tp_src, src), (m.tp_dst, dst)] {
            if let Some(v) = v {
                if narrow {
                    oxm(out, field, &[v as u8], None);
                } else {
                    oxm(out, field, &v.to_be_bytes(), None);
                }
            }
        }
    }
    len.finish(out)?;
    pad_to(out, start);
    Ok(())
}

/// Writes an `OFPIT_APPLY_ACTIONS` instruction holding `actions` (inlined, as
/// [`emit_match_v13`] is).
#[inline]
pub(super) fn emit_apply_actions_v13(actions: &[Action], out: &mut Vec<u8>) -> EncodeResult<()> {
    let start = out.len();
    out.put_u16(InstructionType::ApplyActions.to_raw());
    let len = LenMark::new(out, start, "ofp_instruction_actions");
    out.put_zeros(4);
    for a in actions {
        emit_action_v13(a, out)?;
    }
    len.finish(out)?;
    Ok(())
}

/// Writes an `OFPAT_SET_FIELD` action holding one OXM TLV, padded to 8.
fn set_field(out: &mut Vec<u8>, field: OxmField, value: &[u8]) -> EncodeResult<()> {
    let start = out.len();
    out.put_u16(A13::SetField.to_raw());
    let len = LenMark::new(out, start, "ofp_action_set_field");
    oxm(out, field, value, None);
    pad_to(out, start);
    len.finish(out)?;
    Ok(())
}

pub(super) fn emit_action_v13(a: &Action, out: &mut Vec<u8>) -> EncodeResult<()> {
    let tl = |out: &mut Vec<u8>, t: A13, len: u16| {
        out.put_u16(t.to_raw());
        out.put_u16(len);
    };
    match *a {
        Action::Output { port, max_len } => {
            tl(out, A13::Output, 16);
            out.put_u32(port.to_v13()?);
            out.put_u16(max_len);
            out.put_zeros(6);
        }
        Action::SetVlanVid { vid } => set_field(
            out,
            OxmField::VlanVid,
            &(VID_PRESENT | (vid & 0x0fff)).to_be_bytes(),
        )?,
        Action::SetVlanPcp { pcp } => set_field(out, OxmField::VlanPcp, &[pcp])?,
        Action::PopVlan => {
            tl(out, A13::PopVlan, 8);
            out.put_zeros(4);
        }
        Action::PushVlan { ethertype } => {
            tl(out, A13::PushVlan, 8);
            out.put_u16(ethertype);
            out.put_zeros(2);
        }
        Action::SetEthSrc { addr } => set_field(out, OxmField::EthSrc, &addr.0)?,
        Action::SetEthDst { addr } => set_field(out, OxmField::EthDst, &addr.0)?,
        Action::SetIpv4Src { addr } => set_field(out, OxmField::Ipv4Src, &addr.octets())?,
        Action::SetIpv4Dst { addr } => set_field(out, OxmField::Ipv4Dst, &addr.octets())?,
        Action::SetIpDscp { dscp } => set_field(out, OxmField::IpDscp, &[dscp])?,
        Action::SetTcpSrc { port } => set_field(out, OxmField::TcpSrc, &port.to_be_bytes())?,
        Action::SetTcpDst { port } => set_field(out, OxmField::TcpDst, &port.to_be_bytes())?,
        Action::SetUdpSrc { port } => set_field(out, OxmField::UdpSrc, &port.to_be_bytes())?,
        Action::SetUdpDst { port } => set_field(out, OxmField::UdpDst, &port.to_be_bytes())?,
        Action::Enqueue { port, queue_id } => {
            tl(out, A13::SetQueue, 8);
            out.put_u32(queue_id);
            emit_action_v13(&Action::output(port), out)?;
        }
        Action::Group { group_id } => {
            tl(out, A13::Group, 8);
            out.put_u32(group_id);
        }
        Action::DecNwTtl => {
            tl(out, A13::DecNwTtl, 8);
            out.put_zeros(4);
        }
    }
    Ok(())
}
