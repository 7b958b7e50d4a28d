//! Statistics (spec 1.0.0 §5.3.5): STATS_REQUEST and STATS_REPLY with every body 1.0
//! defines. Vendor statistics keep their vendor id and an opaque body; statistics types
//! 1.0 does not define are kept whole and opaque.
//!
//! Both messages start `type: u16, flags: u16`; the body's layout follows from `type`.

use serde::{Deserialize, Serialize};

use super::action::Action;
use super::flow_match::Match;
use crate::common::{AggregateStats, DescStats, PortCounters};
use crate::error::{DecodeError, DecodeResult, EncodeResult};
use crate::open_enum;
use crate::types::FixedStr;
use crate::wire::{LenMark, Put, Reader};

/// `ofp_stats_reply_flags`: more replies follow this one.
pub const OFPSF_REPLY_MORE: u16 = 1 << 0;

/// `table_id` meaning all tables (flow and aggregate requests).
pub const OFPTT_ALL: u8 = 0xff;
/// `table_id` of the emergency table.
pub const OFPTT_EMERG: u8 = 0xfe;

open_enum! {
    /// `ofp_stats_types`.
    pub enum StatsType: u16 {
        /// Description of the switch.
        Desc = 0 => "DESC",
        /// Individual flow statistics.
        Flow = 1 => "FLOW",
        /// Aggregate flow statistics.
        Aggregate = 2 => "AGGREGATE",
        /// Flow table statistics.
        Table = 3 => "TABLE",
        /// Physical port statistics.
        Port = 4 => "PORT",
        /// Queue statistics for a port.
        Queue = 5 => "QUEUE",
        /// Vendor extension.
        Vendor = 0xffff => "VENDOR",
    }
}

/// STATS_REQUEST (`ofp_stats_request`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsRequest {
    /// `OFPSF_REQ_*` flags (none are defined in 1.0).
    pub flags: u16,
    /// What is asked for.
    pub body: StatsRequestBody,
}

/// The body of a STATS_REQUEST.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "stats_type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StatsRequestBody {
    /// `OFPST_DESC`: no body.
    Desc,
    /// `OFPST_FLOW`: `ofp_flow_stats_request`.
    Flow(FlowStatsRequest),
    /// `OFPST_AGGREGATE`: `ofp_aggregate_stats_request` (same layout as the flow one).
    Aggregate(FlowStatsRequest),
    /// `OFPST_TABLE`: no body.
    Table,
    /// `OFPST_PORT`: `ofp_port_stats_request`.
    Port(PortStatsRequest),
    /// `OFPST_QUEUE`: `ofp_queue_stats_request`.
    Queue(QueueStatsRequest),
    /// `OFPST_VENDOR`: vendor id and an opaque body.
    Vendor {
        /// The vendor id.
        vendor: u32,
        /// Everything after the vendor id.
        #[serde(with = "crate::types::hex")]
        data: Vec<u8>,
    },
    /// A statistics type 1.0 does not define, carried opaquely.
    Unknown {
        /// The statistics type.
        raw_type: u16,
        /// Everything after `type` and `flags`.
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
}

/// `ofp_flow_stats_request` / `ofp_aggregate_stats_request`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowStatsRequest {
    /// Fields to match.
    #[serde(rename = "match")]
    pub match_: Match,
    /// Table to read, `OFPTT_ALL` for all tables, `OFPTT_EMERG` for the emergency table.
    pub table_id: u8,
    /// Require matching entries to include this as an output port; `OFPP_NONE` means
    /// no restriction.
    pub out_port: u16,
}

impl FlowStatsRequest {
    /// Wire size.
    pub const LEN: usize = Match::LEN + 4;

    /// Parses exactly [`Self::LEN`] bytes.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<FlowStatsRequest> {
        let m = Match::parse(r)?;
        let table_id = r.u8()?;
        r.skip(1)?;
        let out_port = r.u16()?;
        r.finish()?;
        Ok(FlowStatsRequest {
            match_: m,
            table_id,
            out_port,
        })
    }

    /// Appends the request.
    pub fn emit(&self, out: &mut Vec<u8>) {
        self.match_.emit(out);
        out.put_u8(self.table_id);
        out.put_zeros(1);
        out.put_u16(self.out_port);
    }
}

