//! The emulated switch against a scripted controller side (plain std sockets), so that
//! the integration tests can trust it.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread;
use std::time::Duration;

use emu::{Emu, Event, Spec};
use openflow::common::SwitchConfig;
use openflow::of13::multipart::{MultipartReplyBody, MultipartRequest, MultipartRequestBody};
use openflow::{frame_len, of10, of13, Message, Version};
use testkit::emu;

const T: Duration = Duration::from_secs(5);

/// Reads one whole frame from a blocking stream.
fn read_frame(s: &mut std::net::TcpStream, buf: &mut Vec<u8>) -> Vec<u8> {
    loop {
        if let Some(n) = frame_len(buf).unwrap() {
            return buf.drain(..n).collect();
        }
        let mut chunk = [0u8; 4096];
        let n = s.read(&mut chunk).unwrap();
        assert!(n > 0, "emulator closed");
        buf.extend_from_slice(&chunk[..n]);
    }
}

#[test]
fn emulator_completes_a_scripted_13_handshake_and_sends_packet_ins() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let controller = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(T)).unwrap();
        let mut buf = Vec::new();
        let hello = read_frame(&mut s, &mut buf);
        assert_eq!(&hello[..2], &[0x06, 0x00], "1.0..1.5 switch says version 6");
        // Our HELLO: version 4, bitmap {1.0, 1.3}.
        s.write_all(&[4, 0, 0, 16, 0, 0, 0, 9, 0, 1, 0, 8, 0, 0, 0, 0x12])
            .unwrap();
        let send = |s: &mut std::net::TcpStream, m: of13::Message, xid| {
            s.write_all(&Message::V13(m).to_bytes(xid).unwrap())
                .unwrap()
        };
        send(&mut s, of13::Message::FeaturesRequest, 10);
        let (xid, m) = Message::decode(&read_frame(&mut s, &mut buf)).unwrap();
        assert_eq!(xid, 10);
        let Message::V13(of13::Message::FeaturesReply(f)) = m else {
            panic!("{m:?}")
        };
        assert_eq!(f.datapath_id, 0xabc);
        send(
            &mut s,
            of13::Message::MultipartRequest(MultipartRequest::new(MultipartRequestBody::PortDesc)),
            11,
        );
        let (_, m) = Message::decode(&read_frame(&mut s, &mut buf)).unwrap();
        let Message::V13(of13::Message::MultipartReply(r)) = m else {
            panic!("{m:?}")
        };
        let MultipartReplyBody::PortDesc { ports } = r.body else {
            panic!()
        };
        assert_eq!(
            ports.iter().map(|p| p.port_no).collect::<Vec<_>>(),
            vec![1, 2, 3, 4]
        );
        send(
            &mut s,
            of13::Message::SetConfig(SwitchConfig {
                flags: 0,
                miss_send_len: 64,
            }),
            12,
        );
        send(&mut s, of13::Message::BarrierRequest, 13);
        let (xid, m) = Message::decode(&read_frame(&mut s, &mut buf)).unwrap();
        assert_eq!((xid, m), (13, Message::V13(of13::Message::BarrierReply)));
        // A PACKET_IN, buffered: cut at miss_send_len.
        let (_, m) = Message::decode(&read_frame(&mut s, &mut buf)).unwrap();
        let Message::V13(of13::Message::PacketIn(p)) = m else {
            panic!("{m:?}")
        };
        assert_eq!((p.buffer_id, p.total_len, p.data.len()), (7, 200, 64));
        // Then echo both ways.
        let (xid, m) = Message::decode(&read_frame(&mut s, &mut buf)).unwrap();
        assert!(matches!(m, Message::V13(of13::Message::EchoRequest { .. })));
        send(
            &mut s,
            of13::Message::EchoReply {
                data: b"ping".to_vec(),
            },
            xid,
        );
        send(&mut s, of13::Message::EchoRequest { data: vec![1, 2] }, 99);
        let (xid, m) = Message::decode(&read_frame(&mut s, &mut buf)).unwrap();
        assert_eq!(
            (xid, m),
            (
                99,
                Message::V13(of13::Message::EchoReply { data: vec![1, 2] })
            )
        );
        // Close: the emulator sees it.
    });
    let mut sw = Emu::connect(addr, Spec::v10_to_v15(0xabc)).unwrap();
    assert_eq!(sw.handshake(T), Ok(Version::V1_3));
    assert_eq!(sw.miss_send_len, Some(64));
    let f = emu::long_frame(emu::host(1), emu::host(2), 200);
    sw.send_packet_in(3, &f, Some(7)).unwrap();
    sw.ping(T).unwrap();
    sw.wait_closed(T).unwrap();
    assert_eq!(sw.echo_requests, 1);
    controller.join().unwrap();
}

#[test]
fn emulator_negotiates_10_without_bitmaps_and_can_refuse_features() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let controller = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(T)).unwrap();
        let mut buf = Vec::new();
        let hello = read_frame(&mut s, &mut buf);
        assert_eq!(hello, vec![1, 0, 0, 8, 0, 0, 0, 1]);
        s.write_all(&[4, 0, 0, 8, 0, 0, 0, 1]).unwrap();
        let m = Message::V10(of10::Message::FeaturesRequest);
        s.write_all(&m.to_bytes(5).unwrap()).unwrap();
        // No reply comes: the emulator times out; then we close.
        s.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut b = [0u8; 8];
        assert!(s.read(&mut b).is_err(), "no FEATURES_REPLY");
    });
    let spec = Spec {
        answer_features: false,
        ..Spec::v10(1)
    };
    let mut sw = Emu::connect(addr, spec).unwrap();
    let e = sw.handshake(Duration::from_millis(200)).unwrap_err();
    assert!(e.contains("not done"), "{e}");
    assert_eq!(sw.version, Some(Version::V1_0));
    controller.join().unwrap();
    assert_eq!(sw.next(T), Event::Closed);
}
