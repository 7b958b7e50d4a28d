//! Test 1, packet modification latency (OFLOPS §5.1): for each action, one flow applies
//! it to a constant-rate UDP probe stream between two data ports; the forwarding delay
//! (kernel transmit stamp on the ingress interface to kernel receive stamp on the egress
//! one) is compared with a plain output, and the loss counted.
//!
//! Per action ([`Case`]): the table is emptied (a priority-0 drop under everything), the
//! flow installed (match on the ingress port, and on what the action's prerequisites
//! need: IPv4 for IP rewrites, UDP for ports, the tag for VLAN rewrites), a barrier; then
//! the stream runs for [`ModifyConfig::duration`]. The first [`ModifyConfig::warmup`] of
//! frames are left out of the figures (the first frame of a flow takes the switch's slow
//! path: OVS's upcall and megaflow install). Captured frames are checked: each kept frame
//! (the first few per run) must carry exactly the headers the action should give
//! ([`Case::plan`]), so an action the switch accepts but does not apply is reported.
//! A throwaway baseline run comes first (a cold switch would skew the baseline).
//!
//! A switch that refuses an action (an ERROR at the barrier) has the case reported as
//! refused with its words; actions OpenFlow 1.0 lacks (TTL decrement, VLAN push as
//! such) are run the 1.0 way where there is one (SET_VLAN_VID on an untagged frame pushes
//! a tag) and reported as not in the version where there is none.

use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use openflow::model::{Action, FlowMod, Match, Vlan};
use openflow::{MacAddr, Version};
use serde::Serialize;

use super::channel::{Channel, ChannelError};
use super::flows::{reset_table, FlowSet, TestError, FLOW_PRIORITY};
use super::probe::{self, CaptureOptions, FrameSpec, Records, Session, Spread, StreamSpec};
use super::report::{us, us_spread, Plot, Point, Series, Table, TestOutput};

/// One action (or combination) measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Case {
    /// A plain output: the baseline.
    Output,
    SetEthSrc,
    SetEthDst,
    SetIpSrc,
    SetIpDst,
    /// DSCP (the TOS byte's upper 6 bits).
    SetDscp,
    DecTtl,
    SetUdpSrc,
    SetUdpDst,
    /// Push a tag on an untagged frame (1.0: SET_VLAN_VID on an untagged frame).
    PushVlan,
    /// Rewrite the VLAN id of a tagged frame.
    SetVlanVid,
    /// Rewrite the priority of a tagged frame.
    SetVlanPcp,
    /// Strip the tag of a tagged frame.
    PopVlan,
    /// Ethernet source and destination.
    SetEth,
    /// IPv4 source and destination and both UDP ports.
    SetIpPorts,
    /// Ethernet addresses, IPv4 addresses, DSCP and UDP ports.
    SetAll,
}

impl Case {
    /// Every case, baseline first.
    pub const ALL: [Case; 16] = [
        Case::Output,
        Case::SetEthSrc,
        Case::SetEthDst,
        Case::SetIpSrc,
        Case::SetIpDst,
        Case::SetDscp,
        Case::DecTtl,
        Case::SetUdpSrc,
        Case::SetUdpDst,
        Case::PushVlan,
        Case::SetVlanVid,
        Case::SetVlanPcp,
        Case::PopVlan,
        Case::SetEth,
        Case::SetIpPorts,
        Case::SetAll,
    ];

