//! `--topology`: the emulated switches wired into a network, so that a controller's
//! link discovery finds links between them (for the web UI's scale benchmark, and to
//! load topology discovery itself).
//!
//! Nothing moves between switches but discovery frames: an LLDP frame (EtherType
//! 0x88cc) the controller sends out of port `p` of switch `s` in a PACKET_OUT is handed
//! to the switch wired to `(s, p)`, which sends it back to the controller in a
//! PACKET_IN from its own port. Every other frame goes nowhere. Hosts stay where
//! `--macs` puts them, behind ports 1 and 2; the wiring uses ports 3 and up:
//!
//! - `ring`: switch `i` port 3 to switch `i + 1` port 4, the last back to the first
//!   (two switches: one cable; one switch: none). Four ports each.
//! - `tree:F` (`tree` is `tree:4`): switch 1 is the root; switch `i > 1` hangs from
//!   switch `(i - 2) / F + 1` by its port 3, on its parent's port `4 + (i - 2) % F`.
//!   `3 + F` ports each.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

/// How the switches are wired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Each switch to the next, the last to the first.
    Ring,
    /// A tree with this many children per switch.
    Tree(u32),
}

impl FromStr for Shape {
    type Err = String;

    fn from_str(s: &str) -> Result<Shape, String> {
        match s {
            "ring" => Ok(Shape::Ring),
            "tree" => Ok(Shape::Tree(4)),
            _ => match s.strip_prefix("tree:").map(str::parse::<u32>) {
                Some(Ok(f)) if (1..=250).contains(&f) => Ok(Shape::Tree(f)),
                _ => Err(format!(
                    "topology {s:?}: expected ring, tree or tree:FANOUT (1 to 250)"
                )),
            },
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Ring => write!(f, "ring"),
            Shape::Tree(n) => write!(f, "tree:{n}"),
        }
    }
}

/// The cables between switches `1..=n` of a shape: each port's peer.
#[derive(Debug, Clone, Default)]
pub struct Wiring {
    /// (dpid, port) -> (dpid, port), both ways.
    peers: HashMap<(u64, u32), (u64, u32)>,
    /// Ports each switch has (the highest port number used).
    ports: u32,
}

impl Wiring {
    /// Wires switches 1 to `n` into `shape`.
    pub fn new(shape: Shape, n: u64) -> Wiring {
        let mut w = Wiring {
            peers: HashMap::new(),
            ports: match shape {
                Shape::Ring => 4,
                Shape::Tree(f) => 3 + f,
            },
        };
        match shape {
            Shape::Ring if n == 2 => w.cable((1, 3), (2, 4)),
            Shape::Ring if n > 2 => {
                for i in 1..=n {
                    w.cable((i, 3), (i % n + 1, 4));
                }
            }
            Shape::Ring => {}
            Shape::Tree(f) => {
                for i in 2..=n {
                    let parent = (i - 2) / u64::from(f) + 1;
                    let port = 4 + ((i - 2) % u64::from(f)) as u32;
                    w.cable((i, 3), (parent, port));
                }
            }
        }
        w
    }

    fn cable(&mut self, a: (u64, u32), b: (u64, u32)) {
        self.peers.insert(a, b);
        self.peers.insert(b, a);
    }

    /// Where a frame sent out of `port` of switch `dpid` arrives.
    pub fn peer(&self, dpid: u64, port: u32) -> Option<(u64, u32)> {
        self.peers.get(&(dpid, port)).copied()
    }

    /// Ports each switch has.
    pub fn ports(&self) -> u32 {
        self.ports
    }

    /// Cables (each counted once).
    pub fn cables(&self) -> usize {
        self.peers.len() / 2
    }
}

