//! Whether the lab tests can run here, and one at a time: the programs they drive, root,
//! and the serial lock. A test asked to skip (`PHAROS_SKIP_LAB=1`) is recorded by the
//! skip rule ([`testkit::skip`]).

use std::sync::{Mutex, MutexGuard};

use super::command::which;
use testkit::skip_requested;

/// The programs the lab tests drive, each with the Debian package providing it.
pub const PROGRAMS: &[(&str, &str)] = &[
    ("ovsdb-tool", "openvswitch-switch"),
    ("ovsdb-server", "openvswitch-switch"),
    ("ovs-vswitchd", "openvswitch-switch"),
    ("ovs-vsctl", "openvswitch-switch"),
    ("ovs-ofctl", "openvswitch-switch"),
    ("ip", "iproute2"),
    ("ping", "iputils-ping"),
    ("ethtool", "ethtool"),
    ("iperf3", "iperf3"),
    ("tshark", "tshark"),
    ("dumpcap", "tshark"),
];

/// One test at a time: each lab burns both cores of the CI machine, and a test's timing
/// checks (reconnection within 5 s) mean nothing while another lab competes.
static SERIAL: Mutex<()> = Mutex::new(());

/// Takes the serial lock (a test that panicked holding it does not poison the others).
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether the lab tests run here. `PHAROS_SKIP_LAB=1`: no, and the skip is recorded
/// ([`testkit::record_not_full`]). Otherwise they must be able to run: not root, or a program
/// missing, fails the test with the reason and the fix.
pub fn enabled(test: &str) -> bool {
    if skip_requested(test, "PHAROS_SKIP_LAB") {
        return false;
    }
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    assert!(
        euid == 0,
        "the lab tests need root (network namespaces and Open vSwitch): run them as root, \
         or set PHAROS_SKIP_LAB=1 to skip them"
    );
    let missing: Vec<&str> = PROGRAMS
        .iter()
        .filter(|(p, _)| which(p).is_none())
        .map(|(_, pkg)| *pkg)
        .collect();
    if !missing.is_empty() {
        let mut pkgs = missing.clone();
        pkgs.dedup();
        panic!(
            "the lab tests need programs that are missing: run scripts/install-test-deps as root \
             (apt-get install {}), or set PHAROS_SKIP_LAB=1 to skip them",
            pkgs.join(" ")
        );
    }
    true
}
