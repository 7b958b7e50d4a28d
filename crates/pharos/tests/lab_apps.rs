//! Issue 6's acceptance on real Open vSwitch: the default app set of `pharos run`
//! (topology, device_manager, routing) in this test process, `pharos lab` building the
//! networks, for OpenFlow 1.0, 1.3 and a mix of both.
//!
//! ```text
//! every lab      discovery finds exactly the lab's cables (Topology snapshot vs pharos lab
//!                show --json); pingall 100%; 30 s idle after it: PACKET_INs (LLDP and
//!                the rest) and every switch port's transmitted frames stay within what
//!                discovery alone sends (no storm), and the topology does not change
//! linear,4       a host forging LLDP (bad key, another controller's format, a genuine
//!                frame tampered with, a genuine frame sent back where it came from)
//!                creates no link; a host moved to another switch is re-learned there
//!                and traffic to it follows
//! tree,2,3       (every lab's checks)
//! ring,4         a link on the path h1 -> h3 taken down: the topology drops it within
//!                1 s of the PORT_STATUS, pings recover within 3 s on the other way round;
//!                back up, it is rediscovered
//! fattree,4      the same on a middle link of h1 -> h16; h1 moved to another pod
//! ring,4 mixed   1.0 and 1.3 switches in one network: every lab's checks, link down
//! start-up      ring,4 (1.0, 1.3, mixed) and fattree,4: `up` followed at once by
//!                pingall, before discovery had time to find the loops' cables: 100%,
//!                and no host seen moving or forgotten; PHAROS_LAB_STARTUP_ROUNDS
//!                rounds per version (default 2)
//! ```
//!
//! Time: each lab's idle period runs without the serial lock (a lab doing nothing but
//! discovery competes with nobody's timing), so two labs overlap when the test harness
//! runs two tests at once (its default on two cores). Everything else holds the lock.
//! `PHAROS_LAB_IDLE_SECS` shortens the idle period while working on these tests (the
//! acceptance is 30 s) and `PHAROS_LAB_STARTUP_ROUNDS` the start-up rounds; a shortened
//! test is recorded as such (scripts/test counts them; CI fails on any), and 0 or a typo
//! is refused.
//!
//! Needs root, Open vSwitch and the rest (`scripts/install-test-deps`), like `lab.rs`;
//! `PHAROS_SKIP_LAB=1` skips them, saying so and recording it.

mod common;
use common::lab as harness;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use apps::devices::table::HostEvent;
use apps::devices::Devices;
use apps::routing::Link;
use apps::topology::lldp::{self, DiscoveryKey};
use apps::topology::{Topology, TopologyEvent};
use harness::{
    apps_by_name, enabled, parse_topo, record_not_full, run, serial, wait_until, Host, Lab, Of,
    Topo,
};
use openflow::MacAddr;

/// The default app set of `pharos run` (issue 6).
const APPS: &[&str] = &["topology", "device_manager", "routing"];
/// How long the switches get to connect after `up`.
const CONNECT: Duration = Duration::from_secs(10);
/// How long discovery gets to find every cable (LLDP every second by default).
const DISCOVERY: Duration = Duration::from_secs(10);
/// The topology app's default LLDP period.
const LLDP_INTERVAL: Duration = Duration::from_secs(1);
/// After a link goes down, pings must flow again within this.
const RECOVERY: Duration = Duration::from_secs(3);
/// After a PORT_STATUS saying a port went down, its links must be gone within this.
const LINK_GONE: Duration = Duration::from_secs(1);

/// Rounds of each start-up test per version, as written.
const STARTUP_ROUNDS: u32 = 2;
/// The idle period, as written.
const IDLE: Duration = Duration::from_secs(30);

/// A whole number of at least 1 from the environment variable `var`, or `None` when it
/// is not set; anything else fails the test (a typo must not silently change it).
fn env_count(var: &str) -> Option<u64> {
    let text = std::env::var(var).ok()?;
    Some(count(var, &text).unwrap_or_else(|e| panic!("{e}")))
}

/// `text` as a whole number of at least 1, or why not.
fn count(var: &str, text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "{var}={text:?}: expected a whole number of at least 1"
        )),
    }
}

#[test]
fn zero_or_a_typo_in_a_shortening_variable_is_refused_not_taken() {
    assert_eq!(count("PHAROS_LAB_IDLE_SECS", "5"), Ok(5));
    for bad in ["0", "", "5s", "-1", "five"] {
        assert!(count("PHAROS_LAB_IDLE_SECS", bad).is_err(), "{bad:?}");
    }
}

/// Rounds of each start-up test per version: [`STARTUP_ROUNDS`], or
/// `PHAROS_LAB_STARTUP_ROUNDS` (fewer is recorded as a shortened test).
fn startup_rounds(test: &str) -> u32 {
    let n = env_count("PHAROS_LAB_STARTUP_ROUNDS").map_or(STARTUP_ROUNDS, |n| n as u32);
    if n < STARTUP_ROUNDS {
        let why =
            format!("{n} start-up rounds instead of {STARTUP_ROUNDS} (PHAROS_LAB_STARTUP_ROUNDS)");
        record_not_full("SHORTENED", test, &why);
    }
    n
}

/// The idle period: [`IDLE`], or `PHAROS_LAB_IDLE_SECS` (shorter is recorded as a
/// shortened test).
fn idle_period(test: &str) -> Duration {
    let period = env_count("PHAROS_LAB_IDLE_SECS").map_or(IDLE, Duration::from_secs);
    if period < IDLE {
        let why = format!(
            "idle period {} s instead of {} s (PHAROS_LAB_IDLE_SECS)",
            period.as_secs(),
            IDLE.as_secs()
        );
        record_not_full("SHORTENED", test, &why);
    }
    period
}

// ---------------------------------------------------------------------------------------
// A lab running the issue-6 apps

/// Topology events as a subscriber saw them, with the time.
type EventLog = Arc<Mutex<Vec<(Instant, TopologyEvent)>>>;

