//! ICMPv6 (RFC 4443) and the neighbor discovery messages OpenFlow matches on
//! (RFC 4861: neighbor solicitation and advertisement, with their link-layer address
//! options).

use std::net::Ipv6Addr;

use openflow::MacAddr;

use crate::checksum::{self, PseudoHeader};
use crate::error::{room, EmitResult, Error, Result};
use crate::ip::IpProtocol;
use crate::macros::{be16, be32, mac, open_enum, put16, put32};

open_enum! {
    /// The ICMPv6 message type.
    pub enum Icmpv6Type: u8 {
        DstUnreachable = 1,
        PacketTooBig = 2,
        TimeExceeded = 3,
        ParamProblem = 4,
        EchoRequest = 128,
        EchoReply = 129,
        MldQuery = 130,
        MldReport = 131,
        MldDone = 132,
        RouterSolicit = 133,
        RouterAdvert = 134,
        NeighborSolicit = 135,
        NeighborAdvert = 136,
        Redirect = 137,
        MldV2Report = 143,
    }
}

open_enum! {
    /// The type of a neighbor discovery option (RFC 4861 §4.6).
    pub enum NdOptionType: u8 {
        SourceLinkLayerAddr = 1,
        TargetLinkLayerAddr = 2,
        PrefixInformation = 3,
        RedirectedHeader = 4,
        Mtu = 5,
    }
}

mod field {
    use crate::Field;
    pub const TYPE: usize = 0;
    pub const CODE: usize = 1;
    pub const CHECKSUM: Field = 2..4;
    pub const BODY: usize = 4;
    pub const REST: Field = 4..8;
    pub const ECHO_IDENT: Field = 4..6;
    pub const ECHO_SEQNO: Field = 6..8;
    pub const NA_FLAGS: usize = 4;
    pub const TARGET: Field = 8..24;
    pub const ND_OPTIONS: usize = 24;
}

/// Length every ICMPv6 message this crate reads has: type, code, checksum and the
/// 4 bytes after them (all messages RFC 4443 and 4861 define have them).
pub const HEADER_LEN: usize = 8;
/// Length of a neighbor solicitation or advertisement without options.
pub const ND_LEN: usize = field::ND_OPTIONS;

/// Where a message type's ND options start, for the types that carry them.
fn options_offset(t: Icmpv6Type) -> Option<usize> {
    match t {
        Icmpv6Type::RouterSolicit => Some(8),
        Icmpv6Type::RouterAdvert => Some(16),
        Icmpv6Type::NeighborSolicit | Icmpv6Type::NeighborAdvert => Some(ND_LEN),
        Icmpv6Type::Redirect => Some(40),
        _ => None,
    }
}

