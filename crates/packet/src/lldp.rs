//! LLDP (IEEE 802.1AB-2016): a TLV walker, a validated zero-copy PDU view and a
//! builder.
//!
//! An LLDPDU is the payload of an Ethernet frame with EtherType 0x88cc, usually sent to
//! 01:80:c2:00:00:0e. It is a list of TLVs, each a 7-bit type and a 9-bit length
//! followed by that many bytes, that starts with Chassis ID, Port ID and TTL and ends
//! with an End TLV. Bytes after the End TLV (Ethernet padding) are ignored.

use openflow::MacAddr;

use crate::error::{fits, room, EmitResult, Error, Result};
use crate::macros::{be16, mac, open_enum, put16};

open_enum! {
    /// The TLV type (7 bits).
    pub enum LldpTlvType: u8 {
        End = 0,
        ChassisId = 1,
        PortId = 2,
        Ttl = 3,
        PortDescription = 4,
        SystemName = 5,
        SystemDescription = 6,
        SystemCapabilities = 7,
        ManagementAddress = 8,
        OrganizationSpecific = 127,
    }
}

open_enum! {
    /// What a Chassis ID is (802.1AB-2016 Table 8-2).
    pub enum ChassisIdSubtype: u8 {
        ChassisComponent = 1,
        InterfaceAlias = 2,
        PortComponent = 3,
        MacAddress = 4,
        NetworkAddress = 5,
        InterfaceName = 6,
        LocallyAssigned = 7,
    }
}

open_enum! {
    /// What a Port ID is (802.1AB-2016 Table 8-3).
    pub enum PortIdSubtype: u8 {
        InterfaceAlias = 1,
        PortComponent = 2,
        MacAddress = 3,
        NetworkAddress = 4,
        InterfaceName = 5,
        AgentCircuitId = 6,
        LocallyAssigned = 7,
    }
}

/// The LLDP EtherType.
pub const ETHERTYPE: u16 = 0x88cc;
/// The nearest-bridge group address LLDP is sent to.
pub const MULTICAST_NEAREST_BRIDGE: MacAddr = MacAddr([0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e]);
/// Length of a TLV header.
pub const TLV_HEADER_LEN: usize = 2;
/// The largest value a TLV length can announce (9 bits).
pub const MAX_TLV_LEN: usize = 511;
/// The IEEE 802.1 organisationally unique identifier.
pub const OUI_IEEE_8021: [u8; 3] = [0x00, 0x80, 0xc2];
/// The IEEE 802.3 organisationally unique identifier.
pub const OUI_IEEE_8023: [u8; 3] = [0x00, 0x12, 0x0f];

/// One TLV as the walker yields it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LldpTlv<'a> {
    /// The TLV type.
    pub tlv_type: LldpTlvType,
    /// Offset of the TLV header, from the start of the LLDPDU.
    pub offset: usize,
    /// The TLV's value (after its 2-byte header).
    pub value: &'a [u8],
}

