//! What `show` and `list` print: a lab's switches, links, hosts and probes, and how to
//! reach its Open vSwitch (text, or JSON through serde); the labs in a lab directory.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::kernel::iface_states;
use crate::lab::resolve;
use crate::names::Names;
use crate::procfs::daemon_pid;
use crate::state::State;
use crate::topo::Node;
use crate::words::title;
use crate::{pharos, pki, Lab, LabError, ProbePort, TlsFiles, CONTROLLER_TOML};

/// What `show` prints: the switches, links and hosts, and how to reach the lab's OVS.
#[derive(Debug, Clone, Serialize)]
pub struct Show {
    /// The lab's name.
    pub name: String,
    /// The lab directory: OVS's run, log and database directory.
    pub dir: PathBuf,
    /// `OVS_RUNDIR`, `OVS_LOGDIR`, `OVS_DBDIR`: set them to run ovs-vsctl or ovs-ofctl
    /// against this lab's switches.
    pub env: BTreeMap<String, String>,
    /// The topology spec (`linear,3`).
    pub topo: String,
    /// "1.0", "1.3" or "mixed" (each switch's is in [`ShowSwitch::of`]).
    pub of: String,
    /// `OpenFlow10`, `OpenFlow13`, or for a mixed lab `OpenFlow10,OpenFlow13` (for
    /// `ovs-ofctl -O`).
    pub of_protocol: String,
    /// Where the switches' OpenFlow channel goes (`tcp:127.0.0.1:6653`).
    pub controller: String,
    /// Whether `up` finished building it.
    pub complete: bool,
    /// Whether the lab's switches run (its ovs-vswitchd, or any of its Pharos switches).
    pub running: bool,
    /// `ovs` (Open vSwitch) or `pharos` (`pharos switch`, one process per switch).
    pub switch: String,
    /// OpenFlow connections established by the lab's ovs-vswitchd to the controller.
    pub connected: usize,
    /// The switches, by number.
    pub switches: Vec<ShowSwitch>,
    /// Every link, host links first, as the topology lists them.
    pub links: Vec<ShowLink>,
    /// The hosts, by number (none for a lab with probes).
    pub hosts: Vec<ShowHost>,
    /// Probe interfaces standing in for the hosts (`up --probe`).
    pub probes: Vec<ProbePort>,
    /// The OpenFlow channel's TLS files, for a lab over TLS (`up --tls`).
    pub tls: Option<TlsFiles>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ShowSwitch {
    /// Its short name (`s1`).
    pub name: String,
    /// The Open vSwitch bridge, or for a Pharos switch the name `ovs-ofctl` reaches it by
    /// (its management socket is `BRIDGE.mgmt` in the lab directory, as a bridge's is).
    pub bridge: String,
    /// The printed form, `00:00:00:00:00:00:00:01` (as Pharos prints every dpid).
    pub dpid: String,
    /// The OpenFlow version it speaks: "1.0" or "1.3".
    pub of: String,
    /// Its ports, by number.
    pub ports: Vec<ShowPort>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ShowPort {
    /// The OpenFlow port number.
    pub port: u16,
    /// Its interface in the root namespace (`lab-s1-eth1`).
    pub interface: String,
    /// `h1` or `s2`.
    pub peer: String,
    /// The peer's port (0 for a host).
    pub peer_port: u16,
}

#[derive(Debug, Clone, Serialize)]
pub struct ShowLink {
    /// One end: always a switch (`s1`).
    pub a: String,
    /// Its port.
    pub port_a: u16,
    /// The other end: a switch or a host.
    pub b: String,
    /// Its port (0 for a host).
    pub port_b: u16,
    /// The interface of end `a`, in the root namespace.
    pub interface_a: String,
    /// For a host, its interface inside its namespace.
    pub interface_b: String,
    /// Both ends up and carrier on.
    pub up: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ShowHost {
    /// Its short name (`h1`).
    pub name: String,
    /// Its network namespace (`lab-h1`).
    pub netns: String,
    /// Its interface inside the namespace (`h1-eth0`).
    pub interface: String,
    /// Its IPv4 address.
    pub ip: String,
    /// The address's prefix length.
    pub prefix_len: u8,
    /// Its MAC address.
    pub mac: String,
    /// The switch it hangs off (`s1`).
    pub switch: String,
    /// Its port on that switch.
    pub port: u16,
}

impl fmt::Display for Show {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Connections are counted to a controller the switches connect to; a lab with no
        // controller, or whose switches listen, has none to count.
        let connected =
            if self.controller.starts_with("tcp:") || self.controller.starts_with("ssl:") {
                format!(
                    ", {}/{} switches connected",
                    self.connected,
                    self.switches.len()
                )
            } else {
                String::new()
            };
        writeln!(
            f,
            "{}: {}, OpenFlow {}, controller {}{connected}{}{}",
            title(&self.name),
            self.topo,
            self.of,
            self.controller,
            if self.complete {
                ""
            } else {
                " (INCOMPLETE: pharos lab down, then up again)"
            },
            match (self.running, self.switch.as_str()) {
                (true, _) => "",
                (false, "pharos") => " (Pharos switches NOT RUNNING)",
                (false, _) => " (ovs-vswitchd NOT RUNNING)",
            },
        )?;
        if self.switch == "pharos" {
            writeln!(
                f,
                "Pharos switches: one `pharos switch` each, logs {d}/sN.log; export OVS_RUNDIR={d}; \
                 ovs-ofctl -O {} dump-flows {}",
                self.of_protocol,
                self.switches.first().map(|s| s.bridge.as_str()).unwrap_or("BRIDGE"),
                d = self.dir.display(),
            )?;
        } else {
            writeln!(
                f,
                "OVS: export OVS_RUNDIR={d} OVS_LOGDIR={d} OVS_DBDIR={d}; ovs-ofctl -O {} dump-flows {}",
                self.of_protocol,
                self.switches.first().map(|s| s.bridge.as_str()).unwrap_or("BRIDGE"),
                d = self.dir.display(),
            )?;
        }
        if let Some(t) = &self.tls {
            writeln!(
                f,
                "TLS: switches' certificate {} (key {}), CA {}",
                t.switch_cert.display(),
                t.switch_key.display(),
                t.ca_cert.display()
            )?;
            if let Some(d) = &t.pki_dir {
                writeln!(
                    f,
                    "controller: pharos run --config {} (certificate {}, key {}, client_ca {})",
                    d.join(CONTROLLER_TOML).display(),
                    d.join(pki::CONTROLLER_CERT).display(),
                    d.join(pki::CONTROLLER_KEY).display(),
                    t.ca_cert.display()
                )?;
            }
        }
        writeln!(f, "switches:")?;
        for s in &self.switches {
            writeln!(
                f,
                "  {:<5} bridge {:<12} dpid {}  OpenFlow {}",
                s.name, s.bridge, s.dpid, s.of
            )?;
            for p in &s.ports {
                let peer = if p.peer.starts_with('h') {
                    p.peer.clone()
                } else {
                    format!("{}:{}", p.peer, p.peer_port)
                };
                writeln!(f, "    port {:<3} {:<16} -> {peer}", p.port, p.interface)?;
            }
        }
        writeln!(f, "links:")?;
        for l in &self.links {
            let a = format!("{}:{}", l.a, l.port_a);
            let b = if l.b.starts_with('h') {
                l.b.clone()
            } else {
                format!("{}:{}", l.b, l.port_b)
            };
            writeln!(
                f,
                "  {a:<9} <-> {b:<9} {:<4} ({} <-> {})",
                if l.up { "up" } else { "DOWN" },
                l.interface_a,
                l.interface_b
            )?;
        }
        if !self.probes.is_empty() {
            writeln!(f, "probes (root namespace, for pharos bench switch):")?;
            for p in &self.probes {
                writeln!(
                    f,
                    "  {:<5} {:<15} {}  on {}:{}",
                    p.name, p.interface, p.mac, p.switch, p.port
                )?;
            }
            return Ok(());
        }
        writeln!(f, "hosts:")?;
        for h in &self.hosts {
            writeln!(
                f,
                "  {:<5} {:<15} {}  on {}:{}  (netns {}, {})",
                h.name,
                format!("{}/{}", h.ip, h.prefix_len),
                h.mac,
                h.switch,
                h.port,
                h.netns,
                h.interface
            )?;
        }
        Ok(())
    }
}

/// A lab found in the lab directory.
#[derive(Debug, Clone, Serialize)]
pub struct ListEntry {
    /// The lab's name.
    pub name: String,
    /// Its directory (`$PHAROS_LAB_DIR/NAME`).
    pub dir: PathBuf,
    /// Its topology spec.
    pub topo: String,
    /// Its switches' OpenFlow version: "1.0", "1.3" or "mixed".
    pub of: String,
    /// Where its switches' OpenFlow channel goes.
    pub controller: String,
    /// Whether `up` finished building it.
    pub complete: bool,
    /// Whether its switches run.
    pub running: bool,
}

/// The labs in `dir` (each subdirectory with a `state.json`), by name.
pub fn list(dir: &Path) -> Result<Vec<ListEntry>, LabError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(LabError::io(format!("read {}", dir.display()), e)),
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let path = resolve(&e.path());
        let Ok(Some(state)) = State::load(&path) else {
            continue;
        };
        let running = state
            .daemons
            .iter()
            .filter(|d| d.name == "ovs-vswitchd" || d.name == pharos::SWITCH_COMM)
            .any(|d| daemon_pid(&path, d).is_some());
        out.push(ListEntry {
            name: state.name,
            dir: path,
            topo: state.topo,
            of: state.of,
            controller: state.controller,
            complete: state.complete,
            running,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

impl Lab {
    /// The lab as it is: switches, ports, links (with their state now), hosts.
    pub fn show(&self) -> Show {
        let links_up = iface_states(&self.tools.ip);
        let d = self.dir.display().to_string();
        let env = ["OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR"]
            .iter()
            .map(|k| (k.to_string(), d.clone()))
            .collect();
        let switches = self
            .topo
            .switches
            .iter()
            .map(|s| ShowSwitch {
                name: s.name(),
                bridge: self.names.bridge(s.num),
                dpid: openflow::Dpid(s.dpid).to_string(),
                of: self.of.for_switch(s.num).as_str().into(),
                ports: self
                    .topo
                    .ports(s.num)
                    .into_iter()
                    .map(|(port, peer, peer_port)| ShowPort {
                        port,
                        interface: self.names.switch_iface(s.num, port),
                        peer: peer.to_string(),
                        peer_port,
                    })
                    .collect(),
            })
            .collect();
        let links = self
            .topo
            .links
            .iter()
            .map(|l| {
                let ia = self.names.root_iface(l.a, l.port_a).unwrap_or_default();
                let ib = match l.b {
                    Node::Host(h) if self.state.probe => self.names.probe_iface(h),
                    Node::Host(h) => Names::host_iface(h),
                    Node::Switch(_) => self.names.root_iface(l.b, l.port_b).unwrap_or_default(),
                };
                // A veth's carrier is on only when both ends are up, so the root end's
                // operational state tells for the pair.
                let up = links_up.get(&ia).copied().unwrap_or(false);
                ShowLink {
                    a: l.a.to_string(),
                    port_a: l.port_a,
                    b: l.b.to_string(),
                    port_b: l.port_b,
                    interface_a: ia,
                    interface_b: ib,
                    up,
                }
            })
            .collect();
        let probes = self.probes();
        let hosts = self
            .topo
            .hosts
            .iter()
            .filter(|_| !self.state.probe)
            .map(|h| ShowHost {
                name: h.name(),
                netns: self.names.netns(h.num),
                interface: Names::host_iface(h.num),
                ip: h.ip.to_string(),
                prefix_len: h.prefix_len,
                mac: h.mac_string(),
                switch: format!("s{}", h.switch),
                port: h.port,
            })
            .collect();
        Show {
            name: self.state.name.clone(),
            dir: self.dir.clone(),
            env,
            topo: self.topo.spec.clone(),
            of: self.of.as_str().into(),
            of_protocol: self.of.ovs_protocol().into(),
            controller: self.state.controller.clone(),
            complete: self.state.complete,
            running: self.running(),
            switch: if self.state.pharos_switch.is_some() {
                "pharos".into()
            } else {
                "ovs".into()
            },
            connected: self.connections(),
            switches,
            links,
            hosts,
            probes,
            tls: self.state.tls.clone(),
        }
    }
}
