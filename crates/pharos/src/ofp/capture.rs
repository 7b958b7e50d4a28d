//! Captures: frames to TCP segments to reassembled streams to framed messages, per
//! direction of each connection, and finding the next message after a gap.

use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;

use openflow::{frame_len, Envelope, HEADER_LEN};

use super::decode::{Decoder, Source};
use super::net::{self, Parsed};
use super::pcap::{self, Timestamp};
use super::tcp::{self, Event};

impl<W: Write> Decoder<W> {
    /// A pcap or pcapng capture: OpenFlow over TCP on `ports`, both directions.
    pub(super) fn capture(&mut self, data: &[u8], ports: &[u16]) -> anyhow::Result<()> {
        let capture = pcap::read(data)?;
        // Everything the file reader complains of is damage: a file cut short, or
        // garbage where a frame should be.
        for w in &capture.warnings {
            self.damage(w);
        }
        let mut directions: HashMap<(SocketAddr, SocketAddr), Direction> = HashMap::new();
        let mut events = Vec::new();
        // Link types already reported as unsupported (once each, not once a frame).
        let mut unsupported = Vec::new();
        for frame in &capture.frames {
            if !net::is_supported(frame.linktype) {
                if !unsupported.contains(&frame.linktype) {
                    unsupported.push(frame.linktype);
                    self.warn(format_args!(
                        "frame {}: link type {} is not supported (Ethernet, Linux cooked SLL/SLL2, raw IP and BSD loopback are); its frames are skipped",
                        frame.number, frame.linktype
                    ));
                }
                continue;
            }
            let seg = match net::parse(frame.linktype, frame.data) {
                Parsed::Tcp(seg) => seg,
                Parsed::Other => continue,
                Parsed::Unreadable(why) => {
                    self.warn(format_args!("frame {}: skipped: {why}", frame.number));
                    continue;
                }
            };
            if !ports.contains(&seg.src.port()) && !ports.contains(&seg.dst.port()) {
                continue;
            }
            if seg.missing > 0 {
                self.damage(format_args!(
                    "frame {}: {} -> {}: the capture kept {} of {} payload bytes (the frame was cut to {} of {} bytes); the rest is a gap",
                    frame.number,
                    seg.src,
                    seg.dst,
                    seg.payload.len(),
                    seg.payload.len() + seg.missing,
                    frame.data.len(),
                    frame.orig_len
                ));
            }
            let dir = directions.entry((seg.src, seg.dst)).or_default();
            dir.stream
                .segment(seg.seq, seg.flags, seg.payload, seg.missing, &mut events);
            let at = Place {
                frame: frame.number,
                time: frame.time,
                src: seg.src,
                dst: seg.dst,
            };
            self.stream_events(&mut directions, &at, &mut events, false)?;
            // An acknowledgement may show that the other direction lost bytes.
            if seg.flags & net::TCP_ACK != 0 {
                if let Some(back) = directions.get_mut(&(seg.dst, seg.src)) {
                    back.stream.acked(seg.ack, &mut events);
                    let at = Place {
                        frame: frame.number,
                        time: frame.time,
                        src: seg.dst,
                        dst: seg.src,
                    };
                    self.stream_events(&mut directions, &at, &mut events, false)?;
                }
            }
        }
        // End of capture: give up on holes, then decode or report what is left.
        let last = capture
            .frames
            .last()
            .map(|f| (f.number, f.time))
            .unwrap_or_default();
        let mut keys: Vec<_> = directions.keys().copied().collect();
        keys.sort();
        for key in keys {
            if let Some(dir) = directions.get_mut(&key) {
                dir.stream.finish(&mut events);
            }
            let at = Place {
                frame: last.0,
                time: last.1,
                src: key.0,
                dst: key.1,
            };
            self.stream_events(&mut directions, &at, &mut events, true)?;
        }
        Ok(())
    }

