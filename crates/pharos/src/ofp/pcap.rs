//! Capture files into timestamped link-layer frames, through pcap-parser.
//!
//! Both formats are read from memory. Legacy pcap is parsed frame by frame in the byte
//! order its magic says (pcap-parser's `LegacyPcapSlice` assumes little-endian frames);
//! pcapng is read block by block, keeping each section's interfaces for their link types
//! and timestamp resolutions. A capture cut short (a killed tcpdump) keeps the frames
//! before the cut and says so.

use std::fmt;

use anyhow::bail;
use pcap_parser::nom;
use pcap_parser::pcap::{
    parse_pcap_frame, parse_pcap_frame_be, parse_pcap_frame_modified, parse_pcap_header,
};
use pcap_parser::pcapng::{Block, PcapNGSlice};
use pcap_parser::PcapError;

/// A capture timestamp: seconds since the epoch and nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp {
    pub secs: i64,
    pub nanos: u32,
}

impl fmt::Display for Timestamp {
    /// `seconds.microseconds`, like `tcpdump -tt`; nanoseconds when they are not whole
    /// microseconds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nanos % 1000 == 0 {
            write!(f, "{}.{:06}", self.secs, self.nanos / 1000)
        } else {
            write!(f, "{}.{:09}", self.secs, self.nanos)
        }
    }
}

/// One captured link-layer frame.
#[derive(Debug)]
pub struct Frame<'a> {
    /// 1-based, as Wireshark numbers frames.
    pub number: usize,
    pub time: Timestamp,
    /// The LINKTYPE_ value of the interface it was captured on.
    pub linktype: i32,
    pub data: &'a [u8],
    /// The frame's length on the wire; more than `data.len()` when the snap length cut it.
    pub orig_len: usize,
}

/// The frames of a capture, and any warnings about the file itself.
pub struct Capture<'a> {
    pub frames: Vec<Frame<'a>>,
    pub warnings: Vec<String>,
}

/// Reads a pcap or pcapng file held in memory.
pub fn read(data: &[u8]) -> anyhow::Result<Capture<'_>> {
    if data.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]) {
        read_pcapng(data)
    } else {
        read_pcap(data)
    }
}

type FrameParser =
    fn(&[u8]) -> nom::IResult<&[u8], pcap_parser::LegacyPcapBlock<'_>, PcapError<&[u8]>>;

fn read_pcap(data: &[u8]) -> anyhow::Result<Capture<'_>> {
    let (mut rest, header) = match parse_pcap_header(data) {
        Ok(v) => v,
        Err(e) => bail!("not a readable pcap file: {}", nom_error(&e)),
    };
    let parse: FrameParser = if header.is_modified_format() {
        parse_pcap_frame_modified
    } else if header.is_bigendian() {
        parse_pcap_frame_be
    } else {
        parse_pcap_frame
    };
    let nanos_per_unit = if header.is_nanosecond_precision() {
        1
    } else {
        1000
    };
    let mut capture = Capture {
        frames: Vec::new(),
        warnings: Vec::new(),
    };
    while !rest.is_empty() {
        match parse(rest) {
            Ok((next, block)) => {
                let number = capture.frames.len() + 1;
                let frac = u64::from(block.ts_usec) * nanos_per_unit;
                capture.frames.push(Frame {
                    number,
                    time: Timestamp {
                        secs: i64::from(block.ts_sec) + (frac / 1_000_000_000) as i64,
                        nanos: (frac % 1_000_000_000) as u32,
                    },
                    linktype: header.network.0,
                    data: block.data,
                    orig_len: block.origlen as usize,
                });
                rest = next;
            }
            Err(e) => {
                capture.warnings.push(format!(
                    "capture file ends inside frame {} ({}); {} bytes ignored",
                    capture.frames.len() + 1,
                    nom_error(&e),
                    rest.len()
                ));
                break;
            }
        }
    }
    Ok(capture)
}

/// What a pcapng reader needs to know about an interface.
struct Interface {
    linktype: i32,
    /// Timestamp units per second (`if_tsresol`, default microseconds).
    units_per_sec: u64,
    /// Seconds added to every timestamp (`if_tsoffset`).
    offset_secs: i64,
}

