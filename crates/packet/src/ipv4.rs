//! IPv4 (RFC 791), options included.

use std::net::Ipv4Addr;

use crate::checksum;
use crate::error::{fits, room, EmitResult, Error, Result};
use crate::ip::IpProtocol;
use crate::macros::{be16, put16};

mod field {
    use crate::Field;
    pub const VER_IHL: usize = 0;
    pub const DSCP_ECN: usize = 1;
    pub const LENGTH: Field = 2..4;
    pub const IDENT: Field = 4..6;
    pub const FLG_OFF: Field = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Field = 10..12;
    pub const SRC_ADDR: Field = 12..16;
    pub const DST_ADDR: Field = 16..20;
    pub const OPTIONS: usize = 20;
}

/// Length of the header without options.
pub const HEADER_LEN: usize = field::OPTIONS;
/// Longest header: IHL 15.
pub const MAX_HEADER_LEN: usize = 60;

/// A zero-copy view of an IPv4 packet.
///
/// `new_checked` wants the whole packet (`total length` bytes). A packet a switch cut
/// short (PACKET_IN's `miss_send_len`) passes [`check_header`](Self::check_header)
/// instead, and [`payload_available`](Self::payload_available) gives what is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    /// A view with no checks: getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Self {
        Ipv4Packet { buffer }
    }

    /// A view whose getters cannot panic: the header, its options and the whole
    /// payload the total length announces are present, and the lengths agree.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks the header (options included) is present and its lengths are sane,
    /// without wanting the payload: what a truncated capture can still satisfy.
    pub fn check_header(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        crate::error::need("ipv4", b, HEADER_LEN)?;
        let header_len = self.header_len();
        // RFC 791 §3.1: "the minimum value for a correct header is 5".
        if header_len < HEADER_LEN {
            return Err(Error::LengthTooShort {
                layer: "ipv4",
                field: "ihl",
                offset: field::VER_IHL,
                length: header_len,
                min: HEADER_LEN,
            });
        }
        let total_len = usize::from(self.total_len());
        if total_len < header_len {
            return Err(Error::LengthTooShort {
                layer: "ipv4",
                field: "total length",
                offset: field::LENGTH.start,
                length: total_len,
                min: header_len,
            });
        }
        crate::error::need("ipv4", b, header_len)
    }

    /// [`check_header`](Self::check_header), and the whole packet is present.
    /// Bytes after `total length` (Ethernet padding) are allowed and ignored.
    pub fn check_len(&self) -> Result<()> {
        self.check_header()?;
        crate::error::need("ipv4", self.buffer.as_ref(), usize::from(self.total_len()))
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The version field.
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] >> 4
    }

    /// Header length in bytes (IHL × 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::VER_IHL] & 0x0f) * 4
    }

    /// Differentiated services code point (6 bits).
    pub fn dscp(&self) -> u8 {
        self.buffer.as_ref()[field::DSCP_ECN] >> 2
    }

    /// Explicit congestion notification (2 bits).
    pub fn ecn(&self) -> u8 {
        self.buffer.as_ref()[field::DSCP_ECN] & 0x03
    }

    /// Total length: header and payload.
    pub fn total_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH.start)
    }

    /// Identification.
    pub fn ident(&self) -> u16 {
        be16(self.buffer.as_ref(), field::IDENT.start)
    }

    /// Don't fragment.
    pub fn dont_frag(&self) -> bool {
        be16(self.buffer.as_ref(), field::FLG_OFF.start) & 0x4000 != 0
    }

    /// More fragments follow.
    pub fn more_frags(&self) -> bool {
        be16(self.buffer.as_ref(), field::FLG_OFF.start) & 0x2000 != 0
    }

    /// Fragment offset in 8-byte units.
    pub fn frag_offset(&self) -> u16 {
        be16(self.buffer.as_ref(), field::FLG_OFF.start) & 0x1fff
    }

    /// True when this is a fragment (more fragments follow, or it is not the first).
    pub fn is_fragment(&self) -> bool {
        self.more_frags() || self.frag_offset() != 0
    }

    /// Time to live.
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[field::TTL]
    }

    /// The protocol of the payload.
    pub fn protocol(&self) -> IpProtocol {
        IpProtocol::from_raw(self.buffer.as_ref()[field::PROTOCOL])
    }

    /// The checksum field as received.
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }

    /// The source address.
    pub fn src_addr(&self) -> Ipv4Addr {
        let b = &self.buffer.as_ref()[field::SRC_ADDR];
        Ipv4Addr::new(b[0], b[1], b[2], b[3])
    }

    /// The destination address.
    pub fn dst_addr(&self) -> Ipv4Addr {
        let b = &self.buffer.as_ref()[field::DST_ADDR];
        Ipv4Addr::new(b[0], b[1], b[2], b[3])
    }

    /// The option bytes (between the fixed header and the payload).
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[field::OPTIONS..self.header_len()]
    }

    /// True when the header checksum is right.
    pub fn verify_checksum(&self) -> bool {
        checksum::fold(checksum::sum(&self.buffer.as_ref()[..self.header_len()])) == 0xffff
    }

    /// The payload: from the end of the header to `total length` (padding excluded).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..usize::from(self.total_len())]
    }

    /// The payload bytes present: like [`payload`](Self::payload), but a packet cut
    /// short gives what there is. Needs only [`check_header`](Self::check_header).
    pub fn payload_available(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        let end = usize::from(self.total_len()).min(b.len());
        &b[self.header_len()..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    /// Sets version 4 and the header length in bytes (a multiple of 4, 20..=60).
    pub fn set_version_and_header_len(&mut self, header_len: usize) {
        self.buffer.as_mut()[field::VER_IHL] = 0x40 | ((header_len / 4) as u8 & 0x0f);
    }

    /// Sets the DSCP (6 bits) and ECN (2 bits).
    pub fn set_dscp_ecn(&mut self, dscp: u8, ecn: u8) {
        self.buffer.as_mut()[field::DSCP_ECN] = (dscp << 2) | (ecn & 3);
    }

    /// Sets the total length.
    pub fn set_total_len(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::LENGTH.start, v);
    }

    /// Sets the identification.
    pub fn set_ident(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::IDENT.start, v);
    }

    /// Sets the flags and the fragment offset (in 8-byte units).
    pub fn set_frag(&mut self, dont_frag: bool, more_frags: bool, offset: u16) {
        let v = (u16::from(dont_frag) << 14) | (u16::from(more_frags) << 13) | (offset & 0x1fff);
        put16(self.buffer.as_mut(), field::FLG_OFF.start, v);
    }

    /// Sets the time to live.
    pub fn set_ttl(&mut self, v: u8) {
        self.buffer.as_mut()[field::TTL] = v;
    }

    /// Sets the protocol.
    pub fn set_protocol(&mut self, v: IpProtocol) {
        self.buffer.as_mut()[field::PROTOCOL] = v.to_raw();
    }

    /// Sets the source address.
    pub fn set_src_addr(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[field::SRC_ADDR].copy_from_slice(&a.octets());
    }

    /// Sets the destination address.
    pub fn set_dst_addr(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[field::DST_ADDR].copy_from_slice(&a.octets());
    }

    /// Computes and writes the header checksum.
    pub fn fill_checksum(&mut self) {
        put16(self.buffer.as_mut(), field::CHECKSUM.start, 0);
        let len = self.header_len();
        let c = checksum::checksum(&self.buffer.as_ref()[..len]);
        put16(self.buffer.as_mut(), field::CHECKSUM.start, c);
    }

    /// The payload, for writing.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let (start, end) = (self.header_len(), usize::from(self.total_len()));
        &mut self.buffer.as_mut()[start..end]
    }
}

