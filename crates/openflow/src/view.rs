//! Zero-copy views for the hot path: a PACKET_IN of either version, read in place from
//! the read buffer, down to the fields a controller acts on. Nothing here allocates.
//!
//! ```text
//! 1.0 ofp_packet_in:  header(8) buffer_id(4) total_len(2) in_port(2) reason(1) pad(1) data
//! 1.3 ofp_packet_in:  header(8) buffer_id(4) total_len(2) reason(1) table_id(1) cookie(8)
//!                     ofp_match(type 2, length 2, OXM TLVs, pad to 8) pad(2) data
//! ```

use crate::error::{DecodeError, DecodeResult};
use crate::frame::Frame;
use crate::header::{check_frame, Version};
use crate::msg_type::PACKET_IN;

/// `OFP_NO_BUFFER`: the packet was not buffered; it is all in `data`.
pub const NO_BUFFER: u32 = 0xffff_ffff;

mod field {
    use std::ops::Range;
    pub const BUFFER_ID: Range<usize> = 8..12;
    pub const TOTAL_LEN: Range<usize> = 12..14;
    // 1.0
    pub const V10_IN_PORT: Range<usize> = 14..16;
    pub const V10_REASON: usize = 16;
    pub const V10_DATA: usize = 18;
    // 1.3
    pub const V13_REASON: usize = 14;
    pub const V13_TABLE_ID: usize = 15;
    pub const V13_COOKIE: Range<usize> = 16..24;
    pub const V13_MATCH: usize = 24;
}

/// OXM header of `OXM_OF_IN_PORT` (class 0x8000, field 0, no mask, 4 bytes).
const OXM_IN_PORT: u32 = 0x8000_0004;
/// `OFPMT_OXM`.
const MATCH_TYPE_OXM: u16 = 1;

/// A PACKET_IN of either version, viewed in place.
///
/// [`PacketIn::new_checked`] validates the whole message once (header, lengths, the 1.3
/// match framing) and locates the frame and the ingress port; the getters then read
/// fixed offsets and cannot fail.
#[derive(Debug, Clone, Copy)]
pub struct PacketIn<T: AsRef<[u8]>> {
    buffer: T,
    version: Version,
    /// Offset of the packet data within the message.
    data_offset: usize,
    /// Ingress port, widened to 32 bits (1.0 reserved ports map to their 1.3 values).
    in_port: u32,
}

impl<T: AsRef<[u8]>> PacketIn<T> {
    /// Validates `buffer` as exactly one PACKET_IN message of version 1.0 or 1.3.
    /// For a message that has not been framed from a stream (a test's, a capture's);
    /// the hot path has a [`Frame`] already and calls [`PacketIn::from_frame`].
    #[inline]
    pub fn new_checked(buffer: T) -> DecodeResult<PacketIn<T>> {
        let b = buffer.as_ref();
        let h = check_frame(b)?;
        let version = Version::from_wire(h.version())?;
        let (data_offset, in_port) = body(b, version, h.msg_type())?;
        Ok(PacketIn {
            buffer,
            version,
            data_offset,
            in_port,
        })
    }

    pub fn version(&self) -> Version {
        self.version
    }

    pub fn xid(&self) -> u32 {
        let b = self.buffer.as_ref();
        u32::from_be_bytes([b[4], b[5], b[6], b[7]])
    }

    /// The raw `buffer_id` (`NO_BUFFER` when the switch did not buffer the packet).
    #[inline]
    pub fn raw_buffer_id(&self) -> u32 {
        be32(&self.buffer.as_ref()[field::BUFFER_ID])
    }

    /// The id of the switch buffer holding the packet, if it was buffered.
    #[inline]
    pub fn buffer_id(&self) -> Option<u32> {
        match self.raw_buffer_id() {
            NO_BUFFER => None,
            id => Some(id),
        }
    }

