//! OXM, the OpenFlow Extensible Match (§7.2.3): one `Oxm` TLV per match field, and
//! `Match` (`ofp_match` of type `OFPMT_OXM`), the list of them padded to 8 bytes.
//!
//! Every OpenFlow-basic field of 1.3 (class `0x8000`, `IN_PORT` .. `IPV6_EXTHDR`) is
//! typed and width-checked. Experimenter OXMs (class `0xffff`), other classes (Nicira
//! NXM `0x0000`/`0x0001`, ...) and basic field ids this codec does not know are carried
//! opaquely and re-encoded byte for byte.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{DecodeError, DecodeResult, EncodeError, EncodeResult};
use crate::open_enum;
use crate::types::{to_hex, MacAddr};
use crate::wire::{padding_for, LenMark, Put, Reader};

/// `OFPXMC_NXM_0`: Nicira's original NXM fields.
pub const OXM_CLASS_NXM_0: u16 = 0x0000;
/// `OFPXMC_NXM_1`: Nicira's extended NXM fields.
pub const OXM_CLASS_NXM_1: u16 = 0x0001;
/// `OFPXMC_OPENFLOW_BASIC`.
pub const OXM_CLASS_OPENFLOW_BASIC: u16 = 0x8000;
/// `OFPXMC_EXPERIMENTER`.
pub const OXM_CLASS_EXPERIMENTER: u16 = 0xffff;

/// `OFPVID_PRESENT`: set in `vlan_vid` when a VLAN tag is present.
pub const OFPVID_PRESENT: u16 = 0x1000;
/// `OFPVID_NONE`: `vlan_vid` of a packet without a VLAN tag.
pub const OFPVID_NONE: u16 = 0x0000;

/// `OFPMT_STANDARD`: the deprecated fixed 1.1 match.
pub const MATCH_TYPE_STANDARD: u16 = 0;
/// `OFPMT_OXM`.
pub const MATCH_TYPE_OXM: u16 = 1;

open_enum! {
    /// `oxm_ofb_match_fields`: the OpenFlow-basic field ids of 1.3.
    pub enum OxmField: u8 {
        InPort = 0 => "in_port",
        InPhyPort = 1 => "in_phy_port",
        Metadata = 2 => "metadata",
        EthDst = 3 => "eth_dst",
        EthSrc = 4 => "eth_src",
        EthType = 5 => "eth_type",
        VlanVid = 6 => "vlan_vid",
        VlanPcp = 7 => "vlan_pcp",
        IpDscp = 8 => "ip_dscp",
        IpEcn = 9 => "ip_ecn",
        IpProto = 10 => "ip_proto",
        Ipv4Src = 11 => "ipv4_src",
        Ipv4Dst = 12 => "ipv4_dst",
        TcpSrc = 13 => "tcp_src",
        TcpDst = 14 => "tcp_dst",
        UdpSrc = 15 => "udp_src",
        UdpDst = 16 => "udp_dst",
        SctpSrc = 17 => "sctp_src",
        SctpDst = 18 => "sctp_dst",
        Icmpv4Type = 19 => "icmpv4_type",
        Icmpv4Code = 20 => "icmpv4_code",
        ArpOp = 21 => "arp_op",
        ArpSpa = 22 => "arp_spa",
        ArpTpa = 23 => "arp_tpa",
        ArpSha = 24 => "arp_sha",
        ArpTha = 25 => "arp_tha",
        Ipv6Src = 26 => "ipv6_src",
        Ipv6Dst = 27 => "ipv6_dst",
        Ipv6Flabel = 28 => "ipv6_flabel",
        Icmpv6Type = 29 => "icmpv6_type",
        Icmpv6Code = 30 => "icmpv6_code",
        Ipv6NdTarget = 31 => "ipv6_nd_target",
        Ipv6NdSll = 32 => "ipv6_nd_sll",
        Ipv6NdTll = 33 => "ipv6_nd_tll",
        MplsLabel = 34 => "mpls_label",
        MplsTc = 35 => "mpls_tc",
        MplsBos = 36 => "mpls_bos",
        PbbIsid = 37 => "pbb_isid",
        TunnelId = 38 => "tunnel_id",
        Ipv6Exthdr = 39 => "ipv6_exthdr",
    }
}

