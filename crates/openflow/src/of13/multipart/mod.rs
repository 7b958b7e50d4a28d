//! MULTIPART_REQUEST and MULTIPART_REPLY (§7.3.5): statistics, descriptions and
//! features, every `OFPMP_*` type.
//!
//! Both messages are `type: u16, flags: u16, pad[4]` followed by a body whose layout
//! depends on the type. Reply bodies are mostly lists of entries: some carry their own
//! length ([`FlowStats`], [`GroupStats`], [`GroupDesc`], [`MeterStats`],
//! [`MeterConfig`], [`TableFeatures`]), which must agree with their content and their
//! container; others have a fixed size ([`TableStats`], [`PortStats`], [`QueueStats`]),
//! and the body must hold a whole number of them. Experimenter bodies and unknown types
//! are carried opaquely.

use serde::{Deserialize, Serialize};

use crate::common::{AggregateStats, DescStats, PortCounters};
use crate::error::{DecodeError, DecodeResult, EncodeResult};
use crate::of13::group::{Bucket, GroupType};
use crate::of13::instruction::Instruction;
use crate::of13::meter::MeterBand;
use crate::of13::oxm::Match;
use crate::of13::port::Port;
use crate::of13::table_features::TableFeatures;
use crate::open_enum;
use crate::wire::{LenMark, Put, Reader};

open_enum! {
    /// `ofp_multipart_type`.
    pub enum MultipartType: u16 {
        Desc = 0 => "DESC",
        Flow = 1 => "FLOW",
        Aggregate = 2 => "AGGREGATE",
        Table = 3 => "TABLE",
        PortStats = 4 => "PORT_STATS",
        Queue = 5 => "QUEUE",
        Group = 6 => "GROUP",
        GroupDesc = 7 => "GROUP_DESC",
        GroupFeatures = 8 => "GROUP_FEATURES",
        Meter = 9 => "METER",
        MeterConfig = 10 => "METER_CONFIG",
        MeterFeatures = 11 => "METER_FEATURES",
        TableFeatures = 12 => "TABLE_FEATURES",
        PortDesc = 13 => "PORT_DESC",
        Experimenter = 0xffff => "EXPERIMENTER",
    }
}

/// `OFPMPF_REQ_MORE`: more requests follow.
pub const OFPMPF_REQ_MORE: u16 = 1;
/// `OFPMPF_REPLY_MORE`: more replies follow.
pub const OFPMPF_REPLY_MORE: u16 = 1;

/// A MULTIPART_REQUEST (`ofp_multipart_request`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultipartRequest {
    /// `OFPMPF_REQ_*` bitmap.
    pub flags: u16,
    pub body: MultipartRequestBody,
}

/// The body of a MULTIPART_REQUEST, by type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MultipartRequestBody {
    /// `OFPMP_DESC`: no body.
    Desc,
    /// `OFPMP_FLOW`: `ofp_flow_stats_request`.
    Flow(FlowStatsRequest),
    /// `OFPMP_AGGREGATE`: `ofp_aggregate_stats_request` (same layout as FLOW).
    Aggregate(FlowStatsRequest),
    /// `OFPMP_TABLE`: no body.
    Table,
    /// `OFPMP_PORT_STATS`: `ofp_port_stats_request`; `OFPP_ANY` for all ports.
    PortStats { port_no: u32 },
    /// `OFPMP_QUEUE`: `ofp_queue_stats_request`; `OFPP_ANY` / `OFPQ_ALL` for all.
    Queue { port_no: u32, queue_id: u32 },
    /// `OFPMP_GROUP`: `ofp_group_stats_request`; `OFPG_ALL` for all groups.
    Group { group_id: u32 },
    /// `OFPMP_GROUP_DESC`: no body.
    GroupDesc,
    /// `OFPMP_GROUP_FEATURES`: no body.
    GroupFeatures,
    /// `OFPMP_METER`: `ofp_meter_multipart_request`; `OFPM_ALL` for all meters.
    Meter { meter_id: u32 },
    /// `OFPMP_METER_CONFIG`: `ofp_meter_multipart_request`.
    MeterConfig { meter_id: u32 },
    /// `OFPMP_METER_FEATURES`: no body.
    MeterFeatures,
    /// `OFPMP_TABLE_FEATURES`: empty to query, or the features to set.
    TableFeatures { tables: Vec<TableFeatures> },
    /// `OFPMP_PORT_DESC`: no body.
    PortDesc,
    /// `OFPMP_EXPERIMENTER`: `ofp_experimenter_multipart_header` and opaque data.
    Experimenter(ExperimenterMultipart),
    /// A multipart type this codec does not know, carried opaquely.
    Unknown {
        mp_type: u16,
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
}

/// A MULTIPART_REPLY (`ofp_multipart_reply`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MultipartReply {
    /// `OFPMPF_REPLY_*` bitmap.
    pub flags: u16,
    pub body: MultipartReplyBody,
}