/// Walks the TLVs of an LLDPDU, up to and including the End TLV. A TLV header cut
/// short, a length running past the buffer, or a buffer that ends before an End TLV
/// is an error, after which the walk ends. Only the framing is checked here;
/// [`LldpPdu::new_checked`] checks the rules for each TLV.
#[derive(Debug, Clone)]
pub struct LldpTlvs<'a> {
    buf: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> LldpTlvs<'a> {
    /// Walks `pdu` (the Ethernet payload).
    pub fn new(pdu: &'a [u8]) -> Self {
        LldpTlvs {
            buf: pdu,
            pos: 0,
            done: false,
        }
    }

    /// Offset of the next TLV: after the walk, the LLDPDU's length.
    pub fn offset(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for LldpTlvs<'a> {
    type Item = Result<LldpTlv<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let rest = self.buf.get(self.pos..).unwrap_or(&[]);
        let offset = self.pos;
        let err = if rest.is_empty() {
            // 802.1AB-2016 §8.5.12: "the End Of LLDPDU TLV ... shall be the last TLV".
            Some(Error::Truncated {
                layer: "lldp",
                offset,
                needed: TLV_HEADER_LEN,
                available: 0,
            })
        } else if rest.len() < TLV_HEADER_LEN {
            Some(Error::Truncated {
                layer: "lldp tlv",
                offset,
                needed: TLV_HEADER_LEN,
                available: rest.len(),
            })
        } else {
            None
        };
        if let Some(e) = err {
            self.done = true;
            return Some(Err(e));
        }
        let head = be16(rest, 0);
        let tlv_type = LldpTlvType::from_raw((head >> 9) as u8);
        let len = usize::from(head & 0x01ff);
        let body = &rest[TLV_HEADER_LEN..];
        if len > body.len() {
            self.done = true;
            return Some(Err(Error::LengthOverrun {
                layer: "lldp tlv",
                field: "length",
                offset,
                length: len,
                available: body.len(),
            }));
        }
        self.pos += TLV_HEADER_LEN + len;
        if tlv_type == LldpTlvType::End {
            self.done = true;
        }
        Some(Ok(LldpTlv {
            tlv_type,
            offset,
            value: &body[..len],
        }))
    }
}

/// A Chassis ID: its subtype and the id bytes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChassisId<'a> {
    /// The subtype.
    pub subtype: ChassisIdSubtype,
    /// 1..=255 bytes.
    pub id: &'a [u8],
}

impl ChassisId<'_> {
    /// The MAC address, for the MAC address subtype.
    pub fn mac(&self) -> Option<MacAddr> {
        (self.subtype == ChassisIdSubtype::MacAddress && self.id.len() == 6).then(|| mac(self.id))
    }
}

/// A Port ID: its subtype and the id bytes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PortId<'a> {
    /// The subtype.
    pub subtype: PortIdSubtype,
    /// 1..=255 bytes.
    pub id: &'a [u8],
}

impl PortId<'_> {
    /// The MAC address, for the MAC address subtype.
    pub fn mac(&self) -> Option<MacAddr> {
        (self.subtype == PortIdSubtype::MacAddress && self.id.len() == 6).then(|| mac(self.id))
    }
}

/// An organisation-specific TLV: OUI, subtype and information string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OrgSpecific<'a> {
    /// Organisationally unique identifier.
    pub oui: [u8; 3],
    /// The subtype.
    pub subtype: u8,
    /// 0..=507 bytes.
    pub info: &'a [u8],
}

impl<'a> OrgSpecific<'a> {
    fn from_value(value: &'a [u8]) -> Self {
        OrgSpecific {
            oui: [value[0], value[1], value[2]],
            subtype: value[3],
            info: &value[4..],
        }
    }
}

fn tlv_layer(t: LldpTlvType) -> &'static str {
    match t {
        LldpTlvType::End => "lldp end tlv",
        LldpTlvType::ChassisId => "lldp chassis id tlv",
        LldpTlvType::PortId => "lldp port id tlv",
        LldpTlvType::Ttl => "lldp ttl tlv",
        LldpTlvType::PortDescription => "lldp port description tlv",
        LldpTlvType::SystemName => "lldp system name tlv",
        LldpTlvType::SystemDescription => "lldp system description tlv",
        LldpTlvType::SystemCapabilities => "lldp system capabilities tlv",
        LldpTlvType::ManagementAddress => "lldp management address tlv",
        LldpTlvType::OrganizationSpecific => "lldp organization specific tlv",
        LldpTlvType::Unknown(_) => "lldp tlv",
    }
}

