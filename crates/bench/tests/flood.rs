//! The flood generator against local listeners that count what they get: it keeps to
//! its rate, its cap and its duration, each style sends what it should, a non-loopback
//! target is refused before anything is sent, and the stop flag ends it promptly.
//!
//! Every test runs for well under 3 s.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use bench::flood::{
    hello, run_flood, run_flood_in_background, FloodConfig, FloodEnd, FloodReport, FloodStyle,
    FLOOD_DPID_BASE, GARBAGE_LEN,
};
use openflow::common::{Hello, SwitchConfig};
use openflow::of13::multipart::{MultipartRequest, MultipartRequestBody};
use openflow::{frame_len, of10, of13, Message};

/// What a [`Counter`] has seen so far.
#[derive(Debug, Default, Clone)]
struct Seen {
    accepted: usize,
    /// Connections open now, as far as the listener can tell.
    open: usize,
    /// The most open at once.
    max_open: usize,
    /// The bytes received on each connection, in accept order.
    bytes: Vec<Vec<u8>>,
}

/// A listener on loopback that accepts everything, reads everything, and counts
/// connections open at once. One thread, non-blocking sockets, a 1 ms turn.
struct Counter {
    addr: SocketAddr,
    seen: Arc<Mutex<Seen>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Counter {
    fn start() -> Counter {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (seen, stop) = (seen.clone(), stop.clone());
            thread::spawn(move || count(listener, &seen, &stop))
        };
        Counter {
            addr,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    fn seen(&self) -> Seen {
        self.seen.lock().unwrap().clone()
    }

    /// Waits (up to 2 s) until `pred` holds of what has been seen.
    fn wait_until(&self, pred: impl Fn(&Seen) -> bool) -> Seen {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let seen = self.seen();
            if pred(&seen) || Instant::now() > deadline {
                return seen;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Stops the listener after one more turn, and returns what it saw.
    fn finish(mut self) -> Seen {
        thread::sleep(Duration::from_millis(20));
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap();
        self.seen()
    }
}

fn count(listener: TcpListener, seen: &Mutex<Seen>, stop: &AtomicBool) {
    // (index into Seen::bytes, stream) of the connections still open.
    let mut open: Vec<(usize, TcpStream)> = Vec::new();
    let mut buf = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) {
        let mut s = seen.lock().unwrap();
        // Accept first, then read everything, then count: a connection the flood closed
        // to make room for one accepted in this turn was closed before that one
        // connected, so its close is visible to the reads that follow.
        while let Ok((stream, _)) = listener.accept() {
            stream.set_nonblocking(true).unwrap();
            s.accepted += 1;
            s.bytes.push(Vec::new());
            open.push((s.bytes.len() - 1, stream));
        }
        open.retain_mut(|(i, stream)| loop {
            match stream.read(&mut buf) {
                Ok(0) => return false,
                Ok(n) => s.bytes[*i].extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(_) => return false,
            }
        });
        s.open = open.len();
        s.max_open = s.max_open.max(open.len());
        drop(s);
        thread::sleep(Duration::from_millis(1));
    }
}

fn config(addr: SocketAddr, rate: u32, style: FloodStyle, duration: Duration) -> FloodConfig {
    FloodConfig {
        duration,
        ..FloodConfig::new(addr, rate, style)
    }
}

fn never() -> Arc<AtomicBool> {
    Arc::new(AtomicBool::new(false))
}

/// Every attempt ends one way: connected, failed or abandoned.
fn assert_accounted(r: &FloodReport) {
    assert_eq!(
        r.attempted,
        r.connected + r.failed + r.abandoned,
        "accounting: {r:#?}"
    );
    assert_eq!(r.failed, r.failed_by_reason.values().sum::<u64>(), "{r:#?}");
}

#[test]
fn keeps_to_its_rate_and_duration() {
    let counter = Counter::start();
    let cfg = config(
        counter.addr,
        200,
        FloodStyle::Silent,
        Duration::from_secs(1),
    );
    let t0 = Instant::now();
    let r = run_flood(&cfg, never()).unwrap();
    let took = t0.elapsed();
    let seen = counter.finish();
    assert!(
        (150..=250).contains(&seen.accepted),
        "accepted {} at 200/s for 1 s",
        seen.accepted
    );
    assert!((150..=250).contains(&r.attempted), "{r:#?}");
    assert!(r.attempted <= 200, "ran ahead of the clock: {r:#?}");
    // The last connections may be reset in the accept queue before the listener's turn.
    let connected = r.connected as usize;
    assert!(
        seen.accepted <= connected && seen.accepted + 3 >= connected,
        "accepted {} of {connected}",
        seen.accepted
    );
    assert_eq!(r.ended_by, FloodEnd::Duration);
    assert!(
        r.elapsed_s >= 1.0 && took < Duration::from_millis(1300),
        "{took:?} {r:#?}"
    );
    assert!((150.0..=250.0).contains(&r.rate_achieved), "{r:#?}");
    assert_eq!(r.failed, 0, "{r:#?}");
    // Silent: nothing sent; all held to the end.
    assert_eq!(r.bytes_sent, 0);
    assert!(seen.bytes.iter().all(Vec::is_empty));
    assert_eq!(r.open_at_end, r.attempted as usize);
    assert_eq!(r.closed_for_cap, 0);
    assert_accounted(&r);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["style"], "silent");
}

#[test]
fn never_holds_more_than_max_connections() {
    let counter = Counter::start();
    let cfg = FloodConfig {
        max_connections: 20,
        ..config(
            counter.addr,
            300,
            FloodStyle::Silent,
            Duration::from_millis(500),
        )
    };
    let r = run_flood(&cfg, never()).unwrap();
    let seen = counter.finish();
    assert!(
        seen.max_open <= 20,
        "listener saw {} open at once",
        seen.max_open
    );
    assert!(r.peak_open <= 20, "{r:#?}");
    // At the cap the oldest make room: the rate is kept.
    assert!(seen.accepted >= 100, "accepted {}", seen.accepted);
    assert!(r.closed_for_cap + r.abandoned >= r.attempted - 20, "{r:#?}");
    assert!(r.open_at_end <= 20);
    assert_eq!(r.max_connections, 20);
    assert_accounted(&r);
}

#[test]
fn duration_bounds_a_short_run() {
    let counter = Counter::start();
    let cfg = config(
        counter.addr,
        1000,
        FloodStyle::Silent,
        Duration::from_millis(200),
    );
    let t0 = Instant::now();
    let r = run_flood(&cfg, never()).unwrap();
    let took = t0.elapsed();
    counter.finish();
    assert!(took >= Duration::from_millis(200), "{took:?}");
    assert!(took < Duration::from_millis(450), "{took:?}");
    assert!(r.attempted <= 200, "{r:#?}");
    assert_eq!(r.ended_by, FloodEnd::Duration);
    assert_accounted(&r);
}

#[test]
fn garbage_sends_random_bytes_that_are_not_openflow() {
    let counter = Counter::start();
    let stop = never();
    let cfg = config(
        counter.addr,
        100,
        FloodStyle::Garbage,
        Duration::from_secs(2),
    );
    let flood = run_flood_in_background(cfg, stop.clone());
    counter.wait_until(|s| s.bytes.iter().filter(|b| b.len() >= GARBAGE_LEN).count() >= 5);
    stop.store(true, Ordering::Relaxed);
    let r = flood.join().unwrap().unwrap();
    let seen = counter.finish();
    let full: Vec<_> = seen.bytes.iter().filter(|b| !b.is_empty()).collect();
    assert!(full.len() >= 5, "{seen:?}");
    for b in &full {
        assert_eq!(b.len(), GARBAGE_LEN);
        assert!(
            !(1..=6).contains(&b[0]),
            "first byte {:#x} is an OpenFlow version",
            b[0]
        );
    }
    assert_ne!(full[0], full[1], "the same bytes twice");
    assert_eq!(r.bytes_sent, r.connected * GARBAGE_LEN as u64, "{r:#?}");
    assert_eq!(r.ended_by, FloodEnd::Stopped);
    assert_accounted(&r);
}

#[test]
fn half_handshake_sends_exactly_one_hello() {
    let counter = Counter::start();
    let stop = never();
    let cfg = config(
        counter.addr,
        100,
        FloodStyle::HalfHandshake,
        Duration::from_secs(2),
    );
    let flood = run_flood_in_background(cfg, stop.clone());
    let hello = hello();
    counter.wait_until(|s| s.bytes.iter().filter(|b| !b.is_empty()).count() >= 5);
    // Time for anything sent after the HELLO to show.
    thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    let r = flood.join().unwrap().unwrap();
    let seen = counter.finish();
    let sent: Vec<_> = seen.bytes.iter().filter(|b| !b.is_empty()).collect();
    assert!(sent.len() >= 5, "{seen:?}");
    for b in sent {
        assert_eq!(b, &hello, "more or other than one HELLO");
    }
    assert_eq!(frame_len(&hello).unwrap(), Some(hello.len()));
    assert!(matches!(
        Message::decode(&hello).unwrap().1,
        Message::V13(of13::Message::Hello(_))
    ));
    assert_eq!(r.handshakes_completed, 0);
    assert_accounted(&r);
}

/// A controller's side of one connection, scripted, with blocking reads.
struct Script {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Script {
    fn send(&mut self, xid: u32, m: Message) {
        self.stream.write_all(&m.to_bytes(xid).unwrap()).unwrap();
    }

    /// The next message, or `None` if nothing came within the stream's read timeout.
    fn recv(&mut self) -> Option<(u32, Message)> {
        let mut chunk = [0u8; 2048];
        loop {
            if let Some(len) = frame_len(&self.buf).unwrap() {
                let frame: Vec<u8> = self.buf.drain(..len).collect();
                return Some(Message::decode(&frame).unwrap());
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => panic!("the flood closed the connection"),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return None
                }
                Err(e) => panic!("read: {e}"),
            }
        }
    }

    fn expect(&mut self, what: &str) -> (u32, Message) {
        let got = self.recv().unwrap_or_else(|| panic!("no {what}"));
        assert_eq!(got.1.type_name(), what, "{got:?}");
        got
    }
}

/// Plays our controller's handshake in 1.3 or 1.0 on one accepted connection, then sends
/// an ECHO_REQUEST and returns whatever came back within 300 ms.
fn scripted_handshake(listener: &TcpListener, v13: bool) -> Option<(u32, Message)> {
    let (stream, _) = listener.accept().unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let mut s = Script {
        stream,
        buf: Vec::new(),
    };
    let (_, their_hello) = s.expect("HELLO");
    assert!(matches!(their_hello, Message::V13(of13::Message::Hello(_))));
    let dpid = if v13 {
        s.send(
            1,
            Message::V13(of13::Message::Hello(Hello::with_versions(&[1, 4]))),
        );
        s.send(2, Message::V13(of13::Message::FeaturesRequest));
        let (xid, m) = s.expect("FEATURES_REPLY");
        assert_eq!(xid, 2);
        let Message::V13(of13::Message::FeaturesReply(f)) = m else {
            panic!("{m:?}")
        };
        s.send(
            3,
            Message::V13(of13::Message::MultipartRequest(MultipartRequest {
                flags: 0,
                body: MultipartRequestBody::PortDesc,
            })),
        );
        assert_eq!(s.expect("MULTIPART_REPLY").0, 3);
        let config = SwitchConfig {
            flags: 0,
            miss_send_len: 128,
        };
        s.send(4, Message::V13(of13::Message::SetConfig(config)));
        s.send(5, Message::V13(of13::Message::BarrierRequest));
        assert_eq!(s.expect("BARRIER_REPLY").0, 5);
        s.send(
            6,
            Message::V13(of13::Message::EchoRequest { data: vec![1] }),
        );
        f.datapath_id
    } else {
        s.send(1, Message::V10(of10::Message::Hello(Hello::default())));
        s.send(2, Message::V10(of10::Message::FeaturesRequest));
        let (_, m) = s.expect("FEATURES_REPLY");
        let Message::V10(of10::Message::FeaturesReply(f)) = m else {
            panic!("{m:?}")
        };
        let config = SwitchConfig {
            flags: 0,
            miss_send_len: 128,
        };
        s.send(4, Message::V10(of10::Message::SetConfig(config)));
        s.send(5, Message::V10(of10::Message::BarrierRequest));
        assert_eq!(s.expect("BARRIER_REPLY").0, 5);
        s.send(
            6,
            Message::V10(of10::Message::EchoRequest { data: vec![1] }),
        );
        f.datapath_id
    };
    assert_eq!(dpid >> 48, FLOOD_DPID_BASE >> 48, "dpid {dpid:#x}");
    s.stream
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    s.recv()
}

#[test]
fn handshake_then_silent_completes_a_handshake_and_ignores_echo() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = never();
    let cfg = config(
        addr,
        20,
        FloodStyle::HandshakeThenSilent,
        Duration::from_secs(2),
    );
    let flood = run_flood_in_background(cfg, stop.clone());
    let after_13 = scripted_handshake(&listener, true);
    let after_10 = scripted_handshake(&listener, false);
    stop.store(true, Ordering::Relaxed);
    let r = flood.join().unwrap().unwrap();
    assert!(
        after_13.is_none(),
        "answered after the handshake: {after_13:?}"
    );
    assert!(
        after_10.is_none(),
        "answered after the handshake: {after_10:?}"
    );
    assert_eq!(r.handshakes_completed, 2, "{r:#?}");
    assert_accounted(&r);
}

#[test]
fn refuses_a_non_loopback_target_unless_allowed() {
    // TEST-NET-1: refused before any socket exists, so never contacted.
    let addr: SocketAddr = "192.0.2.1:6653".parse().unwrap();
    let cfg = config(addr, 1000, FloodStyle::Silent, Duration::from_secs(1));
    let t0 = Instant::now();
    let err = run_flood(&cfg, never()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PermissionDenied);
    assert!(err.to_string().contains("--target"), "{err}");
    assert!(t0.elapsed() < Duration::from_millis(100));

    let zero = FloodConfig {
        rate: 0,
        ..config(
            "127.0.0.1:1".parse().unwrap(),
            1,
            FloodStyle::Silent,
            Duration::ZERO,
        )
    };
    assert_eq!(
        run_flood(&zero, never()).unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
}

#[test]
fn stop_flag_ends_the_run_promptly() {
    let counter = Counter::start();
    let stop = never();
    let cfg = config(
        counter.addr,
        100,
        FloodStyle::Silent,
        Duration::from_secs(60),
    );
    let flood = run_flood_in_background(cfg, stop.clone());
    // Running: connections are arriving.
    counter.wait_until(|s| s.accepted >= 5);
    let t0 = Instant::now();
    stop.store(true, Ordering::Relaxed);
    let r = flood.join().unwrap().unwrap();
    assert!(
        t0.elapsed() < Duration::from_millis(200),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(r.ended_by, FloodEnd::Stopped);
    assert!(r.attempted > 0);
    assert_accounted(&r);
    counter.finish();
}

#[test]
fn refused_connections_are_counted_as_failures() {
    // A port with nothing listening: bound, then closed.
    let addr = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let cfg = config(addr, 200, FloodStyle::Silent, Duration::from_millis(200));
    let r = run_flood(&cfg, never()).unwrap();
    assert!(r.attempted > 0);
    assert_eq!(r.connected, 0, "{r:#?}");
    assert_eq!(r.failed + r.abandoned, r.attempted, "{r:#?}");
    let reasons: HashMap<_, _> = r.failed_by_reason.iter().collect();
    assert!(
        reasons.keys().any(|k| k.to_lowercase().contains("refused")),
        "{reasons:?}"
    );
    assert_accounted(&r);
}
