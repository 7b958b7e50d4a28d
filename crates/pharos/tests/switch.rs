//! `pharos switch` end to end: `pharos run --apps learning_switch` and `pharos switch`
//! on veth pairs to two host namespaces; the hosts ping each other, in OpenFlow 1.0
//! and 1.3, and the switch stops cleanly on SIGTERM. Groups set with Open vSwitch's
//! `ovs-ofctl` carry the pings, are described and counted, and take their flows when
//! deleted.
//!
//! Needs root (network namespaces); `PHAROS_SKIP_LAB=1` skips it, recorded as the lab
//! tests' skips are. Every namespace and interface it makes is removed by a guard, even
//! when the test fails.

mod common;
use common::proc as proc_kit;

use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use proc_kit::{free_port, skipped, Pharos};

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn must(args: &[&str]) {
    assert!(ip(args), "ip {} failed", args.join(" "));
}

/// Two host namespaces, each with a veth whose other end stays in this namespace for
/// the switch; removed on drop.
struct Net {
    hosts: [String; 2],
    switch_ifaces: [String; 2],
}

impl Net {
    fn new(tag: &str) -> Net {
        let id = std::process::id() % 100_000;
        let net = Net {
            hosts: [format!("psw{tag}{id}a"), format!("psw{tag}{id}b")],
            switch_ifaces: [format!("ps{tag}{id}p1"), format!("ps{tag}{id}p2")],
        };
        net.remove();
        for i in 0..2 {
            let (ns, sw) = (&net.hosts[i], &net.switch_ifaces[i]);
            let host_if = format!("ps{tag}{id}h{}", i + 1);
            must(&["netns", "add", ns]);
            must(&["link", "add", sw, "type", "veth", "peer", "name", &host_if]);
            must(&["link", "set", &host_if, "netns", ns]);
            let addr = format!("10.0.0.{}/24", i + 1);
            must(&["-n", ns, "addr", "add", &addr, "dev", &host_if]);
            must(&["-n", ns, "link", "set", &host_if, "up"]);
            must(&["-n", ns, "link", "set", "lo", "up"]);
            must(&["link", "set", sw, "up"]);
        }
        net
    }

    fn remove(&self) {
        for (ns, sw) in self.hosts.iter().zip(&self.switch_ifaces) {
            // Deleting the namespace deletes the veth in it, and so its peer.
            ip(&["netns", "del", ns]);
            ip(&["link", "del", sw]);
        }
    }

    fn ping(&self, count: &str) -> bool {
        Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.hosts[0],
                "ping",
                "-c",
                count,
                "-i",
                "0.2",
            ])
            .args(["-W", "1", "10.0.0.2"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        self.remove();
    }
}

/// `pharos switch` as a child; killed on drop if still running.
struct SwitchProc {
    child: Child,
    log: std::path::PathBuf,
}

impl SwitchProc {
    fn start(of: &str, port: u16, net: &Net, extra: &[&str]) -> SwitchProc {
        let controller = format!("tcp:127.0.0.1:{port}");
        let mut args = vec!["--controller", &controller];
        args.extend_from_slice(extra);
        SwitchProc::spawn(of, &args, net)
    }