struct AppsLab {
    lab: Lab,
    topo: Topo,
    /// Every topology event since the controller started.
    events: EventLog,
}

impl AppsLab {
    /// The lab `spec` named `name`, its switches connected to a controller running
    /// [`APPS`] (each switch at the version `of` gives it).
    fn start(name: &str, of: Of, spec: &str, switch: Switch) -> AppsLab {
        let mut lab = Lab::with_apps(name, of, apps_by_name(APPS), false);
        if switch == Switch::Pharos {
            lab = lab.pharos_switch();
        }
        let events: EventLog = Arc::default();
        let sink = Arc::clone(&events);
        topology_of(&lab).subscribe(Box::new(move |e| {
            sink.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((Instant::now(), e.clone()));
        }));
        let out = lab.up(spec);
        let topo = parse_topo(&lab.show());
        let n = topo.switches.len();
        assert!(
            lab.ctl.wait_connected(n, CONNECT),
            "{n} switches should connect to Pharos; {} did\n{out}",
            lab.ctl.counters().switches.len()
        );
        for s in lab.ctl.counters().switches {
            let dpid = s.dpid.parse::<openflow::Dpid>().expect("dpid").0;
            assert_eq!(
                s.version,
                of.version_of(dpid),
                "switch {} negotiated the wrong version",
                s.dpid
            );
        }
        AppsLab { lab, topo, events }
    }

    fn topology(&self) -> Arc<Topology> {
        topology_of(&self.lab)
    }

    fn devices(&self) -> Arc<Devices> {
        self.lab
            .ctl
            .pipeline()
            .services()
            .get::<Devices>()
            .expect("the device_manager app provides Devices")
    }

    fn dpid(&self, switch: &str) -> u64 {
        self.topo.switches[switch].dpid
    }

    /// `s2:3` for switch dpid 2 port 3.
    fn port_name(&self, dpid: u64, port: u32) -> String {
        match self.topo.switch_by_dpid(dpid) {
            Some(s) => format!("{s}:{port}"),
            None => format!("dpid {dpid:x}:{port}"),
        }
    }

    fn link_name(&self, l: &Link) -> String {
        format!(
            "{} -> {}",
            self.port_name(l.src.0, l.src_port),
            self.port_name(l.dst.0, l.dst_port)
        )
    }

    /// The cables that are up, as directed links both ways.
    fn expected_links(&self) -> BTreeSet<Link> {
        let mut want = BTreeSet::new();
        for l in self.topo.links.iter().filter(|l| l.up) {
            let (a, b) = (self.dpid(&l.a), self.dpid(&l.b));
            want.insert(Link::new(a, l.port_a, b, l.port_b));
            want.insert(Link::new(b, l.port_b, a, l.port_a));
        }
        want
    }

    fn discovered(&self) -> BTreeSet<Link> {
        self.topology().snapshot().links().clone()
    }

    /// What differs between the discovered links and the cables, for a message.
    fn diff(&self, got: &BTreeSet<Link>, want: &BTreeSet<Link>) -> String {
        let mut s = String::new();
        for l in want.difference(got) {
            let _ = write!(s, "\n  missing {}", self.link_name(l));
        }
        for l in got.difference(want) {
            let _ = write!(s, "\n  extra   {}", self.link_name(l));
        }
        s
    }

    /// Waits until the discovered links are exactly the cables that are up.
    #[track_caller]
    fn discovery_exact(&self, when: &str) -> Duration {
        let t0 = Instant::now();
        let want = self.expected_links();
        let mut got = BTreeSet::new();
        let ok = wait_until(DISCOVERY, || {
            got = self.discovered();
            got == want
        });
        assert!(
            ok,
            "{when}: after {DISCOVERY:?} the topology has {} links, the lab {} (directed):{}",
            got.len(),
            want.len(),
            self.diff(&got, &want)
        );
        t0.elapsed()
    }

    /// The topology events since `since`.
    fn events_since(&self, since: Instant) -> Vec<(Instant, TopologyEvent)> {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(t, _)| *t >= since)
            .cloned()
            .collect()
    }

    fn event_name(&self, e: &TopologyEvent) -> String {
        match e {
            TopologyEvent::LinkAdded(l) => format!("link added {}", self.link_name(l)),
            TopologyEvent::LinkRemoved(l, why) => {
                format!("link removed {} ({why:?})", self.link_name(l))
            }
            other => format!("{other:?}"),
        }
    }

    #[track_caller]
    fn pingall_ok(&self, when: &str) -> Duration {
        let t0 = Instant::now();
        let out = self.lab.pingall();
        assert!(out.ok(), "pingall {when} is not 100%:\n{out}");
        t0.elapsed()
    }

    /// `count` pings from `a` to `b` 0.2 s apart (or `interval`), each waiting `wait`;
    /// how many came back.
    fn ping(&self, a: &str, b: &str, count: u32, interval: &str, wait: &str) -> u32 {
        let out = run(
            Command::new("ip").args([
                "netns",
                "exec",
                &self.netns(a),
                "ping",
                "-n",
                "-q",
                "-c",
                &count.to_string(),
                "-i",
                interval,
                "-W",
                wait,
                &self.topo.hosts[b].ip,
            ]),
            Duration::from_secs(30),
        );
        out.stdout
            .lines()
            .find(|l| l.contains("packets transmitted"))
            .and_then(|l| l.split(", ").nth(1))
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }

    fn netns(&self, host: &str) -> String {
        format!("{}-{host}", self.lab.name)
    }

    /// Transmitted frames of every switch port (the root-namespace end of its veth counts
    /// what the switch sends out of it), by (switch, port).
    fn tx_counters(&self) -> BTreeMap<(String, u32), u64> {
        let mut out = BTreeMap::new();
        for (name, s) in &self.topo.switches {
            for (port, iface) in &s.ports {
                let path = format!("/sys/class/net/{iface}/statistics/tx_packets");
                let n = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|t| t.trim().parse().ok())
                    .unwrap_or_else(|| panic!("cannot read {path}"));
                out.insert((name.clone(), *port), n);
            }
        }
        out
    }
}

