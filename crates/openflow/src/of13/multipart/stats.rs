//! The fixed-size statistics entries: `ofp_table_stats`, `ofp_port_stats` and
//! `ofp_queue_stats` (a reply body holds a whole number of them), and the packet and
//! byte [`Counter`] that group and meter statistics end with.

use serde::{Deserialize, Serialize};

use crate::common::PortCounters;
use crate::error::DecodeResult;
use crate::of13::entries::fixed_list;
use crate::wire::{Put, Reader};

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
    pub(super) fn parse_rest(
        e: &mut Reader<'_>,
        layer: &'static str,
    ) -> DecodeResult<Vec<Counter>> {
        fixed_list(e, layer, Counter::LEN, |c| {
            Ok(Counter {
                packet_count: c.u64()?,
                byte_count: c.u64()?,
            })
        })
    }

    pub(super) fn emit(&self, out: &mut Vec<u8>) {
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
    }
}
