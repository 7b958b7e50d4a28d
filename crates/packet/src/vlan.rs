//! IEEE 802.1Q VLAN tags, single and stacked (802.1ad Q-in-Q).
//!
//! A tag is the TPID (which sits where the EtherType would) followed by the 16-bit TCI
//! and the encapsulated EtherType. The view here covers the last two: the 4 bytes after
//! a TPID. [`VlanTags`] walks a stack of tags with TPIDs 0x8100, 0x88a8 or 0x9100 in any
//! order, at most [`MAX_VLAN_TAGS`] deep.

use crate::error::{fits, room, EmitResult, Error, Result};
use crate::ethertype::EtherType;
use crate::macros::{be16, put16};

mod field {
    use crate::Field;
    pub const TCI: Field = 0..2;
    pub const ETHERTYPE: Field = 2..4;
}

/// Bytes a tag adds after its TPID.
pub const TAG_LEN: usize = 4;

/// The deepest stack of tags walked; deeper stacks are a `TooManyHeaders` error.
pub const MAX_VLAN_TAGS: usize = 8;

/// A zero-copy view of the 4 bytes after a TPID: TCI and encapsulated EtherType.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlanTag<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> VlanTag<T> {
    /// A view with no checks: getters panic on a buffer shorter than 4 bytes.
    pub const fn new_unchecked(buffer: T) -> Self {
        VlanTag { buffer }
    }

    /// A view whose getters cannot panic.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let t = Self::new_unchecked(buffer);
        t.check_len()?;
        Ok(t)
    }

    /// Checks what `new_checked` checks.
    pub fn check_len(&self) -> Result<()> {
        crate::error::need("802.1q", self.buffer.as_ref(), TAG_LEN)
    }

    /// The underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The whole tag control information.
    #[inline]
    pub fn tci(&self) -> u16 {
        be16(self.buffer.as_ref(), field::TCI.start)
    }

    /// Priority code point (3 bits).
    #[inline]
    pub fn pcp(&self) -> u8 {
        (self.tci() >> 13) as u8
    }

    /// Drop eligible indicator (formerly CFI).
    #[inline]
    pub fn dei(&self) -> bool {
        self.tci() & 0x1000 != 0
    }

    /// VLAN identifier (12 bits).
    #[inline]
    pub fn vid(&self) -> u16 {
        self.tci() & 0x0fff
    }

    /// The EtherType (or next TPID) the tag encapsulates.
    #[inline]
    pub fn ethertype(&self) -> EtherType {
        EtherType::from_raw(be16(self.buffer.as_ref(), field::ETHERTYPE.start))
    }

    /// Everything after the tag.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[TAG_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> VlanTag<T> {
    /// Sets the tag control information.
    pub fn set_tci(&mut self, tci: u16) {
        put16(self.buffer.as_mut(), field::TCI.start, tci);
    }

    /// Sets the EtherType.
    pub fn set_ethertype(&mut self, ethertype: EtherType) {
        put16(
            self.buffer.as_mut(),
            field::ETHERTYPE.start,
            ethertype.to_raw(),
        );
    }

    /// The payload, for writing.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[TAG_LEN..]
    }
}

/// A VLAN tag, owned (the TPID belongs to the header before it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VlanRepr {
    /// Priority code point, 0..=7.
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN identifier, 0..=4095.
    pub vid: u16,
    /// What the tag encapsulates (another TPID for stacked tags).
    pub ethertype: EtherType,
}

impl VlanRepr {
    /// Parses a checked view.
    pub fn parse<T: AsRef<[u8]>>(tag: &VlanTag<T>) -> Result<Self> {
        tag.check_len()?;
        Ok(VlanRepr {
            pcp: tag.pcp(),
            dei: tag.dei(),
            vid: tag.vid(),
            ethertype: tag.ethertype(),
        })
    }

    /// Bytes `emit` writes.
    pub const fn buffer_len(&self) -> usize {
        TAG_LEN
    }

