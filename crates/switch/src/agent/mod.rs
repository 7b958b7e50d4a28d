//! The OpenFlow agent and the switch's loop.
//!
//! ```text
//! channel   one controller connection without its socket: framing buffers, the
//!           HELLO exchange and version, miss_send_len, echo keepalive, PACKET_IN encoding
//! request   incoming 1.0 and 1.3 messages as one version-neutral Request
//! handler   Agent: every request answered, with its effects on the tables, the ports
//!           and the other controllers (sans-IO: bytes and the time in, bytes out)
//! reply     replies in each version's structures (statistics split with "more")
//! errors    refusals and the ERROR each version says them with
//! fabric    Fabric: the Sink frames leave through (ports, PACKET_IN, buffers)
//! buffers   the packet buffers behind PACKET_IN's buffer_id
//! ports     PortIo (what the loop needs of a port) and the OpenFlow state of a port
//! tables    Tables (what the agent needs of the flow tables), implemented by Pipeline
//! switch    Switch: the loop (mio), controller connections with reconnect and backoff
//! tls       TLS to ssl: controllers (rustls client sessions)
//! ```
//!
//! A switch is one thread. Its loop reads frames and controller messages in turns; a
//! message is handled completely (the tables changed, the replies queued) before the
//! next frame is read, so a BARRIER_REPLY is never ahead of the data path.
//!
//! With several controllers each connection negotiates its own version, but the
//! tables speak one: with `--of both` the first controller's version is kept, and
//! later connections are offered only that one.

mod buffers;
mod channel;
mod errors;
mod fabric;
mod handler;
mod ports;
mod reply;
mod request;
pub mod switch;
mod tables;
pub mod tls;

#[cfg(test)]
mod fake;
#[cfg(test)]
mod loop_tests;
#[cfg(test)]
mod pipeline_tests;
#[cfg(test)]
mod tests;

pub use buffers::{BufferError, Buffers};
pub use channel::{Channel, CloseReason, State, Versions, DEFAULT_MISS_SEND_LEN};
pub use errors::{Kind, Refusal};
pub use fabric::{Drops, Fabric};
pub use handler::{Agent, AgentConfig};
pub use ports::{config as port_config, PortIo, PortSlot};
pub use switch::{ListenAddr, Switch, SwitchConfig, Target};
pub use tables::Tables;
// The TLS client configuration is tls-io's (shared with the bench); named here too, as
// the switch's.
pub use tls_io::{client_config, TlsFiles};
