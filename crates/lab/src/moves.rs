//! `move`: re-plugging a host into a new port of another switch, recorded in
//! `state.json` so that every later command sees the host where it is.

use crate::kernel::{disable_ipv6, iface_exists};
use crate::names::{self, Names};
use crate::state::Move;
use crate::topo::Node;
use crate::words::span;
use crate::{Lab, LabError};

impl Lab {
    /// Moves host `host` to switch `switch`: unplugs it (its switch port is deleted, so the
    /// old switch reports the port gone) and plugs it into a new port of `switch`, numbered
    /// after that switch's highest, with the same MAC and IP address. Recorded in
    /// `state.json`, so `show` and later commands see the host where it is now, `restart`
    /// re-creates the new port, and `down` removes it. Returns the new port.
    pub fn move_host(&mut self, host: &str, switch: &str) -> Result<u16, LabError> {
        let h = self.host_of(host)?.num;
        let s = match self.node_of(switch)? {
            Node::Switch(n) => n,
            Node::Host(_) => {
                return Err(LabError::Invalid(format!(
                    "{switch} is a host; a host moves to a switch ({})",
                    span("s", self.topo.switches.len())
                )))
            }
        };
        let pharos = self.state.pharos_switch.is_some();
        if !pharos && self.vswitchd_pid().is_none() {
            return Err(LabError::Other(format!(
                "the lab's ovs-vswitchd is not running (see {}); pharos lab down, then up",
                self.dir.join("ovs-vswitchd.log").display()
            )));
        }
        let old = self.topo.host(h).expect("checked").clone();
        let mut topo = self.topo.clone();
        let port = topo.move_host(h, s)?;
        names::check(&self.names, &topo)?;
        let old_iface = self.names.switch_iface(old.switch, old.port);
        let new_iface = self.names.switch_iface(s, port);
        let ns = self.names.netns(h);
        // Intent first: `down` must find the new veth even if we stop half way.
        if !self.state.veths.contains(&new_iface) {
            self.state.veths.push(new_iface.clone());
            self.save()?;
        }
        // 1. Unplug: the port leaves the old bridge, the veth pair goes (its host end
        //    with it). A Pharos switch is stopped (its ports are fixed for its life) and
        //    started again with its new ports below.
        if pharos {
            self.stop_pharos_switch(old.switch)?;
            if s != old.switch {
                self.stop_pharos_switch(s)?;
            }
        }
        if !pharos {
            self.run(
                self.vsctl()
                    .args([
                        "--if-exists",
                        "del-port",
                        &self.names.bridge(old.switch),
                        &old_iface,
                    ])
                    .label(format!("ovs-vsctl del-port {old_iface}")),
            )?;
        }
        if iface_exists(&old_iface) {
            self.run(self.ip().args(["link", "del", &old_iface]))?;
        }
        // 2. A new veth pair: the host end keeps its name and MAC inside the namespace.
        let host = topo.host(h).expect("moved host").clone();
        self.run(
            self.ip()
                .args(["link", "add", &new_iface, "type", "veth", "peer", "name"])
                .arg(Names::host_iface(h))
                .args(["address", &host.mac_string(), "netns", &ns])
                .label(format!("ip link add {new_iface}")),
        )?;
        disable_ipv6(&new_iface);
        self.run(self.ip().args(["link", "set", &new_iface, "up"]))?;
        self.configure_host(&host)?;
        // 3. Plug it into the new switch on the new port.
        if pharos {
            self.topo = topo;
            self.state.moves.push(Move { host: h, switch: s });
            self.save()?;
            let mut restart = vec![old.switch];
            if s != old.switch {
                restart.push(s);
            }
            for &n in &restart {
                self.spawn_pharos_switch(n)?;
            }
            self.wait_pharos_switches(&restart)?;
            return Ok(port);
        }
        let br = self.names.bridge(s);
        self.run(
            self.vsctl()
                .args(["--", "add-port", &br, &new_iface])
                .args(["--", "set", "interface", &new_iface])
                .arg(format!("ofport_request={port}"))
                .label(format!("ovs-vsctl add-port {br} {new_iface}")),
        )?;
        self.topo = topo;
        self.state.moves.push(Move { host: h, switch: s });
        self.save()?;
        self.check_interfaces(Some(s))?;
        Ok(port)
    }
}
