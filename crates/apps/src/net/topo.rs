//! Topologies for tests and benchmarks, every cable as two links.

use openflow::Dpid;

use super::Link;

/// Both directions of the cable `a:pa — b:pb` (dpids, or their numbers).
pub fn cable(a: impl Into<Dpid>, pa: u32, b: impl Into<Dpid>, pb: u32) -> [Link; 2] {
    let l = Link::new(a, pa, b, pb);
    [l, l.reversed()]
}

/// Switches 1..=n in a line; switch `i` reaches `i + 1` by port 2, `i - 1` by port 1.
pub fn linear(n: u64) -> (Vec<Dpid>, Vec<Link>) {
    let links = (1..n).flat_map(|i| cable(i, 2, i + 1, 1)).collect();
    ((1..=n).map(Dpid).collect(), links)
}

/// The line of [`linear`], closed by a cable from `n` (port 2) back to 1 (port 1).
pub fn ring(n: u64) -> (Vec<Dpid>, Vec<Link>) {
    let (switches, mut links) = linear(n);
    links.extend(cable(n, 2, 1, 1));
    (switches, links)
}

/// A k-ary fat tree (Al-Fares et al., SIGCOMM 2008), `k` even: `(k/2)²` core switches
/// and `k` pods of `k/2` aggregation and `k/2` edge switches, `5k²/4` switches in all
/// (k = 4: 20; k = 28: 980). Every switch has `k` ports, numbered from 1:
///
/// - edge `(pod, e)`: ports `1..=k/2` for hosts, `k/2 + 1 + a` to aggregation `(pod, a)`;
/// - aggregation `(pod, a)`: port `1 + e` to edge `(pod, e)`, `k/2 + 1 + j` to core `(a, j)`;
/// - core `(a, j)`: port `1 + pod` to aggregation `(pod, a)`.
///
/// Dpids: the cores from 1, then each pod's aggregation switches and edge switches.
#[derive(Debug, Clone, Copy)]
pub struct FatTree {
    pub k: u32,
}

impl FatTree {
    fn half(&self) -> u64 {
        u64::from(self.k / 2)
    }

    pub fn core(&self, a: u32, j: u32) -> Dpid {
        Dpid(1 + u64::from(a) * self.half() + u64::from(j))
    }

    pub fn agg(&self, pod: u32, a: u32) -> Dpid {
        let h = self.half();
        Dpid(1 + h * h + u64::from(pod) * 2 * h + u64::from(a))
    }

    pub fn edge(&self, pod: u32, e: u32) -> Dpid {
        Dpid(self.agg(pod, 0).0 + self.half() + u64::from(e))
    }

    pub fn switches(&self) -> Vec<Dpid> {
        let n = self.half() * self.half() + u64::from(self.k) * 2 * self.half();
        (1..=n).map(Dpid).collect()
    }

    pub fn links(&self) -> Vec<Link> {
        let h = self.k / 2;
        let mut links = Vec::new();
        for pod in 0..self.k {
            for a in 0..h {
                let agg = self.agg(pod, a);
                for e in 0..h {
                    links.extend(cable(self.edge(pod, e), h + 1 + a, agg, 1 + e));
                }
                for j in 0..h {
                    links.extend(cable(agg, h + 1 + j, self.core(a, j), 1 + pod));
                }
            }
        }
        links
    }
}
