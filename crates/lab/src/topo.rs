//! Topologies: pure data, built deterministically from a short spec such as `linear,3`.
//!
//! # Shapes (Mininet's)
//!
//! * `single,K`: switch s1 with hosts h1..hK.
//! * `linear,N`: s1..sN in a line (s1–s2, s2–s3, …), host hI on switch sI.
//! * `tree,D,F`: Mininet's TreeTopo, a complete tree of switches of depth D and fanout F
//!   with F hosts under each leaf switch; depth 1 is one switch with F hosts. Switches and
//!   hosts are numbered depth first, in creation order: tree,2,2 is s1 (root) with s2 (h1,
//!   h2) and s3 (h3, h4).
//! * `ring,N`: linear,N plus a link sN–s1 (N ≥ 3), one host per switch.
//! * `fattree,K`: the k-ary fat tree: (K/2)² core switches s1..s(K/2)², then for each of
//!   the K pods its K/2 aggregation switches and then its K/2 edge switches; K/2 hosts per
//!   edge switch, numbered edge switch by edge switch. In a pod every edge switch links to
//!   every aggregation switch; aggregation switch j (0-based within its pod) links to the
//!   core switches j·K/2+1 .. (j+1)·K/2. K=4: 20 switches, 16 hosts, 32 switch links.
//!
//! # Numbering
//!
//! * Switch sN has datapath id N.
//! * Host hM has the address 10.(M>>16).(M>>8 & 255).(M & 255)/8 (10.0.0.M for M < 256)
//!   and the MAC address 00:00:00:00:(M>>8):(M & 255), both in hex for the MAC.
//! * Each switch numbers its ports 1, 2, … in the order its links are created: first its
//!   hosts (in host order), then its links to other switches in the order the shape creates
//!   them (for linear: s1–s2, s2–s3, …; for ring the closing sN–s1 last; for tree: depth
//!   first, a parent's link to a child after the child's subtree, as Mininet does; for
//!   fattree: the edge–aggregation links pod by pod, then the aggregation–core links).
//!   A host's only port is 0 (`hM-eth0`).
//! * [`Topo::links`] lists the host links first (in host order), then the switch links in
//!   creation order. In a link, `a` is always a switch; `b` is a switch or a host.

use std::fmt;
use std::net::Ipv4Addr;

use serde::Serialize;

use crate::ifname::MAX_LAB_NAME_LEN;
use crate::words::span;
use crate::LabError;

pub use crate::ifname::MAX_SUFFIX_LEN;

/// Hosts are numbered into 16 bits of MAC address.
pub const MAX_HOSTS: u64 = 65_535;

/// A node of the topology: switch sN or host hM (numbers from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    Switch(u32),
    Host(u32),
}

impl Node {
    /// Parses `s3` or `h12`.
    pub fn parse(s: &str) -> Option<Node> {
        let (kind, num) = s.split_at_checked(1)?;
        if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) || num.starts_with('0') {
            return None;
        }
        let n: u32 = num.parse().ok()?;
        match kind {
            "s" => Some(Node::Switch(n)),
            "h" => Some(Node::Host(n)),
            _ => None,
        }
    }

    pub fn is_host(self) -> bool {
        matches!(self, Node::Host(_))
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Switch(n) => write!(f, "s{n}"),
            Node::Host(n) => write!(f, "h{n}"),
        }
    }
}

/// A switch: sN with datapath id N.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switch {
    pub num: u32,
    pub dpid: u64,
}

impl Switch {
    pub fn name(&self) -> String {
        format!("s{}", self.num)
    }
}

/// A host: hM, attached to one switch port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub num: u32,
    pub ip: Ipv4Addr,
    pub prefix_len: u8,
    pub mac: [u8; 6],
    /// The switch number and port the host is attached to.
    pub switch: u32,
    pub port: u16,
}

impl Host {
    pub fn name(&self) -> String {
        format!("h{}", self.num)
    }

