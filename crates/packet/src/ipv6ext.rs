//! IPv6 extension headers (RFC 8200 §4, RFC 4302 for AH), walked safely.
//!
//! [`Ipv6ExtHeaders`] walks the chain from the IPv6 header's next-header field:
//! hop-by-hop options, routing, fragment, destination options and AH. It never reads
//! past the bytes it was given, stops after at most [`MAX_EXT_HEADERS`] headers, stops
//! at ESP (whose contents are encrypted) and at a fragment header whose offset is not
//! zero (the bytes after it are the middle of the original packet, not headers), and
//! reports the upper-layer protocol and where it starts ([`UpperLayer`]).

use crate::error::{fits, room, EmitResult, Error, Result};
use crate::ip::IpProtocol;
use crate::macros::{be16, be32, put16, put32};

mod field {
    use crate::Field;
    pub const NXT_HDR: usize = 0;
    pub const LENGTH: usize = 1;
    pub const DATA: usize = 2;
    // Fragment header.
    pub const FRAG_OFF_M: Field = 2..4;
    pub const FRAG_IDENT: Field = 4..8;
    // Routing header.
    pub const ROUTING_TYPE: usize = 2;
    pub const SEGMENTS_LEFT: usize = 3;
}

/// The most extension headers walked; a longer chain is a `TooManyHeaders` error.
pub const MAX_EXT_HEADERS: usize = 8;

/// Every extension header is at least 8 bytes (and the fragment header exactly 8).
pub const MIN_EXT_HEADER_LEN: usize = 8;

/// True for the extension headers this crate walks: hop-by-hop, routing, fragment,
/// destination options and AH.
pub fn is_ext_header(p: IpProtocol) -> bool {
    matches!(
        p,
        IpProtocol::HopByHop
            | IpProtocol::Ipv6Route
            | IpProtocol::Ipv6Frag
            | IpProtocol::Ipv6Opts
            | IpProtocol::Ah
    )
}

/// The bits of OpenFlow's `IPV6_EXTHDR` pseudo-field (OpenFlow 1.3.5 §7.2.3.8,
/// `ofp_ipv6exthdr_flags`), computed by the walk.
pub mod exthdr {
    /// "No next header" encountered.
    pub const NONEXT: u16 = 1 << 0;
    /// Encrypted Sec Payload header present.
    pub const ESP: u16 = 1 << 1;
    /// Authentication header present.
    pub const AUTH: u16 = 1 << 2;
    /// 1 or 2 destination options headers present.
    pub const DEST: u16 = 1 << 3;
    /// Fragment header present.
    pub const FRAG: u16 = 1 << 4;
    /// Router header present.
    pub const ROUTER: u16 = 1 << 5;
    /// Hop-by-hop header present.
    pub const HOP: u16 = 1 << 6;
    /// Unexpected repeats encountered.
    pub const UNREP: u16 = 1 << 7;
    /// Unexpected sequencing encountered.
    pub const UNSEQ: u16 = 1 << 8;
}

/// A zero-copy view of one extension header. Its kind (which the previous header's
/// next-header field gives) decides how its length field is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ipv6ExtHeader<T: AsRef<[u8]>> {
    buffer: T,
    kind: IpProtocol,
}

impl<T: AsRef<[u8]>> Ipv6ExtHeader<T> {
    /// A view with no checks: getters panic on a short buffer.
    pub const fn new_unchecked(buffer: T, kind: IpProtocol) -> Self {
        Ipv6ExtHeader { buffer, kind }
    }

    /// A view whose getters cannot panic: the whole header its length field gives is
    /// present (and it is at least 8 bytes).
    pub fn new_checked(buffer: T, kind: IpProtocol) -> Result<Self> {
        let h = Self::new_unchecked(buffer, kind);
        h.check_len()?;
        Ok(h)
    }

    /// Checks what `new_checked` checks.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        let layer = layer_name(self.kind);
        crate::error::need(layer, b, MIN_EXT_HEADER_LEN)?;
        crate::error::need(layer, b, self.header_len())
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Which extension header this is.
    pub fn kind(&self) -> IpProtocol {
        self.kind
    }

    /// The next header.
    pub fn next_header(&self) -> IpProtocol {
        IpProtocol::from_raw(self.buffer.as_ref()[field::NXT_HDR])
    }

    /// The raw length field.
    pub fn length_field(&self) -> u8 {
        self.buffer.as_ref()[field::LENGTH]
    }

    /// Header length in bytes: 8 for a fragment header, (len + 2) × 4 for AH
    /// (RFC 4302 §2.2), (len + 1) × 8 for the others (RFC 8200 §4.3).
    pub fn header_len(&self) -> usize {
        header_len(self.kind, self.length_field())
    }

