//! Issue 13's acceptance for WebAssembly apps on real Open vSwitch: the WASM learning
//! switch (wasm/examples/learning-switch, loaded from wasm/prebuilt/ by the
//! `pharos-wasm` host) forwards a whole lab on OpenFlow 1.0 and 1.3 (pingall 100%),
//! and is loaded, reloaded and unloaded with `pharos ctl app` (through the REST API)
//! while a ping runs, losing at most one ping per change; between those changes the
//! native learning switch is stopped and started again so that the ping rides the
//! WASM app's own flows when it is reloaded. And the sandbox's bad guests (endless
//! loop, unbounded allocation, trap), loaded in front of the native learning switch on
//! a 1.0 and a 1.3 switch while a ping runs, are each quarantined with the cause while
//! the native app keeps the ping going.
//!
//! Needs root, Open vSwitch and the rest (`scripts/install-test-deps`), like `lab.rs`;
//! `PHAROS_SKIP_LAB=1` skips them, saying so and recording it.

mod common;
use common::lab as harness;

use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use controller::app::{AnyApp, Order};
use controller::host::LoadSpec;
use harness::{apps_by_name, enabled, parse_topo, run, serial, wait_until, AppSet, Lab, Of};

/// The WASM learning switch's module.
const WASM_LS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../wasm/prebuilt/pharos_wasm_learning_switch.wasm"
);
/// The REST API's token in these tests.
const TOKEN: &str = "lab-wasm-token";
/// How long the switches get to connect after `up`.
const CONNECT: Duration = Duration::from_secs(10);

/// The WASM learning switch, as `pharos ctl app load` would make it (one loader for
/// the process, as `pharos run` has).
fn wasm_learning_switch() -> Box<dyn AnyApp> {
    static LOADER: OnceLock<wasm::WasmLoader> = OnceLock::new();
    static MODULE: OnceLock<Vec<u8>> = OnceLock::new();
    let module =
        MODULE.get_or_init(|| std::fs::read(WASM_LS).unwrap_or_else(|e| panic!("{WASM_LS}: {e}")));
    let spec = LoadSpec {
        name: "wasm_ls".into(),
        order: Order::direct(0),
        params_json: "{}".into(),
    };
    let loader = LOADER.get_or_init(wasm::WasmLoader::default);
    Box::new(
        loader
            .load_wasm(&spec, module)
            .expect("the WASM learning switch loads"),
    )
}

#[test]
fn the_wasm_learning_switch_forwards_a_lab_on_1_0_and_1_3() {
    if !enabled("the_wasm_learning_switch_forwards_a_lab_on_1_0_and_1_3") {
        return;
    }
    let _serial = serial();
    for (of, name) in [(Of::V10, "wl10"), (Of::V13, "wl13")] {
        let apps: AppSet = Arc::new(|| vec![wasm_learning_switch()]);
        let mut lab = Lab::with_apps(name, of, apps, false);
        lab.up("tree,2,2");
        assert!(
            lab.ctl.wait_connected(3, CONNECT),
            "{of:?}: switches connect"
        );
        let out = lab.pingall();
        assert!(
            out.ok(),
            "{of:?}: pingall with the WASM learning switch:\n{out}"
        );
        assert!(
            lab.ctl.ipv4_arp_packet_ins() > 0,
            "{of:?}: the controller was involved"
        );
        let p = lab.ctl.pipeline();
        assert_eq!(p.apps.is_quarantined("wasm_ls"), Some(false), "{of:?}");
        lab.down().expect_ok();
    }
}

/// Replies in a `ping` log so far.
fn replies(log: &std::path::Path) -> usize {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().filter(|l| l.contains("bytes from")).count()
}

/// `N packets transmitted, M received` of a `ping` summary.
fn ping_summary(text: &str) -> Option<(u64, u64)> {
    let line = text.lines().find(|l| l.contains("packets transmitted"))?;
    let mut numbers = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|n| n.parse::<u64>().ok());
    Some((numbers.next()??, numbers.next()??))
}