    pub fn mac_string(&self) -> String {
        let m = self.mac;
        format!(
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}

/// A link between two ports. `a` is always a switch; for a host link, `b` is the host
/// and `port_b` is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Link {
    #[serde(serialize_with = "ser_node")]
    pub a: Node,
    pub port_a: u16,
    #[serde(serialize_with = "ser_node")]
    pub b: Node,
    pub port_b: u16,
}

fn ser_node<S: serde::Serializer>(n: &Node, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(n)
}

impl Link {
    /// Whether this link joins `x` and `y`, in either order.
    pub fn joins(&self, x: Node, y: Node) -> bool {
        (self.a == x && self.b == y) || (self.a == y && self.b == x)
    }
}

/// A topology: switches, hosts and links, numbered as the module documentation says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topo {
    /// The spec it was parsed from, normalised (`linear,3`).
    pub spec: String,
    pub switches: Vec<Switch>,
    pub hosts: Vec<Host>,
    pub links: Vec<Link>,
}

/// What a shape produces before ports are numbered: the number of switches, the switch of
/// each host (host M is index M-1), and the switch links in creation order.
struct Shape {
    switches: u32,
    host_switch: Vec<u32>,
    switch_links: Vec<(u32, u32)>,
}

fn bad(spec: &str, why: impl fmt::Display) -> LabError {
    LabError::Invalid(format!("bad topology {spec:?}: {why}"))
}

const SHAPES: &str =
    "expected single,K | linear,N | tree,DEPTH,FANOUT | ring,N | fattree,K (for example linear,3)";

impl Topo {
    /// Parses a spec (`single,4`, `linear,3`, `tree,2,2`, `ring,4`, `fattree,4`).
    pub fn parse(spec: &str) -> Result<Topo, LabError> {
        let spec = spec.trim();
        let mut parts = spec.split(',').map(str::trim);
        let kind = parts.next().unwrap_or_default().to_ascii_lowercase();
        let nums: Vec<&str> = parts.collect();
        let num = |i: usize, what: &str| -> Result<u64, LabError> {
            let s = nums[i];
            s.parse::<u64>()
                .map_err(|_| bad(spec, format!("{what} must be a number, not {s:?}")))
        };
        let arity = |n: usize, form: &str| -> Result<(), LabError> {
            if nums.len() == n {
                Ok(())
            } else {
                Err(bad(spec, format!("expected {form}")))
            }
        };
        let shape = match kind.as_str() {
            "single" => {
                arity(1, "single,K")?;
                let k = num(0, "K")?;
                at_least(spec, "single K", k, 1)?;
                hosts_fit(spec, k)?;
                Shape {
                    switches: 1,
                    host_switch: vec![1; k as usize],
                    switch_links: vec![],
                }
            }
            "linear" | "ring" => {
                let ring = kind == "ring";
                arity(1, if ring { "ring,N" } else { "linear,N" })?;
                let n = num(0, "N")?;
                at_least(spec, &format!("{kind} N"), n, if ring { 3 } else { 1 })?;
                hosts_fit(spec, n)?;
                let n = n as u32;
                let mut switch_links: Vec<(u32, u32)> = (1..n).map(|i| (i, i + 1)).collect();
                if ring {
                    switch_links.push((n, 1));
                }
                Shape {
                    switches: n,
                    host_switch: (1..=n).collect(),
                    switch_links,
                }
            }
            "tree" => {
                arity(2, "tree,DEPTH,FANOUT")?;
                let depth = num(0, "DEPTH")?;
                let fanout = num(1, "FANOUT")?;
                at_least(spec, "tree DEPTH", depth, 1)?;
                at_least(spec, "tree FANOUT", fanout, 1)?;
                let hosts = u32::try_from(depth)
                    .ok()
                    .and_then(|d| fanout.checked_pow(d))
                    .unwrap_or(u64::MAX);
                hosts_fit(spec, hosts)?;
                // Hosts fit in 16 bits, so depth and fanout are small from here on.
                let mut shape = Shape {
                    switches: 0,
                    host_switch: vec![],
                    switch_links: vec![],
                };
                add_tree(&mut shape, depth as u32, fanout as u32);
                shape
            }
            "fattree" => {
                arity(1, "fattree,K")?;
                let k = num(0, "K")?;
                if k < 2 || k % 2 != 0 {
                    return Err(bad(
                        spec,
                        format!("fattree K must be even and ≥ 2 (got {k})"),
                    ));
                }
                hosts_fit(spec, k.saturating_pow(3) / 4)?;
                fat_tree(k as u32)
            }
            "" => return Err(bad(spec, SHAPES)),
            other => return Err(bad(spec, format!("unknown shape {other:?}: {SHAPES}"))),
        };
        let topo = assemble(format!("{kind},{}", nums.join(",")), shape);
        if let Some(long) = topo.longest_suffix() {
            if long.len() > MAX_SUFFIX_LEN {
                return Err(bad(
                    spec,
                    format!(
                        "too large: switch interface {long:?} would make Linux interface names \
                         longer than 15 characters with a lab name of up to {} characters",
                        MAX_LAB_NAME_LEN
                    ),
                ));
            }
        }
        Ok(topo)
    }