    /// Everything after the next-header and length bytes, up to the header's end.
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[field::DATA..self.header_len()]
    }

    /// The bytes after this header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }

    /// Fragment header: the offset in 8-byte units.
    pub fn frag_offset(&self) -> u16 {
        be16(self.buffer.as_ref(), field::FRAG_OFF_M.start) >> 3
    }

    /// Fragment header: the M flag.
    pub fn more_frags(&self) -> bool {
        be16(self.buffer.as_ref(), field::FRAG_OFF_M.start) & 1 != 0
    }

    /// Fragment header: the identification.
    pub fn frag_ident(&self) -> u32 {
        be32(self.buffer.as_ref(), field::FRAG_IDENT.start)
    }

    /// Routing header: the routing type.
    pub fn routing_type(&self) -> u8 {
        self.buffer.as_ref()[field::ROUTING_TYPE]
    }

    /// Routing header: segments left.
    pub fn segments_left(&self) -> u8 {
        self.buffer.as_ref()[field::SEGMENTS_LEFT]
    }

    /// Hop-by-hop and destination options: the options, walked safely.
    pub fn options(&self) -> Ipv6Options<'_> {
        Ipv6Options {
            buf: self.data(),
            pos: 0,
        }
    }
}

fn header_len(kind: IpProtocol, length: u8) -> usize {
    match kind {
        IpProtocol::Ipv6Frag => 8,
        IpProtocol::Ah => (usize::from(length) + 2) * 4,
        _ => (usize::from(length) + 1) * 8,
    }
}

fn layer_name(kind: IpProtocol) -> &'static str {
    match kind {
        IpProtocol::HopByHop => "ipv6 hop-by-hop",
        IpProtocol::Ipv6Route => "ipv6 routing",
        IpProtocol::Ipv6Frag => "ipv6 fragment",
        IpProtocol::Ipv6Opts => "ipv6 destination options",
        IpProtocol::Ah => "ipv6 ah",
        _ => "ipv6 extension header",
    }
}

/// One option of a hop-by-hop or destination options header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6Option<'a> {
    /// The option type (0 is Pad1, 1 PadN, 5 Router Alert, ...).
    pub kind: u8,
    /// Everything after the next-header and length bytes.
    pub data: &'a [u8],
}

/// The options of a hop-by-hop or destination options header (RFC 8200 §4.2). An
/// option whose length runs past the header is a `LengthOverrun`, after which the
/// walk ends.
#[derive(Debug, Clone)]
pub struct Ipv6Options<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Ipv6Options<'a> {
    type Item = Result<Ipv6Option<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.buf.get(self.pos..)?;
        let (&kind, after) = rest.split_first()?;
        if kind == 0 {
            self.pos += 1;
            return Some(Ok(Ipv6Option { kind, data: &[] }));
        }
        let Some((&len, after)) = after.split_first() else {
            self.pos = self.buf.len();
            return Some(Err(Error::Truncated {
                layer: "ipv6 option",
                offset: field::DATA + self.pos,
                needed: 2,
                available: 1,
            }));
        };
        let len = usize::from(len);
        if len > after.len() {
            let e = Error::LengthOverrun {
                layer: "ipv6 option",
                field: "length",
                offset: field::DATA + self.pos + 1,
                length: len,
                available: after.len(),
            };
            self.pos = self.buf.len();
            return Some(Err(e));
        }
        self.pos += 2 + len;
        Some(Ok(Ipv6Option {
            kind,
            data: &after[..len],
        }))
    }
}

/// Fragment information from a fragment header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FragmentInfo {
    /// Offset in 8-byte units.
    pub offset: u16,
    /// More fragments follow.
    pub more: bool,
    /// Identification.
    pub ident: u32,
}

impl FragmentInfo {
    /// True for the first fragment (and for atomic fragments): the only one whose
    /// upper-layer header is present.
    pub fn is_first(&self) -> bool {
        self.offset == 0
    }
}

/// Where the extension headers end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UpperLayer {
    /// The first next-header value that is not an extension header walked here: TCP,
    /// UDP, ICMPv6, ..., or ESP, or "no next header" (59).
    pub protocol: IpProtocol,
    /// Offset of the upper-layer header, counted as the walker's offsets are.
    pub offset: usize,
    /// The fragment header's fields, if there was one. When the fragment is not the
    /// first, the upper-layer header is not in this packet.
    pub fragment: Option<FragmentInfo>,
    /// The [`exthdr`] bits for this chain.
    pub exthdr: u16,
}

