//! The routing app's flood policy: where a broadcast (or a frame for an unknown host)
//! may go, so that a network with loops does not storm, not even while discovery is
//! still finding its cables.
//!
//! **Ports.** Out of a switch, a flood takes
//!
//! - its spanning-tree ports ([`SpanningTree`]): each switch is reached once;
//! - its edge ports, those no known link uses: hosts are behind them, or a switch whose
//!   cable discovery has not found yet;
//! - never a known link port outside the tree, the port it came in by, a port that is
//!   down or marked no-flood, or a reserved port; and never the switch's FLOOD port,
//!   which knows nothing of the tree.
//!
//! **Before discovery.** A cable not found yet makes two edge ports, so a loop of such
//! cables would carry a flood around for ever. Three things keep that window short
//! and harmless:
//!
//! 1. The topology app probes a switch's ports as soon as it joins, and a port as soon
//!    as it comes up, so a cable is found within a round trip of its second end being
//!    there (not within a discovery interval).
//! 2. Repeats are dropped: each switch floods a given frame at most once within
//!    [`REPEAT_WINDOW`] (a loop through the controller takes milliseconds per hop; a
//!    host repeats a broadcast after a second or more). So a flood crosses each
//!    undiscovered cable at most once each way, and dies where its copies meet.
//!    A copy that arrives by a known link port outside the tree went around a known
//!    loop: dropped as well.
//! 3. Unicast to a known host never floods: when the destination is known but no route
//!    reaches its switch yet ([`deliver`]), the controller sends the frame straight out
//!    of the destination's port, on the destination's switch. Nothing crosses a cable,
//!    so nothing comes back, and the host gets it once. (Should that port be a cable
//!    after all, a host learned there from a stale flow, the frame comes back once to
//!    the switch that asked, as a repeat, and is dropped: it cannot bounce.)
//!
//! The copies that do cross an undiscovered cable reach the device app on ports that
//! look like edge ports; its move rule (`devices::moves`) tells them from moves, so the
//! hosts stay where they are.

use std::hash::BuildHasher;
use std::time::{Duration, Instant};

use controller::app::{Dpid, Flow, PacketIn, SwitchCtx, SwitchInfo};
use openflow::model::{Action, EncodedActions, PacketOut, PortNo};
use openflow::Version;

use super::tree::SpanningTree;

/// OpenFlow 1.0's OFPPC_NO_FLOOD (bit 4, unused in 1.3): the port is left out of floods.
const NO_FLOOD: u32 = 1 << 4;
/// Port numbers above this are reserved (LOCAL, CONTROLLER, ...), not flooded.
const MAX_PHYSICAL_PORT: u32 = 0xffff_ff00;
/// A frame flooded again by a switch within this time is a copy that went around a
/// loop (see the module doc).
pub const REPEAT_WINDOW: Duration = Duration::from_millis(250);
/// Floods remembered per switch for the repeat check: [`RECENT_SETS`] sets of two
/// (set-associative, as a CPU cache: a look-up reads one set, not a list).
const RECENT_SETS: usize = 32;

/// Per switch, what flooding needs. Owned by the switch's worker (per-switch app
/// state), so a flood reads no shared state beyond the tree's version.
#[derive(Debug, Default)]
pub struct Floods {
    /// Scratch space for the output actions (no allocation per flood).
    actions: Vec<Action>,
    /// The outputs to `plan`'s ports, encoded for the switch's version: a flood copies
    /// them but the in-port's (encoding each output per flood was a tenth of the
    /// default apps' time under cbench's load). `None`: not encodable (the flood then
    /// goes through `actions`, and fails there with a logged reason).
    encoded: Option<EncodedActions>,
    /// This switch's recent floods: the frame's hash and when, in the set its hash
    /// picks, two per set (empty until the first flood).
    recent: Vec<[Recent; 2]>,
    /// The ports a flood from this switch goes out of, every in-port included (2c):
    /// computed from the tree and the switch's ports, reused until either changes.
    plan: Vec<u32>,
    /// The ports a flood may not come in by (2a): inter-switch ports off the tree.
    off_tree: Vec<u32>,
    /// The tree version `plan` and `off_tree` were computed at; `None`: to compute
    /// (never computed, or the switch's ports changed).
    planned_at: Option<u64>,
}

impl Floods {
    /// Forgets the plan: the switch's ports changed (PORT_STATUS).
    pub fn replan(&mut self) {
        self.planned_at = None;
    }

    /// Whether the plan was computed at tree version `version` (and the switch's ports
    /// have not changed since): a flood then needs no look at the tree.
    pub fn is_planned(&self, version: u64) -> bool {
        self.planned_at == Some(version)
    }

    /// Computes the plan of this switch from the tree (at `version`) and its ports,
    /// unless it is current.
    pub fn plan(&mut self, tree: &SpanningTree, version: u64, info: &SwitchInfo) {
        if self.planned_at == Some(version) {
            return;
        }
        let here = info.dpid;
        self.plan.clear();
        self.off_tree.clear();
        for port in &info.ports {
            let n = port.port_no;
            if n >= MAX_PHYSICAL_PORT {
                continue;
            }
            if !tree.floods(here, n) {
                self.off_tree.push(n);
            } else if port.is_up() && port.config & NO_FLOOD == 0 {
                self.plan.push(n);
            }
        }
        self.actions.clear();
        let outputs = self
            .plan
            .iter()
            .map(|&n| Action::output(PortNo::from_u32(n)));
        self.actions.extend(outputs);
        self.encoded = EncodedActions::new(info.version, &self.actions).ok();
        self.planned_at = Some(version);
    }