    /// The longest `sN-ethP` among the switch ports.
    pub fn longest_suffix(&self) -> Option<String> {
        self.links
            .iter()
            .flat_map(|l| [(l.a, l.port_a), (l.b, l.port_b)])
            .filter(|(n, _)| !n.is_host())
            .map(|(n, p)| format!("{n}-eth{p}"))
            .max_by_key(String::len)
    }

    pub fn switch(&self, num: u32) -> Option<&Switch> {
        self.switches.get((num as usize).checked_sub(1)?)
    }

    pub fn host(&self, num: u32) -> Option<&Host> {
        self.hosts.get((num as usize).checked_sub(1)?)
    }

    /// Whether `n` is a node of this topology.
    pub fn has(&self, n: Node) -> bool {
        match n {
            Node::Switch(s) => self.switch(s).is_some(),
            Node::Host(h) => self.host(h).is_some(),
        }
    }

    /// The links of switch `num` as (its port, the peer, the peer's port), by port number.
    pub fn ports(&self, num: u32) -> Vec<(u16, Node, u16)> {
        let me = Node::Switch(num);
        let mut ports: Vec<(u16, Node, u16)> = self
            .links
            .iter()
            .flat_map(|l| {
                let mut v = Vec::new();
                if l.a == me {
                    v.push((l.port_a, l.b, l.port_b));
                }
                if l.b == me {
                    v.push((l.port_b, l.a, l.port_a));
                }
                v
            })
            .collect();
        ports.sort_unstable();
        ports
    }

    /// The switch-to-switch links.
    pub fn switch_links(&self) -> impl Iterator<Item = &Link> {
        self.links.iter().filter(|l| !l.b.is_host())
    }

    /// Re-attaches host `host` to switch `switch`, on a new port numbered after the
    /// switch's highest (its old port is gone); returns the new port. Moving a host to the
    /// switch it is on gives it a new port there too (a re-plug). The spec is unchanged:
    /// a lab records its moves and replays them on the parsed spec.
    pub fn move_host(&mut self, host: u32, switch: u32) -> Result<u16, LabError> {
        if self.host(host).is_none() {
            return Err(LabError::Invalid(format!(
                "no host h{host} in {} (hosts {})",
                self.spec,
                span("h", self.hosts.len())
            )));
        }
        if self.switch(switch).is_none() {
            return Err(LabError::Invalid(format!(
                "no switch s{switch} in {} (switches {})",
                self.spec,
                span("s", self.switches.len())
            )));
        }
        let port = self
            .ports(switch)
            .iter()
            .map(|p| p.0)
            .max()
            .unwrap_or(0)
            .checked_add(1)
            .ok_or_else(|| LabError::Invalid(format!("s{switch} has no free port number")))?;
        let link = self
            .links
            .iter_mut()
            .find(|l| l.b == Node::Host(host))
            .expect("every host has a link");
        link.a = Node::Switch(switch);
        link.port_a = port;
        let h = &mut self.hosts[host as usize - 1];
        h.switch = switch;
        h.port = port;
        Ok(port)
    }
}

fn at_least(spec: &str, what: &str, n: u64, min: u64) -> Result<(), LabError> {
    if n < min {
        Err(bad(spec, format!("{what} must be ≥ {min} (got {n})")))
    } else {
        Ok(())
    }
}

