//! `pharos bench controller --window 0` (cbench's unbounded mode) and the learning phase,
//! against the responder and against a scripted controller that records what the
//! switches send. Loops are short: these check counting and behaviour, not speed.

use std::collections::{HashMap, HashSet};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use bench::switch::{host_mac, host_port, partner};
use bench::{
    run_controller_bench, run_responder_with, Answer, BenchReport, ControllerBenchConfig, Counting,
    ResponderHandle, ResponderOptions,
};
use openflow::{frame_len, msg_type, of10, of13, MacAddr, Message, Version};

fn unbounded(addr: SocketAddr, version: Version) -> ControllerBenchConfig {
    ControllerBenchConfig {
        switches: 4,
        macs: 1000,
        loops: 3,
        loop_ms: 150,
        warmup: 1,
        window: 0,
        version,
        threads: 2,
        connect_timeout: Duration::from_secs(5),
        // The drain after the loops: the sockets and the responder's queue may hold
        // megabytes of PACKET_INs still to answer on a busy machine.
        response_timeout: Duration::from_secs(5),
        learn_timeout: Duration::from_secs(10),
        ..ControllerBenchConfig::new(addr)
    }
}

fn responder(answer: Answer) -> ResponderHandle {
    run_responder_with(
        "127.0.0.1:0".parse().unwrap(),
        ResponderOptions {
            answer,
            threads: 1,
            ..ResponderOptions::default()
        },
        Arc::new(AtomicBool::new(false)),
    )
    .expect("the responder starts")
}

fn run(cfg: &ControllerBenchConfig) -> BenchReport {
    run_controller_bench(cfg, &mut |_| {}).expect("the run takes place")
}

/// Every PACKET_IN the responder answered is counted exactly once, every message it
/// sent is one of cbench's responses, and every PACKET_IN sent was answered.
fn assert_counted_exactly(report: &BenchReport, resp: &ResponderHandle) {
    let t = report.to_table();
    assert_eq!(report.window, 0, "{t}");
    assert!(report.silent_switches.is_empty(), "{t}");
    assert_eq!(report.connected, report.switches, "{t}");
    assert!(report.disconnected.is_empty(), "{t}");
    let learning = report.learning.as_ref().expect("a learning phase");
    assert_eq!(learning.switches_done, report.switches, "{t}");
    assert_eq!(
        report.packet_ins_sent + learning.announced,
        resp.packet_ins_received(),
        "{t}"
    );
    assert!(report.packet_ins_sent > 0, "{t}");
    // The drain waited for every answer.
    assert_eq!(report.packet_ins_answered, report.packet_ins_sent, "{t}");
    assert_eq!(
        report.packet_ins_answered + learning.announced,
        resp.answers_sent(),
        "answered PACKET_INs counted once each: {t}"
    );
    assert_eq!(
        report.cbench_responses + learning.responses,
        resp.messages_sent(),
        "every FLOW_MOD and PACKET_OUT counted under cbench's rule: {t}"
    );
    assert_eq!(report.timeouts, 0, "{t}");
    // Per-switch rates and the generator's cost, per loop and overall.
    let r = report.switch_rates;
    assert_eq!(r.switches, report.switches, "{t}");
    assert!(r.min > 0.0 && r.min <= r.max, "{t}");
    let jain = r.jain.expect("answers, so an index");
    assert!(jain > 0.0 && jain <= 1.0 + 1e-9, "{t}");
    for l in &report.loops {
        assert!(l.switch_rates.jain.is_some(), "{t}");
        assert!(
            l.generator_cpu_ns_per_message.is_some_and(|n| n > 0.0),
            "{t}"
        );
    }
    assert!(report.generator_cpu_s > 0.0, "{t}");
    assert!(
        report
            .generator_cpu_ns_per_message
            .is_some_and(|n| n > 0.0 && n < 1e6),
        "{t}"
    );
}

