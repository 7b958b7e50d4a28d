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
    pub const FIN: u16 = 0x001;
    pub const SYN: u16 = 0x002;
    pub const RST: u16 = 0x004;
    pub const PSH: u16 = 0x008;
    pub const ACK: u16 = 0x010;
    pub const URG: u16 = 0x020;
    pub const ECE: u16 = 0x040;
    pub const CWR: u16 = 0x080;
    /// The (historic) ECN nonce sum bit.
    pub const NS: u16 = 0x100;

    pub fn contains(self, bits: u16) -> bool {
        self.0 & bits == bits
    }

    pub fn fin(self) -> bool {
        self.contains(Self::FIN)
    }

    pub fn syn(self) -> bool {
        self.contains(Self::SYN)
    }

    pub fn rst(self) -> bool {
        self.contains(Self::RST)
    }

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

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SRC_PORT.start)
    }

    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::DST_PORT.start)
    }

    pub fn seq_number(&self) -> u32 {
        be32(self.buffer.as_ref(), field::SEQ_NUM.start)
    }

    pub fn ack_number(&self) -> u32 {
        be32(self.buffer.as_ref(), field::ACK_NUM.start)
    }

    /// Header length in bytes (data offset × 4).
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::FLAGS.start] >> 4) * 4
    }

    pub fn flags(&self) -> TcpFlags {
        TcpFlags(be16(self.buffer.as_ref(), field::FLAGS.start) & 0x0fff)
    }

    pub fn window_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::WIN_SIZE.start)
    }

    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }

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

    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }

    /// True when the checksum over `pseudo` and the whole segment is right.
    pub fn verify_checksum(&self, pseudo: &PseudoHeader) -> bool {
        checksum::verify_transport(pseudo, IpProtocol::Tcp.to_raw(), self.buffer.as_ref())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TcpPacket<T> {
    pub fn set_src_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::SRC_PORT.start, v);
    }

    pub fn set_dst_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::DST_PORT.start, v);
    }

    pub fn set_seq_number(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::SEQ_NUM.start, v);
    }

    pub fn set_ack_number(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::ACK_NUM.start, v);
    }

    /// Sets the header length in bytes (a multiple of 4, 20..=60) and the flags.
    pub fn set_header_len_and_flags(&mut self, header_len: usize, flags: TcpFlags) {
        let v = (((header_len / 4) as u16) << 12) | (flags.0 & 0x0fff);
        put16(self.buffer.as_mut(), field::FLAGS.start, v);
    }

    pub fn set_window_len(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::WIN_SIZE.start, v);
    }

    pub fn set_urgent_at(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::URGENT.start, v);
    }

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
    pub src_port: u16,
    pub dst_port: u16,
    pub seq_number: u32,
    pub ack_number: u32,
    pub flags: TcpFlags,
    pub window_len: u16,
    pub urgent_at: u16,
    /// Option bytes as on the wire: a multiple of 4, at most 40.
    pub options: &'a [u8],
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

    pub fn header_len(&self) -> usize {
        HEADER_LEN + self.options.len()
    }

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
mod tests {
    use super::*;
    use crate::testdata;
    use proptest::prelude::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn v6() -> PseudoHeader {
        PseudoHeader::V6 {
            src: Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1),
            dst: Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2),
        }
    }

    fn segment() -> &'static [u8] {
        &testdata::TCP_SYN_IPV6_EXT[14 + 56..]
    }

    #[test]
    fn syn_vector() {
        let p = TcpPacket::new_checked(segment()).unwrap();
        assert_eq!((p.src_port(), p.dst_port()), (49152, 80));
        assert_eq!(p.seq_number(), 0x01020304);
        assert_eq!(p.ack_number(), 0);
        assert_eq!(p.header_len(), 40);
        assert_eq!(p.flags(), TcpFlags(TcpFlags::SYN));
        assert!(p.flags().syn() && !p.flags().ack());
        assert_eq!(p.window_len(), 64800);
        assert!(p.verify_checksum(&v6()));
        assert!(p.payload().is_empty());
        let opts: Vec<_> = p.option_iter().map(|o| o.unwrap()).collect();
        assert_eq!(
            opts.iter().map(|o| o.kind).collect::<Vec<_>>(),
            [2, 4, 8, 1, 3]
        );
        assert_eq!(opts[0].mss(), Some(1460));
        assert_eq!(opts[4].window_scale(), Some(7));
        let r = TcpRepr::parse(&p).unwrap();
        let mut out = [0u8; 40];
        r.emit(&v6(), &mut out).unwrap();
        assert_eq!(&out[..], segment());
    }

    #[test]
    fn every_truncation() {
        let s = segment();
        for n in 0..s.len() {
            let needed = if n < 20 { 20 } else { 40 };
            assert_eq!(
                TcpPacket::new_checked(&s[..n]).unwrap_err(),
                Error::Truncated {
                    layer: "tcp",
                    offset: 0,
                    needed,
                    available: n
                }
            );
        }
    }

    #[test]
    fn bad_data_offset_and_options() {
        let mut s = segment().to_vec();
        s[12] = 0x40;
        assert!(matches!(
            TcpPacket::new_checked(&s[..]).unwrap_err(),
            Error::LengthTooShort {
                field: "data offset",
                offset: 12,
                length: 16,
                min: 20,
                ..
            }
        ));
        s[12] = 0xa0;
        s[20 + 1] = 1; // MSS length 1
        let p = TcpPacket::new_checked(&s[..]).unwrap();
        let e = p.option_iter().next().unwrap().unwrap_err();
        assert_eq!(
            e,
            Error::LengthTooShort {
                layer: "tcp option",
                field: "length",
                offset: 21,
                length: 1,
                min: 2
            }
        );
        assert!(p.option_iter().nth(1).is_none());
        s[20 + 1] = 30; // runs past the options
        let p = TcpPacket::new_checked(&s[..]).unwrap();
        assert!(matches!(
            p.option_iter().next().unwrap().unwrap_err(),
            Error::LengthOverrun {
                length: 30,
                available: 20,
                ..
            }
        ));
    }

    #[test]
    fn end_of_list_stops_the_walk() {
        let mut s = segment().to_vec();
        s[20 + 4] = 0; // end of list where SACK-permitted was
        let p = TcpPacket::new_checked(&s[..]).unwrap();
        assert_eq!(p.option_iter().count(), 1);
    }

    fn pseudo() -> impl Strategy<Value = PseudoHeader> {
        prop_oneof![
            (any::<[u8; 4]>(), any::<[u8; 4]>()).prop_map(|(s, d)| PseudoHeader::V4 {
                src: Ipv4Addr::from(s),
                dst: Ipv4Addr::from(d)
            }),
            (any::<[u8; 16]>(), any::<[u8; 16]>()).prop_map(|(s, d)| PseudoHeader::V6 {
                src: Ipv6Addr::from(s),
                dst: Ipv6Addr::from(d)
            }),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(
            ports: (u16, u16), seq: u32, ack: u32, flags in 0u16..0x1000, win: u16, urg: u16,
            opt_words in 0usize..=10, payload in proptest::collection::vec(any::<u8>(), 0..100), pseudo in pseudo(),
        ) {
            let options = vec![1u8; opt_words * 4];
            let r = TcpRepr {
                src_port: ports.0, dst_port: ports.1, seq_number: seq, ack_number: ack, flags: TcpFlags(flags),
                window_len: win, urgent_at: urg, options: &options, payload: &payload,
            };
            let mut buf = vec![0u8; r.buffer_len()];
            r.emit(&pseudo, &mut buf).unwrap();
            let p = TcpPacket::new_checked(&buf[..]).unwrap();
            prop_assert!(p.verify_checksum(&pseudo));
            prop_assert_eq!(p.option_iter().count(), opt_words * 4);
            prop_assert_eq!(TcpRepr::parse(&p).unwrap(), r);
        }

        #[test]
        fn options_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let mut seg = vec![0u8; 20];
            seg[12] = ((20 + bytes.len()) / 4 * 16) as u8;
            seg.extend_from_slice(&bytes);
            if let Ok(p) = TcpPacket::new_checked(&seg[..]) {
                for o in p.option_iter() {
                    let _ = o;
                }
            }
        }
    }
}
