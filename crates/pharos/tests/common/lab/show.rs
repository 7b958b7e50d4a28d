//! The topology of a lab as `pharos lab show --json` reports it: what the checks need.

use std::collections::BTreeMap;

/// What the checks need of a lab's topology.
#[derive(Debug, Clone)]
pub struct Topo {
    /// Open vSwitch's run directory (`OVS_RUNDIR` for ovs-ofctl).
    pub run_dir: String,
    /// Short name (`s1`) → bridge name, dpid and ports.
    pub switches: BTreeMap<String, Switch>,
    /// Short name (`h1`) → address, MAC and the switch port it hangs off.
    pub hosts: BTreeMap<String, Host>,
    /// Switch-to-switch links.
    pub links: Vec<SwitchLink>,
}

#[derive(Debug, Clone)]
pub struct Switch {
    pub bridge: String,
    pub dpid: u64,
    /// Port number → its interface in the root namespace (`NAME-s1-eth2`).
    pub ports: BTreeMap<u32, String>,
}

#[derive(Debug, Clone)]
pub struct Host {
    pub ip: String,
    /// Lower case, `00:00:00:00:00:01`.
    pub mac: String,
    pub switch: String,
    pub port: u32,
}

impl Host {
    /// The MAC as bytes.
    pub fn mac_bytes(&self) -> [u8; 6] {
        let mut m = [0u8; 6];
        for (i, part) in self.mac.split(':').enumerate() {
            m[i] = u8::from_str_radix(part, 16).expect("a MAC of show --json");
        }
        m
    }
}

/// A cable between two switch ports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchLink {
    pub a: String,
    pub port_a: u32,
    pub b: String,
    pub port_b: u32,
    /// Both ends up (as `show` saw them).
    pub up: bool,
}

impl SwitchLink {
    /// Whether it joins `x` and `y`, in either order.
    pub fn joins(&self, x: &str, y: &str) -> bool {
        (self.a == x && self.b == y) || (self.a == y && self.b == x)
    }
}

fn str_field<'a>(v: &'a serde_json::Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("show --json: no string {key:?} in {v}"))
}

fn num_field(v: &serde_json::Value, key: &str) -> u32 {
    v[key]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or_else(|| panic!("show --json: no number {key:?} in {v}"))
}

/// The topology in `pharos lab show --json`'s output.
pub fn parse_topo(show: &serde_json::Value) -> Topo {
    let run_dir = str_field(&show["env"], "OVS_RUNDIR").to_string();
    let mut switches = BTreeMap::new();
    for s in show["switches"].as_array().expect("show --json: switches") {
        let dpid = &s["dpid"];
        let dpid = dpid
            .as_u64()
            .or_else(|| {
                let d = dpid.as_str()?.parse::<openflow::Dpid>().ok()?;
                Some(d.0)
            })
            .unwrap_or_else(|| panic!("show --json: dpid {dpid}"));
        let ports = s["ports"]
            .as_array()
            .expect("show --json: ports")
            .iter()
            .map(|p| (num_field(p, "port"), str_field(p, "interface").to_string()))
            .collect();
        switches.insert(
            str_field(s, "name").to_string(),
            Switch {
                bridge: str_field(s, "bridge").to_string(),
                dpid,
                ports,
            },
        );
    }
    let mut hosts = BTreeMap::new();
    for h in show["hosts"].as_array().expect("show --json: hosts") {
        let ip = str_field(h, "ip");
        hosts.insert(
            str_field(h, "name").to_string(),
            Host {
                ip: ip.split('/').next().unwrap_or(ip).to_string(),
                mac: str_field(h, "mac").to_ascii_lowercase(),
                switch: str_field(h, "switch").to_string(),
                port: num_field(h, "port"),
            },
        );
    }
    let mut links = Vec::new();
    for l in show["links"].as_array().expect("show --json: links") {
        let (a, b) = (str_field(l, "a"), str_field(l, "b"));
        if switches.contains_key(a) && switches.contains_key(b) {
            links.push(SwitchLink {
                a: a.to_string(),
                port_a: num_field(l, "port_a"),
                b: b.to_string(),
                port_b: num_field(l, "port_b"),
                up: l["up"].as_bool().unwrap_or(false),
            });
        }
    }
    Topo {
        run_dir,
        switches,
        hosts,
        links,
    }
}

impl Topo {
    /// The short name of the switch with datapath id `dpid`.
    pub fn switch_by_dpid(&self, dpid: u64) -> Option<&str> {
        self.switches
            .iter()
            .find(|(_, s)| s.dpid == dpid)
            .map(|(n, _)| n.as_str())
    }

    /// The cable between switches `a` and `b`.
    pub fn link(&self, a: &str, b: &str) -> &SwitchLink {
        self.links
            .iter()
            .find(|l| l.joins(a, b))
            .unwrap_or_else(|| panic!("no link {a} - {b} in the lab"))
    }
}