    /// Its name on the command line and in tables.
    pub fn name(self) -> &'static str {
        match self {
            Case::Output => "output",
            Case::SetEthSrc => "eth_src",
            Case::SetEthDst => "eth_dst",
            Case::SetIpSrc => "ip_src",
            Case::SetIpDst => "ip_dst",
            Case::SetDscp => "dscp",
            Case::DecTtl => "dec_ttl",
            Case::SetUdpSrc => "udp_src",
            Case::SetUdpDst => "udp_dst",
            Case::PushVlan => "vlan_push",
            Case::SetVlanVid => "vlan_vid",
            Case::SetVlanPcp => "vlan_pcp",
            Case::PopVlan => "vlan_pop",
            Case::SetEth => "eth_src+dst",
            Case::SetIpPorts => "ip+ports",
            Case::SetAll => "all",
        }
    }

    /// The case named `s` (as [`Case::name`]).
    pub fn parse(s: &str) -> Option<Case> {
        Case::ALL.into_iter().find(|c| c.name() == s)
    }

    /// The probe frame sent, the actions (before the output), and the headers the frame
    /// must have when it leaves; `None` when `version` has no such action.
    pub fn plan(self, set: &FlowSet, version: Version) -> Option<Plan> {
        let input = set.frame(0);
        let mut tagged = input.clone();
        tagged.vlan = Some((TAG_VID, 0));
        let (mut frame, mut expected, mut actions) = (input.clone(), input, Vec::new());
        let set_eth_src = |e: &mut FrameSpec, a: &mut Vec<Action>| {
            e.src_mac = NEW_ETH_SRC;
            a.push(Action::SetEthSrc {
                addr: MacAddr(NEW_ETH_SRC),
            });
        };
        let set_eth_dst = |e: &mut FrameSpec, a: &mut Vec<Action>| {
            e.dst_mac = NEW_ETH_DST;
            a.push(Action::SetEthDst {
                addr: MacAddr(NEW_ETH_DST),
            });
        };
        let set_ips = |e: &mut FrameSpec, a: &mut Vec<Action>, src: bool, dst: bool| {
            if src {
                e.src_ip = NEW_IP_SRC;
                a.push(Action::SetIpv4Src { addr: NEW_IP_SRC });
            }
            if dst {
                e.dst_ip = NEW_IP_DST;
                a.push(Action::SetIpv4Dst { addr: NEW_IP_DST });
            }
        };
        let set_ports = |e: &mut FrameSpec, a: &mut Vec<Action>, src: bool, dst: bool| {
            if src {
                e.src_port = NEW_UDP_SRC;
                a.push(Action::SetUdpSrc { port: NEW_UDP_SRC });
            }
            if dst {
                e.dst_port = NEW_UDP_DST;
                a.push(Action::SetUdpDst { port: NEW_UDP_DST });
            }
        };
        let set_dscp = |e: &mut FrameSpec, a: &mut Vec<Action>| {
            e.tos = NEW_DSCP << 2;
            a.push(Action::SetIpDscp { dscp: NEW_DSCP });
        };
        match self {
            Case::Output => {}
            Case::SetEthSrc => set_eth_src(&mut expected, &mut actions),
            Case::SetEthDst => set_eth_dst(&mut expected, &mut actions),
            Case::SetIpSrc => set_ips(&mut expected, &mut actions, true, false),
            Case::SetIpDst => set_ips(&mut expected, &mut actions, false, true),
            Case::SetDscp => set_dscp(&mut expected, &mut actions),
            Case::DecTtl => {
                if version == Version::V1_0 {
                    return None;
                }
                expected.ttl -= 1;
                actions.push(Action::DecNwTtl);
            }
            Case::SetUdpSrc => set_ports(&mut expected, &mut actions, true, false),
            Case::SetUdpDst => set_ports(&mut expected, &mut actions, false, true),
            Case::PushVlan => {
                expected.vlan = Some((NEW_VID, 0));
                if version != Version::V1_0 {
                    actions.push(Action::PushVlan { ethertype: 0x8100 });
                }
                actions.push(Action::SetVlanVid { vid: NEW_VID });
            }
            Case::SetVlanVid => {
                frame = tagged.clone();
                expected = tagged.clone();
                expected.vlan = Some((NEW_VID, 0));
                actions.push(Action::SetVlanVid { vid: NEW_VID });
            }
            Case::SetVlanPcp => {
                frame = tagged.clone();
                expected = tagged.clone();
                expected.vlan = Some((TAG_VID, NEW_PCP));
                actions.push(Action::SetVlanPcp { pcp: NEW_PCP });
            }
            Case::PopVlan => {
                frame = tagged.clone();
                actions.push(Action::PopVlan);
            }
            Case::SetEth => {
                set_eth_src(&mut expected, &mut actions);
                set_eth_dst(&mut expected, &mut actions);
            }
            Case::SetIpPorts => {
                set_ips(&mut expected, &mut actions, true, true);
                set_ports(&mut expected, &mut actions, true, true);
            }
            Case::SetAll => {
                set_eth_src(&mut expected, &mut actions);
                set_eth_dst(&mut expected, &mut actions);
                set_ips(&mut expected, &mut actions, true, true);
                set_dscp(&mut expected, &mut actions);
                set_ports(&mut expected, &mut actions, true, true);
            }
        }
        // Prerequisites (OpenFlow 1.3 §7.2.3.6; OVS checks them for 1.0 too): IPv4 for
        // IP fields, UDP for ports, a tag for VLAN rewrites.
        let mut matching = Match {
            in_port: Some(set.ingress.port_no),
            eth_type: Some(0x0800),
            ip_proto: Some(17),
            ..Match::default()
        };
        matching.vlan = Some(match frame.vlan {
            Some((vid, _)) => Vlan::Id(vid),
            None => Vlan::Untagged,
        });
        actions.extend(set.forward());
        Some(Plan {
            frame,
            expected,
            matching,
            actions,
        })
    }
}