fn hosts_fit(spec: &str, hosts: u64) -> Result<(), LabError> {
    if hosts > MAX_HOSTS {
        Err(bad(
            spec,
            format!("too many hosts ({hosts}); at most {MAX_HOSTS}"),
        ))
    } else {
        Ok(())
    }
}

/// Mininet's TreeTopo.addTree: returns the node it made.
fn add_tree(shape: &mut Shape, depth: u32, fanout: u32) -> Node {
    if depth == 0 {
        // The caller (the parent switch) records which switch the host hangs off.
        shape.host_switch.push(0);
        return Node::Host(shape.host_switch.len() as u32);
    }
    shape.switches += 1;
    let me = shape.switches;
    for _ in 0..fanout {
        match add_tree(shape, depth - 1, fanout) {
            Node::Host(h) => shape.host_switch[h as usize - 1] = me,
            Node::Switch(c) => shape.switch_links.push((me, c)),
        }
    }
    Node::Switch(me)
}

fn fat_tree(k: u32) -> Shape {
    let half = k / 2;
    let cores = half * half;
    // Pod p (0-based): aggregation switches agg(p, j), then edge switches edge(p, j).
    let agg = |p: u32, j: u32| cores + p * k + j + 1;
    let edge = |p: u32, j: u32| cores + p * k + half + j + 1;
    let mut host_switch = Vec::new();
    let mut switch_links = Vec::new();
    for p in 0..k {
        for e in 0..half {
            for _ in 0..half {
                host_switch.push(edge(p, e));
            }
        }
    }
    for p in 0..k {
        for e in 0..half {
            for a in 0..half {
                switch_links.push((edge(p, e), agg(p, a)));
            }
        }
    }
    for p in 0..k {
        for a in 0..half {
            for c in 0..half {
                switch_links.push((agg(p, a), a * half + c + 1));
            }
        }
    }
    Shape {
        switches: cores + k * k,
        host_switch,
        switch_links,
    }
}

