//! TCP reassembly for one direction of one connection.
//!
//! Bytes are placed by sequence number into a 64-bit stream position (0 = the first byte
//! after the SYN, or the first captured byte when the capture starts mid-connection),
//! so sequence wrap-around needs no special case. In-order bytes are handed out at once;
//! segments from the future wait in `pending`; bytes already handed out (retransmissions,
//! overlaps) are dropped. A hole is given up on, reported as a [`Event::Gap`], and skipped
//! when the peer acknowledges bytes past it ([`Stream::acked`]: the peer got them, so the
//! capture missed them, as Wireshark's "ACKed unseen segment"), when the connection is
//! reset, when more than [`MAX_PENDING`] bytes wait behind it, or at the end of the
//! capture ([`Stream::finish`]). Bytes the capture's snap length cut off are a gap at once.

use std::collections::BTreeMap;

use super::net::{TCP_FIN, TCP_RST, TCP_SYN};

/// How many out-of-order bytes may wait for a missing segment before the missing
/// segment is declared lost (the capture dropped it).
pub const MAX_PENDING: usize = 1 << 20;

/// What reassembly produced, in stream order.
#[derive(Debug, PartialEq, Eq)]
pub enum Event {
    /// The next in-order bytes.
    Data(Vec<u8>),
    /// `len` bytes at stream position `at` are missing from the capture; what follows
    /// is the data after them.
    Gap { at: u64, len: u64 },
    /// A SYN with a new initial sequence number: a new connection on the same addresses.
    /// Positions restart at 0.
    Restart,
    /// The capture begins after the connection's SYN: positions count from the first
    /// byte captured, which need not be the start of a message.
    MidStream,
}

/// One direction of a TCP connection.
#[derive(Debug, Default)]
pub struct Stream {
    /// The initial sequence number, when the SYN was seen (to tell a retransmitted SYN
    /// from a new connection).
    isn: Option<u32>,
    /// The sequence number of the next expected byte, once anything was seen.
    next_seq: Option<u32>,
    /// The stream position of `next_seq`.
    next_pos: u64,
    /// Segments after a hole, by stream position: captured bytes and how many more the
    /// snap length cut off.
    pending: BTreeMap<u64, (Vec<u8>, usize)>,
    /// Bytes held in `pending`, for the [`MAX_PENDING`] cap.
    pending_bytes: usize,
    /// The sequence number of the FIN, once seen: the peer's acknowledgement of the FIN
    /// is one past the data.
    fin_seq: Option<u32>,
}

impl Stream {
    /// Takes one segment; appends what it produced to `out`.
    pub fn segment(
        &mut self,
        seq: u32,
        flags: u8,
        payload: &[u8],
        missing: usize,
        out: &mut Vec<Event>,
    ) {
        let mut data_seq = seq;
        if flags & TCP_SYN != 0 {
            match self.isn {
                Some(isn) if isn == seq => {}
                _ => {
                    if self.next_seq.is_some() {
                        self.flush_pending(out);
                        out.push(Event::Restart);
                    }
                    *self = Stream {
                        isn: Some(seq),
                        next_seq: Some(seq.wrapping_add(1)),
                        ..Stream::default()
                    };
                }
            }
            // The SYN takes one sequence number; data in a SYN (TCP Fast Open) follows it.
            data_seq = seq.wrapping_add(1);
        }
        if flags & TCP_FIN != 0 {
            self.fin_seq = Some(data_seq.wrapping_add((payload.len() + missing) as u32));
        }
        if payload.is_empty() && missing == 0 {
            if flags & TCP_RST != 0 {
                self.flush_pending(out);
            }
            return;
        }
        let next_seq = match self.next_seq {
            Some(s) => s,
            None => {
                out.push(Event::MidStream);
                self.next_seq = Some(data_seq);
                data_seq
            }
        };
        let diff = i64::from(data_seq.wrapping_sub(next_seq) as i32);
        let pos = self.next_pos as i64 + diff;
        let end = pos + (payload.len() + missing) as i64;
        if end <= self.next_pos as i64 {
            return; // entirely a retransmission
        }
        if pos <= self.next_pos as i64 {
            let skip = (self.next_pos as i64 - pos) as usize;
            self.deliver(payload, missing, skip, out);
            self.drain(out);
        } else {
            self.insert(pos as u64, payload, missing);
            if self.pending_bytes > MAX_PENDING {
                self.skip_hole(out);
                self.drain(out);
            }
        }
        if flags & TCP_RST != 0 {
            self.flush_pending(out);
        }
    }

