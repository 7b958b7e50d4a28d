//! The zero-copy PACKET_IN view on arbitrary bytes: validation never panics, and once
//! it accepts a message every getter is safe.
#![no_main]

use libfuzzer_sys::fuzz_target;
use openflow::view::PacketIn;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = PacketIn::new_checked(data) {
        let _ = (p.in_port(), p.buffer_id(), p.total_len(), p.reason());
        let _ = (p.table_id(), p.cookie(), p.xid(), p.oxm_bytes().len());
        assert!(p.data().len() <= data.len());
    }
});
