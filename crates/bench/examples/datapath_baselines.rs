//! The baselines of `pharos bench datapath` (issue 17), until the bench command exists:
//! the Linux bridge, Linux IP forwarding and Open vSwitch's userspace data path between
//! two veth pairs, measured
//! with the data path's own generator; plus the data path alone (frames from one port
//! to the other, no tables: the ceiling of `pharos switch`) and the transmit-method
//! comparison behind the port's design (`sendmmsg(2)` vs transmit rings) and the ring
//! versions compared (`--rings`).
//!
//! Root and iproute2 needed; every namespace is deleted at the end.
//!
//! ```text
//! cargo run --release -p pharos-bench --example datapath_baselines -- [SECONDS [--no-tx | --tx | --rings]]
//! ```

use std::io;
use std::time::{Duration, Instant};

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use afpacket::{wait_readable, Port, PortConfig, PortCounters, RingVersion, TxMethod};
use bench::datapath::gen::{probe_frame, run, Addresses, GenConfig, GenReport};
use bench::datapath::testbed::{Testbed, SWITCHED};

const SIZES: [usize; 7] = [64, 128, 256, 512, 1024, 1280, 1518];

fn main() -> io::Result<()> {
    let secs: f64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("SECONDS"))
        .unwrap_or(2.0);
    let duration = Duration::from_secs_f64(secs);

    match std::env::args().nth(2).as_deref() {
        Some("--rings") => return compare_rings(duration),
        Some("--tx") => return transmit_methods(duration),
        Some("--no-tx") => {}
        _ => transmit_methods(duration)?,
    }
    for (name, which) in [
        ("Linux bridge", 0),
        ("Linux IP forwarding", 1),
        (
            "Open vSwitch userspace (one flow in_port=1 actions=output:2)",
            4,
        ),
        ("Port to port, TPACKET_V3 (no tables)", 2),
        ("Port to port, TPACKET_V2 (no tables)", 3),
    ] {
        let mut bed = Testbed::new()?;
        let stop = Arc::new(AtomicBool::new(false));
        let mut forwarder = None;
        let addrs = match which {
            0 => bed.linux_bridge()?,
            1 => bed.ip_forwarding()?,
            4 => {
                let addrs = bed.ovs_userspace()?;
                // Until the flow is in OVS's data path, frames are dropped: wait for one.
                let probe = probe_frame(&addrs, 64);
                let deadline = Instant::now() + Duration::from_secs(10);
                let mut through = false;
                while !through && Instant::now() < deadline {
                    bed.tx.send(&probe);
                    bed.tx.flush()?;
                    wait_readable(bed.rx.as_raw_fd(), 50);
                    bed.rx.recv_batch(64, |f| through |= f == &probe[..]);
                }
                addrs
            }
            _ => {
                let config = PortConfig {
                    version: if which == 2 {
                        RingVersion::V3
                    } else {
                        RingVersion::V2
                    },
                    ..PortConfig::default()
                };
                let (d1, d2) = bed.dut.enter(|| -> io::Result<(Port, Port)> {
                    Ok((
                        Port::open_with("d1", &config)?,
                        Port::open_with("d2", &config)?,
                    ))
                })??;
                let stop = stop.clone();
                forwarder = Some(std::thread::spawn(move || forward(d1, d2, &stop)));
                SWITCHED
            }
        };
        println!("\n## {name}: throughput, one flow, as fast as the generator sends\n");
        header();
        let mut max64 = 0.0;
        for size in SIZES {
            let cfg = GenConfig {
                size,
                duration,
                ..GenConfig::default()
            };
            let r = run(&mut bed.tx, &mut bed.rx, &addrs, &cfg);
            if size == 64 {
                max64 = r.received_pps;
            }
            row(&r);
        }
        println!("\n## {name}: 64-byte frames against offered load (fraction of {max64:.0} pps)\n");
        header();
        for fraction in [0.01, 0.1, 0.5, 0.9, 1.0] {
            let cfg = GenConfig {
                size: 64,
                rate_pps: (max64 * fraction) as u64,
                duration,
                batch: 16,
                ..GenConfig::default()
            };
            let r = run(&mut bed.tx, &mut bed.rx, &addrs, &cfg);
            row(&r);
        }
        println!("\n## {name}: 64-byte frames, 1,000 flows (source addresses), full speed\n");
        header();
        let cfg = GenConfig {
            size: 64,
            duration,
            flows: 1000,
            ..GenConfig::default()
        };
        row(&run(&mut bed.tx, &mut bed.rx, &addrs, &cfg));
        stop.store(true, Ordering::Relaxed);
        if let Some(f) = forwarder {
            let (a, b) = f.join().expect("forwarder");
            println!("\nforwarder: d1 {a:?}\nforwarder: d2 {b:?}");
        }
    }
    Ok(())
}

