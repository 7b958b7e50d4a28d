//! # pharos-testkit: the shared test kit
//!
//! What the tests of several crates need, once: a switch to connect to a controller,
//! frames for apps to see, TLS certificates and a TLS switch, clients for the REST API
//! and its event stream, the rule for tests that cannot run here, and a wait with a
//! deadline. A dev-dependency only (`publish = false`).
//!
//! It stands outside the controller, as a switch or a REST client does: it depends on
//! the codec (`openflow`), `packet` and `tls-io`, never on `controller`, `api`, `apps`,
//! `lab` or `pharos`, so a test of those sees them only through their public seams.
//! (The sans-IO emulated network that drives apps through the controller's dispatcher
//! is the `pharos-sim` crate, for that reason.)
//!
//! ## Layout
//!
//! ```text
//! emu       Emu: an emulated OpenFlow switch over TCP (HELLO, the handshake's answers,
//!           PORT_STATUS, PACKET_IN, misbehaviour on demand), Spec, host MACs, the
//!           PACKET_OUT / FLOW_MOD readers
//! emu/tables  its flow table and statistics replies (FLOW_MOD applied, multipart parts)
//! frames    Ethernet / ARP / IPv4 / IPv6 (neighbour discovery) / VLAN / LLDP frames
//!           built with the packet crate, and the PACKET_IN a switch wraps one in
//! tlskit    a private PKI (rcgen: CAs, controller and switch certificates, expired
//!           ones), a TLS relay for an emulated switch (over tls_io::TlsIo), a bare
//!           TLS handshake
//! http      request / Resp: one HTTP/1.1 request per connection, on ureq
//! sse       SseStream: an event stream read line by line, cut into events
//! contract  Contract: responses checked against the API's OpenAPI document
//! proc      what /proc/net/tcp says: whether something listens on an address
//! skip      record_not_full, skip_requested: the visible-skip rule (PHAROS_SKIP_LOG)
//! wait      wait_until, poll_until: a condition polled until a deadline
//! ```
//!
//! Helpers panic with a message saying what failed: they are for tests.

pub mod contract;
pub mod emu;
pub mod frames;
pub mod http;
pub mod proc;
pub mod skip;
pub mod sse;
pub mod tlskit;
pub mod wait;

pub use skip::{record_not_full, skip_requested};
pub use wait::wait_until;