/// A zero-copy view of an ICMPv6 message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Icmpv6Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Icmpv6Packet<T> {
    /// A view with no checks: getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T) -> Self {
        Icmpv6Packet { buffer }
    }

    /// A view whose getters cannot panic: the 8-byte header is present, and for the
    /// neighbor discovery types the fixed part before their options.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks what `new_checked` checks.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        crate::error::need("icmpv6", b, HEADER_LEN)?;
        match options_offset(self.msg_type()) {
            Some(n) => crate::error::need("icmpv6", b, n),
            None => Ok(()),
        }
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The message type.
    pub fn msg_type(&self) -> Icmpv6Type {
        Icmpv6Type::from_raw(self.buffer.as_ref()[field::TYPE])
    }

    /// The message code.
    pub fn msg_code(&self) -> u8 {
        self.buffer.as_ref()[field::CODE]
    }

    /// The checksum field as received.
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM.start)
    }

    /// The 4 bytes after the checksum (unused, MTU, pointer, echo id and sequence,
    /// neighbor advertisement flags, ...).
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

    /// Neighbor advertisement: the router flag.
    pub fn na_router(&self) -> bool {
        self.buffer.as_ref()[field::NA_FLAGS] & 0x80 != 0
    }

    /// Neighbor advertisement: the solicited flag.
    pub fn na_solicited(&self) -> bool {
        self.buffer.as_ref()[field::NA_FLAGS] & 0x40 != 0
    }

    /// Neighbor advertisement: the override flag.
    pub fn na_override(&self) -> bool {
        self.buffer.as_ref()[field::NA_FLAGS] & 0x20 != 0
    }

    /// The target address of a neighbor solicitation or advertisement; `None` for
    /// other types.
    pub fn nd_target(&self) -> Option<Ipv6Addr> {
        match self.msg_type() {
            Icmpv6Type::NeighborSolicit | Icmpv6Type::NeighborAdvert => {
                let mut a = [0u8; 16];
                a.copy_from_slice(&self.buffer.as_ref()[field::TARGET]);
                Some(Ipv6Addr::from(a))
            }
            _ => None,
        }
    }

    /// The ND options of router and neighbor solicitations and advertisements and of
    /// redirects, walked safely; empty for other types.
    pub fn nd_options(&self) -> NdOptions<'_> {
        let b = self.buffer.as_ref();
        let start = options_offset(self.msg_type()).unwrap_or(b.len());
        NdOptions {
            buf: &b[start.min(b.len())..],
            pos: 0,
            base: start,
        }
    }

    /// Everything after the checksum.
    pub fn body(&self) -> &[u8] {
        &self.buffer.as_ref()[field::BODY..]
    }

    /// Everything after the 8-byte header (an echo's data, an error's invoking packet).
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }

    /// True when the checksum (which covers the IPv6 pseudo-header) is right.
    pub fn verify_checksum(&self, src: Ipv6Addr, dst: Ipv6Addr) -> bool {
        let pseudo = PseudoHeader::V6 { src, dst };
        checksum::verify_transport(&pseudo, IpProtocol::Icmpv6.to_raw(), self.buffer.as_ref())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Icmpv6Packet<T> {
    /// Sets the message type.
    pub fn set_msg_type(&mut self, v: Icmpv6Type) {
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

    /// Everything after the checksum, for writing.
    pub fn body_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::BODY..]
    }

    /// Computes and writes the checksum over the pseudo-header and the whole buffer.
    pub fn fill_checksum(&mut self, src: Ipv6Addr, dst: Ipv6Addr) {
        put16(self.buffer.as_mut(), field::CHECKSUM.start, 0);
        let pseudo = PseudoHeader::V6 { src, dst };
        let c = checksum::transport(&pseudo, IpProtocol::Icmpv6.to_raw(), self.buffer.as_ref());
        put16(self.buffer.as_mut(), field::CHECKSUM.start, c);
    }
}

/// One neighbor discovery option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NdOption<'a> {
    /// The option type.
    pub kind: NdOptionType,
    /// Offset of the option within the ICMPv6 message.
    pub offset: usize,
    /// The bytes after the type and length (`length × 8 - 2` of them).
    pub data: &'a [u8],
}

impl NdOption<'_> {
    /// The link-layer address of a source or target link-layer address option, read
    /// as an Ethernet address (the first 6 bytes).
    pub fn link_layer_addr(&self) -> Option<MacAddr> {
        match self.kind {
            NdOptionType::SourceLinkLayerAddr | NdOptionType::TargetLinkLayerAddr
                if self.data.len() >= 6 =>
            {
                Some(mac(self.data))
            }
            _ => None,
        }
    }
}

/// Walks ND options. A zero length (RFC 4861 §4.6: "Nodes MUST silently discard an
/// ND packet that contains an option with length zero") or a length running past
/// the message is an error, after which the walk ends.
#[derive(Debug, Clone)]
pub struct NdOptions<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Iterator for NdOptions<'a> {
    type Item = Result<NdOption<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.buf.get(self.pos..).filter(|r| !r.is_empty())?;
        let offset = self.base + self.pos;
        let fail = |this: &mut Self, e| {
            this.pos = this.buf.len();
            Some(Err(e))
        };
        if rest.len() < 2 {
            return fail(
                self,
                Error::Truncated {
                    layer: "icmpv6 nd option",
                    offset,
                    needed: 2,
                    available: rest.len(),
                },
            );
        }
        let len = usize::from(rest[1]) * 8;
        if len == 0 {
            return fail(
                self,
                Error::LengthTooShort {
                    layer: "icmpv6 nd option",
                    field: "length",
                    offset: offset + 1,
                    length: 0,
                    min: 8,
                },
            );
        }
        if len > rest.len() {
            return fail(
                self,
                Error::LengthOverrun {
                    layer: "icmpv6 nd option",
                    field: "length",
                    offset: offset + 1,
                    length: len,
                    available: rest.len(),
                },
            );
        }
        self.pos += len;
        Some(Ok(NdOption {
            kind: NdOptionType::from_raw(rest[0]),
            offset,
            data: &rest[2..len],
        }))
    }
}

