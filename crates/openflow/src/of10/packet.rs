//! Packets to and from the controller (spec 1.0.0 §5.3.6, §5.4.1): PACKET_IN and
//! PACKET_OUT.

use serde::{Deserialize, Serialize};

use super::action::Action;
use crate::error::{DecodeError, DecodeResult, EncodeResult};
use crate::open_enum;
use crate::wire::{LenMark, Put, Reader};

open_enum! {
    /// `ofp_packet_in_reason`.
    pub enum PacketInReason: u8 {
        /// No matching flow.
        NoMatch = 0 => "NO_MATCH",
        /// Action explicitly output to the controller.
        Action = 1 => "ACTION",
    }
}

/// PACKET_IN (`ofp_packet_in`): a packet sent to the controller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PacketIn {
    /// The buffer the switch keeps the packet in, or `OFP_NO_BUFFER`.
    pub buffer_id: u32,
    /// Full length of the frame.
    pub total_len: u16,
    /// Port the frame was received on.
    pub in_port: u16,
    /// Why the packet is being sent.
    pub reason: PacketInReason,
    /// The frame, or its first bytes when buffered.
    #[serde(with = "crate::types::hex")]
    pub data: Vec<u8>,
}

impl PacketIn {
    /// Body size before the frame (`ofp_packet_in` is 18 bytes with its header; the
    /// pad byte after `reason` is where the frame's alignment comes from).
    pub const FIXED_LEN: usize = 10;

    /// Parses the message body.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<PacketIn> {
        let buffer_id = r.u32()?;
        let total_len = r.u16()?;
        let in_port = r.u16()?;
        let reason = PacketInReason::from_raw(r.u8()?);
        r.skip(1)?;
        Ok(PacketIn {
            buffer_id,
            total_len,
            in_port,
            reason,
            data: r.rest().to_vec(),
        })
    }

    /// Appends the message body.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u32(self.buffer_id);
        out.put_u16(self.total_len);
        out.put_u16(self.in_port);
        out.put_u8(self.reason.to_raw());
        out.put_zeros(1);
        out.put_slice(&self.data);
        Ok(())
    }
}

/// PACKET_OUT (`ofp_packet_out`): send a packet through a list of actions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PacketOut {
    /// The switch's buffer holding the packet, or `OFP_NO_BUFFER` (then `data` is the
    /// packet).
    pub buffer_id: u32,
    /// The packet's input port (`OFPP_NONE` if none).
    pub in_port: u16,
    /// The actions to apply.
    pub actions: Vec<Action>,
    /// The frame, when not buffered.
    #[serde(with = "crate::types::hex")]
    pub data: Vec<u8>,
}

impl PacketOut {
    /// Body size before the actions.
    pub const FIXED_LEN: usize = 8;

    /// Parses the message body.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<PacketOut> {
        let buffer_id = r.u32()?;
        let in_port = r.u16()?;
        let at = r.offset();
        let actions_len = r.u16()? as usize;
        // `ofp_packet_out.actions_len`: "Size of action array in bytes." The data
        // follows the actions ("The length is inferred from the length field in the
        // header"), so the action array must fit inside the body.
        if actions_len > r.remaining() {
            return Err(DecodeError::LengthOverrun {
                layer: "ofp_packet_out.actions_len",
                offset: at,
                length: actions_len,
                available: r.remaining(),
            });
        }
        let mut ar = r.sub(actions_len, "ofp_packet_out.actions")?;
        let actions = Action::parse_list(&mut ar)?;
        Ok(PacketOut {
            buffer_id,
            in_port,
            actions,
            data: r.rest().to_vec(),
        })
    }

    /// Appends the message body.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u32(self.buffer_id);
        out.put_u16(self.in_port);
        let actions_start = out.len() + 2;
        let len = LenMark::new(out, actions_start, "ofp_packet_out.actions_len");
        Action::emit_list(&self.actions, out)?;
        len.finish(out)?;
        out.put_slice(&self.data);
        Ok(())
    }
}
