//! The top-level decoder on arbitrary bytes (the oracle: `openflow::fuzz::decode`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| openflow::fuzz::decode(data));
