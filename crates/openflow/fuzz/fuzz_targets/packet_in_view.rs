//! The zero-copy PACKET_IN view on arbitrary bytes (the oracle:
//! `openflow::fuzz::packet_in_view`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| openflow::fuzz::packet_in_view(data));
