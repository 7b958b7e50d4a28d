//! Structures whose layout is the same in OpenFlow 1.0 and 1.3; each version's message
//! enum reuses them, so version differences stay in the version modules.

use serde::{Deserialize, Serialize};

use crate::error::{DecodeResult, EncodeResult};
use crate::types::FixedStr;
use crate::wire::{pad_to, LenMark, Put, Reader};

/// `OFPHET_VERSIONBITMAP`.
pub const HELLO_ELEM_VERSIONBITMAP: u16 = 1;

/// A HELLO message. OpenFlow 1.0 defines no body but tells receivers to ignore one;
/// 1.3 defines a list of elements (§7.5.1), of which the version bitmap is the only one.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Hello {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elements: Vec<HelloElement>,
}

/// One `ofp_hello_elem_header` element.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HelloElement {
    /// `OFPHET_VERSIONBITMAP`: bit `n` of the bitmap set means wire version `n` is
    /// supported. Kept as the raw 32-bit words, so any bitmap round-trips.
    VersionBitmap { bitmaps: Vec<u32> },
    /// An element type this codec does not know, carried opaquely.
    Unknown {
        elem_type: u16,
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
    /// A body that is not a list of elements (allowed in 1.0, where HELLO has no
    /// defined body); carried opaquely.
    Raw {
        #[serde(with = "crate::types::hex")]
        bytes: Vec<u8>,
    },
}

impl Hello {
    /// A HELLO advertising exactly these wire versions in a version bitmap.
    pub fn with_versions(versions: &[u8]) -> Hello {
        let words = versions
            .iter()
            .map(|v| *v as usize / 32)
            .max()
            .map_or(0, |m| m + 1);
        let mut bitmaps = vec![0u32; words];
        for v in versions {
            bitmaps[*v as usize / 32] |= 1 << (v % 32);
        }
        Hello {
            elements: vec![HelloElement::VersionBitmap { bitmaps }],
        }
    }

    /// The wire versions in the first version bitmap, if there is one.
    pub fn versions(&self) -> Option<Vec<u8>> {
        self.elements.iter().find_map(|e| match e {
            HelloElement::VersionBitmap { bitmaps } => Some(
                (0..bitmaps.len() * 32)
                    .filter(|&v| v < 256 && bitmaps[v / 32] & (1 << (v % 32)) != 0)
                    .map(|v| v as u8)
                    .collect(),
            ),
            _ => None,
        })
    }

    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<Hello> {
        let mut elements = Vec::new();
        let mut probe = r.clone();
        let parsed: DecodeResult<()> = (|| {
            while !probe.is_empty() {
                let mut t = probe.tlv("ofp_hello_elem", 4, 1, true)?;
                elements.push(if t.kind == HELLO_ELEM_VERSIONBITMAP {
                    let mut bitmaps = Vec::new();
                    while t.body.remaining() >= 4 {
                        bitmaps.push(t.body.u32()?);
                    }
                    if !t.body.is_empty() {
                        return Err(crate::DecodeError::Misaligned {
                            layer: "ofp_hello_elem_versionbitmap",
                            offset: t.offset,
                            length: t.raw.len(),
                            align: 4,
                        });
                    }
                    HelloElement::VersionBitmap { bitmaps }
                } else {
                    HelloElement::Unknown {
                        elem_type: t.kind,
                        body: t.body.rest().to_vec(),
                    }
                });
            }
            Ok(())
        })();
        match parsed {
            Ok(()) => {
                r.rest();
                Ok(Hello { elements })
            }
            Err(e) => Err(e),
        }
    }

