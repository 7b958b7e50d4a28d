//! # pharos-switch: a software OpenFlow switch
//!
//! `pharos switch` forwards frames between Linux interfaces under the control of one or
//! more OpenFlow controllers (1.0 and 1.3), the way the reference switch of the Linux
//! OpenFlow study did (`../shared/papers/001_*`), with two of its weaknesses fixed: the
//! wildcard table's lookup does not grow linearly with its rules (tuple-space search),
//! and a BARRIER_REPLY means every earlier change is in the data path.
//!
//! ## Layout
//!
//! ```text
//! table     flow tables: the exact-match hash table, the tuple-space classifier,
//!           priorities, timeouts, counters, 1.3's pipeline (goto-table, write
//!           actions, table-miss, groups), and the actions applied to a frame
//! datapath  ports: Linux interfaces read and written in batches, no allocation per
//!           frame: AF_XDP ports, and the AF_PACKET ones of the `afpacket` crate (shared
//!           with the bench's traffic generator)
//! agent     the OpenFlow side: connections to controllers over the codec, the
//!           handshake, every message the switch answers, and the switch's loop
//! ```
//!
//! ## One thread per switch, run to completion
//!
//! A switch is one thread polling its ports and its controller connections. It owns its
//! tables: a FLOW_MOD is applied before the next frame is read, so a BARRIER_REPLY sent
//! after it is never ahead of the data path. Frames go from a port's receive ring through
//! [`table::Pipeline::process`] to an [`Sink`], which the loop turns into transmissions
//! and PACKET_INs.

pub mod agent;
pub mod datapath;
pub mod table;

use openflow::model::PortNo;

/// Why a frame goes to the controller (the PACKET_IN's reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToController {
    /// No flow matched (1.0), or the 1.3 table-miss flow sent it.
    NoMatch,
    /// A flow's output:CONTROLLER action sent it.
    Action,
}

/// Where the pipeline sends a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Egress {
    /// A port by its OpenFlow number.
    Port(u32),
    /// Back out of the port it came in on.
    InPort,
    /// Every port but the input port and those with `no_flood` set.
    Flood,
    /// Every port but the input port.
    All,
    /// The switch's local port (unsupported ports are dropped by the sink).
    Local,
    /// To the controllers as a PACKET_IN with at most `max_len` bytes (65535: all; the
    /// agent applies `miss_send_len` to [`ToController::NoMatch`] in 1.0).
    Controller {
        max_len: u16,
        reason: ToController,
        table_id: u8,
        cookie: u64,
    },
}

impl Egress {
    /// The egress an OpenFlow output action names; `None` for ports the pipeline itself
    /// handles (`Table`) or does not support (`Normal`, `Any`).
    pub fn from_port(port: PortNo) -> Option<Egress> {
        match port {
            PortNo::Physical(p) => Some(Egress::Port(p)),
            PortNo::InPort => Some(Egress::InPort),
            PortNo::Flood => Some(Egress::Flood),
            PortNo::All => Some(Egress::All),
            PortNo::Local => Some(Egress::Local),
            PortNo::Controller => Some(Egress::Controller {
                max_len: 0xffff,
                reason: ToController::Action,
                table_id: 0,
                cookie: 0,
            }),
            PortNo::Table | PortNo::Normal | PortNo::Any => None,
        }
    }
}

/// What the pipeline hands each frame it forwards to. `frame` is the frame as the
/// actions left it at the output action (modified copies, not the received bytes, when
/// an action wrote a field). Implementations must not allocate per frame.
pub trait Sink {
    fn emit(&mut self, egress: Egress, in_port: u32, frame: &[u8]);
}
