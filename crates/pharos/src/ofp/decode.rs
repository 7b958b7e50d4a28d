//! `pharos ofp decode`: framing raw input, decoding, the re-encode check, printing,
//! counting. Captures are fed in by `capture.rs`.

use std::fmt;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::process::ExitCode;

use anyhow::Context;
use openflow::{frame_len, Envelope, HEADER_LEN};
use serde_json::{json, Value};

use super::foreign::Foreign;
use super::input::{self, Kind};
use super::pcap::Timestamp;
use super::{names, print, DecodeArgs, DEFAULT_PORTS};

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
    eprintln!("{}", s.summary());
    Ok(if s.errors > 0 || s.damaged > 0 {
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
pub(super) struct Stats {
    /// Messages that decoded.
    pub(super) decoded: usize,
    /// Decoded messages with opaque parts.
    pub(super) opaque: usize,
    /// Messages that failed to decode or to re-encode identically, and unframeable input.
    pub(super) errors: usize,
    /// Damage to the input rather than to a message: a capture file cut short or
    /// followed by garbage, bytes missing from a stream (a lost segment, a frame cut by
    /// the snap length), a capture ending inside a message. Any makes the exit status 1.
    pub(super) damaged: usize,
    /// Things worth saying that lose nothing (a capture starting mid-connection, frames
    /// of other link types skipped).
    pub(super) warnings: usize,
    /// Messages seen, decoded or not: the `#N` of the next one is this plus one.
    pub(super) seen: usize,
}

impl Stats {
    /// The last line: counts, then the verdict the exit status gives.
    fn summary(&self) -> String {
        let mut line = format!(
            "{} message{} decoded, {} with opaque parts, {} error{}",
            self.decoded,
            plural(self.decoded),
            self.opaque,
            self.errors,
            plural(self.errors)
        );
        if self.damaged > 0 {
            line += &format!(", {} input problem{}", self.damaged, plural(self.damaged));
        }
        if self.warnings > 0 {
            line += &format!(", {} warning{}", self.warnings, plural(self.warnings));
        }
        let verdict = match (self.errors > 0, self.damaged > 0) {
            (false, false) => "everything decoded".to_string(),
            (true, false) => format!(
                "FAILED: {} message{} did not decode (exit status 1)",
                self.errors,
                plural(self.errors)
            ),
            (false, true) => "FAILED: the input is damaged (exit status 1)".to_string(),
            (true, true) => format!(
                "FAILED: {} message{} did not decode and the input is damaged (exit status 1)",
                self.errors,
                plural(self.errors)
            ),
        };
        format!("{line}: {verdict}")
    }
}

/// Where a message came from.
#[derive(Debug, Clone)]
pub(super) enum Source {
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

/// A decoded message, ready to print.
struct Shown {
    /// The header's version byte.
    version: u8,
    type_name: &'static str,
    xid: u32,
    /// Its length in bytes.
    len: usize,
    /// Its envelope as JSON (what `--json` prints, and what the text is made from).
    value: Value,
}

/// Decodes and prints messages, and keeps count.
pub(super) struct Decoder<W: Write> {
    /// Where messages are printed (stdout, or a buffer in tests).
    pub(super) out: W,
    /// Print JSON lines instead of text.
    pub(super) json: bool,
    pub(super) stats: Stats,
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
                    // The input ends inside a message: cut short, if it was OpenFlow at
                    // all (else it is a message that cannot be decoded).
                    self.stats.seen += 1;
                    if (1..=6).contains(&rest[0]) {
                        self.stats.damaged += 1;
                    } else {
                        self.stats.errors += 1;
                    }
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
    pub(super) fn message(&mut self, frame: &[u8], source: Source) -> anyhow::Result<()> {
        self.stats.seen += 1;
        let index = self.stats.seen;
        let env = match Envelope::decode(frame) {
            Ok(env) => env,
            Err(e) => {
                if let Some(f) = Foreign::decode(frame) {
                    // A HELLO or ERROR of another version (a version negotiation that
                    // failed, as it should): decoded, not an error.
                    self.stats.decoded += 1;
                    let value = serde_json::to_value(&f).context("rendering JSON")?;
                    let shown = Shown {
                        version: f.wire(),
                        type_name: f.type_name(),
                        xid: f.xid,
                        len: frame.len(),
                        value,
                    };
                    return self.print(index, &source, shown, &[], None);
                }
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
        let shown = Shown {
            version: env.message.version().wire(),
            type_name: env.message.type_name(),
            xid: env.xid,
            len: frame.len(),
            value: serde_json::to_value(&env).context("rendering JSON")?,
        };
        self.print(index, &source, shown, &opaque, reencode.as_deref())
    }

    /// Prints a decoded message as text or as a JSON line.
    fn print(
        &mut self,
        index: usize,
        source: &Source,
        shown: Shown,
        opaque: &[String],
        reencode: Option<&str>,
    ) -> anyhow::Result<()> {
        if self.json {
            let mut extra = vec![("source", source.to_json())];
            let mut notes = serde_json::Map::new();
            if !opaque.is_empty() {
                notes.insert("opaque".into(), json!(opaque));
            }
            if let Some(p) = reencode {
                notes.insert("reencode".into(), json!(p));
            }
            if !notes.is_empty() {
                extra.push(("notes", Value::Object(notes)));
            }
            let line = print::json_line(shown.value, &extra).context("rendering JSON")?;
            writeln!(self.out, "{line}").context("writing stdout")?;
        } else {
            writeln!(
                self.out,
                "#{index} {source}: OF{} {} xid=0x{:x} len={}",
                names::version_name(u64::from(shown.version)),
                shown.type_name,
                shown.xid,
                shown.len
            )
            .context("writing stdout")?;
            let fields = print::fields(shown.value, shown.version, shown.type_name);
            self.out
                .write_all(fields.as_bytes())
                .context("writing stdout")?;
            if !opaque.is_empty() {
                writeln!(self.out, "  ! opaque: {}", opaque.join("; "))
                    .context("writing stdout")?;
            }
            if let Some(p) = reencode {
                writeln!(self.out, "  ! {p}").context("writing stdout")?;
            }
        }
        Ok(())
    }

    /// Reports damage to the input (see [`Stats::damaged`]).
    pub(super) fn damage(&mut self, text: impl fmt::Display) {
        self.stats.damaged += 1;
        self.say(format_args!("error: damaged input: {text}"));
    }

    pub(super) fn warn(&mut self, text: impl fmt::Display) {
        self.stats.warnings += 1;
        self.say(format_args!("warning: {text}"));
    }

    /// Writes a line to stderr, after what stdout holds so far, so that a terminal
    /// shows errors next to the messages around them.
    pub(super) fn say(&mut self, text: fmt::Arguments<'_>) {
        let _ = self.out.flush();
        eprintln!("{text}");
    }
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
            let lengths = if again.len() == frame.len() {
                format!("same length ({} bytes)", frame.len())
            } else {
                format!("{} bytes where the input has {}", again.len(), frame.len())
            };
            let byte = |b: Option<&u8>| b.map_or("the end".to_string(), |b| format!("{b:#04x}"));
            Some(format!(
                "re-encoding differs from the input: {lengths}, first difference at byte {at} ({} where the input has {})",
                byte(again.get(at)),
                byte(frame.get(at)),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // The lengths are equal: said so, not "9 bytes instead of 9".
        assert!(p.contains("same length (9 bytes)"), "{p}");
        assert!(p.contains("(0xaa where the input has 0xab)"), "{p}");
        let p = reencode_problem(&env, &[4, 2, 0, 9, 0, 0, 0, 1, 0xaa, 0]).unwrap();
        assert!(p.contains("9 bytes where the input has 10"), "{p}");
        assert!(p.contains("(the end where the input has 0x00)"), "{p}");
    }
}