#[test]
fn the_wasm_learning_switch_is_reloaded_unloaded_and_loaded_while_a_ping_runs() {
    if !enabled("the_wasm_learning_switch_is_reloaded_unloaded_and_loaded_while_a_ping_runs") {
        return;
    }
    let _serial = serial();
    for (of, name) in [(Of::V10, "wr10"), (Of::V13, "wr13")] {
        // The native learning switch (direct:0) forwards before the WASM one is loaded
        // in front of it (direct:-1) and after it is unloaded.
        let mut lab = Lab::with_apps(name, of, apps_by_name(&["learning_switch"]), false);
        lab.up("linear,2");
        assert!(
            lab.ctl.wait_connected(2, CONNECT),
            "{of:?}: switches connect"
        );
        assert!(lab.pingall().ok(), "{of:?}: pingall before the changes");
        let topo = parse_topo(&lab.show());
        let h2 = topo.hosts["h2"].ip.clone();
        // 20 pings a second for 15 s: 300.
        let log = "ping.log";
        let ping = lab.spawn_exec("h1", &["ping", "-n", "-i", "0.05", "-c", "300", &h2], log);
        let path = lab.lab_dir().join(log);
        let flowing = |n: usize| wait_until(Duration::from_secs(5), || replies(&path) >= n);
        assert!(flowing(20), "{of:?}: the ping runs");
        let p = Arc::clone(lab.ctl.pipeline());
        p.apps.set_loader(Arc::new(wasm::WasmLoader::default()));
        let api = format!("http://{}", lab.ctl.start_api(TOKEN));
        let ctl = |args: &[&str]| {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_pharos"));
            cmd.args(["ctl", "--api", &api, "--token", TOKEN, "app"])
                .args(args);
            let out = run(&mut cmd, Duration::from_secs(30));
            assert!(out.ok(), "{of:?}: pharos ctl app {args:?}:\n{out}");
        };
        let served = |p: &controller::host::Core| {
            let t = p.apps.handler_timings();
            t.iter()
                .filter(|t| t.app == "wasm_ls" && t.handler == "PACKET_IN")
                .map(|t| t.calls)
                .sum::<u64>()
        };
        // 1. Loaded in front of the native learning switch.
        ctl(&["load", WASM_LS, "--name", "wasm_ls", "--order", "direct:-1"]);
        assert!(flowing(replies(&path) + 20), "{of:?}: pings after the load");
        // 2. The native one stopped (its flows removed): the WASM app learns the
        // ping's path and installs its own flows.
        ctl(&["stop", "learning_switch"]);
        assert!(flowing(replies(&path) + 20), "{of:?}: pings after the stop");
        assert!(served(&p) > 0, "{of:?}: the WASM app forwards the ping");
        // 3. Reloaded: its flows removed, a fresh instance learns the path again.
        ctl(&["reload", "wasm_ls", WASM_LS]);
        assert!(
            flowing(replies(&path) + 20),
            "{of:?}: pings after the reload"
        );
        assert_eq!(p.apps.is_quarantined("wasm_ls"), Some(false), "{of:?}");
        // 4, 5. The native one started again, the WASM one unloaded.
        ctl(&["start", "learning_switch"]);
        assert!(
            flowing(replies(&path) + 20),
            "{of:?}: pings after the start"
        );
        ctl(&["unload", "wasm_ls"]);
        assert!(
            flowing(replies(&path) + 20),
            "{of:?}: pings after the unload"
        );
        let (code, text) = lab.wait_background(ping, log, Duration::from_secs(20));
        let (sent, got) =
            ping_summary(&text).unwrap_or_else(|| panic!("{of:?}: no ping summary:\n{text}"));
        eprintln!("{of:?}: {sent} pings, {got} replies across 5 changes");
        assert!(
            sent >= 250 && sent - got <= 5,
            "{of:?}: {} pings lost over 5 changes (exit {code:?}):\n{text}",
            sent - got
        );
        lab.down().expect_ok();
    }
}