    /// Like [`parse`](Self::parse), but a body that is not a valid element list is kept
    /// as one opaque `Raw` element instead of failing (OpenFlow 1.0 §5.5.1: "must be
    /// prepared to receive a hello message that includes a body, ignoring its contents").
    pub fn parse_lenient(r: &mut Reader<'_>) -> Hello {
        let mut probe = r.clone();
        match Hello::parse(&mut probe) {
            Ok(h) => {
                r.rest();
                h
            }
            Err(_) => Hello {
                elements: vec![HelloElement::Raw {
                    bytes: r.rest().to_vec(),
                }],
            },
        }
    }

    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        for e in &self.elements {
            let start = out.len();
            match e {
                HelloElement::VersionBitmap { bitmaps } => {
                    out.put_u16(HELLO_ELEM_VERSIONBITMAP);
                    let len = LenMark::new(out, start, "ofp_hello_elem_versionbitmap");
                    for b in bitmaps {
                        out.put_u32(*b);
                    }
                    let end = out.len();
                    len.finish_with(out, end)?;
                    pad_to(out, start);
                }
                HelloElement::Unknown { elem_type, body } => {
                    out.put_u16(*elem_type);
                    let len = LenMark::new(out, start, "ofp_hello_elem");
                    out.put_slice(body);
                    let end = out.len();
                    len.finish_with(out, end)?;
                    pad_to(out, start);
                }
                HelloElement::Raw { bytes } => out.put_slice(bytes),
            }
        }
        Ok(())
    }
}

/// An ERROR message body (`ofp_error_msg`): the layout is shared; the meaning of `type`
/// and `code` is per version (see `of10::ErrorType`, `of13::ErrorType`). In 1.3 the
/// type `0xffff` (`OFPET_EXPERIMENTER`) has a different layout, see [`ErrorBody`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ErrorBody {
    /// `ofp_error_experimenter_msg` (1.3 only): type 0xffff, exp_type, experimenter, data.
    Experimenter {
        exp_type: u16,
        experimenter: u32,
        #[serde(with = "crate::types::hex")]
        data: Vec<u8>,
    },
    /// `ofp_error_msg`: type, code, and (usually) the start of the offending message.
    Standard {
        err_type: u16,
        code: u16,
        #[serde(with = "crate::types::hex")]
        data: Vec<u8>,
    },
}

/// `OFPET_EXPERIMENTER`.
pub const ERROR_TYPE_EXPERIMENTER: u16 = 0xffff;

impl ErrorBody {
    /// `experimenter_errors` is true for 1.3, where type 0xffff has the experimenter layout.
    pub fn parse(r: &mut Reader<'_>, experimenter_errors: bool) -> DecodeResult<ErrorBody> {
        let err_type = r.u16()?;
        if experimenter_errors && err_type == ERROR_TYPE_EXPERIMENTER {
            let exp_type = r.u16()?;
            let experimenter = r.u32()?;
            return Ok(ErrorBody::Experimenter {
                exp_type,
                experimenter,
                data: r.rest().to_vec(),
            });
        }
        let code = r.u16()?;
        Ok(ErrorBody::Standard {
            err_type,
            code,
            data: r.rest().to_vec(),
        })
    }

    pub fn emit(&self, out: &mut Vec<u8>) {
        match self {
            ErrorBody::Experimenter {
                exp_type,
                experimenter,
                data,
            } => {
                out.put_u16(ERROR_TYPE_EXPERIMENTER);
                out.put_u16(*exp_type);
                out.put_u32(*experimenter);
                out.put_slice(data);
            }
            ErrorBody::Standard {
                err_type,
                code,
                data,
            } => {
                out.put_u16(*err_type);
                out.put_u16(*code);
                out.put_slice(data);
            }
        }
    }
}

/// `ofp_switch_config` (GET_CONFIG_REPLY, SET_CONFIG): same 4 bytes in 1.0 and 1.3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SwitchConfig {
    /// `OFPC_FRAG_*` handling of IP fragments.
    pub flags: u16,
    /// Bytes of a packet sent to the controller on a table miss.
    pub miss_send_len: u16,
}

impl SwitchConfig {
    pub const LEN: usize = 4;

    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<SwitchConfig> {
        let c = SwitchConfig {
            flags: r.u16()?,
            miss_send_len: r.u16()?,
        };
        r.finish()?;
        Ok(c)
    }

    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u16(self.flags);
        out.put_u16(self.miss_send_len);
    }
}

/// `ofp_desc` / `ofp_desc_stats`: the switch's description strings, same in both versions.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescStats {
    pub mfr_desc: FixedStr<256>,
    pub hw_desc: FixedStr<256>,
    pub sw_desc: FixedStr<256>,
    pub serial_num: FixedStr<32>,
    pub dp_desc: FixedStr<256>,
}

