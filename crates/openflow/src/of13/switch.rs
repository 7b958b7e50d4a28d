//! Switch and controller-channel messages: FEATURES_REPLY, EXPERIMENTER, TABLE_MOD,
//! QUEUE_GET_CONFIG, ROLE and the asynchronous-message configuration.

use serde::{Deserialize, Serialize};

use crate::common::QueueProperty;
use crate::error::{DecodeError, DecodeResult, EncodeResult};
use crate::open_enum;
use crate::wire::{LenMark, Put, Reader};

/// `ofp_capabilities` bits of FEATURES_REPLY.
pub mod capabilities {
    pub const FLOW_STATS: u32 = 1 << 0;
    pub const TABLE_STATS: u32 = 1 << 1;
    pub const PORT_STATS: u32 = 1 << 2;
    pub const GROUP_STATS: u32 = 1 << 3;
    pub const IP_REASM: u32 = 1 << 5;
    pub const QUEUE_STATS: u32 = 1 << 6;
    pub const PORT_BLOCKED: u32 = 1 << 8;
}

/// FEATURES_REPLY (`ofp_switch_features`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FeaturesReply {
    /// The datapath id: 48 bits of MAC address, 16 implementer-defined.
    pub datapath_id: u64,
    /// Packets the switch can buffer at once.
    pub n_buffers: u32,
    pub n_tables: u8,
    /// Which auxiliary connection this is (0 for the main one).
    pub auxiliary_id: u8,
    /// `OFPC_*` bits, see [`capabilities`].
    pub capabilities: u32,
    /// The 4 bytes that held `actions` in 1.0; reserved in 1.3, kept as received.
    pub reserved: u32,
}

impl FeaturesReply {
    /// Bytes on the wire (after the message header, for message bodies).
    pub const LEN: usize = 24;

    /// Parses a `FeaturesReply` from `r`, which holds exactly that structure.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<FeaturesReply> {
        let datapath_id = r.u64()?;
        let n_buffers = r.u32()?;
        let n_tables = r.u8()?;
        let auxiliary_id = r.u8()?;
        r.skip(2)?;
        let f = FeaturesReply {
            datapath_id,
            n_buffers,
            n_tables,
            auxiliary_id,
            capabilities: r.u32()?,
            reserved: r.u32()?,
        };
        r.finish()?;
        Ok(f)
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u64(self.datapath_id);
        out.put_u32(self.n_buffers);
        out.put_u8(self.n_tables);
        out.put_u8(self.auxiliary_id);
        out.put_zeros(2);
        out.put_u32(self.capabilities);
        out.put_u32(self.reserved);
        Ok(())
    }
}

/// EXPERIMENTER (`ofp_experimenter_header`): a vendor message, its body opaque.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Experimenter {
    /// The vendor's experimenter id (an IEEE OUI in the low 24 bits, or ONF-assigned).
    pub experimenter: u32,
    /// The vendor-defined message type.
    pub exp_type: u32,
    #[serde(with = "crate::types::hex")]
    /// The vendor-defined body.
    pub data: Vec<u8>,
}

impl Experimenter {
    /// Parses an `Experimenter` from `r`, which holds exactly that structure.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<Experimenter> {
        Ok(Experimenter {
            experimenter: r.u32()?,
            exp_type: r.u32()?,
            data: r.rest().to_vec(),
        })
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u32(self.experimenter);
        out.put_u32(self.exp_type);
        out.put_slice(&self.data);
        Ok(())
    }

    /// Appends a description of each part carried opaquely (see [`crate::Message::opaque_parts`]).
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        out.push(format!(
            "experimenter message 0x{:08x} type {}",
            self.experimenter, self.exp_type
        ));
    }
}

/// TABLE_MOD (`ofp_table_mod`). In 1.3 `config` has no defined bits left
/// (`OFPTC_DEPRECATED_MASK` = 3 from 1.1); kept raw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TableMod {
    /// The table, or `OFPTT_ALL`.
    pub table_id: u8,
    /// `OFPTC_*` bits (none defined in 1.3).
    pub config: u32,
}

impl TableMod {
    /// Bytes on the wire (after the message header, for message bodies).
    pub const LEN: usize = 8;

    /// Parses a `TableMod` from `r`, which holds exactly that structure.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<TableMod> {
        let table_id = r.u8()?;
        r.skip(3)?;
        let t = TableMod {
            table_id,
            config: r.u32()?,
        };
        r.finish()?;
        Ok(t)
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u8(self.table_id);
        out.put_zeros(3);
        out.put_u32(self.config);
        Ok(())
    }
}

/// `OFPQ_ALL`: all queues of a port.
pub const OFPQ_ALL: u32 = 0xffff_ffff;

/// QUEUE_GET_CONFIG_REQUEST (`ofp_queue_get_config_request`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QueueGetConfigRequest {
    /// The port to query, or `OFPP_ANY` for all.
    pub port: u32,
}

impl QueueGetConfigRequest {
    /// Bytes on the wire (after the message header, for message bodies).
    pub const LEN: usize = 8;

    /// Parses a `QueueGetConfigRequest` from `r`, which holds exactly that structure.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<QueueGetConfigRequest> {
        let port = r.u32()?;
        r.skip(4)?;
        r.finish()?;
        Ok(QueueGetConfigRequest { port })
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u32(self.port);
        out.put_zeros(4);
        Ok(())
    }
}

