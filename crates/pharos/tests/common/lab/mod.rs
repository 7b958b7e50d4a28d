//! The harness of the end-to-end tests (`tests/lab*.rs`, each naming it as
//! `mod common; use common::lab as harness;`): a Pharos
//! controller in the test process (any set of apps, plus an observer counting PACKET_INs
//! by kind and recording PORT_STATUS), `pharos lab` run as a user runs it, a guard that
//! always tears both down, the lab's topology as `pharos lab show --json` reports it, and
//! the programs around them (dumpcap, tshark, ovs-ofctl, iperf3).
//!
//! Everything here runs commands with a deadline, in their own process group, and kills
//! only that group on expiry: nothing it does can reach a process it did not start.
//!
//! ```text
//! preflight  whether the lab tests run here (programs, root), one at a time
//! command    a command run with a deadline in its own process group (Out)
//! ctl        Pharos in the test process: apps, the PACKET_IN observer, the REST API
//! of         the OpenFlow versions of a lab (Of)
//! capture    dumpcap on the controller's port
//! guard      the lab under test (Lab): pharos lab as a user runs it, torn down on drop
//! show       the topology as pharos lab show --json reports it (Topo)
//! ofctl      ovs-ofctl against a lab's switches, dump-flows read
//! ```
//!
//! The visible-skip rule (`record_not_full`, `skip_requested`: SKIPPED / SHORTENED
//! lines in $PHAROS_SKIP_LOG) and `wait_until` know nothing of labs: they are the test
//! kit's (`testkit::skip`, `testkit::wait`). Everything is re-exported here, so a test
//! names it `harness::NAME`.

mod capture;
mod command;
mod ctl;
mod guard;
mod of;
mod ofctl;
mod preflight;
mod show;

// Every test binary uses some of these, none all of them: the rest are not "unused".
#[allow(unused_imports)]
pub use {
    capture::Capture,
    command::{run, which, Out},
    ctl::{
        apps_by_name, free_port, learning_switch, AppSet, Ctl, PacketInKinds, PortStatusSeen,
        COUNTERS_EVERY,
    },
    guard::{Lab, TempDir, LAB_CMD_TIMEOUT},
    of::Of,
    ofctl::{dump_flows, flow_lines, ofctl, parse_flow, FlowEntry, OFCTL_TIMEOUT},
    preflight::{enabled, serial, PROGRAMS},
    show::{parse_topo, Host, Switch, SwitchLink, Topo},
    testkit::{record_not_full, skip_requested, wait_until},
};