fn topology_of(lab: &Lab) -> Arc<Topology> {
    lab.ctl
        .pipeline()
        .services()
        .get::<Topology>()
        .expect("the topology app provides Topology")
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

// ---------------------------------------------------------------------------------------
// Checks

/// When the hosts' kernels have confirmed the neighbours a pingall left them unsure of:
/// a host answered from an entry it learned from a request checks it with one unicast
/// ARP request `delay_first_probe_time` (5 s) later, and such pairs then stay quiet.
const ARP_SETTLED: Duration = Duration::from_secs(8);

/// Nothing but discovery for `period` after a pingall: PACKET_INs and every port's
/// transmitted frames stay within what LLDP explains, plus, until [`ARP_SETTLED`], the
/// hosts' own unicast ARP checks (at most a request and a reply per ordered pair of hosts
/// over a port; forwarded by the installed flows, they make no PACKET_IN); and the
/// topology does not change.
fn idle(lab: &AppsLab, period: Duration) {
    let links = lab.expected_links().len() as f64;
    let ports: usize = lab.topo.switches.values().map(|s| s.ports.len()).sum();
    let hosts = lab.topo.hosts.len() as u64;
    let (lldp0, ip0, other0) = (
        lab.lab.ctl.lldp_packet_ins(),
        lab.lab.ctl.ipv4_arp_packet_ins(),
        lab.lab.ctl.other_packet_ins(),
    );
    let tx0 = lab.tx_counters();
    let since = Instant::now();
    // A window without the hosts' ARP checks, when the period leaves room for one.
    let quiet = (period >= 2 * ARP_SETTLED).then(|| {
        thread::sleep(ARP_SETTLED);
        (Instant::now(), lab.tx_counters())
    });
    thread::sleep(period.saturating_sub(since.elapsed()));
    let took = since.elapsed();
    let tx1 = lab.tx_counters();
    let (lldp, ip, other) = (
        lab.lab.ctl.lldp_packet_ins() - lldp0,
        lab.lab.ctl.ipv4_arp_packet_ins() - ip0,
        lab.lab.ctl.other_packet_ins() - other0,
    );
    // Each directed link brings one LLDP PACKET_IN per round, each port sends one
    // discovery frame per round (±10% jitter, and a round may straddle either end).
    let lldp_bound =
        |d: Duration, n: f64| (n * (secs(d) / secs(LLDP_INTERVAL) * 1.25 + 2.0)) as u64;
    let lldp_max = lldp_bound(took, links);
    let tx_max = lldp_bound(took, 1.0) + 3 + 2 * hosts * (hosts - 1);
    let busiest = |a: &BTreeMap<(String, u32), u64>, b: &BTreeMap<(String, u32), u64>| {
        b.iter()
            .map(|(k, n)| (k.clone(), n - a[k]))
            .max_by_key(|(_, n)| *n)
            .expect("ports")
    };
    let ((bs, bp), most) = busiest(&tx0, &tx1);
    let total_tx: u64 = tx1.iter().map(|(k, n)| n - tx0[k]).sum();
    let quiet_check = quiet.map(|(t, txq)| {
        let d = took - (t - since);
        let max = lldp_bound(d, 1.0) + 3;
        (d, busiest(&txq, &tx1), max)
    });
    eprintln!(
        "idle {took:.1?}: PACKET_INs {lldp} LLDP ({:.1}/s for {links} directed links, at most \
         {lldp_max}), {ip} IPv4/ARP, {other} other; ports sent {total_tx} frames over {ports} \
         ports ({:.2}/s/port), busiest {bs}:{bp} {most} (at most {tx_max}){}",
        lldp as f64 / secs(took),
        total_tx as f64 / ports as f64 / secs(took),
        quiet_check
            .as_ref()
            .map(|(d, ((s, p), n), max)| format!(
                "; in the last {d:.1?} busiest {s}:{p} {n} (at most {max})"
            ))
            .unwrap_or_default(),
    );
    assert!(
        lldp <= lldp_max,
        "a storm? {lldp} LLDP PACKET_INs in {took:.1?} of idle, for {links} directed links"
    );
    assert!(
        ip + other <= 10,
        "a storm? {ip} IPv4/ARP and {other} other PACKET_INs in {took:.1?} of idle"
    );
    assert!(
        most <= tx_max,
        "a storm? port {bs}:{bp} sent {most} frames in {took:.1?} of idle"
    );
    if let Some((d, ((s, p), n), max)) = quiet_check {
        assert!(
            n <= max,
            "a storm? port {s}:{p} sent {n} frames in the last {d:.1?} of idle, when only \
             discovery should have sent anything"
        );
    }
    let changes = lab.events_since(since);
    assert!(
        changes.is_empty(),
        "the topology changed while the network was idle:\n  {}",
        changes
            .iter()
            .map(|(t, e)| format!("+{:.2}s {}", secs(*t - since), lab.event_name(e)))
            .collect::<Vec<_>>()
            .join("\n  ")
    );
    let want = lab.expected_links();
    let got = lab.discovered();
    assert_eq!(
        got,
        want,
        "links after the idle period:{}",
        lab.diff(&got, &want)
    );
}

/// An Ethernet frame from `src` to `dst` of the local experimental EtherType 0x88b5:
/// forwarded like any unicast frame, answered by no one (so it goes one way only).
fn one_way_frame(src: [u8; 6], dst: [u8; 6]) -> String {
    let mut f = Vec::new();
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&[0x88, 0xb5]);
    f.extend_from_slice(b"pharos e2e path trace, one way......");
    lab::frame::to_hex(&f)
}