/// The VLAN id of tagged probes.
pub const TAG_VID: u16 = 10;
/// Values the actions write.
pub const NEW_VID: u16 = 20;
pub const NEW_PCP: u8 = 5;
pub const NEW_DSCP: u8 = 46;
pub const NEW_ETH_SRC: [u8; 6] = [0x02, 0x0f, 0x1a, 0xee, 0x00, 0x01];
pub const NEW_ETH_DST: [u8; 6] = [0x02, 0x0f, 0x1a, 0xee, 0x00, 0x02];
pub const NEW_IP_SRC: Ipv4Addr = Ipv4Addr::new(10, 99, 0, 1);
pub const NEW_IP_DST: Ipv4Addr = Ipv4Addr::new(10, 99, 0, 2);
pub const NEW_UDP_SRC: u16 = 1111;
pub const NEW_UDP_DST: u16 = 2222;

/// Frames after the warm-up whose headers are checked (per run).
pub const CHECKED_AFTER_WARMUP: usize = 1000;

fn warmup_frames(cfg: &ModifyConfig) -> u64 {
    (cfg.rate_pps * cfg.warmup.as_secs_f64()) as u64
}

/// What a case sends, installs and expects.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The probe frame's headers.
    pub frame: FrameSpec,
    /// The headers it must have at the egress port.
    pub expected: FrameSpec,
    pub matching: Match,
    /// The modification actions, then the output.
    pub actions: Vec<Action>,
}

/// The headers of a received frame, as [`FrameSpec`] describes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Headers {
    pub dst_mac: [u8; 6],
    pub src_mac: [u8; 6],
    pub vlan: Option<(u16, u8)>,
    pub tos: u8,
    pub ttl: u8,
    pub src_ip: Ipv4Addr,
    pub dst_ip: Ipv4Addr,
    pub src_port: u16,
    pub dst_port: u16,
}

impl Headers {
    /// Parses Ethernet, at most one 802.1Q tag, IPv4 and UDP; `None` for anything else.
    pub fn parse(f: &[u8]) -> Option<Headers> {
        let mut o = 12;
        let mut vlan = None;
        if f.len() >= 18 && f[12..14] == [0x81, 0x00] {
            let tci = u16::from_be_bytes([f[14], f[15]]);
            vlan = Some((tci & 0x0fff, (tci >> 13) as u8));
            o = 16;
        }
        if f.get(o..o + 2)? != [0x08, 0x00] {
            return None;
        }
        let ip = o + 2;
        let ihl = usize::from(*f.get(ip)? & 0x0f) * 4;
        if f.len() < ip + ihl + 8 || f[ip + 9] != 17 {
            return None;
        }
        let udp = ip + ihl;
        Some(Headers {
            dst_mac: f[0..6].try_into().ok()?,
            src_mac: f[6..12].try_into().ok()?,
            vlan,
            tos: f[ip + 1],
            ttl: f[ip + 8],
            src_ip: Ipv4Addr::new(f[ip + 12], f[ip + 13], f[ip + 14], f[ip + 15]),
            dst_ip: Ipv4Addr::new(f[ip + 16], f[ip + 17], f[ip + 18], f[ip + 19]),
            src_port: u16::from_be_bytes([f[udp], f[udp + 1]]),
            dst_port: u16::from_be_bytes([f[udp + 2], f[udp + 3]]),
        })
    }

    /// The headers a [`FrameSpec`] builds.
    pub fn of(s: &FrameSpec) -> Headers {
        Headers {
            dst_mac: s.dst_mac,
            src_mac: s.src_mac,
            vlan: s.vlan,
            tos: s.tos,
            ttl: s.ttl,
            src_ip: s.src_ip,
            dst_ip: s.dst_ip,
            src_port: s.src_port,
            dst_port: s.dst_port,
        }
    }
}

