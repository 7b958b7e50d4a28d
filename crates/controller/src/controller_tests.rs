//! Loopback tests of the network side with a scripted TCP peer and a recording
//! pipeline (the big integration tests with emulated switches live in `tests/`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use openflow::{frame_len, of10, Frame, Message};

use super::*;
use crate::command::Route;
use crate::info::SwitchInfo;
use crate::output::Queue;

/// Records events; answers each PACKET_IN with a BARRIER_REQUEST carrying its xid, or,
/// for a PACKET_IN over 1000 bytes, with a 65000-byte VENDOR message.
#[derive(Default)]
struct Recorder {
    /// "added DPID", "removed DPID reason", "frame DPID TYPE".
    events: Mutex<Vec<String>>,
}

impl Recorder {
    fn events(&self) -> Vec<String> {
        self.events.lock().unwrap().clone()
    }

    fn wait_for(&self, what: &str) {
        let end = Instant::now() + Duration::from_secs(5);
        while Instant::now() < end {
            if self.events().iter().any(|e| e == what) {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("no event {what:?} in {:?}", self.events());
    }
}

impl Driver for Recorder {
    type State = u64;

    fn connected(
        &self,
        info: SwitchInfo,
        _route: Route,
        _flows: Option<Vec<openflow::ofctl::FlowEntry>>,
        _out: &mut impl Queue,
        _now: Instant,
    ) -> u64 {
        self.events
            .lock()
            .unwrap()
            .push(format!("added {:x}", info.dpid.0));
        info.dpid.0
    }

    fn handle(&self, sw: &mut u64, frame: Frame<'_>, out: &mut impl Queue, _now: Instant) {
        let mut out = out.output();
        let (b, t) = (frame.bytes(), frame.msg_type());
        self.events
            .lock()
            .unwrap()
            .push(format!("frame {sw:x} {t}"));
        if t == 10 && frame.len() > 1000 {
            let mut vendor = vec![0; 65000];
            vendor[..4].copy_from_slice(&[b[0], 4, (65000u16 >> 8) as u8, 65000u16 as u8]);
            out.push_frame(&vendor, 0);
        } else if t == 10 {
            let xid = frame.xid();
            out.push_frame(&[b[0], 18, 0, 8, 0, 0, 0, 0], xid);
        }
    }

    fn tick(&self, _sw: &mut u64, _out: &mut impl Queue, _now: Instant) {}

    fn next_deadline(&self, _sw: &u64) -> Option<Instant> {
        None
    }

    fn disconnected(&self, sw: u64, reason: &str, _now: Instant) {
        self.events
            .lock()
            .unwrap()
            .push(format!("removed {sw:x} {reason}"));
    }
}

/// A scripted OpenFlow 1.0 switch over a blocking socket.
struct Peer {
    /// The blocking socket (5 s read timeout, so a missing reply fails the test).
    s: TcpStream,
    /// Bytes read but not yet returned as a frame.
    buf: Vec<u8>,
}

impl Peer {
    fn connect(h: &Handle) -> Peer {
        let s = TcpStream::connect(h.local_addrs()[0]).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        Peer { s, buf: Vec::new() }
    }

    fn send(&mut self, m: of10::Message, xid: u32) {
        self.s
            .write_all(&Message::V10(m).to_bytes(xid).unwrap())
            .unwrap();
    }

    /// The next whole frame (panics after 5 s).
    fn recv_raw(&mut self) -> Vec<u8> {
        loop {
            if let Some(n) = frame_len(&self.buf).unwrap() {
                return self.buf.drain(..n).collect();
            }
            let mut b = [0u8; 4096];
            let n = self.s.read(&mut b).expect("read");
            assert!(n > 0, "closed by the controller");
            self.buf.extend_from_slice(&b[..n]);
        }
    }

    /// The next whole 1.0 message (panics after 5 s).
    fn recv(&mut self) -> (u32, of10::Message) {
        match Message::decode(&self.recv_raw()).unwrap() {
            (xid, Message::V10(m)) => (xid, m),
            other => panic!("not 1.0: {other:?}"),
        }
    }

    /// True once the controller closed the connection (EOF or reset) within 5 s.
    fn closed(&mut self) -> bool {
        let mut b = [0u8; 4096];
        loop {
            match self.s.read(&mut b) {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
                Err(_) => return false,
            }
        }
    }

    fn handshake(&mut self, dpid: u64) {
        self.send(of10::Message::Hello(Default::default()), 1);
        let hello = self.recv_raw();
        assert_eq!(hello[1], 0, "HELLO expected: {hello:?}");
        let (xid, req) = self.recv();
        assert_eq!(req, of10::Message::FeaturesRequest);
        self.send(
            of10::Message::FeaturesReply(of10::SwitchFeatures {
                datapath_id: dpid,
                n_buffers: 256,
                n_tables: 1,
                ..Default::default()
            }),
            xid,
        );
        // The flows are read (crate::reconcile); a switch that does not answer before
        // the barrier is one whose table is not known.
        let (_, stats) = self.recv();
        assert!(matches!(stats, of10::Message::StatsRequest(_)), "{stats:?}");
        let (_, set) = self.recv();
        assert!(matches!(set, of10::Message::SetConfig(_)), "{set:?}");
        let (xid, barrier) = self.recv();
        assert_eq!(barrier, of10::Message::BarrierRequest);
        self.send(of10::Message::BarrierReply, xid);
    }
}

fn start(keepalive: Duration) -> (Handle, Arc<Recorder>) {
    let cfg = NetConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 2,
        keepalive: KeepaliveConfig {
            interval: keepalive,
            max_unanswered: 2,
        },
        counters_interval: Duration::from_millis(100),
        ..NetConfig::default()
    };
    let rec = Arc::new(Recorder::default());
    let h = Controller::start(&cfg, rec.clone()).unwrap();
    (h, rec)
}

fn packet_in() -> of10::Message {
    Message::decode(&[
        1, 10, 0, 20, 0, 0, 0, 0, // header
        0xff, 0xff, 0xff, 0xff, // buffer_id
        0, 2, // total_len
        0, 1, // in_port
        0, 0, // reason, pad
        0xaa, 0xbb, // data
    ])
    .map(|(_, m)| match m {
        Message::V10(m) => m,
        _ => unreachable!(),
    })
    .unwrap()
}

#[test]
fn switch_connects_echo_and_packet_in() {
    let (h, rec) = start(Duration::from_secs(30));
    let mut p = Peer::connect(&h);
    p.handshake(0x42);
    rec.wait_for("added 42");
    p.send(
        of10::Message::EchoRequest {
            data: b"hi".to_vec(),
        },
        77,
    );
    assert_eq!(
        p.recv(),
        (
            77,
            of10::Message::EchoReply {
                data: b"hi".to_vec()
            }
        )
    );
    p.send(packet_in(), 1234);
    assert_eq!(p.recv(), (1234, of10::Message::BarrierRequest));
    rec.wait_for("frame 42 10");
    // Echo never reaches the pipeline.
    assert!(!rec.events().iter().any(|e| e == "frame 42 2"));
    // Snapshots are published every publish interval: wait for one with the exchange.
    let c = counters_when(&h, |c| {
        c.total.packet_ins == 1 && c.total.msgs_out.contains_key("1.0 BARRIER_REQUEST")
    });
    assert_eq!(c.total.connected_switches, 1);
    assert_eq!(c.switches[0].dpid, "00:00:00:00:00:00:00:42");
    assert_eq!(c.total.packet_ins, 1);
    assert_eq!(c.msgs_in("1.0 ECHO_REQUEST"), 1);
    assert_eq!(c.total.msgs_out["1.0 ECHO_REPLY"], 1);
    assert_eq!(c.total.msgs_out["1.0 BARRIER_REQUEST"], 1);
    assert_eq!(c.total.established, 1);
    h.shutdown();
    assert!(rec.events().iter().any(|e| e == "removed 42 shutdown"));
}

#[test]
fn silent_peer_is_disconnected_after_unanswered_echoes() {
    let (h, rec) = start(Duration::from_millis(100));
    let mut p = Peer::connect(&h);
    p.handshake(7);
    // Two echo requests, unanswered, then the connection goes.
    let (_, e1) = p.recv();
    assert_eq!(e1, of10::Message::EchoRequest { data: vec![] });
    let (_, e2) = p.recv();
    assert_eq!(e2, of10::Message::EchoRequest { data: vec![] });
    assert!(p.closed());
    rec.wait_for("removed 7 dead_peer");
    let c = counters_when(&h, |c| c.total.disconnects.contains_key("dead_peer"));
    assert_eq!(c.total.disconnects["dead_peer"], 1);
}

#[test]
fn answering_echoes_keeps_the_switch() {
    let (h, rec) = start(Duration::from_millis(100));
    let mut p = Peer::connect(&h);
    p.handshake(8);
    for _ in 0..5 {
        let (xid, m) = p.recv();
        assert_eq!(m, of10::Message::EchoRequest { data: vec![] });
        p.send(of10::Message::EchoReply { data: vec![] }, xid);
    }
    assert!(!rec.events().iter().any(|e| e.starts_with("removed")));
    drop(h);
}

#[test]
fn garbage_closes_only_that_connection() {
    let (h, rec) = start(Duration::from_secs(30));
    let mut good = Peer::connect(&h);
    good.handshake(1);
    let mut bad = Peer::connect(&h);
    bad.handshake(2);
    rec.wait_for("added 2");
    // A 1.3 header on a 1.0 connection.
    bad.s.write_all(&[4, 10, 0, 8, 0, 0, 0, 0]).unwrap();
    assert!(bad.closed());
    rec.wait_for("removed 2 wrong_version");
    good.send(of10::Message::EchoRequest { data: vec![1] }, 5);
    assert_eq!(good.recv(), (5, of10::Message::EchoReply { data: vec![1] }));
    // A header length under 8.
    let mut bad = Peer::connect(&h);
    bad.handshake(3);
    bad.s.write_all(&[1, 10, 0, 4, 0, 0, 0, 0]).unwrap();
    assert!(bad.closed());
    rec.wait_for("removed 3 bad_length");
    // Not OpenFlow at all: fails the handshake, never reaches a worker.
    let mut junk = TcpStream::connect(h.local_addrs()[0]).unwrap();
    junk.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    junk.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    let mut junk = Peer {
        s: junk,
        buf: Vec::new(),
    };
    assert!(junk.closed());
    good.send(of10::Message::EchoRequest { data: vec![2] }, 6);
    assert_eq!(good.recv(), (6, of10::Message::EchoReply { data: vec![2] }));
    let c = counters_when(&h, |c| {
        c.total.handshake_failures.contains_key("not_hello")
            && c.total.bad_frames.contains_key("bad_length")
            && c.total.connected_switches == 1
    });
    assert_eq!(c.total.handshake_failures["not_hello"], 1);
    assert_eq!(c.total.bad_frames["wrong_version"], 1);
    assert_eq!(c.total.bad_frames["bad_length"], 1);
    assert_eq!(c.total.connected_switches, 1);
}

#[test]
fn same_dpid_replaces_the_old_connection() {
    let (h, rec) = start(Duration::from_secs(30));
    let mut first = Peer::connect(&h);
    first.handshake(9);
    rec.wait_for("added 9");
    let mut second = Peer::connect(&h);
    second.handshake(9);
    assert!(first.closed());
    let end = Instant::now() + Duration::from_secs(5);
    while rec.events().len() < 3 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        rec.events(),
        vec!["added 9", "removed 9 replaced", "added 9"]
    );
    second.send(of10::Message::EchoRequest { data: vec![] }, 1);
    assert_eq!(second.recv().0, 1);
}