    /// The peer acknowledged every byte before `ack`: bytes before it that the capture
    /// does not have are lost from the capture, and reported as a gap now.
    pub fn acked(&mut self, ack: u32, out: &mut Vec<Event>) {
        let Some(next_seq) = self.next_seq else {
            return;
        };
        // The FIN takes a sequence number of its own, after the data.
        let data_end = if self.fin_seq == Some(ack.wrapping_sub(1)) {
            ack.wrapping_sub(1)
        } else {
            ack
        };
        let ahead = data_end.wrapping_sub(next_seq) as i32;
        if ahead <= 0 {
            return;
        }
        let ack_pos = self.next_pos + ahead as u64;
        while self.next_pos < ack_pos {
            match self.pending.first_key_value() {
                Some((&pos, _)) if pos <= ack_pos => self.skip_hole(out),
                _ => {
                    // Nothing captured up to the acknowledged byte.
                    let len = ack_pos - self.next_pos;
                    out.push(Event::Gap {
                        at: self.next_pos,
                        len,
                    });
                    self.next_pos = ack_pos;
                    self.next_seq = Some(data_end);
                }
            }
            self.drain(out);
        }
    }

    /// Gives up on every hole: what waits is handed out behind gaps. Call at the end of
    /// the capture.
    pub fn finish(&mut self, out: &mut Vec<Event>) {
        self.flush_pending(out);
    }

    fn flush_pending(&mut self, out: &mut Vec<Event>) {
        while !self.pending.is_empty() {
            self.skip_hole(out);
            self.drain(out);
        }
    }

    /// Hands out a segment that starts at or before `next_pos`, less its first `skip`
    /// bytes (already handed out).
    fn deliver(&mut self, payload: &[u8], missing: usize, skip: usize, out: &mut Vec<Event>) {
        let total = payload.len() + missing;
        if skip < payload.len() {
            out.push(Event::Data(payload[skip..].to_vec()));
        }
        if missing > 0 && skip < total {
            let lost = total - skip.max(payload.len());
            out.push(Event::Gap {
                at: self.next_pos + (payload.len().saturating_sub(skip)) as u64,
                len: lost as u64,
            });
        }
        let advance = total - skip;
        self.next_pos += advance as u64;
        if let Some(s) = self.next_seq.as_mut() {
            *s = s.wrapping_add(advance as u32);
        }
    }

    /// Hands out every waiting segment that has become contiguous.
    fn drain(&mut self, out: &mut Vec<Event>) {
        while let Some((&pos, _)) = self.pending.first_key_value() {
            if pos > self.next_pos {
                break;
            }
            let Some((_, (payload, missing))) = self.pending.pop_first() else {
                break;
            };
            self.pending_bytes -= payload.len();
            let skip = (self.next_pos - pos) as usize;
            if skip < payload.len() + missing {
                self.deliver(&payload, missing, skip, out);
            }
        }
    }

    /// Reports the hole before the first waiting segment and moves past it.
    fn skip_hole(&mut self, out: &mut Vec<Event>) {
        if let Some((&pos, _)) = self.pending.first_key_value() {
            if pos > self.next_pos {
                let len = pos - self.next_pos;
                out.push(Event::Gap {
                    at: self.next_pos,
                    len,
                });
                self.next_pos = pos;
                if let Some(s) = self.next_seq.as_mut() {
                    *s = s.wrapping_add(len as u32);
                }
            }
        }
    }

