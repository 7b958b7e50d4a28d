//! The top-level decoder on arbitrary bytes. Besides "never panics", a stronger oracle:
//! whatever decodes must encode, and decoding that encoding gives the same message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use openflow::Message;

fuzz_target!(|data: &[u8]| {
    // As a stream: frame, then decode each frame.
    let mut rest = data;
    while let Ok(Some(len)) = openflow::frame_len(rest) {
        let frame = &rest[..len];
        if let Ok((xid, msg)) = Message::decode(frame) {
            let bytes = msg.to_bytes(xid).expect("a decoded message must encode");
            let (xid2, again) = Message::decode(&bytes).expect("our encoding must decode");
            assert_eq!(xid, xid2);
            assert_eq!(msg, again, "decode(encode(m)) != m");
        }
        rest = &rest[len..];
    }
});
