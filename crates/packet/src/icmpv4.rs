//! ICMP for IPv4 (RFC 792).

use crate::checksum;
use crate::error::{room, EmitResult, Result};
use crate::macros::{be16, be32, open_enum, put16, put32};

open_enum! {
    /// The ICMP message type.
    pub enum Icmpv4Type: u8 {
        EchoReply = 0,
        DstUnreachable = 3,
        Redirect = 5,
        EchoRequest = 8,
        RouterAdvert = 9,
        RouterSolicit = 10,
        TimeExceeded = 11,
        ParamProblem = 12,
        Timestamp = 13,
        TimestampReply = 14,
    }
}

mod field {
    use crate::Field;
    pub const TYPE: usize = 0;
    pub const CODE: usize = 1;
    pub const CHECKSUM: Field = 2..4;
    pub const REST: Field = 4..8;
    pub const ECHO_IDENT: Field = 4..6;
    pub const ECHO_SEQNO: Field = 6..8;
    pub const DATA: usize = 8;
}

/// Length of the ICMP header every message has (type, code, checksum and 4 bytes).
pub const HEADER_LEN: usize = field::DATA;

/// A zero-copy view of an ICMP message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Icmpv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Icmpv4Packet<T> {
    /// A view with no checks: getters panic on a buffer shorter than 8 bytes.
    pub const fn new_unchecked(buffer: T) -> Self {
        Icmpv4Packet { buffer }
    }

    /// A view whose getters cannot panic: the 8-byte header is present.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks what `new_checked` checks.
    pub fn check_len(&self) -> Result<()> {
        crate::error::need("icmp", self.buffer.as_ref(), HEADER_LEN)
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The message type.
    pub fn msg_type(&self) -> Icmpv4Type {
        Icmpv4Type::from_raw(self.buffer.as_ref()[field::TYPE])
    }

    /// The message code.
    pub fn msg_code(&self) -> u8 {
        self.buffer.as_ref()[field::CODE]
    }

    /// The checksum field as received.
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }

    /// The 4 bytes after the checksum, whatever the type makes of them.
    pub fn rest_of_header(&self) -> u32 {
        be32(self.buffer.as_ref(), field::REST.start)
    }

    /// Echo request and reply: the identifier.
    pub fn echo_ident(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ECHO_IDENT.start)
    }

    /// Echo request and reply: the sequence number.
    pub fn echo_seq_no(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ECHO_SEQNO.start)
    }

    /// Everything after the 8-byte header.
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[field::DATA..]
    }

    /// True when the checksum over the whole message is right.
    pub fn verify_checksum(&self) -> bool {
        checksum::fold(checksum::sum(self.buffer.as_ref())) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Icmpv4Packet<T> {
    /// Sets the message type.
    pub fn set_msg_type(&mut self, v: Icmpv4Type) {
        self.buffer.as_mut()[field::TYPE] = v.to_raw();
    }

    /// Sets the message code.
    pub fn set_msg_code(&mut self, v: u8) {
        self.buffer.as_mut()[field::CODE] = v;
    }

    /// Sets the 4 bytes after the checksum.
    pub fn set_rest_of_header(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::REST.start, v);
    }

    /// The data, for writing.
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::DATA..]
    }

    /// Computes and writes the checksum over the whole buffer.
    pub fn fill_checksum(&mut self) {
        put16(self.buffer.as_mut(), field::CHECKSUM.start, 0);
        let c = checksum::checksum(self.buffer.as_ref());
        put16(self.buffer.as_mut(), field::CHECKSUM.start, c);
    }
}

/// An ICMP message, owned. Echoes get their fields by name; every other message keeps
/// its type, code, the 4 bytes after the checksum and its data as received. The
/// checksum is not kept: `emit` computes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Icmpv4Repr<'a> {
    /// Echo request.
    EchoRequest {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq_no: u16,
        /// The data after the header.
        data: &'a [u8],
    },
    /// Echo reply.
    EchoReply {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq_no: u16,
        /// The data after the header.
        data: &'a [u8],
    },
    /// Any other message (and echoes with a non-zero code).
    Other {
        /// The message type.
        msg_type: Icmpv4Type,
        /// The message code.
        code: u8,
        /// The 4 bytes after the checksum.
        rest_of_header: u32,
        /// The data after the header.
        data: &'a [u8],
    },
}