#[test]
fn handshake_deadline_and_per_ip_cap() {
    let cfg = NetConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 1,
        handshake: HandshakeConfig {
            timeout: Duration::from_millis(300),
            max_pending_per_ip: 2,
            max_waiting_per_ip: 1,
            ..HandshakeConfig::default()
        },
        ..NetConfig::default()
    };
    let h = Controller::start(&cfg, Arc::new(Recorder::default())).unwrap();
    // Each says HELLO as it connects (so the listener hands them over at once, in
    // order), then nothing more.
    let mut silent: Vec<Peer> = (0..4)
        .map(|_| {
            let mut p = Peer::connect(&h);
            p.send(of10::Message::Hello(Default::default()), 1);
            p
        })
        .collect();
    // The first two are in their handshake: our HELLO comes at once.
    assert_eq!(silent[0].recv_raw()[1], 0);
    assert_eq!(silent[1].recv_raw()[1], 0);
    // The fourth is over the per-IP caps of handshakes and of waiting: closed at once.
    assert!(silent[3].closed());
    // The third waits for a slot: no HELLO yet, and not closed.
    silent[2]
        .s
        .set_read_timeout(Some(Duration::from_millis(150)))
        .unwrap();
    let mut b = [0u8; 64];
    let e = silent[2]
        .s
        .read(&mut b)
        .expect_err("nothing sent to a waiting connection");
    assert!(
        matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "{e:?}"
    );
    assert_eq!(h.counters().total.waiting_handshakes, 1);
    // The first two time out; the third then gets its handshake (and its own deadline).
    assert!(silent[0].closed());
    assert!(silent[1].closed());
    silent[2]
        .s
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    assert_eq!(silent[2].recv_raw()[1], 0, "HELLO once a slot is free");
    assert!(silent[2].closed());
    let c = h.counters();
    assert_eq!(c.total.refused["max_waiting_per_ip"], 1);
    assert_eq!(c.total.handshake_failures["timeout"], 3);
    assert_eq!(c.total.waiting_handshakes, 0);
}