/// The data path alone: every frame read on `d1` is sent on `d2`, one thread, the
/// loop a switch runs minus its tables. Returns the ports' counters.
fn forward(mut d1: Port, mut d2: Port, stop: &AtomicBool) -> (PortCounters, PortCounters) {
    while !stop.load(Ordering::Relaxed) {
        if !d1.rx_ready() {
            wait_readable(d1.as_raw_fd(), 10);
        }
        d1.recv_batch(256, |f| {
            d2.send(f);
        });
        let _ = d2.flush();
    }
    (d1.counters(), d2.counters())
}

/// TPACKET_V2 against TPACKET_V3 as the forwarder's rings, interleaved three times
/// (a shared machine's noise shows as the spread between rounds).
fn compare_rings(duration: Duration) -> io::Result<()> {
    println!("| round | rings | max 64 B received pps | p50 µs at 1 kpps | p99 µs at 1 kpps | p50 µs at 20 kpps | p99 µs at 20 kpps |");
    println!("|---:|---|---:|---:|---:|---:|---:|");
    for round in 1..=3 {
        for version in [RingVersion::V2, RingVersion::V3] {
            let mut bed = Testbed::new()?;
            let config = PortConfig {
                version,
                ..PortConfig::default()
            };
            let (d1, d2) = bed.dut.enter(|| -> io::Result<(Port, Port)> {
                Ok((
                    Port::open_with("d1", &config)?,
                    Port::open_with("d2", &config)?,
                ))
            })??;
            let stop = Arc::new(AtomicBool::new(false));
            let s2 = stop.clone();
            let forwarder = std::thread::spawn(move || forward(d1, d2, &s2));
            let addrs = SWITCHED;
            let at = |rate_pps| GenConfig {
                size: 64,
                rate_pps,
                duration,
                batch: 16,
                ..GenConfig::default()
            };
            let max = run(&mut bed.tx, &mut bed.rx, &addrs, &at(0));
            let low = run(&mut bed.tx, &mut bed.rx, &addrs, &at(1000));
            let mid = run(&mut bed.tx, &mut bed.rx, &addrs, &at(20_000));
            stop.store(true, Ordering::Relaxed);
            forwarder.join().expect("forwarder");
            let us = |ns: u64| ns as f64 / 1000.0;
            println!(
                "| {round} | {version:?} | {:.0} | {:.1} | {:.1} | {:.1} | {:.1} |",
                max.received_pps,
                us(low.latency_ns[0]),
                us(low.latency_ns[2]),
                us(mid.latency_ns[0]),
                us(mid.latency_ns[2]),
            );
        }
    }
    Ok(())
}

fn header() {
    println!("| size | offered pps | received pps | Mbit/s | loss | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
}

fn row(r: &GenReport) {
    let us = |ns: u64| ns as f64 / 1000.0;
    println!(
        "| {} | {:.0} | {:.0} | {:.0} | {:.2}% | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
        r.size,
        r.offered_pps,
        r.received_pps,
        r.received_mbps(),
        r.loss * 100.0,
        us(r.latency_ns[0]),
        us(r.latency_ns[1]),
        us(r.latency_ns[2]),
        us(r.latency_ns[3]),
        us(r.latency_ns[4]),
    );
}

/// Frames per second one thread pushes into a veth (whose peer drops them: addressed
/// to another host) through a port, with each transmit method, 64 frames per flush,
/// interleaved three times.
fn transmit_methods(duration: Duration) -> io::Result<()> {
    let bed = Testbed::new()?;
    let addrs = Addresses {
        src_mac: [2, 0, 0, 0, 9, 1],
        dst_mac: [2, 0, 0, 0, 9, 2],
        src_ip: [10, 9, 0, 1],
        dst_ip: [10, 9, 0, 2],
        src_port: 1,
        dst_port: 2,
    };
    println!("## Transmit method: frames/s one thread sends into a veth, 64 per flush\n");
    println!("| size | sendmmsg | V2 transmit ring | V3 transmit ring |");
    println!("|---:|---:|---:|---:|");
    for size in [64, 1518, 64, 1518, 64, 1518] {
        let frame = probe_frame(&addrs, size);
        let mut rates = Vec::new();
        for (version, tx) in [
            (RingVersion::V2, TxMethod::Sendmmsg),
            (RingVersion::V2, TxMethod::Ring),
            (RingVersion::V3, TxMethod::Ring),
        ] {
            let config = PortConfig {
                version,
                tx,
                ..PortConfig::default()
            };
            let mut port = bed.gen.enter(|| Port::open_with("g1", &config))??;
            let start = Instant::now();
            let mut sent = 0u64;
            while start.elapsed() < duration {
                for _ in 0..64 {
                    if port.send(&frame) {
                        sent += 1;
                    }
                }
                port.flush()?;
            }
            rates.push(sent as f64 / start.elapsed().as_secs_f64());
        }
        println!(
            "| {size} | {:.0} | {:.0} | {:.0} |",
            rates[0], rates[1], rates[2]
        );
    }
    Ok(())
}