/// The body of a MULTIPART_REPLY, by type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MultipartReplyBody {
    /// `OFPMP_DESC`: `ofp_desc` (boxed: 1056 bytes would size every reply).
    Desc(Box<DescStats>),
    /// `OFPMP_FLOW`: `ofp_flow_stats` per flow entry.
    Flow { stats: Vec<FlowStats> },
    /// `OFPMP_AGGREGATE`: `ofp_aggregate_stats_reply`.
    Aggregate(AggregateStats),
    /// `OFPMP_TABLE`: `ofp_table_stats` per table.
    Table { stats: Vec<TableStats> },
    /// `OFPMP_PORT_STATS`: `ofp_port_stats` per port.
    PortStats { stats: Vec<PortStats> },
    /// `OFPMP_QUEUE`: `ofp_queue_stats` per queue.
    Queue { stats: Vec<QueueStats> },
    /// `OFPMP_GROUP`: `ofp_group_stats` per group.
    Group { stats: Vec<GroupStats> },
    /// `OFPMP_GROUP_DESC`: `ofp_group_desc` per group.
    GroupDesc { groups: Vec<GroupDesc> },
    /// `OFPMP_GROUP_FEATURES`: `ofp_group_features`.
    GroupFeatures(GroupFeatures),
    /// `OFPMP_METER`: `ofp_meter_stats` per meter.
    Meter { stats: Vec<MeterStats> },
    /// `OFPMP_METER_CONFIG`: `ofp_meter_config` per meter.
    MeterConfig { meters: Vec<MeterConfig> },
    /// `OFPMP_METER_FEATURES`: `ofp_meter_features`.
    MeterFeatures(MeterFeatures),
    /// `OFPMP_TABLE_FEATURES`: `ofp_table_features` per table.
    TableFeatures { tables: Vec<TableFeatures> },
    /// `OFPMP_PORT_DESC`: `ofp_port` per port.
    PortDesc { ports: Vec<Port> },
    /// `OFPMP_EXPERIMENTER`: `ofp_experimenter_multipart_header` and opaque data.
    Experimenter(ExperimenterMultipart),
    /// A multipart type this codec does not know, carried opaquely.
    Unknown {
        mp_type: u16,
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
}

/// Reads the multipart header; returns the type and flags.
fn parse_header(r: &mut Reader<'_>) -> DecodeResult<(u16, u16)> {
    let mp_type = r.u16()?;
    let flags = r.u16()?;
    r.skip(4)?;
    Ok((mp_type, flags))
}

fn emit_header(out: &mut Vec<u8>, mp_type: MultipartType, flags: u16) {
    out.put_u16(mp_type.to_raw());
    out.put_u16(flags);
    out.put_zeros(4);
}

/// Fails unless `r` is consumed: a body the type defines as empty or fixed-size must
/// not carry extra bytes.
fn done(r: Reader<'_>, layer: &'static str) -> DecodeResult<()> {
    r.with_layer(layer).finish()
}

/// Splits off one length-prefixed entry whose u16 length sits `len_at` bytes in.
///
/// The length must cover at least the entry's fixed part (`min`), else
/// `LengthTooShort`, and must fit in what is left of the body, else `LengthOverrun`.
/// The caller parses the entry from the returned reader, whose trailing list
/// (instructions, buckets, bands, counters, properties) must fill it exactly; a length
/// that disagrees with the content fails there, never past the entry.
pub(crate) fn entry<'a>(
    r: &mut Reader<'a>,
    layer: &'static str,
    len_at: usize,
    min: usize,
) -> DecodeResult<Reader<'a>> {
    let offset = r.offset();
    if r.remaining() < len_at + 2 {
        return Err(DecodeError::Truncated {
            layer,
            offset,
            needed: len_at + 2,
            available: r.remaining(),
        });
    }
    let len = r.peek_u16(len_at)? as usize;
    if len < min {
        return Err(DecodeError::LengthTooShort {
            layer,
            offset,
            length: len,
            min,
        });
    }
    r.sub(len, layer)
}

/// Parses a body of fixed-size entries. The body must be a whole number of them
/// (§7.3.5.4, §7.3.5.6, §7.3.5.8: "The body of the reply consists of an array of the
/// following", with no length per entry).
fn fixed_list<'a, T>(
    r: &mut Reader<'a>,
    layer: &'static str,
    size: usize,
    parse: impl Fn(&mut Reader<'a>) -> DecodeResult<T>,
) -> DecodeResult<Vec<T>> {
    if r.remaining() % size != 0 {
        return Err(DecodeError::LengthMismatch {
            layer,
            offset: r.offset(),
            length: r.remaining(),
            expected: r.remaining() - r.remaining() % size,
        });
    }
    let mut v = Vec::with_capacity(r.remaining() / size);
    while !r.is_empty() {
        let mut e = r.sub(size, layer)?;
        v.push(parse(&mut e)?);
        e.finish()?;
    }
    Ok(v)
}

