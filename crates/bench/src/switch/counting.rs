//! How a switch numbers its PACKET_INs and matches answers to them: sequence numbers
//! (xids and buffer ids), the counting rules, and what an answer names.

use serde::Serialize;

use super::template::{msg, FRAME_SEQ_AT, NO_BUFFER};

/// How answers are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Counting {
    /// cbench's rule: every FLOW_MOD and every PACKET_OUT is a response, whatever it
    /// answers. A controller sending a FLOW_MOD and a PACKET_OUT per PACKET_IN counts
    /// twice. Each response retires the oldest PACKET_IN still in flight (and gives the
    /// round trip of that one): with such a controller the second message retires a
    /// PACKET_IN it does not answer, so use `PerPacketIn` for its round trips.
    Cbench,
    /// `--per-packet-in`: PACKET_INs answered. A FLOW_MOD or PACKET_OUT answers the
    /// PACKET_IN in flight it names (see [`answered_seq`]); further messages for the
    /// same PACKET_IN, and messages naming none in flight, are not counted. This is the
    /// figure to compare controllers that answer with different messages (one buffered
    /// FLOW_MOD, or a FLOW_MOD and a PACKET_OUT).
    PerPacketIn,
}

/// The first PACKET_IN's xid (and buffer id, unless `--no-buffer`).
pub const FIRST_SEQ: u32 = 0x1000_0000;
/// Sequence numbers run from [`FIRST_SEQ`] through `FIRST_SEQ + SPAN - 1`, then again
/// (never `NO_BUFFER`). A power of two, so that ages are computed with a mask.
pub(super) const SPAN: u32 = 1 << 30;
/// In unbounded mode, a switch remembers which of its last `RING` PACKET_INs were
/// answered (one bit each, 128 KiB): an answer to an older one is not counted. More than
/// the socket buffers and a controller's queue hold of 100-byte messages.
pub(super) const RING: u32 = 1 << 20;
/// The xid of the ECHO_REQUEST closing a switch's announcements (below [`FIRST_SEQ`]).
pub(super) const LEARN_DONE_XID: u32 = 0x0fff_fff0;

/// The sequence number of PACKET_IN number `n`.
pub(super) fn seq_of(n: u64) -> u32 {
    FIRST_SEQ + (n as u32 & (SPAN - 1))
}

/// The PACKET_IN a FLOW_MOD or PACKET_OUT answers, by its sequence number: the buffer
/// id it names, unless `NO_BUFFER`; for an unbuffered PACKET_OUT, the number in the frame
/// it sends back (where the PACKET_IN's frame carried it); else its xid (for a
/// controller that answers with the PACKET_IN's xid, as the responder does). Reads a few
/// fixed offsets, nothing more; `None` for a message too short to hold them.
pub fn answered_seq(m: &[u8]) -> Option<u32> {
    let u32_at = |at: usize| {
        m.get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let (version, ty) = (*m.first()?, *m.get(1)?);
    // PACKET_OUT: buffer_id right after the header (1.0 §5.3.6, 1.3 §7.3.7). FLOW_MOD:
    // after the 40-byte match, cookie, command, timeouts and priority in 1.0 (§5.3.3);
    // after cookie, mask, table, command, timeouts and priority in 1.3 (§7.3.4.1).
    let buffer_id = match (version, ty) {
        (_, msg::PACKET_OUT) => u32_at(8),
        (0x01, msg::FLOW_MOD) => u32_at(64),
        (0x04, msg::FLOW_MOD) => u32_at(32),
        _ => None,
    }?;
    if buffer_id != NO_BUFFER {
        return Some(buffer_id);
    }
    if ty == msg::PACKET_OUT {
        // The frame follows the actions: 1.0 has actions_len at 14 and the actions at
        // 16; 1.3 has it at 16 and the actions at 24 (after 6 bytes of padding).
        let (len_at, actions_at) = if version == 0x01 { (14, 16) } else { (16, 24) };
        if let Some(l) = m.get(len_at..len_at + 2) {
            let data = actions_at + usize::from(u16::from_be_bytes([l[0], l[1]]));
            if let Some(seq) = u32_at(data + FRAME_SEQ_AT) {
                return Some(seq);
            }
        }
    }
    u32_at(4)
}

#[cfg(test)]
mod tests {
    use openflow::Version;

    use super::super::hosts::host_mac;
    use super::super::hosts::FRAME_LEN;
    use super::super::template::Template;
    use super::*;

    #[test]
    fn answered_seq_reads_buffer_id_frame_or_xid() {
        use openflow::model::{Action, FlowMod, Match, PacketOut, PortNo};
        let out_port = [Action::output(PortNo::Physical(2))];
        for version in [Version::V1_0, Version::V1_3] {
            let enc = |f: &dyn Fn(&mut Vec<u8>)| {
                let mut out = Vec::new();
                f(&mut out);
                out
            };
            let po = enc(&|o| {
                PacketOut::buffered(77, PortNo::Physical(1), &out_port)
                    .encode(version, 1, o)
                    .unwrap();
            });
            assert_eq!(answered_seq(&po), Some(77));
            let fm = enc(&|o| {
                FlowMod::add(Match::default(), &out_port)
                    .buffer_id(Some(55))
                    .encode(version, 1, o)
                    .unwrap();
            });
            assert_eq!(answered_seq(&fm), Some(55));
            // Unbuffered: a FLOW_MOD names its xid; a PACKET_OUT the number in its frame.
            let fm = enc(&|o| {
                FlowMod::add(Match::default(), &out_port)
                    .encode(version, 0x1234_5678, o)
                    .unwrap();
            });
            assert_eq!(answered_seq(&fm), Some(0x1234_5678));
            let mut pi = Vec::new();
            Template::new(version, 1).append(
                &mut pi,
                0x1000_0abc,
                NO_BUFFER,
                1,
                host_mac(1, 0),
                host_mac(1, 1),
            );
            let data = &pi[pi.len() - FRAME_LEN..];
            let po = enc(&|o| {
                PacketOut::unbuffered(data, PortNo::Physical(1), &out_port)
                    .encode(version, 9, o)
                    .unwrap();
            });
            assert_eq!(answered_seq(&po), Some(0x1000_0abc));
            assert_eq!(
                answered_seq(&po[..20]),
                Some(9),
                "too short for the frame: the xid"
            );
            assert_eq!(answered_seq(&po[..6]), None);
        }
    }
}