/// Parameters of test 1.
#[derive(Debug, Clone, Serialize)]
pub struct ModifyConfig {
    /// The cases, in order (the baseline `output` is always run, first; repeats ignored).
    pub cases: Vec<Case>,
    /// Probe frames per second (the paper: 100-byte frames at ~125 kpps).
    pub rate_pps: f64,
    /// Probe frame length.
    pub frame_len: usize,
    /// How long each case's stream runs.
    pub duration: Duration,
    /// The first part of each stream, left out of the figures.
    pub warmup: Duration,
    /// Passes over all cases; the figures pool them.
    pub reps: usize,
    /// Busy-wait each frame's due time (constant spacing) rather than small bursts.
    pub spin: bool,
}

impl Default for ModifyConfig {
    fn default() -> ModifyConfig {
        ModifyConfig {
            cases: Case::ALL.to_vec(),
            rate_pps: probe::DEFAULT_RATE_PPS,
            frame_len: probe::DEFAULT_FRAME_LEN,
            duration: Duration::from_secs(2),
            warmup: Duration::from_millis(200),
            reps: 1,
            spin: false,
        }
    }
}

/// What one case measured (pooled over the passes).
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    pub case: Case,
    pub name: &'static str,
    /// `measured`, `refused` (the switch's error in `note`), `not in OpenFlow 1.0`, or
    /// `not applied` (frames left with other headers than the action gives).
    pub status: String,
    pub note: Option<String>,
    /// The actions as installed (Debug form).
    pub actions: String,
    /// Forwarding delay, ns, after the warm-up.
    pub delay: Option<Spread>,
    /// Median minus the baseline's median, ns.
    pub over_baseline_ns: Option<i64>,
    /// Frames sent after the warm-up, and of those never captured.
    pub sent: u64,
    pub lost: u64,
    /// Frames actually sent per second (the sender may fall short of the asked rate).
    pub sent_pps: f64,
    /// Frames after the warm-up checked against the expected headers (at most
    /// [`CHECKED_AFTER_WARMUP`] per run), and how many matched.
    pub checked: usize,
    pub matched: usize,
    /// The first checked frame's headers, when one did not match.
    pub got: Option<Headers>,
    /// Warm-up frames that left with other headers than the action gives: handled by
    /// what the switch had before the new flow (its previous flow's cached actions),
    /// although the barrier after the FLOW_MOD had been answered.
    pub stale: usize,
    pub expected: Headers,
}

/// Runs one case once: installs its flow, runs the stream; `Ok(Err(why))` when the switch
/// refused the flow.
pub fn run_case(
    ch: &mut Channel,
    set: &FlowSet,
    plan: &Plan,
    cfg: &ModifyConfig,
    stream_id: u32,
) -> Result<Result<Records, String>, TestError> {
    reset_table(ch)?;
    let fm = FlowMod::add(plan.matching, &plan.actions).priority(FLOW_PRIORITY);
    ch.send_flow_mods(&[fm])?;
    match ch.barrier() {
        Ok(_) => {}
        Err(ChannelError::Refused { error, .. }) => return Ok(Err(error)),
        Err(e) => return Err(e.into()),
    }
    let mut frame = plan.frame.clone();
    frame.len = cfg.frame_len;
    let spec = StreamSpec::new(stream_id, vec![frame])
        .rate(cfg.rate_pps)
        .duration(cfg.duration)
        .pacing(if cfg.spin {
            probe::Pacing::Spin
        } else {
            probe::Pacing::Sleep
        });
    let session = Session::start(
        vec![(set.ingress.iface.clone(), spec)],
        &[set.egress.iface.as_str()],
        CaptureOptions {
            // Every warm-up frame and the next CHECKED_AFTER_WARMUP: bounded memory.
            keep_bytes: warmup_frames(cfg) as usize + CHECKED_AFTER_WARMUP,
            linger: Duration::from_millis(200),
        },
    )?;
    Ok(Ok(session.wait()?))
}

