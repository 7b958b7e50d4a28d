//! The loop, with ports on Unix datagram socket pairs (real file descriptors, no root)
//! and a controller on a real TCP socket.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use openflow::header::Version;
use openflow::ofctl::{parse_flow, FlowModCommand};
use openflow::{of10, of13, MacAddr, Message};

use super::fake::FakeTables;
use super::*;
use crate::datapath::PortCounters;

/// A port on one end of a datagram socket pair.
struct SockPort {
    name: String,
    sock: UnixDatagram,
    buf: Vec<u8>,
}

impl PortIo for SockPort {
    fn name(&self) -> &str {
        &self.name
    }
    fn mac(&self) -> MacAddr {
        MacAddr([2, 0, 0, 0, 0, 1])
    }
    fn link_up(&self) -> bool {
        true
    }
    fn recv_batch(&mut self, max: usize, mut f: impl FnMut(&[u8])) -> usize {
        let mut n = 0;
        while n < max {
            match self.sock.recv(&mut self.buf) {
                Ok(len) => {
                    f(&self.buf[..len]);
                    n += 1;
                }
                Err(_) => break,
            }
        }
        n
    }
    fn send(&mut self, frame: &[u8]) -> bool {
        self.sock.send(frame).is_ok()
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn counters(&self) -> PortCounters {
        PortCounters::default()
    }
    fn raw_fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }
}

