//! `pharos bench responder --answer`: each mode answers a PACKET_IN with the messages it
//! names, decoded here with the codec.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bench::switch::{host_mac, Template, NO_BUFFER};
use bench::{run_responder_with, Answer, ResponderOptions};
use openflow::{frame_len, of10, of13, Message, Version};

/// A switch's side of one connection to the responder, with blocking reads.
struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    fn connect(addr: std::net::SocketAddr, version: Version) -> Client {
        let stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let mut c = Client {
            stream,
            buf: Vec::new(),
        };
        let v = version.wire();
        c.stream
            .write_all(&[v, openflow::msg_type::HELLO, 0, 8, 0, 0, 0, 1])
            .unwrap();
        // Its HELLO, then a FEATURES_REQUEST in our version (no reply needed).
        assert_eq!(c.next().1.type_name(), "HELLO");
        let (_, m) = c.next();
        assert_eq!(m.type_name(), "FEATURES_REQUEST");
        assert_eq!(m.version(), version);
        c
    }

    /// The next message, within 5 s.
    fn next(&mut self) -> (u32, Message) {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(len) = frame_len(&self.buf).unwrap() {
                let frame: Vec<u8> = self.buf.drain(..len).collect();
                return Message::decode(&frame).unwrap();
            }
            assert!(Instant::now() < deadline, "no message from the responder");
            match self.stream.read(&mut chunk) {
                Ok(0) => panic!("the responder closed the connection"),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) => panic!("read: {e}"),
            }
        }
    }

    /// Nothing more arrives within 100 ms.
    fn assert_quiet(&mut self) {
        let mut chunk = [0u8; 4096];
        let until = Instant::now() + Duration::from_millis(100);
        while Instant::now() < until {
            match self.stream.read(&mut chunk) {
                Ok(0) => panic!("the responder closed the connection"),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(_) => {}
            }
        }
        assert!(self.buf.is_empty(), "more bytes: {:?}", self.buf);
    }
}

/// What an answer message says: ("FLOW_MOD", buffer id, None) or ("PACKET_OUT", buffer
/// id, its data).
fn summary(m: &Message) -> (&'static str, u32, Vec<u8>) {
    match m {
        Message::V10(of10::Message::FlowMod(f)) => ("FLOW_MOD", f.buffer_id, Vec::new()),
        Message::V13(of13::Message::FlowMod(f)) => ("FLOW_MOD", f.buffer_id, Vec::new()),
        Message::V10(of10::Message::PacketOut(p)) => ("PACKET_OUT", p.buffer_id, p.data.clone()),
        Message::V13(of13::Message::PacketOut(p)) => ("PACKET_OUT", p.buffer_id, p.data.clone()),
        other => panic!("not an answer: {other:?}"),
    }
}

#[test]
fn each_answer_mode_sends_the_messages_it_names() {
    const BUFFER: u32 = 0x1000_0042;
    for version in [Version::V1_0, Version::V1_3] {
        let template = Template::new(version, 5);
        let mut buffered = Vec::new();
        template.append(
            &mut buffered,
            0x1000_0001,
            BUFFER,
            1,
            host_mac(5, 0),
            host_mac(5, 1),
        );
        let mut unbuffered = Vec::new();
        template.append(
            &mut unbuffered,
            0x1000_0002,
            NO_BUFFER,
            2,
            host_mac(5, 1),
            host_mac(5, 0),
        );
        let frame = unbuffered[unbuffered.len() - 60..].to_vec();
        let fm = |b: u32| ("FLOW_MOD", b, Vec::new());
        let po = |b: u32, d: &[u8]| ("PACKET_OUT", b, d.to_vec());
        let cases = [
            (Answer::FlowMod, vec![fm(BUFFER)], vec![fm(NO_BUFFER)]),
            (
                Answer::PacketOut,
                vec![po(BUFFER, &[])],
                vec![po(NO_BUFFER, &frame)],
            ),
            (
                Answer::FlowModPacketOut,
                vec![fm(NO_BUFFER), po(BUFFER, &[])],
                vec![fm(NO_BUFFER), po(NO_BUFFER, &frame)],
            ),
            (
                Answer::LikeLearningSwitch,
                vec![fm(BUFFER)],
                vec![fm(NO_BUFFER), po(NO_BUFFER, &frame)],
            ),
        ];
        for (answer, for_buffered, for_unbuffered) in cases {
            let resp = run_responder_with(
                "127.0.0.1:0".parse().unwrap(),
                ResponderOptions {
                    answer,
                    threads: 1,
                    ..ResponderOptions::default()
                },
                Arc::new(AtomicBool::new(false)),
            )
            .unwrap();
            let mut c = Client::connect(resp.local_addr(), version);
            for (pi, expected, xid) in [
                (&buffered, &for_buffered, 0x1000_0001),
                (&unbuffered, &for_unbuffered, 0x1000_0002),
            ] {
                c.stream.write_all(pi).unwrap();
                for want in expected {
                    let (got_xid, m) = c.next();
                    assert_eq!(m.version(), version);
                    assert_eq!(got_xid, xid, "{answer:?}: the PACKET_IN's xid");
                    let got = summary(&m);
                    assert_eq!(&got, want, "{version} {answer:?}");
                }
                c.assert_quiet();
            }
            let n = (for_buffered.len() + for_unbuffered.len()) as u64;
            assert_eq!(resp.packet_ins_received(), 2);
            assert_eq!(resp.answers_sent(), 2, "{answer:?}: PACKET_INs answered");
            assert_eq!(resp.messages_sent(), n, "{answer:?}");
            resp.stop();
        }
    }
}
