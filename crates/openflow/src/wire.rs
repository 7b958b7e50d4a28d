//! The byte-level tools every structure's parse and emit are written with.
//!
//! * [`Reader`]: a bounds-checked cursor over one structure. It knows the absolute offset
//!   of its first byte within the message and the name of the structure it reads, so
//!   every error it returns says where and what. Nested structures get a sub-reader
//!   ([`Reader::sub`], [`Reader::tlv`]) that can never read past its own length.
//! * [`Put`]: big-endian appends to a `Vec<u8>`, the buffer every encoder writes into.
//! * [`LenMark`]: a 16-bit length placeholder patched when the structure is complete
//!   (after rustls's `LengthPrefixedBuffer`), and [`pad_to`], the one padding helper.

use crate::error::{DecodeError, DecodeResult, EncodeError, EncodeResult};

/// A bounds-checked big-endian cursor over one structure.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Absolute offset of `buf[0]` within the message, for error reports.
    base: usize,
    /// The structure being read, for error reports.
    layer: &'static str,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, whose first byte sits at absolute offset `base`.
    pub fn new(buf: &'a [u8], base: usize, layer: &'static str) -> Self {
        Reader {
            buf,
            pos: 0,
            base,
            layer,
        }
    }

    /// The name of the structure this reader reads.
    pub fn layer(&self) -> &'static str {
        self.layer
    }

    /// The same bytes, reported under another structure name.
    pub fn with_layer(mut self, layer: &'static str) -> Self {
        self.layer = layer;
        self
    }

    /// Absolute offset of the next byte to read.
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The error for needing `needed` bytes here.
    pub fn truncated(&self, needed: usize) -> DecodeError {
        DecodeError::Truncated {
            layer: self.layer,
            offset: self.offset(),
            needed,
            available: self.remaining(),
        }
    }

    /// A `BadValue` error at the current offset minus `back` bytes (the field just read).
    pub fn bad_value(
        &self,
        field: &'static str,
        back: usize,
        value: u64,
        reason: &'static str,
    ) -> DecodeError {
        DecodeError::BadValue {
            layer: self.layer,
            field,
            offset: self.offset().saturating_sub(back),
            value,
            reason,
        }
    }

    /// Fails unless `n` more bytes are present.
    pub fn need(&self, n: usize) -> DecodeResult<()> {
        if self.remaining() < n {
            Err(self.truncated(n))
        } else {
            Ok(())
        }
    }

    /// The next `n` bytes, borrowed.
    pub fn bytes(&mut self, n: usize) -> DecodeResult<&'a [u8]> {
        self.need(n)?;
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> DecodeResult<[u8; N]> {
        let s = self.bytes(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub fn u8(&mut self) -> DecodeResult<u8> {
        Ok(self.bytes(1)?[0])
    }

    pub fn u16(&mut self) -> DecodeResult<u16> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    pub fn u32(&mut self) -> DecodeResult<u32> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    pub fn u64(&mut self) -> DecodeResult<u64> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    /// Skips `n` padding bytes (their content is not checked: senders are not
    /// required to zero them, and we re-encode padding as zeros).
    pub fn skip(&mut self, n: usize) -> DecodeResult<()> {
        self.bytes(n).map(|_| ())
    }

    /// Everything left, borrowed; the reader is then empty.
    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }

    /// Looks at a big-endian u16 `at` bytes ahead without consuming anything.
    pub fn peek_u16(&self, at: usize) -> DecodeResult<u16> {
        if self.remaining() < at + 2 {
            return Err(self.truncated(at + 2));
        }
        let p = self.pos + at;
        Ok(u16::from_be_bytes([self.buf[p], self.buf[p + 1]]))
    }

    /// Splits off the next `len` bytes as a reader of their own, for a nested structure
    /// whose length the caller has read. Fails if `len` runs past this reader.
    pub fn sub(&mut self, len: usize, layer: &'static str) -> DecodeResult<Reader<'a>> {
        if len > self.remaining() {
            return Err(DecodeError::LengthOverrun {
                layer,
                offset: self.offset(),
                length: len,
                available: self.remaining(),
            });
        }
        let r = Reader::new(&self.buf[self.pos..self.pos + len], self.offset(), layer);
        self.pos += len;
        Ok(r)
    }

    /// Reads one `type: u16, length: u16, body` element whose length counts its own
    /// 4-byte header (actions, instructions, properties, hello elements, ...).
    ///
    /// `min` is the smallest valid length; `align` is 8 where the spec requires the
    /// length itself to be a multiple of 8 (actions, instructions), 1 otherwise.
    /// `padded` is true for elements followed by padding to 8 that their length does
    /// not count (table-feature properties, hello elements); that padding is consumed.
    pub fn tlv(
        &mut self,
        layer: &'static str,
        min: usize,
        align: usize,
        padded: bool,
    ) -> DecodeResult<Tlv<'a>> {
        let offset = self.offset();
        let kind = self.peek_u16(0).map_err(|_| self.truncated(4))?;
        let len = self.peek_u16(2).map_err(|_| self.truncated(4))? as usize;
        if len < min.max(4) {
            return Err(DecodeError::LengthTooShort {
                layer,
                offset,
                length: len,
                min: min.max(4),
            });
        }
        if align > 1 && len % align != 0 {
            return Err(DecodeError::Misaligned {
                layer,
                offset,
                length: len,
                align,
            });
        }
        if len > self.remaining() {
            return Err(DecodeError::LengthOverrun {
                layer,
                offset,
                length: len,
                available: self.remaining(),
            });
        }
        let raw = &self.buf[self.pos..self.pos + len];
        self.pos += len;
        if padded {
            let pad = padding_for(len);
            // The last element of a list may omit its trailing padding in practice;
            // accept that, but never read past the container.
            self.pos += pad.min(self.remaining());
        }
        Ok(Tlv {
            kind,
            offset,
            raw,
            body: Reader::new(&raw[4..], offset + 4, layer),
        })
    }

    /// Fails with `LengthMismatch` unless the reader has been consumed exactly; used at
    /// the end of fixed-size structures whose length came from a length field.
    pub fn finish(&self) -> DecodeResult<()> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::LengthMismatch {
                layer: self.layer,
                offset: self.base,
                length: self.buf.len(),
                expected: self.pos,
            })
        }
    }
}

