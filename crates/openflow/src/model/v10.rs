//! The OpenFlow 1.0 encoders of the model: the match and the actions, at fixed offsets
//! (1.0.0 §5.2.3, §5.2.4), for [`super::FlowMod`] and [`super::PacketOut`].

use super::action::Action;
use super::matching::{Match, Vlan};
use super::port::PortNo;
use crate::error::{not_in, EncodeResult};
use crate::header::Version;
use crate::of10::action::ActionType as A10;
use crate::of10::flow_match::{
    OFPFW_DL_DST, OFPFW_DL_SRC, OFPFW_DL_TYPE, OFPFW_DL_VLAN, OFPFW_DL_VLAN_PCP, OFPFW_IN_PORT,
    OFPFW_NW_DST_SHIFT, OFPFW_NW_PROTO, OFPFW_NW_SRC_SHIFT, OFPFW_NW_TOS, OFPFW_TP_DST,
    OFPFW_TP_SRC,
};
use crate::wire::{Fill, Put};

/// `OFP_VLAN_NONE`: 1.0's dl_vlan for "no tag".
const OFP_VLAN_NONE: u16 = 0xffff;

/// Appends `N` zero bytes to `out` and returns them, for a fixed-size part of a message
/// to be written at fixed offsets. The fields go straight into the buffer: built in an
/// array on the stack and copied, they cost a stalled store-to-load forward per 16
/// bytes (the copy reads back, wide, what narrow stores had just written: a third of
/// the time of encoding a 1.0 FLOW_MOD in a profile).
#[inline(always)]
pub(super) fn append_fixed<const N: usize>(out: &mut Vec<u8>) -> &mut [u8; N] {
    let start = out.len();
    out.extend_from_slice(&[0u8; N]);
    sub(&mut out[start..])
}

/// The first `N` bytes of `b` as an array (`b` holds at least `N`).
#[inline(always)]
pub(super) fn sub<const N: usize>(b: &mut [u8]) -> &mut [u8; N] {
    (&mut b[..N]).try_into().expect("the slice holds N bytes")
}

/// An `ofp_action_output` (1.0.0 §5.2.4), at fixed offsets.
#[inline(always)]
pub(super) fn write_output_v10(port: u16, max_len: u16, b: &mut [u8; 8]) {
    b[0..2].copy_from_slice(&A10::Output.to_raw().to_be_bytes());
    b[2..4].copy_from_slice(&8u16.to_be_bytes());
    b[4..6].copy_from_slice(&port.to_be_bytes());
    b[6..8].copy_from_slice(&max_len.to_be_bytes());
}

/// The 40 bytes of `ofp_match` for `m` (see [`write_match_v10`]).
#[cfg(test)]
pub(super) fn match_v10_bytes(m: &Match) -> EncodeResult<[u8; 40]> {
    let mut b = [0u8; 40];
    write_match_v10(m, &mut b)?;
    Ok(b)
}

/// Writes the `ofp_match` for `m` into `b` (zeroed), at fixed offsets (1.0.0 §5.2.3).
#[inline]
pub(super) fn write_match_v10(m: &Match, b: &mut [u8; 40]) -> EncodeResult<()> {
    const V: Version = Version::V1_0;
    if m.ipv6_src.is_some() || m.ipv6_dst.is_some() {
        return Err(not_in(V, "an IPv6 address match"));
    }
    if m.eth_src_mask.is_some() || m.eth_dst_mask.is_some() {
        return Err(not_in(V, "a masked Ethernet address match"));
    }
    if m.metadata.is_some() {
        return Err(not_in(V, "a metadata match"));
    }
    let mut w = 0u32;
    let in_port = match m.in_port {
        Some(p) => PortNo::from_u32(p).to_v10()?,
        None => {
            w |= OFPFW_IN_PORT;
            0
        }
    };
    let dl_vlan = match m.vlan {
        Some(Vlan::Untagged) => OFP_VLAN_NONE,
        Some(Vlan::Id(v)) => v & 0x0fff,
        None => {
            w |= OFPFW_DL_VLAN;
            0
        }
    };
    let mut opt = |present: bool, bit: u32| {
        if !present {
            w |= bit;
        }
    };
    opt(m.eth_src.is_some(), OFPFW_DL_SRC);
    opt(m.eth_dst.is_some(), OFPFW_DL_DST);
    opt(m.eth_type.is_some(), OFPFW_DL_TYPE);
    opt(m.ip_proto.is_some(), OFPFW_NW_PROTO);
    opt(m.tp_src.is_some(), OFPFW_TP_SRC);
    opt(m.tp_dst.is_some(), OFPFW_TP_DST);
    opt(m.vlan_pcp.is_some(), OFPFW_DL_VLAN_PCP);
    opt(m.ip_dscp.is_some(), OFPFW_NW_TOS);
    // The nw_src/nw_dst wildcard fields count the low bits to ignore (>= 32: all).
    let src_wild = m.ipv4_src.map_or(32, |p| 32 - p.len.min(32) as u32);
    let dst_wild = m.ipv4_dst.map_or(32, |p| 32 - p.len.min(32) as u32);
    w |= src_wild << OFPFW_NW_SRC_SHIFT | dst_wild << OFPFW_NW_DST_SHIFT;

    b[0..4].copy_from_slice(&w.to_be_bytes());
    b[4..6].copy_from_slice(&in_port.to_be_bytes());
    b[6..12].copy_from_slice(&m.eth_src.unwrap_or_default().0);
    b[12..18].copy_from_slice(&m.eth_dst.unwrap_or_default().0);
    b[18..20].copy_from_slice(&dl_vlan.to_be_bytes());
    b[20] = m.vlan_pcp.unwrap_or(0);
    b[22..24].copy_from_slice(&m.eth_type.unwrap_or(0).to_be_bytes());
    b[24] = m.ip_dscp.unwrap_or(0) << 2;
    b[25] = m.ip_proto.unwrap_or(0);
    let nw_src = m.ipv4_src.map_or(0, |p| u32::from(p.addr) & p.mask());
    let nw_dst = m.ipv4_dst.map_or(0, |p| u32::from(p.addr) & p.mask());
    b[28..32].copy_from_slice(&nw_src.to_be_bytes());
    b[32..36].copy_from_slice(&nw_dst.to_be_bytes());
    b[36..38].copy_from_slice(&m.tp_src.unwrap_or(0).to_be_bytes());
    b[38..40].copy_from_slice(&m.tp_dst.unwrap_or(0).to_be_bytes());
    Ok(())
}