#[test]
fn with_waiting_turned_off_a_connection_past_the_cap_is_refused_at_once() {
    let cfg = NetConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 1,
        handshake: HandshakeConfig {
            timeout: Duration::from_millis(200),
            max_pending_per_ip: 2,
            max_waiting_per_ip: 0,
            ..HandshakeConfig::default()
        },
        ..NetConfig::default()
    };
    let h = Controller::start(&cfg, Arc::new(Recorder::default())).unwrap();
    let mut silent: Vec<Peer> = (0..3).map(|_| Peer::connect(&h)).collect();
    assert!(silent[2].closed());
    assert!(silent[0].closed());
    assert!(silent[1].closed());
    let c = h.counters();
    // The reason names the cap that was full, as before waiting existed.
    assert_eq!(c.total.refused["max_pending_per_ip"], 1);
    assert_eq!(c.total.handshake_failures["timeout"], 2);
}

#[test]
fn a_connection_that_waits_longer_than_max_wait_is_closed() {
    let cfg = NetConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 1,
        handshake: HandshakeConfig {
            timeout: Duration::from_secs(5),
            max_pending_per_ip: 1,
            max_wait: Duration::from_millis(200),
            ..HandshakeConfig::default()
        },
        ..NetConfig::default()
    };
    let h = Controller::start(&cfg, Arc::new(Recorder::default())).unwrap();
    let mut first = Peer::connect(&h);
    assert_eq!(first.recv_raw()[1], 0);
    let started = Instant::now();
    let mut second = Peer::connect(&h);
    // Closed without a word once max_wait has passed (the first holds the only slot
    // for its 5 s).
    assert!(second.closed());
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(150) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    let c = h.counters();
    assert_eq!(c.total.refused["wait_timeout"], 1);
    assert_eq!(c.total.waiting_handshakes, 0);
    assert_eq!(c.total.pending_handshakes, 1);
}