/// Checks one TLV's length against its type's rules (802.1AB-2016 §8.5).
fn check_tlv(tlv_type: LldpTlvType, offset: usize, length: usize) -> Result<()> {
    let layer = tlv_layer(tlv_type);
    let too_short = |min| {
        Err(Error::LengthTooShort {
            layer,
            field: "length",
            offset,
            length,
            min,
        })
    };
    let too_long = |max| {
        Err(Error::BadValue {
            layer,
            field: "length",
            offset,
            value: length as u64,
            reason: if max == 256 {
                "at most 256"
            } else {
                "at most 255"
            },
        })
    };
    let exactly = |expected| {
        if length == expected {
            Ok(())
        } else {
            Err(Error::LengthMismatch {
                layer,
                field: "length",
                offset,
                length,
                expected,
            })
        }
    };
    match tlv_type {
        LldpTlvType::End => exactly(0),
        // §8.5.2, §8.5.3: subtype plus 1 to 255 bytes of id.
        LldpTlvType::ChassisId | LldpTlvType::PortId if length < 2 => too_short(2),
        LldpTlvType::ChassisId | LldpTlvType::PortId if length > 256 => too_long(256),
        LldpTlvType::Ttl => exactly(2),
        LldpTlvType::PortDescription | LldpTlvType::SystemName | LldpTlvType::SystemDescription
            if length > 255 =>
        {
            too_long(255)
        }
        LldpTlvType::SystemCapabilities => exactly(4),
        // §8.5.9: address string length, subtype, address, interface numbering (5), OID length.
        LldpTlvType::ManagementAddress if length < 9 => too_short(9),
        // §8.6: OUI and subtype.
        LldpTlvType::OrganizationSpecific if length < 4 => too_short(4),
        _ => Ok(()),
    }
}

/// Validates a whole LLDPDU: framing, the rules for each TLV, Chassis ID, Port ID and
/// TTL first and in that order, no repeats of TLVs allowed once (types 1 to 7).
/// Returns the LLDPDU's length (End TLV included).
pub fn validate(pdu: &[u8]) -> Result<usize> {
    let mut tlvs = LldpTlvs::new(pdu);
    let mut seen: u8 = 0;
    let mandatory = [
        LldpTlvType::ChassisId,
        LldpTlvType::PortId,
        LldpTlvType::Ttl,
    ];
    for (index, t) in tlvs.by_ref().enumerate() {
        let t = t?;
        let raw = t.tlv_type.to_raw();
        let bad = |reason| Error::BadValue {
            layer: "lldp",
            field: "tlv type",
            offset: t.offset,
            value: raw.into(),
            reason,
        };
        // §8.2: "the first three TLVs shall be the Chassis ID TLV, Port ID TLV and the
        // Time To Live TLV, in that order".
        if let Some(&want) = mandatory.get(index) {
            if t.tlv_type != want {
                return Err(bad(match index {
                    0 => "the first TLV must be Chassis ID (1)",
                    1 => "the second TLV must be Port ID (2)",
                    _ => "the third TLV must be TTL (3)",
                }));
            }
        }
        if (1..=7).contains(&raw) {
            if seen & (1 << raw) != 0 {
                return Err(bad("this TLV may appear only once"));
            }
            seen |= 1 << raw;
        }
        check_tlv(t.tlv_type, t.offset, t.value.len())?;
    }
    Ok(tlvs.offset())
}

/// The value of the TLV starting at `offset` of a validated PDU.
fn value_at(b: &[u8], offset: usize) -> &[u8] {
    let len = usize::from(be16(b, offset) & 0x01ff);
    &b[offset + TLV_HEADER_LEN..offset + TLV_HEADER_LEN + len]
}

/// The three mandatory TLVs of a validated PDU, read at fixed places.
fn mandatory(b: &[u8]) -> (ChassisId<'_>, PortId<'_>, u16) {
    let c = value_at(b, 0);
    let at = TLV_HEADER_LEN + c.len();
    let p = value_at(b, at);
    let t = value_at(b, at + TLV_HEADER_LEN + p.len());
    (
        ChassisId {
            subtype: ChassisIdSubtype::from_raw(c[0]),
            id: &c[1..],
        },
        PortId {
            subtype: PortIdSubtype::from_raw(p[0]),
            id: &p[1..],
        },
        be16(t, 0),
    )
}

