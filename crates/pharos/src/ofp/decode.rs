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
                    eprintln!(
                        "#{} offset {at}: error: truncated message: the input ends {} bytes into it and {want}",
                        self.stats.seen,
                        rest.len()
                    );
                    break;
                }
                Err(e) => {
                    self.stats.seen += 1;
                    self.stats.errors += 1;
                    eprintln!(
                        "#{} offset {at}: error: {e}; cannot find the next message, {} bytes left undecoded",
                        self.stats.seen,
                        rest.len()
                    );
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
                eprintln!("#{index} {source}: error: {e}{where_}");
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
            eprintln!("#{index} {source}: error: {problem}");
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
        eprintln!("warning: {text}");
    }

    /// A pcap or pcapng capture: OpenFlow over TCP on `ports`, both directions.
    fn capture(&mut self, data: &[u8], ports: &[u16]) -> anyhow::Result<()> {
        let capture = pcap::read(data)?;
        for w in &capture.warnings {
            self.warn(w);
        }
        let mut directions: HashMap<(SocketAddr, SocketAddr), Direction> = HashMap::new();
        let mut events = Vec::new();
        for frame in &capture.frames {
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
            self.stream_events(&mut directions, &at, &mut events)?;
        }
        // End of capture: give up on holes, then report what is left in each stream.
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
            self.stream_events(&mut directions, &at, &mut events)?;
            if let Some(dir) = directions.get(&key) {
                if !dir.buf.is_empty() {
                    self.warn(format_args!(
                        "{} -> {}: the capture ends inside a message at stream offset {} ({} bytes of it captured)",
                        key.0,
                        key.1,
                        dir.buf_pos,
                        dir.buf.len()
                    ));
                }
            }
        }
        Ok(())
    }

    /// Feeds reassembly events into their direction's buffer and decodes what is whole.
    fn stream_events(
        &mut self,
        directions: &mut HashMap<(SocketAddr, SocketAddr), Direction>,
        at: &Place,
        events: &mut Vec<Event>,
    ) -> anyhow::Result<()> {
        let key = (at.src, at.dst);
        for event in events.drain(..) {
            let Some(dir) = directions.get_mut(&key) else {
                break;
            };
            match event {
                Event::Data(bytes) => dir.buf.extend_from_slice(&bytes),
                Event::Gap { at: gap_at, len } => {
                    let lost = if dir.buf.is_empty() {
                        String::new()
                    } else {
                        format!("; the message at stream offset {} is lost", dir.buf_pos)
                    };
                    let text = format!(
                        "{} -> {}: {len} bytes missing from the capture at stream offset {gap_at}{lost}; decoding resumes after the gap",
                        at.src, at.dst
                    );
                    dir.buf.clear();
                    dir.buf_pos = gap_at + len;
                    dir.resync = true;
                    self.warn(text);
                    continue;
                }
                Event::Restart => {
                    let text = format!(
                        "{} -> {}: a new connection (SYN) on the same addresses",
                        at.src, at.dst
                    );
                    let dropped = dir.buf.len();
                    dir.buf.clear();
                    dir.buf_pos = 0;
                    dir.resync = false;
                    if dropped > 0 {
                        self.warn(format_args!(
                            "{text}; {dropped} bytes of an unfinished message dropped"
                        ));
                    }
                    continue;
                }
                Event::MidStream => {
                    dir.resync = true;
                    self.warn(format_args!(
                        "{} -> {}: the capture starts in the middle of the connection (no SYN); looking for the first message",
                        at.src, at.dst
                    ));
                    continue;
                }
            }
            self.frame_direction(directions, at)?;
        }
        Ok(())
    }

    /// Cuts and decodes every whole message at the front of a direction's buffer.
    fn frame_direction(
        &mut self,
        directions: &mut HashMap<(SocketAddr, SocketAddr), Direction>,
        at: &Place,
    ) -> anyhow::Result<()> {
        let key = (at.src, at.dst);
        loop {
            let Some(dir) = directions.get_mut(&key) else {
                return Ok(());
            };
            if dir.resync {
                match find_header(&dir.buf) {
                    Some(0) => dir.resync = false,
                    Some(skip) => {
                        dir.buf.drain(..skip);
                        let from = dir.buf_pos;
                        dir.buf_pos += skip as u64;
                        dir.resync = false;
                        self.warn(format_args!(
                            "{} -> {}: skipped {skip} bytes at stream offset {from} to the next plausible OpenFlow header",
                            at.src, at.dst
                        ));
                    }
                    None => return Ok(()),
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
                Ok(None) => return Ok(()),
                Err(e) => {
                    // Not an OpenFlow header: count it, then look for the next one.
                    let pos = dir.buf_pos;
                    dir.buf.drain(..1);
                    dir.buf_pos += 1;
                    dir.resync = true;
                    self.stats.seen += 1;
                    self.stats.errors += 1;
                    eprintln!(
                        "#{} frame {} {} -> {}: error at stream offset {pos}: {e}; looking for the next message",
                        self.stats.seen, at.frame, at.src, at.dst
                    );
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
    /// After a gap or a bad header: look for a plausible header before framing again.
    resync: bool,
}

/// The first position in `buf` where a plausible OpenFlow header starts: a version byte
/// of 1.0 to 1.5, a type below 40 and a length of at least 8. `None` when more bytes are
/// needed to tell.
fn find_header(buf: &[u8]) -> Option<usize> {
    if buf.len() < HEADER_LEN {
        return None;
    }
    (0..=buf.len() - HEADER_LEN).find(|&i| {
        let h = &buf[i..i + HEADER_LEN];
        (1..=6).contains(&h[0]) && h[1] < 40 && u16::from_be_bytes([h[2], h[3]]) >= 8
    })
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
    fn finds_plausible_headers() {
        assert_eq!(find_header(&[4, 0, 0, 8, 0, 0, 0, 1]), Some(0));
        assert_eq!(find_header(&[0xff, 0xee, 4, 0, 0, 8, 0, 0, 0, 1]), Some(2));
        assert_eq!(find_header(&[4, 0, 0]), None);
        assert_eq!(find_header(&[0; 8]), None);
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