/// `ofp_port_stats_request`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortStatsRequest {
    /// The port, or `OFPP_NONE` for all ports.
    pub port_no: u16,
}

/// `ofp_queue_stats_request`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueStatsRequest {
    /// The port, or `OFPP_ALL` for all ports.
    pub port_no: u16,
    /// The queue, or `OFPQ_ALL` for all queues.
    pub queue_id: u32,
}

impl StatsRequestBody {
    /// The statistics type.
    pub fn stats_type(&self) -> StatsType {
        match self {
            StatsRequestBody::Desc => StatsType::Desc,
            StatsRequestBody::Flow(_) => StatsType::Flow,
            StatsRequestBody::Aggregate(_) => StatsType::Aggregate,
            StatsRequestBody::Table => StatsType::Table,
            StatsRequestBody::Port(_) => StatsType::Port,
            StatsRequestBody::Queue(_) => StatsType::Queue,
            StatsRequestBody::Vendor { .. } => StatsType::Vendor,
            StatsRequestBody::Unknown { raw_type, .. } => StatsType::from_raw(*raw_type),
        }
    }
}

impl StatsRequest {
    /// Body size before the type-specific part.
    pub const FIXED_LEN: usize = 4;

    /// Parses the message body.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<StatsRequest> {
        let raw_type = r.u16()?;
        let flags = r.u16()?;
        let body = match StatsType::from_raw(raw_type) {
            StatsType::Desc => StatsRequestBody::Desc,
            StatsType::Table => StatsRequestBody::Table,
            StatsType::Flow => StatsRequestBody::Flow(FlowStatsRequest::parse(
                &mut r.clone().with_layer("ofp_flow_stats_request"),
            )?),
            StatsType::Aggregate => StatsRequestBody::Aggregate(FlowStatsRequest::parse(
                &mut r.clone().with_layer("ofp_aggregate_stats_request"),
            )?),
            StatsType::Port => {
                let mut b = r.clone().with_layer("ofp_port_stats_request");
                let port_no = b.u16()?;
                b.skip(6)?;
                b.finish()?;
                StatsRequestBody::Port(PortStatsRequest { port_no })
            }
            StatsType::Queue => {
                let mut b = r.clone().with_layer("ofp_queue_stats_request");
                let port_no = b.u16()?;
                b.skip(2)?;
                let queue_id = b.u32()?;
                b.finish()?;
                StatsRequestBody::Queue(QueueStatsRequest { port_no, queue_id })
            }
            StatsType::Vendor => {
                let mut b = r.clone();
                StatsRequestBody::Vendor {
                    vendor: b.u32()?,
                    data: b.rest().to_vec(),
                }
            }
            StatsType::Unknown(raw_type) => StatsRequestBody::Unknown {
                raw_type,
                body: r.clone().rest().to_vec(),
            },
        };
        if matches!(body, StatsRequestBody::Desc | StatsRequestBody::Table) {
            // `ofp_stats_types`, OFPST_DESC and OFPST_TABLE: "The request body is empty."
            r.clone()
                .with_layer(match body {
                    StatsRequestBody::Desc => "ofp_stats_request(DESC)",
                    _ => "ofp_stats_request(TABLE)",
                })
                .finish()?;
        }
        r.rest();
        Ok(StatsRequest { flags, body })
    }

    /// Appends the message body.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u16(self.body.stats_type().to_raw());
        out.put_u16(self.flags);
        match &self.body {
            StatsRequestBody::Desc | StatsRequestBody::Table => {}
            StatsRequestBody::Flow(f) | StatsRequestBody::Aggregate(f) => f.emit(out),
            StatsRequestBody::Port(p) => {
                out.put_u16(p.port_no);
                out.put_zeros(6);
            }
            StatsRequestBody::Queue(q) => {
                out.put_u16(q.port_no);
                out.put_zeros(2);
                out.put_u32(q.queue_id);
            }
            StatsRequestBody::Vendor { vendor, data } => {
                out.put_u32(*vendor);
                out.put_slice(data);
            }
            StatsRequestBody::Unknown { body, .. } => out.put_slice(body),
        }
        Ok(())
    }
}