impl Reader<'_> {
    /// Like [`finish`](Self::finish) for the body of a fixed-size element (an action,
    /// an instruction, a meter band): a body not consumed exactly is a `LengthMismatch`
    /// reported against the whole element, at `element_offset` with `element_len`, the
    /// offset and length its header gave.
    pub fn finish_element(&self, element_offset: usize, element_len: usize) -> DecodeResult<()> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::LengthMismatch {
                layer: self.layer,
                offset: element_offset,
                length: element_len,
                expected: element_len - self.remaining(),
            })
        }
    }
}

/// One `type, length, body` element read by [`Reader::tlv`].
#[derive(Debug, Clone)]
pub struct Tlv<'a> {
    /// The 16-bit type.
    pub kind: u16,
    /// Absolute offset of the element's first byte.
    pub offset: usize,
    /// The whole element, header included (for opaque carriage).
    pub raw: &'a [u8],
    /// The body after the 4-byte type/length header.
    pub body: Reader<'a>,
}

/// Bytes of padding that bring `len` up to a multiple of 8.
pub fn padding_for(len: usize) -> usize {
    (8 - len % 8) % 8
}

/// Big-endian appends to an output buffer.
pub trait Put {
    fn put_u8(&mut self, v: u8);
    fn put_u16(&mut self, v: u16);
    fn put_u32(&mut self, v: u32);
    fn put_u64(&mut self, v: u64);
    fn put_slice(&mut self, s: &[u8]);
    fn put_zeros(&mut self, n: usize);
}

impl Put for Vec<u8> {
    #[inline]
    fn put_u8(&mut self, v: u8) {
        self.push(v);
    }
    #[inline]
    fn put_u16(&mut self, v: u16) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    #[inline]
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    #[inline]
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    #[inline]
    fn put_slice(&mut self, s: &[u8]) {
        self.extend_from_slice(s);
    }
    #[inline]
    fn put_zeros(&mut self, n: usize) {
        self.resize(self.len() + n, 0);
    }
}

/// Writes a structure of bounded size in place: [`Fill::append`] adds its bytes to
/// the output zeroed, in one step, then the puts are plain stores at offsets that are
/// constants once inlined. Each `put` on a `Vec` checks its capacity and moves its
/// length, and a FLOW_MOD is some thirty of them: the codec's cost on the
/// controller's hot path. (Built on the stack and copied instead, the narrow stores
/// then the wide loads of the copy stall store forwarding: slower than the puts.)
///
/// The size is fixed by construction for what is written (a 1.0 match and FLOW_MOD
/// body, one action): writing more is a bug in this crate, not bad input, and panics.
#[derive(Debug)]
pub struct Fill<'a> {
    /// The bytes reserved in the output, zeroed.
    buf: &'a mut [u8],
    /// How many of them are written.
    len: usize,
}

impl<'a> Fill<'a> {
    /// Appends `n` zero bytes to `out` and returns a writer over them.
    #[inline]
    pub fn append(out: &'a mut Vec<u8>, n: usize) -> Self {
        let at = out.len();
        out.resize(at + n, 0);
        Fill {
            buf: &mut out[at..],
            len: 0,
        }
    }

    /// Bytes written.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn put_array<const K: usize>(&mut self, v: [u8; K]) {
        self.buf[self.len..self.len + K].copy_from_slice(&v);
        self.len += K;
    }
}

impl Put for Fill<'_> {
    #[inline]
    fn put_u8(&mut self, v: u8) {
        self.put_array([v]);
    }
    #[inline]
    fn put_u16(&mut self, v: u16) {
        self.put_array(v.to_be_bytes());
    }
    #[inline]
    fn put_u32(&mut self, v: u32) {
        self.put_array(v.to_be_bytes());
    }
    #[inline]
    fn put_u64(&mut self, v: u64) {
        self.put_array(v.to_be_bytes());
    }
    #[inline]
    fn put_slice(&mut self, s: &[u8]) {
        self.buf[self.len..self.len + s.len()].copy_from_slice(s);
        self.len += s.len();
    }
    #[inline]
    fn put_zeros(&mut self, n: usize) {
        // Appended zeroed, written once front to back.
        self.len += n;
    }
}