impl DescStats {
    pub const LEN: usize = 1056;

    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<DescStats> {
        let d = DescStats {
            mfr_desc: FixedStr(r.array()?),
            hw_desc: FixedStr(r.array()?),
            sw_desc: FixedStr(r.array()?),
            serial_num: FixedStr(r.array()?),
            dp_desc: FixedStr(r.array()?),
        };
        r.finish()?;
        Ok(d)
    }

    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_slice(&self.mfr_desc.0);
        out.put_slice(&self.hw_desc.0);
        out.put_slice(&self.sw_desc.0);
        out.put_slice(&self.serial_num.0);
        out.put_slice(&self.dp_desc.0);
    }
}

/// `ofp_aggregate_stats_reply`, same 24 bytes in both versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AggregateStats {
    pub packet_count: u64,
    pub byte_count: u64,
    pub flow_count: u32,
}

impl AggregateStats {
    pub const LEN: usize = 24;

    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<AggregateStats> {
        let a = AggregateStats {
            packet_count: r.u64()?,
            byte_count: r.u64()?,
            flow_count: r.u32()?,
        };
        r.skip(4)?;
        r.finish()?;
        Ok(a)
    }

    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u64(self.packet_count);
        out.put_u64(self.byte_count);
        out.put_u32(self.flow_count);
        out.put_zeros(4);
    }
}

/// The twelve counters of `ofp_port_stats`, laid out the same in 1.0 and 1.3 (each
/// version adds its own port number before them; 1.3 adds a duration after). A switch
/// sets a counter it does not keep to all ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PortCounters {
    /// Packets received.
    pub rx_packets: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Packets dropped by RX.
    pub rx_dropped: u64,
    /// Packets dropped by TX.
    pub tx_dropped: u64,
    /// Receive errors (a superset of the more specific ones).
    pub rx_errors: u64,
    /// Transmit errors.
    pub tx_errors: u64,
    /// Frame alignment errors.
    pub rx_frame_err: u64,
    /// Packets with RX overrun.
    pub rx_over_err: u64,
    /// CRC errors.
    pub rx_crc_err: u64,
    /// Collisions.
    pub collisions: u64,
}

impl From<[u64; 12]> for PortCounters {
    /// The counters in wire order.
    fn from(c: [u64; 12]) -> Self {
        PortCounters {
            rx_packets: c[0],
            tx_packets: c[1],
            rx_bytes: c[2],
            tx_bytes: c[3],
            rx_dropped: c[4],
            tx_dropped: c[5],
            rx_errors: c[6],
            tx_errors: c[7],
            rx_frame_err: c[8],
            rx_over_err: c[9],
            rx_crc_err: c[10],
            collisions: c[11],
        }
    }
}

impl PortCounters {
    /// Wire size.
    pub const LEN: usize = 96;

    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<PortCounters> {
        Ok(PortCounters {
            rx_packets: r.u64()?,
            tx_packets: r.u64()?,
            rx_bytes: r.u64()?,
            tx_bytes: r.u64()?,
            rx_dropped: r.u64()?,
            tx_dropped: r.u64()?,
            rx_errors: r.u64()?,
            tx_errors: r.u64()?,
            rx_frame_err: r.u64()?,
            rx_over_err: r.u64()?,
            rx_crc_err: r.u64()?,
            collisions: r.u64()?,
        })
    }

    pub fn emit(&self, out: &mut Vec<u8>) {
        for v in [
            self.rx_packets,
            self.tx_packets,
            self.rx_bytes,
            self.tx_bytes,
            self.rx_dropped,
            self.tx_dropped,
            self.rx_errors,
            self.tx_errors,
            self.rx_frame_err,
            self.rx_over_err,
            self.rx_crc_err,
            self.collisions,
        ] {
            out.put_u64(v);
        }
    }
}

/// `OFPQT_MIN_RATE`, `OFPQT_MAX_RATE`, `OFPQT_EXPERIMENTER`.
pub const QUEUE_PROP_MIN_RATE: u16 = 1;
pub const QUEUE_PROP_MAX_RATE: u16 = 2;
pub const QUEUE_PROP_EXPERIMENTER: u16 = 0xffff;

