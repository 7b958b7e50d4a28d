//! Every packet parser on arbitrary bytes: the whole-frame FlowKey and OpenFlow match
//! extraction, and every view and repr at offset 0 and at the offsets FlowKey finds.
//! Besides "never panics": every repr that parses re-emits to itself, and the extracted
//! OXM match encodes. The oracle lives in `packet::fuzz` so ordinary tests run it too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| packet::fuzz::parse(data));