/// Numbers ports (hosts of a switch first, then switch links in creation order).
fn assemble(spec: String, shape: Shape) -> Topo {
    let mut next_port = vec![1u16; shape.switches as usize + 1];
    let mut take = |s: u32| {
        let p = next_port[s as usize];
        next_port[s as usize] += 1;
        p
    };
    let mut hosts = Vec::with_capacity(shape.host_switch.len());
    let mut links = Vec::with_capacity(shape.host_switch.len() + shape.switch_links.len());
    for (i, &s) in shape.host_switch.iter().enumerate() {
        let m = i as u32 + 1;
        let port = take(s);
        hosts.push(Host {
            num: m,
            ip: Ipv4Addr::new(10, (m >> 16) as u8, (m >> 8) as u8, m as u8),
            prefix_len: 8,
            mac: [0, 0, 0, 0, (m >> 8) as u8, m as u8],
            switch: s,
            port,
        });
        links.push(Link {
            a: Node::Switch(s),
            port_a: port,
            b: Node::Host(m),
            port_b: 0,
        });
    }
    for &(x, y) in &shape.switch_links {
        let port_a = take(x);
        let port_b = take(y);
        links.push(Link {
            a: Node::Switch(x),
            port_a,
            b: Node::Switch(y),
            port_b,
        });
    }
    Topo {
        spec,
        switches: (1..=shape.switches)
            .map(|n| Switch {
                num: n,
                dpid: u64::from(n),
            })
            .collect(),
        hosts,
        links,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(spec: &str) -> (usize, usize, usize) {
        let t = Topo::parse(spec).unwrap();
        (t.switches.len(), t.hosts.len(), t.switch_links().count())
    }

    #[test]
    fn shapes_have_mininets_counts() {
        assert_eq!(counts("single,4"), (1, 4, 0));
        assert_eq!(counts("linear,3"), (3, 3, 2));
        assert_eq!(counts("linear,1"), (1, 1, 0));
        assert_eq!(counts("tree,1,3"), (1, 3, 0));
        assert_eq!(counts("tree,2,2"), (3, 4, 2));
        assert_eq!(counts("tree,3,2"), (7, 8, 6));
        assert_eq!(counts("ring,3"), (3, 3, 3));
        assert_eq!(counts("ring,5"), (5, 5, 5));
        assert_eq!(counts("fattree,2"), (5, 2, 4));
        assert_eq!(counts("fattree,4"), (20, 16, 32));
        assert_eq!(counts("fattree,6"), (45, 54, 108));
    }

    #[test]
    fn every_port_is_used_once_and_numbered_from_one() {
        for spec in ["single,4", "linear,4", "tree,3,3", "ring,4", "fattree,4"] {
            let t = Topo::parse(spec).unwrap();
            for s in &t.switches {
                let ports: Vec<u16> = t.ports(s.num).iter().map(|p| p.0).collect();
                let expect: Vec<u16> = (1..=ports.len() as u16).collect();
                assert_eq!(ports, expect, "{spec} {}", s.name());
            }
            for h in &t.hosts {
                let links: Vec<_> = t
                    .links
                    .iter()
                    .filter(|l| l.b == Node::Host(h.num))
                    .collect();
                assert_eq!(links.len(), 1);
                assert_eq!(
                    (links[0].a, links[0].port_a),
                    (Node::Switch(h.switch), h.port)
                );
            }
        }
    }

    #[test]
    fn linear_ports_follow_mininet() {
        let t = Topo::parse("linear,3").unwrap();
        let s2 = t.ports(2);
        assert_eq!(
            s2,
            vec![
                (1, Node::Host(2), 0),
                (2, Node::Switch(1), 2),
                (3, Node::Switch(3), 2)
            ]
        );
        assert_eq!(
            t.ports(1),
            vec![(1, Node::Host(1), 0), (2, Node::Switch(2), 2)]
        );
        assert_eq!(
            t.ports(3),
            vec![(1, Node::Host(3), 0), (2, Node::Switch(2), 3)]
        );
    }

    #[test]
    fn a_moved_host_takes_the_next_port_and_leaves_its_old_one() {
        let mut t = Topo::parse("linear,3").unwrap();
        assert_eq!(t.move_host(1, 3).unwrap(), 3);
        assert_eq!(
            t.ports(3),
            vec![
                (1, Node::Host(3), 0),
                (2, Node::Switch(2), 3),
                (3, Node::Host(1), 0)
            ]
        );
        assert_eq!(t.ports(1), vec![(2, Node::Switch(2), 2)]);
        assert_eq!((t.host(1).unwrap().switch, t.host(1).unwrap().port), (3, 3));
        // Links keep their order (host links first, in host order) and count.
        assert_eq!(t.links.len(), 5);
        assert_eq!(t.links[0].b, Node::Host(1));
        assert_eq!((t.links[0].a, t.links[0].port_a), (Node::Switch(3), 3));
        // Back home: a port after s1's highest (2), not its old 1.
        assert_eq!(t.move_host(1, 1).unwrap(), 3);
        assert_eq!(t.ports(3).len(), 2);
        // The same switch again: a new port there too.
        assert_eq!(t.move_host(1, 1).unwrap(), 4);
        assert_eq!(
            t.ports(1),
            vec![(2, Node::Switch(2), 2), (4, Node::Host(1), 0)]
        );
        assert_eq!(t.spec, "linear,3");
        for bad in [(4, 1), (1, 4), (0, 1)] {
            assert!(t.move_host(bad.0, bad.1).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn ring_closes_last() {
        let t = Topo::parse("ring,3").unwrap();
        let last = t.links.last().unwrap();
        assert_eq!(
            (last.a, last.port_a, last.b, last.port_b),
            (Node::Switch(3), 3, Node::Switch(1), 3)
        );
    }

    #[test]
    fn tree_2_2_is_mininets() {
        let t = Topo::parse("tree,2,2").unwrap();
        assert_eq!(
            t.ports(1),
            vec![(1, Node::Switch(2), 3), (2, Node::Switch(3), 3)]
        );
        assert_eq!(
            t.ports(2),
            vec![
                (1, Node::Host(1), 0),
                (2, Node::Host(2), 0),
                (3, Node::Switch(1), 1)
            ]
        );
        assert_eq!(
            t.ports(3),
            vec![
                (1, Node::Host(3), 0),
                (2, Node::Host(4), 0),
                (3, Node::Switch(1), 2)
            ]
        );
    }

    #[test]
    fn fattree_4_layers() {
        let t = Topo::parse("fattree,4").unwrap();
        // Cores s1..s4 have one port per pod.
        for c in 1..=4 {
            assert_eq!(t.ports(c).len(), 4, "core s{c}");
            assert!(t
                .ports(c)
                .iter()
                .all(|p| matches!(p.1, Node::Switch(n) if n > 4)));
        }
        // Pod 0: aggregation s5, s6; edge s7, s8 with h1,h2 and h3,h4.
        assert_eq!(
            t.ports(7),
            vec![
                (1, Node::Host(1), 0),
                (2, Node::Host(2), 0),
                (3, Node::Switch(5), 1),
                (4, Node::Switch(6), 1)
            ]
        );
        // Aggregation: edges down first, then cores; aggregation j reaches cores j*2+1, j*2+2.
        assert_eq!(
            t.ports(6),
            vec![
                (1, Node::Switch(7), 4),
                (2, Node::Switch(8), 4),
                (3, Node::Switch(3), 1),
                (4, Node::Switch(4), 1)
            ]
        );
        assert_eq!(t.host(16).unwrap().switch, 20);
        // Every switch has K ports.
        assert!(t.switches.iter().all(|s| t.ports(s.num).len() == 4));
    }

    #[test]
    fn addresses_and_macs_follow_the_host_number() {
        let t = Topo::parse("single,300").unwrap();
        let h1 = t.host(1).unwrap();
        assert_eq!(h1.ip, Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(h1.mac_string(), "00:00:00:00:00:01");
        let h258 = t.host(258).unwrap();
        assert_eq!(h258.ip, Ipv4Addr::new(10, 0, 1, 2));
        assert_eq!(h258.mac_string(), "00:00:00:00:01:02");
        assert_eq!(h258.prefix_len, 8);
        assert_eq!(t.switch(1).unwrap().dpid, 1);
        let t = Topo::parse("linear,12").unwrap();
        assert_eq!(t.switch(12).unwrap().dpid, 12);
    }

    #[test]
    fn specs_are_normalised() {
        assert_eq!(Topo::parse(" Linear, 3 ").unwrap().spec, "linear,3");
        assert_eq!(Topo::parse("tree,2,2").unwrap().spec, "tree,2,2");
    }

    fn err(spec: &str) -> String {
        Topo::parse(spec).unwrap_err().to_string()
    }

    #[test]
    fn bad_specs_say_why() {
        assert!(
            err("fattree,3").contains("fattree K must be even and ≥ 2"),
            "{}",
            err("fattree,3")
        );
        assert!(err("fattree,0").contains("fattree K must be even and ≥ 2"));
        assert!(err("ring,2").contains("ring N must be ≥ 3"));
        assert!(err("linear,0").contains("linear N must be ≥ 1"));
        assert!(err("single,x").contains("K must be a number"));
        assert!(err("tree,2").contains("expected tree,DEPTH,FANOUT"));
        assert!(err("star,3").contains("unknown shape \"star\""));
        assert!(err("").contains("expected single,K"));
        assert!(err("single,70000").contains("too many hosts"));
        assert!(err("tree,40,40").contains("too many hosts"));
        assert!(err("tree,9999999999,2").contains("too many hosts"));
    }

    #[test]
    fn names_stay_within_15_characters() {
        // s9999-eth3 is 10 characters: fits behind "abcd-".
        assert!(Topo::parse("linear,9999").is_ok());
        let e = err("linear,10000");
        assert!(e.contains("longer than 15 characters"), "{e}");
        // fattree,16: 320 switches of 16 ports: s320-eth16 (10) fits; fattree,32 does not.
        assert!(Topo::parse("fattree,16").is_ok());
        assert!(err("fattree,40").contains("longer than 15"));
        assert!(err("single,10000").contains("longer than 15"));
    }

    #[test]
    fn node_names_parse() {
        assert_eq!(Node::parse("s12"), Some(Node::Switch(12)));
        assert_eq!(Node::parse("h3"), Some(Node::Host(3)));
        for bad in ["", "s", "x1", "s01", "s1a", "h-1", "sé"] {
            assert_eq!(Node::parse(bad), None, "{bad}");
        }
        assert_eq!(Node::Host(7).to_string(), "h7");
    }
}
