//! What flood connections send: a HELLO, a TLS ClientHello, garbage, and the switch's
//! side of a handshake (sans-IO).

use std::io::{self};
use std::sync::Arc;

use openflow::common::Hello;
use openflow::of13::multipart::{MultipartReply, MultipartReplyBody, MultipartRequestBody};
use openflow::{frame_len, of10, of13, Message};

use super::*;

/// The HELLO every handshaking style sends: version 1.3 in the header, a bitmap of
/// {1.0, 1.3}, as a switch speaking both would.
pub fn hello() -> Vec<u8> {
    Message::V13(of13::Message::Hello(Hello::with_versions(&[0x01, 0x04])))
        .to_bytes(1)
        .expect("a HELLO encodes")
}

/// A TLS ClientHello as a client of the bench's kind sends it (rustls, ring: TLS 1.3
/// and 1.2, an x25519 key share), made once: the server's work per handshake (its own
/// key share, the signature over the transcript) is the same for every copy.
pub fn tls_client_hello() -> io::Result<Vec<u8>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        // Never verified: the connection goes no further than its first flight.
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("pharos").map_err(io::Error::other)?;
    let mut client =
        rustls::ClientConnection::new(Arc::new(config), name).map_err(io::Error::other)?;
    let mut out = Vec::new();
    while client.wants_write() {
        client.write_tls(&mut out)?;
    }
    Ok(out)
}

/// [`GARBAGE_LEN`] random bytes whose first byte is no OpenFlow version (0x01 to 0x06),
/// so the controller cannot mistake them for a message of any version.
pub(super) fn garbage(rng: &mut u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(GARBAGE_LEN);
    while out.len() < GARBAGE_LEN {
        // xorshift64: random enough for garbage, and no dependency.
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        out.extend_from_slice(&rng.to_le_bytes());
    }
    out.truncate(GARBAGE_LEN);
    if (0x01..=0x06).contains(&out[0]) {
        out[0] |= 0x80;
    }
    out
}