impl MultipartRequest {
    /// A request with no flags set (the whole request in one message).
    pub fn new(body: MultipartRequestBody) -> MultipartRequest {
        MultipartRequest { flags: 0, body }
    }

    /// True when `OFPMPF_REQ_MORE` says more parts of this request follow.
    pub fn more(&self) -> bool {
        self.flags & OFPMPF_REQ_MORE != 0
    }

    /// Parses the message body after `ofp_header` (absolute offset 8).
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<MultipartRequest> {
        let (mp_type, flags) = parse_header(r)?;
        let mut b = r.sub(r.remaining(), "ofp_multipart_request body")?;
        use MultipartType as T;
        let body = match T::from_raw(mp_type) {
            T::Desc => MultipartRequestBody::Desc,
            T::Flow => MultipartRequestBody::Flow(FlowStatsRequest::parse(&mut b)?),
            T::Aggregate => MultipartRequestBody::Aggregate(FlowStatsRequest::parse(&mut b)?),
            T::Table => MultipartRequestBody::Table,
            T::PortStats => {
                let port_no = b.u32()?;
                b.skip(4)?;
                MultipartRequestBody::PortStats { port_no }
            }
            T::Queue => MultipartRequestBody::Queue {
                port_no: b.u32()?,
                queue_id: b.u32()?,
            },
            T::Group => {
                let group_id = b.u32()?;
                b.skip(4)?;
                MultipartRequestBody::Group { group_id }
            }
            T::GroupDesc => MultipartRequestBody::GroupDesc,
            T::GroupFeatures => MultipartRequestBody::GroupFeatures,
            T::Meter | T::MeterConfig => {
                let meter_id = b.u32()?;
                b.skip(4)?;
                if mp_type == T::Meter.to_raw() {
                    MultipartRequestBody::Meter { meter_id }
                } else {
                    MultipartRequestBody::MeterConfig { meter_id }
                }
            }
            T::MeterFeatures => MultipartRequestBody::MeterFeatures,
            T::TableFeatures => MultipartRequestBody::TableFeatures {
                tables: TableFeatures::parse_list(&mut b)?,
            },
            T::PortDesc => MultipartRequestBody::PortDesc,
            T::Experimenter => {
                MultipartRequestBody::Experimenter(ExperimenterMultipart::parse(&mut b)?)
            }
            T::Unknown(mp_type) => MultipartRequestBody::Unknown {
                mp_type,
                body: b.rest().to_vec(),
            },
        };
        done(b, "ofp_multipart_request body")?;
        Ok(MultipartRequest { flags, body })
    }

    /// The multipart type.
    pub fn kind(&self) -> MultipartType {
        use MultipartRequestBody as B;
        use MultipartType as T;
        match &self.body {
            B::Desc => T::Desc,
            B::Flow(_) => T::Flow,
            B::Aggregate(_) => T::Aggregate,
            B::Table => T::Table,
            B::PortStats { .. } => T::PortStats,
            B::Queue { .. } => T::Queue,
            B::Group { .. } => T::Group,
            B::GroupDesc => T::GroupDesc,
            B::GroupFeatures => T::GroupFeatures,
            B::Meter { .. } => T::Meter,
            B::MeterConfig { .. } => T::MeterConfig,
            B::MeterFeatures => T::MeterFeatures,
            B::TableFeatures { .. } => T::TableFeatures,
            B::PortDesc => T::PortDesc,
            B::Experimenter(_) => T::Experimenter,
            B::Unknown { mp_type, .. } => T::from_raw(*mp_type),
        }
    }

    /// Appends the message body (everything after `ofp_header`) to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        emit_header(out, self.kind(), self.flags);
        use MultipartRequestBody as B;
        match &self.body {
            B::Desc
            | B::Table
            | B::GroupDesc
            | B::GroupFeatures
            | B::MeterFeatures
            | B::PortDesc => {}
            B::Flow(f) | B::Aggregate(f) => f.emit(out)?,
            B::PortStats { port_no } => {
                out.put_u32(*port_no);
                out.put_zeros(4);
            }
            B::Queue { port_no, queue_id } => {
                out.put_u32(*port_no);
                out.put_u32(*queue_id);
            }
            B::Group { group_id } => {
                out.put_u32(*group_id);
                out.put_zeros(4);
            }
            B::Meter { meter_id } | B::MeterConfig { meter_id } => {
                out.put_u32(*meter_id);
                out.put_zeros(4);
            }
            B::TableFeatures { tables } => {
                for t in tables {
                    t.emit(out)?;
                }
            }
            B::Experimenter(e) => e.emit(out),
            B::Unknown { body, .. } => out.put_slice(body),
        }
        Ok(())
    }

    /// Appends a description of each part carried opaquely to `out`.
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        use MultipartRequestBody as B;
        match &self.body {
            B::Flow(f) | B::Aggregate(f) => f.match_.opaque_parts(out),
            B::TableFeatures { tables } => tables.iter().for_each(|t| t.opaque_parts(out)),
            B::Experimenter(e) => e.opaque_parts("request", out),
            B::Unknown { mp_type, body } => out.push(format!(
                "unknown multipart request type {mp_type} ({} body bytes)",
                body.len()
            )),
            _ => {}
        }
    }
}

