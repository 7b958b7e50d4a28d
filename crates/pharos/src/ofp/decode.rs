//! `pharos ofp decode`: framing, decoding, the re-encode check, counting.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::process::ExitCode;

use anyhow::Context;
use openflow::{frame_len, Envelope, HEADER_LEN};
use serde_json::{json, Value};

use super::input::{self, Kind};
use super::net::{self, Parsed};
use super::pcap::{self, Timestamp};
use super::tcp::{self, Event};
use super::{print, DecodeArgs, DEFAULT_PORTS};

pub fn run(args: &DecodeArgs) -> anyhow::Result<ExitCode> {
    let data = input::read_all(&args.input)?;
    let stdout = io::stdout();
    let mut d = Decoder {
        out: io::BufWriter::new(stdout.lock()),
        json: args.json,
        stats: Stats::default(),
    };
    if args.hex {
        let text = std::str::from_utf8(&data).map_err(|e| {
            anyhow::anyhow!(
                "invalid hex: the input is not text (byte {} is not UTF-8)",
                e.valid_up_to()
            )
        })?;
        let bytes = input::parse_hex(text)?;
        d.raw_stream(&bytes)?;
    } else {
        match input::detect(&data) {
            Kind::Capture => {
                let mut ports: Vec<u16> = DEFAULT_PORTS.to_vec();
                ports.extend(&args.ports);
                d.capture(&data, &ports)?;
            }
            Kind::Raw => d.raw_stream(&data)?,
        }
    }
    d.out.flush().context("writing stdout")?;
    let s = &d.stats;
    let mut summary = format!(
        "{} message{} decoded, {} with opaque parts, {} error{}",
        s.decoded,
        plural(s.decoded),
        s.opaque,
        s.errors,
        plural(s.errors)
    );
    if s.warnings > 0 {
        summary += &format!(", {} warning{}", s.warnings, plural(s.warnings));
    }
    eprintln!("{summary}");
    Ok(if s.errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[derive(Debug, Default)]
struct Stats {
    /// Messages that decoded.
    decoded: usize,
    /// Decoded messages with opaque parts.
    opaque: usize,
    /// Messages that failed to decode or to re-encode identically, and unframeable input.
    errors: usize,
    /// Problems of the capture rather than of the messages (gaps, truncation).
    warnings: usize,
    /// Messages seen, decoded or not: the `#N` of the next one is this plus one.
    seen: usize,
}

/// Where a message came from.
#[derive(Debug, Clone)]
enum Source {
    /// A byte offset in a file of raw messages (or in the bytes of a hex dump).
    File { offset: usize },
    /// A TCP stream in a capture; `frame` is the frame that completed the message and
    /// `stream_offset` the message's first byte in its direction of the connection.
    Capture {
        frame: usize,
        time: Timestamp,
        src: SocketAddr,
        dst: SocketAddr,
        stream_offset: u64,
    },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::File { offset } => write!(f, "offset {offset}"),
            Source::Capture {
                frame,
                time,
                src,
                dst,
                ..
            } => {
                write!(f, "frame {frame} {time} {src} -> {dst}")
            }
        }
    }
}

impl Source {
    fn to_json(&self) -> Value {
        match self {
            Source::File { offset } => json!({ "offset": offset }),
            Source::Capture {
                frame,
                time,
                src,
                dst,
                stream_offset,
            } => json!({
                "frame": frame,
                "timestamp": time.to_string(),
                "src": src.to_string(),
                "dst": dst.to_string(),
                "stream_offset": stream_offset,
            }),
        }
    }

    /// Where byte `at` of the message is, for error messages.
    fn locate(&self, at: usize) -> String {
        match self {
            Source::File { offset } => format!("byte {} of the input", offset + at),
            Source::Capture {
                stream_offset,
                src,
                dst,
                ..
            } => {
                format!(
                    "stream offset {} of {src} -> {dst}",
                    stream_offset + at as u64
                )
            }
        }
    }
}

struct Decoder<W: Write> {
    out: W,
    json: bool,
    stats: Stats,
}

