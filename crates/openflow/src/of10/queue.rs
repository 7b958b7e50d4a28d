//! Queue configuration (spec 1.0.0 §5.2.2, §5.3.4): QUEUE_GET_CONFIG_REQUEST/REPLY and
//! `ofp_packet_queue`. Queue properties are the shared [`QueueProperty`]; 1.0 defines
//! only `OFPQT_NONE` (0, no body, kept as `Unknown`) and `OFPQT_MIN_RATE`.

use serde::{Deserialize, Serialize};

use crate::common::QueueProperty;
use crate::error::{DecodeError, DecodeResult, EncodeResult};
use crate::wire::{LenMark, Put, Reader};

/// `OFPQ_ALL`: all queues (in queue stats requests).
pub const OFPQ_ALL: u32 = 0xffff_ffff;
/// `OFPQ_MIN_RATE_UNCFG`: minimum rate not configured.
pub const OFPQ_MIN_RATE_UNCFG: u16 = 0xffff;

/// QUEUE_GET_CONFIG_REQUEST (`ofp_queue_get_config_request`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QueueGetConfigRequest {
    /// The port to query; must be a physical port (below `OFPP_MAX`).
    pub port: u16,
}

impl QueueGetConfigRequest {
    /// Body size.
    pub const LEN: usize = 4;

    /// Parses the message body; its size is fixed.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<QueueGetConfigRequest> {
        let port = r.u16()?;
        r.skip(2)?;
        r.finish()?;
        Ok(QueueGetConfigRequest { port })
    }

    /// Appends the message body.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u16(self.port);
        out.put_zeros(2);
        Ok(())
    }
}

/// `ofp_packet_queue`: one queue and its properties.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PacketQueue {
    /// The queue id.
    pub queue_id: u32,
    /// Its properties.
    pub properties: Vec<QueueProperty>,
}

impl PacketQueue {
    /// Size of the queue header (`queue_id`, `len`, pad).
    pub const HEADER_LEN: usize = 8;

    /// Parses one queue from the front of `r`.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<PacketQueue> {
        let offset = r.offset();
        r.need(Self::HEADER_LEN)?;
        let len = r.peek_u16(4)? as usize;
        // `ofp_packet_queue.len`: "Length in bytes of this queue desc." It counts the
        // 8-byte queue header itself.
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
        q.skip(4)?;
        Ok(PacketQueue {
            queue_id,
            properties: QueueProperty::parse_list(&mut q)?,
        })
    }

    /// Appends the queue, its length patched in.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        out.put_u32(self.queue_id);
        let len = LenMark::new(out, start, "ofp_packet_queue");
        out.put_zeros(2);
        for p in &self.properties {
            p.emit(out)?;
        }
        len.finish(out)?;
        Ok(())
    }
}

/// QUEUE_GET_CONFIG_REPLY (`ofp_queue_get_config_reply`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QueueGetConfigReply {
    /// The port queried.
    pub port: u16,
    /// Its queues.
    pub queues: Vec<PacketQueue>,
}

impl QueueGetConfigReply {
    /// Body size before the queues.
    pub const FIXED_LEN: usize = 8;

    /// Parses the message body.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<QueueGetConfigReply> {
        let port = r.u16()?;
        r.skip(6)?;
        let mut queues = Vec::new();
        while !r.is_empty() {
            queues.push(PacketQueue::parse(r)?);
        }
        Ok(QueueGetConfigReply { port, queues })
    }

    /// Appends the message body.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u16(self.port);
        out.put_zeros(6);
        for q in &self.queues {
            q.emit(out)?;
        }
        Ok(())
    }
}
