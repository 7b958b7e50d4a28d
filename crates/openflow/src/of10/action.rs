//! OpenFlow 1.0 actions (spec 1.0.0 §5.2.4): `ofp_action_header` and its twelve bodies,
//! plus vendor actions (kept opaque: vendor id and body, re-encoded byte for byte).
//!
//! Every action is `type: u16, len: u16, body`, where `len` counts the 4-byte header
//! and the padding (`ofp_action_header.len`: "Length of action, including this header.
//! This is the length of action, including any padding to make it 64-bit aligned.").

use std::fmt;
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::error::{DecodeError, DecodeResult, EncodeError, EncodeResult};
use crate::open_enum;
use crate::types::MacAddr;
use crate::wire::{LenMark, Put, Reader, Tlv};

/// The Nicira vendor id (`NX_VENDOR_ID`), whose actions Open vSwitch sends.
pub const NX_VENDOR_ID: u32 = 0x0000_2320;

open_enum! {
    /// `ofp_action_type`.
    pub enum ActionType: u16 {
        /// Output to a switch port.
        Output = 0 => "OUTPUT",
        /// Set the 802.1q VLAN id.
        SetVlanVid = 1 => "SET_VLAN_VID",
        /// Set the 802.1q priority.
        SetVlanPcp = 2 => "SET_VLAN_PCP",
        /// Strip the 802.1q header.
        StripVlan = 3 => "STRIP_VLAN",
        /// Ethernet source address.
        SetDlSrc = 4 => "SET_DL_SRC",
        /// Ethernet destination address.
        SetDlDst = 5 => "SET_DL_DST",
        /// IP source address.
        SetNwSrc = 6 => "SET_NW_SRC",
        /// IP destination address.
        SetNwDst = 7 => "SET_NW_DST",
        /// IP ToS (DSCP field, 6 bits).
        SetNwTos = 8 => "SET_NW_TOS",
        /// TCP/UDP source port.
        SetTpSrc = 9 => "SET_TP_SRC",
        /// TCP/UDP destination port.
        SetTpDst = 10 => "SET_TP_DST",
        /// Output to a queue.
        Enqueue = 11 => "ENQUEUE",
        /// A vendor action.
        Vendor = 0xffff => "VENDOR",
    }
}

/// The bit for action type `t` in `ofp_switch_features.actions` ("Bitmap of supported
/// `ofp_action_type`s": bit `t` set means type `t` is supported).
pub const fn action_bit(t: ActionType) -> u32 {
    match t.to_raw() {
        v @ 0..=31 => 1 << v,
        _ => 0,
    }
}