impl<W: Write> Decoder<W> {
    /// Raw messages back to back. Framing stops at a header whose length is under 8,
    /// since nothing after it can be found.
    fn raw_stream(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        if bytes.is_empty() {
            self.warn("the input is empty");
        }
        let mut at = 0;
        while at < bytes.len() {
            let rest = &bytes[at..];
            match frame_len(rest) {
                Ok(Some(n)) => {
                    self.message(&rest[..n], Source::File { offset: at })?;
                    at += n;
                }
                Ok(None) => {
                    self.stats.seen += 1;
                    self.stats.errors += 1;
                    let want = if rest.len() < HEADER_LEN {
                        format!("a header needs {HEADER_LEN} bytes")
                    } else {
                        format!(
                            "its header says {} bytes",
                            u16::from_be_bytes([rest[2], rest[3]])
                        )
                    };
                    let index = self.stats.seen;
                    self.say(format_args!(
                        "#{} offset {at}: error: truncated message: the input ends {} bytes into it and {want}{}",
                        index,
                        rest.len(),
                        not_openflow_hint(bytes, at)
                    ));
                    break;
                }
                Err(e) => {
                    self.stats.seen += 1;
                    self.stats.errors += 1;
                    let index = self.stats.seen;
                    self.say(format_args!(
                        "#{} offset {at}: error: {e}; cannot find the next message, {} bytes left undecoded{}",
                        index,
                        rest.len(),
                        not_openflow_hint(bytes, at)
                    ));
                    break;
                }
            }
        }
        Ok(())
    }

    /// Decodes, re-encodes and prints one framed message.
    fn message(&mut self, frame: &[u8], source: Source) -> anyhow::Result<()> {
        self.stats.seen += 1;
        let index = self.stats.seen;
        let env = match Envelope::decode(frame) {
            Ok(env) => env,
            Err(e) => {
                self.stats.errors += 1;
                let where_ = e
                    .offset()
                    .map(|o| format!(" (at {})", source.locate(o)))
                    .unwrap_or_default();
                self.say(format_args!("#{index} {source}: error: {e}{where_}"));
                return Ok(());
            }
        };
        self.stats.decoded += 1;
        let opaque = env.message.opaque_parts();
        if !opaque.is_empty() {
            self.stats.opaque += 1;
        }
        let reencode = reencode_problem(&env, frame);
        if let Some(problem) = &reencode {
            self.stats.errors += 1;
            self.say(format_args!("#{index} {source}: error: {problem}"));
        }
        if self.json {
            let mut extra = vec![("source", source.to_json())];
            let mut notes = serde_json::Map::new();
            if !opaque.is_empty() {
                notes.insert("opaque".into(), json!(opaque));
            }
            if let Some(p) = &reencode {
                notes.insert("reencode".into(), json!(p));
            }
            if !notes.is_empty() {
                extra.push(("notes", Value::Object(notes)));
            }
            let line = print::json_line(&env, &extra).context("rendering JSON")?;
            writeln!(self.out, "{line}").context("writing stdout")?;
        } else {
            writeln!(
                self.out,
                "#{index} {source}: OF{} {} xid=0x{:x} len={}",
                env.message.version(),
                env.message.type_name(),
                env.xid,
                frame.len()
            )
            .context("writing stdout")?;
            self.out
                .write_all(print::fields(&env).as_bytes())
                .context("writing stdout")?;
            if !opaque.is_empty() {
                writeln!(self.out, "  ! opaque: {}", opaque.join("; "))
                    .context("writing stdout")?;
            }
            if let Some(p) = &reencode {
                writeln!(self.out, "  ! {p}").context("writing stdout")?;
            }
        }
        Ok(())
    }

    fn warn(&mut self, text: impl fmt::Display) {
        self.stats.warnings += 1;
        self.say(format_args!("warning: {text}"));
    }

    /// Writes a line to stderr, after what stdout holds so far, so that a terminal
    /// shows errors next to the messages around them.
    fn say(&mut self, text: fmt::Arguments<'_>) {
        let _ = self.out.flush();
        eprintln!("{text}");
    }