fn read_pcapng(data: &[u8]) -> anyhow::Result<Capture<'_>> {
    let blocks = match PcapNGSlice::from_slice(data) {
        Ok(b) => b,
        Err(e) => bail!("not a readable pcapng file: {}", nom_error(&e)),
    };
    let mut capture = Capture {
        frames: Vec::new(),
        warnings: Vec::new(),
    };
    let mut interfaces: Vec<Interface> = Vec::new();
    for block in blocks {
        let block = match block {
            Ok(pcap_parser::PcapBlockOwned::NG(b)) => b,
            Ok(_) => continue,
            Err(e) => {
                capture.warnings.push(format!(
                    "capture file ends in a damaged or incomplete block after frame {} ({})",
                    capture.frames.len(),
                    nom_error(&e)
                ));
                break;
            }
        };
        let number = capture.frames.len() + 1;
        match block {
            // A new section starts a new list of interfaces.
            Block::SectionHeader(_) => interfaces.clear(),
            Block::InterfaceDescription(idb) => interfaces.push(Interface {
                linktype: idb.linktype.0,
                units_per_sec: idb.ts_resolution().unwrap_or(1_000_000),
                offset_secs: idb.ts_offset(),
            }),
            Block::EnhancedPacket(epb) => {
                let Some(iface) = interfaces.get(epb.if_id as usize) else {
                    capture.warnings.push(format!(
                        "frame {number}: interface {} was never described; frame skipped",
                        epb.if_id
                    ));
                    continue;
                };
                let ts = (u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low);
                let units = iface.units_per_sec.max(1);
                let nanos = ((ts % units) as u128 * 1_000_000_000 / units as u128) as u32;
                capture.frames.push(Frame {
                    number,
                    time: Timestamp {
                        secs: (ts / units) as i64 + iface.offset_secs,
                        nanos,
                    },
                    linktype: iface.linktype,
                    data: &epb.data[..(epb.caplen as usize).min(epb.data.len())],
                    orig_len: epb.origlen as usize,
                });
            }
            Block::SimplePacket(spb) => {
                // Simple packet blocks belong to the first interface and have no time.
                let Some(iface) = interfaces.first() else {
                    capture.warnings.push(format!(
                        "frame {number}: no interface was described; frame skipped"
                    ));
                    continue;
                };
                capture.frames.push(Frame {
                    number,
                    time: Timestamp::default(),
                    linktype: iface.linktype,
                    data: &spb.data[..(spb.origlen as usize).min(spb.data.len())],
                    orig_len: spb.origlen as usize,
                });
            }
            _ => {}
        }
    }
    Ok(capture)
}

/// A short description of a pcap-parser error, without dumping the remaining input.
fn nom_error(e: &nom::Err<PcapError<&[u8]>>) -> String {
    match e {
        nom::Err::Incomplete(_) => "truncated".to_string(),
        nom::Err::Error(e) | nom::Err::Failure(e) => match e {
            PcapError::HeaderNotRecognized => "header not recognized".to_string(),
            PcapError::Incomplete(_) | PcapError::UnexpectedEof => "truncated".to_string(),
            PcapError::NomError(_, kind) | PcapError::OwnedNomError(_, kind) => {
                format!("malformed ({kind:?})")
            }
            other => format!("{other:?}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pcap file with one frame, in the given byte order and resolution.
    fn pcap(big_endian: bool, nano: bool, frame: &[u8]) -> Vec<u8> {
        let magic: u32 = if nano { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
        let w32 = |v: u32| {
            if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let w16 = |v: u16| {
            if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let mut f = Vec::new();
        f.extend_from_slice(&w32(magic));
        f.extend_from_slice(&w16(2));
        f.extend_from_slice(&w16(4));
        f.extend_from_slice(&w32(0));
        f.extend_from_slice(&w32(0));
        f.extend_from_slice(&w32(65535));
        f.extend_from_slice(&w32(101));
        f.extend_from_slice(&w32(1_700_000_000));
        f.extend_from_slice(&w32(if nano { 123_456_789 } else { 123_456 }));
        f.extend_from_slice(&w32(frame.len() as u32));
        f.extend_from_slice(&w32(frame.len() as u32));
        f.extend_from_slice(frame);
        f
    }

    #[test]
    fn all_four_pcap_magics() {
        for big in [false, true] {
            for nano in [false, true] {
                let file = pcap(big, nano, &[0x45, 0, 0, 20]);
                assert_eq!(
                    crate::ofp::input::detect(&file),
                    crate::ofp::input::Kind::Capture
                );
                let c = read(&file).unwrap();
                assert!(c.warnings.is_empty());
                assert_eq!(c.frames.len(), 1);
                let f = &c.frames[0];
                assert_eq!(
                    (f.linktype, f.data, f.orig_len),
                    (101, &[0x45, 0, 0, 20][..], 4)
                );
                let want = if nano { 123_456_789 } else { 123_456_000 };
                assert_eq!(
                    f.time,
                    Timestamp {
                        secs: 1_700_000_000,
                        nanos: want
                    }
                );
            }
        }
    }

    #[test]
    fn truncated_pcap_keeps_earlier_frames() {
        let mut file = pcap(false, false, &[1, 2, 3, 4]);
        let one = file.len();
        file.extend_from_within(24..one);
        file.truncate(file.len() - 2);
        let c = read(&file).unwrap();
        assert_eq!(c.frames.len(), 1);
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    }

    #[test]
    fn timestamps_print_like_tcpdump() {
        let t = Timestamp {
            secs: 5,
            nanos: 1_000,
        };
        assert_eq!(t.to_string(), "5.000001");
        let t = Timestamp { secs: 5, nanos: 1 };
        assert_eq!(t.to_string(), "5.000000001");
    }
}