/// One OpenFlow 1.0 action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Action {
    /// `ofp_action_output`: send out `port`; `max_len` bytes to the controller.
    Output {
        /// Output port (`OFPP_*` for reserved ports).
        port: u16,
        /// Max bytes to send when `port` is `OFPP_CONTROLLER`.
        max_len: u16,
    },
    /// `ofp_action_vlan_vid`: set the VLAN id (12 bits), adding a tag if there is none.
    SetVlanVid {
        /// The VLAN id.
        vlan_vid: u16,
    },
    /// `ofp_action_vlan_pcp`: set the VLAN priority (3 bits).
    SetVlanPcp {
        /// The priority.
        vlan_pcp: u8,
    },
    /// Strip the 802.1q header.
    StripVlan,
    /// `ofp_action_dl_addr`: set the Ethernet source address.
    SetDlSrc {
        /// The address.
        dl_addr: MacAddr,
    },
    /// `ofp_action_dl_addr`: set the Ethernet destination address.
    SetDlDst {
        /// The address.
        dl_addr: MacAddr,
    },
    /// `ofp_action_nw_addr`: set the IPv4 source address.
    SetNwSrc {
        /// The address.
        nw_addr: Ipv4Addr,
    },
    /// `ofp_action_nw_addr`: set the IPv4 destination address.
    SetNwDst {
        /// The address.
        nw_addr: Ipv4Addr,
    },
    /// `ofp_action_nw_tos`: set the IP ToS (DSCP in the high 6 bits).
    SetNwTos {
        /// The ToS byte.
        nw_tos: u8,
    },
    /// `ofp_action_tp_port`: set the TCP/UDP source port.
    SetTpSrc {
        /// The port.
        tp_port: u16,
    },
    /// `ofp_action_tp_port`: set the TCP/UDP destination port.
    SetTpDst {
        /// The port.
        tp_port: u16,
    },
    /// `ofp_action_enqueue`: send out `port` through queue `queue_id`.
    Enqueue {
        /// The port the queue belongs to.
        port: u16,
        /// The queue.
        queue_id: u32,
    },
    /// `ofp_action_vendor_header` (type 0xffff): carried opaquely. For Nicira actions
    /// (`vendor` [`NX_VENDOR_ID`]) the body starts with the 16-bit subtype.
    Vendor {
        /// The vendor id.
        vendor: u32,
        /// Everything after the vendor id; 8 bytes short of a multiple of 8 is invalid.
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
    /// An action type 1.0 does not define, carried opaquely.
    Unknown {
        /// The action type.
        action_type: u16,
        /// Everything after the 4-byte header.
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
}

impl Action {
    /// The action's type.
    pub fn action_type(&self) -> ActionType {
        match self {
            Action::Output { .. } => ActionType::Output,
            Action::SetVlanVid { .. } => ActionType::SetVlanVid,
            Action::SetVlanPcp { .. } => ActionType::SetVlanPcp,
            Action::StripVlan => ActionType::StripVlan,
            Action::SetDlSrc { .. } => ActionType::SetDlSrc,
            Action::SetDlDst { .. } => ActionType::SetDlDst,
            Action::SetNwSrc { .. } => ActionType::SetNwSrc,
            Action::SetNwDst { .. } => ActionType::SetNwDst,
            Action::SetNwTos { .. } => ActionType::SetNwTos,
            Action::SetTpSrc { .. } => ActionType::SetTpSrc,
            Action::SetTpDst { .. } => ActionType::SetTpDst,
            Action::Enqueue { .. } => ActionType::Enqueue,
            Action::Vendor { .. } => ActionType::Vendor,
            Action::Unknown { action_type, .. } => ActionType::from_raw(*action_type),
        }
    }

    /// The spec's structure name, for error reports.
    fn layer(t: ActionType) -> &'static str {
        match t {
            ActionType::Output => "ofp_action_output",
            ActionType::SetVlanVid => "ofp_action_vlan_vid",
            ActionType::SetVlanPcp => "ofp_action_vlan_pcp",
            ActionType::StripVlan => "ofp_action_header",
            ActionType::SetDlSrc | ActionType::SetDlDst => "ofp_action_dl_addr",
            ActionType::SetNwSrc | ActionType::SetNwDst => "ofp_action_nw_addr",
            ActionType::SetNwTos => "ofp_action_nw_tos",
            ActionType::SetTpSrc | ActionType::SetTpDst => "ofp_action_tp_port",
            ActionType::Enqueue => "ofp_action_enqueue",
            ActionType::Vendor => "ofp_action_vendor_header",
            ActionType::Unknown(_) => "ofp_action_header",
        }
    }

    /// The fixed length of a known action type (vendor and unknown actions have none).
    fn fixed_len(t: ActionType) -> Option<usize> {
        match t {
            ActionType::SetDlSrc | ActionType::SetDlDst | ActionType::Enqueue => Some(16),
            ActionType::Vendor | ActionType::Unknown(_) => None,
            _ => Some(8),
        }
    }

    /// The Nicira subtype of a Nicira vendor action.
    pub fn nicira_subtype(&self) -> Option<u16> {
        match self {
            Action::Vendor { vendor, body } if *vendor == NX_VENDOR_ID && body.len() >= 2 => {
                Some(u16::from_be_bytes([body[0], body[1]]))
            }
            _ => None,
        }
    }

    /// Parses one action from the front of `r`.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<Action> {
        // `ofp_action_header.len`: "Length of action, including this header. This is the
        // length of action, including any padding to make it 64-bit aligned." So it is a
        // multiple of 8, and at least the 8 bytes of the padded header.
        let t = r.tlv("ofp_action", 8, 8, false)?;
        Action::from_tlv(t)
    }

    fn from_tlv(t: Tlv<'_>) -> DecodeResult<Action> {
        let kind = ActionType::from_raw(t.kind);
        let layer = Action::layer(kind);
        if let Some(expected) = Action::fixed_len(kind) {
            // A known action's length is its structure's size; anything else is a
            // malformed action, not one to skip.
            if t.raw.len() != expected {
                return Err(DecodeError::LengthMismatch {
                    layer,
                    offset: t.offset,
                    length: t.raw.len(),
                    expected,
                });
            }
        }
        let mut b = t.body.with_layer(layer);
        let a = match kind {
            ActionType::Output => Action::Output {
                port: b.u16()?,
                max_len: b.u16()?,
            },
            ActionType::SetVlanVid => Action::SetVlanVid { vlan_vid: b.u16()? },
            ActionType::SetVlanPcp => Action::SetVlanPcp { vlan_pcp: b.u8()? },
            ActionType::StripVlan => Action::StripVlan,
            ActionType::SetDlSrc => Action::SetDlSrc {
                dl_addr: MacAddr(b.array()?),
            },
            ActionType::SetDlDst => Action::SetDlDst {
                dl_addr: MacAddr(b.array()?),
            },
            ActionType::SetNwSrc => Action::SetNwSrc {
                nw_addr: Ipv4Addr::from(b.u32()?),
            },
            ActionType::SetNwDst => Action::SetNwDst {
                nw_addr: Ipv4Addr::from(b.u32()?),
            },
            ActionType::SetNwTos => Action::SetNwTos { nw_tos: b.u8()? },
            ActionType::SetTpSrc => Action::SetTpSrc { tp_port: b.u16()? },
            ActionType::SetTpDst => Action::SetTpDst { tp_port: b.u16()? },
            ActionType::Enqueue => {
                let port = b.u16()?;
                b.skip(6)?;
                Action::Enqueue {
                    port,
                    queue_id: b.u32()?,
                }
            }
            ActionType::Vendor => Action::Vendor {
                vendor: b.u32()?,
                body: b.rest().to_vec(),
            },
            ActionType::Unknown(action_type) => Action::Unknown {
                action_type,
                body: b.rest().to_vec(),
            },
        };
        // The rest of a fixed-size action is padding.
        b.rest();
        Ok(a)
    }

    /// Parses actions until `r` is empty.
    pub fn parse_list(r: &mut Reader<'_>) -> DecodeResult<Vec<Action>> {
        let mut actions = Vec::new();
        while !r.is_empty() {
            actions.push(Action::parse(r)?);
        }
        Ok(actions)
    }

    /// Appends the action, its length patched in.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        let kind = self.action_type();
        out.put_u16(kind.to_raw());
        let len = LenMark::new(out, start, Action::layer(kind));
        match self {
            Action::Output { port, max_len } => {
                out.put_u16(*port);
                out.put_u16(*max_len);
            }
            Action::SetVlanVid { vlan_vid } => {
                out.put_u16(*vlan_vid);
                out.put_zeros(2);
            }
            Action::SetVlanPcp { vlan_pcp } | Action::SetNwTos { nw_tos: vlan_pcp } => {
                out.put_u8(*vlan_pcp);
                out.put_zeros(3);
            }
            Action::StripVlan => out.put_zeros(4),
            Action::SetDlSrc { dl_addr } | Action::SetDlDst { dl_addr } => {
                out.put_slice(&dl_addr.0);
                out.put_zeros(6);
            }
            Action::SetNwSrc { nw_addr } | Action::SetNwDst { nw_addr } => {
                out.put_u32(u32::from(*nw_addr));
            }
            Action::SetTpSrc { tp_port } | Action::SetTpDst { tp_port } => {
                out.put_u16(*tp_port);
                out.put_zeros(2);
            }
            Action::Enqueue { port, queue_id } => {
                out.put_u16(*port);
                out.put_zeros(6);
                out.put_u32(*queue_id);
            }
            Action::Vendor { vendor, body } => {
                out.put_u32(*vendor);
                out.put_slice(body);
            }
            Action::Unknown { body, .. } => out.put_slice(body),
        }
        let n = len.finish(out)?;
        // Opaque bodies are written as given, so their length is checked here: a
        // receiver would reject an action whose length is not a multiple of 8.
        if n % 8 != 0 {
            out.truncate(start);
            return Err(EncodeError::BadValue {
                layer: Action::layer(kind),
                field: "len",
                value: n as u64,
                reason: "an action's length must be a multiple of 8",
            });
        }
        Ok(())
    }

    /// Appends every action in order.
    pub fn emit_list(actions: &[Action], out: &mut Vec<u8>) -> EncodeResult<()> {
        for a in actions {
            a.emit(out)?;
        }
        Ok(())
    }

    /// A description of this action if it is carried opaquely.
    pub fn opaque_part(&self) -> Option<String> {
        match self {
            Action::Vendor { vendor, body } => Some(match self.nicira_subtype() {
                Some(st) => format!(
                    "Nicira vendor action subtype {st} ({}, {} body bytes)",
                    nicira_action_name(st).unwrap_or("unknown"),
                    body.len()
                ),
                None => format!(
                    "vendor action, vendor {vendor:#010x} ({} body bytes)",
                    body.len()
                ),
            }),
            Action::Unknown { action_type, body } => Some(format!(
                "unknown action type {action_type} ({} body bytes)",
                body.len()
            )),
            _ => None,
        }
    }
}