/// How a basic field's value is written on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// A big-endian unsigned integer of this many bytes (1, 2, 3, 4 or 8).
    Int(usize),
    /// A 6-byte Ethernet address.
    Mac,
    /// A 4-byte IPv4 address.
    Ipv4,
    /// A 16-byte IPv6 address.
    Ipv6,
}

impl ValueKind {
    /// Bytes of one value (the payload is twice this when masked).
    pub const fn width(self) -> usize {
        match self {
            ValueKind::Int(n) => n,
            ValueKind::Mac => 6,
            ValueKind::Ipv4 => 4,
            ValueKind::Ipv6 => 16,
        }
    }
}

impl OxmField {
    /// The value kind and width of a known field (`None` for `Unknown`), from the
    /// table in §7.2.3.7 ("OXM_OF_PBB_ISID ... 24 bits").
    pub const fn kind(self) -> Option<ValueKind> {
        use OxmField::*;
        use ValueKind::*;
        Some(match self {
            InPort | InPhyPort | Ipv6Flabel | MplsLabel => Int(4),
            Metadata | TunnelId => Int(8),
            EthDst | EthSrc | ArpSha | ArpTha | Ipv6NdSll | Ipv6NdTll => Mac,
            EthType | VlanVid | TcpSrc | TcpDst | UdpSrc | UdpDst | SctpSrc | SctpDst | ArpOp
            | Ipv6Exthdr => Int(2),
            VlanPcp | IpDscp | IpEcn | IpProto | Icmpv4Type | Icmpv4Code | Icmpv6Type
            | Icmpv6Code | MplsTc | MplsBos => Int(1),
            Ipv4Src | Ipv4Dst | ArpSpa | ArpTpa => Ipv4,
            Ipv6Src | Ipv6Dst | Ipv6NdTarget => Ipv6,
            PbbIsid => Int(3),
            Unknown(_) => return None,
        })
    }
}

/// The 32-bit OXM header: `class:16 | field:7 | hasmask:1 | length:8` (§7.2.3.2).
/// `length` counts the payload only (value, and mask when `hasmask`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct OxmHeader(pub u32);

impl OxmHeader {
    /// The header for these parts (`field` is cut to its 7 bits).
    pub const fn new(class: u16, field: u8, hasmask: bool, length: u8) -> OxmHeader {
        OxmHeader(
            (class as u32) << 16
                | ((field as u32) & 0x7f) << 9
                | (hasmask as u32) << 8
                | length as u32,
        )
    }

    /// The header of an OpenFlow-basic field.
    pub const fn basic(field: OxmField, hasmask: bool, length: u8) -> OxmHeader {
        OxmHeader::new(OXM_CLASS_OPENFLOW_BASIC, field.to_raw(), hasmask, length)
    }

    /// The header's class.
    pub const fn class(self) -> u16 {
        (self.0 >> 16) as u16
    }

    /// The 7-bit field id.
    pub const fn field(self) -> u8 {
        ((self.0 >> 9) & 0x7f) as u8
    }

    /// The header's hasmask.
    pub const fn hasmask(self) -> bool {
        self.0 & 0x100 != 0
    }

    /// Payload bytes after the header.
    pub const fn length(self) -> u8 {
        self.0 as u8
    }

    /// The spec's or Nicira's name of the class, for descriptions.
    pub fn class_name(self) -> &'static str {
        match self.class() {
            OXM_CLASS_NXM_0 => "Nicira NXM_0",
            OXM_CLASS_NXM_1 => "Nicira NXM",
            OXM_CLASS_OPENFLOW_BASIC => "OpenFlow basic",
            OXM_CLASS_EXPERIMENTER => "experimenter",
            _ => "unknown class",
        }
    }
}

