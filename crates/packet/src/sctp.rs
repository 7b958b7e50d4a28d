//! SCTP (RFC 9260): the common header only, for its ports. Chunks are not parsed and
//! the CRC32c checksum is neither checked nor computed.

use crate::error::Result;
use crate::macros::{be16, be32, put16, put32};

mod field {
    use crate::Field;
    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const VERIFICATION_TAG: Field = 4..8;
    pub const CHECKSUM: Field = 8..12;
    pub const CHUNKS: usize = 12;
}

/// Length of the SCTP common header.
pub const HEADER_LEN: usize = field::CHUNKS;

/// A zero-copy view of an SCTP packet's common header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SctpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> SctpPacket<T> {
    /// A view with no checks: getters panic on a buffer shorter than 12 bytes.
    pub const fn new_unchecked(buffer: T) -> Self {
        SctpPacket { buffer }
    }

    /// A view whose getters cannot panic: the 12-byte common header is present.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks what `new_checked` checks.
    pub fn check_len(&self) -> Result<()> {
        crate::error::need("sctp", self.buffer.as_ref(), HEADER_LEN)
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

    /// Verification tag.
    pub fn verification_tag(&self) -> u32 {
        be32(self.buffer.as_ref(), field::VERIFICATION_TAG.start)
    }

    /// The CRC32c checksum as received.
    pub fn checksum(&self) -> u32 {
        be32(self.buffer.as_ref(), field::CHECKSUM.start)
    }

    /// The chunks, unparsed.
    pub fn chunks(&self) -> &[u8] {
        &self.buffer.as_ref()[field::CHUNKS..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> SctpPacket<T> {
    /// Sets the source port.
    pub fn set_src_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::SRC_PORT.start, v);
    }

    /// Sets the destination port.
    pub fn set_dst_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::DST_PORT.start, v);
    }

    /// Sets the verification tag.
    pub fn set_verification_tag(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::VERIFICATION_TAG.start, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header() {
        let b = [0x0b, 0x59, 0x0b, 0x59, 0, 0, 0, 7, 1, 2, 3, 4, 0xaa];
        let p = SctpPacket::new_checked(&b[..]).unwrap();
        assert_eq!(
            (p.src_port(), p.dst_port(), p.verification_tag()),
            (2905, 2905, 7)
        );
        assert_eq!(p.checksum(), 0x01020304);
        assert_eq!(p.chunks(), &[0xaa]);
        for n in 0..HEADER_LEN {
            assert!(SctpPacket::new_checked(&b[..n]).unwrap_err().is_truncated());
        }
    }
}