/// Appends zeros until the bytes written since `start` are a multiple of 8.
#[inline]
pub fn pad_to(out: &mut Vec<u8>, start: usize) {
    let n = padding_for(out.len() - start);
    out.put_zeros(n);
}

/// A 16-bit length field written as a placeholder and patched once the structure it
/// measures is complete.
#[derive(Debug, Clone, Copy)]
#[must_use = "a length placeholder must be patched with finish()"]
pub struct LenMark {
    /// Where the measured structure begins.
    start: usize,
    /// Where the u16 placeholder sits.
    at: usize,
    /// The structure, for the overflow error.
    layer: &'static str,
}

impl LenMark {
    /// Writes a zero placeholder at the end of `out`, for a structure that began at `start`.
    #[inline]
    pub fn new(out: &mut Vec<u8>, start: usize, layer: &'static str) -> Self {
        let at = out.len();
        out.put_u16(0);
        LenMark { start, at, layer }
    }

    /// A placeholder already in `out` at `at` (written with a fixed part of the
    /// message), for a structure that began at `start`.
    #[inline]
    pub fn placed(start: usize, at: usize, layer: &'static str) -> Self {
        LenMark { start, at, layer }
    }

    /// Writes the bytes from `start` to the end of `out` into the placeholder and
    /// returns that length.
    #[inline]
    pub fn finish(self, out: &mut [u8]) -> EncodeResult<usize> {
        self.finish_with(out, out.len())
    }

    /// Like [`finish`](Self::finish), measuring up to `end` (for structures whose
    /// length excludes trailing padding).
    #[inline]
    pub fn finish_with(self, out: &mut [u8], end: usize) -> EncodeResult<usize> {
        let len = end - self.start;
        let field = length_field(self.layer, len)?;
        out[self.at..self.at + 2].copy_from_slice(&field.to_be_bytes());
        Ok(len)
    }
}

/// `len` as the 16-bit length field of `layer`, or the error of a structure too long
/// for it ([`LenMark`]'s check, for an encoder that knows its lengths up front).
#[inline]
pub fn length_field(layer: &'static str, len: usize) -> EncodeResult<u16> {
    u16::try_from(len).map_err(|_| EncodeError::TooLong {
        layer,
        length: len,
        max: u16::MAX as usize,
    })
}

/// Checks that a value fits `bits` bits before it is written to a narrower wire field.
pub fn check_width(
    layer: &'static str,
    field: &'static str,
    value: u64,
    bits: u32,
) -> EncodeResult<()> {
    if bits < 64 && value >> bits != 0 {
        Err(EncodeError::BadValue {
            layer,
            field,
            value,
            reason: "wider than its wire field",
        })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_reports_layer_and_absolute_offset() {
        let mut r = Reader::new(&[1, 2, 3], 100, "ofp_thing");
        assert_eq!(r.u16().unwrap(), 0x0102);
        assert_eq!(
            r.u32(),
            Err(DecodeError::Truncated {
                layer: "ofp_thing",
                offset: 102,
                needed: 4,
                available: 1
            })
        );
    }

    #[test]
    fn tlv_checks_min_alignment_and_overrun() {
        let buf = [0, 1, 0, 4];
        let e = Reader::new(&buf, 0, "x").tlv("ofp_action", 8, 8, false);
        assert!(matches!(
            e,
            Err(DecodeError::LengthTooShort {
                length: 4,
                min: 8,
                ..
            })
        ));
        let buf = [0, 1, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0];
        let e = Reader::new(&buf, 0, "x").tlv("ofp_action", 8, 8, false);
        assert!(matches!(e, Err(DecodeError::Misaligned { length: 12, .. })));
        let buf = [0, 1, 0, 16, 0, 0, 0, 0];
        let e = Reader::new(&buf, 40, "x").tlv("ofp_action", 8, 8, false);
        assert_eq!(
            e.unwrap_err(),
            DecodeError::LengthOverrun {
                layer: "ofp_action",
                offset: 40,
                length: 16,
                available: 8
            }
        );
    }

    #[test]
    fn len_mark_patches_and_refuses_overflow() {
        let mut out = vec![9];
        let m = LenMark::new(&mut out, 0, "t");
        out.put_u8(7);
        assert_eq!(m.finish(&mut out).unwrap(), 4);
        assert_eq!(out, [9, 0, 4, 7]);
        let mut big = vec![0u8; 2];
        let m = LenMark {
            start: 0,
            at: 0,
            layer: "t",
        };
        big.resize(70_000, 0);
        assert!(matches!(
            m.finish(&mut big),
            Err(EncodeError::TooLong { .. })
        ));
    }

    #[test]
    fn pad_to_pads_to_eight() {
        let mut out = vec![1, 2, 3];
        pad_to(&mut out, 0);
        assert_eq!(out.len(), 8);
        pad_to(&mut out, 0);
        assert_eq!(out.len(), 8);
    }
}
