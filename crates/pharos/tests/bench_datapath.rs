//! `pharos bench datapath` end to end (issue 17): a short run against a Pharos switch
//! and the Linux bridge, each between its own veth pairs in namespaces; both forward,
//! the JSON has the paper's tests for each (the table and mix tests for the switch
//! only), and the ratio of the two in the same run; nothing is left behind.
//!
//! Needs root, iproute2 and Open vSwitch's `ovs-ofctl` (the Pharos switch's flow);
//! `PHAROS_SKIP_LAB=1` skips it, recorded as the lab tests' skips are. Figures here are
//! not benchmarks: the run is short and the machine busy.

mod common;
use common::proc as proc_kit;

use std::process::Command;

use proc_kit::skipped;

/// The namespaces the test bed makes (`pdp-gen-PID-N`, `pdp-dut-PID-N`).
fn testbed_namespaces() -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with("pdp-"))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_pharos_switch_and_the_linux_bridge_measured_in_one_run() {
    if skipped("a_pharos_switch_and_the_linux_bridge_measured_in_one_run") {
        return;
    }
    let before = testbed_namespaces();
    let plots = std::env::temp_dir().join(format!("pharos-dp-plots-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args([
            "bench",
            "datapath",
            "--dut",
            "pharos,bridge",
            "--seconds",
            "0.3",
        ])
        .args([
            "--sizes", "64,1518", "--loads", "0.5", "--tables", "1,64", "--json",
        ])
        .args([
            "--wildcards",
            "4",
            "--exact-shares",
            "1,0",
            "--fair-loads",
            "1.2",
        ])
        .arg("--plots")
        .arg(&plots)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    let results = json["results"].as_array().unwrap();
    let duts: Vec<&str> = results.iter().map(|r| r["dut"].as_str().unwrap()).collect();
    assert_eq!(duts, ["pharos", "bridge"]);
    // On two or more cores, each device under test gets a core of its own.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for r in results {
        if cores >= 2 {
            assert_eq!(r["dut_cpu"].as_u64(), Some(0), "{r}");
            assert_eq!(r["gen_cpu"].as_u64(), Some(1), "{r}");
        }
        let sizes: Vec<u64> = r["sizes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["size"].as_u64().unwrap())
            .collect();
        assert_eq!(sizes, [64, 1518], "{r}");
        for p in r["sizes"]
            .as_array()
            .unwrap()
            .iter()
            .chain(r["loads"].as_array().unwrap())
        {
            assert!(
                p["received_pps"].as_f64().unwrap() > 0.0,
                "{} forwarded nothing: {p}",
                r["dut"]
            );
            let lat = p["latency_us"].as_array().unwrap();
            assert!(lat[0].as_f64().unwrap() > 0.0, "{p}");
        }
        let load = &r["loads"][0];
        assert_eq!(load["load"].as_f64(), Some(0.5), "{r}");
        // The table test: the switch with 1 and 64 exact flows (and as many flows of
        // traffic, all forwarded by them); the bridge has no flow table.
        let tables = r["tables"].as_array().unwrap();
        if r["dut"] == "pharos" {
            let flows: Vec<u64> = tables
                .iter()
                .map(|t| t["flows"].as_u64().unwrap())
                .collect();
            assert_eq!(flows, [1, 64], "{r}");
            for t in tables {
                assert!(t["point"]["received_pps"].as_f64().unwrap() > 0.0, "{t}");
            }
            assert_eq!(tables[0]["of_smallest"].as_f64(), Some(1.0));
        } else {
            assert!(tables.is_empty(), "{r}");
        }
        // The mix: 4 wildcard rules cover 256 flows of traffic; all of it matched by
        // exact rules, then none (the wildcard rules alone forward it).
        let mix = r["mix"].as_array().unwrap();
        if r["dut"] == "pharos" {
            let shares: Vec<(f64, u64)> = mix
                .iter()
                .map(|m| {
                    (
                        m["exact_share"].as_f64().unwrap(),
                        m["exact_rules"].as_u64().unwrap(),
                    )
                })
                .collect();
            assert_eq!(shares, [(1.0, 256), (0.0, 0)], "{r}");
            for m in mix {
                assert!(m["point"]["received_pps"].as_f64().unwrap() > 0.0, "{m}");
                assert!(m["ns_per_frame"].as_f64().unwrap() > 0.0, "{m}");
            }
        } else {
            assert!(mix.is_empty(), "{r}");
        }
        // Fairness: two streams, one at 0.1 of the capacity, one at 1.2, into one input
        // then into two; both sent and both forwarded (in part), their loss difference
        // reported.
        let fair = r["fairness"].as_array().unwrap();
        let inputs: Vec<u64> = fair.iter().map(|f| f["inputs"].as_u64().unwrap()).collect();
        assert_eq!(inputs, [1, 2], "{r}");
        for f in fair {
            assert_eq!(f["load"].as_f64(), Some(1.2), "{f}");
            let (steady, heavy) = (&f["steady"], &f["heavy"]);
            for p in [steady, heavy] {
                assert!(p["received_pps"].as_f64().unwrap() > 0.0, "{f}");
            }
            assert!(
                heavy["offered_pps"].as_f64().unwrap()
                    > 5.0 * steady["offered_pps"].as_f64().unwrap(),
                "{f}"
            );
            let diff = steady["loss"].as_f64().unwrap() - heavy["loss"].as_f64().unwrap();
            assert!(
                (f["loss_difference"].as_f64().unwrap() - diff).abs() < 1e-9,
                "{f}"
            );
        }
    }
    let ratio = json["ratios"]["pharos / bridge"]
        .as_f64()
        .expect("the ratio of the two in this run");
    assert!(ratio > 0.0, "{json}");
    // The devices that lost under 0.5% at 64 bytes, full speed, are named as not
    // saturated (their figure is the generator's offer), and only those.
    let unsaturated: Vec<&str> = json["unsaturated_at_64"]
        .as_array()
        .expect("unsaturated_at_64")
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    for r in json["results"].as_array().unwrap() {
        let max64 = r["sizes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["size"] == 64 && p["load"].is_null())
            .unwrap();
        let dut = r["dut"].as_str().unwrap();
        assert_eq!(
            unsaturated.contains(&dut),
            max64["loss"].as_f64().unwrap() < 0.005,
            "{dut}: {max64}"
        );
    }
    // The paper's figures, drawn.
    for name in [
        "datapath-sizes",
        "datapath-latency",
        "datapath-tables",
        "datapath-mix",
        "datapath-fairness-1",
        "datapath-fairness-2",
    ] {
        let svg = std::fs::read_to_string(plots.join(format!("{name}.svg")))
            .unwrap_or_else(|e| panic!("{name}.svg: {e}"));
        assert!(
            svg.contains("<svg") && svg.contains("polyline"),
            "{name}.svg"
        );
    }
    let _ = std::fs::remove_dir_all(&plots);
    // The test bed removed its namespaces (and the switch with them).
    assert_eq!(testbed_namespaces(), before);
}

/// `--switch-exe` that is missing or not executable is refused before any namespace is
/// made, the option and the path named (no root needed).
#[test]
fn a_switch_exe_that_cannot_run_is_refused_up_front() {
    let dir = std::env::temp_dir().join(format!("pharos-dp-exe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join("not-executable");
    std::fs::write(&plain, "#!/bin/sh\n").unwrap();
    for (path, why) in [
        (dir.join("missing"), "No such file"),
        (plain.clone(), "not an executable file"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_pharos"))
            .args(["bench", "datapath", "--dut", "pharos", "--switch-exe"])
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert!(
            stderr.contains(&format!("--switch-exe {}", path.display())) && stderr.contains(why),
            "{stderr}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--switch-exe`: the executable given is the one run as the switch, with the switch's
/// arguments, and what it forwards is measured (here a script that notes its arguments
/// and runs this pharos in its place).
#[test]
fn the_switch_exe_given_is_the_one_measured() {
    if skipped("the_switch_exe_given_is_the_one_measured") {
        return;
    }
    use std::os::unix::fs::PermissionsExt as _;
    let dir = std::env::temp_dir().join(format!("pharos-dp-stand-in-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let noted = dir.join("args");
    let script = dir.join("stand-in");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$@\" > '{}'\nexec '{}' \"$@\"\n",
            noted.display(),
            env!("CARGO_BIN_EXE_pharos")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args(["bench", "datapath", "--dut", "pharos", "--seconds", "0.2"])
        .args(["--sizes", "64", "--loads", "--tables", "--wildcards", "0"])
        .args(["--exact-shares", "--fair-loads", "--json", "--switch-exe"])
        .arg(&script)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let args = std::fs::read_to_string(&noted).expect("the stand-in was run");
    assert!(
        args.starts_with("switch ") && args.contains("--port 1=d1") && args.contains("--pidfile"),
        "{args}"
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pps = json["results"][0]["sizes"][0]["received_pps"]
        .as_f64()
        .unwrap();
    assert!(pps > 0.0, "{json}");
    std::fs::remove_dir_all(&dir).unwrap();
}