    /// `pharos switch` on the net's two ports with `args` (its controllers or
    /// listeners).
    fn spawn(of: &str, args: &[&str], net: &Net) -> SwitchProc {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let log = std::env::temp_dir().join(format!(
            "pharos-switch-test-{}-{of}-{}-{}.log",
            std::process::id(),
            net.hosts[0],
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let file = std::fs::File::create(&log).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_pharos"))
            .args(["switch", "--dpid", "0x1", "--of", of])
            .args(args)
            .args(["--port", &format!("1={}", net.switch_ifaces[0])])
            .args(["--port", &format!("2={}", net.switch_ifaces[1])])
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("pharos switch starts");
        SwitchProc { child, log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for SwitchProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

fn hosts_ping_through_the_switch(of: &str, tag: &str) {
    hosts_ping_through_the_switch_with(of, tag, &[]);
}

fn hosts_ping_through_the_switch_with(of: &str, tag: &str, extra: &[&str]) {
    let net = Net::new(tag);
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let _controller = Pharos::run(
        &[
            "--apps",
            "learning_switch",
            "--listen",
            &listen,
            "--api",
            "off",
        ],
        &[],
    );
    let mut switch = SwitchProc::start(of, port, &net, extra);
    // The first pings may go while the switch connects and the controller learns.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !net.ping("1") {
        assert!(
            switch.child.try_wait().unwrap().is_none(),
            "pharos switch exited:\n{}",
            switch.log()
        );
        assert!(
            Instant::now() < deadline,
            "no ping through the switch (OpenFlow {of}) within 20 s; its log:\n{}",
            switch.log()
        );
        thread::sleep(Duration::from_millis(100));
    }
    assert!(net.ping("5"), "5 pings in a row (OpenFlow {of})");
    if extra.contains(&"af_xdp") {
        assert!(switch.log().contains("AF_XDP port"), "{}", switch.log());
    }
    if let Some(i) = extra.iter().position(|a| *a == "--rt-priority") {
        // The loop's thread (the process's only one) is real-time at that priority.
        let out = std::process::Command::new("chrt")
            .args(["-p", &switch.child.id().to_string()])
            .output()
            .expect("chrt (util-linux)");
        let out = String::from_utf8_lossy(&out.stdout);
        assert!(out.contains("SCHED_FIFO"), "{out}");
        assert!(
            out.contains(&format!("priority: {}", extra[i + 1])),
            "{out}"
        );
        assert!(
            switch.log().contains("real-time (SCHED_FIFO)"),
            "{}",
            switch.log()
        );
    }
    // SIGTERM stops it cleanly: exit status 0, within the 100 ms the loop promises
    // (plus a margin for a loaded machine).
    // SAFETY: kill on our own child's pid.
    unsafe { libc::kill(switch.child.id() as i32, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(5);
    let status = loop {
        if let Some(s) = switch.child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "pharos switch ignored SIGTERM");
        thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "exit {status:?}; log:\n{}", switch.log());
    assert!(switch.log().contains("stopped"), "{}", switch.log());
}

#[test]
fn hosts_ping_through_a_pharos_switch_on_openflow_10() {
    if skipped("hosts_ping_through_a_pharos_switch_on_openflow_10") {
        return;
    }
    hosts_ping_through_the_switch("1.0", "0");
}

#[test]
fn hosts_ping_through_a_pharos_switch_on_openflow_13() {
    if skipped("hosts_ping_through_a_pharos_switch_on_openflow_13") {
        return;
    }
    hosts_ping_through_the_switch("1.3", "3");
}

/// `--datapath af_xdp`: the ports on AF_XDP sockets, the XDP program in veth's driver;
/// the hosts ping through it as through the packet sockets, and the log says so.
#[test]
fn hosts_ping_through_a_pharos_switch_on_af_xdp() {
    if skipped("hosts_ping_through_a_pharos_switch_on_af_xdp") {
        return;
    }
    hosts_ping_through_the_switch_with("1.3", "x", &["--datapath", "af_xdp"]);
}

/// `--rt-priority`: the switch's thread and its NAPI threads real-time; ping as before.
#[test]
fn hosts_ping_through_a_real_time_pharos_switch_on_af_xdp() {
    if skipped("hosts_ping_through_a_real_time_pharos_switch_on_af_xdp") {
        return;
    }
    hosts_ping_through_the_switch_with("1.3", "r", &["--datapath", "af_xdp", "--rt-priority", "5"]);
}

/// `--rt-priority` is refused, before any port is opened, with a data path whose receive
/// work a real-time switch would starve, and out of 1..=99.
#[test]
fn rt_priority_needs_af_xdp_and_a_priority_from_1_to_99() {
    for (args, want) in [
        (
            vec!["--rt-priority", "5"],
            "--rt-priority needs --datapath af_xdp",
        ),
        (
            vec!["--rt-priority", "5", "--datapath", "af_xdp_generic"],
            "--rt-priority needs --datapath af_xdp",
        ),
        (vec!["--rt-priority", "0", "--datapath", "af_xdp"], "0"),
        (vec!["--rt-priority", "100", "--datapath", "af_xdp"], "100"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pharos"))
            .args(["switch", "--dpid", "1", "--port", "1=pdp-none9"])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// `--datapath af_xdp` on an interface already running an XDP program: refused at start
/// with the port and the reason, exit status 1 (root needed).
#[test]
fn an_af_xdp_port_on_an_interface_with_xdp_already_is_refused() {
    if skipped("an_af_xdp_port_on_an_interface_with_xdp_already_is_refused") {
        return;
    }
    let net = Net::new("y");
    // A first switch holds the interfaces' XDP.
    let mut first = SwitchProc::spawn("1.3", &["--datapath", "af_xdp"], &net);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !first.log().contains("AF_XDP port") {
        assert!(first.child.try_wait().unwrap().is_none(), "{}", first.log());
        assert!(Instant::now() < deadline, "{}", first.log());
        thread::sleep(Duration::from_millis(50));
    }
    let mut second = SwitchProc::spawn("1.3", &["--datapath", "af_xdp"], &net);
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = second.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the second switch ran: {}",
            second.log()
        );
        thread::sleep(Duration::from_millis(50));
    };
    assert!(!status.success());
    let log = second.log();
    assert!(
        log.contains("opening port 1") && log.contains("another XDP program"),
        "{log}"
    );
    assert!(first.child.try_wait().unwrap().is_none(), "{}", first.log());
}

/// `ssl:` without the switch's TLS files, or with one that is not PEM, is refused at
/// start-up with the flag or the file named (before any port is opened: no root
/// needed).
#[test]
fn ssl_controllers_need_readable_tls_files() {
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pharos"))
            .args([
                "switch",
                "--dpid",
                "1",
                "--port",
                "1=no-such-if0",
                "--controller",
                "ssl:127.0.0.1:6653",
            ])
            .args(extra)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = run(&[]);
    assert!(
        err.contains("ssl:127.0.0.1:6653 needs --private-key, --certificate and --ca-cert"),
        "{err}"
    );
    let dir = std::env::temp_dir().join(format!("pharos-switch-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let junk = dir.join("junk.pem");
    std::fs::write(&junk, "not a certificate\n").unwrap();
    let junk = junk.to_str().unwrap();
    let err = run(&[
        "--private-key",
        junk,
        "--certificate",
        junk,
        "--ca-cert",
        junk,
    ]);
    assert!(
        err.contains("the CA certificate") && err.contains("junk.pem"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `ovs-ofctl -O OpenFlow13 ARGS...` against `target`: (success, stdout + stderr).
fn ofctl13(target: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new("ovs-ofctl")
        .args(["-O", "OpenFlow13"])
        .arg(args[0])
        .arg(target)
        .args(&args[1..])
        .output()
        .expect("ovs-ofctl runs (Debian's openvswitch-common)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Groups as a user sets them with `ovs-ofctl`: an all group and a select group carry
/// the two directions of a ping (the select group's weight-0 bucket never taken);
/// `dump-groups`, `dump-group-stats` and `dump-group-features` read them back; a group
/// that exists, a flow naming a missing group and a fast-failover group are refused
/// with their errors; deleting the groups takes their flows, and the pings stop.
#[test]
fn groups_set_with_ovs_ofctl_forward_are_counted_and_take_their_flows_when_deleted() {
    if skipped("groups_set_with_ovs_ofctl_forward_are_counted_and_take_their_flows_when_deleted") {
        return;
    }
    let net = Net::new("g");
    let sock =
        std::env::temp_dir().join(format!("pharos-switch-groups-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&sock);
    let target = format!("unix:{}", sock.display());
    let mut switch = SwitchProc::spawn(
        "1.3",
        &["--listen", &format!("punix:{}", sock.display())],
        &net,
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ofctl13(&target, &["show"]).0 {
        assert!(
            switch.child.try_wait().unwrap().is_none() && Instant::now() < deadline,
            "pharos switch did not listen on {target}:\n{}",
            switch.log()
        );
        thread::sleep(Duration::from_millis(50));
    }
    let must = |args: &[&str]| {
        let (ok, text) = ofctl13(&target, args);
        assert!(ok, "ovs-ofctl {args:?}: {text}");
        text
    };
    must(&["add-group", "group_id=1,type=all,bucket=output:2"]);
    must(&[
        "add-group",
        "group_id=2,type=select,bucket=weight:5,output:1,bucket=weight:0,output:2",
    ]);
    must(&["add-flow", "in_port=1,actions=group:1"]);
    must(&["add-flow", "in_port=2,actions=group:2"]);
    assert!(
        net.ping("3"),
        "pings through the groups; log:\n{}",
        switch.log()
    );

    let desc = must(&["dump-groups"]);
    assert!(
        desc.contains("group_id=1,type=all,bucket=actions=output:2"),
        "{desc}"
    );
    assert!(
        desc.contains("group_id=2,type=select,bucket=weight:5,actions=output:1,bucket=weight:0,actions=output:2"),
        "{desc}"
    );
    let stats = must(&["dump-group-stats"]);
    let line = |id: &str| {
        stats
            .lines()
            .find(|l| l.contains(&format!("group_id={id},")))
            .unwrap_or_else(|| panic!("group {id} in {stats}"))
            .to_string()
    };
    for id in ["1", "2"] {
        let l = line(id);
        assert!(l.contains("ref_count=1"), "{l}");
        assert!(
            !l.contains(",packet_count=0,"),
            "group {id} counted the pings: {l}"
        );
    }
    assert!(
        line("2").contains("bucket1:packet_count=0"),
        "the weight-0 bucket is never taken: {stats}"
    );
    let features = must(&["dump-group-features"]);
    assert!(features.contains("Types:  0x7"), "{features}");

    let (ok, text) = ofctl13(
        &target,
        &["add-group", "group_id=1,type=all,bucket=output:1"],
    );
    assert!(!ok && text.contains("OFPGMFC_GROUP_EXISTS"), "{text}");
    let (ok, text) = ofctl13(&target, &["add-flow", "priority=9,actions=group:9"]);
    assert!(!ok && text.contains("OFPBAC_BAD_OUT_GROUP"), "{text}");
    let (ok, text) = ofctl13(
        &target,
        &[
            "add-group",
            "group_id=3,type=ff,bucket=watch_port:1,output:1",
        ],
    );
    assert!(!ok && text.contains("OFPGMFC_BAD_TYPE"), "{text}");

    must(&["del-groups"]);
    assert_eq!(must(&["dump-groups"]).lines().count(), 1, "no group left");
    let flows = must(&["dump-flows"]);
    assert!(
        !flows.contains("group:"),
        "the groups' flows went with them: {flows}"
    );
    assert!(!net.ping("1"), "no flow, no ping");
    let _ = std::fs::remove_file(&sock);
}