impl MultipartReply {
    /// A reply with no flags set (the whole reply in one message).
    pub fn new(body: MultipartReplyBody) -> MultipartReply {
        MultipartReply { flags: 0, body }
    }

    /// True when `OFPMPF_REPLY_MORE` says more parts of this reply follow (with the
    /// same xid).
    pub fn more(&self) -> bool {
        self.flags & OFPMPF_REPLY_MORE != 0
    }

    /// Parses the message body after `ofp_header` (absolute offset 8).
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<MultipartReply> {
        let (mp_type, flags) = parse_header(r)?;
        let mut b = r.sub(r.remaining(), "ofp_multipart_reply body")?;
        use MultipartType as T;
        let body = match T::from_raw(mp_type) {
            T::Desc => MultipartReplyBody::Desc(Box::new(DescStats::parse(&mut b)?)),
            T::Flow => MultipartReplyBody::Flow {
                stats: list(&mut b, FlowStats::parse)?,
            },
            T::Aggregate => MultipartReplyBody::Aggregate(AggregateStats::parse(&mut b)?),
            T::Table => MultipartReplyBody::Table {
                stats: fixed_list(
                    &mut b,
                    "ofp_table_stats",
                    TableStats::LEN,
                    TableStats::parse,
                )?,
            },
            T::PortStats => MultipartReplyBody::PortStats {
                stats: fixed_list(&mut b, "ofp_port_stats", PortStats::LEN, PortStats::parse)?,
            },
            T::Queue => MultipartReplyBody::Queue {
                stats: fixed_list(
                    &mut b,
                    "ofp_queue_stats",
                    QueueStats::LEN,
                    QueueStats::parse,
                )?,
            },
            T::Group => MultipartReplyBody::Group {
                stats: list(&mut b, GroupStats::parse)?,
            },
            T::GroupDesc => MultipartReplyBody::GroupDesc {
                groups: list(&mut b, GroupDesc::parse)?,
            },
            T::GroupFeatures => MultipartReplyBody::GroupFeatures(GroupFeatures::parse(&mut b)?),
            T::Meter => MultipartReplyBody::Meter {
                stats: list(&mut b, MeterStats::parse)?,
            },
            T::MeterConfig => MultipartReplyBody::MeterConfig {
                meters: list(&mut b, MeterConfig::parse)?,
            },
            T::MeterFeatures => MultipartReplyBody::MeterFeatures(MeterFeatures::parse(&mut b)?),
            T::TableFeatures => MultipartReplyBody::TableFeatures {
                tables: TableFeatures::parse_list(&mut b)?,
            },
            T::PortDesc => MultipartReplyBody::PortDesc {
                ports: fixed_list(&mut b, "ofp_port", Port::LEN, Port::parse)?,
            },
            T::Experimenter => {
                MultipartReplyBody::Experimenter(ExperimenterMultipart::parse(&mut b)?)
            }
            T::Unknown(mp_type) => MultipartReplyBody::Unknown {
                mp_type,
                body: b.rest().to_vec(),
            },
        };
        done(b, "ofp_multipart_reply body")?;
        Ok(MultipartReply { flags, body })
    }

    /// The multipart type.
    pub fn kind(&self) -> MultipartType {
        use MultipartReplyBody as B;
        use MultipartType as T;
        match &self.body {
            B::Desc(_) => T::Desc,
            B::Flow { .. } => T::Flow,
            B::Aggregate(_) => T::Aggregate,
            B::Table { .. } => T::Table,
            B::PortStats { .. } => T::PortStats,
            B::Queue { .. } => T::Queue,
            B::Group { .. } => T::Group,
            B::GroupDesc { .. } => T::GroupDesc,
            B::GroupFeatures(_) => T::GroupFeatures,
            B::Meter { .. } => T::Meter,
            B::MeterConfig { .. } => T::MeterConfig,
            B::MeterFeatures(_) => T::MeterFeatures,
            B::TableFeatures { .. } => T::TableFeatures,
            B::PortDesc { .. } => T::PortDesc,
            B::Experimenter(_) => T::Experimenter,
            B::Unknown { mp_type, .. } => T::from_raw(*mp_type),
        }
    }