#[test]
fn unbounded_counts_every_answer_once_for_each_answer_style() {
    let cases = [
        (Answer::FlowMod, true, 1),
        (Answer::FlowModPacketOut, true, 2),
        (Answer::FlowModPacketOut, false, 2),
        (Answer::PacketOut, false, 1),
        (Answer::LikeLearningSwitch, true, 1),
        (Answer::LikeLearningSwitch, false, 2),
    ];
    for (version, (answer, buffered, per_packet_in)) in [Version::V1_0, Version::V1_3]
        .into_iter()
        .flat_map(|v| cases.iter().map(move |c| (v, *c)))
    {
        let resp = responder(answer);
        let cfg = ControllerBenchConfig {
            buffered,
            per_packet_in: true,
            ..unbounded(resp.local_addr(), version)
        };
        let report = run(&cfg);
        let what = format!("{version} {answer:?} buffered={buffered}");
        assert_eq!(report.counting, Counting::PerPacketIn, "{what}");
        assert_counted_exactly(&report, &resp);
        assert_eq!(
            report.cbench_responses,
            per_packet_in * report.packet_ins_answered,
            "{what}: {}",
            report.to_table()
        );
        assert_eq!(report.responses_total, report.packet_ins_answered, "{what}");
        let packet_outs = match (answer, buffered) {
            (Answer::FlowMod, _) | (Answer::LikeLearningSwitch, true) => 0,
            _ => report.packet_ins_answered,
        };
        assert_eq!(report.packet_outs, packet_outs, "{what}");
        assert_eq!(
            report.flow_mods,
            report.cbench_responses - packet_outs,
            "{what}"
        );
        resp.stop();
    }
}

#[test]
fn unbounded_under_cbench_counting_reports_responses() {
    let resp = responder(Answer::FlowModPacketOut);
    let report = run(&unbounded(resp.local_addr(), Version::V1_0));
    assert_eq!(report.counting, Counting::Cbench);
    assert_counted_exactly(&report, &resp);
    assert_eq!(report.responses_total, report.cbench_responses);
    assert_eq!(report.responses_total, 2 * report.packet_ins_answered);
    let in_loops: u64 = report.loops.iter().map(|l| l.responses).sum();
    assert!(in_loops <= report.responses_total);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["window"], 0);
    assert!(json["switch_rates"]["jain"].as_f64().is_some(), "{json}");
    assert!(json["generator_cpu_ns_per_message"].as_f64().is_some());
    assert!(json["loops"][1]["switch_rates"]["min"].as_f64().is_some());
    assert_eq!(json["silent_switches"]["count"], 0);
}

#[test]
fn many_silent_switches_are_summarised() {
    let resp = run_responder_with(
        "127.0.0.1:0".parse().unwrap(),
        ResponderOptions {
            silent: true,
            threads: 1,
            ..ResponderOptions::default()
        },
        Arc::new(AtomicBool::new(false)),
    )
    .unwrap();
    let cfg = ControllerBenchConfig {
        switches: 20,
        macs: 10,
        loops: 2,
        loop_ms: 100,
        response_timeout: Duration::from_millis(100),
        ..unbounded(resp.local_addr(), Version::V1_0)
    };
    let report = run(&cfg);
    assert_eq!(report.silent_switches.count, 20);
    assert_eq!(
        report.silent_switches.first,
        (1..=bench::controller_bench::report::FIRST_FEW as u64).collect::<Vec<_>>()
    );
    let table = report.to_table();
    let line = table
        .lines()
        .find(|l| l.starts_with("SILENT"))
        .expect("a SILENT line");
    assert!(line.starts_with("SILENT: 20 of 20 switches"), "{line}");
    assert!(
        line.ends_with(&format!(
            ", and {} more",
            20 - bench::controller_bench::report::FIRST_FEW
        )),
        "{line}"
    );
    assert!(
        !line.contains("0x14"),
        "the 20th switch is not listed: {line}"
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["silent_switches"]["count"], 20);
    assert_eq!(
        json["silent_switches"]["first"].as_array().unwrap().len(),
        bench::controller_bench::report::FIRST_FEW
    );
}

/// What the scripted controller saw on one connection.
#[derive(Debug, Default)]
struct Seen {
    /// From the FEATURES_REPLY.
    dpid: u64,
    /// (source MAC, in_port) of each PACKET_IN before the switch's ECHO_REQUEST.
    announced: Vec<(MacAddr, u32)>,
    /// (source, destination, in_port) of the PACKET_INs after it.
    after: Vec<(MacAddr, MacAddr, u32)>,
    /// The ECHO_REQUEST came.
    echoed: bool,
}

