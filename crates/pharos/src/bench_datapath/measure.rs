//! Measuring one device under test: its test bed and pinning, the wait for its first
//! forwarded frame, then the paper's tests in order.

use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use afpacket::{napi_threads, wait_readable};
use anyhow::{bail, Context};
use bench::datapath::gen::{probe_frame, run_streams, Addresses, GenConfig, GenReport, Stream};
use bench::datapath::testbed::Testbed;

use super::flows::{exact_flows_file, exact_flows_file_of, mix_flows_file};
use super::results::{DutResult, FairPoint, MixPoint, Point, TablePoint};
use super::DatapathArgs;

/// The machine's online cores (not `available_parallelism`, which counts the cores
/// this thread may run on: one, once the generator is pinned).
pub(super) fn online_cpus() -> usize {
    // SAFETY: sysconf reads a constant.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// Whether the generator and the device under test get cores of their own.
pub(super) fn separate_cores(a: &DatapathArgs) -> bool {
    online_cpus() > a.gen_cpu.max(a.dut_cpu) && a.gen_cpu != a.dut_cpu
}

/// One generator run of `streams` (the first sent on `g1`, the others as they say).
fn measured_run(bed: &mut Testbed, streams: &[Stream]) -> Vec<GenReport> {
    let Testbed { tx, tx3, rx, .. } = bed;
    run_streams(&mut [tx, tx3], rx, streams)
}

/// One stream from `g1` measured into a [`Point`].
fn point(bed: &mut Testbed, addrs: &Addresses, cfg: GenConfig, load: Option<f64>) -> Point {
    let stream = Stream {
        port: 0,
        addrs: *addrs,
        cfg,
    };
    Point::of(&measured_run(bed, &[stream])[0], load)
}

/// Pins the calling thread to `cpu`.
pub(super) fn pin_self(cpu: usize) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET within its size; the call reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Pins every thread of process `pid` to `cpu` (`taskset -a`).
fn pin_process(pid: i32, cpu: usize) -> anyhow::Result<()> {
    let out = std::process::Command::new("taskset")
        .args(["-a", "-p", "-c", &cpu.to_string(), &pid.to_string()])
        .output()
        .context("taskset (util-linux)")?;
    if !out.status.success() {
        bail!(
            "taskset -a -p -c {cpu} {pid}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Sends a probe until one comes out (a flow reaches a switch's data path a moment after
/// it is added), for up to 10 s.
fn wait_forwarding(bed: &mut Testbed, addrs: &Addresses) -> anyhow::Result<()> {
    wait_forwarding_from(bed, addrs, 0, false)
}

/// [`wait_forwarding`] with a probe of flow `flow` (source address `src_ip + flow`),
/// sent on the generator's second port `g3` if `third`.
fn wait_forwarding_from(
    bed: &mut Testbed,
    addrs: &Addresses,
    flow: u32,
    third: bool,
) -> anyhow::Result<()> {
    let mut from = *addrs;
    from.src_ip = u32::from_be_bytes(addrs.src_ip)
        .wrapping_add(flow)
        .to_be_bytes();
    let probe = probe_frame(&from, 64);
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let tx = if third { &mut bed.tx3 } else { &mut bed.tx };
        tx.send(&probe);
        tx.flush()?;
        wait_readable(bed.rx.as_raw_fd(), 50);
        let mut through = false;
        // The UDP payload (after Ethernet, IPv4 and UDP headers): IP forwarding rewrites
        // the addresses, the TTL and the checksum in front of it.
        bed.rx.recv_batch(64, |f| {
            through |= f.len() == probe.len() && f[42..] == probe[42..]
        });
        if through {
            return Ok(());
        }
    }
    bail!("nothing came through in 10 s")
}

pub(super) fn measure(
    dut: &str,
    a: &DatapathArgs,
    exe: &std::path::Path,
) -> anyhow::Result<DutResult> {
    let mut bed = Testbed::new().context("the test bed (root and iproute2 needed)")?;
    let addrs = match dut {
        "bridge" => bed.linux_bridge()?,
        "ip" => bed.ip_forwarding()?,
        "ovs" => bed.ovs_userspace().context("Open vSwitch userspace")?,
        "pharos" => bed
            .pharos_switch_with(
                exe,
                &switch_args(a)
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
            )
            .context("pharos switch")?,
        other => bail!("unknown device under test {other:?}: expected pharos, ovs, bridge or ip"),
    };
    let separate = separate_cores(a);
    let dut_cpu = separate.then_some(a.dut_cpu);
    if separate {
        bed.steer_dut_receive(a.dut_cpu)?;
        bed.steer_generator_receive(a.gen_cpu)?;
        let pids = bed.dut_pids();
        if pids.is_empty() && matches!(dut, "pharos" | "ovs") {
            bail!("{dut}: no process id to pin to core {}", a.dut_cpu);
        }
        for pid in pids {
            pin_process(pid, a.dut_cpu)?;
        }
        // Threaded NAPI of the device's interfaces (an AF_XDP switch turns it on: on veth
        // its XDP work runs there): receive processing, so on the device's core too.
        for pid in ["d1", "d2", "d3"].into_iter().flat_map(napi_threads) {
            pin_process(pid, a.dut_cpu)?;
        }
    }
    wait_forwarding(&mut bed, &addrs).with_context(|| format!("{dut} does not forward"))?;
    let duration = Duration::from_secs_f64(a.seconds);
    let mut sizes = Vec::new();
    let mut capacity = 0.0;
    for &size in &a.sizes {
        let p = point(
            &mut bed,
            &addrs,
            GenConfig {
                size,
                duration,
                ..GenConfig::default()
            },
            None,
        );
        if size == 64 {
            capacity = p.received_pps;
        }
        sizes.push(p);
    }
    if capacity == 0.0 {
        let p = point(
            &mut bed,
            &addrs,
            GenConfig {
                size: 64,
                duration,
                ..GenConfig::default()
            },
            None,
        );
        capacity = p.received_pps;
    }
    let mut loads = Vec::new();
    for &load in &a.loads {
        let rate = (capacity * load).max(1.0) as u64;
        let p = point(
            &mut bed,
            &addrs,
            GenConfig {
                size: 64,
                rate_pps: rate,
                duration,
                batch: 16,
                ..GenConfig::default()
            },
            Some(load),
        );
        loads.push(p);
    }
    let mut tables: Vec<TablePoint> = Vec::new();
    if matches!(dut, "pharos" | "ovs") {
        for &n in &a.tables {
            let file = exact_flows_file(&addrs, n)?;
            let replaced = bed.replace_flows(&file);
            let _ = std::fs::remove_file(&file);
            replaced.with_context(|| format!("{n} exact flows into {dut}"))?;
            wait_forwarding(&mut bed, &addrs)
                .with_context(|| format!("{dut} with {n} exact flows"))?;
            let p = point(
                &mut bed,
                &addrs,
                GenConfig {
                    size: 64,
                    duration,
                    flows: n,
                    ..GenConfig::default()
                },
                None,
            );
            let first = tables
                .first()
                .map_or(p.received_pps, |t| t.point.received_pps);
            tables.push(TablePoint {
                flows: n,
                of_smallest: p.received_pps / first,
                point: p,
            });
        }
    }
    let mut mix: Vec<MixPoint> = Vec::new();
    if matches!(dut, "pharos" | "ovs") && a.wildcards > 0 {
        // The traffic's first source address aligned to 64, so that each /26 rule
        // covers 64 flows of traffic.
        let src = u32::from_be_bytes(addrs.src_ip);
        let first_flow = src.next_multiple_of(64) - src;
        let flows = a.wildcards * 64;
        for &share in &a.exact_shares {
            let (file, exact_rules) = mix_flows_file(&addrs, first_flow, a.wildcards, share)?;
            let replaced = bed.replace_flows(&file);
            let _ = std::fs::remove_file(&file);
            replaced.with_context(|| format!("the mix flows into {dut}"))?;
            wait_forwarding_from(&mut bed, &addrs, first_flow, false)
                .with_context(|| format!("{dut} with the mix flows"))?;
            let p = point(
                &mut bed,
                &addrs,
                GenConfig {
                    size: 64,
                    duration,
                    flows,
                    first_flow,
                    ..GenConfig::default()
                },
                None,
            );
            mix.push(MixPoint {
                exact_share: share,
                exact_rules,
                wildcard_rules: a.wildcards,
                ns_per_frame: 1e9 / p.received_pps.max(1.0),
                point: p,
            });
        }
    }
    let mut fairness = Vec::new();
    if !a.fair_loads.is_empty() {
        let addrs3 = bed
            .addrs3
            .context("the test bed's second input has no addresses")?;
        if matches!(dut, "pharos" | "ovs") {
            // 64 K exact flows as in the paper: half for each input.
            let file = exact_flows_file_of(&[(&addrs, 32768, 1), (&addrs3, 32768, 3)])?;
            let replaced = bed.replace_flows(&file);
            let _ = std::fs::remove_file(&file);
            replaced.with_context(|| format!("64 K exact flows into {dut}"))?;
            wait_forwarding(&mut bed, &addrs)
                .with_context(|| format!("{dut} with 64 K exact flows"))?;
            wait_forwarding_from(&mut bed, &addrs3, 0, true)
                .with_context(|| format!("{dut} with 64 K exact flows, from its third port"))?;
        }
        let steady = GenConfig {
            size: 64,
            rate_pps: ((capacity * 0.1) as u64).max(1),
            duration,
            batch: 16,
            ..GenConfig::default()
        };
        for inputs in [1, 2] {
            for &load in &a.fair_loads {
                let heavy = GenConfig {
                    rate_pps: ((capacity * load) as u64).max(1),
                    // On one port, the heavy stream is told apart by its source address.
                    first_flow: if inputs == 1 { 1 } else { 0 },
                    ..steady
                };
                let (port, from) = if inputs == 1 { (0, addrs) } else { (1, addrs3) };
                let streams = [
                    Stream {
                        port: 0,
                        addrs,
                        cfg: steady,
                    },
                    Stream {
                        port,
                        addrs: from,
                        cfg: heavy,
                    },
                ];
                let r = measured_run(&mut bed, &streams);
                fairness.push(FairPoint {
                    inputs,
                    load,
                    loss_difference: r[0].loss - r[1].loss,
                    steady: Point::of(&r[0], Some(0.1)),
                    heavy: Point::of(&r[1], Some(load)),
                });
            }
        }
    }
    Ok(DutResult {
        dut: dut.to_string(),
        dut_cpu,
        gen_cpu: separate.then_some(a.gen_cpu),
        sizes,
        loads,
        tables,
        mix,
        fairness,
    })
}

/// The Pharos switch's options from the bench's.
pub(super) fn switch_args(a: &DatapathArgs) -> Vec<String> {
    let mut v = vec![
        "--datapath".to_string(),
        a.switch_datapath.name().to_string(),
    ];
    if let Some(p) = a.switch_rt_priority {
        v.extend(["--rt-priority".to_string(), p.to_string()]);
    }
    v
}