/// A basic field's value (or mask), in the kind its field has. In JSON: MACs and IP
/// addresses as text, integers as numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OxmValue {
    Int(u64),
    Mac(MacAddr),
    Ipv4(Ipv4Addr),
    Ipv6(Ipv6Addr),
}

impl OxmValue {
    fn read(kind: ValueKind, r: &mut Reader<'_>) -> DecodeResult<OxmValue> {
        Ok(match kind {
            ValueKind::Int(n) => {
                let mut v = 0u64;
                for b in r.bytes(n)? {
                    v = v << 8 | *b as u64;
                }
                OxmValue::Int(v)
            }
            ValueKind::Mac => OxmValue::Mac(MacAddr(r.array()?)),
            ValueKind::Ipv4 => OxmValue::Ipv4(Ipv4Addr::from(r.array::<4>()?)),
            ValueKind::Ipv6 => OxmValue::Ipv6(Ipv6Addr::from(r.array::<16>()?)),
        })
    }

    fn write(&self, kind: ValueKind, field: OxmField, out: &mut Vec<u8>) -> EncodeResult<()> {
        let mismatch = |value| EncodeError::BadValue {
            layer: "ofp_oxm",
            field: field.name().unwrap_or("oxm"),
            value,
            reason: "value kind does not match the field (MAC, IPv4, IPv6 or integer)",
        };
        match (kind, self) {
            (ValueKind::Int(n), OxmValue::Int(v)) => {
                crate::wire::check_width(
                    "ofp_oxm",
                    field.name().unwrap_or("oxm"),
                    *v,
                    8 * n as u32,
                )?;
                out.put_slice(&v.to_be_bytes()[8 - n..]);
            }
            (ValueKind::Mac, OxmValue::Mac(m)) => out.put_slice(&m.0),
            (ValueKind::Ipv4, OxmValue::Ipv4(a)) => out.put_slice(&a.octets()),
            (ValueKind::Ipv6, OxmValue::Ipv6(a)) => out.put_slice(&a.octets()),
            (_, OxmValue::Int(v)) => return Err(mismatch(*v)),
            (_, _) => return Err(mismatch(0)),
        }
        Ok(())
    }
}

impl fmt::Display for OxmValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OxmValue::Int(v) => write!(f, "{v}"),
            OxmValue::Mac(m) => write!(f, "{m}"),
            OxmValue::Ipv4(a) => write!(f, "{a}"),
            OxmValue::Ipv6(a) => write!(f, "{a}"),
        }
    }
}

impl From<u64> for OxmValue {
    fn from(v: u64) -> Self {
        OxmValue::Int(v)
    }
}

impl From<MacAddr> for OxmValue {
    fn from(v: MacAddr) -> Self {
        OxmValue::Mac(v)
    }
}

impl From<Ipv4Addr> for OxmValue {
    fn from(v: Ipv4Addr) -> Self {
        OxmValue::Ipv4(v)
    }
}

impl From<Ipv6Addr> for OxmValue {
    fn from(v: Ipv6Addr) -> Self {
        OxmValue::Ipv6(v)
    }
}

impl Serialize for OxmValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            OxmValue::Int(v) => s.serialize_u64(*v),
            other => s.collect_str(other),
        }
    }
}

impl<'de> Deserialize<'de> for OxmValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Num(u64),
            Text(String),
        }
        match Repr::deserialize(d)? {
            Repr::Num(v) => Ok(OxmValue::Int(v)),
            Repr::Text(t) => {
                if let Ok(m) = t.parse::<MacAddr>() {
                    Ok(OxmValue::Mac(m))
                } else if let Ok(a) = t.parse::<Ipv4Addr>() {
                    Ok(OxmValue::Ipv4(a))
                } else if let Ok(a) = t.parse::<Ipv6Addr>() {
                    Ok(OxmValue::Ipv6(a))
                } else {
                    Err(serde::de::Error::custom(format!(
                        "OXM value {t:?} is not a number, MAC, IPv4 or IPv6 address"
                    )))
                }
            }
        }
    }
}