/// The switches and output ports frames from host `a` to host `b` take now: 20 one-way
/// frames sent, then each switch's port that sent them followed from `a`'s switch.
fn traced_path(lab: &AppsLab, a: &str, b: &str) -> Vec<(String, u32)> {
    const N: u64 = 20;
    let (ha, hb) = (&lab.topo.hosts[a], &lab.topo.hosts[b]);
    let hex = one_way_frame(ha.mac_bytes(), hb.mac_bytes());
    // The port to b: every frame that arrives leaves by it.
    let to_b = (hb.switch.clone(), hb.port);
    // The first frames may go through the controller: one first, delivered (its route
    // installed on the way), then the burst.
    let first = lab.tx_counters()[&to_b];
    lab.lab.lab("send", &[a, "--hex", &hex]).expect_ok();
    let delivered = wait_until(Duration::from_secs(3), || lab.tx_counters()[&to_b] > first);
    assert!(
        delivered,
        "the first frame {a} -> {b} never left {}:{}",
        to_b.0, to_b.1
    );
    let before = lab.tx_counters();
    lab.lab
        .lab(
            "send",
            &[
                a,
                "--hex",
                &hex,
                "--count",
                &N.to_string(),
                "--interval",
                "0.005",
            ],
        )
        .expect_ok();
    // Every frame of the burst delivered (the userspace datapath forwards within
    // milliseconds), so every port on the way has counted it.
    let arrived = wait_until(Duration::from_secs(3), || {
        lab.tx_counters()[&to_b] - before[&to_b] >= N
    });
    assert!(
        arrived,
        "the {N} frames {a} -> {b} did not all leave {}:{}",
        to_b.0, to_b.1
    );
    let after = lab.tx_counters();
    let grew = |s: &str, p: u32| {
        let k = (s.to_string(), p);
        after[&k] - before[&k] >= N
    };
    let mut path = Vec::new();
    let mut at = ha.switch.clone();
    let mut seen = BTreeSet::new();
    while at != hb.switch {
        assert!(
            seen.insert(at.clone()),
            "frames {a} -> {b} loop through {at}: {path:?}"
        );
        let next: Vec<_> = lab
            .topo
            .links
            .iter()
            .filter_map(|l| {
                if l.a == at && grew(&l.a, l.port_a) {
                    Some((l.port_a, l.b.clone()))
                } else if l.b == at && grew(&l.b, l.port_b) {
                    Some((l.port_b, l.a.clone()))
                } else {
                    None
                }
            })
            .collect();
        assert!(
            next.len() == 1,
            "frames {a} -> {b} should leave {at} by one inter-switch port; they left by {next:?} \
             (path so far {path:?})"
        );
        path.push((at.clone(), next[0].0));
        at = next[0].1.clone();
    }
    assert!(
        grew(&hb.switch, hb.port),
        "frames {a} -> {b} did not reach {b}'s port {}:{} (path {path:?})",
        hb.switch,
        hb.port
    );
    path
}

/// `ping -D` replies' times (seconds since the epoch) in a background ping's output.
fn reply_times(output: &str) -> Vec<f64> {
    output
        .lines()
        .filter(|l| l.contains("bytes from"))
        .filter_map(|l| l.strip_prefix('[')?.split(']').next()?.parse().ok())
        .collect()
}

fn epoch_secs(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64()
}

