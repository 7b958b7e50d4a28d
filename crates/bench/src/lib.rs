//! # pharos-bench: measuring controllers and switches
//!
//! `pharos bench controller` (a cbench-compatible benchmark: emulated switches sending
//! PACKET_INs over real TCP, cbench's learning phase, unbounded and windowed throughput
//! modes, a latency mode with percentiles, per-switch fairness, the generator's own CPU
//! cost), `pharos bench responder` (a trivial controller answering with the messages an
//! app would, giving the ceiling of the machine and of the generator), `pharos bench
//! flood` (connection floods), and the instruments of `pharos bench switch` (OFLOPS)
//! and `pharos bench datapath` (a traffic generator and test bed). The command lines
//! are the `pharos` binary's; this crate holds what they run.
//!
//! It depends on the codec (`openflow`, `packet`), on `tls-io` for the switches' TLS and
//! on `afpacket` for the data-path generator's ports: never on the controller it
//! measures, nor on the switch (DESIGN.md's layering).
//!
//! ## Layout
//!
//! ```text
//! controller_bench  the run: settings, connecting, generator threads, learning, loops,
//!                   drain, CPU clocks; report: BenchReport, LoopResult, the table and JSON
//! switch            one emulated switch: PACKET_IN template, announcements, handshake
//!                   replies, filling the socket, counting answers
//! stats             Summary (mean/min/max/stddev), SwitchRates (Jain's index),
//!                   Percentiles and the one percentile rule (nearest rank)
//! responder         the trivial controller (run_responder)
//! flood             connection floods
//! soak              many switches for a long time, some churning; the footprint sampled
//! live_fuzz         a running controller fuzzed over its OpenFlow channel
//! api_load          open-loop GET load on the REST API
//! compare           Pharos against Ryu, alternating runs
//! topo              --topology: switches wired into a ring or a tree, LLDP relayed
//! tls               the switches' TLS transport (client sessions over mio sockets)
//! oflops            pharos bench switch: the control channel, probe traffic, tests 1-5
//! datapath          pharos bench datapath's traffic generator and test bed
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