/// A PACKET_IN of `len` bytes in all (1.0 framing).
fn big_packet_in(len: usize) -> Vec<u8> {
    let mut m = vec![0u8; len];
    m[..4].copy_from_slice(&[1, 10, (len >> 8) as u8, len as u8]);
    m
}

#[test]
fn big_messages_and_a_stalled_consumer() {
    let cfg = NetConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 1,
        output_buffer_limit: 1 << 20,
        backpressure: crate::config::BackpressureConfig {
            high_water: 512 << 10,
            low_water: 128 << 10,
            stall_timeout: Duration::from_millis(300),
        },
        ..NetConfig::default()
    };
    let rec = Arc::new(Recorder::default());
    let h = Controller::start(&cfg, rec.clone()).unwrap();
    let mut p = Peer::connect(&h);
    p.handshake(0x5);
    // A message bigger than the initial read buffer, in one piece and then cut in two.
    let big = big_packet_in(65535);
    p.s.write_all(&big).unwrap();
    assert_eq!(p.recv_raw().len(), 65000);
    p.s.write_all(&big[..30000]).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    p.s.write_all(&big[30000..]).unwrap();
    assert_eq!(p.recv_raw().len(), 65000);
    // Now stop reading: every PACKET_IN queues 65 KB more, until the kernel buffers
    // are full and the queue passes the high-water mark. The switch is paused (not
    // read), and once it has taken nothing for the stall timeout, closed.
    let w = std::thread::spawn(move || {
        for _ in 0..2000 {
            if p.s.write_all(&big).is_err() {
                break;
            }
        }
        p
    });
    rec.wait_for("removed 5 stalled");
    drop(w.join().unwrap());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !h.counters().total.disconnects.contains_key("stalled") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let c = h.counters();
    assert_eq!(c.total.disconnects["stalled"], 1);
    assert!(c.total.drops > 0);
    assert!(
        c.total.pauses >= 1,
        "the switch was paused before it was closed: {:?}",
        c.total
    );
}

