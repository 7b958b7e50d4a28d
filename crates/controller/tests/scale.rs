//! 1,000 emulated switches connected at once, every one served.

mod harness;

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

use emu::{host, is_packet_out, output_ports, Emu, Spec, FLOOD};
use harness::{eventually, test_config, Recorder, Running, T};
use testkit::emu;

const THREADS: usize = 10;
const PER_THREAD: usize = 100;

#[test]
fn a_thousand_switches_at_once_are_all_served() {
    emu::raise_fd_limit(8192);
    let (rec, seen) = Recorder::new();
    let hub = apps::by_name("hub", &toml::Table::new()).unwrap();
    let ctl = Running::start(&test_config(), vec![Box::new(rec), hub]);
    let addr = ctl.addr;
    let started = Instant::now();
    // Each thread connects its hundred (handshakes one after another), waits until all
    // thousand are up, then sends one PACKET_IN per switch and waits for the flood.
    let all_up = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let all_up = Arc::clone(&all_up);
            thread::spawn(move || {
                let mut switches = Vec::with_capacity(PER_THREAD);
                for i in 0..PER_THREAD {
                    let dpid = (t * PER_THREAD + i + 1) as u64;
                    let spec = if dpid % 2 == 0 {
                        Spec::v13(dpid)
                    } else {
                        Spec::v10(dpid)
                    };
                    let sw = Emu::connect_and_handshake(addr, spec, T)
                        .unwrap_or_else(|e| panic!("switch {dpid}: {e}"));
                    switches.push(sw);
                }
                all_up.wait();
                for sw in &mut switches {
                    let f = emu::frame(host(1), host(2));
                    sw.send_packet_in(1, &f, None).unwrap();
                }
                for sw in &mut switches {
                    let (_, out) = sw
                        .wait_for(T, is_packet_out)
                        .unwrap_or_else(|e| panic!("switch {}: {e}", sw.spec.dpid));
                    assert_eq!(output_ports(&out), vec![FLOOD]);
                }
                switches
            })
        })
        .collect();
    let switches: Vec<Vec<Emu>> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let n = THREADS * PER_THREAD;
    assert_eq!(switches.iter().map(Vec::len).sum::<usize>(), n);
    let mut dpids = seen.added_dpids();
    dpids.sort();
    dpids.dedup();
    assert_eq!(dpids.len(), n, "every switch was added once");
    assert!(eventually(T, || seen
        .packet_ins
        .load(std::sync::atomic::Ordering::SeqCst)
        == n));
    assert!(seen.removed_dpids().is_empty(), "none was dropped");
    eprintln!(
        "{n} switches handshaken and served in {:?}",
        started.elapsed()
    );
    drop(switches);
    assert!(
        eventually(T, || seen.removed_dpids().len() == n),
        "every disconnect seen"
    );
}
