//! `pharos ofp`: decode and encode OpenFlow messages, like `ovs-ofctl ofp-print`.
//!
//! ```text
//! mod.rs     the command line (clap) and its help texts
//! input.rs   reading a file or stdin; telling captures, hex dumps and raw bytes apart;
//!            the hex dump parser
//! pcap.rs    pcap and pcapng files (through pcap-parser) into timestamped link frames
//! net.rs     link layer, IPv4/IPv6 and TCP headers: frames into TCP segments
//! tcp.rs     TCP stream reassembly per direction
//! decode.rs  framing raw input, decoding, the re-encode check, counting, exit status
//! capture.rs captures: per-direction streams into messages, resync after gaps
//! print.rs   the text and JSON renderings of a decoded message
//! names.rs   text only: reserved ports, buffer ids, EtherTypes, flags and bitmaps by name
//! frame.rs   text only: the frame in a PACKET_IN or PACKET_OUT, in ovs-ofctl's flow syntax
//! foreign.rs HELLO and ERROR of versions the codec does not speak (version negotiation)
//! encode.rs  JSON envelopes back to bytes
//! ```
//!
//! Output discipline: decoded messages go to stdout, everything else (errors, warnings,
//! the summary) to stderr, so `pharos ofp decode --json F | pharos ofp encode` works
//! even on inputs with errors.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

mod capture;
mod decode;
mod encode;
mod foreign;
mod frame;
mod input;
mod names;
mod net;
mod pcap;
mod print;
mod tcp;

/// The default OpenFlow TCP ports: IANA's 6653 and the legacy 6633.
pub const DEFAULT_PORTS: [u16; 2] = [6653, 6633];

#[derive(Debug, clap::Args)]
#[command(
    about = "Decode and encode OpenFlow 1.0 and 1.3 messages (like `ovs-ofctl ofp-print`)",
    long_about = OFP_LONG_ABOUT
)]
pub struct Args {
    #[command(subcommand)]
    command: OfpCommand,
}

#[derive(Debug, Subcommand)]
enum OfpCommand {
    Decode(DecodeArgs),
    Encode(EncodeArgs),
}

#[derive(Debug, clap::Args)]
#[command(
    about = "Print the OpenFlow messages in a file, a hex dump or a pcap/pcapng capture",
    long_about = DECODE_LONG_ABOUT
)]
pub struct DecodeArgs {
    /// The input file, or `-` for stdin.
    #[arg(value_name = "FILE|-")]
    pub input: String,
    /// Print one JSON object per line (an envelope plus a "source" object), the input
    /// of `pharos ofp encode`.
    #[arg(long)]
    pub json: bool,
    /// The input is a hex dump (plain hex, xxd, `od -A x -t x1` or `hexdump -C`).
    #[arg(long)]
    pub hex: bool,
    /// Also treat this TCP port as OpenFlow in captures (repeatable, or a comma-separated
    /// list; 6653 and 6633 always are).
    #[arg(long = "port", value_name = "N", value_delimiter = ',')]
    pub ports: Vec<u16>,
}

#[derive(Debug, clap::Args)]
#[command(
    about = "Turn JSON envelopes (as printed by `decode --json`) back into OpenFlow bytes",
    long_about = ENCODE_LONG_ABOUT
)]
pub struct EncodeArgs {
    /// The JSON input, or `-` (the default) for stdin.
    #[arg(value_name = "FILE.json|-", default_value = "-")]
    pub input: String,
    /// Write hex (one message per line) instead of raw bytes.
    #[arg(long)]
    pub hex: bool,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        OfpCommand::Decode(a) => decode::run(&a),
        OfpCommand::Encode(a) => encode::run(&a),
    }
}

const OFP_LONG_ABOUT: &str = "\
Decode and encode OpenFlow 1.0 (wire version 0x01) and 1.3 (0x04) messages.

`decode` prints the messages in a file of raw messages, a hex dump, or a pcap/pcapng
capture; `encode` turns the JSON that `decode --json` prints back into bytes, so that

    pharos ofp decode --json flow_mod.bin | pharos ofp encode > again.bin

reproduces flow_mod.bin byte for byte. Edit the JSON in between to craft messages.";

const DECODE_LONG_ABOUT: &str = "\
Print the OpenFlow messages in FILE (`-` reads stdin).

