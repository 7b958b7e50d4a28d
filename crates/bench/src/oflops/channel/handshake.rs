//! The controller's side of the handshake: HELLO and the version, FEATURES, the port
//! descriptions, SET_CONFIG, and a barrier before the channel is handed over.

use std::collections::VecDeque;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::Instant;

use openflow::common::{Hello, SwitchConfig};
use openflow::of13::multipart::{
    MultipartReply, MultipartReplyBody, MultipartRequest, MultipartRequestBody,
};
use openflow::{of10, of13, view, Message, Version, HEADER_LEN};

use super::info::{PortInfo, SwitchInfo};
use super::io::{enable_rx_stamps, io_err};
use super::messages::Received;
use super::{msg_type, Channel, ChannelConfig, ChannelError, Result};

impl Channel {
    pub(super) fn handshake(stream: TcpStream, cfg: &ChannelConfig) -> Result<Channel> {
        stream
            .set_nonblocking(true)
            .map_err(|e| io_err("control socket", e))?;
        enable_rx_stamps(stream.as_raw_fd());
        let _ = stream.set_nodelay(true);
        let mut ch = Channel {
            stream,
            version: cfg.version,
            timeout: cfg.timeout,
            info: SwitchInfo {
                datapath_id: 0,
                n_buffers: 0,
                n_tables: 0,
                ports: Vec::new(),
            },
            next_xid: 1,
            rbuf: Vec::with_capacity(1 << 16),
            rpos: 0,
            reads: 0,
            kernel_stamps: 0,
            last_read_ns: 0,
            backlog: VecDeque::new(),
            backlog_dropped: 0,
            echoes_answered: 0,
        };
        let v = cfg.version;
        // HELLO: 1.0 with no body, 1.3 with a version bitmap of 1.3 alone.
        let hello = match v {
            Version::V1_0 => Message::V10(of10::Message::Hello(Hello::default())),
            Version::V1_3 => Message::V13(of13::Message::Hello(Hello::with_versions(&[v.wire()]))),
        };
        let xid = ch.xid();
        ch.send_message(&hello, xid)?;
        let deadline = Instant::now() + cfg.timeout;
        let their = ch.wait_raw("HELLO", deadline, |r| r.msg_type == msg_type::HELLO)?;
        check_hello(&their, v)?;
        // FEATURES.
        let req = match v {
            Version::V1_0 => Message::V10(of10::Message::FeaturesRequest),
            Version::V1_3 => Message::V13(of13::Message::FeaturesRequest),
        };
        let fx = ch.request(&req)?;
        let deadline = Instant::now() + cfg.timeout;
        let reply = ch.wait_xid("FEATURES_REQUEST", fx, deadline)?;
        match reply.message()? {
            Message::V10(of10::Message::FeaturesReply(f)) => {
                ch.info = SwitchInfo {
                    datapath_id: f.datapath_id,
                    n_buffers: f.n_buffers,
                    n_tables: f.n_tables,
                    ports: f
                        .ports
                        .iter()
                        .map(|p| PortInfo {
                            port_no: view::widen_port(p.port_no),
                            name: p.name.to_string(),
                            hw_addr: p.hw_addr,
                        })
                        .collect(),
                }
            }
            Message::V13(of13::Message::FeaturesReply(f)) => {
                ch.info.datapath_id = f.datapath_id;
                ch.info.n_buffers = f.n_buffers;
                ch.info.n_tables = f.n_tables;
                let req = Message::V13(of13::Message::MultipartRequest(MultipartRequest {
                    flags: 0,
                    body: MultipartRequestBody::PortDesc,
                }));
                let px = ch.request(&req)?;
                let deadline = Instant::now() + cfg.timeout;
                loop {
                    let r = ch.wait_xid("PORT_DESC", px, deadline)?;
                    if let Message::V13(of13::Message::MultipartReply(MultipartReply {
                        flags,
                        body: MultipartReplyBody::PortDesc { ports },
                    })) = r.message()?
                    {
                        ch.info.ports.extend(ports.iter().map(|p| PortInfo {
                            port_no: p.port_no,
                            name: p.name.to_string(),
                            hw_addr: p.hw_addr,
                        }));
                        if flags & of13::multipart::OFPMPF_REPLY_MORE == 0 {
                            break;
                        }
                    }
                }
            }
            other => {
                return Err(ChannelError::Protocol(format!(
                    "expected FEATURES_REPLY, got {}",
                    other.type_name()
                )))
            }
        }
        let config = SwitchConfig {
            flags: 0,
            miss_send_len: cfg.miss_send_len,
        };
        let set = match v {
            Version::V1_0 => Message::V10(of10::Message::SetConfig(config)),
            Version::V1_3 => Message::V13(of13::Message::SetConfig(config)),
        };
        ch.request(&set)?;
        ch.barrier()?;
        Ok(ch)
    }
}

/// Checks the switch's HELLO offers `v`.
fn check_hello(r: &Received, v: Version) -> Result<()> {
    let theirs = r.frame[0];
    // A 1.3 HELLO's version bitmap is authoritative; else the header's version is the
    // highest the switch speaks (and it speaks every version below it, by the spec).
    let bitmap = if theirs >= 4 && r.frame.len() > HEADER_LEN {
        match Message::decode(&r.frame) {
            Ok((_, Message::V13(of13::Message::Hello(h)))) => h.versions(),
            _ => None,
        }
    } else {
        None
    };
    let detail = match bitmap {
        Some(vs) if vs.contains(&v.wire()) => return Ok(()),
        Some(vs) => format!("its HELLO offers wire versions {vs:?}"),
        None if theirs >= v.wire() => return Ok(()),
        None => format!("its HELLO is version {theirs:#04x}"),
    };
    Err(ChannelError::Version { wanted: v, detail })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_checks_follow_the_bitmap_then_the_header() {
        let mk = |frame: Vec<u8>| Received {
            at_ns: 0,
            read_no: 0,
            xid: 0,
            msg_type: 0,
            frame,
        };
        let only13 = Message::V13(of13::Message::Hello(Hello::with_versions(&[4])))
            .to_bytes(1)
            .unwrap();
        assert!(check_hello(&mk(only13.clone()), Version::V1_3).is_ok());
        let e = check_hello(&mk(only13), Version::V1_0).unwrap_err();
        assert!(e.to_string().contains("[4]"), "{e}");
        let plain10 = vec![1, 0, 0, 8, 0, 0, 0, 1];
        assert!(check_hello(&mk(plain10.clone()), Version::V1_0).is_ok());
        assert!(check_hello(&mk(plain10), Version::V1_3).is_err());
    }
}
