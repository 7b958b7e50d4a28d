//! # pharos-bench: measuring controllers
//!
//! `pharos bench controller` (a cbench-compatible benchmark: emulated switches sending
//! PACKET_INs over real TCP, throughput and latency modes, percentiles), `pharos bench
//! responder` (a trivial controller giving the ceiling of the machine and of the
//! generator), `pharos bench flood` (connection floods). Depends on the codec only,
//! never on the controller crate.

pub mod compare;
pub mod flood;