/// One OpenFlow-basic match field this codec knows: value and optional mask.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BasicOxm {
    pub field: OxmField,
    pub value: OxmValue,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mask: Option<OxmValue>,
}

/// One OXM TLV.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Oxm {
    /// Class `OFPXMC_EXPERIMENTER`: the experimenter id, then a body this codec does
    /// not interpret (for example ONF's `pbb_uca` in 1.3).
    Experimenter {
        field: u8,
        hasmask: bool,
        experimenter: u32,
        #[serde(with = "crate::types::hex")]
        data: Vec<u8>,
    },
    /// Any other class (Nicira NXM, ...) or a basic field id this codec does not know:
    /// the header's parts and the payload, carried opaquely.
    Raw {
        class: u16,
        field: u8,
        hasmask: bool,
        #[serde(with = "crate::types::hex")]
        payload: Vec<u8>,
    },
    /// An OpenFlow-basic field (class `0x8000`) this codec knows.
    Basic(BasicOxm),
}

impl Oxm {
    /// A basic field matching exactly `value`.
    pub fn basic(field: OxmField, value: impl Into<OxmValue>) -> Oxm {
        Oxm::Basic(BasicOxm {
            field,
            value: value.into(),
            mask: None,
        })
    }

    /// A basic field matching `value` under `mask`.
    pub fn masked(field: OxmField, value: impl Into<OxmValue>, mask: impl Into<OxmValue>) -> Oxm {
        Oxm::Basic(BasicOxm {
            field,
            value: value.into(),
            mask: Some(mask.into()),
        })
    }

    /// The basic field id, for basic fields this codec knows.
    pub fn basic_field(&self) -> Option<OxmField> {
        match self {
            Oxm::Basic(b) => Some(b.field),
            _ => None,
        }
    }

