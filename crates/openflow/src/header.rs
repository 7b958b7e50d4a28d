//! The 8-byte `ofp_header` every message starts with, identical in every version:
//!
//! ```text
//! 0        1        2                 4                                  8
//! +--------+--------+-----------------+----------------------------------+
//! | version|  type  |     length      |               xid                |
//! +--------+--------+-----------------+----------------------------------+
//! ```
//!
//! [`Header`] is a zero-copy view; [`frame_len`] tells a reader how many bytes the next
//! message needs (mini-redis's `Frame::check`); [`begin`]/[`MessageStart::finish`] frame an encoded
//! message in the caller's buffer, patching the length last.

use crate::error::{DecodeError, DecodeResult, EncodeResult};
pub use crate::version::{version_name, Version};
use crate::wire::{LenMark, Put};

/// Length of `ofp_header`.
pub const HEADER_LEN: usize = 8;

mod field {
    use std::ops::Range;
    pub const VERSION: usize = 0;
    pub const TYPE: usize = 1;
    pub const LENGTH: Range<usize> = 2..4;
    pub const XID: Range<usize> = 4..8;
}

/// Reading the version byte of an `ofp_header` (the type itself is in `version.rs`,
/// below the errors).
impl Version {
    /// The version for a wire byte, or `UnsupportedVersion`.
    #[inline]
    pub const fn from_wire(v: u8) -> DecodeResult<Version> {
        match v {
            0x01 => Ok(Version::V1_0),
            0x04 => Ok(Version::V1_3),
            version => Err(DecodeError::UnsupportedVersion { version }),
        }
    }
}

/// A zero-copy view of `ofp_header` (smoltcp style: getters need `AsRef`, setters `AsMut`).
#[derive(Debug, Clone, Copy)]
pub struct Header<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Header<T> {
    /// Wraps a buffer without checking it; getters panic if it is shorter than 8 bytes.
    pub const fn new_unchecked(buffer: T) -> Header<T> {
        Header { buffer }
    }

    /// Wraps a buffer of at least 8 bytes.
    pub fn new_checked(buffer: T) -> DecodeResult<Header<T>> {
        let len = buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(DecodeError::Truncated {
                layer: "ofp_header",
                offset: 0,
                needed: HEADER_LEN,
                available: len,
            });
        }
        Ok(Header { buffer })
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    #[inline]
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION]
    }

    #[inline]
    pub fn msg_type(&self) -> u8 {
        self.buffer.as_ref()[field::TYPE]
    }

    #[inline]
    pub fn length(&self) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[field::LENGTH.start], b[field::LENGTH.start + 1]])
    }

    #[inline]
    pub fn xid(&self) -> u32 {
        let b = &self.buffer.as_ref()[field::XID];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
    pub fn set_version(&mut self, v: u8) {
        self.buffer.as_mut()[field::VERSION] = v;
    }

    pub fn set_msg_type(&mut self, t: u8) {
        self.buffer.as_mut()[field::TYPE] = t;
    }

    pub fn set_length(&mut self, len: u16) {
        self.buffer.as_mut()[field::LENGTH].copy_from_slice(&len.to_be_bytes());
    }

    pub fn set_xid(&mut self, xid: u32) {
        self.buffer.as_mut()[field::XID].copy_from_slice(&xid.to_be_bytes());
    }
}

/// How many bytes the message at the front of `buf` takes.
///
/// `Ok(None)` means "not enough bytes yet" (fewer than 8, or fewer than the header's
/// length): read more and call again. `Err` means the stream cannot be framed: the
/// header's length is under the 8 bytes of the header itself (OpenFlow 1.3.x §7.1:
/// "length: Length including this ofp_header"). The version is not checked here, so that
/// the caller can answer an unsupported version with an error message of its own.
#[inline]
pub fn frame_len(buf: &[u8]) -> DecodeResult<Option<usize>> {
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let len = u16::from_be_bytes([buf[2], buf[3]]) as usize;
    if len < HEADER_LEN {
        return Err(DecodeError::LengthTooShort {
            layer: "ofp_header",
            offset: 0,
            length: len,
            min: HEADER_LEN,
        });
    }
    Ok(if buf.len() >= len { Some(len) } else { None })
}

/// Checks that `frame` holds exactly one message whose header length matches, and
/// returns the view of its header.
#[inline]
pub fn check_frame(frame: &[u8]) -> DecodeResult<Header<&[u8]>> {
    let h = Header::new_checked(frame)?;
    let len = h.length() as usize;
    if len < HEADER_LEN {
        return Err(DecodeError::LengthTooShort {
            layer: "ofp_header",
            offset: 0,
            length: len,
            min: HEADER_LEN,
        });
    }
    if len > frame.len() {
        return Err(DecodeError::Truncated {
            layer: "ofp_header",
            offset: 0,
            needed: len,
            available: frame.len(),
        });
    }
    if len < frame.len() {
        return Err(DecodeError::LengthMismatch {
            layer: "ofp_header",
            offset: 0,
            length: len,
            expected: frame.len(),
        });
    }
    Ok(h)
}

