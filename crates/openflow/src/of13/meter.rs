//! Meters (§7.3.4.4): bands, METER_MOD and the meter constants.

use serde::{Deserialize, Serialize};

use crate::error::{DecodeResult, EncodeResult};
use crate::open_enum;
use crate::wire::{LenMark, Put, Reader};

/// `OFPM_MAX`: the last usable meter number.
pub const OFPM_MAX: u32 = 0xffff_0000;
/// `OFPM_SLOWPATH`: the meter for the slow datapath.
pub const OFPM_SLOWPATH: u32 = 0xffff_fffd;
/// `OFPM_CONTROLLER`: the meter for the controller connection.
pub const OFPM_CONTROLLER: u32 = 0xffff_fffe;
/// `OFPM_ALL`: all meters (stats requests, delete).
pub const OFPM_ALL: u32 = 0xffff_ffff;

/// `ofp_meter_flags` bits.
pub mod flags {
    /// Rate in kb/s.
    pub const KBPS: u16 = 1 << 0;
    /// Rate in packets/s.
    pub const PKTPS: u16 = 1 << 1;
    /// Do burst size.
    pub const BURST: u16 = 1 << 2;
    /// Collect statistics.
    pub const STATS: u16 = 1 << 3;
}

open_enum! {
    /// `ofp_meter_mod_command`.
    pub enum MeterModCommand: u16 {
        Add = 0 => "ADD",
        Modify = 1 => "MODIFY",
        Delete = 2 => "DELETE",
    }
}

open_enum! {
    /// `ofp_meter_band_type`.
    pub enum MeterBandType: u16 {
        Drop = 1 => "DROP",
        DscpRemark = 2 => "DSCP_REMARK",
        Experimenter = 0xffff => "EXPERIMENTER",
    }
}

/// One meter band: what happens above `rate`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "band", rename_all = "snake_case")]
pub enum MeterBand {
    /// `OFPMBT_DROP`: drop packets above the rate.
    Drop { rate: u32, burst_size: u32 },
    /// `OFPMBT_DSCP_REMARK`: raise the drop precedence by `prec_level`.
    DscpRemark {
        rate: u32,
        burst_size: u32,
        prec_level: u8,
    },
    /// `OFPMBT_EXPERIMENTER`: the experimenter id and an opaque rest.
    Experimenter {
        rate: u32,
        burst_size: u32,
        experimenter: u32,
        #[serde(with = "crate::types::hex")]
        data: Vec<u8>,
    },
    /// A band type this codec does not know: the bytes after rate and burst size.
    Unknown {
        band_type: u16,
        rate: u32,
        burst_size: u32,
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
}

impl MeterBand {
    /// The band's wire type.
    pub fn band_type(&self) -> MeterBandType {
        match self {
            MeterBand::Drop { .. } => MeterBandType::Drop,
            MeterBand::DscpRemark { .. } => MeterBandType::DscpRemark,
            MeterBand::Experimenter { .. } => MeterBandType::Experimenter,
            MeterBand::Unknown { band_type, .. } => MeterBandType::from_raw(*band_type),
        }
    }

    /// Parses one band.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<MeterBand> {
        // §7.3.4.4: "len ... Length in bytes of this band", at least the 12-byte
        // ofp_meter_band_header; the defined bands are 16 bytes.
        let t = r.tlv("ofp_meter_band", 12, 1, false)?;
        let kind = MeterBandType::from_raw(t.kind);
        let layer = match kind {
            MeterBandType::Drop => "ofp_meter_band_drop",
            MeterBandType::DscpRemark => "ofp_meter_band_dscp_remark",
            MeterBandType::Experimenter => "ofp_meter_band_experimenter",
            MeterBandType::Unknown(_) => "ofp_meter_band",
        };
        let mut b = t.body.with_layer(layer);
        let rate = b.u32()?;
        let burst_size = b.u32()?;
        let band = match kind {
            MeterBandType::Drop => {
                b.skip(4)?;
                MeterBand::Drop { rate, burst_size }
            }
            MeterBandType::DscpRemark => {
                let prec_level = b.u8()?;
                b.skip(3)?;
                MeterBand::DscpRemark {
                    rate,
                    burst_size,
                    prec_level,
                }
            }
            MeterBandType::Experimenter => MeterBand::Experimenter {
                rate,
                burst_size,
                experimenter: b.u32()?,
                data: b.rest().to_vec(),
            },
            MeterBandType::Unknown(band_type) => MeterBand::Unknown {
                band_type,
                rate,
                burst_size,
                body: b.rest().to_vec(),
            },
        };
        b.finish_element(t.offset, t.raw.len())?;
        Ok(band)
    }