    /// Parses one OXM TLV from `r`.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<Oxm> {
        let offset = r.offset();
        let header = OxmHeader(r.u32()?);
        let len = header.length() as usize;
        if len > r.remaining() {
            return Err(DecodeError::LengthOverrun {
                layer: "ofp_oxm",
                offset,
                length: len + 4,
                available: r.remaining() + 4,
            });
        }
        let mut p = r.sub(len, "ofp_oxm")?;
        let known = match header.class() {
            OXM_CLASS_OPENFLOW_BASIC => OxmField::from_raw(header.field())
                .kind()
                .map(|k| (OxmField::from_raw(header.field()), k)),
            _ => None,
        };
        if let Some((field, kind)) = known {
            let want = kind.width() * if header.hasmask() { 2 } else { 1 };
            // §7.2.3.2: "oxm_length ... the length of the OXM payload"; every basic
            // field has a fixed width (table in §7.2.3.7), doubled when masked.
            if len != want {
                return Err(DecodeError::BadValue {
                    layer: "ofp_oxm",
                    field: field.name().unwrap_or("oxm"),
                    offset,
                    value: len as u64,
                    reason: "payload length does not match the field's width",
                });
            }
            let value = OxmValue::read(kind, &mut p)?;
            let mask = if header.hasmask() {
                Some(OxmValue::read(kind, &mut p)?)
            } else {
                None
            };
            return Ok(Oxm::Basic(BasicOxm { field, value, mask }));
        }
        if header.class() == OXM_CLASS_EXPERIMENTER {
            // §7.2.3.2 (ofp_oxm_experimenter_header): the payload starts with the
            // experimenter id.
            if len < 4 {
                return Err(DecodeError::LengthTooShort {
                    layer: "ofp_oxm_experimenter",
                    offset,
                    length: len,
                    min: 4,
                });
            }
            let experimenter = p.u32()?;
            return Ok(Oxm::Experimenter {
                field: header.field(),
                hasmask: header.hasmask(),
                experimenter,
                data: p.rest().to_vec(),
            });
        }
        Ok(Oxm::Raw {
            class: header.class(),
            field: header.field(),
            hasmask: header.hasmask(),
            payload: p.rest().to_vec(),
        })
    }

    /// Appends the TLV to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let too_long = |length| EncodeError::TooLong {
            layer: "ofp_oxm",
            length,
            max: 255,
        };
        let fits7 = |field: u8| crate::wire::check_width("ofp_oxm", "oxm_field", field as u64, 7);
        match self {
            Oxm::Basic(b) => {
                let kind = b.field.kind().ok_or(EncodeError::BadValue {
                    layer: "ofp_oxm",
                    field: "oxm_field",
                    value: b.field.to_raw() as u64,
                    reason: "unknown basic field: carry it as Oxm::Raw",
                })?;
                fits7(b.field.to_raw())?;
                let len = kind.width() * if b.mask.is_some() { 2 } else { 1 };
                out.put_u32(OxmHeader::basic(b.field, b.mask.is_some(), len as u8).0);
                b.value.write(kind, b.field, out)?;
                if let Some(m) = &b.mask {
                    m.write(kind, b.field, out)?;
                }
            }
            Oxm::Experimenter {
                field,
                hasmask,
                experimenter,
                data,
            } => {
                fits7(*field)?;
                let len = 4 + data.len();
                if len > 255 {
                    return Err(too_long(len));
                }
                out.put_u32(OxmHeader::new(OXM_CLASS_EXPERIMENTER, *field, *hasmask, len as u8).0);
                out.put_u32(*experimenter);
                out.put_slice(data);
            }
            Oxm::Raw {
                class,
                field,
                hasmask,
                payload,
            } => {
                fits7(*field)?;
                if payload.len() > 255 {
                    return Err(too_long(payload.len()));
                }
                out.put_u32(OxmHeader::new(*class, *field, *hasmask, payload.len() as u8).0);
                out.put_slice(payload);
            }
        }
        Ok(())
    }

    /// Bytes this TLV takes on the wire.
    pub fn wire_len(&self) -> usize {
        4 + match self {
            Oxm::Basic(b) => {
                b.field.kind().map_or(0, ValueKind::width) * if b.mask.is_some() { 2 } else { 1 }
            }
            Oxm::Experimenter { data, .. } => 4 + data.len(),
            Oxm::Raw { payload, .. } => payload.len(),
        }
    }

    /// Describes this TLV if it is carried opaquely.
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        match self {
            Oxm::Basic(_) => {}
            Oxm::Experimenter {
                field,
                experimenter,
                ..
            } => out.push(format!(
                "experimenter OXM 0x{experimenter:08x} field {field}{}",
                if *experimenter == crate::of13::ONF_EXPERIMENTER_ID {
                    " (ONF)"
                } else {
                    ""
                }
            )),
            Oxm::Raw { class, field, .. } => {
                let h = OxmHeader::new(*class, *field, false, 0);
                out.push(format!(
                    "OXM class 0x{class:04x} field {field} ({})",
                    if *class == OXM_CLASS_OPENFLOW_BASIC {
                        "unknown OpenFlow-basic field"
                    } else {
                        h.class_name()
                    }
                ))
            }
        }
    }
}

impl fmt::Display for Oxm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Oxm::Basic(b) => {
                write!(f, "{}={}", b.field, b.value)?;
                if let Some(m) = &b.mask {
                    write!(f, "/{m}")?;
                }
                Ok(())
            }
            Oxm::Experimenter {
                field,
                experimenter,
                data,
                ..
            } => write!(f, "exp(0x{experimenter:08x},{field})=0x{}", to_hex(data)),
            Oxm::Raw {
                class,
                field,
                payload,
                ..
            } => write!(f, "oxm(0x{class:04x},{field})=0x{}", to_hex(payload)),
        }
    }
}