    /// Whether the frame hashed `hash` was flooded here within [`REPEAT_WINDOW`];
    /// remembers it if not, in place of the older of its set's two (so a repeat is
    /// caught unless two other floods of the same set came in between: at most a copy
    /// more around an undiscovered loop, whose next lap is caught).
    fn is_repeat(&mut self, hash: u64, now: Instant) -> bool {
        if self.recent.is_empty() {
            self.recent = vec![[Recent::default(); 2]; RECENT_SETS];
        }
        let within = |r: &Recent| {
            r.at.is_some_and(|t| now.saturating_duration_since(t) < REPEAT_WINDOW)
        };
        let set = &mut self.recent[(hash as usize) % RECENT_SETS];
        if set.iter().any(|r| r.hash == hash && within(r)) {
            return true;
        }
        // The empty or older one goes (None, empty, is the oldest).
        let way = usize::from(set[1].at < set[0].at);
        set[way] = Recent {
            hash,
            at: Some(now),
        };
        false
    }
}

/// A flood remembered for the repeat check.
#[derive(Debug, Clone, Copy, Default)]
struct Recent {
    hash: u64,
    /// When; `None`: empty.
    at: Option<Instant>,
}

/// Floods the packet of `p` by the policy of the module doc, by the switch's plan
/// ([`Floods::plan`] first: the caller knows whether the tree needs a look); `hasher`
/// hashes frames for the repeat check.
pub fn flood(
    hasher: &impl BuildHasher,
    ctx: &mut SwitchCtx,
    floods: &mut Floods,
    p: &PacketIn,
) -> Flow {
    let in_port = p.in_port();
    // Came around a known loop.
    if floods.off_tree.contains(&in_port) {
        return Flow::Stop;
    }
    // Came around a loop not known yet.
    if floods.is_repeat(hasher.hash_one(p.data()), ctx.now()) {
        return Flow::Stop;
    }
    let Floods {
        actions,
        plan,
        encoded,
        ..
    } = floods;
    // Out of every planned port but the in-port: the plan's outputs, encoded once.
    if let Some(encoded) = encoded {
        let skip = plan.iter().position(|&n| n == in_port);
        if plan.len() > usize::from(skip.is_some()) {
            let po = PacketOut::of_packet_in(p, &[]);
            ctx.send_packet_out_with(&po, encoded, skip);
        }
        return Flow::Stop;
    }
    // Not encodable: built as a list, which fails to encode the same way, logged.
    actions.clear();
    let out = plan.iter().filter(|&&n| n != in_port);
    actions.extend(out.map(|&n| Action::output(PortNo::from_u32(n))));
    if !actions.is_empty() {
        send(ctx, p, actions);
    }
    Flow::Stop
}

/// Sends the packet of `p` straight out of `port` of switch `dpid` (not this one), from
/// the controller: for a known host no route reaches yet.
/// True if handled: sent, or dropped as a repeat of a frame this switch flooded or
/// delivered within [`REPEAT_WINDOW`]. False, having done nothing, if that switch is not
/// connected or the PACKET_IN holds only part of the frame (the rest is in this
/// switch's buffer).
pub fn deliver(
    ctx: &mut SwitchCtx,
    floods: &mut Floods,
    hasher: &impl BuildHasher,
    p: &PacketIn,
    dpid: Dpid,
    port: u32,
) -> bool {
    if p.data().len() < usize::from(p.total_len()) {
        return false;
    }
    let switches = ctx.switches();
    let Some(info) = switches.info(dpid) else {
        return false;
    };
    if floods.is_repeat(hasher.hash_one(p.data()), ctx.now()) {
        return true;
    }
    // 1.0 says "OFPP_NONE" for a packet from the controller, 1.3 "OFPP_CONTROLLER".
    let from = match info.version {
        Version::V1_0 => PortNo::Any,
        Version::V1_3 => PortNo::Controller,
    };
    let out = [Action::output(PortNo::from_u32(port))];
    let sent = switches.send_packet_out(dpid, &PacketOut::unbuffered(p.data(), from, &out));
    if let Err(e) = &sent {
        tracing::debug!(%dpid, error = %e, "direct delivery not sent");
    }
    sent.is_ok()
}

/// Sends the packet of `p` through `actions` ([`PacketOut::of_packet_in`]).
pub fn send(ctx: &mut SwitchCtx, p: &PacketIn, actions: &[Action]) {
    ctx.send_packet_out(&PacketOut::of_packet_in(p, actions));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_is_caught_within_the_window_and_not_after() {
        let mut f = Floods::default();
        let t0 = Instant::now();
        assert!(!f.is_repeat(7, t0));
        assert!(f.is_repeat(7, t0 + Duration::from_millis(100)));
        assert!(!f.is_repeat(7, t0 + REPEAT_WINDOW + Duration::from_millis(1)));
    }

    #[test]
    fn a_flood_is_remembered_until_two_more_of_its_set_come() {
        let mut f = Floods::default();
        let t = Instant::now();
        let set = RECENT_SETS as u64;
        assert!(!f.is_repeat(1, t));
        // Floods of every other set do not push it out.
        for h in 2..set {
            assert!(!f.is_repeat(h, t));
        }
        // One more of its own set: both are kept.
        assert!(!f.is_repeat(1 + set, t));
        assert!(f.is_repeat(1, t));
        assert!(f.is_repeat(1 + set, t));
        // A second one: the older (1) goes.
        assert!(!f.is_repeat(1 + 2 * set, t + Duration::from_millis(1)));
        assert!(!f.is_repeat(1, t + Duration::from_millis(2)));
    }
}
