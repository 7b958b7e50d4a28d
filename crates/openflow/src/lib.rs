//! # pharos-openflow: the OpenFlow 1.0 and 1.3 wire codec
//!
//! Everything Pharos says to a switch goes through this crate. It knows nothing of
//! sockets: it turns bytes into messages and messages into bytes.
//!
//! ## Layout
//!
//! ```text
//! version   Version (1.0, 1.3) and the name of any version byte; below error
//! error     DecodeError and EncodeError: one variant per rule, with layer and offset
//! header    ofp_header: the zero-copy Header view, Version::from_wire, framing (frame_len)
//! msg_type  the ofp_type numbers 1.0 and 1.3 share (HELLO 0 to FLOW_MOD 14), as u8 constants
//! dpid      Dpid, the datapath id: its one printed form and its one parser
//! wire      Reader (bounds-checked cursor), Put, LenMark (length patching), pad_to
//! types     MacAddr, FixedStr<N>, hex, the open_enum! macro
//! cookie    CookieOwner: the cookie bits that say which app owns a flow, set by the encoder
//! common    structures shared by both versions (hello, error, switch config, desc, ...)
//! of10      every OpenFlow 1.0 message (wire version 0x01): owned reprs, parse and emit
//! of13      every OpenFlow 1.3 message (wire version 0x04): owned reprs, parse and emit;
//!           multipart/ holds MULTIPART_REQUEST / REPLY and their bodies, one file a family
//! message   Message: either version, decode() and encode() of whole messages
//! frame     Frame: one whole message cut from a byte stream, its header checked once
//! view      zero-copy views for the hot path (PACKET_IN and its frame)
//! model     the version-neutral match / actions / flow-mod / packet-out apps write against:
//!           one file a type (port, matching, action, flow_mod, packet_out, flow_removed)
//!           and the 1.0 and 1.3 encoders (v10, v13)
//! ofctl     flows in ovs-ofctl syntax, both ways, to and from 1.0 and 1.3 FLOW_MOD / flow
//!           stats: flow (the types), parse/, print, wire/ (to and from messages)
//! fuzz      the fuzz targets' oracles (hidden; crates/openflow/fuzz runs them)
//! ```
//!
//! ## Two ways in
//!
//! * **Owned**: [`Message::decode`] parses a whole message into owned structures that
//!   re-encode byte for byte with [`Message::encode`]. Anything this codec does not know
//!   (message types, actions, instructions, OXM classes, experimenter bodies) is kept
//!   opaque, and still re-encodes byte for byte; [`Message::opaque_parts`] lists it.
//! * **Zero-copy**: [`view::PacketIn`] reads the fields a controller needs on the hot
//!   path straight from the read buffer, allocating nothing.
//!
//! Encoders append to a caller's `Vec<u8>`, so a controller writes straight into a
//! switch's output buffer; on error nothing partial is left behind.
//!
//! ## The panic contract
//!
//! No function in this crate panics on any input bytes: every length is checked before it
//! is used, and bad input is reported as a [`DecodeError`] naming the structure, the
//! offset, and what was wrong. The only panicking functions are the `new_unchecked` view
//! constructors' getters, which say so. Encoding never panics either; values that do not
//! fit their wire field are an [`EncodeError`].

pub mod common;
pub mod cookie;
pub mod dpid;
pub mod error;
pub mod frame;
#[doc(hidden)]
pub mod fuzz;
pub mod header;
pub mod message;
pub mod model;
pub mod msg_type;
pub mod of10;
pub mod of13;
pub mod ofctl;
pub mod types;
mod version;
pub mod view;
pub mod wire;

pub use dpid::{Dpid, DpidError};
pub use error::{DecodeError, DecodeResult, EncodeError, EncodeResult};
pub use frame::Frame;
pub use header::{frame_len, Header, Version, HEADER_LEN};
pub use message::{Envelope, Message};
pub use types::{FixedStr, MacAddr};
