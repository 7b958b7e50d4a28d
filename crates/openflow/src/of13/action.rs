//! Actions (§7.2.5): every 1.3 action, experimenter and unknown actions kept opaque.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{DecodeError, DecodeResult, EncodeResult};
use crate::of13::oxm::Oxm;
use crate::open_enum;
use crate::types::to_hex;
use crate::wire::{pad_to, LenMark, Put, Reader};

/// Nicira's experimenter id (`NX_VENDOR_ID`).
pub const NICIRA_EXPERIMENTER_ID: u32 = 0x0000_2320;

/// `OFPCML_NO_BUFFER`: `max_len` asking the switch to send the whole packet.
pub const OFPCML_NO_BUFFER: u16 = 0xffff;
/// `OFPCML_MAX`: the largest `max_len` that asks for buffering.
pub const OFPCML_MAX: u16 = 0xffe5;

open_enum! {
    /// `ofp_action_type`.
    pub enum ActionType: u16 {
        Output = 0 => "OUTPUT",
        CopyTtlOut = 11 => "COPY_TTL_OUT",
        CopyTtlIn = 12 => "COPY_TTL_IN",
        SetMplsTtl = 15 => "SET_MPLS_TTL",
        DecMplsTtl = 16 => "DEC_MPLS_TTL",
        PushVlan = 17 => "PUSH_VLAN",
        PopVlan = 18 => "POP_VLAN",
        PushMpls = 19 => "PUSH_MPLS",
        PopMpls = 20 => "POP_MPLS",
        SetQueue = 21 => "SET_QUEUE",
        Group = 22 => "GROUP",
        SetNwTtl = 23 => "SET_NW_TTL",
        DecNwTtl = 24 => "DEC_NW_TTL",
        SetField = 25 => "SET_FIELD",
        PushPbb = 26 => "PUSH_PBB",
        PopPbb = 27 => "POP_PBB",
        Experimenter = 0xffff => "EXPERIMENTER",
    }
}

/// One action. Ports, group and queue ids are raw numbers (see
/// [`crate::of13::port`] for the reserved ones).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// `OFPAT_OUTPUT`: send to `port`; `max_len` bytes to the controller.
    Output {
        port: u32,
        max_len: u16,
    },
    CopyTtlOut,
    CopyTtlIn,
    SetMplsTtl {
        mpls_ttl: u8,
    },
    DecMplsTtl,
    PushVlan {
        ethertype: u16,
    },
    PopVlan,
    PushMpls {
        ethertype: u16,
    },
    PopMpls {
        ethertype: u16,
    },
    SetQueue {
        queue_id: u32,
    },
    Group {
        group_id: u32,
    },
    SetNwTtl {
        nw_ttl: u8,
    },
    DecNwTtl,
    /// `OFPAT_SET_FIELD`: one OXM, whose value is written into the packet.
    SetField {
        field: Oxm,
    },
    PushPbb {
        ethertype: u16,
    },
    PopPbb,
    /// `OFPAT_EXPERIMENTER`: the experimenter id and the rest of the action, opaque
    /// (Nicira actions start the rest with a 16-bit subtype).
    Experimenter {
        experimenter: u32,
        #[serde(with = "crate::types::hex")]
        data: Vec<u8>,
    },
    /// An action type this codec does not know: the bytes after type and length.
    Unknown {
        action_type: u16,
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
}

impl Action {
    /// `Output` to `port` with `max_len` [`OFPCML_NO_BUFFER`].
    pub fn output(port: u32) -> Action {
        Action::Output {
            port,
            max_len: OFPCML_NO_BUFFER,
        }
    }

    /// The action's type.
    pub fn action_type(&self) -> ActionType {
        match self {
            Action::Output { .. } => ActionType::Output,
            Action::CopyTtlOut => ActionType::CopyTtlOut,
            Action::CopyTtlIn => ActionType::CopyTtlIn,
            Action::SetMplsTtl { .. } => ActionType::SetMplsTtl,
            Action::DecMplsTtl => ActionType::DecMplsTtl,
            Action::PushVlan { .. } => ActionType::PushVlan,
            Action::PopVlan => ActionType::PopVlan,
            Action::PushMpls { .. } => ActionType::PushMpls,
            Action::PopMpls { .. } => ActionType::PopMpls,
            Action::SetQueue { .. } => ActionType::SetQueue,
            Action::Group { .. } => ActionType::Group,
            Action::SetNwTtl { .. } => ActionType::SetNwTtl,
            Action::DecNwTtl => ActionType::DecNwTtl,
            Action::SetField { .. } => ActionType::SetField,
            Action::PushPbb { .. } => ActionType::PushPbb,
            Action::PopPbb => ActionType::PopPbb,
            Action::Experimenter { .. } => ActionType::Experimenter,
            Action::Unknown { action_type, .. } => ActionType::from_raw(*action_type),
        }
    }