    /// Keeps a segment from the future; of two at the same position the longer wins.
    fn insert(&mut self, pos: u64, payload: &[u8], missing: usize) {
        let replace = match self.pending.get(&pos) {
            Some((p, m)) => p.len() + m < payload.len() + missing,
            None => true,
        };
        if replace {
            if let Some((old, _)) = self.pending.insert(pos, (payload.to_vec(), missing)) {
                self.pending_bytes -= old.len();
            }
            self.pending_bytes += payload.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACK: u8 = 0x10;

    /// Joins the data events, with `_` for each gap byte and `|` for a restart.
    fn run(segments: &[(u32, u8, &[u8])]) -> String {
        let mut s = Stream::default();
        let mut out = Vec::new();
        for (seq, flags, data) in segments {
            s.segment(*seq, *flags, data, 0, &mut out);
        }
        s.finish(&mut out);
        let mut text = String::new();
        for e in out {
            match e {
                Event::Data(d) => text.push_str(std::str::from_utf8(&d).unwrap()),
                Event::Gap { len, .. } => text.push_str(&"_".repeat(len as usize)),
                Event::Restart => text.push('|'),
                Event::MidStream => text.push('~'),
            }
        }
        text
    }

    #[test]
    fn in_order_out_of_order_and_retransmitted() {
        assert_eq!(
            run(&[(99, TCP_SYN, b""), (100, ACK, b"abc"), (103, ACK, b"def")]),
            "abcdef"
        );
        assert_eq!(
            run(&[(99, TCP_SYN, b""), (103, ACK, b"def"), (100, ACK, b"abc")]),
            "abcdef"
        );
        assert_eq!(
            run(&[
                (99, TCP_SYN, b""),
                (100, ACK, b"abc"),
                (100, ACK, b"abc"),
                (101, ACK, b"bcdef"),
                (103, ACK, b"de")
            ]),
            "abcdef"
        );
        // Out of order with overlaps on both sides.
        assert_eq!(
            run(&[
                (99, TCP_SYN, b""),
                (104, ACK, b"efg"),
                (102, ACK, b"cde"),
                (100, ACK, b"abc")
            ]),
            "abcdefg"
        );
    }

    #[test]
    fn sequence_numbers_wrap() {
        let isn = u32::MAX - 1;
        assert_eq!(
            run(&[(isn, TCP_SYN, b""), (u32::MAX, ACK, b"ab"), (1, ACK, b"cd")]),
            "abcd"
        );
    }

    #[test]
    fn holes_become_gaps_at_the_end() {
        assert_eq!(
            run(&[(99, TCP_SYN, b""), (100, ACK, b"ab"), (104, ACK, b"ef")]),
            "ab__ef"
        );
    }

    #[test]
    fn syn_data_and_restarts_and_mid_stream() {
        assert_eq!(run(&[(99, TCP_SYN, b"ab"), (102, ACK, b"c")]), "abc");
        assert_eq!(
            run(&[(99, TCP_SYN, b""), (99, TCP_SYN, b""), (100, ACK, b"a")]),
            "a"
        );
        assert_eq!(
            run(&[
                (9, TCP_SYN, b""),
                (10, ACK, b"a"),
                (50, TCP_SYN, b""),
                (51, ACK, b"b")
            ]),
            "a|b"
        );
        assert_eq!(run(&[(500, ACK, b"xy"), (502, ACK, b"z")]), "~xyz");
    }

    #[test]
    fn snap_length_cuts_are_gaps_at_once() {
        let mut s = Stream::default();
        let mut out = Vec::new();
        s.segment(9, TCP_SYN, b"", 0, &mut out);
        s.segment(10, ACK, b"ab", 3, &mut out);
        s.segment(15, ACK, b"z", 0, &mut out);
        assert_eq!(
            out,
            [
                Event::Data(b"ab".to_vec()),
                Event::Gap { at: 2, len: 3 },
                Event::Data(b"z".to_vec())
            ]
        );
    }

    #[test]
    fn acknowledged_holes_are_gaps_at_once() {
        let mut s = Stream::default();
        let mut out = Vec::new();
        s.segment(9, TCP_SYN, b"", 0, &mut out);
        s.segment(10, ACK, b"ab", 0, &mut out);
        s.acked(12, &mut out);
        s.segment(15, ACK, b"f", 0, &mut out);
        assert_eq!(out, [Event::Data(b"ab".to_vec())]);
        s.acked(16, &mut out);
        assert_eq!(
            out[1..],
            [Event::Gap { at: 2, len: 3 }, Event::Data(b"f".to_vec())]
        );
        // Acknowledged but never captured, then the FIN and its acknowledgement.
        out.clear();
        s.acked(18, &mut out);
        assert_eq!(out, [Event::Gap { at: 6, len: 2 }]);
        s.segment(18, TCP_FIN | ACK, b"", 0, &mut out);
        s.acked(19, &mut out);
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn too_much_waiting_gives_up_on_the_hole() {
        let mut s = Stream::default();
        let mut out = Vec::new();
        s.segment(0, TCP_SYN, b"", 0, &mut out);
        let big = vec![7u8; MAX_PENDING + 1];
        s.segment(11, ACK, &big, 0, &mut out);
        assert_eq!(out[0], Event::Gap { at: 0, len: 10 });
        assert!(matches!(&out[1], Event::Data(d) if d.len() == big.len()));
    }
}
