//! Ethernet II frames (IEEE 802.3 clause 3.2 with an EtherType).

use openflow::MacAddr;

use crate::error::{need, room, EmitResult, Result};
pub use crate::ethertype::EtherType;
use crate::macros::{be16, mac, put16};

mod field {
    use crate::Field;
    pub const DST: Field = 0..6;
    pub const SRC: Field = 6..12;
    pub const ETHERTYPE: Field = 12..14;
    pub const PAYLOAD: usize = 14;
}

/// Length of the Ethernet II header (no tags, no FCS).
pub const HEADER_LEN: usize = field::PAYLOAD;

/// A zero-copy view of an Ethernet II frame (FCS not included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// A view with no checks: getters panic if the buffer is shorter than 14 bytes.
    #[inline]
    pub const fn new_unchecked(buffer: T) -> Self {
        EthernetFrame { buffer }
    }

    /// A view whose getters cannot panic: the buffer holds the 14-byte header.
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self> {
        let f = Self::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }

    /// `Err(Truncated)` unless the header is all there.
    #[inline]
    pub fn check_len(&self) -> Result<()> {
        need("ethernet", self.buffer.as_ref(), HEADER_LEN)
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The whole frame, header included.
    pub fn as_bytes(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// The destination address.
    #[inline]
    pub fn dst_addr(&self) -> MacAddr {
        mac(&self.buffer.as_ref()[field::DST])
    }

    /// The source address.
    #[inline]
    pub fn src_addr(&self) -> MacAddr {
        mac(&self.buffer.as_ref()[field::SRC])
    }

    /// The EtherType (or TPID of the first VLAN tag) as on the wire.
    #[inline]
    pub fn ethertype_raw(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ETHERTYPE.start)
    }

    /// The EtherType (or TPID of the first VLAN tag).
    #[inline]
    pub fn ethertype(&self) -> EtherType {
        EtherType::from_raw(self.ethertype_raw())
    }

    /// Everything after the 14-byte header (tags included).
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD..]
    }

    /// The tags after the header, outermost first, and then the inner EtherType.
    pub fn vlan_tags(&self) -> crate::vlan::VlanTags<'_> {
        crate::vlan::VlanTags::new(self.ethertype_raw(), self.payload(), HEADER_LEN)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    /// Sets the destination address.
    #[inline]
    pub fn set_dst_addr(&mut self, addr: MacAddr) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&addr.0);
    }

    /// Sets the source address.
    #[inline]
    pub fn set_src_addr(&mut self, addr: MacAddr) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&addr.0);
    }

    /// Sets the EtherType.
    #[inline]
    pub fn set_ethertype(&mut self, ethertype: EtherType) {
        put16(
            self.buffer.as_mut(),
            field::ETHERTYPE.start,
            ethertype.to_raw(),
        );
    }

    /// The payload, for writing.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD..]
    }
}

/// The Ethernet II header, owned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EthernetRepr {
    /// The destination address.
    pub dst_addr: MacAddr,
    /// The source address.
    pub src_addr: MacAddr,
    /// The EtherType.
    pub ethertype: EtherType,
}

impl EthernetRepr {
    /// Parses a checked frame.
    pub fn parse<T: AsRef<[u8]>>(frame: &EthernetFrame<T>) -> Result<Self> {
        frame.check_len()?;
        Ok(EthernetRepr {
            dst_addr: frame.dst_addr(),
            src_addr: frame.src_addr(),
            ethertype: frame.ethertype(),
        })
    }

    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the 14-byte header at the start of `buf`; the payload is the caller's.
    pub fn emit(&self, buf: &mut [u8]) -> EmitResult<usize> {
        let b = room("ethernet", buf, HEADER_LEN)?;
        let mut f = EthernetFrame::new_unchecked(b);
        f.set_dst_addr(self.dst_addr);
        f.set_src_addr(self.src_addr);
        f.set_ethertype(self.ethertype);
        Ok(HEADER_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use proptest::prelude::*;

    const FRAME: [u8; 18] = [
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // dst
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, // src
        0x08, 0x06, // ARP
        0xde, 0xad, 0xbe, 0xef,
    ];

    #[test]
    fn parse_vector() {
        let f = EthernetFrame::new_checked(&FRAME[..]).unwrap();
        assert_eq!(f.dst_addr(), MacAddr::BROADCAST);
        assert_eq!(f.src_addr(), MacAddr([0, 0x11, 0x22, 0x33, 0x44, 0x55]));
        assert_eq!(f.ethertype(), EtherType::Arp);
        assert_eq!(f.payload(), &[0xde, 0xad, 0xbe, 0xef]);
        let r = EthernetRepr::parse(&f).unwrap();
        let mut out = [0u8; 18];
        assert_eq!(r.emit(&mut out).unwrap(), 14);
        assert_eq!(out[..14], FRAME[..14]);
    }

    #[test]
    fn every_truncation() {
        for n in 0..HEADER_LEN {
            assert_eq!(
                EthernetFrame::new_checked(&FRAME[..n]).unwrap_err(),
                Error::Truncated {
                    layer: "ethernet",
                    offset: 0,
                    needed: 14,
                    available: n
                }
            );
        }
    }

    #[test]
    fn emit_into_short_buffer_fails() {
        let r = EthernetRepr {
            dst_addr: MacAddr::ZERO,
            src_addr: MacAddr::ZERO,
            ethertype: EtherType::Ipv4,
        };
        assert!(r.emit(&mut [0u8; 13]).is_err());
    }

    proptest! {
        #[test]
        fn round_trip(dst: [u8; 6], src: [u8; 6], ty: u16) {
            let r = EthernetRepr { dst_addr: MacAddr(dst), src_addr: MacAddr(src), ethertype: ty.into() };
            let mut buf = [0u8; HEADER_LEN];
            r.emit(&mut buf).unwrap();
            prop_assert_eq!(EthernetRepr::parse(&EthernetFrame::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }
    }
}