fn read_msg(s: &mut TcpStream, buf: &mut Vec<u8>) -> Message {
    loop {
        if let Some(n) = openflow::frame_len(buf).unwrap() {
            let m = Message::decode(&buf[..n]).unwrap().1;
            buf.drain(..n);
            return m;
        }
        let mut chunk = [0u8; 4096];
        let n = s
            .read(&mut chunk)
            .expect("the switch writes within the timeout");
        assert!(n > 0, "the switch closed the connection");
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn send(s: &mut TcpStream, m: &Message, xid: u32) {
    s.write_all(&m.to_bytes(xid).unwrap()).unwrap();
}

fn accept(l: &TcpListener) -> TcpStream {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match l.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                return s;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(Instant::now() < deadline, "the switch did not connect");
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn the_loop_forwards_by_the_flows_sends_packet_ins_and_reconnects() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let target = Target {
        tls: false,
        addr: listener.local_addr().unwrap(),
    };
    let (a1, b1) = UnixDatagram::pair().unwrap();
    let (a2, b2) = UnixDatagram::pair().unwrap();
    for s in [&a1, &a2] {
        s.set_nonblocking(true).unwrap();
    }
    b2.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = Arc::clone(&stop);
    let thread = std::thread::spawn(move || {
        let ports = [(1, a1), (2, a2)]
            .into_iter()
            .map(|(n, sock)| {
                (
                    n,
                    SockPort {
                        name: format!("p{n}"),
                        sock,
                        buf: vec![0; 65536],
                    },
                )
            })
            .collect();
        let config = SwitchConfig {
            agent: AgentConfig {
                versions: Versions::V10,
                ..AgentConfig::default()
            },
            controllers: vec![target],
            backoff_min: Duration::from_millis(20),
            ..SwitchConfig::default()
        };
        let mut sw: Switch<SockPort, FakeTables> = Switch::new(config, ports).unwrap();
        sw.run(&stop2).unwrap();
    });

    let mut c = accept(&listener);
    let mut buf = Vec::new();
    assert!(matches!(
        read_msg(&mut c, &mut buf),
        Message::V10(of10::Message::Hello(_))
    ));
    send(
        &mut c,
        &Message::V10(of10::Message::Hello(Default::default())),
        1,
    );
    let fm = parse_flow("in_port=1,actions=output:2")
        .unwrap()
        .to_message(Version::V1_0, FlowModCommand::Add)
        .unwrap();
    send(&mut c, &fm, 2);
    send(&mut c, &Message::V10(of10::Message::BarrierRequest), 3);
    assert_eq!(
        read_msg(&mut c, &mut buf),
        Message::V10(of10::Message::BarrierReply)
    );

    // Port 1 -> port 2 by the flow.
    let frame: Vec<u8> = (0..100u8).collect();
    b1.send(&frame).unwrap();
    let mut got = vec![0u8; 2048];
    let n = b2.recv(&mut got).expect("the frame reaches port 2");
    assert_eq!(got[..n], frame[..]);

    // Port 2 has no flow: a PACKET_IN.
    b2.send(&frame).unwrap();
    let Message::V10(of10::Message::PacketIn(p)) = read_msg(&mut c, &mut buf) else {
        panic!("expected a PACKET_IN")
    };
    assert_eq!((p.in_port, p.total_len), (2, 100));

    // The controller goes away: the switch comes back.
    drop(c);
    let mut c = accept(&listener);
    let mut buf = Vec::new();
    assert!(matches!(
        read_msg(&mut c, &mut buf),
        Message::V10(of10::Message::Hello(_))
    ));

    stop.store(true, Ordering::Relaxed);
    thread.join().unwrap();
}

#[test]
fn a_service_connection_on_a_unix_socket_is_answered_but_sent_no_packet_in() {
    let dir = std::env::temp_dir().join(format!("pharos-switch-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s1.mgmt");
    let (a1, b1) = UnixDatagram::pair().unwrap();
    a1.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = Arc::clone(&stop);
    let listen = ListenAddr::Unix(path.clone());
    let thread = std::thread::spawn(move || {
        let ports = vec![(
            1,
            SockPort {
                name: "p1".into(),
                sock: a1,
                buf: vec![0; 65536],
            },
        )];
        let config = SwitchConfig {
            agent: AgentConfig {
                versions: Versions::V13,
                ..AgentConfig::default()
            },
            listen: vec![listen],
            ..SwitchConfig::default()
        };
        let mut sw: Switch<SockPort, FakeTables> = Switch::new(config, ports).unwrap();
        sw.run(&stop2).unwrap();
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut c = loop {
        match std::os::unix::net::UnixStream::connect(&path) {
            Ok(c) => break c,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => panic!("{e}"),
        }
    };
    c.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = Vec::new();
    let read = |c: &mut std::os::unix::net::UnixStream, buf: &mut Vec<u8>| loop {
        if let Some(n) = openflow::frame_len(buf).unwrap() {
            let m = Message::decode(&buf[..n]).unwrap().1;
            buf.drain(..n);
            return Some(m);
        }
        let mut chunk = [0u8; 4096];
        match c.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    assert!(matches!(
        read(&mut c, &mut buf),
        Some(Message::V13(of13::Message::Hello(_)))
    ));
    let hello = Message::V13(of13::Message::Hello(
        openflow::common::Hello::with_versions(&[4]),
    ));
    c.write_all(&hello.to_bytes(1).unwrap()).unwrap();
    // A table miss on port 1 (1.3 without a table-miss flow: dropped anyway) and an
    // output to the controller from a PACKET_OUT: neither reaches this connection.
    b1.send(&[0u8; 60]).unwrap();
    c.write_all(
        &Message::V13(of13::Message::FeaturesRequest)
            .to_bytes(2)
            .unwrap(),
    )
    .unwrap();
    let Some(Message::V13(of13::Message::FeaturesReply(f))) = read(&mut c, &mut buf) else {
        panic!("no FEATURES_REPLY")
    };
    assert_eq!(f.datapath_id, 1);
    let po = Message::V13(of13::Message::PacketOut(of13::PacketOut {
        buffer_id: openflow::model::NO_BUFFER,
        in_port: of13::OFPP_CONTROLLER,
        actions: vec![of13::Action::Output {
            port: of13::OFPP_CONTROLLER,
            max_len: 0xffff,
        }],
        data: vec![0u8; 60],
    }));
    c.write_all(&po.to_bytes(3).unwrap()).unwrap();
    c.write_all(
        &Message::V13(of13::Message::BarrierRequest)
            .to_bytes(4)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        read(&mut c, &mut buf),
        Some(Message::V13(of13::Message::BarrierReply)),
        "the barrier reply, and no PACKET_IN before it"
    );
    stop.store(true, Ordering::Relaxed);
    thread.join().unwrap();
    assert!(!path.exists(), "the socket file is removed at exit");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_refused_controller_is_retried_with_backoff_not_in_a_spin() {
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let config = SwitchConfig {
        agent: AgentConfig {
            versions: Versions::V10,
            ..AgentConfig::default()
        },
        controllers: vec![Target { addr, tls: false }],
        backoff_min: Duration::from_millis(50),
        backoff_max: Duration::from_millis(400),
        ..SwitchConfig::default()
    };
    let mut sw: Switch<SockPort, FakeTables> = Switch::new(config, Vec::new()).unwrap();
    let mut events = mio::Events::with_capacity(64);
    let start = Instant::now();
    let mut turns = 0;
    while start.elapsed() < Duration::from_millis(800) {
        sw.turn(&mut events).unwrap();
        turns += 1;
    }
    // Timers wake the loop every 100 ms at most, retries at 50, 100, 200, 400 ms:
    // a few dozen turns, not the thousands of a loop spinning on a dead socket.
    assert!(turns < 60, "{turns} turns in 800 ms");
    assert!(!sw.is_connected(0));
}

#[test]
fn a_controller_that_connects_to_a_listening_switch_gets_packet_ins() {
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let (a1, b1) = UnixDatagram::pair().unwrap();
    a1.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = Arc::clone(&stop);
    let thread = std::thread::spawn(move || {
        let ports = vec![(
            1,
            SockPort {
                name: "p1".into(),
                sock: a1,
                buf: vec![0; 65536],
            },
        )];
        let config = SwitchConfig {
            agent: AgentConfig {
                versions: Versions::V10,
                ..AgentConfig::default()
            },
            listen_controllers: vec![ListenAddr::Tcp(addr)],
            ..SwitchConfig::default()
        };
        let mut sw: Switch<SockPort, FakeTables> = Switch::new(config, ports).unwrap();
        sw.run(&stop2).unwrap();
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut c = loop {
        match TcpStream::connect(addr) {
            Ok(c) => break c,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => panic!("{e}"),
        }
    };
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = Vec::new();
    assert!(matches!(
        read_msg(&mut c, &mut buf),
        Message::V10(of10::Message::Hello(_))
    ));
    send(
        &mut c,
        &Message::V10(of10::Message::Hello(Default::default())),
        1,
    );
    send(&mut c, &Message::V10(of10::Message::BarrierRequest), 2);
    assert_eq!(
        read_msg(&mut c, &mut buf),
        Message::V10(of10::Message::BarrierReply)
    );
    b1.send(&[0u8; 60]).unwrap();
    assert!(matches!(
        read_msg(&mut c, &mut buf),
        Message::V10(of10::Message::PacketIn(_))
    ));
    stop.store(true, Ordering::Relaxed);
    thread.join().unwrap();
}