/// STATS_REPLY (`ofp_stats_reply`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsReply {
    /// `OFPSF_*` flags ([`OFPSF_REPLY_MORE`]).
    pub flags: u16,
    /// The statistics.
    pub body: StatsReplyBody,
}

/// The body of a STATS_REPLY.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "stats_type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StatsReplyBody {
    /// `OFPST_DESC`: `ofp_desc_stats`.
    Desc(Box<DescStats>),
    /// `OFPST_FLOW`: a list of `ofp_flow_stats`.
    Flow {
        /// One entry per flow.
        stats: Vec<FlowStats>,
    },
    /// `OFPST_AGGREGATE`: `ofp_aggregate_stats_reply`.
    Aggregate(AggregateStats),
    /// `OFPST_TABLE`: a list of `ofp_table_stats`.
    Table {
        /// One entry per table.
        stats: Vec<TableStats>,
    },
    /// `OFPST_PORT`: a list of `ofp_port_stats`.
    Port {
        /// One entry per port.
        stats: Vec<PortStats>,
    },
    /// `OFPST_QUEUE`: a list of `ofp_queue_stats`.
    Queue {
        /// One entry per queue.
        stats: Vec<QueueStats>,
    },
    /// `OFPST_VENDOR`: vendor id and an opaque body.
    Vendor {
        /// The vendor id.
        vendor: u32,
        /// Everything after the vendor id.
        #[serde(with = "crate::types::hex")]
        data: Vec<u8>,
    },
    /// A statistics type 1.0 does not define, carried opaquely.
    Unknown {
        /// The statistics type.
        raw_type: u16,
        /// Everything after `type` and `flags`.
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
}

/// `ofp_flow_stats`: one flow entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowStats {
    /// The flow's table.
    pub table_id: u8,
    /// The flow's match.
    #[serde(rename = "match")]
    pub match_: Match,
    /// Time alive, seconds part.
    pub duration_sec: u32,
    /// Time alive beyond `duration_sec`, nanoseconds.
    pub duration_nsec: u32,
    /// Priority of the entry.
    pub priority: u16,
    /// Idle timeout (seconds).
    pub idle_timeout: u16,
    /// Hard timeout (seconds).
    pub hard_timeout: u16,
    /// Opaque controller-issued identifier.
    pub cookie: u64,
    /// Packets matched.
    pub packet_count: u64,
    /// Bytes matched.
    pub byte_count: u64,
    /// The entry's actions.
    pub actions: Vec<Action>,
}

impl FlowStats {
    /// Size before the actions.
    pub const FIXED_LEN: usize = 88;

    /// Parses one entry from the front of `r`.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<FlowStats> {
        let offset = r.offset();
        let len = r.peek_u16(0)? as usize;
        // `ofp_flow_stats.length`: "Length of this entry." It counts the fixed part.
        if len < Self::FIXED_LEN {
            return Err(DecodeError::LengthTooShort {
                layer: "ofp_flow_stats",
                offset,
                length: len,
                min: Self::FIXED_LEN,
            });
        }
        let mut e = r.sub(len, "ofp_flow_stats")?;
        e.skip(2)?;
        let table_id = e.u8()?;
        e.skip(1)?;
        let m = Match::parse(&mut e)?;
        let duration_sec = e.u32()?;
        let duration_nsec = e.u32()?;
        let priority = e.u16()?;
        let idle_timeout = e.u16()?;
        let hard_timeout = e.u16()?;
        e.skip(6)?;
        Ok(FlowStats {
            table_id,
            match_: m,
            duration_sec,
            duration_nsec,
            priority,
            idle_timeout,
            hard_timeout,
            cookie: e.u64()?,
            packet_count: e.u64()?,
            byte_count: e.u64()?,
            actions: Action::parse_list(&mut e)?,
        })
    }

    /// Appends the entry, its length patched in.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        let len = LenMark::new(out, start, "ofp_flow_stats");
        out.put_u8(self.table_id);
        out.put_zeros(1);
        self.match_.emit(out);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
        out.put_u16(self.priority);
        out.put_u16(self.idle_timeout);
        out.put_u16(self.hard_timeout);
        out.put_zeros(6);
        out.put_u64(self.cookie);
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
        Action::emit_list(&self.actions, out)?;
        len.finish(out)?;
        Ok(())
    }
}