/// Takes down a middle link of the path `a` -> `b` while `a` pings `b` every 50 ms:
/// the topology must drop the link within [`LINK_GONE`] of the first PORT_STATUS saying
/// so, and pings must flow again within [`RECOVERY`]; then the link comes back up and is
/// rediscovered.
fn link_down_on_path(lab: &AppsLab, a: &str, b: &str) {
    let path = traced_path(lab, a, b);
    let (sw, port) = path[path.len() / 2].clone();
    let link = lab
        .topo
        .links
        .iter()
        .find(|l| (l.a == sw && l.port_a == port) || (l.b == sw && l.port_b == port))
        .expect("a link of the path")
        .clone();
    eprintln!(
        "path {a} -> {b}: {}; taking down {}:{} - {}:{}",
        path.iter()
            .map(|(s, p)| format!("{s}:{p}"))
            .collect::<Vec<_>>()
            .join(" "),
        link.a,
        link.port_a,
        link.b,
        link.port_b
    );
    let ends = [
        (lab.dpid(&link.a), link.port_a),
        (lab.dpid(&link.b), link.port_b),
    ];
    let gone_links = [
        Link::new(ends[0].0, ends[0].1, ends[1].0, ends[1].1),
        Link::new(ends[1].0, ends[1].1, ends[0].0, ends[0].1),
    ];
    // 1. Background pings, 50 ms apart, for 1.5 s before and 4.5 s after.
    let mut pinger = spawn_ping(lab, a, b, "0.05", 6);
    thread::sleep(Duration::from_millis(1500));
    let statuses_before = lab.lab.ctl.port_status().len();
    let down_at = SystemTime::now();
    let t0 = Instant::now();
    lab.lab.lab("link", &[&link.a, &link.b, "down"]).expect_ok();
    // 2. The topology drops both directions.
    let dropped = wait_until(Duration::from_secs(5), || {
        let now = lab.discovered();
        gone_links.iter().all(|l| !now.contains(l))
    });
    let out = wait_child(&mut pinger, Duration::from_secs(15));
    assert!(
        dropped,
        "the link {}-{} is still in the topology 5 s after it went down",
        link.a, link.b
    );
    let status = lab.lab.ctl.port_status()[statuses_before..]
        .iter()
        .filter(|s| s.down() && ends.contains(&(s.dpid, s.port.port_no)))
        .map(|s| s.at)
        .min()
        .expect("a PORT_STATUS saying the port went down");
    let removed = lab
        .events_since(t0)
        .iter()
        .filter(|(_, e)| matches!(e, TopologyEvent::LinkRemoved(l, _) if gone_links.contains(l)))
        .map(|(t, _)| *t)
        .max()
        .expect("LinkRemoved events");
    let gone_after = removed.saturating_duration_since(status);
    // 3. Pings: the longest gap between replies, and replies after it.
    let times = reply_times(&out);
    let down = epoch_secs(down_at);
    assert!(
        times.iter().any(|t| *t < down),
        "no ping reply before the link went down:\n{out}"
    );
    let after: Vec<f64> = times.iter().copied().filter(|t| *t >= down).collect();
    let mut gap_from = down;
    let mut gap = 0.0f64;
    let mut prev = times
        .iter()
        .copied()
        .filter(|t| *t < down)
        .fold(0.0, f64::max);
    for t in &after {
        if t - prev > gap {
            gap = t - prev;
            gap_from = prev;
        }
        prev = *t;
    }
    eprintln!(
        "link {}-{} down: PORT_STATUS seen {:.0?} after the command, links gone {:.0?} after \
         it ({:.0?} after the command; the observer runs after the topology app); pings: \
         longest gap {gap:.2} s (from {:+.2} s), {} replies after",
        link.a,
        link.b,
        status.saturating_duration_since(t0),
        gone_after,
        removed.saturating_duration_since(t0),
        gap_from - down,
        after.len()
    );
    assert!(
        gone_after <= LINK_GONE,
        "the topology dropped the link {gone_after:.1?} after the PORT_STATUS (at most {LINK_GONE:?})"
    );
    assert!(
        !after.is_empty() && after.last().copied().unwrap_or(0.0) > down + 3.5,
        "pings did not recover after the link {}-{} went down:\n{out}",
        link.a,
        link.b
    );
    assert!(
        gap <= secs(RECOVERY),
        "pings stopped for {gap:.2} s around the link going down (at most {RECOVERY:?}):\n{out}"
    );
    let new_path = traced_path(lab, a, b);
    eprintln!(
        "path {a} -> {b} now: {}",
        new_path
            .iter()
            .map(|(s, p)| format!("{s}:{p}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    // 4. Back up: rediscovered, and every pair reaches every other.
    lab.lab.lab("link", &[&link.a, &link.b, "up"]).expect_ok();
    let took = lab.discovery_exact("after the link came back up");
    eprintln!("link {}-{} up: rediscovered in {took:.1?}", link.a, link.b);
    lab.pingall_ok("after the link came back");
}

/// `ping -D -i INTERVAL -w DEADLINE` from `a` to `b` in the background.
fn spawn_ping(lab: &AppsLab, a: &str, b: &str, interval: &str, deadline: u32) -> Child {
    use std::os::unix::process::CommandExt as _;
    Command::new("ip")
        .args([
            "netns",
            "exec",
            &lab.netns(a),
            "ping",
            "-n",
            "-D",
            "-i",
            interval,
        ])
        .args(["-w", &deadline.to_string(), &lab.topo.hosts[b].ip])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("start ping")
}

/// Waits for a background command and returns its standard output (killed at `timeout`).
fn wait_child(child: &mut Child, timeout: Duration) -> String {
    use std::io::Read as _;
    let done = wait_until(timeout, || child.try_wait().ok().flatten().is_some());
    if !done {
        // SAFETY: kill(2) on the process group our own child leads.
        unsafe {
            libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
        }
    }
    let _ = child.wait();
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    out
}

/// Host `host` moves to switch `to` right after `other` pinged it (so the way to its old
/// place is fresh in the switches): it is re-learned at its new port, and traffic both
/// ways follows it.
fn host_moves(lab: &mut AppsLab, host: &str, to: &str, other: &str) {
    let mac = MacAddr(lab.topo.hosts[host].mac_bytes());
    let from = (
        lab.dpid(&lab.topo.hosts[host].switch),
        lab.topo.hosts[host].port,
    );
    assert_eq!(
        lab.devices()
            .attachment(mac, None)
            .map(|a| (a.dpid.0, a.port)),
        Some(from),
        "{host} should be known at its place before the move"
    );
    assert_eq!(
        lab.ping(other, host, 3, "0.05", "1"),
        3,
        "{other} -> {host} before the move"
    );
    let t0 = Instant::now();
    lab.lab.lab("move", &[host, to]).expect_ok();
    lab.topo = parse_topo(&lab.lab.show());
    let new = (lab.dpid(to), lab.topo.hosts[host].port);
    // The moved host speaks first (as a host does when plugged in: its ARP cache went
    // with its old interface).
    let mut first = None;
    let reached = wait_until(Duration::from_secs(10), || {
        if lab.ping(host, other, 1, "0.2", "0.5") == 1 {
            first = Some(t0.elapsed());
            true
        } else {
            false
        }
    });
    let learned = wait_until(Duration::from_secs(2), || {
        lab.devices()
            .attachment(mac, None)
            .map(|a| (a.dpid.0, a.port))
            == Some(new)
    });
    eprintln!(
        "{host} moved to {to} port {}: {host} -> {other} answered after {first:.1?}; Devices \
         says {:?}",
        new.1,
        lab.devices().attachment(mac, None)
    );
    assert!(
        learned,
        "{host} should be re-learned at {}:{} (dpid {:x}); Devices says {:?}",
        to,
        new.1,
        new.0,
        lab.devices().attachment(mac, None)
    );
    assert!(
        reached,
        "{host} -> {other}: no answer within 10 s of the move"
    );
    assert_eq!(
        lab.ping(other, host, 3, "0.05", "1"),
        3,
        "{other} -> {host} after the move: traffic should follow {host} to {to}"
    );
    lab.pingall_ok(&format!("after {host} moved to {to}"));
    lab.discovery_exact(&format!("after {host} moved"));
}

/// Where things are in a discovery frame (topology::lldp's layout; the plain LLDP of the
/// Open vSwitch notes shares the first two): the Chassis ID's "dpid:%016x" text, the Port
/// ID's 4 bytes, and in the signed TLV the dpid, port and time.
const CHASSIS_ID: std::ops::Range<usize> = 17..38;
const PORT_ID: std::ops::Range<usize> = 41..45;
const TLV_DPID: std::ops::Range<usize> = 56..64;
const TLV_PORT: std::ops::Range<usize> = 64..68;
const TLV_SENT_AT: std::ops::Range<usize> = 68..76;

/// A host sends LLDP that claims to come from another switch: signed with another key,
/// in another controller's format, a genuine frame tampered with, and a genuine frame
/// sent back into the port it came out of. None makes a link.
fn forged_lldp(lab: &AppsLab) {
    let h1 = lab.topo.hosts["h1"].clone();
    let victim = lab
        .topo
        .links
        .iter()
        .find(|l| l.a != h1.switch && l.b != h1.switch)
        .or_else(|| lab.topo.links.first())
        .expect("a switch link")
        .clone();
    let (claim_dpid, claim_port) = (lab.dpid(&victim.a), victim.port_a);
    // A genuine frame: what s1 sends h1 (discovery goes out of every port).
    let got = lab
        .lab
        .lab("recv", &["h1", "--ethertype", "0x88cc", "--timeout", "5"]);
    got.expect_ok();
    let captured = Instant::now();
    let genuine = lab::frame::parse_hex(got.stdout.trim()).expect("a frame");
    assert_eq!(genuine.len(), lldp::FRAME_LEN, "a Pharos discovery frame");
    let sent_at = u64::from_be_bytes(genuine[TLV_SENT_AT].try_into().expect("8 bytes"));

    let mut frames: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut f = Vec::new();
    let other_key = DiscoveryKey::random().expect("a random key");
    lldp::encode(
        &other_key,
        claim_dpid,
        claim_port,
        MacAddr([2, 0, 0, 0, 0, 0x99]),
        sent_at,
        &mut f,
    );
    frames.push(("our format, another key", f));
    // The notes' plain LLDP (what Open vSwitch or Floodlight-style discovery sends), here
    // claiming the victim's dpid and port.
    let mut plain = lab::frame::parse_hex(
        "0180c200000e02000000000188cc021607647069643a3030303030303030303030303030303104050200000002060200780000",
    )
    .expect("hex");
    plain[CHASSIS_ID].copy_from_slice(format!("dpid:{claim_dpid:016x}").as_bytes());
    plain[PORT_ID].copy_from_slice(&claim_port.to_be_bytes());
    frames.push(("plain LLDP, no Pharos TLV", plain));
    // The genuine frame with its dpid and port changed (in the TLV and in the Chassis
    // and Port IDs), its tag left as it was.
    let mut tampered = genuine.clone();
    tampered[CHASSIS_ID].copy_from_slice(format!("dpid:{claim_dpid:016x}").as_bytes());
    tampered[PORT_ID].copy_from_slice(&claim_port.to_be_bytes());
    tampered[TLV_DPID].copy_from_slice(&claim_dpid.to_be_bytes());
    tampered[TLV_PORT].copy_from_slice(&claim_port.to_be_bytes());
    frames.push(("genuine frame, dpid and port changed", tampered));
    frames.push((
        "genuine frame sent back where it came from",
        genuine.clone(),
    ));

    // The genuine frame again, from a host on another switch once it is older than the
    // topology app's max_frame_age (1 s): a stale replay.
    let far = lab
        .topo
        .hosts
        .iter()
        .rev()
        .find(|(_, h)| h.switch != h1.switch)
        .map(|(n, h)| (n.clone(), h.clone()))
        .expect("a host on another switch");
    let mut sends: Vec<(&str, &str, Vec<u8>)> = frames
        .into_iter()
        .map(|(what, f)| (what, "h1", f))
        .collect();
    sends.push((
        "genuine frame replayed 1.5 s later",
        &far.0,
        genuine.clone(),
    ));

    let at = |h: &Host| (lab.dpid(&h.switch), h.port);
    let counted = || [at(&h1), at(&far.1)].map(|(d, p)| lab.lab.ctl.lldp_packet_ins_at(d, p));
    let before = counted();
    let since = Instant::now();
    for (what, host, f) in &sends {
        if what.contains("replayed") {
            thread::sleep(
                (captured + Duration::from_millis(1500)).saturating_duration_since(Instant::now()),
            );
        }
        lab.lab
            .lab(
                "send",
                &[
                    host,
                    "--hex",
                    &lab::frame::to_hex(f),
                    "--count",
                    "3",
                    "--interval",
                    "0.05",
                ],
            )
            .expect_ok();
    }
    let want = [3 * (sends.len() as u64 - 1), 3];
    let arrived = wait_until(Duration::from_secs(3), || {
        let now = counted();
        (0..2).all(|i| now[i] - before[i] >= want[i])
    });
    let now = counted();
    assert!(
        arrived,
        "the forged frames should reach the controller as PACKET_INs from {}:{} and {}:{}; {} of \
         {} and {} of {} did",
        h1.switch,
        h1.port,
        far.1.switch,
        far.1.port,
        now[0] - before[0],
        want[0],
        now[1] - before[1],
        want[1]
    );
    // A discovery round later: nothing new.
    thread::sleep(LLDP_INTERVAL + Duration::from_millis(500));
    let added: Vec<String> = lab
        .events_since(since)
        .iter()
        .map(|(_, e)| lab.event_name(e))
        .collect();
    assert!(
        added.is_empty(),
        "frames a host forged ({}) changed the topology:\n  {}",
        sends.iter().map(|f| f.0).collect::<Vec<_>>().join("; "),
        added.join("\n  ")
    );
    let want = lab.expected_links();
    let got = lab.discovered();
    assert_eq!(
        got,
        want,
        "links after forged LLDP:{}",
        lab.diff(&got, &want)
    );
    eprintln!(
        "forged LLDP ({} kinds x 3, claiming {}:{}) reached the controller and made no link",
        sends.len(),
        victim.a,
        claim_port
    );
}

/// Two hosts relay discovery frames: what `a`'s switch sends `a` is sent at once by `b`
/// into `b`'s switch, within the frame's max age. A link `a`'s port -> `b`'s port must
/// not appear (the frame is a replay, however fresh).
fn relayed_lldp(lab: &AppsLab, a: &str, b: &str) {
    let since = Instant::now();
    let mut ages = Vec::new();
    for _ in 0..3 {
        let got = lab
            .lab
            .lab("recv", &[a, "--ethertype", "0x88cc", "--timeout", "5"]);
        got.expect_ok();
        let t = Instant::now();
        lab.lab
            .lab("send", &[b, "--hex", got.stdout.trim()])
            .expect_ok();
        ages.push(t.elapsed());
    }
    thread::sleep(Duration::from_millis(500));
    let events: Vec<String> = lab
        .events_since(since)
        .iter()
        .map(|(_, e)| lab.event_name(e))
        .collect();
    eprintln!(
        "discovery frames {a} received, relayed by {b} within {:.0?}: topology events {events:?}",
        ages.iter().max().expect("3 relays")
    );
    let want = lab.expected_links();
    let got = lab.discovered();
    assert!(
        events.is_empty() && got == want,
        "discovery frames relayed from {a} to {b} made a link:\n  {}{}",
        events.join("\n  "),
        lab.diff(&got, &want)
    );
}

// ---------------------------------------------------------------------------------------
// The tests

/// What a lab does after every lab's checks.
#[derive(Debug, Clone, Copy)]
enum Extra {
    ForgedLldp,
    RelayedLldp(&'static str, &'static str),
    LinkDown(&'static str, &'static str),
    Move(&'static str, &'static str, &'static str),
}

/// Every lab's checks (discovery, pingall, idle), then `extras`, on lab `spec` for each
/// (name, version) at once, one thread each, so that their idle periods overlap; fails
/// naming each version that failed.
/// Which switches a lab runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Switch {
    /// Open vSwitch (the default).
    Ovs,
    /// `pharos switch` (`pharos lab up --switch pharos`, issue 17).
    Pharos,
}

fn acceptance_versions(test: &str, spec: &str, labs: &[(&str, Of)], extras: &[Extra]) {
    acceptance_on(test, spec, labs, extras, Switch::Ovs)
}

fn acceptance_on(test: &str, spec: &str, labs: &[(&str, Of)], extras: &[Extra], switch: Switch) {
    if !enabled(test) {
        return;
    }
    let t0 = Instant::now();
    let failed: Vec<String> = thread::scope(|scope| {
        let running: Vec<_> = labs
            .iter()
            .map(|&(name, of)| {
                (
                    of,
                    scope.spawn(move || one_lab(test, name, of, spec, extras, switch)),
                )
            })
            .collect();
        running
            .into_iter()
            .filter_map(|(of, h)| {
                h.join().err().map(|e| {
                    let why = e
                        .downcast_ref::<String>()
                        .map(String::as_str)
                        .or_else(|| e.downcast_ref::<&str>().copied())
                        .unwrap_or("(no message)");
                    format!("{spec} OpenFlow {}: {why}", of.flag())
                })
            })
            .collect()
    });
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
    eprintln!("lab_apps::{test}: all versions {:.1?}", t0.elapsed());
}

/// One lab's part of [`acceptance`].
fn one_lab(test: &str, name: &str, of: Of, spec: &str, extras: &[Extra], switch: Switch) {
    let t0 = Instant::now();
    let lock = serial();
    let waited = t0.elapsed();
    let mut lab = AppsLab::start(name, of, spec, switch);
    let up = t0.elapsed() - waited;
    let found = lab.discovery_exact("after up");
    let pinged = lab.pingall_ok("on a fresh lab");
    lab.discovery_exact("after pingall");
    eprintln!(
        "lab_apps::{test}: {spec} OpenFlow {}: up {up:.1?}, links found in {found:.1?} ({} \
         directed), pingall {pinged:.1?}",
        of.flag(),
        lab.expected_links().len()
    );
    // Idle without the lock: nothing here competes for time.
    drop(lock);
    idle(&lab, idle_period(test));
    let _lock = serial();
    for e in extras {
        match *e {
            Extra::ForgedLldp => forged_lldp(&lab),
            Extra::RelayedLldp(a, b) => relayed_lldp(&lab, a, b),
            Extra::LinkDown(a, b) => link_down_on_path(&lab, a, b),
            Extra::Move(h, to, other) => host_moves(&mut lab, h, to, other),
        }
    }
    drop(lab);
    eprintln!(
        "lab_apps::{test}: {spec} OpenFlow {} {:.1?}",
        of.flag(),
        t0.elapsed()
    );
}

/// The offsets the forgeries use are where `lldp::encode` puts things (no lab needed).
#[test]
fn discovery_frame_offsets() {
    let mut f = Vec::new();
    let key = DiscoveryKey::from_bytes([7; 16]);
    lldp::encode(&key, 0x2a, 7, MacAddr([2, 0, 0, 0, 0, 1]), 12_345, &mut f);
    assert_eq!(&f[CHASSIS_ID], b"dpid:000000000000002a");
    assert_eq!(f[PORT_ID], 7u32.to_be_bytes());
    assert_eq!(f[TLV_DPID], 0x2au64.to_be_bytes());
    assert_eq!(f[TLV_PORT], 7u32.to_be_bytes());
    assert_eq!(f[TLV_SENT_AT], 12_345u64.to_be_bytes());
    let mut t = f.clone();
    t[CHASSIS_ID].copy_from_slice(b"dpid:000000000000002b");
    t[PORT_ID].copy_from_slice(&8u32.to_be_bytes());
    t[TLV_DPID].copy_from_slice(&0x2bu64.to_be_bytes());
    t[TLV_PORT].copy_from_slice(&8u32.to_be_bytes());
    assert_eq!(
        lldp::verify(&key, &t, 12_345, 10_000),
        Err(lldp::Reject::BadTag),
        "a tampered frame fails on its tag, not on its layout"
    );
    assert!(lldp::verify(&key, &f, 12_345, 10_000).is_ok());
}

/// Relayed: discovery frames handed on between two hosts as they arrive (fresh and
/// genuine, but on host ports: refused, topology::guard).
const LINEAR: &[Extra] = &[
    Extra::ForgedLldp,
    Extra::RelayedLldp("h1", "h4"),
    Extra::Move("h1", "s4", "h2"),
];
const RING: &[Extra] = &[Extra::LinkDown("h1", "h3")];
const FATTREE: &[Extra] = &[Extra::LinkDown("h1", "h16"), Extra::Move("h1", "s20", "h5")];

#[test]
fn linear4() {
    acceptance_versions(
        "linear4",
        "linear,4",
        &[("wl0", Of::V10), ("wl3", Of::V13)],
        LINEAR,
    );
}

#[test]
fn tree23() {
    acceptance_versions(
        "tree23",
        "tree,2,3",
        &[("wt0", Of::V10), ("wt3", Of::V13)],
        &[],
    );
}

#[test]
fn ring4() {
    acceptance_versions(
        "ring4",
        "ring,4",
        &[("wr0", Of::V10), ("wr3", Of::V13), ("wrm", Of::Mixed)],
        RING,
    );
}

#[test]
fn fattree4() {
    acceptance_versions(
        "fattree4",
        "fattree,4",
        &[("wf0", Of::V10), ("wf3", Of::V13)],
        FATTREE,
    );
}

// The default apps on Pharos's own switches (issue 17): the same checks.

#[test]
fn ring4_pharos_switch() {
    acceptance_on(
        "ring4_pharos_switch",
        "ring,4",
        &[("pr0", Of::V10), ("pr3", Of::V13)],
        RING,
        Switch::Pharos,
    );
}

#[test]
fn fattree4_pharos_switch() {
    acceptance_on(
        "fattree4_pharos_switch",
        "fattree,4",
        &[("pf0", Of::V10), ("pf3", Of::V13)],
        FATTREE,
        Switch::Pharos,
    );
}

// ---------------------------------------------------------------------------------------
// Start-up (issue 10): no storm while discovery settles

/// One start-up round: a fresh controller, `pharos lab up`, and at once `pharos lab
/// pingall`, as a user types them. Returns what went wrong, if anything (pingall below
/// 100%, a host seen moving or forgotten), with how much the topology knew when pingall
/// started (logged either way).
fn start_up_round(test: &str, name: &str, of: Of, spec: &str, round: u32) -> Option<String> {
    let lab = Lab::with_apps(name, of, apps_by_name(APPS), false);
    let devices = lab
        .ctl
        .pipeline()
        .services()
        .get::<Devices>()
        .expect("the device_manager app provides Devices");
    let host_events: Arc<Mutex<Vec<HostEvent>>> = Arc::default();
    let sink = Arc::clone(&host_events);
    devices.subscribe(Box::new(move |e| {
        if !matches!(e, HostEvent::Added { .. } | HostEvent::IpAdded { .. }) {
            sink.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(e.clone());
        }
    }));
    lab.up(spec);
    // What the controller knew as pingall started (`up` returns once the switches'
    // connections are established: some may not have finished their handshake).
    let at_start = topology_of(&lab).snapshot();
    let (joined, known) = (at_start.switches().len(), at_start.links().len());
    let t0 = Instant::now();
    let out = lab.pingall();
    let pinged = t0.elapsed();
    let lab = AppsLab {
        topo: parse_topo(&lab.show()),
        lab,
        events: Arc::default(),
    };
    let (switches, links) = (lab.topo.switches.len(), lab.expected_links().len());
    let wrong = std::mem::take(&mut *host_events.lock().unwrap_or_else(|e| e.into_inner()));
    eprintln!(
        "lab_apps::{test}: {spec} OpenFlow {} round {round}: pingall started with {joined} of \
         {switches} switches joined and {known} of {links} links known; {} in {pinged:.1?}; \
         {} hosts moved or forgotten",
        of.flag(),
        if out.ok() { "100%" } else { "LOSS" },
        wrong.len()
    );
    let mut problems = Vec::new();
    if !out.ok() {
        problems.push(format!("pingall is not 100%:\n{out}"));
    }
    if !wrong.is_empty() {
        problems.push(format!("hosts moved or were forgotten: {wrong:?}"));
    }
    (!problems.is_empty()).then(|| {
        format!(
            "{spec} OpenFlow {} round {round} ({known} of {links} links known at the start): {}",
            of.flag(),
            problems.join("; ")
        )
    })
}

/// [`start_up_round`] [`startup_rounds`] times for each (name, version), one lab at a
/// time (holding the serial lock: the timing is the point); fails with every failed
/// round, after saying how many passed per version.
fn start_up(test: &str, spec: &str, labs: &[(&str, Of)]) {
    if !enabled(test) {
        return;
    }
    let rounds = startup_rounds(test);
    let mut failed = Vec::new();
    for &(name, of) in labs {
        let mut passed = 0;
        for round in 1..=rounds {
            let _lock = serial();
            match start_up_round(test, name, of, spec, round) {
                None => passed += 1,
                Some(why) => failed.push(why),
            }
        }
        eprintln!(
            "lab_apps::{test}: {spec} OpenFlow {}: {passed}/{rounds} start-ups lost nothing",
            of.flag()
        );
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[test]
fn ring4_start_up() {
    start_up(
        "ring4_start_up",
        "ring,4",
        &[("xr0", Of::V10), ("xr3", Of::V13), ("xrm", Of::Mixed)],
    );
}

#[test]
fn fattree4_start_up() {
    start_up(
        "fattree4_start_up",
        "fattree,4",
        &[("xf0", Of::V10), ("xf3", Of::V13), ("xfm", Of::Mixed)],
    );
}
