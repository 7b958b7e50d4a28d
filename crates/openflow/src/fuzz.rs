//! The oracles the fuzz targets (`crates/openflow/fuzz`) run, kept here so that they
//! compile and run with the ordinary tests too: `tests/fuzz_corpus.rs` replays the
//! corpora kept in the repository through them on stable. Not part of the API.

use crate::ofctl::{parse_flow, parse_flow_entry};
use crate::view::PacketIn;
use crate::Message;

/// The top-level decoder on arbitrary bytes, framed as a stream. Besides "never
/// panics": whatever decodes must encode, and decoding that encoding gives the same
/// message.
pub fn decode(data: &[u8]) {
    let mut rest = data;
    while let Ok(Some(len)) = crate::frame_len(rest) {
        let frame = &rest[..len];
        if let Ok((xid, msg)) = Message::decode(frame) {
            let bytes = msg.to_bytes(xid).expect("a decoded message must encode");
            let (xid2, again) = Message::decode(&bytes).expect("our encoding must decode");
            assert_eq!(xid, xid2);
            assert_eq!(msg, again, "decode(encode(m)) != m");
        }
        rest = &rest[len..];
    }
}

/// The zero-copy PACKET_IN view: validation never panics, and once it accepts a
/// message every getter is safe.
pub fn packet_in_view(data: &[u8]) {
    if let Ok(p) = PacketIn::new_checked(data) {
        let _ = (p.in_port(), p.buffer_id(), p.total_len(), p.reason());
        let _ = (p.table_id(), p.cookie(), p.xid(), p.oxm_bytes().len());
        assert!(p.data().len() <= data.len());
    }
}

/// `ovs-ofctl` flow strings: parsing never panics, an error's span lies in the input
/// and names its token, and a parsed flow prints to a string that parses back to it.
pub fn ofctl_parse(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    match parse_flow(s) {
        Ok(f) => {
            let text = f.to_string();
            assert_eq!(parse_flow(&text).as_ref(), Ok(&f), "{text}");
        }
        Err(e) => assert_eq!(s.get(e.span.clone()), Some(e.token.as_str())),
    }
    let _ = parse_flow_entry(s);
}