    /// Parses one action.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<Action> {
        // §7.2.5: "An action definition contains the action type, length, and any
        // associated data"; "len ... Length of action, including this header. This is
        // the length of action, including any padding to make it 64-bit aligned."
        let t = r.tlv("ofp_action", 8, 8, false)?;
        let kind = ActionType::from_raw(t.kind);
        let layer = match kind {
            ActionType::Output => "ofp_action_output",
            ActionType::SetMplsTtl => "ofp_action_mpls_ttl",
            ActionType::PushVlan | ActionType::PushMpls | ActionType::PushPbb => "ofp_action_push",
            ActionType::PopMpls => "ofp_action_pop_mpls",
            ActionType::SetQueue => "ofp_action_set_queue",
            ActionType::Group => "ofp_action_group",
            ActionType::SetNwTtl => "ofp_action_nw_ttl",
            ActionType::SetField => "ofp_action_set_field",
            ActionType::Experimenter => "ofp_action_experimenter_header",
            ActionType::Unknown(_) => "ofp_action",
            _ => "ofp_action_generic",
        };
        let mut b = t.body.with_layer(layer);
        let a = match kind {
            ActionType::Output => {
                let port = b.u32()?;
                let max_len = b.u16()?;
                b.skip(6)?;
                Action::Output { port, max_len }
            }
            ActionType::CopyTtlOut => Self::header_only(&mut b, Action::CopyTtlOut)?,
            ActionType::CopyTtlIn => Self::header_only(&mut b, Action::CopyTtlIn)?,
            ActionType::DecMplsTtl => Self::header_only(&mut b, Action::DecMplsTtl)?,
            ActionType::PopVlan => Self::header_only(&mut b, Action::PopVlan)?,
            ActionType::DecNwTtl => Self::header_only(&mut b, Action::DecNwTtl)?,
            ActionType::PopPbb => Self::header_only(&mut b, Action::PopPbb)?,
            ActionType::SetMplsTtl => {
                let mpls_ttl = b.u8()?;
                b.skip(3)?;
                Action::SetMplsTtl { mpls_ttl }
            }
            ActionType::SetNwTtl => {
                let nw_ttl = b.u8()?;
                b.skip(3)?;
                Action::SetNwTtl { nw_ttl }
            }
            ActionType::PushVlan
            | ActionType::PushMpls
            | ActionType::PushPbb
            | ActionType::PopMpls => {
                let ethertype = b.u16()?;
                b.skip(2)?;
                match kind {
                    ActionType::PushVlan => Action::PushVlan { ethertype },
                    ActionType::PushMpls => Action::PushMpls { ethertype },
                    ActionType::PushPbb => Action::PushPbb { ethertype },
                    _ => Action::PopMpls { ethertype },
                }
            }
            ActionType::SetQueue => Action::SetQueue { queue_id: b.u32()? },
            ActionType::Group => Action::Group { group_id: b.u32()? },
            ActionType::SetField => {
                let field = Oxm::parse(&mut b)?;
                // §7.2.5, ofp_action_set_field: "len; /* Length is padded to 64
                // bits. */": only the padding to the next multiple of 8 may follow
                // the OXM.
                let pad = crate::wire::padding_for(4 + field.wire_len());
                if b.remaining() != pad {
                    return Err(DecodeError::LengthMismatch {
                        layer: "ofp_action_set_field",
                        offset: t.offset,
                        length: t.raw.len(),
                        expected: 4 + field.wire_len() + pad,
                    });
                }
                b.skip(pad)?;
                Action::SetField { field }
            }
            ActionType::Experimenter => Action::Experimenter {
                experimenter: b.u32()?,
                data: b.rest().to_vec(),
            },
            ActionType::Unknown(action_type) => Action::Unknown {
                action_type,
                body: b.rest().to_vec(),
            },
        };
        // Fixed-size actions must be exactly their size.
        b.finish_element(t.offset, t.raw.len())?;
        Ok(a)
    }

    fn header_only(b: &mut Reader<'_>, a: Action) -> DecodeResult<Action> {
        b.skip(4)?;
        Ok(a)
    }

    /// Parses actions until `r` is empty.
    pub fn parse_list(r: &mut Reader<'_>) -> DecodeResult<Vec<Action>> {
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(Action::parse(r)?);
        }
        Ok(out)
    }

    /// Appends the action, its length patched and padded to 8.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        out.put_u16(self.action_type().to_raw());
        let len = LenMark::new(out, start, "ofp_action");
        match self {
            Action::Output { port, max_len } => {
                out.put_u32(*port);
                out.put_u16(*max_len);
                out.put_zeros(6);
            }
            Action::CopyTtlOut
            | Action::CopyTtlIn
            | Action::DecMplsTtl
            | Action::PopVlan
            | Action::DecNwTtl
            | Action::PopPbb => out.put_zeros(4),
            Action::SetMplsTtl { mpls_ttl: ttl } | Action::SetNwTtl { nw_ttl: ttl } => {
                out.put_u8(*ttl);
                out.put_zeros(3);
            }
            Action::PushVlan { ethertype }
            | Action::PushMpls { ethertype }
            | Action::PopMpls { ethertype }
            | Action::PushPbb { ethertype } => {
                out.put_u16(*ethertype);
                out.put_zeros(2);
            }
            Action::SetQueue { queue_id: id } | Action::Group { group_id: id } => out.put_u32(*id),
            Action::SetField { field } => field.emit(out)?,
            Action::Experimenter { experimenter, data } => {
                out.put_u32(*experimenter);
                out.put_slice(data);
            }
            Action::Unknown { body, .. } => out.put_slice(body),
        }
        pad_to(out, start);
        len.finish(out)?;
        Ok(())
    }

    /// Appends every action.
    pub fn emit_list(actions: &[Action], out: &mut Vec<u8>) -> EncodeResult<()> {
        actions.iter().try_for_each(|a| a.emit(out))
    }

    /// Describes this action if it is (or holds something) carried opaquely.
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        match self {
            Action::SetField { field } => field.opaque_parts(out),
            Action::Experimenter { experimenter, data } => {
                if *experimenter == NICIRA_EXPERIMENTER_ID && data.len() >= 2 {
                    out.push(format!(
                        "experimenter action 0x{experimenter:08x} subtype {} (Nicira)",
                        u16::from_be_bytes([data[0], data[1]])
                    ));
                } else {
                    out.push(format!("experimenter action 0x{experimenter:08x}"));
                }
            }
            Action::Unknown { action_type, .. } => {
                out.push(format!("unknown action type {action_type}"))
            }
            _ => {}
        }
    }

    /// Describes every opaque part of a list.
    pub fn list_opaque_parts(actions: &[Action], out: &mut Vec<String>) {
        actions.iter().for_each(|a| a.opaque_parts(out));
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Output { port, .. } => write!(f, "output:{}", crate::of13::port_name(*port)),
            Action::SetMplsTtl { mpls_ttl } => write!(f, "set_mpls_ttl:{mpls_ttl}"),
            Action::PushVlan { ethertype } => write!(f, "push_vlan:0x{ethertype:04x}"),
            Action::PushMpls { ethertype } => write!(f, "push_mpls:0x{ethertype:04x}"),
            Action::PopMpls { ethertype } => write!(f, "pop_mpls:0x{ethertype:04x}"),
            Action::PushPbb { ethertype } => write!(f, "push_pbb:0x{ethertype:04x}"),
            Action::SetQueue { queue_id } => write!(f, "set_queue:{queue_id}"),
            Action::Group { group_id } => write!(f, "group:{group_id}"),
            Action::SetNwTtl { nw_ttl } => write!(f, "set_nw_ttl:{nw_ttl}"),
            Action::SetField { field } => write!(f, "set_field:{field}"),
            Action::Experimenter { experimenter, data } => {
                write!(f, "experimenter:0x{experimenter:08x}:0x{}", to_hex(data))
            }
            Action::Unknown { action_type, body } => {
                write!(f, "action{action_type}:0x{}", to_hex(body))
            }
            other => f.write_str(
                &other
                    .action_type()
                    .name()
                    .unwrap_or("action")
                    .to_ascii_lowercase(),
            ),
        }
    }
}

#[cfg(test)]
#[path = "action_tests.rs"]
mod tests;
