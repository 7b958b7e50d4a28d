//! IPv6 (RFC 8200): the fixed header. Extension headers are in [`crate::ipv6ext`].
//!
//! Jumbograms (RFC 2675, payload length 0 with a hop-by-hop Jumbo Payload option) are
//! not supported: a payload length of 0 means an empty payload.

use std::net::Ipv6Addr;

use crate::error::{fits, room, EmitResult, Error, Result};
use crate::ip::IpProtocol;
use crate::macros::{be16, be32, put16, put32};

mod field {
    use crate::Field;
    pub const VER_TC_FLOW: Field = 0..4;
    pub const LENGTH: Field = 4..6;
    pub const NXT_HDR: usize = 6;
    pub const HOP_LIMIT: usize = 7;
    pub const SRC_ADDR: Field = 8..24;
    pub const DST_ADDR: Field = 24..40;
    pub const PAYLOAD: usize = 40;
}

/// Length of the fixed header.
pub const HEADER_LEN: usize = field::PAYLOAD;

fn addr(b: &[u8]) -> Ipv6Addr {
    let mut a = [0u8; 16];
    a.copy_from_slice(&b[..16]);
    Ipv6Addr::from(a)
}

/// A zero-copy view of an IPv6 packet.
///
/// `new_checked` wants the whole payload (`payload length` bytes); a packet cut short
/// passes [`check_header`](Self::check_header), and
/// [`payload_available`](Self::payload_available) gives what is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ipv6Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv6Packet<T> {
    /// A view with no checks: getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Self {
        Ipv6Packet { buffer }
    }

    /// A view whose getters cannot panic: the header and the whole payload are present.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks the 40-byte header is present, not wanting the payload.
    pub fn check_header(&self) -> Result<()> {
        crate::error::need("ipv6", self.buffer.as_ref(), HEADER_LEN)
    }

    /// [`check_header`](Self::check_header), and the whole payload is present.
    /// Bytes after it (Ethernet padding) are allowed and ignored.
    pub fn check_len(&self) -> Result<()> {
        self.check_header()?;
        crate::error::need(
            "ipv6",
            self.buffer.as_ref(),
            HEADER_LEN + usize::from(self.payload_len()),
        )
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The version field.
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[0] >> 4
    }

    /// Traffic class (DSCP and ECN).
    pub fn traffic_class(&self) -> u8 {
        (be32(self.buffer.as_ref(), field::VER_TC_FLOW.start) >> 20) as u8
    }

    /// The traffic class's DSCP (6 bits).
    pub fn dscp(&self) -> u8 {
        self.traffic_class() >> 2
    }

    /// The traffic class's ECN (2 bits).
    pub fn ecn(&self) -> u8 {
        self.traffic_class() & 3
    }

    /// Flow label (20 bits).
    pub fn flow_label(&self) -> u32 {
        be32(self.buffer.as_ref(), field::VER_TC_FLOW.start) & 0x000f_ffff
    }

    /// Payload length.
    pub fn payload_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH.start)
    }

    /// The next header.
    pub fn next_header(&self) -> IpProtocol {
        IpProtocol::from_raw(self.buffer.as_ref()[field::NXT_HDR])
    }

    /// Hop limit.
    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[field::HOP_LIMIT]
    }

    /// The source address.
    pub fn src_addr(&self) -> Ipv6Addr {
        addr(&self.buffer.as_ref()[field::SRC_ADDR])
    }

    /// The destination address.
    pub fn dst_addr(&self) -> Ipv6Addr {
        addr(&self.buffer.as_ref()[field::DST_ADDR])
    }

    /// The payload (extension headers included), `payload length` bytes.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD..HEADER_LEN + usize::from(self.payload_len())]
    }

    /// The payload bytes present: like [`payload`](Self::payload), but a packet cut
    /// short gives what there is. Needs only [`check_header`](Self::check_header).
    pub fn payload_available(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        let end = (HEADER_LEN + usize::from(self.payload_len())).min(b.len());
        &b[field::PAYLOAD..end]
    }

    /// Walks the extension headers of the payload present.
    pub fn ext_headers(&self) -> crate::ipv6ext::Ipv6ExtHeaders<'_> {
        crate::ipv6ext::Ipv6ExtHeaders::new(
            self.next_header(),
            self.payload_available(),
            HEADER_LEN,
        )
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv6Packet<T> {
    /// Sets version 6, the traffic class and the flow label (20 bits).
    pub fn set_version_tc_flow(&mut self, traffic_class: u8, flow_label: u32) {
        let v = (6 << 28) | (u32::from(traffic_class) << 20) | (flow_label & 0x000f_ffff);
        put32(self.buffer.as_mut(), field::VER_TC_FLOW.start, v);
    }

    /// Sets the payload length.
    pub fn set_payload_len(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::LENGTH.start, v);
    }

    /// Sets the next header.
    pub fn set_next_header(&mut self, v: IpProtocol) {
        self.buffer.as_mut()[field::NXT_HDR] = v.to_raw();
    }

    /// Sets the hop limit.
    pub fn set_hop_limit(&mut self, v: u8) {
        self.buffer.as_mut()[field::HOP_LIMIT] = v;
    }

    /// Sets the source address.
    pub fn set_src_addr(&mut self, a: Ipv6Addr) {
        self.buffer.as_mut()[field::SRC_ADDR].copy_from_slice(&a.octets());
    }

    /// Sets the destination address.
    pub fn set_dst_addr(&mut self, a: Ipv6Addr) {
        self.buffer.as_mut()[field::DST_ADDR].copy_from_slice(&a.octets());
    }

    /// The payload, for writing.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = HEADER_LEN + usize::from(self.payload_len());
        &mut self.buffer.as_mut()[field::PAYLOAD..end]
    }
}

