//! Links: finding the one between two nodes, and setting both its ends down or up.

use crate::names::Names;
use crate::topo::{Link, Node};
use crate::{Lab, LabError};

impl Lab {
    fn find_link(&self, a: &str, b: &str) -> Result<Link, LabError> {
        let x = self.node_of(a)?;
        let y = self.node_of(b)?;
        if let Some(l) = self.topo.links.iter().find(|l| l.joins(x, y)) {
            return Ok(*l);
        }
        let peers = |n: Node| -> String {
            let mut v: Vec<String> = self
                .topo
                .links
                .iter()
                .filter_map(|l| {
                    if l.a == n {
                        Some(l.b.to_string())
                    } else if l.b == n {
                        Some(l.a.to_string())
                    } else {
                        None
                    }
                })
                .collect();
            v.dedup();
            v.join(", ")
        };
        Err(LabError::Invalid(format!(
            "no link between {a} and {b} in {} ({a} links to {})",
            self.topo.spec,
            peers(x)
        )))
    }

    /// Sets both ends of the link between `a` and `b` up or down.
    pub fn set_link(&self, a: &str, b: &str, up: bool) -> Result<(), LabError> {
        let l = self.find_link(a, b)?;
        let state = if up { "up" } else { "down" };
        let mut batch = String::new();
        for (n, p) in [(l.a, l.port_a), (l.b, l.port_b)] {
            if let Some(i) = self.names.root_iface(n, p) {
                batch.push_str(&format!("link set {i} {state}\n"));
            }
        }
        self.run(
            self.ip()
                .args(["-batch", "-"])
                .stdin(batch)
                .label(format!("ip link set {state} ({a}-{b})")),
        )?;
        if let Node::Host(h) = l.b {
            self.run(self.ip().arg("-n").arg(self.names.netns(h)).args([
                "link",
                "set",
                &Names::host_iface(h),
                state,
            ]))?;
        }
        Ok(())
    }
}