/// Test 1: every case in `cfg` (the baseline first), `cfg.reps` passes, stopping early
/// (with what it has) at `deadline`.
pub fn run(
    ch: &mut Channel,
    set: &FlowSet,
    cfg: &ModifyConfig,
    deadline: Option<Instant>,
) -> Result<TestOutput, TestError> {
    let version = ch.version();
    let mut cases = vec![Case::Output];
    for c in &cfg.cases {
        if !cases.contains(c) {
            cases.push(*c);
        }
    }
    struct Acc {
        delays: Vec<i64>,
        sent: u64,
        lost: u64,
        secs: f64,
        checked: usize,
        matched: usize,
        got: Option<Headers>,
        stale: usize,
        refused: Option<String>,
    }
    let mut acc: Vec<Acc> = cases
        .iter()
        .map(|_| Acc {
            delays: Vec::new(),
            sent: 0,
            lost: 0,
            secs: 0.0,
            checked: 0,
            matched: 0,
            got: None,
            stale: 0,
            refused: None,
        })
        .collect();
    let mut cut = false;
    let mut stream_id = 0x1000u32;
    // A throwaway run of the baseline first: the first stream after the switch starts
    // (or after a long idle) meets a cold switch and a cold machine, and the baseline,
    // run first, would carry that into every case's difference.
    if let Some(plan) = Case::Output.plan(set, version) {
        let warm = ModifyConfig {
            duration: cfg.duration.min(Duration::from_millis(500)),
            ..cfg.clone()
        };
        if run_case(ch, set, &plan, &warm, stream_id)?.is_err() {
            return Err(TestError::Setup(
                "the switch refused a plain output flow".into(),
            ));
        }
    }
    'reps: for _ in 0..cfg.reps.max(1) {
        for (i, &case) in cases.iter().enumerate() {
            if deadline.is_some_and(|d| Instant::now() + cfg.duration >= d) {
                cut = true;
                break 'reps;
            }
            let Some(plan) = case.plan(set, version) else {
                continue;
            };
            if acc[i].refused.is_some() {
                continue;
            }
            stream_id += 1;
            let rec = match run_case(ch, set, &plan, cfg, stream_id)? {
                Ok(r) => r,
                Err(why) => {
                    acc[i].refused = Some(why);
                    continue;
                }
            };
            let a = &mut acc[i];
            let warm = (cfg.rate_pps * cfg.warmup.as_secs_f64()) as u64;
            let joined = rec.joined(stream_id, None);
            let after: Vec<_> = joined.iter().filter(|(t, _)| t.seq >= warm).collect();
            a.sent += after.len() as u64;
            a.lost += after.iter().filter(|(_, r)| r.is_none()).count() as u64;
            a.delays.extend(
                after
                    .iter()
                    .filter_map(|(t, r)| r.map(|r| r.rx_ns - t.tx_ns())),
            );
            if let (Some(first), Some(last)) = (joined.first(), joined.last()) {
                a.secs += (last.0.user_ns - first.0.user_ns) as f64 / 1e9;
            }
            let want = Headers::of(&plan.expected);
            for r in rec.rx.iter().filter(|r| r.stream == stream_id) {
                let Some(b) = r.bytes.as_deref() else {
                    continue;
                };
                let got = Headers::parse(b);
                let ok = got.as_ref() == Some(&want);
                if r.seq < warm {
                    a.stale += usize::from(!ok);
                    continue;
                }
                a.checked += 1;
                if ok {
                    a.matched += 1;
                } else if a.got.is_none() {
                    a.got = got;
                }
            }
        }
    }
    reset_table(ch)?;
    let mut results = Vec::new();
    let mut baseline: Option<i64> = None;
    for (case, a) in cases.iter().zip(acc) {
        let plan = case.plan(set, version);
        let delay = Spread::of(&a.delays);
        if *case == Case::Output {
            baseline = delay.map(|d| d.median);
        }
        let (status, note) = match (&plan, &a.refused) {
            (None, _) => (
                "not in OpenFlow 1.0".to_string(),
                Some("no such action in this version".to_string()),
            ),
            (_, Some(why)) => ("refused".to_string(), Some(why.clone())),
            _ if a.checked > 0 && a.matched < a.checked => (
                "not applied".to_string(),
                Some(format!(
                    "{} of {} frames checked had other headers than expected",
                    a.checked - a.matched,
                    a.checked
                )),
            ),
            _ if delay.is_none() => (
                "no frames".to_string(),
                Some("no probe frame came out of the egress port".into()),
            ),
            _ => ("measured".to_string(), None),
        };
        let expected = plan
            .as_ref()
            .map(|p| Headers::of(&p.expected))
            .unwrap_or_else(|| Headers::of(&set.frame(0)));
        results.push(CaseResult {
            case: *case,
            name: case.name(),
            status,
            note,
            actions: plan
                .as_ref()
                .map(|p| format!("{:?}", p.actions))
                .unwrap_or_default(),
            delay,
            over_baseline_ns: match (delay, baseline) {
                (Some(d), Some(b)) => Some(d.median - b),
                _ => None,
            },
            sent: a.sent,
            lost: a.lost,
            sent_pps: if a.secs > 0.0 {
                (a.sent as f64 + (cfg.rate_pps * cfg.warmup.as_secs_f64())) / a.secs
            } else {
                0.0
            },
            checked: a.checked,
            matched: a.matched,
            got: a.got,
            stale: a.stale,
            expected,
        });
    }
    Ok(summarise(cfg, version, &results, cut))
}