/// The IPv6 fixed header, owned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv6Repr {
    /// The source address.
    pub src_addr: Ipv6Addr,
    /// The destination address.
    pub dst_addr: Ipv6Addr,
    /// The next header.
    pub next_header: IpProtocol,
    /// Payload length, extension headers included.
    pub payload_len: usize,
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class (DSCP and ECN).
    pub traffic_class: u8,
    /// 0..=0xfffff.
    pub flow_label: u32,
}

impl Ipv6Repr {
    /// Parses the header of a whole packet (`new_checked`'s rules) whose version is 6.
    pub fn parse<T: AsRef<[u8]>>(packet: &Ipv6Packet<T>) -> Result<Self> {
        packet.check_len()?;
        if packet.version() != 6 {
            return Err(Error::BadValue {
                layer: "ipv6",
                field: "version",
                offset: 0,
                value: packet.version().into(),
                reason: "must be 6",
            });
        }
        Ok(Ipv6Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            next_header: packet.next_header(),
            payload_len: packet.payload_len().into(),
            hop_limit: packet.hop_limit(),
            traffic_class: packet.traffic_class(),
            flow_label: packet.flow_label(),
        })
    }

    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the 40-byte header; the payload is the caller's.
    pub fn emit(&self, buf: &mut [u8]) -> EmitResult<usize> {
        let l = "ipv6";
        fits(
            self.payload_len <= 0xffff,
            l,
            "payload length",
            self.payload_len as u64,
            "16 bits (no jumbograms)",
        )?;
        fits(
            self.flow_label <= 0xfffff,
            l,
            "flow label",
            self.flow_label.into(),
            "20 bits",
        )?;
        let mut p = Ipv6Packet::new_unchecked(room(l, buf, HEADER_LEN)?);
        p.set_version_tc_flow(self.traffic_class, self.flow_label);
        p.set_payload_len(self.payload_len as u16);
        p.set_next_header(self.next_header);
        p.set_hop_limit(self.hop_limit);
        p.set_src_addr(self.src_addr);
        p.set_dst_addr(self.dst_addr);
        Ok(HEADER_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;
    use proptest::prelude::*;

    #[test]
    fn parse_vector() {
        let b = &testdata::TCP_SYN_IPV6_EXT[14..];
        let p = Ipv6Packet::new_checked(b).unwrap();
        assert_eq!(p.version(), 6);
        assert_eq!((p.traffic_class(), p.dscp(), p.ecn()), (0x2a, 10, 2));
        assert_eq!(p.flow_label(), 0x12345);
        assert_eq!(p.payload_len(), 56);
        assert_eq!(p.next_header(), IpProtocol::HopByHop);
        assert_eq!(p.hop_limit(), 64);
        assert_eq!(p.src_addr(), "2001:db8::1".parse::<Ipv6Addr>().unwrap());
        assert_eq!(p.dst_addr(), "2001:db8::2".parse::<Ipv6Addr>().unwrap());
        let r = Ipv6Repr::parse(&p).unwrap();
        let mut out = [0u8; 40];
        r.emit(&mut out).unwrap();
        assert_eq!(&out[..], &b[..40]);
    }

    #[test]
    fn every_truncation() {
        let b = &testdata::TCP_SYN_IPV6_EXT[14..];
        for n in 0..b.len() {
            let p = Ipv6Packet::new_unchecked(&b[..n]);
            let needed = if n < 40 { 40 } else { 96 };
            assert_eq!(
                p.check_len().unwrap_err(),
                Error::Truncated {
                    layer: "ipv6",
                    offset: 0,
                    needed,
                    available: n
                }
            );
            if n >= 40 {
                assert_eq!(p.payload_available(), &b[40..n]);
            }
        }
    }

    #[test]
    fn wrong_version() {
        let mut b = testdata::TCP_SYN_IPV6_EXT[14..].to_vec();
        b[0] = 0x45;
        let p = Ipv6Packet::new_checked(&b[..]).unwrap();
        assert!(matches!(
            Ipv6Repr::parse(&p).unwrap_err(),
            Error::BadValue {
                field: "version",
                value: 4,
                ..
            }
        ));
    }

    proptest! {
        #[test]
        fn round_trip(src: [u8; 16], dst: [u8; 16], nh: u8, len in 0usize..300, hl: u8, tc: u8, fl in 0u32..0x100000) {
            let r = Ipv6Repr {
                src_addr: src.into(), dst_addr: dst.into(), next_header: nh.into(),
                payload_len: len, hop_limit: hl, traffic_class: tc, flow_label: fl,
            };
            let mut buf = vec![0u8; HEADER_LEN + len];
            r.emit(&mut buf).unwrap();
            prop_assert_eq!(Ipv6Repr::parse(&Ipv6Packet::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }
    }
}