/// The output port and the frame of an LLDP PACKET_OUT (`m` a whole 1.0 or 1.3
/// message), or `None` for any other message, a frame that is not LLDP, or an output
/// to anything but one physical port.
pub fn lldp_out(m: &[u8]) -> Option<(u32, &[u8])> {
    // PACKET_OUT: 1.0 §5.3.6: header, buffer_id, in_port (16 bits), actions_len,
    // actions, data; 1.3 §7.3.7: header, buffer_id, in_port (32 bits), actions_len,
    // 6 bytes of pad, actions, data.
    let (actions_at, wide) = match m.first()? {
        1 => (16, false),
        4 => (24, true),
        _ => return None,
    };
    if *m.get(1)? != 13 || m.len() < actions_at {
        return None;
    }
    let len_at = if wide { 16 } else { 14 };
    let actions_len = usize::from(u16::from_be_bytes([m[len_at], m[len_at + 1]]));
    let data = m.get(actions_at + actions_len..)?;
    if data.len() < 14 || data[12..14] != [0x88, 0xcc] {
        return None;
    }
    let actions = &m[actions_at..actions_at + actions_len];
    let mut out = None;
    let mut at = 0;
    while at + 4 <= actions.len() {
        let ty = u16::from_be_bytes([actions[at], actions[at + 1]]);
        let len = usize::from(u16::from_be_bytes([actions[at + 2], actions[at + 3]]));
        if len < 8 || at + len > actions.len() {
            return None;
        }
        if ty == 0 {
            let port = if wide {
                u32::from_be_bytes(actions[at + 4..at + 8].try_into().ok()?)
            } else {
                u32::from(u16::from_be_bytes([actions[at + 4], actions[at + 5]]))
            };
            // Reserved ports (flood, all, controller...) lead to no single peer.
            let physical = if wide {
                port < 0xffff_ff00
            } else {
                port < 0xff00
            };
            if !physical || out.is_some() {
                return None;
            }
            out = Some(port);
        }
        at += len;
    }
    Some((out?, data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use openflow::model::{Action, PacketOut, PortNo};
    use openflow::Version;

    #[test]
    fn a_ring_and_a_tree_are_wired_both_ways() {
        let r = Wiring::new(Shape::Ring, 5);
        assert_eq!(r.cables(), 5);
        assert_eq!(r.peer(5, 3), Some((1, 4)));
        assert_eq!(r.peer(1, 4), Some((5, 3)));
        assert_eq!(r.peer(1, 1), None, "host ports lead to no switch");
        assert_eq!(Wiring::new(Shape::Ring, 2).cables(), 1);
        let t = Wiring::new(Shape::Tree(3), 13);
        assert_eq!(t.cables(), 12);
        assert_eq!(t.ports(), 6);
        assert_eq!(t.peer(2, 3), Some((1, 4)));
        assert_eq!(t.peer(4, 3), Some((1, 6)));
        assert_eq!(t.peer(5, 3), Some((2, 4)));
        assert_eq!(t.peer(2, 4), Some((5, 3)));
        assert_eq!("tree:2".parse(), Ok(Shape::Tree(2)));
        assert!("tree:0".parse::<Shape>().is_err());
        assert!("mesh".parse::<Shape>().is_err());
    }

    #[test]
    fn the_port_and_frame_of_an_lldp_packet_out_in_either_version() {
        let mut lldp = vec![0u8; 60];
        lldp[0..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0, 0, 0x0e]);
        lldp[12..14].copy_from_slice(&[0x88, 0xcc]);
        let mut ip = lldp.clone();
        ip[12..14].copy_from_slice(&[0x08, 0x00]);
        for v in [Version::V1_0, Version::V1_3] {
            let encode = |frame: &[u8], port: PortNo| {
                let actions = [Action::Output {
                    port,
                    max_len: 0xffff,
                }];
                let mut out = Vec::new();
                PacketOut::unbuffered(frame, PortNo::Controller, &actions)
                    .encode(v, 7, &mut out)
                    .unwrap();
                out
            };
            let m = encode(&lldp, PortNo::Physical(5));
            assert_eq!(lldp_out(&m), Some((5, &lldp[..])), "{v}");
            assert_eq!(
                lldp_out(&encode(&ip, PortNo::Physical(5))),
                None,
                "{v}: not LLDP"
            );
            assert_eq!(
                lldp_out(&encode(&lldp, PortNo::Flood)),
                None,
                "{v}: flooded"
            );
        }
    }
}
