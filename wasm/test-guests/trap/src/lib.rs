//! A bad guest for the sandbox's tests: its PACKET_IN handler traps (executes
//! `unreachable`).
use pharos_guest::*;

struct Trap;

impl App for Trap {
    fn new(_: &str) -> Result<Self, String> {
        Ok(Trap)
    }
    fn packet_in(&mut self, _: Switch, _: PacketIn) -> Flow {
        core::arch::wasm32::unreachable()
    }
}

app!(Trap);