/// An IPv4 header, owned. The checksum is not kept: `emit` computes it, and
/// [`Ipv4Packet::verify_checksum`] checks a received one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Repr<'a> {
    /// The source address.
    pub src_addr: Ipv4Addr,
    /// The destination address.
    pub dst_addr: Ipv4Addr,
    /// The protocol of the payload.
    pub protocol: IpProtocol,
    /// Payload length (total length minus header length).
    pub payload_len: usize,
    /// Time to live.
    pub ttl: u8,
    /// 0..=63.
    pub dscp: u8,
    /// 0..=3.
    pub ecn: u8,
    /// Identification.
    pub ident: u16,
    /// Don't fragment.
    pub dont_frag: bool,
    /// More fragments follow.
    pub more_frags: bool,
    /// Fragment offset in 8-byte units, 0..=8191.
    pub frag_offset: u16,
    /// Option bytes, as on the wire: a multiple of 4, at most 40.
    pub options: &'a [u8],
}

impl<'a> Ipv4Repr<'a> {
    /// Parses the header of a whole packet (`new_checked`'s rules) whose version is 4.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Ipv4Packet<&'a T>) -> Result<Self> {
        packet.check_len()?;
        if packet.version() != 4 {
            return Err(Error::BadValue {
                layer: "ipv4",
                field: "version",
                offset: 0,
                value: packet.version().into(),
                reason: "must be 4",
            });
        }
        Ok(Ipv4Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            protocol: packet.protocol(),
            payload_len: usize::from(packet.total_len()) - packet.header_len(),
            ttl: packet.ttl(),
            dscp: packet.dscp(),
            ecn: packet.ecn(),
            ident: packet.ident(),
            dont_frag: packet.dont_frag(),
            more_frags: packet.more_frags(),
            frag_offset: packet.frag_offset(),
            options: &T::as_ref(packet.buffer)[field::OPTIONS..packet.header_len()],
        })
    }

    /// The header length, options included.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN + self.options.len()
    }

    /// Writes the header (checksum included) at the start of `buf`; the payload is
    /// the caller's.
    pub fn emit(&self, buf: &mut [u8]) -> EmitResult<usize> {
        let hl = self.buffer_len();
        let l = "ipv4";
        let ol = self.options.len() as u64;
        fits(
            self.options.len() % 4 == 0,
            l,
            "options length",
            ol,
            "a multiple of 4",
        )?;
        fits(
            hl <= MAX_HEADER_LEN,
            l,
            "options length",
            ol,
            "at most 40 bytes",
        )?;
        let total = hl + self.payload_len;
        fits(total <= 0xffff, l, "total length", total as u64, "16 bits")?;
        fits(self.dscp < 64, l, "dscp", self.dscp.into(), "6 bits")?;
        fits(self.ecn < 4, l, "ecn", self.ecn.into(), "2 bits")?;
        fits(
            self.frag_offset < 0x2000,
            l,
            "fragment offset",
            self.frag_offset.into(),
            "13 bits",
        )?;
        let b = room(l, buf, hl)?;
        b[field::OPTIONS..hl].copy_from_slice(self.options);
        let mut p = Ipv4Packet::new_unchecked(b);
        p.set_version_and_header_len(hl);
        p.set_dscp_ecn(self.dscp, self.ecn);
        p.set_total_len(total as u16);
        p.set_ident(self.ident);
        p.set_frag(self.dont_frag, self.more_frags, self.frag_offset);
        p.set_ttl(self.ttl);
        p.set_protocol(self.protocol);
        p.set_src_addr(self.src_addr);
        p.set_dst_addr(self.dst_addr);
        p.fill_checksum();
        Ok(hl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;
    use proptest::prelude::*;

    fn packet() -> &'static [u8] {
        &testdata::ICMP_ECHO_IPV4_OPTIONS[14..]
    }

    #[test]
    fn parse_vector_with_options() {
        let p = Ipv4Packet::new_checked(packet()).unwrap();
        assert_eq!(p.version(), 4);
        assert_eq!(p.header_len(), 24);
        assert_eq!((p.dscp(), p.ecn()), (46, 1));
        assert_eq!(p.total_len(), 40);
        assert_eq!(p.ident(), 0x1234);
        assert!(p.dont_frag() && !p.more_frags() && !p.is_fragment());
        assert_eq!(p.ttl(), 64);
        assert_eq!(p.protocol(), IpProtocol::Icmp);
        assert_eq!(p.src_addr(), Ipv4Addr::new(192, 0, 2, 1));
        assert_eq!(p.dst_addr(), Ipv4Addr::new(198, 51, 100, 7));
        assert_eq!(p.options(), &[0x94, 0x04, 0, 0]);
        assert!(p.verify_checksum());
        assert_eq!(p.payload().len(), 16);
        let r = Ipv4Repr::parse(&p).unwrap();
        let mut out = [0u8; 24];
        assert_eq!(r.emit(&mut out).unwrap(), 24);
        assert_eq!(&out[..], &packet()[..24]);
    }

    #[test]
    fn bad_checksum_is_seen() {
        let mut b = packet().to_vec();
        b[10] ^= 1;
        assert!(!Ipv4Packet::new_checked(&b[..]).unwrap().verify_checksum());
    }

    #[test]
    fn every_truncation() {
        let full = packet();
        for n in 0..full.len() {
            let p = Ipv4Packet::new_unchecked(&full[..n]);
            let e = p.check_len().unwrap_err();
            let needed = if n < 20 {
                20
            } else if n < 24 {
                24
            } else {
                40
            };
            assert_eq!(
                e,
                Error::Truncated {
                    layer: "ipv4",
                    offset: 0,
                    needed,
                    available: n
                }
            );
            assert_eq!(p.check_header().is_ok(), n >= 24, "{n}");
            if n >= 24 {
                assert_eq!(p.payload_available(), &full[24..n]);
            }
        }
    }

    #[test]
    fn bad_lengths_and_version() {
        let mut b = packet().to_vec();
        b[0] = 0x44;
        assert!(matches!(
            Ipv4Packet::new_checked(&b[..]).unwrap_err(),
            Error::LengthTooShort {
                field: "ihl",
                length: 16,
                min: 20,
                ..
            }
        ));
        b[0] = 0x4f;
        b[3] = 40;
        assert!(matches!(
            Ipv4Packet::new_checked(&b[..]).unwrap_err(),
            Error::LengthTooShort {
                field: "total length",
                offset: 2,
                length: 40,
                min: 60,
                ..
            }
        ));
        b[0] = 0x66;
        let p = Ipv4Packet::new_checked(&b[..]).unwrap();
        assert!(matches!(
            Ipv4Repr::parse(&p).unwrap_err(),
            Error::BadValue {
                field: "version",
                value: 6,
                ..
            }
        ));
    }

    #[test]
    fn emit_checks_fields() {
        let p = Ipv4Packet::new_checked(packet()).unwrap();
        let r = Ipv4Repr::parse(&p).unwrap();
        let mut out = [0u8; 64];
        assert!(Ipv4Repr {
            options: &[1, 1, 1],
            ..r
        }
        .emit(&mut out)
        .is_err());
        assert!(Ipv4Repr {
            options: &[1; 44],
            ..r
        }
        .emit(&mut out)
        .is_err());
        assert!(Ipv4Repr { dscp: 64, ..r }.emit(&mut out).is_err());
        assert!(Ipv4Repr {
            payload_len: 65535,
            ..r
        }
        .emit(&mut out)
        .is_err());
        assert!(r.emit(&mut out[..23]).is_err());
    }

    proptest! {
        #[test]
        fn round_trip(
            src: [u8; 4], dst: [u8; 4], proto: u8, payload_len in 0usize..1000, ttl: u8,
            dscp in 0u8..64, ecn in 0u8..4, ident: u16, df: bool, mf: bool, off in 0u16..0x2000,
            opt_words in 0usize..=10, opt_byte: u8,
        ) {
            let options = vec![opt_byte; opt_words * 4];
            let r = Ipv4Repr {
                src_addr: src.into(), dst_addr: dst.into(), protocol: proto.into(), payload_len,
                ttl, dscp, ecn, ident, dont_frag: df, more_frags: mf, frag_offset: off, options: &options,
            };
            let mut buf = vec![0u8; r.buffer_len() + payload_len];
            r.emit(&mut buf).unwrap();
            let p = Ipv4Packet::new_checked(&buf[..]).unwrap();
            prop_assert!(p.verify_checksum());
            prop_assert_eq!(Ipv4Repr::parse(&p).unwrap(), r);
        }
    }
}
