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
//!
//! ```text
//! mod.rs  MultipartType, the two messages and their bodies by type: parse, emit, kind
//! flow    FlowStatsRequest (FLOW and AGGREGATE requests) and FlowStats
//! stats   TableStats, PortStats, QueueStats (fixed-size entries) and Counter
//! group   GroupStats, GroupDesc, GroupFeatures
//! meter   MeterStats, MeterConfig, MeterFeatures
//! ```
//!
//! The entry lists themselves are read by `of13/entries.rs`, which TABLE_FEATURES
//! ([`TableFeatures`], in `table_features.rs`) shares.

mod flow;
mod group;
mod meter;
mod stats;

use serde::{Deserialize, Serialize};

use crate::common::{AggregateStats, DescStats};
use crate::error::{DecodeResult, EncodeResult};
use crate::of13::entries::{fixed_list, list};
use crate::of13::instruction::Instruction;
use crate::of13::port::Port;
use crate::of13::table_features::TableFeatures;
use crate::open_enum;
use crate::wire::{Put, Reader};

pub use flow::{FlowStats, FlowStatsRequest};
pub use group::{GroupDesc, GroupFeatures, GroupStats};
pub use meter::{MeterConfig, MeterFeatures, MeterStats};
pub use stats::{Counter, PortStats, QueueStats, TableStats};

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
mod tests;