    /// Feeds reassembly events into their direction's buffer and decodes what is whole.
    /// `last` is set at the end of the capture, when no more bytes will come.
    fn stream_events(
        &mut self,
        directions: &mut HashMap<(SocketAddr, SocketAddr), Direction>,
        at: &Place,
        events: &mut Vec<Event>,
        last: bool,
    ) -> anyhow::Result<()> {
        let key = (at.src, at.dst);
        for event in events.drain(..) {
            let Some(dir) = directions.get_mut(&key) else {
                break;
            };
            match event {
                Event::Data(bytes) => {
                    if dir.resync {
                        dir.boundaries.push(dir.buf_pos + dir.buf.len() as u64);
                    }
                    dir.buf.extend_from_slice(&bytes);
                    self.frame_direction(directions, at, false)?;
                }
                Event::Gap { at: gap_at, len } => {
                    let lost = if dir.buf.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "; the {} bytes before it (from stream offset {}) are dropped",
                            dir.buf.len(),
                            dir.buf_pos
                        )
                    };
                    let text = format!(
                        "{} -> {}: {len} bytes missing from the capture at stream offset {gap_at}{lost}; decoding resumes after the gap",
                        at.src, at.dst
                    );
                    dir.restart_at(gap_at + len, true);
                    self.damage(text);
                }
                Event::Restart => {
                    let dropped = dir.buf.len();
                    dir.restart_at(0, false);
                    if dropped > 0 {
                        self.warn(format_args!(
                            "{} -> {}: a new connection (SYN) on the same addresses; {dropped} bytes of an unfinished message dropped",
                            at.src, at.dst
                        ));
                    }
                }
                Event::MidStream => {
                    dir.resync = true;
                    self.warn(format_args!(
                        "{} -> {}: the capture starts in the middle of the connection (no SYN); looking for the first message",
                        at.src, at.dst
                    ));
                }
            }
        }
        if last {
            self.frame_direction(directions, at, true)?;
        }
        Ok(())
    }

    /// Cuts and decodes every whole message at the front of a direction's buffer.
    fn frame_direction(
        &mut self,
        directions: &mut HashMap<(SocketAddr, SocketAddr), Direction>,
        at: &Place,
        last: bool,
    ) -> anyhow::Result<()> {
        let key = (at.src, at.dst);
        loop {
            let Some(dir) = directions.get_mut(&key) else {
                return Ok(());
            };
            if dir.resync {
                let found = find_header(&dir.buf, dir.buf_pos, &dir.boundaries, last);
                let skip = match found {
                    Resync::At(i) | Resync::Wait(i) => i,
                    Resync::Nothing => dir.buf.len(),
                };
                dir.buf.drain(..skip);
                dir.buf_pos += skip as u64;
                dir.skipped += skip as u64;
                match found {
                    Resync::At(_) => {
                        let skipped = std::mem::take(&mut dir.skipped);
                        dir.resync = false;
                        dir.boundaries.clear();
                        if skipped > 0 {
                            let pos = dir.buf_pos;
                            self.warn(format_args!(
                                "{} -> {}: skipped {skipped} bytes up to stream offset {pos}, where the next message starts",
                                at.src, at.dst
                            ));
                        }
                    }
                    Resync::Wait(_) => return Ok(()),
                    Resync::Nothing => {
                        if last && dir.skipped > 0 {
                            let skipped = std::mem::take(&mut dir.skipped);
                            self.warn(format_args!(
                                "{} -> {}: no further message found; {skipped} bytes skipped",
                                at.src, at.dst
                            ));
                        }
                        return Ok(());
                    }
                }
                continue;
            }
            match frame_len(&dir.buf) {
                Ok(Some(n)) => {
                    let frame: Vec<u8> = dir.buf.drain(..n).collect();
                    let source = Source::Capture {
                        frame: at.frame,
                        time: at.time,
                        src: at.src,
                        dst: at.dst,
                        stream_offset: dir.buf_pos,
                    };
                    dir.buf_pos += n as u64;
                    self.message(&frame, source)?;
                }
                Ok(None) => {
                    if last && !dir.buf.is_empty() {
                        let (pos, have) = (dir.buf_pos, dir.buf.len());
                        let want = if have >= HEADER_LEN {
                            format!(" of {}", u16::from_be_bytes([dir.buf[2], dir.buf[3]]))
                        } else {
                            String::new()
                        };
                        self.damage(format_args!(
                            "{} -> {}: the capture ends inside a message at stream offset {pos} ({have}{want} bytes captured)",
                            at.src, at.dst
                        ));
                    }
                    return Ok(());
                }
                Err(e) => {
                    // Not an OpenFlow header: count it, then look for the next message.
                    // The bad header is no candidate (its length is under 8).
                    let pos = dir.buf_pos;
                    dir.resync = true;
                    dir.boundaries.clear();
                    self.stats.seen += 1;
                    self.stats.errors += 1;
                    let index = self.stats.seen;
                    self.say(format_args!(
                        "#{} frame {} {} -> {}: error at stream offset {pos}: {e}; looking for the next message",
                        index, at.frame, at.src, at.dst
                    ));
                }
            }
        }
    }
}