/// The switch side of the handshake, with no I/O: frames what is in `inbuf` (consuming
/// whole messages), appends a switch's answers to `out` (FEATURES_REPLY with `dpid` and
/// no ports, an empty PORT_DESC in 1.3, BARRIER_REPLY, ECHO_REPLY while handshaking;
/// HELLO and SET_CONFIG need none), each in the version of the request. Returns true once
/// a BARRIER_REQUEST has been answered: the controller's last step. Messages after it in
/// `inbuf` are left unanswered. A stream that cannot be framed is dropped (the
/// connection stays open, silent).
pub fn answer_handshake(inbuf: &mut Vec<u8>, dpid: u64, out: &mut Vec<u8>) -> bool {
    let mut used = 0;
    let mut done = false;
    while !done {
        let len = match frame_len(&inbuf[used..]) {
            Ok(Some(len)) => len,
            Ok(None) => break,
            Err(_) => {
                used = inbuf.len();
                break;
            }
        };
        let frame = &inbuf[used..used + len];
        used += len;
        let Ok((xid, msg)) = Message::decode(frame) else {
            continue;
        };
        let reply = match msg {
            Message::V10(of10::Message::FeaturesRequest) => {
                Message::V10(of10::Message::FeaturesReply(of10::SwitchFeatures {
                    datapath_id: dpid,
                    n_buffers: 0,
                    n_tables: 1,
                    capabilities: 0,
                    actions: 0,
                    ports: Vec::new(),
                }))
            }
            Message::V13(of13::Message::FeaturesRequest) => {
                Message::V13(of13::Message::FeaturesReply(of13::FeaturesReply {
                    datapath_id: dpid,
                    n_buffers: 0,
                    n_tables: 1,
                    auxiliary_id: 0,
                    capabilities: 0,
                    reserved: 0,
                }))
            }
            Message::V13(of13::Message::MultipartRequest(req))
                if matches!(req.body, MultipartRequestBody::PortDesc) =>
            {
                Message::V13(of13::Message::MultipartReply(MultipartReply {
                    flags: 0,
                    body: MultipartReplyBody::PortDesc { ports: Vec::new() },
                }))
            }
            Message::V10(of10::Message::EchoRequest { data }) => {
                Message::V10(of10::Message::EchoReply { data })
            }
            Message::V13(of13::Message::EchoRequest { data }) => {
                Message::V13(of13::Message::EchoReply { data })
            }
            Message::V10(of10::Message::BarrierRequest) => {
                done = true;
                Message::V10(of10::Message::BarrierReply)
            }
            Message::V13(of13::Message::BarrierRequest) => {
                done = true;
                Message::V13(of13::Message::BarrierReply)
            }
            _ => continue,
        };
        // Our own replies always encode; one that did not would only be left unsent.
        let _ = reply.encode(xid, out);
    }
    inbuf.drain(..used);
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tls_hello_is_a_client_hello_record() {
        let h = tls_client_hello().unwrap();
        // A handshake record (22), TLS 1.0/1.2 record version, then a ClientHello (1).
        assert_eq!(h[0], 22);
        assert_eq!(h[1], 3);
        assert_eq!(usize::from(u16::from_be_bytes([h[3], h[4]])) + 5, h.len());
        assert_eq!(h[5], 1);
        assert_eq!(
            "200,tls-hello".parse::<FloodConfig>().unwrap().style,
            FloodStyle::TlsHello
        );
    }

    #[test]
    fn garbage_is_not_openflow() {
        let mut rng = 0x1234_5678;
        for _ in 0..1000 {
            let g = garbage(&mut rng);
            assert_eq!(g.len(), GARBAGE_LEN);
            assert!(!(0x01..=0x06).contains(&g[0]));
        }
    }

    #[test]
    fn hello_is_a_valid_13_hello_with_both_versions() {
        let h = hello();
        match Message::decode(&h).unwrap().1 {
            Message::V13(of13::Message::Hello(h)) => {
                assert_eq!(h.versions(), Some(vec![0x01, 0x04]))
            }
            other => panic!("{other:?}"),
        }
    }

    /// Encodes `msgs` as the controller would send them, in one buffer.
    fn stream(msgs: &[Message]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, m) in msgs.iter().enumerate() {
            m.encode(i as u32 + 10, &mut out).unwrap();
        }
        out
    }

    fn decode_all(mut buf: &[u8]) -> Vec<(u32, Message)> {
        let mut out = Vec::new();
        while let Some(len) = frame_len(buf).unwrap() {
            out.push(Message::decode(&buf[..len]).unwrap());
            buf = &buf[len..];
        }
        assert!(buf.is_empty());
        out
    }

    #[test]
    fn answers_a_13_handshake_then_stops_at_the_barrier() {
        let mut inbuf = stream(&[
            Message::V13(of13::Message::Hello(Hello::with_versions(&[1, 4]))),
            Message::V13(of13::Message::FeaturesRequest),
            Message::V13(of13::Message::MultipartRequest(
                of13::multipart::MultipartRequest {
                    flags: 0,
                    body: MultipartRequestBody::PortDesc,
                },
            )),
            Message::V13(of13::Message::SetConfig(openflow::common::SwitchConfig {
                flags: 0,
                miss_send_len: 128,
            })),
            Message::V13(of13::Message::BarrierRequest),
            Message::V13(of13::Message::EchoRequest { data: vec![1] }),
        ]);
        // Fed one byte at a time: framing across reads.
        let (mut fed, mut out, mut done) = (Vec::new(), Vec::new(), false);
        let echo_at = inbuf.len() - 9;
        for b in inbuf.drain(..echo_at) {
            fed.push(b);
            assert!(!done);
            done = answer_handshake(&mut fed, 7, &mut out);
        }
        assert!(done);
        let replies: Vec<_> = decode_all(&out)
            .into_iter()
            .map(|(x, m)| (x, m.type_name()))
            .collect();
        assert_eq!(
            replies,
            [
                (11, "FEATURES_REPLY"),
                (12, "MULTIPART_REPLY"),
                (14, "BARRIER_REPLY")
            ]
        );
        match &decode_all(&out)[0].1 {
            Message::V13(of13::Message::FeaturesReply(f)) => assert_eq!(f.datapath_id, 7),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn answers_a_10_handshake() {
        let mut inbuf = stream(&[
            Message::V10(of10::Message::Hello(Hello::default())),
            Message::V10(of10::Message::EchoRequest { data: vec![] }),
            Message::V10(of10::Message::FeaturesRequest),
            Message::V10(of10::Message::BarrierRequest),
            Message::V10(of10::Message::EchoRequest { data: vec![2] }),
        ]);
        let mut out = Vec::new();
        assert!(answer_handshake(&mut inbuf, 9, &mut out));
        let replies: Vec<_> = decode_all(&out)
            .into_iter()
            .map(|(x, m)| (x, m.type_name()))
            .collect();
        assert_eq!(
            replies,
            [
                (11, "ECHO_REPLY"),
                (12, "FEATURES_REPLY"),
                (13, "BARRIER_REPLY")
            ]
        );
        // The echo after the barrier is left in the buffer, unanswered.
        assert_eq!(inbuf.len(), 9);
    }
}