/// Plays a 1.0 or 1.3 controller on one connection: HELLO, FEATURES_REQUEST, echoes
/// answered, PACKET_INs recorded and never answered; until `stop`.
fn record(stream: TcpStream, version: Version, seen: &Mutex<Seen>, stop: &AtomicBool) {
    let mut stream = stream;
    stream
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    // HELLO (no elements) and FEATURES_REQUEST, headers alone.
    let v = version.wire();
    let hello = [v, msg_type::HELLO, 0, 8, 0, 0, 0, 1];
    let features = [v, msg_type::FEATURES_REQUEST, 0, 8, 0, 0, 0, 2];
    stream.write_all(&[hello, features].concat()).unwrap();
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    while !stop.load(Ordering::SeqCst) {
        match stream.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => continue,
            Err(_) => return,
        }
        let mut at = 0;
        while let Some(len) = frame_len(&buf[at..]).unwrap() {
            let frame = &buf[at..at + len];
            at += len;
            let mut s = seen.lock().unwrap();
            if frame[1] == msg_type::ECHO_REQUEST {
                // ECHO_REQUEST: the same bytes back as an ECHO_REPLY.
                s.echoed = true;
                let mut reply = frame.to_vec();
                reply[1] = msg_type::ECHO_REPLY;
                stream.write_all(&reply).unwrap();
                continue;
            }
            let (_, m) = Message::decode(frame).unwrap();
            let (in_port, data) = match m {
                Message::V10(of10::Message::FeaturesReply(f)) => {
                    s.dpid = f.datapath_id;
                    continue;
                }
                Message::V13(of13::Message::FeaturesReply(f)) => {
                    s.dpid = f.datapath_id;
                    continue;
                }
                Message::V10(of10::Message::PacketIn(p)) => (u32::from(p.in_port), p.data),
                Message::V13(of13::Message::PacketIn(p)) => (p.in_port().unwrap(), p.data),
                _ => continue,
            };
            let dst = MacAddr(data[0..6].try_into().unwrap());
            let src = MacAddr(data[6..12].try_into().unwrap());
            if s.echoed {
                s.after.push((src, dst, in_port));
            } else {
                s.announced.push((src, in_port));
            }
        }
        buf.drain(..at);
    }
}

#[test]
fn the_learning_phase_announces_each_address_exactly_once() {
    for version in [Version::V1_0, Version::V1_3] {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let switches = 3;
        let macs = 777u32;
        let seen: Vec<Arc<Mutex<Seen>>> = (0..switches).map(|_| Arc::default()).collect();
        let server = {
            let (stop, seen) = (Arc::clone(&stop), seen.clone());
            thread::spawn(move || {
                let mut conns = Vec::new();
                for s in seen {
                    let (stream, _) = listener.accept().unwrap();
                    let stop = Arc::clone(&stop);
                    conns.push(thread::spawn(move || record(stream, version, &s, &stop)));
                }
                for c in conns {
                    c.join().unwrap();
                }
            })
        };
        let report = run(&ControllerBenchConfig {
            switches,
            macs: macs as usize,
            loops: 2,
            loop_ms: 50,
            response_timeout: Duration::from_millis(50),
            ..unbounded(addr, version)
        });
        stop.store(true, Ordering::SeqCst);
        server.join().unwrap();
        let t = report.to_table();
        let learning = report.learning.as_ref().expect("a learning phase");
        assert_eq!(learning.switches_done, switches, "{t}");
        assert_eq!(learning.announced, u64::from(macs) * switches as u64, "{t}");
        let mut dpids = HashSet::new();
        for s in &seen {
            let s = s.lock().unwrap();
            assert!(s.echoed, "the announcements end with an echo");
            dpids.insert(s.dpid);
            // Exactly the switch's addresses, each once, each from its port.
            let expected: HashMap<MacAddr, u32> = (0..macs)
                .map(|i| (host_mac(s.dpid, i), host_port(i)))
                .collect();
            assert_eq!(s.announced.len(), macs as usize, "{version}: {}", s.dpid);
            let got: HashMap<MacAddr, u32> = s.announced.iter().copied().collect();
            assert_eq!(got, expected, "{version}: switch {}", s.dpid);
            // Then PACKET_INs between those addresses: each from its own port, to its
            // partner behind the other.
            assert!(!s.after.is_empty(), "{version}: {t}");
            for &(src, dst, in_port) in &s.after {
                assert_eq!(expected.get(&src), Some(&in_port), "{src} from {in_port}");
                let i = (0..macs).find(|&i| host_mac(s.dpid, i) == src).unwrap();
                assert_eq!(dst, host_mac(s.dpid, partner(i, macs).unwrap()));
            }
        }
        assert_eq!(dpids, (1..=switches as u64).collect());
    }
}

#[test]
fn without_learning_nothing_is_announced() {
    let resp = responder(Answer::FlowMod);
    let report = run(&ControllerBenchConfig {
        learn: false,
        ..unbounded(resp.local_addr(), Version::V1_3)
    });
    assert!(report.learning.is_none());
    assert_eq!(report.packet_ins_sent, resp.packet_ins_received());
    assert_eq!(report.packet_ins_answered, report.packet_ins_sent);
}
