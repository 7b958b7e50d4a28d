//! The entry lists multipart bodies and table features are made of: entries that carry
//! their own length ([`entry`], [`list`]) and entries of a fixed size ([`fixed_list`]).
//!
//! Shared by `multipart/` and `table_features.rs`, below both.

use crate::error::{DecodeError, DecodeResult};
use crate::wire::Reader;

/// Splits off one length-prefixed entry whose u16 length sits `len_at` bytes in.
///
/// The length must cover at least the entry's fixed part (`min`), else
/// `LengthTooShort`, and must fit in what is left of the body, else `LengthOverrun`.
/// The caller parses the entry from the returned reader, whose trailing list
/// (instructions, buckets, bands, counters, properties) must fill it exactly; a length
/// that disagrees with the content fails there, never past the entry.
pub(super) fn entry<'a>(
    r: &mut Reader<'a>,
    layer: &'static str,
    len_at: usize,
    min: usize,
) -> DecodeResult<Reader<'a>> {
    let offset = r.offset();
    if r.remaining() < len_at + 2 {
        return Err(DecodeError::Truncated {
            layer,
            offset,
            needed: len_at + 2,
            available: r.remaining(),
        });
    }
    let len = r.peek_u16(len_at)? as usize;
    if len < min {
        return Err(DecodeError::LengthTooShort {
            layer,
            offset,
            length: len,
            min,
        });
    }
    r.sub(len, layer)
}

/// Parses a body of fixed-size entries. The body must be a whole number of them
/// (§7.3.5.4, §7.3.5.6, §7.3.5.8: "The body of the reply consists of an array of the
/// following", with no length per entry).
pub(super) fn fixed_list<'a, T>(
    r: &mut Reader<'a>,
    layer: &'static str,
    size: usize,
    parse: impl Fn(&mut Reader<'a>) -> DecodeResult<T>,
) -> DecodeResult<Vec<T>> {
    if r.remaining() % size != 0 {
        return Err(DecodeError::LengthMismatch {
            layer,
            offset: r.offset(),
            length: r.remaining(),
            expected: r.remaining() - r.remaining() % size,
        });
    }
    let mut v = Vec::with_capacity(r.remaining() / size);
    while !r.is_empty() {
        let mut e = r.sub(size, layer)?;
        v.push(parse(&mut e)?);
        e.finish()?;
    }
    Ok(v)
}

/// Parses a body of length-prefixed entries.
pub(super) fn list<'a, T>(
    r: &mut Reader<'a>,
    parse: impl Fn(&mut Reader<'a>) -> DecodeResult<T>,
) -> DecodeResult<Vec<T>> {
    let mut v = Vec::new();
    while !r.is_empty() {
        v.push(parse(r)?);
    }
    Ok(v)
}
