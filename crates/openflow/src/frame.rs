//! A whole message cut from a byte stream, its header checked once.
//!
//! A reader of a switch's stream calls [`next`] on its buffer: it checks the header of
//! the message at the front (the length field at least `ofp_header`'s 8 bytes, the
//! version the one negotiated, the length within the reader's limit) and, when the
//! whole message is there, gives a [`Frame`]: the message's bytes and version, proven.
//! Everything downstream takes the `Frame` and trusts it: the dispatcher reads the type
//! and xid, [`crate::view::PacketIn::from_frame`] checks only the PACKET_IN's own body.
//! The header is read from the wire once per message, where the stream is framed.
//!
//! ```
//! use openflow::frame::{self, Frame};
//! use openflow::Version;
//!
//! // A 1.3 BARRIER_REPLY (type 21), xid 7, then the first byte of the next message.
//! let buf = [4, 21, 0, 8, 0, 0, 0, 7, 4];
//! let f: Frame = frame::next(&buf, Version::V1_3, 65535).unwrap().unwrap();
//! assert_eq!((f.msg_type(), f.xid(), f.len()), (21, 7, 8));
//! assert!(frame::next(&buf[8..], Version::V1_3, 65535).unwrap().is_none());
//! assert!(frame::next(&buf, Version::V1_0, 65535).is_err());
//! ```

use crate::error::{DecodeError, DecodeResult};
use crate::header::{check_frame, Version, HEADER_LEN};

/// Why a stream cannot be framed further: each closes the connection it came on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// OpenFlow 1.3.5 §7.1: "length: Length including this ofp_header"; this one is
    /// shorter than the header itself.
    #[error("a header length of {length}, under the 8 bytes of ofp_header")]
    BadLength {
        /// The header's length field.
        length: usize,
    },
    /// The message is not of the version the connection negotiated (OpenFlow 1.3.5
    /// §6.3.1: the negotiated version is used for the rest of the connection).
    #[error("a message of wire version {found:#04x} on a connection of version {expected}")]
    WrongVersion {
        /// The header's version byte.
        found: u8,
        /// The connection's version.
        expected: Version,
    },
    /// Longer than the reader accepts.
    #[error("a message of {length} bytes, over the limit of {max}")]
    TooLong {
        /// The header's length field.
        length: usize,
        /// The reader's limit.
        max: usize,
    },
}

/// One whole message of a known version, its header checked: its length field is the
/// length of [`Frame::bytes`] (at least [`HEADER_LEN`]) and its version byte is
/// [`Frame::version`]'s. Made by [`next`] (a stream) or [`Frame::new_checked`] (a
/// buffer holding one message); the getters cannot fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The whole message, header included.
    bytes: &'a [u8],
    /// Its version, as the header's first byte says.
    version: Version,
}

/// The message at the front of `buf`, if it is there whole: its header is checked
/// against `version` (the connection's) and `max_len` (the reader's limit, at most
/// 65535). `Ok(None)`: not enough bytes yet (fewer than a header, or than the header's
/// length), read more and call again.
#[inline]
pub fn next(buf: &[u8], version: Version, max_len: usize) -> Result<Option<Frame<'_>>, FrameError> {
    let Some(h) = buf.get(..HEADER_LEN) else {
        return Ok(None);
    };
    let length = usize::from(u16::from_be_bytes([h[2], h[3]]));
    if length < HEADER_LEN {
        return Err(FrameError::BadLength { length });
    }
    if h[0] != version.wire() {
        return Err(FrameError::WrongVersion {
            found: h[0],
            expected: version,
        });
    }
    if length > max_len {
        return Err(FrameError::TooLong {
            length,
            max: max_len,
        });
    }
    Ok(buf.get(..length).map(|bytes| Frame { bytes, version }))
}

impl<'a> Frame<'a> {
    /// `bytes` as one whole message: its header's length must be its length and its
    /// version one this codec speaks. For callers that hold a message rather than a
    /// stream (tests, simulations, captures).
    pub fn new_checked(bytes: &'a [u8]) -> DecodeResult<Frame<'a>> {
        let h = check_frame(bytes)?;
        let version = Version::from_wire(h.version())?;
        Ok(Frame { bytes, version })
    }

    /// The whole message, header included.
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Its version.
    #[inline]
    pub fn version(&self) -> Version {
        self.version
    }

    /// Its type byte (the versions' `MsgType`s name them).
    #[inline]
    pub fn msg_type(&self) -> u8 {
        self.bytes[1]
    }

    /// Its xid.
    #[inline]
    pub fn xid(&self) -> u32 {
        let b = self.bytes;
        u32::from_be_bytes([b[4], b[5], b[6], b[7]])
    }

    /// Its length in bytes (the header's length field).
    #[inline]
    #[allow(clippy::len_without_is_empty)] // a frame always holds its header
    pub fn len(&self) -> usize {
        self.bytes.len()
    }
}

impl From<FrameError> for DecodeError {
    fn from(e: FrameError) -> DecodeError {
        match e {
            FrameError::BadLength { length } => DecodeError::LengthTooShort {
                layer: "ofp_header",
                offset: 0,
                length,
                min: HEADER_LEN,
            },
            FrameError::WrongVersion { found, .. } => {
                DecodeError::UnsupportedVersion { version: found }
            }
            FrameError::TooLong { length, max } => DecodeError::LengthMismatch {
                layer: "ofp_header",
                offset: 0,
                length,
                expected: max,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BARRIER_13: [u8; 8] = [4, 21, 0, 8, 0, 0, 0, 7];

    #[test]
    fn frames_a_whole_message_and_waits_for_a_partial_one() {
        let mut buf = BARRIER_13.to_vec();
        buf.extend_from_slice(&[4, 21, 0, 8, 0]);
        let f = next(&buf, Version::V1_3, 65535).unwrap().unwrap();
        assert_eq!(f.bytes(), &BARRIER_13);
        assert_eq!(f.version(), Version::V1_3);
        assert_eq!((f.msg_type(), f.xid(), f.len()), (21, 7, 8));
        for cut in 0..buf.len() - 8 {
            assert_eq!(next(&buf[8..8 + cut], Version::V1_3, 65535), Ok(None));
        }
    }

    #[test]
    fn refuses_each_broken_header_naming_why() {
        let short = [4, 21, 0, 7, 0, 0, 0, 7];
        assert_eq!(
            next(&short, Version::V1_3, 65535),
            Err(FrameError::BadLength { length: 7 })
        );
        assert_eq!(
            next(&BARRIER_13, Version::V1_0, 65535),
            Err(FrameError::WrongVersion {
                found: 4,
                expected: Version::V1_0
            })
        );
        let long = [4, 10, 0x10, 0, 0, 0, 0, 7];
        assert_eq!(
            next(&long, Version::V1_3, 1024),
            Err(FrameError::TooLong {
                length: 4096,
                max: 1024
            })
        );
        // The checks come before the wait for the rest: a bad header is refused at
        // once, not after its claimed length has been read.
        assert!(next(&long, Version::V1_3, 1024).is_err());
    }

    #[test]
    fn new_checked_takes_exactly_one_message() {
        assert!(Frame::new_checked(&BARRIER_13).is_ok());
        assert!(Frame::new_checked(&BARRIER_13[..7]).is_err());
        let mut two = BARRIER_13.to_vec();
        two.push(0);
        assert!(Frame::new_checked(&two).is_err());
        let mut v2 = BARRIER_13;
        v2[0] = 2;
        assert!(Frame::new_checked(&v2).is_err());
    }
}