impl fmt::Display for Action {
    /// ovs-ofctl style: `output:1`, `CONTROLLER:128`, `FLOOD`, `mod_vlan_vid:5`,
    /// `strip_vlan`, `mod_nw_src:10.0.0.1`, `enqueue:1:2`; opaque actions as
    /// `nicira:NXAST_DEC_TTL`, `vendor:0x00abcdef` or `action_type:99`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Output { port, max_len } => match super::port::port_name(*port) {
                Some("CONTROLLER") => write!(f, "CONTROLLER:{max_len}"),
                Some(name) => f.write_str(name),
                None => write!(f, "output:{port}"),
            },
            Action::SetVlanVid { vlan_vid } => write!(f, "mod_vlan_vid:{vlan_vid}"),
            Action::SetVlanPcp { vlan_pcp } => write!(f, "mod_vlan_pcp:{vlan_pcp}"),
            Action::StripVlan => f.write_str("strip_vlan"),
            Action::SetDlSrc { dl_addr } => write!(f, "mod_dl_src:{dl_addr}"),
            Action::SetDlDst { dl_addr } => write!(f, "mod_dl_dst:{dl_addr}"),
            Action::SetNwSrc { nw_addr } => write!(f, "mod_nw_src:{nw_addr}"),
            Action::SetNwDst { nw_addr } => write!(f, "mod_nw_dst:{nw_addr}"),
            Action::SetNwTos { nw_tos } => write!(f, "mod_nw_tos:{nw_tos}"),
            Action::SetTpSrc { tp_port } => write!(f, "mod_tp_src:{tp_port}"),
            Action::SetTpDst { tp_port } => write!(f, "mod_tp_dst:{tp_port}"),
            Action::Enqueue { port, queue_id } => write!(f, "enqueue:{port}:{queue_id}"),
            Action::Vendor { vendor, .. } => match self.nicira_subtype() {
                Some(st) => match nicira_action_name(st) {
                    Some(name) => write!(f, "nicira:{name}"),
                    None => write!(f, "nicira:subtype{st}"),
                },
                None => write!(f, "vendor:{vendor:#010x}"),
            },
            Action::Unknown { action_type, .. } => write!(f, "action_type:{action_type}"),
        }
    }
}