    /// The TCI these fields make.
    pub fn tci(&self) -> u16 {
        (u16::from(self.pcp) << 13) | (u16::from(self.dei) << 12) | self.vid
    }

    /// Writes the structure at the start of `buf`; returns the bytes written.
    pub fn emit(&self, buf: &mut [u8]) -> EmitResult<usize> {
        fits(self.pcp < 8, "802.1q", "pcp", self.pcp.into(), "3 bits")?;
        fits(self.vid < 4096, "802.1q", "vid", self.vid.into(), "12 bits")?;
        let mut t = VlanTag::new_unchecked(room("802.1q", buf, TAG_LEN)?);
        t.set_tci(self.tci());
        t.set_ethertype(self.ethertype);
        Ok(TAG_LEN)
    }
}

/// One tag of a stack, as [`VlanTags`] yields it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag<'a> {
    /// The TPID that introduced the tag.
    pub tpid: EtherType,
    /// Offset of the TPID, from the start of the frame.
    pub offset: usize,
    /// The tag.
    pub tag: VlanTag<&'a [u8]>,
}

/// Walks stacked VLAN tags, outermost first. When it ends without an error,
/// [`ethertype`](Self::ethertype) and [`offset`](Self::offset) give the inner EtherType
/// and where its payload starts.
#[derive(Debug, Clone)]
pub struct VlanTags<'a> {
    next_type: u16,
    rest: &'a [u8],
    offset: usize,
    count: usize,
    done: bool,
}

impl<'a> VlanTags<'a> {
    /// Walks tags starting with `ethertype` (the frame's EtherType field), over `rest`
    /// (the bytes after that field), which starts `offset` bytes into the frame.
    pub fn new(ethertype: u16, rest: &'a [u8], offset: usize) -> Self {
        VlanTags {
            next_type: ethertype,
            rest,
            offset,
            count: 0,
            done: false,
        }
    }

    /// The EtherType after the tags walked so far.
    pub fn ethertype(&self) -> EtherType {
        EtherType::from_raw(self.next_type)
    }

    /// Offset of the bytes after the tags walked so far.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The bytes after the tags walked so far.
    pub fn payload(&self) -> &'a [u8] {
        self.rest
    }

    /// Tags walked so far.
    pub fn depth(&self) -> usize {
        self.count
    }

    /// Walks to the end of the stack: the inner EtherType and the offset of its payload.
    pub fn skip_all(mut self) -> Result<(EtherType, usize)> {
        for t in self.by_ref() {
            t?;
        }
        Ok((self.ethertype(), self.offset))
    }
}