/// A queue property (`ofp_queue_prop_header` + body). The header layout is shared; 1.0
/// defines only MIN_RATE, 1.3 adds MAX_RATE and EXPERIMENTER.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "property", rename_all = "snake_case")]
pub enum QueueProperty {
    /// Guaranteed rate in 1/10 of a percent; > 1000 means disabled.
    MinRate { rate: u16 },
    /// Maximum rate in 1/10 of a percent; > 1000 means disabled.
    MaxRate { rate: u16 },
    Experimenter {
        experimenter: u32,
        #[serde(with = "crate::types::hex")]
        data: Vec<u8>,
    },
    /// A property this codec does not know, carried opaquely (body after the 8-byte header).
    Unknown {
        prop_type: u16,
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
}

impl QueueProperty {
    /// Parses a list of properties filling `r`. Property lengths are taken as they are:
    /// senders do not always pad them (the vectors from LINC have 17-byte properties).
    pub fn parse_list(r: &mut Reader<'_>) -> DecodeResult<Vec<QueueProperty>> {
        let mut props = Vec::new();
        while !r.is_empty() {
            let mut t = r.tlv("ofp_queue_prop", 8, 1, false)?;
            t.body.skip(4)?;
            props.push(match t.kind {
                QUEUE_PROP_MIN_RATE | QUEUE_PROP_MAX_RATE => {
                    let rate = t.body.u16()?;
                    t.body.skip(6)?;
                    t.body.finish()?;
                    if t.kind == QUEUE_PROP_MIN_RATE {
                        QueueProperty::MinRate { rate }
                    } else {
                        QueueProperty::MaxRate { rate }
                    }
                }
                QUEUE_PROP_EXPERIMENTER => {
                    let experimenter = t.body.u32()?;
                    t.body.skip(4)?;
                    QueueProperty::Experimenter {
                        experimenter,
                        data: t.body.rest().to_vec(),
                    }
                }
                prop_type => QueueProperty::Unknown {
                    prop_type,
                    body: t.body.rest().to_vec(),
                },
            });
        }
        Ok(props)
    }

    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        let (kind, layer) = match self {
            QueueProperty::MinRate { .. } => (QUEUE_PROP_MIN_RATE, "ofp_queue_prop_min_rate"),
            QueueProperty::MaxRate { .. } => (QUEUE_PROP_MAX_RATE, "ofp_queue_prop_max_rate"),
            QueueProperty::Experimenter { .. } => {
                (QUEUE_PROP_EXPERIMENTER, "ofp_queue_prop_experimenter")
            }
            QueueProperty::Unknown { prop_type, .. } => (*prop_type, "ofp_queue_prop"),
        };
        out.put_u16(kind);
        let len = LenMark::new(out, start, layer);
        out.put_zeros(4);
        match self {
            QueueProperty::MinRate { rate } | QueueProperty::MaxRate { rate } => {
                out.put_u16(*rate);
                out.put_zeros(6);
            }
            QueueProperty::Experimenter { experimenter, data } => {
                out.put_u32(*experimenter);
                out.put_zeros(4);
                out.put_slice(data);
            }
            QueueProperty::Unknown { body, .. } => out.put_slice(body),
        }
        len.finish(out)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_bitmap_round_trips() {
        // From of13/4-10-ofp_hello.packet: versions 1, 2, 3, 9, 10, 30.
        let body = [0, 1, 0, 8, 0x40, 0, 0x06, 0x0e];
        let h = Hello::parse(&mut Reader::new(&body, 8, "hello")).unwrap();
        assert_eq!(h.versions().unwrap(), vec![1, 2, 3, 9, 10, 30]);
        let mut out = Vec::new();
        h.emit(&mut out).unwrap();
        assert_eq!(out, body);
        assert_eq!(Hello::with_versions(&[1, 2, 3, 9, 10, 30]), h);
    }

    #[test]
    fn hello_lenient_keeps_garbage_body() {
        let body = [1, 2, 3];
        let h = Hello::parse_lenient(&mut Reader::new(&body, 8, "hello"));
        let mut out = Vec::new();
        h.emit(&mut out).unwrap();
        assert_eq!(out, body);
        assert!(Hello::parse(&mut Reader::new(&body, 8, "hello")).is_err());
    }
}
