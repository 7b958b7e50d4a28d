//! The lab's switches, whichever their kind: whether they run, how many are connected
//! to the controller, and restarting one.

use std::time::{Duration, Instant};

use crate::procfs::established_to_port;
use crate::topo::Node;
use crate::words::span;
use crate::{parse_controller, Lab, LabError, SwitchKind};

impl Lab {
    /// OpenFlow connections established by this lab's ovs-vswitchd to the controller's
    /// port, right now (read from /proc: the database's `is_connected` lags by seconds).
    pub fn connections(&self) -> usize {
        let Ok(port) = parse_controller(&self.state.controller) else {
            return 0;
        };
        if self.state.pharos_switch.is_some() {
            return self
                .topo
                .switches
                .iter()
                .filter_map(|s| self.pharos_switch_pid(s.num))
                .map(|pid| established_to_port(pid, port))
                .sum();
        }
        let Some(pid) = self.vswitchd_pid() else {
            return 0;
        };
        established_to_port(pid, port)
    }

    /// Whether the lab's switches run: its ovs-vswitchd, or any of its Pharos switches.
    pub fn running(&self) -> bool {
        if self.state.pharos_switch.is_some() {
            return self
                .topo
                .switches
                .iter()
                .any(|s| self.pharos_switch_pid(s.num).is_some());
        }
        self.vswitchd_pid().is_some()
    }

    /// Which switches the lab runs.
    pub fn switch_kind(&self) -> SwitchKind {
        match &self.state.pharos_switch {
            Some(exe) => SwitchKind::Pharos {
                exe: exe.clone(),
                datapath: self.state.pharos_datapath.clone(),
            },
            None => SwitchKind::Ovs,
        }
    }

    /// Waits until every switch has its OpenFlow connection or `timeout` passes; returns
    /// how many are connected.
    pub fn wait_connected(&self, timeout: Duration) -> usize {
        let deadline = Instant::now() + timeout;
        let want = self.topo.switches.len();
        loop {
            let n = self.connections();
            if n >= want || Instant::now() >= deadline {
                return n;
            }
            // Reading /proc/PID/net/tcp costs milliseconds of CPU on a machine with many
            // sockets: poll gently (a switch connects within ~25 ms of set-controller).
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Deletes switch `s`'s bridge and creates it again with the same datapath id, ports
    /// and controller (the controller sees the switch leave and come back).
    pub fn restart_switch(&self, s: &str) -> Result<(), LabError> {
        let num = match self.node_of(s)? {
            Node::Switch(n) => n,
            Node::Host(_) => {
                return Err(LabError::Invalid(format!(
                    "{s} is a host; restart takes a switch ({})",
                    span("s", self.topo.switches.len())
                )))
            }
        };
        if self.state.pharos_switch.is_some() {
            self.stop_pharos_switch(num)?;
            self.spawn_pharos_switch(num)?;
            return self.wait_pharos_switches(&[num]);
        }
        if self.vswitchd_pid().is_none() {
            return Err(LabError::Other(format!(
                "the lab's ovs-vswitchd is not running (see {}); pharos lab down, then up",
                self.dir.join("ovs-vswitchd.log").display()
            )));
        }
        let br = self.names.bridge(num);
        self.run(
            self.vsctl()
                .args(["--if-exists", "del-br", &br])
                .label(format!("ovs-vsctl del-br {br}")),
        )?;
        self.run(self.bridge_cmd(num))?;
        self.check_interfaces(Some(num))
    }
}