    /// Appends the message body (everything after `ofp_header`) to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        emit_header(out, self.kind(), self.flags);
        use MultipartReplyBody as B;
        match &self.body {
            B::Desc(d) => d.emit(out),
            B::Flow { stats } => {
                for s in stats {
                    s.emit(out)?;
                }
            }
            B::Aggregate(a) => a.emit(out),
            B::Table { stats } => stats.iter().for_each(|s| s.emit(out)),
            B::PortStats { stats } => stats.iter().for_each(|s| s.emit(out)),
            B::Queue { stats } => stats.iter().for_each(|s| s.emit(out)),
            B::Group { stats } => {
                for s in stats {
                    s.emit(out)?;
                }
            }
            B::GroupDesc { groups } => {
                for g in groups {
                    g.emit(out)?;
                }
            }
            B::GroupFeatures(g) => g.emit(out),
            B::Meter { stats } => {
                for s in stats {
                    s.emit(out)?;
                }
            }
            B::MeterConfig { meters } => {
                for m in meters {
                    m.emit(out)?;
                }
            }
            B::MeterFeatures(m) => m.emit(out),
            B::TableFeatures { tables } => {
                for t in tables {
                    t.emit(out)?;
                }
            }
            B::PortDesc { ports } => {
                for p in ports {
                    p.emit(out)?;
                }
            }
            B::Experimenter(e) => e.emit(out),
            B::Unknown { body, .. } => out.put_slice(body),
        }
        Ok(())
    }

    /// Appends a description of each part carried opaquely to `out`.
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        use MultipartReplyBody as B;
        match &self.body {
            B::Flow { stats } => {
                for s in stats {
                    s.match_.opaque_parts(out);
                    Instruction::list_opaque_parts(&s.instructions, out);
                }
            }
            B::GroupDesc { groups } => groups
                .iter()
                .flat_map(|g| &g.buckets)
                .for_each(|b| b.opaque_parts(out)),
            B::MeterConfig { meters } => meters
                .iter()
                .flat_map(|m| &m.bands)
                .for_each(|b| b.opaque_parts(out)),
            B::TableFeatures { tables } => tables.iter().for_each(|t| t.opaque_parts(out)),
            B::Experimenter(e) => e.opaque_parts("reply", out),
            B::Unknown { mp_type, body } => out.push(format!(
                "unknown multipart reply type {mp_type} ({} body bytes)",
                body.len()
            )),
            _ => {}
        }
    }
}

/// Parses a body of length-prefixed entries.
fn list<'a, T>(
    r: &mut Reader<'a>,
    parse: impl Fn(&mut Reader<'a>) -> DecodeResult<T>,
) -> DecodeResult<Vec<T>> {
    let mut v = Vec::new();
    while !r.is_empty() {
        v.push(parse(r)?);
    }
    Ok(v)
}

/// `ofp_flow_stats_request` and `ofp_aggregate_stats_request` (§7.3.5.2, §7.3.5.3):
/// which flow entries to report.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FlowStatsRequest {
    /// Table to read, or `OFPTT_ALL`.
    pub table_id: u8,
    /// Require an output action to this port; `OFPP_ANY` for no restriction.
    pub out_port: u32,
    /// Require an output to this group; `OFPG_ANY` for no restriction.
    pub out_group: u32,
    /// Require these cookie bits (under `cookie_mask`) to match.
    pub cookie: u64,
    pub cookie_mask: u64,
    /// Fields to match.
    #[serde(rename = "match")]
    pub match_: Match,
}

impl FlowStatsRequest {
    /// Bytes before the match.
    pub const FIXED_LEN: usize = 32;

    /// Parses the request from `r`; the match and its padding end it.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<FlowStatsRequest> {
        let table_id = r.u8()?;
        r.skip(3)?;
        let out_port = r.u32()?;
        let out_group = r.u32()?;
        r.skip(4)?;
        Ok(FlowStatsRequest {
            table_id,
            out_port,
            out_group,
            cookie: r.u64()?,
            cookie_mask: r.u64()?,
            match_: Match::parse(r)?,
        })
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u8(self.table_id);
        out.put_zeros(3);
        out.put_u32(self.out_port);
        out.put_u32(self.out_group);
        out.put_zeros(4);
        out.put_u64(self.cookie);
        out.put_u64(self.cookie_mask);
        self.match_.emit(out)
    }
}

/// `ofp_flow_stats` (§7.3.5.2): one flow entry and its counters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FlowStats {
    pub table_id: u8,
    /// Time the flow entry has been alive: seconds, and nanoseconds beyond them.
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub priority: u16,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    /// `OFPFF_*` bitmap.
    pub flags: u16,
    pub cookie: u64,
    pub packet_count: u64,
    pub byte_count: u64,
    #[serde(rename = "match")]
    pub match_: Match,
    pub instructions: Vec<Instruction>,
}