impl UpperLayer {
    /// True when the upper-layer header is in this packet: not a later fragment, and
    /// there is an upper layer (not ESP, not "no next header").
    pub fn has_header(&self) -> bool {
        self.fragment.is_none_or(|f| f.is_first())
            && !matches!(self.protocol, IpProtocol::Esp | IpProtocol::Ipv6NoNxt)
    }
}

/// One header of the chain, as [`Ipv6ExtHeaders`] yields it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtHeader<'a> {
    /// Offset of the header, counted as the walker's offsets are.
    pub offset: usize,
    /// The header.
    pub header: Ipv6ExtHeader<&'a [u8]>,
}

/// Walks a chain of extension headers. After it ends without an error,
/// [`upper_layer`](Self::upper_layer) says where the chain led; [`walk`](Self::walk)
/// does both at once.
#[derive(Debug, Clone)]
pub struct Ipv6ExtHeaders<'a> {
    next: IpProtocol,
    rest: &'a [u8],
    offset: usize,
    count: usize,
    fragment: Option<FragmentInfo>,
    flags: u16,
    /// Bit per RFC 8200 §4.1 position seen, for `UNREP`.
    seen: u8,
    /// Highest RFC 8200 §4.1 position seen, for `UNSEQ`.
    last_rank: u8,
    done: bool,
}

impl<'a> Ipv6ExtHeaders<'a> {
    /// Walks headers starting with `next_header` over `payload` (the bytes after the
    /// IPv6 header), whose first byte is reported at offset `base`.
    pub fn new(next_header: IpProtocol, payload: &'a [u8], base: usize) -> Self {
        Ipv6ExtHeaders {
            next: next_header,
            rest: payload,
            offset: base,
            count: 0,
            fragment: None,
            flags: 0,
            seen: 0,
            last_rank: 0,
            done: false,
        }
    }

    /// Where the headers walked so far lead.
    pub fn upper_layer(&self) -> UpperLayer {
        let mut exthdr = self.flags;
        match self.next {
            IpProtocol::Ipv6NoNxt => exthdr |= exthdr::NONEXT,
            IpProtocol::Esp => exthdr |= exthdr::ESP,
            _ => {}
        }
        UpperLayer {
            protocol: self.next,
            offset: self.offset,
            fragment: self.fragment,
            exthdr,
        }
    }

    /// The bytes after the headers walked so far.
    pub fn payload(&self) -> &'a [u8] {
        self.rest
    }

    /// Walks the whole chain.
    pub fn walk(mut self) -> Result<UpperLayer> {
        for h in self.by_ref() {
            h?;
        }
        Ok(self.upper_layer())
    }

    /// Records `kind` for the `IPV6_EXTHDR` flags: presence, repeats, order.
    fn note(&mut self, kind: IpProtocol) {
        // RFC 8200 §4.1's recommended order: hop-by-hop, destination options (before
        // a routing header), routing, fragment, AH, ESP, destination options (final).
        let (bit, rank) = match kind {
            IpProtocol::HopByHop => (exthdr::HOP, 0),
            IpProtocol::Ipv6Opts if self.last_rank <= 1 => (exthdr::DEST, 1),
            IpProtocol::Ipv6Opts => (exthdr::DEST, 6),
            IpProtocol::Ipv6Route => (exthdr::ROUTER, 2),
            IpProtocol::Ipv6Frag => (exthdr::FRAG, 3),
            _ => (exthdr::AUTH, 4),
        };
        self.flags |= bit;
        if self.seen & (1 << rank) != 0 {
            self.flags |= exthdr::UNREP;
        }
        // Hop-by-hop "MUST immediately follow the IPv6 header" (RFC 8200 §4.3).
        if (self.count > 0 && rank == 0) || rank < self.last_rank {
            self.flags |= exthdr::UNSEQ;
        }
        self.seen |= 1 << rank;
        self.last_rank = self.last_rank.max(rank);
    }
}

impl<'a> Iterator for Ipv6ExtHeaders<'a> {
    type Item = Result<ExtHeader<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || !is_ext_header(self.next) {
            self.done = true;
            return None;
        }
        if self.count == MAX_EXT_HEADERS {
            self.done = true;
            return Some(Err(Error::TooManyHeaders {
                layer: "ipv6 extension headers",
                offset: self.offset,
                limit: MAX_EXT_HEADERS,
            }));
        }
        let kind = self.next;
        let h = Ipv6ExtHeader::new_unchecked(self.rest, kind);
        if let Err(e) = h.check_len() {
            self.done = true;
            return Some(Err(e.at(self.offset)));
        }
        self.note(kind);
        self.count += 1;
        let len = h.header_len();
        let (head, rest) = self.rest.split_at(len);
        let offset = self.offset;
        self.next = h.next_header();
        self.rest = rest;
        self.offset += len;
        if kind == IpProtocol::Ipv6Frag {
            let f = FragmentInfo {
                offset: h.frag_offset(),
                more: h.more_frags(),
                ident: h.frag_ident(),
            };
            self.fragment = Some(f);
            // What follows a later fragment is data, not headers.
            if !f.is_first() {
                self.done = true;
            }
        }
        Some(Ok(ExtHeader {
            offset,
            header: Ipv6ExtHeader::new_unchecked(head, kind),
        }))
    }
}