    /// A pcap or pcapng capture: OpenFlow over TCP on `ports`, both directions.
    fn capture(&mut self, data: &[u8], ports: &[u16]) -> anyhow::Result<()> {
        let capture = pcap::read(data)?;
        for w in &capture.warnings {
            self.warn(w);
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
                self.warn(format_args!(
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
                    self.warn(text);
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
                        self.warn(format_args!(
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

/// When framing raw input fails: a hint if the input does not look like OpenFlow at all.
fn not_openflow_hint(input: &[u8], at: usize) -> String {
    let looks_like_hex = !input.is_empty()
        && input
            .iter()
            .all(|c| c.is_ascii_hexdigit() || c.is_ascii_whitespace() || b":,|*.x".contains(c));
    if looks_like_hex {
        "\n  (the input looks like a hex dump: use --hex)".to_string()
    } else if input.get(at).is_some_and(|v| !(1..=6).contains(v)) {
        format!(
            "\n  (byte {:#04x} at offset {at} is not an OpenFlow version: the input is neither raw OpenFlow messages nor a pcap or pcapng capture)",
            input[at]
        )
    } else {
        String::new()
    }
}

/// Re-encodes `env` and says how the result differs from `frame`, if it does.
fn reencode_problem(env: &Envelope, frame: &[u8]) -> Option<String> {
    let mut again = Vec::new();
    match env.encode(&mut again) {
        Err(e) => Some(format!("re-encoding failed: {e}")),
        Ok(_) if again == frame => None,
        Ok(_) => {
            let at = again
                .iter()
                .zip(frame)
                .position(|(a, b)| a != b)
                .unwrap_or(again.len().min(frame.len()));
            Some(format!(
                "re-encoding differs from the input: {} bytes instead of {}, first difference at byte {at} ({} instead of {})",
                again.len(),
                frame.len(),
                again.get(at).map_or("end".to_string(), |b| format!("{b:#04x}")),
                frame.get(at).map_or("end".to_string(), |b| format!("{b:#04x}")),
            ))
        }
    }
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

    fn decoder(json: bool) -> Decoder<Vec<u8>> {
        Decoder {
            out: Vec::new(),
            json,
            stats: Stats::default(),
        }
    }

    /// Every truncation and many one-byte corruptions of real captures and of a raw
    /// stream: no panic, whatever the damage (the decoder's own fuzz-style loop).
    #[test]
    fn damaged_inputs_never_panic() {
        let captures: [&[u8]; 2] = [
            include_bytes!("../../tests/fixtures/session-lo.pcap"),
            include_bytes!("../../tests/fixtures/session-reordered.pcapng"),
        ];
        for file in captures {
            for cut in (0..file.len()).step_by(7) {
                let _ = decoder(false).capture(&file[..cut], &DEFAULT_PORTS);
            }
            for at in (0..file.len()).step_by(5) {
                let mut bad = file.to_vec();
                bad[at] ^= 0x5a;
                let _ = decoder(at % 2 == 0).capture(&bad, &DEFAULT_PORTS);
            }
        }
        let raw = include_bytes!("../../tests/fixtures/several.bin");
        for cut in 0..raw.len() {
            decoder(false).raw_stream(&raw[..cut]).unwrap();
        }
        for at in 0..raw.len() {
            for x in [0x01, 0x80, 0xff] {
                let mut bad = raw.to_vec();
                bad[at] ^= x;
                decoder(true).raw_stream(&bad).unwrap();
            }
        }
    }

    #[test]
    fn reencode_check_names_the_first_difference() {
        let env = Envelope::decode(&[4, 2, 0, 9, 0, 0, 0, 1, 0xaa]).unwrap();
        assert_eq!(
            reencode_problem(&env, &[4, 2, 0, 9, 0, 0, 0, 1, 0xaa]),
            None
        );
        let p = reencode_problem(&env, &[4, 2, 0, 9, 0, 0, 0, 1, 0xab]).unwrap();
        assert!(p.contains("byte 8"), "{p}");
    }
}
