//! Names of what a lab creates, prefixed with the lab's name so two labs can coexist.
//!
//! For lab `lab`: bridge `lab-s1`, switch-side interface `lab-s1-eth2` (both in the root
//! network namespace, so global), host network namespace `lab-h1`, and inside it the host's
//! interface `h1-eth0` (private to the namespace, so unprefixed). Linux limits interface
//! names to 15 characters; [`check`] verifies every name of a topology.

use crate::topo::{Node, Topo};
use crate::LabError;

pub use crate::ifname::{MAX_IFNAME_LEN, MAX_LAB_NAME_LEN};

/// Checks a lab name: a lowercase letter, then up to 3 lowercase letters or digits.
pub fn validate_lab_name(name: &str) -> Result<(), LabError> {
    let b = name.as_bytes();
    let ok = !b.is_empty()
        && b.len() <= MAX_LAB_NAME_LEN
        && b[0].is_ascii_lowercase()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(LabError::Invalid(format!(
            "bad lab name {name:?}: 1 to {MAX_LAB_NAME_LEN} characters, a lowercase letter \
             then lowercase letters or digits (for example lab, t1)"
        )))
    }
}

/// The names of one lab.
#[derive(Debug, Clone)]
pub struct Names {
    pub lab: String,
}

impl Names {
    pub fn new(lab: &str) -> Names {
        Names {
            lab: lab.to_string(),
        }
    }

    /// The bridge of switch sN (its internal port is no kernel interface: the `dummy`
    /// datapath type keeps internal ports inside ovs-vswitchd).
    pub fn bridge(&self, switch: u32) -> String {
        format!("{}-s{switch}", self.lab)
    }

    /// The switch-side (root namespace) interface of port `port` of switch sN.
    pub fn switch_iface(&self, switch: u32, port: u16) -> String {
        format!("{}-s{switch}-eth{port}", self.lab)
    }

    /// The network namespace of host hM.
    pub fn netns(&self, host: u32) -> String {
        format!("{}-h{host}", self.lab)
    }

    /// The root-namespace probe interface standing in for host hM (`up --probe`).
    pub fn probe_iface(&self, host: u32) -> String {
        format!("pb-{}-{host}", self.lab)
    }

    /// The interface of host hM inside its namespace.
    pub fn host_iface(host: u32) -> String {
        format!("h{host}-eth0")
    }

    /// The root-namespace end of the veth at `node`:`port`, if the node is a switch.
    pub fn root_iface(&self, node: Node, port: u16) -> Option<String> {
        match node {
            Node::Switch(s) => Some(self.switch_iface(s, port)),
            Node::Host(_) => None,
        }
    }
}

/// Checks that every interface name of `topo` under lab `names` fits in 15 characters.
pub fn check(names: &Names, topo: &Topo) -> Result<(), LabError> {
    let mut all: Vec<String> = topo.switches.iter().map(|s| names.bridge(s.num)).collect();
    for l in &topo.links {
        all.extend(names.root_iface(l.a, l.port_a));
        all.extend(names.root_iface(l.b, l.port_b));
    }
    all.extend(topo.hosts.iter().map(|h| Names::host_iface(h.num)));
    all.extend(topo.hosts.iter().map(|h| names.probe_iface(h.num)));
    match all.into_iter().find(|n| n.len() > MAX_IFNAME_LEN) {
        Some(long) => Err(LabError::Invalid(format!(
            "interface name {long:?} is {} characters; Linux allows {MAX_IFNAME_LEN}: use a \
             shorter --name or a smaller topology",
            long.len()
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lab_names() {
        for ok in ["lab", "a", "t1", "abcd", "z999"] {
            validate_lab_name(ok).unwrap();
        }
        for bad in ["", "abcde", "1ab", "Lab", "a-b", "a_b", "é", "ab c", "-a"] {
            let e = validate_lab_name(bad).unwrap_err().to_string();
            assert!(e.contains("bad lab name"), "{bad}: {e}");
        }
    }

    #[test]
    fn names_have_the_lab_prefix() {
        let n = Names::new("t1");
        assert_eq!(n.bridge(3), "t1-s3");
        assert_eq!(n.switch_iface(3, 2), "t1-s3-eth2");
        assert_eq!(n.netns(4), "t1-h4");
        assert_eq!(Names::host_iface(4), "h4-eth0");
        assert_eq!(n.probe_iface(4), "pb-t1-4");
        assert_eq!(n.root_iface(Node::Host(1), 0), None);
    }

    #[test]
    fn the_15_character_limit_is_checked() {
        let topo = Topo::parse("linear,9999").unwrap();
        // abcd-s9999-eth3 is exactly 15.
        check(&Names::new("abcd"), &topo).unwrap();
        let topo = Topo::parse("fattree,16").unwrap();
        check(&Names::new("abcd"), &topo).unwrap();
        // A longer prefix than the CLI allows would not fit: the check names the culprit.
        let e = check(&Names::new("abcde"), &topo).unwrap_err().to_string();
        assert!(e.contains("is 16 characters; Linux allows 15"), "{e}");
        for spec in ["single,4", "linear,3", "tree,2,2", "ring,5", "fattree,4"] {
            check(&Names::new("abcd"), &Topo::parse(spec).unwrap()).unwrap();
        }
    }
}