/// A zero-copy view of a validated LLDPDU (the Ethernet payload).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LldpPdu<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> LldpPdu<T> {
    /// A view with no checks: getters panic on a malformed PDU.
    pub const fn new_unchecked(buffer: T) -> Self {
        LldpPdu { buffer }
    }

    /// A view whose getters cannot panic: the PDU passes [`validate`].
    pub fn new_checked(buffer: T) -> Result<Self> {
        validate(buffer.as_ref())?;
        Ok(LldpPdu { buffer })
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The Chassis ID.
    pub fn chassis_id(&self) -> ChassisId<'_> {
        mandatory(self.buffer.as_ref()).0
    }

    /// The Port ID.
    pub fn port_id(&self) -> PortId<'_> {
        mandatory(self.buffer.as_ref()).1
    }

    /// Time to live in seconds (0 withdraws the sender's information).
    pub fn ttl(&self) -> u16 {
        mandatory(self.buffer.as_ref()).2
    }

    /// All TLVs, End included.
    pub fn tlvs(&self) -> LldpTlvs<'_> {
        LldpTlvs::new(self.buffer.as_ref())
    }

    fn find(&self, t: LldpTlvType) -> Option<&[u8]> {
        self.tlvs()
            .flatten()
            .find(|x| x.tlv_type == t)
            .map(|x| x.value)
    }

    /// The port description.
    pub fn port_description(&self) -> Option<&[u8]> {
        self.find(LldpTlvType::PortDescription)
    }

    /// The system name.
    pub fn system_name(&self) -> Option<&[u8]> {
        self.find(LldpTlvType::SystemName)
    }

    /// The system description.
    pub fn system_description(&self) -> Option<&[u8]> {
        self.find(LldpTlvType::SystemDescription)
    }

    /// The organisation-specific TLVs.
    pub fn org_specific(&self) -> impl Iterator<Item = OrgSpecific<'_>> {
        self.tlvs()
            .flatten()
            .filter(|t| t.tlv_type == LldpTlvType::OrganizationSpecific)
            .map(|t| OrgSpecific::from_value(t.value))
    }
}

/// A TLV kept as received: its type and value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RawTlv<'a> {
    /// The TLV type.
    pub tlv_type: LldpTlvType,
    /// 0..=511 bytes.
    pub value: &'a [u8],
}

/// An LLDPDU, owned (borrowing its strings).
///
/// `emit` writes the TLVs in this order: Chassis ID, Port ID, TTL, port description,
/// system name, system description, `other` in order, `org_specific` in order, End.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LldpRepr<'a> {
    /// The Chassis ID.
    pub chassis_id: ChassisId<'a>,
    /// The Port ID.
    pub port_id: PortId<'a>,
    /// Seconds.
    pub ttl: u16,
    /// The port description.
    pub port_description: Option<&'a [u8]>,
    /// The system name.
    pub system_name: Option<&'a [u8]>,
    /// The system description.
    pub system_description: Option<&'a [u8]>,
    /// Every other TLV (system capabilities, management addresses, unknown types), in
    /// the order received: never End, types 1 to 6 or 127, which have their own fields.
    pub other: Vec<RawTlv<'a>>,
    /// The organisation-specific TLVs, in order.
    pub org_specific: Vec<OrgSpecific<'a>>,
}

impl<'a> LldpRepr<'a> {
    /// A PDU with just the mandatory TLVs.
    pub fn new(chassis_id: ChassisId<'a>, port_id: PortId<'a>, ttl: u16) -> Self {
        LldpRepr {
            chassis_id,
            port_id,
            ttl,
            port_description: None,
            system_name: None,
            system_description: None,
            other: Vec::new(),
            org_specific: Vec::new(),
        }
    }

