//! `pharos bench switch`: an OFLOPS-style evaluation of one OpenFlow switch (Rotsos et
//! al., PAM 2012), control plane and data plane measured together. Pharos plays the
//! controller on the switch's control channel ([`channel`]) and sends and captures
//! probe traffic on the switch's data ports through Linux interfaces ([`probe`]).
//!
//! Tests: [`modify`] (packet modification latency), [`insert`] (flow insertion delay,
//! barrier against data plane), [`stats`] (flow statistics polling), [`interact`]
//! (updates while polling), [`basics`] (echo, PACKET_IN, PACKET_OUT); what they share:
//! [`flows`] (the probe frames, the flows matching them, the table reset, `TestError`)
//! and [`live`] (a probe stream running while a test works the channel); [`delay`]
//! checks the probes' precision against a known delay; [`report`] prints tables, JSON
//! and plots.

pub mod basics;
pub mod channel;
pub mod delay;
pub mod flows;
pub mod insert;
pub mod interact;
pub mod live;
pub mod modify;
pub mod probe;
pub mod report;
pub mod stats;
