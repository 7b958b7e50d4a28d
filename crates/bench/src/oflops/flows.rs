//! What every test of `pharos bench switch` stands on: the probe frames and the flows
//! that match them between an ingress and an egress data port ([`FlowSet`]), the
//! table reset under them, and [`TestError`].

use std::net::Ipv4Addr;

use openflow::model::{Action, FlowMod, Ipv4Prefix, Match, PortNo, Vlan};
use openflow::MacAddr;
use serde::Serialize;

use super::channel::{BarrierTiming, Channel, ChannelError, DataPort};
use super::probe::{self, FrameSpec, ProbeError};

/// What went wrong in a test: on the channel, or with the probes.
#[derive(Debug, thiserror::Error)]
pub enum TestError {
    #[error(transparent)]
    Channel(#[from] ChannelError),
    #[error("probe: {0}")]
    Probe(#[from] ProbeError),
    #[error("{0}")]
    Setup(String),
}

/// The priority of the test flows; the drop-all under them is priority 0.
pub const FLOW_PRIORITY: u16 = 100;
/// The destination MAC of every probe frame.
pub const PROBE_DST_MAC: [u8; 6] = [0x02, 0x0f, 0x1a, 0x00, 0x00, 0x02];
/// The source IP of every probe frame; flow `i` goes to `FLOW_DST_BASE + i`.
pub const PROBE_SRC_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
pub const FLOW_DST_BASE: u32 = 0x0a01_0000;

/// How flows match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    Exact,
    Wildcard,
}

impl MatchKind {
    pub fn name(self) -> &'static str {
        match self {
            MatchKind::Exact => "exact",
            MatchKind::Wildcard => "wildcard",
        }
    }
}

/// The probe frames and the flows for them, between an ingress and an egress data port.
#[derive(Debug, Clone)]
pub struct FlowSet {
    /// Where probes go into the switch.
    pub ingress: DataPort,
    /// Where the flows send them out.
    pub egress: DataPort,
    /// The ingress interface's MAC (the probes' source).
    pub src_mac: [u8; 6],
}

impl FlowSet {
    pub fn new(ingress: &DataPort, egress: &DataPort) -> Result<FlowSet, TestError> {
        let iface = probe::Iface::lookup(&ingress.iface)?;
        Ok(FlowSet {
            ingress: ingress.clone(),
            egress: egress.clone(),
            src_mac: iface.mac,
        })
    }

    /// The flows of run `run`, in an address block of their own (`10.B.0.0/16`,
    /// B = 1 + run % 250; run 0 is this set's own block, [`FLOW_DST_BASE`]): a switch
    /// whose data path keeps forwarding with flows deleted a moment ago (Open vSwitch's
    /// datapath flow cache, until its revalidator runs) cannot forward this run's probes
    /// with the last run's flows.
    pub fn for_run(&self, run: u32) -> RunFlows<'_> {
        RunFlows {
            set: self,
            base: 0x0a00_0000 + ((1 + run % 250) << 16),
        }
    }

    /// The probe frame of flow `i` of the block at `base`.
    fn frame_in(&self, base: u32, i: usize) -> FrameSpec {
        FrameSpec::udp(
            self.src_mac,
            PROBE_DST_MAC,
            PROBE_SRC_IP,
            Ipv4Addr::from(base + i as u32),
        )
    }

    /// The probe frame of flow `i`.
    pub fn frame(&self, i: usize) -> FrameSpec {
        self.frame_in(FLOW_DST_BASE, i)
    }

    /// The match of flow `i`.
    pub fn matching(&self, i: usize, kind: MatchKind) -> Match {
        self.matching_in(FLOW_DST_BASE, i, kind)
    }

    fn matching_in(&self, base: u32, i: usize, kind: MatchKind) -> Match {
        let dst = Ipv4Prefix::exact(Ipv4Addr::from(base + i as u32));
        match kind {
            MatchKind::Wildcard => Match {
                in_port: Some(self.ingress.port_no),
                eth_type: Some(0x0800),
                ipv4_dst: Some(dst),
                ..Match::default()
            },
            MatchKind::Exact => Match {
                in_port: Some(self.ingress.port_no),
                eth_src: Some(MacAddr(self.src_mac)),
                eth_dst: Some(MacAddr(PROBE_DST_MAC)),
                eth_type: Some(0x0800),
                vlan: Some(Vlan::Untagged),
                ip_dscp: Some(0),
                ip_proto: Some(17),
                ipv4_src: Some(Ipv4Prefix::exact(PROBE_SRC_IP)),
                ipv4_dst: Some(dst),
                tp_src: Some(probe::DEFAULT_SRC_PORT),
                tp_dst: Some(probe::DEFAULT_DST_PORT),
                ..Match::default()
            },
        }
    }

    /// Output to the egress port.
    pub fn forward(&self) -> [Action; 1] {
        [Action::output(PortNo::Physical(self.egress.port_no))]
    }
}

/// The flows of one run: a [`FlowSet`]'s frames and matches in the run's address block
/// ([`FlowSet::for_run`]).
#[derive(Debug, Clone, Copy)]
pub struct RunFlows<'a> {
    /// The ports and the probes' source.
    pub set: &'a FlowSet,
    /// Flow `i` is the probe to `base + i`.
    pub base: u32,
}

impl RunFlows<'_> {
    pub fn frame(&self, i: usize) -> FrameSpec {
        self.set.frame_in(self.base, i)
    }

    pub fn matching(&self, i: usize, kind: MatchKind) -> Match {
        self.set.matching_in(self.base, i, kind)
    }

    pub fn forward(&self) -> [Action; 1] {
        self.set.forward()
    }
}

/// Empties the table and installs a priority-0 drop under everything, then a barrier.
pub fn reset_table(ch: &mut Channel) -> Result<BarrierTiming, ChannelError> {
    ch.delete_all_flows()?;
    let drop = FlowMod::add(Match::default(), &[]).priority(0);
    ch.send_flow_mods(&[drop])?;
    ch.barrier()
}

/// Installs flows `range` of the run `set` with `actions` (one write), then a barrier.
pub fn install(
    ch: &mut Channel,
    set: &RunFlows,
    range: std::ops::Range<usize>,
    kind: MatchKind,
    actions: &[Action],
) -> Result<BarrierTiming, ChannelError> {
    let fms: Vec<FlowMod> = range
        .map(|i| FlowMod::add(set.matching(i, kind), actions).priority(FLOW_PRIORITY))
        .collect();
    ch.send_flow_mods(&fms)?;
    ch.barrier()
}
