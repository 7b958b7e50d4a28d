//! The handshake replies a switch gives (FEATURES_REPLY, its ports' descriptions,
//! GET_CONFIG_REPLY, BARRIER_REPLY), encoded once and patched with the xid.

use openflow::of13::multipart::{MultipartReply, MultipartReplyBody};
use openflow::{of10, of13, FixedStr, MacAddr, Message, Version};

use super::template::encode;

/// The replies a switch gives during the handshake, pre-encoded (xid 0).
#[derive(Debug, Clone)]
pub(super) struct Replies {
    /// FEATURES_REPLY: the dpid, the ports in 1.0.
    pub(super) features: Vec<u8>,
    /// 1.3's port descriptions (a MULTIPART_REPLY); `None` in 1.0.
    pub(super) port_desc: Option<Vec<u8>>,
    /// GET_CONFIG_REPLY.
    pub(super) get_config: Vec<u8>,
    /// BARRIER_REPLY, in the version's numbering.
    pub(super) barrier: Vec<u8>,
}

pub(super) fn port_mac(dpid: u64, p: u32) -> MacAddr {
    let d = (dpid as u16).to_be_bytes();
    MacAddr([0x06, d[0], d[1], 0, 0, p as u8])
}

pub(super) fn port_name(p: u32) -> FixedStr<16> {
    FixedStr::new(&format!("eth{p}")).expect("a short port name")
}

impl Replies {
    pub(super) fn new(version: Version, dpid: u64, n_ports: u32) -> Replies {
        let ports = 1..=n_ports;
        let config = openflow::common::SwitchConfig {
            flags: 0,
            miss_send_len: 128,
        };
        match version {
            Version::V1_0 => Replies {
                features: encode(&Message::V10(of10::Message::FeaturesReply(
                    of10::SwitchFeatures {
                        datapath_id: dpid,
                        n_buffers: 256,
                        n_tables: 1,
                        capabilities: 0xc7,
                        actions: 0xfff,
                        ports: ports
                            .map(|p| of10::PhyPort {
                                port_no: p as u16,
                                hw_addr: port_mac(dpid, p),
                                name: port_name(p),
                                config: 0,
                                state: 0,
                                curr: 0,
                                advertised: 0,
                                supported: 0,
                                peer: 0,
                            })
                            .collect(),
                    },
                ))),
                port_desc: None,
                get_config: encode(&Message::V10(of10::Message::GetConfigReply(config))),
                barrier: encode(&Message::V10(of10::Message::BarrierReply)),
            },
            Version::V1_3 => Replies {
                features: encode(&Message::V13(of13::Message::FeaturesReply(
                    of13::FeaturesReply {
                        datapath_id: dpid,
                        n_buffers: 256,
                        n_tables: 254,
                        auxiliary_id: 0,
                        capabilities: 0x4f,
                        reserved: 0,
                    },
                ))),
                port_desc: Some(encode(&Message::V13(of13::Message::MultipartReply(
                    MultipartReply {
                        flags: 0,
                        body: MultipartReplyBody::PortDesc {
                            ports: ports
                                .map(|p| of13::Port {
                                    port_no: p,
                                    hw_addr: port_mac(dpid, p),
                                    name: port_name(p),
                                    config: 0,
                                    state: 0,
                                    curr: 0,
                                    advertised: 0,
                                    supported: 0,
                                    peer: 0,
                                    curr_speed: 10_000_000,
                                    max_speed: 10_000_000,
                                })
                                .collect(),
                        },
                    },
                )))),
                get_config: encode(&Message::V13(of13::Message::GetConfigReply(config))),
                barrier: encode(&Message::V13(of13::Message::BarrierReply)),
            },
        }
    }
}

/// Which handshake reply to send.
#[derive(Clone, Copy)]
pub(super) enum Reply {
    Features,
    GetConfig,
    Barrier,
    PortDesc,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_replies_decode() {
        for version in [Version::V1_0, Version::V1_3] {
            let r = Replies::new(version, 3, 4);
            for b in [&r.features, &r.get_config, &r.barrier]
                .into_iter()
                .chain(r.port_desc.as_ref())
            {
                Message::decode(b).unwrap();
            }
        }
    }
}
