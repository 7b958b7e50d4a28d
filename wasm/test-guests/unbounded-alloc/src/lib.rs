//! A bad guest for the sandbox's tests: each PACKET_IN reserves memory, a MiB at a
//! time and kept, until the allocator fails (reserved, not written: the memory cap
//! must stop it, not the time limit).
use pharos_guest::*;

struct UnboundedAlloc {
    hoard: Vec<Vec<u8>>,
}

impl App for UnboundedAlloc {
    fn new(_: &str) -> Result<Self, String> {
        Ok(UnboundedAlloc { hoard: Vec::new() })
    }
    fn packet_in(&mut self, _: Switch, _: PacketIn) -> Flow {
        loop {
            self.hoard.push(Vec::with_capacity(1 << 20));
        }
    }
}

app!(UnboundedAlloc);