/// The table, findings, plot and JSON of test 1.
pub fn summarise(
    cfg: &ModifyConfig,
    version: Version,
    results: &[CaseResult],
    cut: bool,
) -> TestOutput {
    let mut out = TestOutput::new("modify");
    let mut t = Table::new(
        "Packet modification (test 1): forwarding delay in µs, median [p10, p90]",
        &[
            "action",
            "delay",
            "over output",
            "p99",
            "stddev",
            "sent (per s)",
            "lost",
            "headers",
            "stale",
            "status",
        ],
    );
    for r in results {
        t.row(vec![
            r.name.to_string(),
            us_spread(r.delay.as_ref()),
            r.over_baseline_ns
                .map(|d| format!("{:+}", us(d as f64)))
                .unwrap_or_else(|| "-".into()),
            r.delay
                .map(|d| us(d.p99 as f64))
                .unwrap_or_else(|| "-".into()),
            r.delay.map(|d| us(d.stddev)).unwrap_or_else(|| "-".into()),
            format!("{} ({:.0})", r.sent, r.sent_pps),
            if r.sent > 0 {
                format!("{} ({:.2}%)", r.lost, r.lost as f64 * 100.0 / r.sent as f64)
            } else {
                "-".into()
            },
            format!("{}/{}", r.matched, r.checked),
            r.stale.to_string(),
            match &r.note {
                Some(n) if r.status != "measured" => format!("{}: {n}", r.status),
                _ => r.status.clone(),
            },
        ]);
    }
    t.note = Some(format!(
        "OpenFlow {}; {}-byte UDP probes at {} frames/s asked ({} pacing), {} s per action after a \
         {} ms warm-up, {} pass(es); delay = kernel RX stamp on the egress interface - kernel TX \
         stamp on the ingress one; 'headers' = frames after the warm-up that carried exactly the \
         headers the action gives (up to {} per run); 'stale' = warm-up frames forwarded with \
         other headers (the previous flow's actions) after the barrier reply{}",
        version_name(version),
        cfg.frame_len,
        cfg.rate_pps,
        if cfg.spin { "constant" } else { "bursty ~100 µs" },
        (cfg.duration - cfg.warmup.min(cfg.duration)).as_secs_f64(),
        cfg.warmup.as_millis(),
        cfg.reps.max(1),
        CHECKED_AFTER_WARMUP,
        if cut {
            "; CUT SHORT by --max-seconds"
        } else {
            ""
        }
    ));
    out.tables.push(t);
    let measured: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.status == "measured" && r.case != Case::Output)
        .collect();
    if let Some(base) = results.iter().find(|r| r.case == Case::Output) {
        if let Some(d) = base.delay {
            out.findings.push(format!(
                "a plain output forwards in {} µs (median; p10 {}, p90 {})",
                us(d.median as f64),
                us(d.p10 as f64),
                us(d.p90 as f64)
            ));
        }
    }
    if let Some(worst) = measured.iter().max_by_key(|r| r.over_baseline_ns) {
        let best = measured
            .iter()
            .min_by_key(|r| r.over_baseline_ns)
            .expect("not empty");
        out.findings.push(format!(
            "actions add from {} µs ({}) to {} µs ({}) to the median over a plain output",
            best.over_baseline_ns
                .map(|d| us(d as f64))
                .unwrap_or_default(),
            best.name,
            worst
                .over_baseline_ns
                .map(|d| us(d as f64))
                .unwrap_or_default(),
            worst.name
        ));
    }
    for r in results
        .iter()
        .filter(|r| r.status == "refused" || r.status == "not applied")
    {
        out.findings.push(format!(
            "{}: {} ({})",
            r.name,
            r.status,
            r.note.clone().unwrap_or_default()
        ));
    }
    let stale: Vec<String> = results
        .iter()
        .filter(|r| r.stale > 0)
        .map(|r| format!("{} {}", r.name, r.stale))
        .collect();
    if !stale.is_empty() {
        out.findings.push(format!(
            "frames forwarded with the previous flow's headers after the barrier reply (the \
             data plane lagging the barrier): {}",
            stale.join(", ")
        ));
    }
    let lossy: Vec<String> = results
        .iter()
        .filter(|r| r.sent > 0 && r.lost * 100 > r.sent)
        .map(|r| format!("{} {:.1}%", r.name, r.lost as f64 * 100.0 / r.sent as f64))
        .collect();
    if !lossy.is_empty() {
        out.findings
            .push(format!("loss above 1%: {}", lossy.join(", ")));
    }
    let points: Vec<Point> = results
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.delay.map(|d| Point::of_spread(i as f64, &d, 1e-3)))
        .collect();
    out.plots.push(Plot {
        name: format!("modify-of{}", version_name(version).replace('.', "")),
        title: format!(
            "Packet modification delay, OpenFlow {}",
            version_name(version)
        ),
        x_label: "action, numbered in the order of the table (0 = output)".into(),
        y_label: "delay (µs), median and p10-p90".into(),
        log_x: false,
        // Medians of tens of µs beside p90s of ms on a busy machine.
        log_y: true,
        series: vec![Series {
            name: "delay".into(),
            points,
        }],
    });
    out.data = serde_json::json!({
        "config": cfg,
        "of": version_name(version),
        "cut_short": cut,
        "cases": results,
    });
    out
}