impl FlowStats {
    /// Bytes before the match.
    pub const FIXED_LEN: usize = 48;
    /// The smallest entry: the fixed part and an empty match padded to 8.
    pub const MIN_LEN: usize = 56;

    /// Parses one entry (its length field first) from `r`.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<FlowStats> {
        // §7.3.5.2, ofp_flow_stats: "uint16_t length; /* Length of this entry. */";
        // the entry holds the fixed part, the padded match and the instructions.
        let mut e = entry(r, "ofp_flow_stats", 0, Self::MIN_LEN)?;
        e.skip(2)?;
        let table_id = e.u8()?;
        e.skip(1)?;
        let duration_sec = e.u32()?;
        let duration_nsec = e.u32()?;
        let priority = e.u16()?;
        let idle_timeout = e.u16()?;
        let hard_timeout = e.u16()?;
        let flags = e.u16()?;
        e.skip(4)?;
        Ok(FlowStats {
            table_id,
            duration_sec,
            duration_nsec,
            priority,
            idle_timeout,
            hard_timeout,
            flags,
            cookie: e.u64()?,
            packet_count: e.u64()?,
            byte_count: e.u64()?,
            match_: Match::parse(&mut e)?,
            // The instructions fill the rest of the entry.
            instructions: Instruction::parse_list(&mut e)?,
        })
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        let len = LenMark::new(out, start, "ofp_flow_stats");
        out.put_u8(self.table_id);
        out.put_zeros(1);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
        out.put_u16(self.priority);
        out.put_u16(self.idle_timeout);
        out.put_u16(self.hard_timeout);
        out.put_u16(self.flags);
        out.put_zeros(4);
        out.put_u64(self.cookie);
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
        self.match_.emit(out)?;
        Instruction::emit_list(&self.instructions, out)?;
        len.finish(out)?;
        Ok(())
    }
}

/// `ofp_table_stats` (§7.3.5.4): 24 bytes per table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TableStats {
    pub table_id: u8,
    /// Active flow entries.
    pub active_count: u32,
    /// Packets looked up in the table.
    pub lookup_count: u64,
    /// Packets that hit the table.
    pub matched_count: u64,
}

impl TableStats {
    /// Bytes on the wire.
    pub const LEN: usize = 24;

    /// Parses the structure from `r` (which the caller has sized).
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<TableStats> {
        let table_id = r.u8()?;
        r.skip(3)?;
        Ok(TableStats {
            table_id,
            active_count: r.u32()?,
            lookup_count: r.u64()?,
            matched_count: r.u64()?,
        })
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u8(self.table_id);
        out.put_zeros(3);
        out.put_u32(self.active_count);
        out.put_u64(self.lookup_count);
        out.put_u64(self.matched_count);
    }
}

/// `ofp_port_stats` (§7.3.5.6): 112 bytes per port. Counters a switch does not keep
/// are all ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PortStats {
    pub port_no: u32,
    /// The counters.
    #[serde(flatten)]
    pub counters: PortCounters,
    /// Time the port has been alive: seconds, and nanoseconds beyond them.
    pub duration_sec: u32,
    pub duration_nsec: u32,
}

impl PortStats {
    /// Bytes on the wire.
    pub const LEN: usize = 112;

    /// Parses the structure from `r` (which the caller has sized).
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<PortStats> {
        let port_no = r.u32()?;
        r.skip(4)?;
        Ok(PortStats {
            port_no,
            counters: PortCounters::parse(r)?,
            duration_sec: r.u32()?,
            duration_nsec: r.u32()?,
        })
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u32(self.port_no);
        out.put_zeros(4);
        self.counters.emit(out);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
    }
}

/// `ofp_queue_stats` (§7.3.5.8): 40 bytes per queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QueueStats {
    pub port_no: u32,
    pub queue_id: u32,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_errors: u64,
    pub duration_sec: u32,
    pub duration_nsec: u32,
}

impl QueueStats {
    /// Bytes on the wire.
    pub const LEN: usize = 40;

    /// Parses the structure from `r` (which the caller has sized).
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<QueueStats> {
        Ok(QueueStats {
            port_no: r.u32()?,
            queue_id: r.u32()?,
            tx_bytes: r.u64()?,
            tx_packets: r.u64()?,
            tx_errors: r.u64()?,
            duration_sec: r.u32()?,
            duration_nsec: r.u32()?,
        })
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u32(self.port_no);
        out.put_u32(self.queue_id);
        out.put_u64(self.tx_bytes);
        out.put_u64(self.tx_packets);
        out.put_u64(self.tx_errors);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
    }
}

/// A packet and byte counter pair: `ofp_bucket_counter` (per group bucket) and
/// `ofp_meter_band_stats` (per meter band) have this same 16-byte layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Counter {
    pub packet_count: u64,
    pub byte_count: u64,
}