    /// Parses bands until `r` is empty.
    pub fn parse_list(r: &mut Reader<'_>) -> DecodeResult<Vec<MeterBand>> {
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(MeterBand::parse(r)?);
        }
        Ok(out)
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        out.put_u16(self.band_type().to_raw());
        let len = LenMark::new(out, start, "ofp_meter_band");
        match self {
            MeterBand::Drop { rate, burst_size } => {
                out.put_u32(*rate);
                out.put_u32(*burst_size);
                out.put_zeros(4);
            }
            MeterBand::DscpRemark {
                rate,
                burst_size,
                prec_level,
            } => {
                out.put_u32(*rate);
                out.put_u32(*burst_size);
                out.put_u8(*prec_level);
                out.put_zeros(3);
            }
            MeterBand::Experimenter {
                rate,
                burst_size,
                experimenter,
                data,
            } => {
                out.put_u32(*rate);
                out.put_u32(*burst_size);
                out.put_u32(*experimenter);
                out.put_slice(data);
            }
            MeterBand::Unknown {
                rate,
                burst_size,
                body,
                ..
            } => {
                out.put_u32(*rate);
                out.put_u32(*burst_size);
                out.put_slice(body);
            }
        }
        len.finish(out)?;
        Ok(())
    }

    /// Appends every element of the list, in order.
    pub fn emit_list(bands: &[MeterBand], out: &mut Vec<u8>) -> EncodeResult<()> {
        bands.iter().try_for_each(|b| b.emit(out))
    }

    /// Appends a description of each part carried opaquely (see [`crate::Message::opaque_parts`]).
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        match self {
            MeterBand::Experimenter { experimenter, .. } => {
                out.push(format!("experimenter meter band 0x{experimenter:08x}"))
            }
            MeterBand::Unknown { band_type, .. } => {
                out.push(format!("unknown meter band type {band_type}"))
            }
            _ => {}
        }
    }
}

/// METER_MOD (`ofp_meter_mod`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeterMod {
    /// Add, modify or delete.
    pub command: MeterModCommand,
    /// `OFPMF_*` bits.
    pub flags: u16,
    /// The meter to act on.
    pub meter_id: u32,
    /// The bands, applied by rate (for delete: none).
    pub bands: Vec<MeterBand>,
}

impl MeterMod {
    /// Parses a `MeterMod` from `r`, which holds exactly that structure.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<MeterMod> {
        Ok(MeterMod {
            command: MeterModCommand::from_raw(r.u16()?),
            flags: r.u16()?,
            meter_id: r.u32()?,
            bands: MeterBand::parse_list(r)?,
        })
    }

    /// Appends the wire form to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u16(self.command.to_raw());
        out.put_u16(self.flags);
        out.put_u32(self.meter_id);
        MeterBand::emit_list(&self.bands, out)
    }

    /// Appends a description of each part carried opaquely (see [`crate::Message::opaque_parts`]).
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        self.bands.iter().for_each(|b| b.opaque_parts(out));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DecodeError;

    #[test]
    fn meter_mod_round_trips() {
        // 4-45-ofp_meter_mod.packet body.
        let body = [
            0, 0, 0, 14, 0, 0, 0, 100, // add, flags, meter 100
            0, 1, 0, 16, 0, 0, 3, 0xe8, 0, 0, 0, 10, 0, 0, 0, 0, // drop
            0, 2, 0, 16, 0, 0, 3, 0xe8, 0, 0, 0, 10, 1, 0, 0, 0, // dscp remark
            0xff, 0xff, 0, 16, 0, 0, 3, 0xe8, 0, 0, 0, 10, 0, 0, 3, 0xe7, // experimenter 999
        ];
        let m = MeterMod::parse(&mut Reader::new(&body, 8, "t")).unwrap();
        assert_eq!(
            m.bands[1],
            MeterBand::DscpRemark {
                rate: 1000,
                burst_size: 10,
                prec_level: 1
            }
        );
        let mut out = Vec::new();
        m.emit(&mut out).unwrap();
        assert_eq!(out, body);
        let mut o = Vec::new();
        m.opaque_parts(&mut o);
        assert_eq!(o, vec!["experimenter meter band 0x000003e7"]);
    }

    #[test]
    fn band_lengths_are_checked() {
        let long_drop = [
            0, 1, 0, 20, 0, 0, 3, 0xe8, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        assert!(matches!(
            MeterBand::parse_list(&mut Reader::new(&long_drop, 0, "t")),
            Err(DecodeError::LengthMismatch {
                layer: "ofp_meter_band_drop",
                ..
            })
        ));
        let over = [0, 1, 0, 24, 0, 0, 3, 0xe8, 0, 0, 0, 10, 0, 0, 0, 0];
        assert!(matches!(
            MeterBand::parse_list(&mut Reader::new(&over, 0, "t")),
            Err(DecodeError::LengthOverrun { .. })
        ));
    }
}