impl<'a> Icmpv4Repr<'a> {
    /// Parses a message; the checksum is not checked (see
    /// [`Icmpv4Packet::verify_checksum`]).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Icmpv4Packet<&'a T>) -> Result<Self> {
        packet.check_len()?;
        let data = &T::as_ref(packet.buffer)[field::DATA..];
        let (ident, seq_no) = (packet.echo_ident(), packet.echo_seq_no());
        Ok(match (packet.msg_type(), packet.msg_code()) {
            (Icmpv4Type::EchoRequest, 0) => Icmpv4Repr::EchoRequest {
                ident,
                seq_no,
                data,
            },
            (Icmpv4Type::EchoReply, 0) => Icmpv4Repr::EchoReply {
                ident,
                seq_no,
                data,
            },
            (msg_type, code) => Icmpv4Repr::Other {
                msg_type,
                code,
                rest_of_header: packet.rest_of_header(),
                data,
            },
        })
    }

    fn data(&self) -> &'a [u8] {
        match *self {
            Icmpv4Repr::EchoRequest { data, .. }
            | Icmpv4Repr::EchoReply { data, .. }
            | Icmpv4Repr::Other { data, .. } => data,
        }
    }

    /// Bytes `emit` writes.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.data().len()
    }

    /// Writes the whole message, checksum included.
    pub fn emit(&self, buf: &mut [u8]) -> EmitResult<usize> {
        let len = self.buffer_len();
        let (msg_type, code, rest) = match *self {
            Icmpv4Repr::EchoRequest { ident, seq_no, .. } => (
                Icmpv4Type::EchoRequest,
                0,
                (u32::from(ident) << 16) | u32::from(seq_no),
            ),
            Icmpv4Repr::EchoReply { ident, seq_no, .. } => (
                Icmpv4Type::EchoReply,
                0,
                (u32::from(ident) << 16) | u32::from(seq_no),
            ),
            Icmpv4Repr::Other {
                msg_type,
                code,
                rest_of_header,
                ..
            } => (msg_type, code, rest_of_header),
        };
        let mut p = Icmpv4Packet::new_unchecked(room("icmp", buf, len)?);
        p.set_msg_type(msg_type);
        p.set_msg_code(code);
        p.set_rest_of_header(rest);
        p.data_mut().copy_from_slice(self.data());
        p.fill_checksum();
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;
    use crate::Error;
    use proptest::prelude::*;

    fn message() -> &'static [u8] {
        &testdata::ICMP_ECHO_IPV4_OPTIONS[14 + 24..]
    }

    #[test]
    fn echo_request_vector() {
        let p = Icmpv4Packet::new_checked(message()).unwrap();
        assert_eq!(p.msg_type(), Icmpv4Type::EchoRequest);
        assert_eq!(p.msg_code(), 0);
        assert_eq!((p.echo_ident(), p.echo_seq_no()), (0x4242, 7));
        assert!(p.verify_checksum());
        let r = Icmpv4Repr::parse(&p).unwrap();
        assert_eq!(
            r,
            Icmpv4Repr::EchoRequest {
                ident: 0x4242,
                seq_no: 7,
                data: b"pharos!!"
            }
        );
        let mut out = [0u8; 16];
        assert_eq!(r.emit(&mut out).unwrap(), 16);
        assert_eq!(&out[..], message());
    }

    #[test]
    fn every_truncation() {
        for n in 0..HEADER_LEN {
            assert_eq!(
                Icmpv4Packet::new_checked(&message()[..n]).unwrap_err(),
                Error::Truncated {
                    layer: "icmp",
                    offset: 0,
                    needed: 8,
                    available: n
                }
            );
        }
        for n in HEADER_LEN..message().len() {
            // Cut data: the view reads it, the checksum no longer matches.
            let p = Icmpv4Packet::new_checked(&message()[..n]).unwrap();
            assert_eq!(p.data().len(), n - 8);
            assert!(!p.verify_checksum());
        }
    }

    fn repr() -> impl Strategy<Value = (u8, u8, u32, Vec<u8>, u8)> {
        (
            any::<u8>(),
            any::<u8>(),
            any::<u32>(),
            proptest::collection::vec(any::<u8>(), 0..64),
            0u8..3,
        )
    }

    proptest! {
        #[test]
        fn round_trip((ty, code, rest, data, which) in repr()) {
            let (ident, seq_no) = ((rest >> 16) as u16, rest as u16);
            let r = match which {
                0 => Icmpv4Repr::EchoRequest { ident, seq_no, data: &data },
                1 => Icmpv4Repr::EchoReply { ident, seq_no, data: &data },
                _ => {
                    let msg_type = Icmpv4Type::from_raw(ty);
                    let code = if matches!(msg_type, Icmpv4Type::EchoRequest | Icmpv4Type::EchoReply) { code | 1 } else { code };
                    Icmpv4Repr::Other { msg_type, code, rest_of_header: rest, data: &data }
                }
            };
            let mut buf = vec![0u8; r.buffer_len()];
            r.emit(&mut buf).unwrap();
            let p = Icmpv4Packet::new_checked(&buf[..]).unwrap();
            prop_assert!(p.verify_checksum());
            prop_assert_eq!(Icmpv4Repr::parse(&p).unwrap(), r);
        }
    }
}