/// An ICMPv6 message, owned. Echoes and neighbor solicitations and advertisements get
/// their fields by name; everything else (including ND messages with options other
/// than a single link-layer address) keeps its type, code and body as received. The
/// checksum is not kept: `emit` computes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Icmpv6Repr<'a> {
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
    /// Neighbor solicitation (RFC 4861 §4.3).
    NeighborSolicit {
        /// The address whose link-layer address is sought or given.
        target_addr: Ipv6Addr,
        /// The source link-layer address option.
        lladdr: Option<MacAddr>,
    },
    /// Neighbor advertisement (RFC 4861 §4.4).
    NeighborAdvert {
        /// The sender is a router.
        router: bool,
        /// Sent in answer to a solicitation.
        solicited: bool,
        /// Override an existing cache entry.
        override_: bool,
        /// The address whose link-layer address is sought or given.
        target_addr: Ipv6Addr,
        /// The target link-layer address option.
        lladdr: Option<MacAddr>,
    },
    /// Any other message, kept as received.
    Other {
        /// The message type.
        msg_type: Icmpv6Type,
        /// The message code.
        code: u8,
        /// Everything after the checksum (at least 4 bytes).
        body: &'a [u8],
    },
}

impl<'a> Icmpv6Repr<'a> {
    /// Parses a message; the checksum is not checked (see
    /// [`Icmpv6Packet::verify_checksum`]). Malformed ND options are an error.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Icmpv6Packet<&'a T>) -> Result<Self> {
        packet.check_len()?;
        let buf: &'a [u8] = T::as_ref(packet.buffer);
        let (ident, seq_no) = (packet.echo_ident(), packet.echo_seq_no());
        let code = packet.msg_code();
        let other = Icmpv6Repr::Other {
            msg_type: packet.msg_type(),
            code,
            body: &buf[field::BODY..],
        };
        // The one link-layer address option of `kind` the options may hold:
        // Ok(Some(None)) for no options, Ok(None) for anything else.
        let single_lladdr = |kind| -> Result<Option<Option<MacAddr>>> {
            let mut opts = packet.nd_options();
            let first = match opts.next().transpose()? {
                None => return Ok(Some(None)),
                Some(o) => o,
            };
            let rest = opts.next().transpose()?;
            Ok(
                (first.kind == kind && first.data.len() == 6 && rest.is_none())
                    .then(|| first.link_layer_addr()),
            )
        };
        Ok(match (packet.msg_type(), code) {
            (Icmpv6Type::EchoRequest, 0) => Icmpv6Repr::EchoRequest {
                ident,
                seq_no,
                data: &buf[HEADER_LEN..],
            },
            (Icmpv6Type::EchoReply, 0) => Icmpv6Repr::EchoReply {
                ident,
                seq_no,
                data: &buf[HEADER_LEN..],
            },
            (Icmpv6Type::NeighborSolicit, 0) => {
                match single_lladdr(NdOptionType::SourceLinkLayerAddr)? {
                    Some(lladdr) if packet.rest_of_header() == 0 => Icmpv6Repr::NeighborSolicit {
                        target_addr: packet.nd_target().unwrap_or(Ipv6Addr::UNSPECIFIED),
                        lladdr,
                    },
                    _ => other,
                }
            }
            (Icmpv6Type::NeighborAdvert, 0) => {
                match single_lladdr(NdOptionType::TargetLinkLayerAddr)? {
                    Some(lladdr) if packet.rest_of_header() & 0x1fff_ffff == 0 => {
                        Icmpv6Repr::NeighborAdvert {
                            router: packet.na_router(),
                            solicited: packet.na_solicited(),
                            override_: packet.na_override(),
                            target_addr: packet.nd_target().unwrap_or(Ipv6Addr::UNSPECIFIED),
                            lladdr,
                        }
                    }
                    _ => other,
                }
            }
            _ => other,
        })
    }

    /// Bytes `emit` writes.
    pub fn buffer_len(&self) -> usize {
        match self {
            Icmpv6Repr::EchoRequest { data, .. } | Icmpv6Repr::EchoReply { data, .. } => {
                HEADER_LEN + data.len()
            }
            Icmpv6Repr::NeighborSolicit { lladdr, .. }
            | Icmpv6Repr::NeighborAdvert { lladdr, .. } => {
                ND_LEN + if lladdr.is_some() { 8 } else { 0 }
            }
            Icmpv6Repr::Other { body, .. } => field::BODY + body.len(),
        }
    }

    /// Writes the whole message, its checksum computed over the pseudo-header of
    /// `src` and `dst`.
    pub fn emit(&self, src: Ipv6Addr, dst: Ipv6Addr, buf: &mut [u8]) -> EmitResult<usize> {
        let len = self.buffer_len();
        if let Icmpv6Repr::Other { body, .. } = self {
            crate::error::fits(
                body.len() >= 4,
                "icmpv6",
                "body length",
                body.len() as u64,
                "at least 4 bytes",
            )?;
        }
        let b = room("icmpv6", buf, len)?;
        let mut p = Icmpv6Packet::new_unchecked(&mut *b);
        let nd = |p: &mut Icmpv6Packet<&mut [u8]>,
                  target: &Ipv6Addr,
                  lladdr: &Option<MacAddr>,
                  kind: NdOptionType| {
            let body = p.body_mut();
            body[field::TARGET.start - field::BODY..field::TARGET.end - field::BODY]
                .copy_from_slice(&target.octets());
            if let Some(mac) = lladdr {
                let o = &mut body[ND_LEN - field::BODY..];
                o[0] = kind.to_raw();
                o[1] = 1;
                o[2..8].copy_from_slice(&mac.0);
            }
        };
        match self {
            Icmpv6Repr::EchoRequest {
                ident,
                seq_no,
                data,
            }
            | Icmpv6Repr::EchoReply {
                ident,
                seq_no,
                data,
            } => {
                let t = if matches!(self, Icmpv6Repr::EchoRequest { .. }) {
                    Icmpv6Type::EchoRequest
                } else {
                    Icmpv6Type::EchoReply
                };
                p.set_msg_type(t);
                p.set_msg_code(0);
                p.set_rest_of_header((u32::from(*ident) << 16) | u32::from(*seq_no));
                p.body_mut()[HEADER_LEN - field::BODY..].copy_from_slice(data);
            }
            Icmpv6Repr::NeighborSolicit {
                target_addr,
                lladdr,
            } => {
                p.set_msg_type(Icmpv6Type::NeighborSolicit);
                p.set_msg_code(0);
                p.set_rest_of_header(0);
                nd(
                    &mut p,
                    target_addr,
                    lladdr,
                    NdOptionType::SourceLinkLayerAddr,
                );
            }
            Icmpv6Repr::NeighborAdvert {
                router,
                solicited,
                override_,
                target_addr,
                lladdr,
            } => {
                p.set_msg_type(Icmpv6Type::NeighborAdvert);
                p.set_msg_code(0);
                let flags = (u32::from(*router) << 31)
                    | (u32::from(*solicited) << 30)
                    | (u32::from(*override_) << 29);
                p.set_rest_of_header(flags);
                nd(
                    &mut p,
                    target_addr,
                    lladdr,
                    NdOptionType::TargetLinkLayerAddr,
                );
            }
            Icmpv6Repr::Other {
                msg_type,
                code,
                body,
            } => {
                p.set_msg_type(*msg_type);
                p.set_msg_code(*code);
                p.body_mut().copy_from_slice(body);
            }
        }
        p.fill_checksum(src, dst);
        Ok(len)
    }
}

#[cfg(test)]
#[path = "icmpv6_tests.rs"]
mod tests;