/// `ofp_packet_queue`: one queue and its properties.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PacketQueue {
    /// The queue's id on its port.
    pub queue_id: u32,
    /// The port the queue is attached to.
    pub port: u32,
    /// The queue's rates and experimenter properties.
    pub properties: Vec<QueueProperty>,
}

impl PacketQueue {
    pub const HEADER_LEN: usize = 16;

    /// Parses one queue. Its length is taken as it is: senders do not always pad
    /// queues or properties to 8 (the LINC vectors have 65-byte queues).
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<PacketQueue> {
        let offset = r.offset();
        let len = r.peek_u16(8).map_err(|_| r.truncated(Self::HEADER_LEN))? as usize;
        if len < Self::HEADER_LEN {
            return Err(DecodeError::LengthTooShort {
                layer: "ofp_packet_queue",
                offset,
                length: len,
                min: Self::HEADER_LEN,
            });
        }
        let mut q = r.sub(len, "ofp_packet_queue")?;
        let queue_id = q.u32()?;
        let port = q.u32()?;
        q.skip(8)?;
        Ok(PacketQueue {
            queue_id,
            port,
            properties: QueueProperty::parse_list(&mut q)?,
        })
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        out.put_u32(self.queue_id);
        out.put_u32(self.port);
        let len = LenMark::new(out, start, "ofp_packet_queue");
        out.put_zeros(6);
        self.properties.iter().try_for_each(|p| p.emit(out))?;
        len.finish(out)?;
        Ok(())
    }

    /// Appends a description of each part carried opaquely (see [`crate::Message::opaque_parts`]).
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        for p in &self.properties {
            match p {
                QueueProperty::Experimenter { experimenter, .. } => {
                    out.push(format!("experimenter queue property 0x{experimenter:08x}"))
                }
                QueueProperty::Unknown { prop_type, .. } => {
                    out.push(format!("unknown queue property {prop_type}"))
                }
                _ => {}
            }
        }
    }
}

/// QUEUE_GET_CONFIG_REPLY (`ofp_queue_get_config_reply`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueGetConfigReply {
    /// The port queried (`OFPP_ANY` for all).
    pub port: u32,
    /// The queues found.
    pub queues: Vec<PacketQueue>,
}

impl QueueGetConfigReply {
    /// Parses a `QueueGetConfigReply` from `r`, which holds exactly that structure.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<QueueGetConfigReply> {
        let port = r.u32()?;
        r.skip(4)?;
        let mut queues = Vec::new();
        while !r.is_empty() {
            queues.push(PacketQueue::parse(r)?);
        }
        Ok(QueueGetConfigReply { port, queues })
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u32(self.port);
        out.put_zeros(4);
        self.queues.iter().try_for_each(|q| q.emit(out))
    }

    /// Appends a description of each part carried opaquely (see [`crate::Message::opaque_parts`]).
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        self.queues.iter().for_each(|q| q.opaque_parts(out));
    }
}

open_enum! {
    /// `ofp_controller_role`.
    pub enum ControllerRole: u32 {
        NoChange = 0 => "NOCHANGE",
        Equal = 1 => "EQUAL",
        Master = 2 => "MASTER",
        Slave = 3 => "SLAVE",
    }
}

/// ROLE_REQUEST and ROLE_REPLY (`ofp_role_request`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Role {
    pub role: ControllerRole,
    /// Master election generation id; ignored for `NOCHANGE` and `EQUAL`.
    pub generation_id: u64,
}

impl Role {
    /// Bytes on the wire (after the message header, for message bodies).
    pub const LEN: usize = 16;

    /// Parses a `Role` from `r`, which holds exactly that structure.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<Role> {
        let role = ControllerRole::from_raw(r.u32()?);
        r.skip(4)?;
        let m = Role {
            role,
            generation_id: r.u64()?,
        };
        r.finish()?;
        Ok(m)
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u32(self.role.to_raw());
        out.put_zeros(4);
        out.put_u64(self.generation_id);
        Ok(())
    }
}

/// GET_ASYNC_REPLY and SET_ASYNC (`ofp_async_config`): which asynchronous messages
/// the switch sends on this channel. Each pair is `[master or equal, slave]`; each
/// mask has bit `n` set to get reason `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AsyncConfig {
    /// PACKET_IN reasons (`OFPR_*` bits).
    pub packet_in_mask: [u32; 2],
    /// PORT_STATUS reasons (`OFPPR_*` bits).
    pub port_status_mask: [u32; 2],
    /// FLOW_REMOVED reasons (`OFPRR_*` bits).
    pub flow_removed_mask: [u32; 2],
}

impl AsyncConfig {
    /// Bytes on the wire (after the message header, for message bodies).
    pub const LEN: usize = 24;

    /// Parses an `AsyncConfig` from `r`, which holds exactly that structure.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<AsyncConfig> {
        let c = AsyncConfig {
            packet_in_mask: [r.u32()?, r.u32()?],
            port_status_mask: [r.u32()?, r.u32()?],
            flow_removed_mask: [r.u32()?, r.u32()?],
        };
        r.finish()?;
        Ok(c)
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        for v in self
            .packet_in_mask
            .iter()
            .chain(&self.port_status_mask)
            .chain(&self.flow_removed_mask)
        {
            out.put_u32(*v);
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "switch_tests.rs"]
mod tests;
