//! A bad guest for the sandbox's tests: its PACKET_IN handler traps. How, its
//! parameters say: `{"how": "unreachable"}` (the default) executes `unreachable`;
//! `"panic"` panics; `"read-file"` reads /etc/hostname and `"env"` reads an
//! environment variable, which the sandbox does not provide (the host links WASI to
//! traps).
use pharos_guest::*;

enum How {
    Unreachable,
    Panic,
    ReadFile,
    Env,
}

struct Trap(How);

impl App for Trap {
    fn new(params: &str) -> Result<Self, String> {
        Ok(Trap(if params.contains("read-file") {
            How::ReadFile
        } else if params.contains("env") {
            How::Env
        } else if params.contains("panic") {
            How::Panic
        } else {
            How::Unreachable
        }))
    }
    fn packet_in(&mut self, _: Switch, _: PacketIn) -> Flow {
        match self.0 {
            How::Unreachable => core::arch::wasm32::unreachable(),
            How::Panic => panic!("the guest's own words"),
            How::ReadFile => {
                let read = std::fs::read("/etc/hostname");
                log(
                    Level::Error,
                    &format!("the sandbox let a file be read: {read:?}"),
                );
            }
            How::Env => {
                let home = std::env::var("HOME");
                log(
                    Level::Error,
                    &format!("the sandbox let the environment be read: {home:?}"),
                );
            }
        }
        Flow::Continue
    }
}

app!(Trap);