    /// Parses a whole LLDPDU (validated as [`LldpPdu::new_checked`] does).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(pdu: &LldpPdu<&'a T>) -> Result<Self> {
        let buf: &'a [u8] = T::as_ref(pdu.buffer);
        validate(buf)?;
        let (chassis_id, port_id, ttl) = mandatory(buf);
        let mut repr = LldpRepr::new(chassis_id, port_id, ttl);
        for t in LldpTlvs::new(buf).skip(3).flatten() {
            match t.tlv_type {
                LldpTlvType::End => {}
                LldpTlvType::PortDescription => repr.port_description = Some(t.value),
                LldpTlvType::SystemName => repr.system_name = Some(t.value),
                LldpTlvType::SystemDescription => repr.system_description = Some(t.value),
                LldpTlvType::OrganizationSpecific => {
                    repr.org_specific.push(OrgSpecific::from_value(t.value))
                }
                tlv_type => repr.other.push(RawTlv {
                    tlv_type,
                    value: t.value,
                }),
            }
        }
        Ok(repr)
    }

    /// Every TLV `emit` writes, in order, as (type, value head, value tail): the
    /// subtype or OUI goes in the head so that nothing is copied to build the list.
    fn each_tlv(
        &self,
        mut f: impl FnMut(LldpTlvType, &[u8], &[u8]) -> EmitResult<()>,
    ) -> EmitResult<()> {
        f(
            LldpTlvType::ChassisId,
            &[self.chassis_id.subtype.to_raw()],
            self.chassis_id.id,
        )?;
        f(
            LldpTlvType::PortId,
            &[self.port_id.subtype.to_raw()],
            self.port_id.id,
        )?;
        f(LldpTlvType::Ttl, &self.ttl.to_be_bytes(), &[])?;
        let strings = [
            (LldpTlvType::PortDescription, self.port_description),
            (LldpTlvType::SystemName, self.system_name),
            (LldpTlvType::SystemDescription, self.system_description),
        ];
        for (t, s) in strings {
            if let Some(s) = s {
                f(t, &[], s)?;
            }
        }
        for t in &self.other {
            f(t.tlv_type, &[], t.value)?;
        }
        for o in &self.org_specific {
            let [a, b, c] = o.oui;
            f(
                LldpTlvType::OrganizationSpecific,
                &[a, b, c, o.subtype],
                o.info,
            )?;
        }
        f(LldpTlvType::End, &[], &[])
    }

    /// Bytes `emit` writes.
    pub fn buffer_len(&self) -> usize {
        let mut len = 0;
        let _ = self.each_tlv(|_, h, t| {
            len += TLV_HEADER_LEN + h.len() + t.len();
            Ok(())
        });
        len
    }

    /// Writes the whole LLDPDU, End TLV included. Values that break the rules
    /// [`validate`] checks are an error.
    pub fn emit(&self, buf: &mut [u8]) -> EmitResult<usize> {
        for t in &self.other {
            let raw = t.tlv_type.to_raw();
            let own_field = matches!(raw, 0..=6 | 127);
            fits(
                !own_field,
                "lldp",
                "other tlv type",
                raw.into(),
                "End, types 1 to 6 and 127 have their own fields",
            )?;
        }
        let len = self.buffer_len();
        let b = room("lldp", buf, len)?;
        let mut at = 0;
        self.each_tlv(|t, head, tail| {
            let n = head.len() + tail.len();
            let layer = tlv_layer(t);
            fits(t.to_raw() < 128, layer, "type", t.to_raw().into(), "7 bits")?;
            fits(n <= MAX_TLV_LEN, layer, "length", n as u64, "9 bits")?;
            if let Err(e) = check_tlv(t, at, n) {
                let reason = match e {
                    Error::LengthTooShort { .. } => "too short for its type",
                    Error::LengthMismatch { .. } => "wrong length for its type",
                    _ => "too long for its type",
                };
                return Err(crate::EmitError::BadValue {
                    layer,
                    field: "length",
                    value: n as u64,
                    reason,
                });
            }
            fits(
                !matches!(t, LldpTlvType::ChassisId | LldpTlvType::PortId) || !tail.is_empty(),
                layer,
                "id length",
                0,
                "at least 1 byte",
            )?;
            put16(b, at, (u16::from(t.to_raw()) << 9) | n as u16);
            b[at + 2..at + 2 + head.len()].copy_from_slice(head);
            b[at + 2 + head.len()..at + 2 + n].copy_from_slice(tail);
            at += TLV_HEADER_LEN + n;
            Ok(())
        })?;
        Ok(len)
    }
}

#[cfg(test)]
#[path = "lldp_tests.rs"]
mod tests;
