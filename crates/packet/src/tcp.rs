//! TCP (RFC 9293): the header, its options walked safely, the payload, and the
//! checksum over the IPv4 or IPv6 pseudo-header.

use crate::checksum::{self, PseudoHeader};
use crate::error::{fits, room, EmitResult, Error, Result};
use crate::ip::IpProtocol;
use crate::macros::{be16, be32, put16, put32};

mod field {
    use crate::Field;
    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const SEQ_NUM: Field = 4..8;
    pub const ACK_NUM: Field = 8..12;
    pub const FLAGS: Field = 12..14;
    pub const WIN_SIZE: Field = 14..16;
    pub const CHECKSUM: Field = 16..18;
    pub const URGENT: Field = 18..20;
    pub const OPTIONS: usize = 20;
}

/// Length of the header without options.
pub const HEADER_LEN: usize = field::OPTIONS;
/// Longest header: data offset 15.
pub const MAX_HEADER_LEN: usize = 60;

/// TCP flags: the low 12 bits of the data-offset/flags word (the 3 reserved bits
/// included, as OpenFlow 1.5's `TCP_FLAGS` has them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TcpFlags(pub u16);

impl TcpFlags {
    /// No more data from sender.
    pub const FIN: u16 = 0x001;
    /// Synchronize sequence numbers.
    pub const SYN: u16 = 0x002;
    /// Reset the connection.
    pub const RST: u16 = 0x004;
    /// Push.
    pub const PSH: u16 = 0x008;
    /// The acknowledgment number is significant.
    pub const ACK: u16 = 0x010;
    /// The urgent pointer is significant.
    pub const URG: u16 = 0x020;
    /// ECN echo.
    pub const ECE: u16 = 0x040;
    /// Congestion window reduced.
    pub const CWR: u16 = 0x080;
    /// The (historic) ECN nonce sum bit.
    pub const NS: u16 = 0x100;

    /// True when every bit of `bits` is set.
    pub fn contains(self, bits: u16) -> bool {
        self.0 & bits == bits
    }

    /// FIN is set.
    pub fn fin(self) -> bool {
        self.contains(Self::FIN)
    }

    /// SYN is set.
    pub fn syn(self) -> bool {
        self.contains(Self::SYN)
    }

    /// RST is set.
    pub fn rst(self) -> bool {
        self.contains(Self::RST)
    }

    /// ACK is set.
    pub fn ack(self) -> bool {
        self.contains(Self::ACK)
    }
}

/// A zero-copy view of a TCP segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> TcpPacket<T> {
    /// A view with no checks: getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Self {
        TcpPacket { buffer }
    }

    /// A view whose getters cannot panic: the header, options included, is present and
    /// its data offset is at least 5. The buffer is the whole segment: everything after
    /// the header is payload.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks what `new_checked` checks.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        crate::error::need("tcp", b, HEADER_LEN)?;
        let header_len = self.header_len();
        // RFC 9293 §3.1: the data offset counts 32-bit words, "the TCP header (even
        // one including options) is an integer multiple of 32 bits long", at least 5.
        if header_len < HEADER_LEN {
            return Err(Error::LengthTooShort {
                layer: "tcp",
                field: "data offset",
                offset: field::FLAGS.start,
                length: header_len,
                min: HEADER_LEN,
            });
        }
        crate::error::need("tcp", b, header_len)
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

    /// Sequence number.
    pub fn seq_number(&self) -> u32 {
        be32(self.buffer.as_ref(), field::SEQ_NUM.start)
    }

    /// Acknowledgment number.
    pub fn ack_number(&self) -> u32 {
        be32(self.buffer.as_ref(), field::ACK_NUM.start)
    }

    /// Header length in bytes (data offset × 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::FLAGS.start] >> 4) * 4
    }

    /// The flags.
    pub fn flags(&self) -> TcpFlags {
        TcpFlags(be16(self.buffer.as_ref(), field::FLAGS.start) & 0x0fff)
    }

    /// Window size.
    pub fn window_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::WIN_SIZE.start)
    }

    /// The checksum field as received.
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }

    /// Urgent pointer.
    pub fn urgent_at(&self) -> u16 {
        be16(self.buffer.as_ref(), field::URGENT.start)
    }

    /// The option bytes.
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[field::OPTIONS..self.header_len()]
    }

    /// The options, walked safely.
    pub fn option_iter(&self) -> TcpOptions<'_> {
        TcpOptions {
            buf: self.options(),
            pos: 0,
        }
    }

    /// The payload.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }

    /// True when the checksum over `pseudo` and the whole segment is right.
    pub fn verify_checksum(&self, pseudo: &PseudoHeader) -> bool {
        checksum::verify_transport(pseudo, IpProtocol::Tcp.to_raw(), self.buffer.as_ref())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TcpPacket<T> {
    /// Sets the source port.
    pub fn set_src_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::SRC_PORT.start, v);
    }

    /// Sets the destination port.
    pub fn set_dst_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::DST_PORT.start, v);
    }

    /// Sets the sequence number.
    pub fn set_seq_number(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::SEQ_NUM.start, v);
    }

    /// Sets the acknowledgment number.
    pub fn set_ack_number(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::ACK_NUM.start, v);
    }

    /// Sets the header length in bytes (a multiple of 4, 20..=60) and the flags.
    pub fn set_header_len_and_flags(&mut self, header_len: usize, flags: TcpFlags) {
        let v = (((header_len / 4) as u16) << 12) | (flags.0 & 0x0fff);
        put16(self.buffer.as_mut(), field::FLAGS.start, v);
    }

    /// Sets the window size.
    pub fn set_window_len(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::WIN_SIZE.start, v);
    }

    /// Sets the urgent pointer.
    pub fn set_urgent_at(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::URGENT.start, v);
    }

    /// The payload, for writing.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        &mut self.buffer.as_mut()[start..]
    }

    /// Computes and writes the checksum over `pseudo` and the whole buffer.
    pub fn fill_checksum(&mut self, pseudo: &PseudoHeader) {
        put16(self.buffer.as_mut(), field::CHECKSUM.start, 0);
        let c = checksum::transport(pseudo, IpProtocol::Tcp.to_raw(), self.buffer.as_ref());
        put16(self.buffer.as_mut(), field::CHECKSUM.start, c);
    }
}

