//! `ovs-ofctl` flow strings (the oracle: `openflow::fuzz::ofctl_parse`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| openflow::fuzz::ofctl_parse(data));
