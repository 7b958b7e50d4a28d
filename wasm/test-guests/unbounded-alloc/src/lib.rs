//! A bad guest for the sandbox's tests: each PACKET_IN allocates (and touches)
//! memory until the allocator fails.
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
            self.hoard.push(vec![0xa5; 1 << 20]);
        }
    }
}

app!(UnboundedAlloc);