/// `ofp_table_stats`: one flow table.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TableStats {
    /// The table's id (lower ids are looked up first).
    pub table_id: u8,
    /// The table's name, NUL-padded.
    pub name: FixedStr<32>,
    /// `OFPFW_*` wildcards the table supports.
    pub wildcards: u32,
    /// Max number of entries supported.
    pub max_entries: u32,
    /// Number of active entries.
    pub active_count: u32,
    /// Packets looked up in the table.
    pub lookup_count: u64,
    /// Packets that hit the table.
    pub matched_count: u64,
}

impl TableStats {
    /// Wire size.
    pub const LEN: usize = 64;

    /// Parses exactly [`Self::LEN`] bytes.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<TableStats> {
        let table_id = r.u8()?;
        r.skip(3)?;
        let t = TableStats {
            table_id,
            name: FixedStr(r.array()?),
            wildcards: r.u32()?,
            max_entries: r.u32()?,
            active_count: r.u32()?,
            lookup_count: r.u64()?,
            matched_count: r.u64()?,
        };
        r.finish()?;
        Ok(t)
    }

    /// Appends the entry.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u8(self.table_id);
        out.put_zeros(3);
        out.put_slice(&self.name.0);
        out.put_u32(self.wildcards);
        out.put_u32(self.max_entries);
        out.put_u32(self.active_count);
        out.put_u64(self.lookup_count);
        out.put_u64(self.matched_count);
    }
}

/// `ofp_port_stats`: counters of one port (all ones where unavailable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PortStats {
    /// The port.
    pub port_no: u16,
    /// The counters.
    #[serde(flatten)]
    pub counters: PortCounters,
}

impl PortStats {
    /// Wire size.
    pub const LEN: usize = 104;

    /// Parses exactly [`Self::LEN`] bytes.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<PortStats> {
        let port_no = r.u16()?;
        r.skip(6)?;
        let p = PortStats {
            port_no,
            counters: PortCounters::parse(r)?,
        };
        r.finish()?;
        Ok(p)
    }

    /// Appends the entry.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u16(self.port_no);
        out.put_zeros(6);
        self.counters.emit(out);
    }
}

/// `ofp_queue_stats`: counters of one queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QueueStats {
    /// The port the queue belongs to.
    pub port_no: u16,
    /// The queue.
    pub queue_id: u32,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Packets dropped due to overrun.
    pub tx_errors: u64,
}

impl QueueStats {
    /// Wire size.
    pub const LEN: usize = 32;

    /// Parses exactly [`Self::LEN`] bytes.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<QueueStats> {
        let port_no = r.u16()?;
        r.skip(2)?;
        let q = QueueStats {
            port_no,
            queue_id: r.u32()?,
            tx_bytes: r.u64()?,
            tx_packets: r.u64()?,
            tx_errors: r.u64()?,
        };
        r.finish()?;
        Ok(q)
    }

    /// Appends the entry.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u16(self.port_no);
        out.put_zeros(2);
        out.put_u32(self.queue_id);
        out.put_u64(self.tx_bytes);
        out.put_u64(self.tx_packets);
        out.put_u64(self.tx_errors);
    }
}