/// Where in the capture stream events happen.
struct Place {
    frame: usize,
    time: Timestamp,
    src: SocketAddr,
    dst: SocketAddr,
}

/// One direction of a connection: reassembly, and the bytes not yet framed.
#[derive(Debug, Default)]
struct Direction {
    stream: tcp::Stream,
    /// Reassembled bytes not yet cut into messages.
    buf: Vec<u8>,
    /// The stream offset of `buf[0]`.
    buf_pos: u64,
    /// After a gap, a mid-stream start or a bad header: look for the next message
    /// (see [`find_header`]) before framing again.
    resync: bool,
    /// While resyncing: the stream offsets where segments began.
    boundaries: Vec<u64>,
    /// While resyncing: bytes skipped so far, for the warning.
    skipped: u64,
}

impl Direction {
    /// Drops the unframed bytes and continues at stream offset `pos`.
    fn restart_at(&mut self, pos: u64, resync: bool) {
        self.buf.clear();
        self.buf_pos = pos;
        self.resync = resync;
        self.boundaries.clear();
        self.skipped = 0;
    }
}

/// What [`find_header`] found.
#[derive(Debug, PartialEq, Eq)]
enum Resync {
    /// A message starts at this index.
    At(usize),
    /// Nothing before this index can start a message; more bytes are needed to judge
    /// what follows.
    Wait(usize),
    /// No message starts anywhere in the buffer.
    Nothing,
}

/// Looks for the next message after a gap, a mid-stream start or a bad header.
///
/// A candidate is a position with a plausible header: version 1.0 or 1.3 (the versions
/// that can be decoded), a type that version defines, a length of at least 8. A
/// candidate whose whole message is present is taken if the message decodes. One whose
/// message is incomplete is waited for, unless a later segment (`boundaries`, stream
/// offsets) starts with a plausible header: senders usually start a write with a message,
/// so that is the better bet. At the end of the capture (`last`), incomplete candidates
/// are passed over. False positives remain possible; they are reported as such by the
/// messages that follow.
fn find_header(buf: &[u8], base: u64, boundaries: &[u64], last: bool) -> Resync {
    let plausible = |h: &[u8]| {
        h.len() >= HEADER_LEN
            && match h[0] {
                0x01 => h[1] <= 21,
                0x04 => h[1] <= 29,
                _ => false,
            }
            && u16::from_be_bytes([h[2], h[3]]) as usize >= HEADER_LEN
    };
    let later_boundary = |i: usize| {
        boundaries.iter().any(|&b| {
            let b = b.saturating_sub(base) as usize;
            b > i && b < buf.len() && plausible(&buf[b..])
        })
    };
    for i in 0..buf.len() {
        let rest = &buf[i..];
        if rest.len() < HEADER_LEN {
            return if last {
                Resync::Nothing
            } else {
                Resync::Wait(i)
            };
        }
        if !plausible(rest) {
            continue;
        }
        let n = u16::from_be_bytes([rest[2], rest[3]]) as usize;
        if n <= rest.len() {
            if Envelope::decode(&rest[..n]).is_ok() {
                return Resync::At(i);
            }
        } else if !last && !later_boundary(i) {
            return Resync::Wait(i);
        }
    }
    Resync::Nothing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_next_message() {
        let echo = [4, 2, 0, 9, 0, 0, 0, 1, 0xaa];
        assert_eq!(find_header(&echo, 0, &[], false), Resync::At(0));
        let mut b = vec![0xff, 0xee];
        b.extend_from_slice(&echo);
        assert_eq!(find_header(&b, 0, &[], false), Resync::At(2));
        assert_eq!(find_header(&[4, 0, 0], 0, &[], false), Resync::Wait(0));
        assert_eq!(find_header(&[4, 0, 0], 0, &[], true), Resync::Nothing);
        assert_eq!(find_header(&[0; 9], 0, &[], false), Resync::Wait(2));
        // A plausible but incomplete header is waited for ...
        let mut b = vec![4, 0, 0x40, 0, 0, 0, 0, 0, 9, 9];
        assert_eq!(find_header(&b, 100, &[100], false), Resync::Wait(0));
        // ... unless a later segment starts with one.
        b.extend_from_slice(&echo);
        assert_eq!(find_header(&b, 100, &[100, 110], false), Resync::At(10));
        assert_eq!(find_header(&b, 100, &[100], true), Resync::At(10));
    }
}
