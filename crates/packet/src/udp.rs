//! UDP (RFC 768).

use crate::checksum::{self, PseudoHeader};
use crate::error::{fits, room, EmitResult, Error, Result};
use crate::ip::IpProtocol;
use crate::macros::{be16, put16};

mod field {
    use crate::Field;
    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const LENGTH: Field = 4..6;
    pub const CHECKSUM: Field = 6..8;
    pub const PAYLOAD: usize = 8;
}

/// Length of the UDP header.
pub const HEADER_LEN: usize = field::PAYLOAD;

/// A zero-copy view of a UDP datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
    /// A view with no checks: getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Self {
        UdpPacket { buffer }
    }

    /// A view whose getters cannot panic: the header is present, its length is at
    /// least 8 and the buffer holds that many bytes (more are ignored).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks what `new_checked` checks.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        crate::error::need("udp", b, HEADER_LEN)?;
        let len = usize::from(self.len());
        // RFC 768: "the minimum value of the length is eight".
        if len < HEADER_LEN {
            return Err(Error::LengthTooShort {
                layer: "udp",
                field: "length",
                offset: field::LENGTH.start,
                length: len,
                min: HEADER_LEN,
            });
        }
        crate::error::need("udp", b, len)
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Source port.
    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SRC_PORT.start)
    }

    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::DST_PORT.start)
    }

    /// The length field: header and payload.
    pub fn len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH.start)
    }

    /// True when the length field says there is no payload.
    pub fn is_empty(&self) -> bool {
        usize::from(self.len()) <= HEADER_LEN
    }

    /// The checksum field as received.
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }

    /// The payload, up to the length field's end.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD..usize::from(self.len())]
    }

    /// True when the checksum is right, or is zero ("no checksum", allowed over IPv4
    /// only: RFC 8200 §8.1 makes it mandatory over IPv6).
    pub fn verify_checksum(&self, pseudo: &PseudoHeader) -> bool {
        if self.checksum() == 0 {
            return pseudo.is_v4();
        }
        let b = &self.buffer.as_ref()[..usize::from(self.len())];
        checksum::verify_transport(pseudo, IpProtocol::Udp.to_raw(), b)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UdpPacket<T> {
    /// Sets the source port.
    pub fn set_src_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::SRC_PORT.start, v);
    }

    /// Sets the destination port.
    pub fn set_dst_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::DST_PORT.start, v);
    }

    /// Sets the length field.
    pub fn set_len(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::LENGTH.start, v);
    }

    /// The payload, for writing.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = usize::from(self.len());
        &mut self.buffer.as_mut()[field::PAYLOAD..end]
    }

    /// Computes and writes the checksum (a computed zero is sent as 0xffff).
    pub fn fill_checksum(&mut self, pseudo: &PseudoHeader) {
        put16(self.buffer.as_mut(), field::CHECKSUM.start, 0);
        let end = usize::from(self.len());
        let c = checksum::transport(
            pseudo,
            IpProtocol::Udp.to_raw(),
            &self.buffer.as_ref()[..end],
        );
        put16(
            self.buffer.as_mut(),
            field::CHECKSUM.start,
            if c == 0 { 0xffff } else { c },
        );
    }
}

/// A UDP datagram, owned (borrowing its payload). The checksum is not kept: `emit`
/// computes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UdpRepr<'a> {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// The payload.
    pub payload: &'a [u8],
}

impl<'a> UdpRepr<'a> {
    /// Parses a datagram; the checksum is not checked (see
    /// [`UdpPacket::verify_checksum`]).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &UdpPacket<&'a T>) -> Result<Self> {
        packet.check_len()?;
        Ok(UdpRepr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
            payload: &T::as_ref(packet.buffer)[field::PAYLOAD..usize::from(packet.len())],
        })
    }

    /// Bytes `emit` writes.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.payload.len()
    }

    /// Writes the whole datagram, its checksum computed over `pseudo`.
    pub fn emit(&self, pseudo: &PseudoHeader, buf: &mut [u8]) -> EmitResult<usize> {
        let len = self.buffer_len();
        fits(len <= 0xffff, "udp", "length", len as u64, "16 bits")?;
        let b = room("udp", buf, len)?;
        b[field::PAYLOAD..].copy_from_slice(self.payload);
        let mut p = UdpPacket::new_unchecked(b);
        p.set_src_port(self.src_port);
        p.set_dst_port(self.dst_port);
        p.set_len(len as u16);
        p.fill_checksum(pseudo);
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;
    use proptest::prelude::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn datagram() -> &'static [u8] {
        &testdata::DOUBLE_TAGGED_UDP[22 + 20..]
    }

    fn v4() -> PseudoHeader {
        PseudoHeader::V4 {
            src: Ipv4Addr::new(192, 0, 2, 1),
            dst: Ipv4Addr::new(192, 0, 2, 2),
        }
    }

    #[test]
    fn vector() {
        let p = UdpPacket::new_checked(datagram()).unwrap();
        assert_eq!((p.src_port(), p.dst_port(), p.len()), (5353, 53, 12));
        assert_eq!(p.payload(), b"hi!\n");
        assert!(p.verify_checksum(&v4()));
        let r = UdpRepr::parse(&p).unwrap();
        let mut out = [0u8; 12];
        r.emit(&v4(), &mut out).unwrap();
        assert_eq!(&out[..], datagram());
    }

    #[test]
    fn zero_checksum() {
        let d = &testdata::MPLS_UDP[14 + 8 + 20..];
        let p = UdpPacket::new_checked(d).unwrap();
        assert_eq!(p.checksum(), 0);
        assert!(p.verify_checksum(&v4()));
        let v6 = PseudoHeader::V6 {
            src: Ipv6Addr::LOCALHOST,
            dst: Ipv6Addr::LOCALHOST,
        };
        assert!(!p.verify_checksum(&v6));
    }

    #[test]
    fn every_truncation() {
        let d = datagram();
        for n in 0..d.len() {
            let needed = if n < 8 { 8 } else { 12 };
            assert_eq!(
                UdpPacket::new_checked(&d[..n]).unwrap_err(),
                Error::Truncated {
                    layer: "udp",
                    offset: 0,
                    needed,
                    available: n
                }
            );
        }
    }

    #[test]
    fn bad_length() {
        let mut d = datagram().to_vec();
        d[5] = 7;
        assert!(matches!(
            UdpPacket::new_checked(&d[..]).unwrap_err(),
            Error::LengthTooShort {
                offset: 4,
                length: 7,
                min: 8,
                ..
            }
        ));
    }

    proptest! {
        #[test]
        fn round_trip(ports: (u16, u16), payload in proptest::collection::vec(any::<u8>(), 0..200), v6: bool, a: [u8; 16]) {
            let pseudo = if v6 {
                PseudoHeader::V6 { src: Ipv6Addr::from(a), dst: Ipv6Addr::LOCALHOST }
            } else {
                PseudoHeader::V4 { src: Ipv4Addr::new(a[0], a[1], a[2], a[3]), dst: Ipv4Addr::LOCALHOST }
            };
            let r = UdpRepr { src_port: ports.0, dst_port: ports.1, payload: &payload };
            let mut buf = vec![0u8; r.buffer_len()];
            r.emit(&pseudo, &mut buf).unwrap();
            let p = UdpPacket::new_checked(&buf[..]).unwrap();
            prop_assert!(p.verify_checksum(&pseudo));
            prop_assert_eq!(UdpRepr::parse(&p).unwrap(), r);
        }
    }
}
