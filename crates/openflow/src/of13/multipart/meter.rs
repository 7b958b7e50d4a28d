//! The meter bodies of a MULTIPART_REPLY: `ofp_meter_stats`, `ofp_meter_config` and
//! `ofp_meter_features`.

use serde::{Deserialize, Serialize};

use super::stats::Counter;
use crate::error::{DecodeResult, EncodeResult};
use crate::of13::entries::entry;
use crate::of13::meter::MeterBand;
use crate::wire::{LenMark, Put, Reader};

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