/// An extension header, owned: its kind, next header and the bytes after the first
/// two (options, routing data, fragment fields, AH fields), as on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv6ExtHeaderRepr<'a> {
    /// Which extension header this is.
    pub kind: IpProtocol,
    /// The next header.
    pub next_header: IpProtocol,
    /// `header_len - 2` bytes: a multiple of 8 plus 6 (AH: a multiple of 4 plus 2).
    pub data: &'a [u8],
}

impl<'a> Ipv6ExtHeaderRepr<'a> {
    /// Parses a checked view.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(header: &Ipv6ExtHeader<&'a T>) -> Result<Self> {
        header.check_len()?;
        Ok(Ipv6ExtHeaderRepr {
            kind: header.kind,
            next_header: header.next_header(),
            data: &T::as_ref(header.buffer)[field::DATA..header.header_len()],
        })
    }

    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        field::DATA + self.data.len()
    }

    /// Writes the structure at the start of `buf`; returns the bytes written.
    pub fn emit(&self, buf: &mut [u8]) -> EmitResult<usize> {
        let len = self.buffer_len();
        let layer = layer_name(self.kind);
        let length_field = match self.kind {
            IpProtocol::Ipv6Frag => {
                fits(
                    len == 8,
                    layer,
                    "length",
                    len as u64,
                    "a fragment header is 8 bytes",
                )?;
                0
            }
            IpProtocol::Ah => {
                fits(
                    len % 4 == 0 && len >= 8,
                    layer,
                    "length",
                    len as u64,
                    "a multiple of 4, at least 8",
                )?;
                fits(
                    len / 4 - 2 <= 255,
                    layer,
                    "length",
                    len as u64,
                    "at most 1028",
                )?;
                (len / 4 - 2) as u8
            }
            _ => {
                fits(
                    len % 8 == 0 && len >= 8,
                    layer,
                    "length",
                    len as u64,
                    "a multiple of 8, at least 8",
                )?;
                fits(
                    len / 8 - 1 <= 255,
                    layer,
                    "length",
                    len as u64,
                    "at most 2048",
                )?;
                (len / 8 - 1) as u8
            }
        };
        let b = room(layer, buf, len)?;
        b[field::NXT_HDR] = self.next_header.to_raw();
        b[field::LENGTH] = length_field;
        b[field::DATA..len].copy_from_slice(self.data);
        Ok(len)
    }
}

/// A fragment header, owned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv6FragmentRepr {
    /// The next header.
    pub next_header: IpProtocol,
    /// Offset in 8-byte units, 0..=8191.
    pub offset: u16,
    /// More fragments follow.
    pub more_frags: bool,
    /// Identification.
    pub ident: u32,
}

impl Ipv6FragmentRepr {
    /// Parses a fragment header; any other kind is a `BadValue`.
    pub fn parse<T: AsRef<[u8]>>(header: &Ipv6ExtHeader<T>) -> Result<Self> {
        header.check_len()?;
        if header.kind != IpProtocol::Ipv6Frag {
            return Err(Error::BadValue {
                layer: "ipv6 fragment",
                field: "kind",
                offset: 0,
                value: header.kind.to_raw().into(),
                reason: "not a fragment header (44)",
            });
        }
        Ok(Ipv6FragmentRepr {
            next_header: header.next_header(),
            offset: header.frag_offset(),
            more_frags: header.more_frags(),
            ident: header.frag_ident(),
        })
    }

    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        8
    }

    /// Writes the structure at the start of `buf`; returns the bytes written.
    pub fn emit(&self, buf: &mut [u8]) -> EmitResult<usize> {
        fits(
            self.offset < 0x2000,
            "ipv6 fragment",
            "offset",
            self.offset.into(),
            "13 bits",
        )?;
        let b = room("ipv6 fragment", buf, 8)?;
        b[field::NXT_HDR] = self.next_header.to_raw();
        b[field::LENGTH] = 0;
        put16(
            b,
            field::FRAG_OFF_M.start,
            (self.offset << 3) | u16::from(self.more_frags),
        );
        put32(b, field::FRAG_IDENT.start, self.ident);
        Ok(8)
    }
}

#[cfg(test)]
#[path = "ipv6ext_tests.rs"]
mod tests;