impl<'a> Iterator for VlanTags<'a> {
    type Item = Result<Tag<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let tpid = EtherType::from_raw(self.next_type);
        if !tpid.is_vlan() {
            self.done = true;
            return None;
        }
        let err = if self.count == MAX_VLAN_TAGS {
            Some(Error::TooManyHeaders {
                layer: "802.1q",
                offset: self.offset,
                limit: MAX_VLAN_TAGS,
            })
        } else if self.rest.len() < TAG_LEN {
            Some(Error::Truncated {
                layer: "802.1q",
                offset: self.offset,
                needed: TAG_LEN,
                available: self.rest.len(),
            })
        } else {
            None
        };
        if let Some(e) = err {
            self.done = true;
            return Some(Err(e));
        }
        let (tag, rest) = self.rest.split_at(TAG_LEN);
        self.next_type = be16(tag, field::ETHERTYPE.start);
        let t = Tag {
            tpid,
            offset: self.offset - 2,
            tag: VlanTag::new_unchecked(tag),
        };
        self.rest = rest;
        self.offset += TAG_LEN;
        self.count += 1;
        Some(Ok(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ethernet::EthernetFrame;
    use proptest::prelude::*;

    /// 802.1ad S-tag vid 100 pcp 5, then 802.1Q C-tag vid 10 pcp 0 dei, then IPv4.
    pub(crate) const DOUBLE_TAGGED: [u8; 26] = [
        0x00, 0x00, 0x5e, 0x00, 0x53, 0x01, // dst
        0x00, 0x00, 0x5e, 0x00, 0x53, 0x02, // src
        0x88, 0xa8, 0xa0, 0x64, // S-tag: pcp 5, vid 100
        0x81, 0x00, 0x10, 0x0a, // C-tag: dei, vid 10
        0x08, 0x00, // IPv4
        0x45, 0x00, 0x00, 0x14, // (start of an IPv4 header)
    ];

    #[test]
    fn double_tagged() {
        let f = EthernetFrame::new_checked(&DOUBLE_TAGGED[..]).unwrap();
        let mut tags = f.vlan_tags();
        let outer = tags.next().unwrap().unwrap();
        assert_eq!(outer.tpid, EtherType::QinQ);
        assert_eq!(outer.offset, 12);
        assert_eq!(
            (outer.tag.pcp(), outer.tag.dei(), outer.tag.vid()),
            (5, false, 100)
        );
        assert_eq!(outer.tag.ethertype(), EtherType::Vlan);
        let inner = tags.next().unwrap().unwrap();
        assert_eq!(inner.tpid, EtherType::Vlan);
        assert_eq!(
            (inner.tag.pcp(), inner.tag.dei(), inner.tag.vid()),
            (0, true, 10)
        );
        assert!(tags.next().is_none());
        assert_eq!(tags.ethertype(), EtherType::Ipv4);
        assert_eq!(tags.offset(), 22);
        assert_eq!(tags.depth(), 2);
        let r = VlanRepr::parse(&inner.tag).unwrap();
        let mut out = [0u8; 4];
        r.emit(&mut out).unwrap();
        assert_eq!(out, DOUBLE_TAGGED[18..22]);
    }

    #[test]
    fn every_truncation() {
        for n in 14..DOUBLE_TAGGED.len() {
            let f = EthernetFrame::new_checked(&DOUBLE_TAGGED[..n]).unwrap();
            let r = f.vlan_tags().skip_all();
            if n < 22 {
                let e = r.unwrap_err();
                assert!(e.is_truncated(), "{n}: {e}");
                assert_eq!(e.offset(), if n < 18 { 14 } else { 18 });
            } else {
                assert_eq!(r.unwrap(), (EtherType::Ipv4, 22));
            }
        }
    }

    #[test]
    fn too_many_tags() {
        let mut f = vec![0u8; 12];
        for _ in 0..=MAX_VLAN_TAGS {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x01]);
        }
        f.extend_from_slice(&[0x08, 0x00]);
        let e = EthernetFrame::new_checked(&f[..])
            .unwrap()
            .vlan_tags()
            .skip_all();
        assert_eq!(
            e.unwrap_err(),
            Error::TooManyHeaders {
                layer: "802.1q",
                offset: 14 + 4 * MAX_VLAN_TAGS,
                limit: MAX_VLAN_TAGS
            }
        );
    }

    #[test]
    fn emit_rejects_wide_fields() {
        let r = VlanRepr {
            pcp: 8,
            dei: false,
            vid: 1,
            ethertype: EtherType::Ipv4,
        };
        assert!(r.emit(&mut [0; 4]).is_err());
        let r = VlanRepr {
            pcp: 0,
            dei: false,
            vid: 4096,
            ethertype: EtherType::Ipv4,
        };
        assert!(r.emit(&mut [0; 4]).is_err());
    }

    proptest! {
        #[test]
        fn round_trip(pcp in 0u8..8, dei: bool, vid in 0u16..4096, ty: u16) {
            let r = VlanRepr { pcp, dei, vid, ethertype: ty.into() };
            let mut buf = [0u8; TAG_LEN];
            r.emit(&mut buf).unwrap();
            prop_assert_eq!(VlanRepr::parse(&VlanTag::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }
    }
}