#[test]
fn connection_cap_counts_handshakes_and_switches() {
    let cfg = NetConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap()],
        workers: 1,
        max_connections: 2,
        ..NetConfig::default()
    };
    let rec = Arc::new(Recorder::default());
    let h = Controller::start(&cfg, rec.clone()).unwrap();
    let mut switch = Peer::connect(&h);
    switch.handshake(0x11);
    rec.wait_for("added 11");
    let mut pending = Peer::connect(&h);
    assert_eq!(pending.recv_raw()[1], 0, "HELLO");
    let mut third = Peer::connect(&h);
    assert!(third.closed());
    assert_eq!(h.counters().total.refused["max_connections"], 1);
    assert_eq!(h.counters().total.pending_handshakes, 1);
}

#[test]
fn ipv4_and_ipv6_listeners() {
    let cfg = NetConfig {
        listen: vec!["127.0.0.1:0".parse().unwrap(), "[::1]:0".parse().unwrap()],
        workers: 1,
        ..NetConfig::default()
    };
    // Skipped only when this host has no IPv6 loopback at all, and said so; any other
    // failure to start fails the test.
    if let Err(e) = std::net::TcpListener::bind("[::1]:0") {
        if e.kind() == std::io::ErrorKind::AddrNotAvailable {
            skipped(
                "controller::ipv4_and_ipv6_listeners",
                "no IPv6 loopback (::1) here",
            );
            return;
        }
    }
    let rec = Arc::new(Recorder::default());
    let h = Controller::start(&cfg, rec.clone()).expect("the controller starts on both");
    assert!(h.local_addrs()[1].is_ipv6());
    let s = TcpStream::connect(h.local_addrs()[1]).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut p = Peer { s, buf: Vec::new() };
    p.handshake(0x66);
    rec.wait_for("added 66");
}

/// Says on stderr that `test` was skipped, and appends it to the file `PHAROS_SKIP_LOG`
/// names (scripts/test counts those and fails the run under CI=true): the test kit's
/// rule.
fn skipped(test: &str, why: &str) {
    testkit::record_not_full("SKIPPED", test, why);
}

/// The first counters snapshot for which `ready` holds, polled until a 5 s deadline (a
/// snapshot is published every publish interval, not at each event).
fn counters_when(
    h: &Handle,
    ready: impl Fn(&crate::counters::CountersSnapshot) -> bool,
) -> crate::counters::CountersSnapshot {
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        let c = h.counters();
        if ready(&c) {
            return c;
        }
        assert!(Instant::now() < end, "counters never got there: {c:#?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn listeners_queue_thousands_of_connections_not_std_s_128() {
    let listener = super::bind_listener("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = listener.local_addr().unwrap().port();
    // `ss` shows a listening socket's backlog as its Send-Q.
    let out = std::process::Command::new("ss")
        .args(["-ltnH", &format!("sport = :{port}")])
        .output()
        .expect("ss (iproute2) runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let backlog: u32 = text
        .split_whitespace()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no listening socket in {text:?}"));
    let somaxconn: u32 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(backlog, somaxconn.min(4096), "{text}");
}

#[test]
fn listeners_hand_over_a_connection_once_it_has_spoken_or_after_a_second() {
    use std::io::Write as _;
    let listener = super::bind_listener("127.0.0.1:0".parse().unwrap()).unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let silent = std::net::TcpStream::connect(addr).unwrap();
    let mut speaking = std::net::TcpStream::connect(addr).unwrap();
    speaking.write_all(&[4, 0, 0, 8, 0, 0, 0, 1]).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let mut accepted = Vec::new();
    while let Ok((_, peer)) = listener.accept() {
        accepted.push(peer);
    }
    assert_eq!(
        accepted,
        vec![speaking.local_addr().unwrap()],
        "only the connection that sent its HELLO is handed over at once"
    );
    // The silent one is not lost: it comes a second or so later.
    let end = Instant::now() + Duration::from_secs(5);
    let late = loop {
        if let Ok((_, peer)) = listener.accept() {
            break peer;
        }
        assert!(Instant::now() < end, "the silent connection never came");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(late, silent.local_addr().unwrap());
}
