//! Issue 13's acceptance for WebAssembly apps on real Open vSwitch: the WASM learning
//! switch (wasm/examples/learning-switch, loaded from wasm/prebuilt/ by the
//! `pharos-wasm` host) forwards a whole lab on OpenFlow 1.0 and 1.3 (pingall 100%),
//! and is loaded, reloaded and unloaded (the lifecycle calls the REST API makes) while
//! a ping runs, losing at most one ping per change.
//!
//! Needs root, Open vSwitch and the rest (`scripts/install-test-deps`), like `lab.rs`;
//! `PHAROS_SKIP_LAB=1` skips them, saying so and recording it.

#[path = "common/lab.rs"]
mod harness;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use controller::app::{AnyApp, Order};
use controller::lifecycle::LoadSpec;
use harness::{apps_by_name, enabled, parse_topo, serial, wait_until, AppSet, Lab, Of};

/// How long the switches get to connect after `up`.
const CONNECT: Duration = Duration::from_secs(10);

/// The WASM learning switch, as `pharos ctl app load` would make it (one loader for
/// the process, as `pharos run` has).
fn wasm_learning_switch() -> Box<dyn AnyApp> {
    static LOADER: OnceLock<wasm::WasmLoader> = OnceLock::new();
    static MODULE: OnceLock<Vec<u8>> = OnceLock::new();
    let module = MODULE.get_or_init(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../wasm/prebuilt/pharos_wasm_learning_switch.wasm"
        );
        std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"))
    });
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
        assert_eq!(p.is_quarantined("wasm_ls"), Some(false), "{of:?}");
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
        // The native learning switch forwards before the WASM one is loaded (in front
        // of it: direct:0 before the native's direct:0 by app order) and after it is
        // unloaded.
        let mut lab = Lab::with_apps(name, of, apps_by_name(&["learning_switch"]), false);
        lab.up("linear,2");
        assert!(
            lab.ctl.wait_connected(2, CONNECT),
            "{of:?}: switches connect"
        );
        assert!(lab.pingall().ok(), "{of:?}: pingall before the changes");
        let topo = parse_topo(&lab.show());
        let h2 = topo.hosts["h2"].ip.clone();
        // 20 pings a second for 12 s: 240.
        let log = "ping.log";
        let ping = lab.spawn_exec("h1", &["ping", "-n", "-i", "0.05", "-c", "240", &h2], log);
        let path = lab.lab_dir().join(log);
        let flowing = |n: usize| wait_until(Duration::from_secs(5), || replies(&path) >= n);
        assert!(flowing(20), "{of:?}: the ping runs");
        let p = Arc::clone(lab.ctl.pipeline());
        p.add_app(wasm_learning_switch(), Some(0)).expect("loaded");
        assert!(flowing(replies(&path) + 20), "{of:?}: pings after the load");
        // The WASM app serves new pairs: h2 -> h1 by a fresh ARP exchange.
        let arp = lab.lab("exec", &["h2", "--", "ip", "neigh", "flush", "all"]);
        arp.expect_ok();
        let served = |p: &controller::dispatch::Pipeline| {
            let t = p.handler_timings();
            t.iter()
                .filter(|t| t.app == "wasm_ls" && t.handler == "PACKET_IN")
                .map(|t| t.calls)
                .sum::<u64>()
        };
        assert!(
            wait_until(Duration::from_secs(5), || served(&p) > 0),
            "{of:?}: the WASM app handled h2's ARP"
        );
        p.replace_app("wasm_ls", wasm_learning_switch())
            .expect("reloaded");
        assert!(
            flowing(replies(&path) + 20),
            "{of:?}: pings after the reload"
        );
        assert_eq!(p.is_quarantined("wasm_ls"), Some(false), "{of:?}");
        p.remove_app("wasm_ls").expect("unloaded");
        assert!(
            flowing(replies(&path) + 20),
            "{of:?}: pings after the unload"
        );
        let (code, text) = lab.wait_background(ping, log, Duration::from_secs(20));
        let (sent, got) =
            ping_summary(&text).unwrap_or_else(|| panic!("{of:?}: no ping summary:\n{text}"));
        eprintln!("{of:?}: {sent} pings, {got} replies across load, reload and unload");
        assert!(
            sent >= 200 && sent - got <= 3,
            "{of:?}: {} pings lost over 3 changes (exit {code:?}):\n{text}",
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
