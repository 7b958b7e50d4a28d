//! Test networks on one machine: Open vSwitch switches (userspace datapath, in a private
//! run directory) and hosts in network namespaces, joined by veth pairs, every switch
//! pointed at an OpenFlow controller. This is what `pharos lab` drives.
//!
//! It shells out to `ip`, `ovs-vsctl`, `ovsdb-tool`, `ovsdb-server`, `ovs-vswitchd`,
//! `ethtool` and `ping`, as Mininet does, each with a timeout and its standard error in
//! the error message. What it does follows `shared/notes/open-vswitch.md`:
//!
//! * `ovsdb-server` and `ovs-vswitchd` run from the lab directory
//!   (`$PHAROS_LAB_DIR/NAME`, default `/run/pharos-lab/NAME`), with `OVS_RUNDIR`,
//!   `OVS_LOGDIR` and `OVS_DBDIR` set to it for every OVS command: never the system's
//!   `/var/run/openvswitch`.
//! * Bridges use the userspace datapath (dpif-netdev) as `datapath_type=dummy`, which
//!   ovs-vswitchd offers when started with `--enable-dummy`: the same datapath as
//!   `netdev`, but its internal ports are not kernel taps. With `netdev` the datapath's
//!   own tap is named `ovs-netdev` in the root namespace, so a second userspace Open
//!   vSwitch on the machine (another lab, or one not made by `pharos lab`) could not
//!   create its datapath while the first held that name. Bridges are also set
//!   `fail_mode=secure`, the one OpenFlow version asked for, datapath id N for sN, in-band
//!   control off, and retry a missing controller every second (`max_backoff=1000`, set in
//!   the same transaction: the notes saw no effect when it was set during a backoff);
//!   switches are joined by veth pairs, never patch ports.
//! * Hosts are network namespaces with transmit checksum offload off (TCP and UDP die on
//!   the userspace datapath otherwise) and IPv6 off, as are the switch-side veth ends, so
//!   that the only packets reaching the controller are the ones the user sends.
//! * `state.json` in the lab directory is an intent log ([`state`]): `down` removes what
//!   was recorded, in the order bridges, veths, namespaces, daemons; daemons are stopped
//!   only by the pid they recorded, after checking the process is that daemon of this lab.
//!
//! * `move` re-plugs a host into a new port of another switch (recorded in `state.json`
//!   and replayed on the topology by every later command); [`frame`] sends and receives
//!   raw Ethernet frames as a host, from a packet socket in its namespace.
//!
//! When switches do not connect, [`probe`] tells what a connection to the controller
//! sees (refused, accepted then closed, ...), for the hint.
//!
//! Names ([`names`]) carry the lab's name, so labs of different names coexist; numbering
//! and shapes are in [`topo`].
//!
//! # Layout
//!
//! ```text
//! show             what `show` and `list` print
//! switches         the switches, either kind: running, connected, restarted
//! moves            `move`: a host re-plugged into a new port of another switch
//! links            `link`: both ends of a link set down or up
//! ping             `ping` and `pingall` (Mininet's matrix); ping's output read
//! up               LabOptions, SwitchKind; `up`: claim, check names free, build
//! down             `down`: teardown from state.json; what it removed
//! hosts            namespaces or probes and the veths; exec, send and recv as a host
//! ovs              Open vSwitch: the lab's own daemons, a bridge per switch, port checks
//! pharos_switches  Pharos switches: a `pharos switch` process each, its pid file and log
//! lab              the Lab type: opened from state.json; what it tells of itself
//! procfs           the lab's processes in /proc: alive, stopped, their connections
//! state            state.json, the intent log, and the teardown plan
//! tls              a lab over TLS: its certificates, generated or given
//! pharos           the seam to Pharos: `pharos switch`'s argv, `pharos run`'s TOML
//! target           the --controller target: tcp:/ssl:HOST:PORT, ptcp:PORT, none
//! version          the OpenFlow versions the switches speak
//! names            the names of what a lab makes, prefixed with the lab's
//! topo             topologies: shapes and numbering, pure data
//! ifname           the 15-byte interface name budget names and topo share
//! tools            the programs a lab runs; the preflight check
//! kernel           interfaces, namespaces, IPv6 (sysfs, /run/netns, /proc/sys)
//! cmd              a command run with a timeout, its standard error in the error
//! frame            raw Ethernet frames as a host, from a packet socket
//! probe            what a connection to a controller sees, for the hint
//! pki              a private PKI for labs over TLS, and for tests
//! error            LabError: a message fit for a user in each variant
//! words            how the lab words things: a lab's title, spans, plurals
//! ```
//!
//! A module uses only modules below it in this list. [`Lab`] is one type whose `impl`
//! is split by concern: `lab` holds the type, and each module above it adds the methods
//! of one command or one kind of switch.

pub mod cmd;
mod down;
mod error;
pub mod frame;
mod hosts;
mod ifname;
mod kernel;
mod lab;
mod links;
mod moves;
pub mod names;
mod ovs;
pub mod pharos;
mod pharos_switches;
mod ping;
pub mod pki;
pub mod probe;
mod procfs;
mod show;
pub mod state;
mod switches;
mod target;
mod tls;
mod tools;
pub mod topo;
mod up;
mod version;
mod words;

pub use crate::down::DownReport;
pub use crate::error::LabError;
pub use crate::lab::{lab_dir_from_env, Lab, ProbePort, DEFAULT_LAB_DIR};
pub use crate::names::{validate_lab_name, Names};
pub use crate::ping::{PingAll, PingResult, PingRow};
pub use crate::show::{list, ListEntry, Show, ShowHost, ShowLink, ShowPort, ShowSwitch};
pub use crate::target::{
    controller_addr, parse_controller, ControlTarget, DEFAULT_CONTROLLER, NO_CONTROLLER,
};
pub use crate::tls::{LabTls, TlsFiles, CONTROLLER_TOML};
pub use crate::tools::preflight;
pub use crate::topo::{Link, Node, Topo};
pub use crate::up::{LabOptions, SwitchKind};
pub use crate::version::OfVersion;
pub use crate::words::{plural, span, title, DEFAULT_NAME};