/// One TCP option. End-of-list ends the walk and is not yielded; no-operation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpOption<'a> {
    /// The option kind (1 NOP, 2 MSS, 3 window scale, 4 SACK permitted, 8 timestamps...).
    pub kind: u8,
    /// The bytes after kind and length (empty for NOP).
    pub data: &'a [u8],
}

impl TcpOption<'_> {
    /// The maximum segment size, for a well-formed MSS option.
    pub fn mss(&self) -> Option<u16> {
        (self.kind == 2 && self.data.len() == 2).then(|| be16(self.data, 0))
    }

    /// The shift count, for a well-formed window scale option.
    pub fn window_scale(&self) -> Option<u8> {
        (self.kind == 3 && self.data.len() == 1).then(|| self.data[0])
    }
}

/// Walks TCP options. A length below 2 or running past the header is an error (its
/// offset counted from the start of the TCP header), after which the walk ends.
#[derive(Debug, Clone)]
pub struct TcpOptions<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for TcpOptions<'a> {
    type Item = Result<TcpOption<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.buf.get(self.pos..)?;
        let offset = HEADER_LEN + self.pos;
        let fail = |this: &mut Self, e| {
            this.pos = this.buf.len();
            Some(Err(e))
        };
        match rest {
            [] | [0, ..] => {
                self.pos = self.buf.len();
                None
            }
            [1, ..] => {
                self.pos += 1;
                Some(Ok(TcpOption { kind: 1, data: &[] }))
            }
            [_] => fail(
                self,
                Error::Truncated {
                    layer: "tcp option",
                    offset,
                    needed: 2,
                    available: 1,
                },
            ),
            [kind, len, ..] => {
                let len = usize::from(*len);
                if len < 2 {
                    fail(
                        self,
                        Error::LengthTooShort {
                            layer: "tcp option",
                            field: "length",
                            offset: offset + 1,
                            length: len,
                            min: 2,
                        },
                    )
                } else if len > rest.len() {
                    fail(
                        self,
                        Error::LengthOverrun {
                            layer: "tcp option",
                            field: "length",
                            offset: offset + 1,
                            length: len,
                            available: rest.len(),
                        },
                    )
                } else {
                    self.pos += len;
                    Some(Ok(TcpOption {
                        kind: *kind,
                        data: &rest[2..len],
                    }))
                }
            }
        }
    }
}

/// A TCP segment, owned (borrowing its options and payload). The checksum is not
/// kept: `emit` computes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TcpRepr<'a> {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq_number: u32,
    /// Acknowledgment number.
    pub ack_number: u32,
    /// The flags.
    pub flags: TcpFlags,
    /// Window size.
    pub window_len: u16,
    /// Urgent pointer.
    pub urgent_at: u16,
    /// Option bytes as on the wire: a multiple of 4, at most 40.
    pub options: &'a [u8],
    /// The payload.
    pub payload: &'a [u8],
}

impl<'a> TcpRepr<'a> {
    /// Parses a segment; the checksum is not checked (see [`TcpPacket::verify_checksum`]).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &TcpPacket<&'a T>) -> Result<Self> {
        packet.check_len()?;
        let b: &'a [u8] = T::as_ref(packet.buffer);
        Ok(TcpRepr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
            seq_number: packet.seq_number(),
            ack_number: packet.ack_number(),
            flags: packet.flags(),
            window_len: packet.window_len(),
            urgent_at: packet.urgent_at(),
            options: &b[field::OPTIONS..packet.header_len()],
            payload: &b[packet.header_len()..],
        })
    }

    /// Header length in bytes.
    pub fn header_len(&self) -> usize {
        HEADER_LEN + self.options.len()
    }

    /// Bytes `emit` writes.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload.len()
    }

    /// Writes the whole segment, its checksum computed over `pseudo`.
    pub fn emit(&self, pseudo: &PseudoHeader, buf: &mut [u8]) -> EmitResult<usize> {
        let (hl, len) = (self.header_len(), self.buffer_len());
        let ol = self.options.len() as u64;
        fits(
            self.options.len() % 4 == 0,
            "tcp",
            "options length",
            ol,
            "a multiple of 4",
        )?;
        fits(
            hl <= MAX_HEADER_LEN,
            "tcp",
            "options length",
            ol,
            "at most 40 bytes",
        )?;
        fits(
            self.flags.0 <= 0x0fff,
            "tcp",
            "flags",
            self.flags.0.into(),
            "12 bits",
        )?;
        let b = room("tcp", buf, len)?;
        b[field::OPTIONS..hl].copy_from_slice(self.options);
        b[hl..].copy_from_slice(self.payload);
        let mut p = TcpPacket::new_unchecked(b);
        p.set_src_port(self.src_port);
        p.set_dst_port(self.dst_port);
        p.set_seq_number(self.seq_number);
        p.set_ack_number(self.ack_number);
        p.set_header_len_and_flags(hl, self.flags);
        p.set_window_len(self.window_len);
        p.set_urgent_at(self.urgent_at);
        p.fill_checksum(pseudo);
        Ok(len)
    }
}

#[cfg(test)]
#[path = "tcp_tests.rs"]
mod tests;
