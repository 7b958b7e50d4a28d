//! ARP (RFC 826). The view reads any hardware and protocol address sizes; the repr is
//! Ethernet/IPv4, the only kind this crate builds or matches on.

use std::net::Ipv4Addr;

use openflow::MacAddr;

use crate::error::{room, EmitResult, Error, Result};
use crate::macros::{be16, mac, open_enum, put16};

open_enum! {
    /// The ARP operation.
    pub enum ArpOperation: u16 {
        Request = 1,
        Reply = 2,
        /// RARP request (RFC 903).
        RequestReverse = 3,
        /// RARP reply (RFC 903).
        ReplyReverse = 4,
    }
}

mod field {
    use crate::Field;
    pub const HTYPE: Field = 0..2;
    pub const PTYPE: Field = 2..4;
    pub const HLEN: usize = 4;
    pub const PLEN: usize = 5;
    pub const OPER: Field = 6..8;
    pub const ADDRS: usize = 8;
}

/// Hardware type for Ethernet.
pub const HTYPE_ETHERNET: u16 = 1;
/// Protocol type for IPv4 (its EtherType).
pub const PTYPE_IPV4: u16 = 0x0800;
/// Length of an Ethernet/IPv4 ARP packet.
pub const ETHERNET_IPV4_LEN: usize = 28;

/// A zero-copy view of an ARP packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> ArpPacket<T> {
    /// A view with no checks: getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Self {
        ArpPacket { buffer }
    }

    /// A view whose getters cannot panic: the fixed part and the four addresses its
    /// length fields announce are all present.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks what `new_checked` checks.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        crate::error::need("arp", b, field::ADDRS)?;
        crate::error::need("arp", b, self.len())
    }

    /// The length the address sizes give: 8 + 2 * (hlen + plen).
    fn len(&self) -> usize {
        field::ADDRS + 2 * (usize::from(self.hardware_len()) + usize::from(self.protocol_len()))
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The hardware type (1 for Ethernet).
    pub fn hardware_type(&self) -> u16 {
        be16(self.buffer.as_ref(), field::HTYPE.start)
    }

    /// The protocol type (0x0800 for IPv4).
    pub fn protocol_type(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PTYPE.start)
    }

    /// The hardware address length in bytes.
    pub fn hardware_len(&self) -> u8 {
        self.buffer.as_ref()[field::HLEN]
    }

    /// The protocol address length in bytes.
    pub fn protocol_len(&self) -> u8 {
        self.buffer.as_ref()[field::PLEN]
    }

    /// The operation (request, reply, ...).
    pub fn operation(&self) -> ArpOperation {
        ArpOperation::from_raw(be16(self.buffer.as_ref(), field::OPER.start))
    }

    fn addr(&self, index: usize) -> &[u8] {
        let h = usize::from(self.hardware_len());
        let p = usize::from(self.protocol_len());
        let (start, len) = match index {
            0 => (field::ADDRS, h),
            1 => (field::ADDRS + h, p),
            2 => (field::ADDRS + h + p, h),
            _ => (field::ADDRS + 2 * h + p, p),
        };
        &self.buffer.as_ref()[start..start + len]
    }

    /// Sender hardware address (`hardware_len` bytes).
    pub fn source_hardware_addr(&self) -> &[u8] {
        self.addr(0)
    }

    /// Sender protocol address (`protocol_len` bytes).
    pub fn source_protocol_addr(&self) -> &[u8] {
        self.addr(1)
    }

    /// Target hardware address.
    pub fn target_hardware_addr(&self) -> &[u8] {
        self.addr(2)
    }

    /// Target protocol address.
    pub fn target_protocol_addr(&self) -> &[u8] {
        self.addr(3)
    }

    /// True for Ethernet/IPv4 ARP (hardware type 1, protocol 0x0800, sizes 6 and 4).
    pub fn is_ethernet_ipv4(&self) -> bool {
        self.hardware_type() == HTYPE_ETHERNET
            && self.protocol_type() == PTYPE_IPV4
            && self.hardware_len() == 6
            && self.protocol_len() == 4
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ArpPacket<T> {
    /// Sets the hardware type.
    pub fn set_hardware_type(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::HTYPE.start, v);
    }

    /// Sets the protocol type.
    pub fn set_protocol_type(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::PTYPE.start, v);
    }

    /// Sets the hardware address length.
    pub fn set_hardware_len(&mut self, v: u8) {
        self.buffer.as_mut()[field::HLEN] = v;
    }

    /// Sets the protocol address length.
    pub fn set_protocol_len(&mut self, v: u8) {
        self.buffer.as_mut()[field::PLEN] = v;
    }

    /// Sets the operation.
    pub fn set_operation(&mut self, op: ArpOperation) {
        put16(self.buffer.as_mut(), field::OPER.start, op.to_raw());
    }

    /// Writes the four addresses; their sizes must match the length fields.
    pub fn set_addrs(&mut self, sha: &[u8], spa: &[u8], tha: &[u8], tpa: &[u8]) {
        let mut at = field::ADDRS;
        let b = self.buffer.as_mut();
        for a in [sha, spa, tha, tpa] {
            b[at..at + a.len()].copy_from_slice(a);
            at += a.len();
        }
    }
}

/// An Ethernet/IPv4 ARP packet, owned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArpRepr {
    /// The operation (request, reply, ...).
    pub operation: ArpOperation,
    /// The sender's hardware address.
    pub source_hardware_addr: MacAddr,
    /// The sender's protocol address.
    pub source_protocol_addr: Ipv4Addr,
    /// The target's hardware address.
    pub target_hardware_addr: MacAddr,
    /// The target's protocol address.
    pub target_protocol_addr: Ipv4Addr,
}

