//! # pharos-bench: measuring controllers
//!
//! `pharos bench controller` (a cbench-compatible benchmark: emulated switches sending
//! PACKET_INs over real TCP, cbench's learning phase, unbounded and windowed throughput
//! modes, a latency mode with percentiles, per-switch fairness, the generator's own CPU
//! cost), `pharos bench responder` (a trivial controller answering with the messages an
//! app would, giving the ceiling of the machine and of the generator), `pharos bench flood` (connection floods). Depends on the codec only,
//! never on the controller crate.
//!
//! ## Layout
//!
//! ```text
//! controller_bench  the run: config, generator threads, learning, loops, drain, CPU clocks
//! switch            one emulated switch: PACKET_IN template, announcements, handshake
//!                   replies, filling the socket, counting answers
//! report            BenchReport, LoopResult: the table and the JSON
//! stats             Summary (mean/min/max/stddev), SwitchRates (Jain's index),
//!                   Percentiles (exact, from samples)
//! responder         the trivial controller (run_responder)
//! flood             connection floods
//! compare           Pharos against Ryu
//! topo              --topology: switches wired into a ring or a tree, LLDP relayed
//! ```

pub mod api_load;
pub mod compare;
pub mod controller_bench;
pub mod datapath;
pub mod flood;
pub mod live_fuzz;
pub mod oflops;
pub mod responder;
pub mod soak;
pub mod stats;
pub mod switch;
pub mod tls;
pub mod topo;

pub use controller_bench::report::{
    BenchReport, LearningReport, LoopResult, NotConnected, Summarised,
};
pub use controller_bench::{run_controller_bench, BenchError, ControllerBenchConfig, Mode};
pub use responder::{run_responder, run_responder_with, Answer, ResponderHandle, ResponderOptions};
pub use stats::{jain_index, Percentiles, Summary, SwitchRates};
pub use switch::Counting;