/// Parses a list of fixed-size entries filling `r`.
fn fixed_list<T>(
    r: &mut Reader<'_>,
    len: usize,
    layer: &'static str,
    parse: fn(&mut Reader<'_>) -> DecodeResult<T>,
) -> DecodeResult<Vec<T>> {
    let mut v = Vec::with_capacity(r.remaining() / len);
    while !r.is_empty() {
        v.push(parse(&mut r.sub(len, layer)?)?);
    }
    Ok(v)
}

impl StatsReplyBody {
    /// The statistics type.
    pub fn stats_type(&self) -> StatsType {
        match self {
            StatsReplyBody::Desc(_) => StatsType::Desc,
            StatsReplyBody::Flow { .. } => StatsType::Flow,
            StatsReplyBody::Aggregate(_) => StatsType::Aggregate,
            StatsReplyBody::Table { .. } => StatsType::Table,
            StatsReplyBody::Port { .. } => StatsType::Port,
            StatsReplyBody::Queue { .. } => StatsType::Queue,
            StatsReplyBody::Vendor { .. } => StatsType::Vendor,
            StatsReplyBody::Unknown { raw_type, .. } => StatsType::from_raw(*raw_type),
        }
    }
}

impl StatsReply {
    /// Body size before the type-specific part.
    pub const FIXED_LEN: usize = 4;

    /// Parses the message body.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<StatsReply> {
        let raw_type = r.u16()?;
        let flags = r.u16()?;
        let body = match StatsType::from_raw(raw_type) {
            StatsType::Desc => StatsReplyBody::Desc(Box::new(DescStats::parse(
                &mut r.clone().with_layer("ofp_desc_stats"),
            )?)),
            StatsType::Flow => {
                let mut stats = Vec::new();
                let mut b = r.clone();
                while !b.is_empty() {
                    stats.push(FlowStats::parse(&mut b)?);
                }
                StatsReplyBody::Flow { stats }
            }
            StatsType::Aggregate => StatsReplyBody::Aggregate(AggregateStats::parse(
                &mut r.clone().with_layer("ofp_aggregate_stats_reply"),
            )?),
            StatsType::Table => StatsReplyBody::Table {
                stats: fixed_list(
                    &mut r.clone(),
                    TableStats::LEN,
                    "ofp_table_stats",
                    TableStats::parse,
                )?,
            },
            StatsType::Port => StatsReplyBody::Port {
                stats: fixed_list(
                    &mut r.clone(),
                    PortStats::LEN,
                    "ofp_port_stats",
                    PortStats::parse,
                )?,
            },
            StatsType::Queue => StatsReplyBody::Queue {
                stats: fixed_list(
                    &mut r.clone(),
                    QueueStats::LEN,
                    "ofp_queue_stats",
                    QueueStats::parse,
                )?,
            },
            StatsType::Vendor => {
                let mut b = r.clone();
                StatsReplyBody::Vendor {
                    vendor: b.u32()?,
                    data: b.rest().to_vec(),
                }
            }
            StatsType::Unknown(raw_type) => StatsReplyBody::Unknown {
                raw_type,
                body: r.clone().rest().to_vec(),
            },
        };
        r.rest();
        Ok(StatsReply { flags, body })
    }

    /// Appends the message body.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u16(self.body.stats_type().to_raw());
        out.put_u16(self.flags);
        match &self.body {
            StatsReplyBody::Desc(d) => d.emit(out),
            StatsReplyBody::Flow { stats } => {
                for s in stats {
                    s.emit(out)?;
                }
            }
            StatsReplyBody::Aggregate(a) => a.emit(out),
            StatsReplyBody::Table { stats } => stats.iter().for_each(|s| s.emit(out)),
            StatsReplyBody::Port { stats } => stats.iter().for_each(|s| s.emit(out)),
            StatsReplyBody::Queue { stats } => stats.iter().for_each(|s| s.emit(out)),
            StatsReplyBody::Vendor { vendor, data } => {
                out.put_u32(*vendor);
                out.put_slice(data);
            }
            StatsReplyBody::Unknown { body, .. } => out.put_slice(body),
        }
        Ok(())
    }
}