    /// Full length of the packet on the wire (`data` may hold less when buffered).
    pub fn total_len(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::TOTAL_LEN];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// The port the packet came in on, 32 bits wide: 1.0 reserved ports (0xfff8..) are
    /// given their 1.3 values (0xfffffff8..), so apps compare against one set of numbers.
    #[inline]
    pub fn in_port(&self) -> u32 {
        self.in_port
    }

    /// `OFPR_NO_MATCH` (0), `OFPR_ACTION` (1), `OFPR_INVALID_TTL` (2, 1.3).
    pub fn reason(&self) -> u8 {
        let b = self.buffer.as_ref();
        match self.version {
            Version::V1_0 => b[field::V10_REASON],
            Version::V1_3 => b[field::V13_REASON],
        }
    }

    /// The table the packet was looked up in (1.3 only).
    pub fn table_id(&self) -> Option<u8> {
        match self.version {
            Version::V1_0 => None,
            Version::V1_3 => Some(self.buffer.as_ref()[field::V13_TABLE_ID]),
        }
    }

    /// The cookie of the flow entry that sent the packet (1.3 only).
    pub fn cookie(&self) -> Option<u64> {
        match self.version {
            Version::V1_0 => None,
            Version::V1_3 => {
                let b = &self.buffer.as_ref()[field::V13_COOKIE];
                Some(u64::from_be_bytes([
                    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                ]))
            }
        }
    }

    /// The OXM TLVs of the 1.3 match (without the match header and padding).
    pub fn oxm_bytes(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        match self.version {
            Version::V1_0 => &[],
            Version::V1_3 => {
                let len = u16::from_be_bytes([b[26], b[27]]) as usize;
                &b[field::V13_MATCH + 4..field::V13_MATCH + len]
            }
        }
    }

    /// The packet (or its first bytes, when the switch buffered it).
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.buffer.as_ref()[self.data_offset..]
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }
}