/// The Open vSwitch name of a Nicira action subtype (`NXAST_*`), for reports.
pub fn nicira_action_name(subtype: u16) -> Option<&'static str> {
    Some(match subtype {
        1 => "NXAST_RESUBMIT",
        2 => "NXAST_SET_TUNNEL",
        4 => "NXAST_SET_QUEUE",
        5 => "NXAST_POP_QUEUE",
        6 => "NXAST_REG_MOVE",
        7 => "NXAST_REG_LOAD",
        8 => "NXAST_NOTE",
        9 => "NXAST_SET_TUNNEL64",
        10 => "NXAST_MULTIPATH",
        12 => "NXAST_BUNDLE",
        13 => "NXAST_BUNDLE_LOAD",
        14 => "NXAST_RESUBMIT_TABLE",
        15 => "NXAST_OUTPUT_REG",
        16 => "NXAST_LEARN",
        17 => "NXAST_EXIT",
        18 => "NXAST_DEC_TTL",
        19 => "NXAST_FIN_TIMEOUT",
        20 => "NXAST_CONTROLLER",
        21 => "NXAST_DEC_TTL_CNT_IDS",
        22 => "NXAST_WRITE_METADATA",
        23 => "NXAST_PUSH_MPLS",
        24 => "NXAST_POP_MPLS",
        25 => "NXAST_SET_MPLS_TTL",
        26 => "NXAST_DEC_MPLS_TTL",
        27 => "NXAST_STACK_PUSH",
        28 => "NXAST_STACK_POP",
        29 => "NXAST_SAMPLE",
        30 => "NXAST_SET_MPLS_LABEL",
        31 => "NXAST_SET_MPLS_TC",
        32 => "NXAST_OUTPUT_REG2",
        33 => "NXAST_REG_LOAD2",
        34 => "NXAST_CONJUNCTION",
        35 => "NXAST_CT",
        36 => "NXAST_NAT",
        37 => "NXAST_CONTROLLER2",
        38 => "NXAST_SAMPLE2",
        39 => "NXAST_OUTPUT_TRUNC",
        43 => "NXAST_CT_CLEAR",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> DecodeResult<Vec<Action>> {
        Action::parse_list(&mut Reader::new(bytes, 72, "actions"))
    }

    #[test]
    fn every_action_parses_and_emits() {
        #[rustfmt::skip]
        let bytes: &[u8] = &[
            0, 0, 0, 8, 0, 6, 0xff, 0xff,                  // OUTPUT port 6 max_len 65535
            0, 1, 0, 8, 0x0f, 0xff, 0, 0,                  // SET_VLAN_VID 4095
            0, 2, 0, 8, 7, 0, 0, 0,                        // SET_VLAN_PCP 7
            0, 3, 0, 8, 0, 0, 0, 0,                        // STRIP_VLAN
            0, 4, 0, 16, 1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0, // SET_DL_SRC
            0, 5, 0, 16, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 0, 0, // SET_DL_DST
            0, 6, 0, 8, 10, 0, 0, 1,                       // SET_NW_SRC 10.0.0.1
            0, 7, 0, 8, 10, 0, 0, 2,                       // SET_NW_DST 10.0.0.2
            0, 8, 0, 8, 0xb8, 0, 0, 0,                     // SET_NW_TOS 0xb8
            0, 9, 0, 8, 0, 80, 0, 0,                       // SET_TP_SRC 80
            0, 10, 0, 8, 1, 187, 0, 0,                     // SET_TP_DST 443
            0, 11, 0, 16, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, // ENQUEUE port 3 queue 9
            0xff, 0xff, 0, 16, 0, 0, 0x23, 0x20, 0, 0x18, 0x08, 0, 0, 0, 0, 0, // NX pop_mpls
            0, 99, 0, 8, 1, 2, 3, 4,                       // unknown type 99
        ];
        let actions = parse(bytes).unwrap();
        assert_eq!(
            actions[..3],
            [
                Action::Output {
                    port: 6,
                    max_len: 0xffff
                },
                Action::SetVlanVid { vlan_vid: 4095 },
                Action::SetVlanPcp { vlan_pcp: 7 },
            ]
        );
        assert_eq!(
            actions[6],
            Action::SetNwSrc {
                nw_addr: Ipv4Addr::new(10, 0, 0, 1)
            }
        );
        assert_eq!(
            actions[11],
            Action::Enqueue {
                port: 3,
                queue_id: 9
            }
        );
        assert_eq!(actions[12].nicira_subtype(), Some(24));
        assert!(actions[12]
            .opaque_part()
            .unwrap()
            .contains("NXAST_POP_MPLS"));
        assert_eq!(
            actions[13],
            Action::Unknown {
                action_type: 99,
                body: vec![1, 2, 3, 4]
            }
        );
        assert_eq!(actions.len(), 14);
        let mut out = Vec::new();
        Action::emit_list(&actions, &mut out).unwrap();
        assert_eq!(out, bytes);
    }

    #[test]
    fn length_not_a_multiple_of_8_is_refused() {
        let e = parse(&[0, 0, 0, 12, 0, 1, 0, 0, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(
            e,
            DecodeError::Misaligned {
                layer: "ofp_action",
                offset: 72,
                length: 12,
                align: 8
            }
        );
    }

    #[test]
    fn length_past_the_list_is_refused() {
        let e = parse(&[0, 0, 0, 8, 0, 1, 0, 0, 0, 4, 0, 16, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(
            e,
            DecodeError::LengthOverrun {
                layer: "ofp_action",
                offset: 80,
                length: 16,
                available: 8
            }
        );
    }

    #[test]
    fn known_action_with_wrong_length_is_refused() {
        let e = parse(&[0, 0, 0, 16, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(
            e,
            DecodeError::LengthMismatch {
                layer: "ofp_action_output",
                offset: 72,
                length: 16,
                expected: 8
            }
        );
        let e = parse(&[0, 4, 0, 8, 0, 0, 0, 0]).unwrap_err();
        assert!(matches!(
            e,
            DecodeError::LengthMismatch { expected: 16, .. }
        ));
        // Shorter than the 8-byte minimum.
        let e = parse(&[0, 3, 0, 4, 0, 0, 0, 0]).unwrap_err();
        assert!(matches!(e, DecodeError::LengthTooShort { min: 8, .. }));
        // A header cut short.
        assert!(matches!(
            parse(&[0, 3, 0]),
            Err(DecodeError::Truncated { .. })
        ));
    }

    #[test]
    fn opaque_bodies_that_would_misalign_are_not_encoded() {
        let a = Action::Vendor {
            vendor: NX_VENDOR_ID,
            body: vec![0; 3],
        };
        let mut out = vec![7];
        assert!(matches!(
            a.emit(&mut out),
            Err(EncodeError::BadValue { field: "len", .. })
        ));
        assert_eq!(out, [7]);
    }

    #[test]
    fn actions_display_like_ovs_ofctl() {
        let shown: Vec<String> = [
            Action::Output {
                port: 1,
                max_len: 0,
            },
            Action::Output {
                port: super::super::port::OFPP_CONTROLLER,
                max_len: 128,
            },
            Action::Output {
                port: super::super::port::OFPP_FLOOD,
                max_len: 0,
            },
            Action::SetNwSrc {
                nw_addr: Ipv4Addr::new(10, 0, 0, 1),
            },
            Action::Enqueue {
                port: 1,
                queue_id: 2,
            },
            Action::Vendor {
                vendor: NX_VENDOR_ID,
                body: vec![0, 18, 0, 0, 0, 0, 0, 0],
            },
            Action::Vendor {
                vendor: 0xabcdef,
                body: vec![],
            },
        ]
        .iter()
        .map(Action::to_string)
        .collect();
        assert_eq!(
            shown,
            [
                "output:1",
                "CONTROLLER:128",
                "FLOOD",
                "mod_nw_src:10.0.0.1",
                "enqueue:1:2",
                "nicira:NXAST_DEC_TTL",
                "vendor:0x00abcdef"
            ]
        );
    }

    #[test]
    fn action_bits() {
        assert_eq!(action_bit(ActionType::Output), 1);
        assert_eq!(action_bit(ActionType::Enqueue), 1 << 11);
        assert_eq!(action_bit(ActionType::Vendor), 0);
    }
}