impl ArpRepr {
    /// Parses an Ethernet/IPv4 ARP packet; other kinds are a `BadValue` naming the
    /// first field that is not Ethernet/IPv4.
    pub fn parse<T: AsRef<[u8]>>(packet: &ArpPacket<T>) -> Result<Self> {
        packet.check_len()?;
        let bad = |field, offset, value: u64, reason| Error::BadValue {
            layer: "arp",
            field,
            offset,
            value,
            reason,
        };
        if packet.hardware_type() != HTYPE_ETHERNET {
            return Err(bad(
                "hardware type",
                0,
                packet.hardware_type().into(),
                "only Ethernet (1) is supported",
            ));
        }
        if packet.protocol_type() != PTYPE_IPV4 {
            return Err(bad(
                "protocol type",
                2,
                packet.protocol_type().into(),
                "only IPv4 (0x0800) is supported",
            ));
        }
        if packet.hardware_len() != 6 {
            return Err(bad(
                "hardware length",
                4,
                packet.hardware_len().into(),
                "Ethernet addresses are 6 bytes",
            ));
        }
        if packet.protocol_len() != 4 {
            return Err(bad(
                "protocol length",
                5,
                packet.protocol_len().into(),
                "IPv4 addresses are 4 bytes",
            ));
        }
        let ip = |b: &[u8]| Ipv4Addr::new(b[0], b[1], b[2], b[3]);
        Ok(ArpRepr {
            operation: packet.operation(),
            source_hardware_addr: mac(packet.source_hardware_addr()),
            source_protocol_addr: ip(packet.source_protocol_addr()),
            target_hardware_addr: mac(packet.target_hardware_addr()),
            target_protocol_addr: ip(packet.target_protocol_addr()),
        })
    }

    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        ETHERNET_IPV4_LEN
    }

    /// Writes the structure at the start of `buf`; returns the bytes written.
    pub fn emit(&self, buf: &mut [u8]) -> EmitResult<usize> {
        let mut p = ArpPacket::new_unchecked(room("arp", buf, ETHERNET_IPV4_LEN)?);
        p.set_hardware_type(HTYPE_ETHERNET);
        p.set_protocol_type(PTYPE_IPV4);
        p.set_hardware_len(6);
        p.set_protocol_len(4);
        p.set_operation(self.operation);
        p.set_addrs(
            &self.source_hardware_addr.0,
            &self.source_protocol_addr.octets(),
            &self.target_hardware_addr.0,
            &self.target_protocol_addr.octets(),
        );
        Ok(ETHERNET_IPV4_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;
    use proptest::prelude::*;

    #[test]
    fn request_vector() {
        let arp = &testdata::ARP_REQUEST[14..];
        let p = ArpPacket::new_checked(arp).unwrap();
        assert!(p.is_ethernet_ipv4());
        let r = ArpRepr::parse(&p).unwrap();
        assert_eq!(
            r,
            ArpRepr {
                operation: ArpOperation::Request,
                source_hardware_addr: MacAddr([0x00, 0x00, 0x5e, 0x00, 0x53, 0x01]),
                source_protocol_addr: Ipv4Addr::new(192, 0, 2, 1),
                target_hardware_addr: MacAddr::ZERO,
                target_protocol_addr: Ipv4Addr::new(192, 0, 2, 2),
            }
        );
        let mut out = [0u8; 28];
        r.emit(&mut out).unwrap();
        assert_eq!(&out[..], &arp[..28]);
    }

    #[test]
    fn every_truncation() {
        let arp = &testdata::ARP_REQUEST[14..14 + 28];
        for n in 0..arp.len() {
            let e = ArpPacket::new_checked(&arp[..n]).unwrap_err();
            assert_eq!(
                e,
                Error::Truncated {
                    layer: "arp",
                    offset: 0,
                    needed: if n < 8 { 8 } else { 28 },
                    available: n
                }
            );
        }
    }

    #[test]
    fn other_kinds_are_typed_errors() {
        let mut arp = testdata::ARP_REQUEST[14..14 + 28].to_vec();
        arp[1] = 6; // IEEE 802 hardware
        let e = ArpRepr::parse(&ArpPacket::new_checked(&arp[..]).unwrap()).unwrap_err();
        assert!(matches!(
            e,
            Error::BadValue {
                field: "hardware type",
                offset: 0,
                value: 6,
                ..
            }
        ));
        // Odd sizes are read safely by the view.
        let odd = [0, 1, 8, 0, 2, 1, 0, 1, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff];
        let p = ArpPacket::new_checked(&odd[..]).unwrap();
        assert_eq!(p.source_hardware_addr(), &[0xaa, 0xbb]);
        assert_eq!(p.target_protocol_addr(), &[0xff]);
    }

    proptest! {
        #[test]
        fn round_trip(op: u16, sha: [u8; 6], spa: [u8; 4], tha: [u8; 6], tpa: [u8; 4]) {
            let r = ArpRepr {
                operation: op.into(),
                source_hardware_addr: MacAddr(sha),
                source_protocol_addr: spa.into(),
                target_hardware_addr: MacAddr(tha),
                target_protocol_addr: tpa.into(),
            };
            let mut buf = [0u8; 28];
            r.emit(&mut buf).unwrap();
            prop_assert_eq!(ArpRepr::parse(&ArpPacket::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }
    }
}