/// An encoded message under construction in the caller's buffer.
#[derive(Debug, Clone, Copy)]
#[must_use = "a message must be completed with finish()"]
pub struct MessageStart {
    start: usize,
    len: LenMark,
}

/// Writes a header with a placeholder length at the end of `out`.
#[inline]
pub fn begin(out: &mut Vec<u8>, version: u8, msg_type: u8, xid: u32) -> MessageStart {
    let start = out.len();
    out.put_u8(version);
    out.put_u8(msg_type);
    let len = LenMark::new(out, start, "ofp_header");
    out.put_u32(xid);
    MessageStart { start, len }
}

impl MessageStart {
    /// Where the message begins in the buffer.
    pub fn start(&self) -> usize {
        self.start
    }

    /// Patches the header length. On error the message is removed from `out`.
    #[inline]
    pub fn finish(self, out: &mut Vec<u8>) -> EncodeResult<usize> {
        match self.len.finish(out) {
            Ok(n) => Ok(n),
            Err(e) => {
                out.truncate(self.start);
                Err(e)
            }
        }
    }

    /// Removes the partial message from `out` (for an error met while encoding the body).
    pub fn abandon(self, out: &mut Vec<u8>) {
        out.truncate(self.start);
    }
}

/// Encodes a message whose body is written by `body`, framing it with a header. On any
/// error nothing is left in `out`.
#[inline]
pub fn encode_with(
    out: &mut Vec<u8>,
    version: u8,
    msg_type: u8,
    xid: u32,
    body: impl FnOnce(&mut Vec<u8>) -> EncodeResult<()>,
) -> EncodeResult<usize> {
    let m = begin(out, version, msg_type, xid);
    if let Err(e) = body(out) {
        m.abandon(out);
        return Err(e);
    }
    m.finish(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_view_reads_and_writes() {
        let mut b = [0u8; 8];
        let mut h = Header::new_unchecked(&mut b[..]);
        h.set_version(4);
        h.set_msg_type(10);
        h.set_length(0x94);
        h.set_xid(0xdeadbeef);
        assert_eq!(b, [4, 10, 0, 0x94, 0xde, 0xad, 0xbe, 0xef]);
        let h = Header::new_checked(&b[..]).unwrap();
        assert_eq!(
            (h.version(), h.msg_type(), h.length(), h.xid()),
            (4, 10, 0x94, 0xdeadbeef)
        );
        assert!(Header::new_checked(&b[..7]).is_err());
    }

    #[test]
    fn frame_len_waits_for_bytes_and_refuses_short_lengths() {
        assert_eq!(frame_len(&[4, 0, 0]), Ok(None));
        assert_eq!(frame_len(&[4, 0, 0, 16, 0, 0, 0, 0]), Ok(None));
        assert_eq!(frame_len(&[4, 0, 0, 8, 0, 0, 0, 0, 9]), Ok(Some(8)));
        assert!(matches!(
            frame_len(&[4, 0, 0, 7, 0, 0, 0, 0]),
            Err(DecodeError::LengthTooShort { length: 7, .. })
        ));
    }

    #[test]
    fn check_frame_wants_exact_length() {
        assert!(check_frame(&[4, 0, 0, 8, 0, 0, 0, 0]).is_ok());
        assert!(matches!(
            check_frame(&[4, 0, 0, 9, 0, 0, 0, 0]),
            Err(DecodeError::Truncated { .. })
        ));
        assert!(matches!(
            check_frame(&[4, 0, 0, 8, 0, 0, 0, 0, 0]),
            Err(DecodeError::LengthMismatch { .. })
        ));
    }

    #[test]
    fn encode_with_removes_partial_message_on_error() {
        let mut out = vec![1, 2, 3];
        let r = encode_with(&mut out, 4, 0, 7, |o| {
            o.put_u32(5);
            Err(crate::EncodeError::BadValue {
                layer: "t",
                field: "f",
                value: 1,
                reason: "r",
            })
        });
        assert!(r.is_err());
        assert_eq!(out, [1, 2, 3]);
        let n = encode_with(&mut out, 4, 2, 7, |o| {
            o.put_u8(0xaa);
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 9);
        assert_eq!(out, [1, 2, 3, 4, 2, 0, 9, 0, 0, 0, 7, 0xaa]);
    }
}