/// `ofp_match`. In 1.3 the type is `OFPMT_OXM` and the body a list of OXM TLVs; any
/// other type is carried opaquely. In JSON an OXM match is the list of its fields.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Match {
    /// `OFPMT_OXM`: the fields, in wire order.
    Oxm(Vec<Oxm>),
    /// Another match type (`OFPMT_STANDARD` from 1.1, ...): the bytes after the
    /// 4-byte type/length header, without the trailing padding.
    Other {
        match_type: u16,
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
}

impl Default for Match {
    fn default() -> Self {
        Match::Oxm(Vec::new())
    }
}

impl Match {
    /// An OXM match of these fields.
    pub fn new(fields: Vec<Oxm>) -> Match {
        Match::Oxm(fields)
    }

    /// The OXM fields (empty for other match types).
    pub fn fields(&self) -> &[Oxm] {
        match self {
            Match::Oxm(f) => f,
            Match::Other { .. } => &[],
        }
    }

    /// The first basic field with this id.
    pub fn get(&self, field: OxmField) -> Option<&BasicOxm> {
        self.fields().iter().find_map(|o| match o {
            Oxm::Basic(b) if b.field == field => Some(b),
            _ => None,
        })
    }

    /// Parses an `ofp_match` and the padding that follows it to a multiple of 8.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<Match> {
        let offset = r.offset();
        let match_type = r.peek_u16(0).map_err(|_| r.truncated(4))?;
        let length = r.peek_u16(2).map_err(|_| r.truncated(4))? as usize;
        // §7.2.3.1: "length ... Length of ofp_match (excluding padding)", which
        // includes its own 4-byte header.
        if length < 4 {
            return Err(DecodeError::LengthTooShort {
                layer: "ofp_match",
                offset,
                length,
                min: 4,
            });
        }
        let padded = length + padding_for(length);
        if padded > r.remaining() {
            return Err(DecodeError::LengthOverrun {
                layer: "ofp_match",
                offset,
                length: padded,
                available: r.remaining(),
            });
        }
        let mut m = r.sub(length, "ofp_match")?;
        r.skip(padding_for(length))?;
        m.skip(4)?;
        if match_type != MATCH_TYPE_OXM {
            return Ok(Match::Other {
                match_type,
                body: m.rest().to_vec(),
            });
        }
        let mut fields = Vec::new();
        while !m.is_empty() {
            fields.push(Oxm::parse(&mut m)?);
        }
        Ok(Match::Oxm(fields))
    }

    /// Appends the match and its padding to a multiple of 8.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        match self {
            Match::Oxm(fields) => {
                out.put_u16(MATCH_TYPE_OXM);
                let len = LenMark::new(out, start, "ofp_match");
                for f in fields {
                    f.emit(out)?;
                }
                len.finish(out)?;
            }
            Match::Other { match_type, body } => {
                out.put_u16(*match_type);
                let len = LenMark::new(out, start, "ofp_match");
                out.put_slice(body);
                len.finish(out)?;
            }
        }
        crate::wire::pad_to(out, start);
        Ok(())
    }

    /// Bytes of `ofp_match` without padding (the value of its length field).
    pub fn wire_len(&self) -> usize {
        4 + match self {
            Match::Oxm(f) => f.iter().map(Oxm::wire_len).sum(),
            Match::Other { body, .. } => body.len(),
        }
    }

    /// Describes each part carried opaquely.
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        match self {
            Match::Oxm(fields) => fields.iter().for_each(|f| f.opaque_parts(out)),
            Match::Other { match_type, .. } => out.push(format!("match type {match_type}")),
        }
    }
}

/// `in_port=1,eth_dst=aa:bb:cc:dd:ee:ff`; `any` for the empty match.
impl fmt::Display for Match {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Match::Oxm(fields) if fields.is_empty() => f.write_str("any"),
            Match::Oxm(fields) => {
                for (i, o) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{o}")?;
                }
                Ok(())
            }
            Match::Other { match_type, body } => {
                write!(f, "match_type={match_type},body=0x{}", to_hex(body))
            }
        }
    }
}

#[cfg(test)]
#[path = "oxm_tests.rs"]
mod tests;