fn version_name(v: Version) -> &'static str {
    if v == Version::V1_0 {
        "1.0"
    } else {
        "1.3"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oflops::channel::DataPort;

    fn set() -> FlowSet {
        let port = |n: u32, iface: &str| DataPort {
            name: format!("p{n}"),
            port_no: n,
            iface: iface.into(),
        };
        FlowSet {
            ingress: port(1, "in"),
            egress: port(2, "out"),
            src_mac: [2, 0, 0, 0, 0, 1],
        }
    }

    #[test]
    fn headers_round_trip_through_frames() {
        for case in Case::ALL {
            for v in [Version::V1_0, Version::V1_3] {
                let Some(p) = case.plan(&set(), v) else {
                    assert!(case == Case::DecTtl && v == Version::V1_0);
                    continue;
                };
                let stamp = probe::Stamp {
                    stream: 1,
                    seq: 2,
                    template: 0,
                    user_tx_ns: 3,
                };
                for spec in [&p.frame, &p.expected] {
                    let f = spec.build(&stamp);
                    assert_eq!(Headers::parse(&f), Some(Headers::of(spec)), "{case:?}");
                }
                // Every case but the baseline changes something, and outputs last.
                assert_eq!(
                    case == Case::Output,
                    Headers::of(&p.frame) == Headers::of(&p.expected),
                    "{case:?}"
                );
                assert!(matches!(p.actions.last(), Some(Action::Output { .. })));
            }
        }
    }

    #[test]
    fn plans_match_what_the_actions_need() {
        let p = Case::PopVlan.plan(&set(), Version::V1_3).unwrap();
        assert_eq!(p.frame.vlan, Some((TAG_VID, 0)));
        assert_eq!(p.expected.vlan, None);
        assert_eq!(p.matching.vlan, Some(Vlan::Id(TAG_VID)));
        let p = Case::PushVlan.plan(&set(), Version::V1_3).unwrap();
        assert!(matches!(
            p.actions[0],
            Action::PushVlan { ethertype: 0x8100 }
        ));
        let p = Case::PushVlan.plan(&set(), Version::V1_0).unwrap();
        assert!(matches!(p.actions[0], Action::SetVlanVid { vid: NEW_VID }));
        assert_eq!(Case::parse("ip+ports"), Some(Case::SetIpPorts));
        assert_eq!(Case::parse("nope"), None);
    }
}
