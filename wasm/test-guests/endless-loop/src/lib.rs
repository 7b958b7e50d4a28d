//! A bad guest for the sandbox's tests: its PACKET_IN handler never returns.
use pharos_guest::*;

struct EndlessLoop;

impl App for EndlessLoop {
    fn new(_: &str) -> Result<Self, String> {
        Ok(EndlessLoop)
    }
    fn packet_in(&mut self, _: Switch, _: PacketIn) -> Flow {
        let mut n = 0u64;
        loop {
            n = std::hint::black_box(n.wrapping_add(1));
        }
    }
}

app!(EndlessLoop);