INPUT FORMATS (detected from the first bytes, or chosen with --hex):
  capture    a pcap file (any of the four magics: microsecond or nanosecond, either
             byte order) or a pcapng file. Link types: Ethernet (with 802.1Q/802.1ad VLAN
             tags), Linux cooked (SLL and SLL2), raw IP, BSD loopback/null. IPv4 and IPv6.
             TCP on ports 6653 and 6633 (add more with --port) is taken as OpenFlow; each
             direction of each connection is reassembled by sequence number (out-of-order
             segments are buffered, retransmissions and overlaps dropped). Bytes missing
             from the capture (acknowledged by the peer but never seen, cut by the snap
             length, or still missing at the end) are reported as a gap; that stream
             resumes at the first message found after it (a header of version 1.0 or 1.3
             whose message decodes).
  hex dump   with --hex. Either plain hex: hex digits with any whitespace, optional `0x`
             prefixes, and `,` or `:` separators; `#` starts a comment to the end of the
             line. Or a dump with an offset column: when the first data line starts with an
             offset of 0 (`00000000:` from xxd, `000000` from `od -A x -t x1`, `0000000`
             from `od -t x1`, `00000000` from `hexdump -C`) or with any `XXXXXXXX:` (xxd
             -s), every line starts with its offset, which must match the number of bytes
             so far (offsets in hex, or octal/decimal for od's -A o/-A d); the ASCII
             column is dropped (after `|` for hexdump -C, after the first two spaces
             following the hex for xxd, after `>` for od -t x1z); `*` lines (repeated
             data) are expanded.
  raw        anything else: OpenFlow messages back to back, as sent on the wire.

OUTPUT:
  Text (the default): one header line per message (index, where it was, version, type,
  xid, length), then its fields as `key: value` lines; short lists and objects stay on
  one line, long hex strings are wrapped. As `ovs-ofctl ofp-print` does, values with a
  name are printed by name: reserved ports (CONTROLLER, LOCAL, ANY, ...), buffer ids
  (none), EtherTypes (0x88cc), cookies in hex, flags and bitmaps (capabilities, port
  config, state and features, flow-mod flags, the HELLO version bitmap as versions),
  error types and codes; the frame in a PACKET_IN or PACKET_OUT is read (Ethernet,
  VLAN, ARP, IPv4, IPv6, TCP, UDP, ICMP, LLDP) into a `packet:` line of ovs-ofctl's flow
  syntax:

    #1 offset 0: OF1.3 PACKET_OUT xid=0x0 len=138
      buffer_id: none
      in_port: CONTROLLER
      actions: [{action: output, port: ALL, max_len: 65535}]
      packet: icmp,dl_src=f2:0b:a4:7d:f8:ea,dl_dst=f2:0b:a4:d0:3f:70,nw_src=10.0.0.1,...
      data: (98 bytes)
        f20ba4d03f70f20ba47df8ea080045000054f81a0000ff01af8b0a0000010a00
        ...

  For captures the header line names the frame that completed the message, its time
  (seconds since 1970, as `tcpdump -tt`) and `src -> dst`:

    #3 frame 7 1700000000.123456 127.0.0.1:40312 -> 127.0.0.1:6653: OF1.3 HELLO xid=0x1 len=16

  With --json: one JSON object per line, an envelope plus a \"source\" object (offset,
  or frame/timestamp/src/dst/stream_offset) and, when there is something to say, a
  \"notes\" object (opaque parts, re-encoding problems); encode ignores both. Values
  stay numbers (what encode reads):

    {\"xid\":0,\"version\":\"1.3\",\"type\":\"FEATURES_REQUEST\",\"source\":{\"offset\":0}}

  Every message is re-encoded and compared with its bytes; a difference is reported on
  that message. Parts the codec carries opaquely are listed. HELLO and ERROR of OpenFlow
  1.1, 1.2, 1.4 and 1.5 are decoded too (their layout is every version's: a failed
  version negotiation reads cleanly); other messages of those versions are errors.

EXIT STATUS:
  0 when everything decoded; 1 when a message did not decode (or re-encode to the same
  bytes), or when the input is damaged: a capture cut short or followed by garbage,
  bytes missing from a TCP stream (a lost segment, a frame cut by the snap length), the
  input ending inside a message. Errors, warnings and a summary go to stderr; the
  summary's last words say which (\"everything decoded\", \"FAILED: 2 messages did not
  decode\", \"FAILED: the input is damaged\"). A capture that starts in the middle of a
  connection is not damaged: a warning says where decoding starts.

EXAMPLES:
  pharos ofp decode flow_mod.bin
  xxd flow_mod.bin | pharos ofp decode --hex -
  pharos ofp decode --port 16653 capture.pcapng
  pharos ofp decode --json capture.pcap | pharos ofp encode --hex";

const ENCODE_LONG_ABOUT: &str = "\
Encode JSON envelopes into OpenFlow messages.

The input (FILE.json, or stdin when absent or `-`) is either a JSON array of envelopes or a
stream of envelope objects, one per line or simply concatenated, exactly what
`pharos ofp decode --json` prints. An envelope is

    {\"xid\": 7, \"version\": \"1.3\", \"type\": \"ECHO_REQUEST\", \"data\": \"cafe\"}

that is the xid, the version (\"1.0\" or \"1.3\"), the type name without OFPT_, and the
message's fields as `decode --json` names them. A \"source\" key is ignored. Header length
fields are computed. Errors name the line and column and what is wrong.

The messages are written back to back as raw bytes to stdout (or to -o OUT), or with --hex
as hex, one message per line.

EXAMPLE:
  echo '{\"xid\":1,\"version\":\"1.0\",\"type\":\"HELLO\"}' | pharos ofp encode --hex
  0100000800000001";