/// Appends `actions`, each written in place (at most 16 bytes, see `Fill`).
pub(super) fn emit_actions_v10(actions: &[Action], out: &mut Vec<u8>) -> EncodeResult<()> {
    for a in actions {
        // The common action, at fixed offsets (1.0.0 §5.2.4, `ofp_action_output`).
        if let Action::Output { port, max_len } = *a {
            let port = port.to_v10()?;
            write_output_v10(port, max_len, append_fixed(out));
            continue;
        }
        let at = out.len();
        let mut f = Fill::append(out, 16);
        emit_action_v10(a, &mut f)?;
        let n = f.len();
        out.truncate(at + n);
    }
    Ok(())
}

fn emit_action_v10(a: &Action, out: &mut impl Put) -> EncodeResult<()> {
    const V: Version = Version::V1_0;
    fn tl(out: &mut impl Put, t: A10, len: u16) {
        out.put_u16(t.to_raw());
        out.put_u16(len);
    }
    match *a {
        Action::Output { port, max_len } => {
            tl(out, A10::Output, 8);
            out.put_u16(port.to_v10()?);
            out.put_u16(max_len);
        }
        Action::SetVlanVid { vid } => {
            tl(out, A10::SetVlanVid, 8);
            out.put_u16(vid & 0x0fff);
            out.put_zeros(2);
        }
        Action::SetVlanPcp { pcp } => {
            tl(out, A10::SetVlanPcp, 8);
            out.put_u8(pcp);
            out.put_zeros(3);
        }
        Action::PopVlan => {
            tl(out, A10::StripVlan, 8);
            out.put_zeros(4);
        }
        Action::SetEthSrc { addr } | Action::SetEthDst { addr } => {
            let t = match a {
                Action::SetEthSrc { .. } => A10::SetDlSrc,
                _ => A10::SetDlDst,
            };
            tl(out, t, 16);
            out.put_slice(&addr.0);
            out.put_zeros(6);
        }
        Action::SetIpv4Src { addr } | Action::SetIpv4Dst { addr } => {
            let t = match a {
                Action::SetIpv4Src { .. } => A10::SetNwSrc,
                _ => A10::SetNwDst,
            };
            tl(out, t, 8);
            out.put_u32(addr.into());
        }
        Action::SetIpDscp { dscp } => {
            tl(out, A10::SetNwTos, 8);
            out.put_u8(dscp << 2);
            out.put_zeros(3);
        }
        Action::SetTcpSrc { port } | Action::SetUdpSrc { port } => {
            tl(out, A10::SetTpSrc, 8);
            out.put_u16(port);
            out.put_zeros(2);
        }
        Action::SetTcpDst { port } | Action::SetUdpDst { port } => {
            tl(out, A10::SetTpDst, 8);
            out.put_u16(port);
            out.put_zeros(2);
        }
        Action::Enqueue { port, queue_id } => {
            tl(out, A10::Enqueue, 16);
            out.put_u16(port.to_v10()?);
            out.put_zeros(6);
            out.put_u32(queue_id);
        }
        Action::PushVlan { .. } => return Err(not_in(V, "a push-VLAN action")),
        Action::Group { .. } => return Err(not_in(V, "a group action")),
        Action::DecNwTtl => return Err(not_in(V, "a decrement-TTL action")),
    }
    Ok(())
}