impl Counter {
    /// Bytes on the wire.
    pub const LEN: usize = 16;

    /// Parses the counters filling the rest of an entry, which must be a whole number
    /// of them.
    fn parse_rest(e: &mut Reader<'_>, layer: &'static str) -> DecodeResult<Vec<Counter>> {
        fixed_list(e, layer, Counter::LEN, |c| {
            Ok(Counter {
                packet_count: c.u64()?,
                byte_count: c.u64()?,
            })
        })
    }

    fn emit(&self, out: &mut Vec<u8>) {
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
    }
}

/// `ofp_group_stats` (§7.3.5.9): one group's counters, and one [`Counter`] per bucket.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GroupStats {
    pub group_id: u32,
    /// Flow entries or groups that forward to this group.
    pub ref_count: u32,
    pub packet_count: u64,
    pub byte_count: u64,
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub bucket_stats: Vec<Counter>,
}

impl GroupStats {
    /// Bytes before the bucket counters.
    pub const FIXED_LEN: usize = 40;

    /// Parses one entry (its length field first) from `r`.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<GroupStats> {
        // §7.3.5.9, ofp_group_stats: "uint16_t length; /* Length of this entry. */";
        // what follows the fixed part is "struct ofp_bucket_counter bucket_stats[0]".
        let mut e = entry(r, "ofp_group_stats", 0, Self::FIXED_LEN)?;
        e.skip(4)?;
        let group_id = e.u32()?;
        let ref_count = e.u32()?;
        e.skip(4)?;
        Ok(GroupStats {
            group_id,
            ref_count,
            packet_count: e.u64()?,
            byte_count: e.u64()?,
            duration_sec: e.u32()?,
            duration_nsec: e.u32()?,
            bucket_stats: Counter::parse_rest(&mut e, "ofp_bucket_counter")?,
        })
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        let len = LenMark::new(out, start, "ofp_group_stats");
        out.put_zeros(2);
        out.put_u32(self.group_id);
        out.put_u32(self.ref_count);
        out.put_zeros(4);
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
        self.bucket_stats.iter().for_each(|c| c.emit(out));
        len.finish(out)?;
        Ok(())
    }
}

/// `ofp_group_desc` (§7.3.5.10): one group's type and buckets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupDesc {
    pub group_type: GroupType,
    pub group_id: u32,
    pub buckets: Vec<Bucket>,
}

impl GroupDesc {
    /// Bytes before the buckets.
    pub const FIXED_LEN: usize = 8;

    /// Parses one entry (its length field first) from `r`.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<GroupDesc> {
        // §7.3.5.10, ofp_group_desc: "uint16_t length; /* Length of this entry. */",
        // the buckets filling it ("List of buckets - 0 or more").
        let mut e = entry(r, "ofp_group_desc", 0, Self::FIXED_LEN)?;
        e.skip(2)?;
        let group_type = GroupType::from_raw(e.u8()?);
        e.skip(1)?;
        Ok(GroupDesc {
            group_type,
            group_id: e.u32()?,
            // The buckets fill the rest of the entry.
            buckets: Bucket::parse_list(&mut e)?,
        })
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        let len = LenMark::new(out, start, "ofp_group_desc");
        out.put_u8(self.group_type.to_raw());
        out.put_zeros(1);
        out.put_u32(self.group_id);
        Bucket::emit_list(&self.buckets, out)?;
        len.finish(out)?;
        Ok(())
    }
}

/// `ofp_group_features` (§7.3.5.11): 40 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GroupFeatures {
    /// Bitmap of `OFPGT_*` group types supported.
    pub types: u32,
    /// `OFPGFC_*` capability bitmap.
    pub capabilities: u32,
    /// Maximum number of groups of each type (all, select, indirect, fast failover).
    pub max_groups: [u32; 4],
    /// Bitmaps of `OFPAT_*` action types supported, per group type.
    pub actions: [u32; 4],
}

impl GroupFeatures {
    /// Bytes on the wire.
    pub const LEN: usize = 40;

    /// Parses the structure from `r` (which the caller has sized).
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<GroupFeatures> {
        let mut g = GroupFeatures {
            types: r.u32()?,
            capabilities: r.u32()?,
            ..GroupFeatures::default()
        };
        for m in &mut g.max_groups {
            *m = r.u32()?;
        }
        for a in &mut g.actions {
            *a = r.u32()?;
        }
        Ok(g)
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u32(self.types);
        out.put_u32(self.capabilities);
        self.max_groups.iter().for_each(|m| out.put_u32(*m));
        self.actions.iter().for_each(|a| out.put_u32(*a));
    }
}

/// `ofp_meter_stats` (§7.3.5.12): one meter's counters, and one [`Counter`] per band.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MeterStats {
    pub meter_id: u32,
    /// Flow entries that use this meter.
    pub flow_count: u32,
    pub packet_in_count: u64,
    pub byte_in_count: u64,
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub band_stats: Vec<Counter>,
}