impl<'a> PacketIn<&'a [u8]> {
    /// The PACKET_IN `frame` is: its header was checked where the stream was framed, so
    /// only the PACKET_IN's own body is checked here (its type, lengths and, on 1.3,
    /// the match's framing). Inlined: on the hot path once per PACKET_IN, and its large
    /// `Result` returned through memory stalled the caller's first read of it in a
    /// profile.
    #[inline]
    pub fn from_frame(frame: Frame<'a>) -> DecodeResult<PacketIn<&'a [u8]>> {
        let (data_offset, in_port) = body(frame.bytes(), frame.version(), frame.msg_type())?;
        Ok(PacketIn {
            buffer: frame.bytes(),
            version: frame.version(),
            data_offset,
            in_port,
        })
    }
}

/// The body of a message whose header was checked (`msg_type`, `version` from it): it
/// must be a PACKET_IN; returns where its data starts and its ingress port.
#[inline]
fn body(b: &[u8], version: Version, msg_type: u8) -> DecodeResult<(usize, u32)> {
    if msg_type != PACKET_IN {
        return Err(DecodeError::WrongMessage {
            expected: "PACKET_IN",
            version: version.wire(),
            msg_type,
        });
    }
    match version {
        Version::V1_0 => {
            if b.len() < field::V10_DATA {
                return Err(truncated("ofp_packet_in", 0, field::V10_DATA, b.len()));
            }
            let p = &b[field::V10_IN_PORT];
            let p = u16::from_be_bytes([p[0], p[1]]);
            Ok((field::V10_DATA, widen_port(p)))
        }
        Version::V1_3 => scan_v13(b),
    }
}

/// Widens a 1.0 port number: reserved ports 0xff00.. become 0xffffff00...
#[inline]
pub fn widen_port(p: u16) -> u32 {
    if p >= 0xff00 {
        0xffff_0000 | p as u32
    } else {
        p as u32
    }
}

#[inline]
fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn truncated(layer: &'static str, offset: usize, needed: usize, available: usize) -> DecodeError {
    DecodeError::Truncated {
        layer,
        offset,
        needed,
        available,
    }
}

/// Validates the 1.3 match of a PACKET_IN and finds the data offset and `OXM_OF_IN_PORT`.
fn scan_v13(b: &[u8]) -> DecodeResult<(usize, u32)> {
    let m = field::V13_MATCH;
    if b.len() < m + 4 {
        return Err(truncated("ofp_packet_in", 0, m + 4, b.len()));
    }
    let match_type = u16::from_be_bytes([b[m], b[m + 1]]);
    let match_len = u16::from_be_bytes([b[m + 2], b[m + 3]]) as usize;
    if match_type != MATCH_TYPE_OXM {
        return Err(DecodeError::BadValue {
            layer: "ofp_match",
            field: "type",
            offset: m,
            value: match_type as u64,
            reason: "a 1.3 PACKET_IN carries an OXM match (type 1)",
        });
    }
    if match_len < 4 {
        return Err(DecodeError::LengthTooShort {
            layer: "ofp_match",
            offset: m,
            length: match_len,
            min: 4,
        });
    }
    // OpenFlow 1.3.5 §7.2.2.1: "the match ... is padded to a multiple of 8", and
    // §7.4.1: the match is followed by 2 bytes of padding before the frame.
    let padded = (match_len + 7) & !7;
    let data_offset = m + padded + 2;
    if data_offset > b.len() {
        return Err(DecodeError::LengthOverrun {
            layer: "ofp_match",
            offset: m,
            length: padded + 2,
            available: b.len() - m,
        });
    }
    // Walk the OXM TLVs: each must fit the match; remember IN_PORT.
    let mut in_port = None;
    let mut at = m + 4;
    let end = m + match_len;
    while at < end {
        if end - at < 4 {
            return Err(truncated("oxm", at, 4, end - at));
        }
        let header = be32(&b[at..]);
        let len = (header & 0xff) as usize;
        if at + 4 + len > end {
            return Err(DecodeError::LengthOverrun {
                layer: "oxm",
                offset: at,
                length: 4 + len,
                available: end - at,
            });
        }
        if header == OXM_IN_PORT {
            in_port = Some(be32(&b[at + 4..]));
        }
        at += 4 + len;
    }
    // §7.4.1: "in_port ... is always present" in a 1.3 PACKET_IN match.
    let in_port = in_port.ok_or(DecodeError::BadValue {
        layer: "ofp_packet_in",
        field: "match",
        offset: m,
        value: 0,
        reason: "no OXM_OF_IN_PORT in the match",
    })?;
    Ok((data_offset, in_port))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// of10/1-4-ofp_packet_in.packet
    const V10: &[u8] = &[
        0x01, 0x0a, 0x00, 0x3c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x2a, 0x00,
        0x63, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf2, 0x0b, 0xa4, 0x7d, 0xf8, 0xea,
        0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0xf2, 0x0b, 0xa4, 0x7d, 0xf8,
        0xea, 0x0a, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x03,
    ];

    /// A 1.3 PACKET_IN with match [in_port=6, eth_type=0x0806] and a 4-byte frame.
    fn v13(frame: &[u8]) -> Vec<u8> {
        let mut m = vec![0x04, 0x0a, 0, 0, 0, 0, 0, 9];
        m.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0, 42, 1, 3]);
        m.extend_from_slice(&7u64.to_be_bytes());
        m.extend_from_slice(&[0, 1, 0, 18]);
        m.extend_from_slice(&[0x80, 0, 0, 4, 0, 0, 0, 6]);
        m.extend_from_slice(&[0x80, 0, 0x0a, 2, 0x08, 0x06]);
        m.extend_from_slice(&[0; 6]); // match padding
        m.extend_from_slice(&[0, 0]); // ofp_packet_in pad
        m.extend_from_slice(frame);
        let len = m.len() as u16;
        m[2..4].copy_from_slice(&len.to_be_bytes());
        m
    }

    #[test]
    fn v10_fields() {
        let p = PacketIn::new_checked(V10).unwrap();
        assert_eq!(p.version(), Version::V1_0);
        assert_eq!(p.buffer_id(), Some(2));
        assert_eq!(p.total_len(), 42);
        assert_eq!(p.in_port(), 99);
        assert_eq!(p.reason(), 1);
        assert_eq!(p.data().len(), 42);
        assert_eq!(&p.data()[..6], &[0xff; 6]);
        assert_eq!(p.table_id(), None);
    }

    #[test]
    fn a_packet_out_answers_from_the_buffer_or_with_the_bytes() {
        use crate::model::{Action, PacketOut, PortNo};
        let flood = [Action::output(PortNo::Flood)];
        // 1.0, buffered by the switch: by buffer id, no bytes.
        let p = PacketIn::new_checked(V10).unwrap();
        let po = PacketOut::of_packet_in(&p, &flood);
        assert_eq!((po.buffer_id, po.in_port), (Some(2), PortNo::Physical(99)));
        assert!(po.data.is_empty());
        // 1.3, not buffered: the packet's bytes.
        let msg = v13(b"hoge");
        let p = PacketIn::new_checked(&msg[..]).unwrap();
        let po = PacketOut::of_packet_in(&p, &flood);
        assert_eq!((po.buffer_id, po.in_port), (None, PortNo::Physical(6)));
        assert_eq!(po.data, b"hoge");
        assert_eq!(po.actions, &flood);
    }

    #[test]
    fn v13_fields() {
        let msg = v13(b"hoge");
        let p = PacketIn::new_checked(&msg[..]).unwrap();
        assert_eq!(p.version(), Version::V1_3);
        assert_eq!(p.xid(), 9);
        assert_eq!(p.buffer_id(), None);
        assert_eq!(p.total_len(), 42);
        assert_eq!(p.reason(), 1);
        assert_eq!(p.table_id(), Some(3));
        assert_eq!(p.cookie(), Some(7));
        assert_eq!(p.in_port(), 6);
        assert_eq!(p.data(), b"hoge");
        assert_eq!(p.oxm_bytes().len(), 14);
    }

    #[test]
    fn reserved_1_0_ports_widen() {
        assert_eq!(widen_port(0xfffd), 0xffff_fffd);
        assert_eq!(widen_port(7), 7);
    }

    #[test]
    fn every_truncation_and_bad_length_is_an_error() {
        let msg = v13(b"hoge");
        for cut in 0..msg.len() {
            let mut m = msg[..cut].to_vec();
            assert!(PacketIn::new_checked(&m[..]).is_err());
            if cut >= 8 {
                m[2..4].copy_from_slice(&(cut as u16).to_be_bytes());
                // A cut inside the frame is still a valid (shorter) PACKET_IN.
                let data_start = msg.len() - 4;
                assert_eq!(
                    PacketIn::new_checked(&m[..]).is_ok(),
                    cut >= data_start,
                    "cut {cut}"
                );
            }
        }
        // An OXM TLV longer than the match.
        let mut bad = msg.clone();
        bad[27] = 16; // match length 16: in_port fits, eth_type TLV overruns
        assert!(matches!(
            PacketIn::new_checked(&bad[..]),
            Err(DecodeError::LengthOverrun { layer: "oxm", .. })
        ));
        // A match length past the message.
        let mut bad = msg.clone();
        bad[26] = 0xff;
        assert!(matches!(
            PacketIn::new_checked(&bad[..]),
            Err(DecodeError::LengthOverrun {
                layer: "ofp_match",
                ..
            })
        ));
        // No in_port.
        let mut bad = msg.clone();
        bad[30] = 0x02; // field 1 (in_phy_port) instead of 0
        assert!(matches!(
            PacketIn::new_checked(&bad[..]),
            Err(DecodeError::BadValue { .. })
        ));
        // Not a PACKET_IN.
        let mut bad = msg;
        bad[1] = crate::msg_type::FLOW_MOD;
        assert!(matches!(
            PacketIn::new_checked(&bad[..]),
            Err(DecodeError::WrongMessage { .. })
        ));
    }
}
