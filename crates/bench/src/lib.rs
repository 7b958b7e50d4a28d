//! # pharos-bench: measuring controllers
//!
//! `pharos bench controller` (a cbench-compatible benchmark: emulated switches sending
//! PACKET_INs over real TCP, throughput and latency modes, percentiles), `pharos bench
//! responder` (a trivial controller giving the ceiling of the machine and of the
//! generator), `pharos bench flood` (connection floods). Depends on the codec only,
//! never on the controller crate.
//!
//! ## Layout
//!
//! ```text
//! controller_bench  the run: config, generator threads, loops, drain (run_controller_bench)
//! switch            one emulated switch: PACKET_IN template, handshake replies, counting
//! report            BenchReport, LoopResult: the table and the JSON
//! stats             Summary (mean/min/max/stddev), Percentiles (exact, from samples)
//! responder         the trivial controller (run_responder)
//! flood             connection floods
//! compare           Pharos against Ryu
//! ```

pub mod compare;
pub mod controller_bench;
pub mod flood;
pub mod report;
pub mod responder;
pub mod stats;
pub mod switch;

pub use controller_bench::{run_controller_bench, BenchError, ControllerBenchConfig, Mode};
pub use report::{BenchReport, LoopResult, NotConnected};
pub use responder::{run_responder, run_responder_with, ResponderHandle, ResponderOptions};
pub use stats::{Percentiles, Summary};
pub use switch::Counting;