impl MeterStats {
    /// Bytes before the band counters.
    pub const FIXED_LEN: usize = 40;

    /// Parses one entry from `r`; its length field sits after the meter id.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<MeterStats> {
        // §7.3.5.12, ofp_meter_stats: "uint16_t len; /* Length in bytes of this
        // stats. */", followed by "struct ofp_meter_band_stats band_stats[0]".
        let mut e = entry(r, "ofp_meter_stats", 4, Self::FIXED_LEN)?;
        let meter_id = e.u32()?;
        e.skip(2 + 6)?;
        Ok(MeterStats {
            meter_id,
            flow_count: e.u32()?,
            packet_in_count: e.u64()?,
            byte_in_count: e.u64()?,
            duration_sec: e.u32()?,
            duration_nsec: e.u32()?,
            band_stats: Counter::parse_rest(&mut e, "ofp_meter_band_stats")?,
        })
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        out.put_u32(self.meter_id);
        let len = LenMark::new(out, start, "ofp_meter_stats");
        out.put_zeros(6);
        out.put_u32(self.flow_count);
        out.put_u64(self.packet_in_count);
        out.put_u64(self.byte_in_count);
        out.put_u32(self.duration_sec);
        out.put_u32(self.duration_nsec);
        self.band_stats.iter().for_each(|c| c.emit(out));
        len.finish(out)?;
        Ok(())
    }
}

/// `ofp_meter_config` (§7.3.5.13): one meter's flags and bands.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MeterConfig {
    /// `OFPMF_*` bitmap.
    pub flags: u16,
    pub meter_id: u32,
    pub bands: Vec<MeterBand>,
}

impl MeterConfig {
    /// Bytes before the bands.
    pub const FIXED_LEN: usize = 8;

    /// Parses one entry (its length field first) from `r`.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<MeterConfig> {
        // §7.3.5.13, ofp_meter_config: "uint16_t length; /* Length of this entry. */",
        // the bands filling it.
        let mut e = entry(r, "ofp_meter_config", 0, Self::FIXED_LEN)?;
        e.skip(2)?;
        Ok(MeterConfig {
            flags: e.u16()?,
            meter_id: e.u32()?,
            // The bands fill the rest of the entry.
            bands: MeterBand::parse_list(&mut e)?,
        })
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        let len = LenMark::new(out, start, "ofp_meter_config");
        out.put_u16(self.flags);
        out.put_u32(self.meter_id);
        MeterBand::emit_list(&self.bands, out)?;
        len.finish(out)?;
        Ok(())
    }
}

/// `ofp_meter_features` (§7.3.5.14): 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MeterFeatures {
    /// Maximum number of meters.
    pub max_meter: u32,
    /// Bitmap of `OFPMBT_*` band types supported (bit n for type n).
    pub band_types: u32,
    /// `OFPMF_*` capability bitmap.
    pub capabilities: u32,
    /// Maximum bands per meter.
    pub max_bands: u8,
    /// Maximum colour value.
    pub max_color: u8,
}

impl MeterFeatures {
    /// Bytes on the wire.
    pub const LEN: usize = 16;

    /// Parses the structure from `r` (which the caller has sized).
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<MeterFeatures> {
        let m = MeterFeatures {
            max_meter: r.u32()?,
            band_types: r.u32()?,
            capabilities: r.u32()?,
            max_bands: r.u8()?,
            max_color: r.u8()?,
        };
        r.skip(2)?;
        Ok(m)
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u32(self.max_meter);
        out.put_u32(self.band_types);
        out.put_u32(self.capabilities);
        out.put_u8(self.max_bands);
        out.put_u8(self.max_color);
        out.put_zeros(2);
    }
}

/// `ofp_experimenter_multipart_header` and the data after it (§7.3.5.15), in a
/// request or a reply. The data is opaque.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ExperimenterMultipart {
    pub experimenter: u32,
    pub exp_type: u32,
    #[serde(with = "crate::types::hex", default)]
    pub data: Vec<u8>,
}

impl ExperimenterMultipart {
    /// Parses the structure from `r` (which the caller has sized).
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<ExperimenterMultipart> {
        Ok(ExperimenterMultipart {
            experimenter: r.u32()?,
            exp_type: r.u32()?,
            data: r.rest().to_vec(),
        })
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u32(self.experimenter);
        out.put_u32(self.exp_type);
        out.put_slice(&self.data);
    }

    fn opaque_parts(&self, dir: &str, out: &mut Vec<String>) {
        out.push(format!(
            "experimenter multipart {dir} {:#x}/{} ({} data bytes)",
            self.experimenter,
            self.exp_type,
            self.data.len()
        ));
    }
}

#[cfg(test)]
#[path = "multipart_tests.rs"]
mod tests;