#[test]
fn a_ping_summary_is_read() {
    let text = "...\n240 packets transmitted, 239 received, 0.416667% packet loss, time 12000ms\n";
    assert_eq!(ping_summary(text), Some((240, 239)));
}

#[test]
fn bad_guests_are_quarantined_while_the_native_learning_switch_keeps_a_ping_going() {
    if !enabled("bad_guests_are_quarantined_while_the_native_learning_switch_keeps_a_ping_going") {
        return;
    }
    let _serial = serial();
    // One 1.0 and one 1.3 switch (`mixed`: s1 1.0, s2 1.3).
    let mut lab = Lab::with_apps("wbad", Of::Mixed, apps_by_name(&["learning_switch"]), false);
    lab.up("linear,2");
    assert!(lab.ctl.wait_connected(2, CONNECT), "switches connect");
    assert!(lab.pingall().ok(), "pingall before the bad guests");
    let topo = parse_topo(&lab.show());
    let h2 = topo.hosts["h2"].ip.clone();
    let p = Arc::clone(lab.ctl.pipeline());
    p.apps.set_loader(Arc::new(wasm::WasmLoader::default()));
    let api = format!("http://{}", lab.ctl.start_api(TOKEN));
    let log = "ping.log";
    let ping = lab.spawn_exec("h1", &["ping", "-n", "-i", "0.05", "-c", "240", &h2], log);
    let path = lab.lab_dir().join(log);
    let flowing = |n: usize| wait_until(Duration::from_secs(5), || replies(&path) >= n);
    assert!(flowing(20), "the ping runs");
    let prebuilt = concat!(env!("CARGO_MANIFEST_DIR"), "/../../wasm/prebuilt/");
    for (file, name, cause) in [
        ("pharos_test_endless_loop.wasm", "loop", "interrupted"),
        (
            "pharos_test_unbounded_alloc.wasm",
            "alloc",
            "memory cap reached",
        ),
        (
            "pharos_test_trap.wasm",
            "trap",
            "wasm `unreachable` instruction executed",
        ),
    ] {
        let module = format!("{prebuilt}{file}");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pharos"));
        cmd.args([
            "ctl", "--api", &api, "--token", TOKEN, "app", "load", &module,
        ])
        .args(["--name", name, "--order", "advise:0"]);
        let out = run(&mut cmd, Duration::from_secs(30));
        assert!(out.ok(), "pharos ctl app load {file}:\n{out}");
        // The hosts forget each other: their next ARP requests are broadcast, miss the
        // learned flows and reach the controller, the bad guest first.
        for h in ["h1", "h2"] {
            lab.lab("exec", &[h, "--", "ip", "neigh", "flush", "all"])
                .expect_ok();
        }
        let quarantined = wait_until(Duration::from_secs(10), || {
            p.apps.is_quarantined(name) == Some(true)
        });
        let reason = p.apps.quarantine_reason(name).map(|q| q.panic);
        assert!(quarantined, "{name} not quarantined: {reason:?}");
        let reason = reason.unwrap_or_default();
        assert!(
            reason.starts_with(&format!("wasm app {name} (packet-in): ")) && reason.contains(cause),
            "{name}: {reason}"
        );
        eprintln!("{name}: {reason}");
        assert_eq!(p.apps.is_quarantined("learning_switch"), Some(false));
        assert!(flowing(replies(&path) + 20), "pings after {name}");
    }
    let (code, text) = lab.wait_background(ping, log, Duration::from_secs(20));
    let (sent, got) = ping_summary(&text).unwrap_or_else(|| panic!("no ping summary:\n{text}"));
    eprintln!("{sent} pings, {got} replies across 3 bad guests");
    assert!(
        sent >= 200 && sent - got <= 3,
        "{} pings lost over 3 bad guests (exit {code:?}):\n{text}",
        sent - got
    );
    lab.down().expect_ok();
}
