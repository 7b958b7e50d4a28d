//! Property tests: for random 1.0 messages of every kind, parse(emit(m)) == m (and the
//! same through JSON); and no byte string makes the decoder panic.

use crate::common::PortCounters;

use std::net::Ipv4Addr;

use proptest::collection::vec;
use proptest::prelude::*;

use super::stats::*;
use super::*;
use crate::common::{AggregateStats, DescStats};
use crate::types::{FixedStr, MacAddr};

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..max)
}

/// `8 * k + extra` random bytes, for opaque bodies whose container must stay 8-aligned.
fn aligned_bytes(extra: usize) -> impl Strategy<Value = Vec<u8>> {
    (0..4usize).prop_flat_map(move |k| vec(any::<u8>(), 8 * k + extra))
}

fn fixed_str<const N: usize>() -> impl Strategy<Value = FixedStr<N>> {
    vec(any::<u8>(), N).prop_map(|v| FixedStr(v.try_into().unwrap()))
}

fn mac() -> impl Strategy<Value = MacAddr> {
    any::<[u8; 6]>().prop_map(MacAddr)
}

fn ip() -> impl Strategy<Value = Ipv4Addr> {
    any::<u32>().prop_map(Ipv4Addr::from)
}

fn a_match() -> impl Strategy<Value = Match> {
    (
        (any::<u32>(), any::<u16>(), mac(), mac(), any::<u16>()),
        (any::<u8>(), any::<u16>(), any::<u8>(), any::<u8>()),
        (ip(), ip(), any::<u16>(), any::<u16>()),
    )
        .prop_map(
            |(
                (wildcards, in_port, dl_src, dl_dst, dl_vlan),
                (dl_vlan_pcp, dl_type, nw_tos, nw_proto),
                (nw_src, nw_dst, tp_src, tp_dst),
            )| Match {
                wildcards,
                in_port,
                dl_src,
                dl_dst,
                dl_vlan,
                dl_vlan_pcp,
                dl_type,
                nw_tos,
                nw_proto,
                nw_src,
                nw_dst,
                tp_src,
                tp_dst,
            },
        )
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        (any::<u16>(), any::<u16>()).prop_map(|(port, max_len)| Action::Output { port, max_len }),
        any::<u16>().prop_map(|vlan_vid| Action::SetVlanVid { vlan_vid }),
        any::<u8>().prop_map(|vlan_pcp| Action::SetVlanPcp { vlan_pcp }),
        Just(Action::StripVlan),
        mac().prop_map(|dl_addr| Action::SetDlSrc { dl_addr }),
        mac().prop_map(|dl_addr| Action::SetDlDst { dl_addr }),
        ip().prop_map(|nw_addr| Action::SetNwSrc { nw_addr }),
        ip().prop_map(|nw_addr| Action::SetNwDst { nw_addr }),
        any::<u8>().prop_map(|nw_tos| Action::SetNwTos { nw_tos }),
        any::<u16>().prop_map(|tp_port| Action::SetTpSrc { tp_port }),
        any::<u16>().prop_map(|tp_port| Action::SetTpDst { tp_port }),
        (any::<u16>(), any::<u32>())
            .prop_map(|(port, queue_id)| Action::Enqueue { port, queue_id }),
        (
            prop_oneof![Just(action::NX_VENDOR_ID), any::<u32>()],
            aligned_bytes(0)
        )
            .prop_map(|(vendor, body)| Action::Vendor { vendor, body }),
        (12..0xffffu16, aligned_bytes(4))
            .prop_map(|(action_type, body)| Action::Unknown { action_type, body }),
    ]
}

fn actions() -> impl Strategy<Value = Vec<Action>> {
    vec(action(), 0..5)
}

fn phy_port() -> impl Strategy<Value = PhyPort> {
    (
        (any::<u16>(), mac(), fixed_str::<16>()),
        (any::<u32>(), any::<u32>(), any::<u32>()),
        (any::<u32>(), any::<u32>(), any::<u32>()),
    )
        .prop_map(
            |((port_no, hw_addr, name), (config, state, curr), (advertised, supported, peer))| {
                PhyPort {
                    port_no,
                    hw_addr,
                    name,
                    config,
                    state,
                    curr,
                    advertised,
                    supported,
                    peer,
                }
            },
        )
}

fn flow_mod() -> impl Strategy<Value = FlowMod> {
    (
        (a_match(), any::<u64>(), any::<u16>(), any::<u16>()),
        (any::<u16>(), any::<u16>(), any::<u32>(), any::<u16>()),
        (any::<u16>(), actions()),
    )
        .prop_map(
            |(
                (m, cookie, command, idle_timeout),
                (hard_timeout, priority, buffer_id, out_port),
                (flags, actions),
            )| FlowMod {
                match_: m,
                cookie,
                command: FlowModCommand::from_raw(command),
                idle_timeout,
                hard_timeout,
                priority,
                buffer_id,
                out_port,
                flags,
                actions,
            },
        )
}

fn flow_removed() -> impl Strategy<Value = FlowRemoved> {
    (
        (a_match(), any::<u64>(), any::<u16>(), any::<u8>()),
        (any::<u32>(), any::<u32>(), any::<u16>()),
        (any::<u64>(), any::<u64>()),
    )
        .prop_map(
            |(
                (m, cookie, priority, reason),
                (duration_sec, duration_nsec, idle_timeout),
                (packet_count, byte_count),
            )| FlowRemoved {
                match_: m,
                cookie,
                priority,
                reason: FlowRemovedReason::from_raw(reason),
                duration_sec,
                duration_nsec,
                idle_timeout,
                packet_count,
                byte_count,
            },
        )
}

fn flow_stats() -> impl Strategy<Value = FlowStats> {
    (
        (any::<u8>(), a_match(), any::<u32>(), any::<u32>()),
        (any::<u16>(), any::<u16>(), any::<u16>()),
        (any::<u64>(), any::<u64>(), any::<u64>(), actions()),
    )
        .prop_map(
            |(
                (table_id, m, duration_sec, duration_nsec),
                (priority, idle_timeout, hard_timeout),
                (cookie, packet_count, byte_count, actions),
            )| FlowStats {
                table_id,
                match_: m,
                duration_sec,
                duration_nsec,
                priority,
                idle_timeout,
                hard_timeout,
                cookie,
                packet_count,
                byte_count,
                actions,
            },
        )
}

fn stats_request() -> impl Strategy<Value = StatsRequest> {
    let fsr = (a_match(), any::<u8>(), any::<u16>())
        .prop_map(|(m, table_id, out_port)| FlowStatsRequest {
            match_: m,
            table_id,
            out_port,
        })
        .boxed();
    let body = prop_oneof![
        Just(StatsRequestBody::Desc),
        Just(StatsRequestBody::Table),
        fsr.clone().prop_map(StatsRequestBody::Flow),
        fsr.prop_map(StatsRequestBody::Aggregate),
        any::<u16>().prop_map(|port_no| StatsRequestBody::Port(PortStatsRequest { port_no })),
        (any::<u16>(), any::<u32>()).prop_map(|(port_no, queue_id)| StatsRequestBody::Queue(
            QueueStatsRequest { port_no, queue_id }
        )),
        (any::<u32>(), bytes(32))
            .prop_map(|(vendor, data)| StatsRequestBody::Vendor { vendor, data }),
        (6..0xffffu16, bytes(32))
            .prop_map(|(raw_type, body)| StatsRequestBody::Unknown { raw_type, body }),
    ];
    (any::<u16>(), body).prop_map(|(flags, body)| StatsRequest { flags, body })
}

fn stats_reply() -> impl Strategy<Value = StatsReply> {
    let desc = (
        fixed_str::<256>(),
        fixed_str::<256>(),
        fixed_str::<256>(),
        fixed_str::<32>(),
        fixed_str::<256>(),
    )
        .prop_map(
            |(mfr_desc, hw_desc, sw_desc, serial_num, dp_desc)| DescStats {
                mfr_desc,
                hw_desc,
                sw_desc,
                serial_num,
                dp_desc,
            },
        );
    let table = (
        (any::<u8>(), fixed_str::<32>(), any::<u32>()),
        (any::<u32>(), any::<u32>(), any::<u64>(), any::<u64>()),
    )
        .prop_map(
            |(
                (table_id, name, wildcards),
                (max_entries, active_count, lookup_count, matched_count),
            )| TableStats {
                table_id,
                name,
                wildcards,
                max_entries,
                active_count,
                lookup_count,
                matched_count,
            },
        );
    let port = (any::<u16>(), any::<[u64; 12]>()).prop_map(|(port_no, c)| PortStats {
        port_no,
        counters: PortCounters::from(c),
    });
    let queue =
        (any::<u16>(), any::<u32>(), any::<[u64; 3]>()).prop_map(|(port_no, queue_id, c)| {
            QueueStats {
                port_no,
                queue_id,
                tx_bytes: c[0],
                tx_packets: c[1],
                tx_errors: c[2],
            }
        });
    let body = prop_oneof![
        desc.prop_map(|d| StatsReplyBody::Desc(Box::new(d))),
        vec(flow_stats(), 0..4).prop_map(|stats| StatsReplyBody::Flow { stats }),
        (any::<u64>(), any::<u64>(), any::<u32>()).prop_map(
            |(packet_count, byte_count, flow_count)| {
                StatsReplyBody::Aggregate(AggregateStats {
                    packet_count,
                    byte_count,
                    flow_count,
                })
            }
        ),
        vec(table, 0..4).prop_map(|stats| StatsReplyBody::Table { stats }),
        vec(port, 0..4).prop_map(|stats| StatsReplyBody::Port { stats }),
        vec(queue, 0..4).prop_map(|stats| StatsReplyBody::Queue { stats }),
        (any::<u32>(), bytes(32))
            .prop_map(|(vendor, data)| StatsReplyBody::Vendor { vendor, data }),
        (6..0xffffu16, bytes(32))
            .prop_map(|(raw_type, body)| StatsReplyBody::Unknown { raw_type, body }),
    ];
    (any::<u16>(), body).prop_map(|(flags, body)| StatsReply { flags, body })
}

fn queue_property() -> impl Strategy<Value = QueueProperty> {
    prop_oneof![
        any::<u16>().prop_map(|rate| QueueProperty::MinRate { rate }),
        any::<u16>().prop_map(|rate| QueueProperty::MaxRate { rate }),
        (any::<u32>(), bytes(16))
            .prop_map(|(experimenter, data)| QueueProperty::Experimenter { experimenter, data }),
        (prop_oneof![Just(0u16), 3..0xffffu16], bytes(16))
            .prop_map(|(prop_type, body)| QueueProperty::Unknown { prop_type, body }),
    ]
}

fn queue_reply() -> impl Strategy<Value = QueueGetConfigReply> {
    let queue = (any::<u32>(), vec(queue_property(), 0..3)).prop_map(|(queue_id, properties)| {
        PacketQueue {
            queue_id,
            properties,
        }
    });
    (any::<u16>(), vec(queue, 0..4)).prop_map(|(port, queues)| QueueGetConfigReply { port, queues })
}

fn message() -> impl Strategy<Value = Message> {
    let config = (any::<u16>(), any::<u16>())
        .prop_map(|(flags, miss_send_len)| SwitchConfig {
            flags,
            miss_send_len,
        })
        .boxed();
    prop_oneof![
        prop_oneof![Just(Hello::default()), Just(Hello::with_versions(&[1, 4]))]
            .prop_map(Message::Hello),
        (any::<u16>(), any::<u16>(), bytes(64)).prop_map(|(err_type, code, data)| Message::Error(
            ErrorBody::Standard {
                err_type,
                code,
                data
            }
        )),
        bytes(64).prop_map(|data| Message::EchoRequest { data }),
        bytes(64).prop_map(|data| Message::EchoReply { data }),
        (any::<u32>(), bytes(64))
            .prop_map(|(vendor, data)| Message::Vendor(Vendor { vendor, data })),
        Just(Message::FeaturesRequest),
        (
            (any::<u64>(), any::<u32>(), any::<u8>()),
            (any::<u32>(), any::<u32>(), vec(phy_port(), 0..5))
        )
            .prop_map(
                |((datapath_id, n_buffers, n_tables), (capabilities, actions, ports))| {
                    Message::FeaturesReply(SwitchFeatures {
                        datapath_id,
                        n_buffers,
                        n_tables,
                        capabilities,
                        actions,
                        ports,
                    })
                }
            ),
        Just(Message::GetConfigRequest),
        config.clone().prop_map(Message::GetConfigReply),
        config.prop_map(Message::SetConfig),
        (
            any::<u32>(),
            any::<u16>(),
            any::<u16>(),
            any::<u8>(),
            bytes(128)
        )
            .prop_map(
                |(buffer_id, total_len, in_port, reason, data)| Message::PacketIn(PacketIn {
                    buffer_id,
                    total_len,
                    in_port,
                    reason: PacketInReason::from_raw(reason),
                    data,
                })
            ),
        flow_removed().prop_map(Message::FlowRemoved),
        (any::<u8>(), phy_port()).prop_map(|(reason, desc)| Message::PortStatus(PortStatus {
            reason: PortReason::from_raw(reason),
            desc
        })),
        (any::<u32>(), any::<u16>(), actions(), bytes(128)).prop_map(
            |(buffer_id, in_port, actions, data)| Message::PacketOut(PacketOut {
                buffer_id,
                in_port,
                actions,
                data,
            })
        ),
        flow_mod().prop_map(Message::FlowMod),
        (
            any::<u16>(),
            mac(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>()
        )
            .prop_map(
                |(port_no, hw_addr, config, mask, advertise)| Message::PortMod(PortMod {
                    port_no,
                    hw_addr,
                    config,
                    mask,
                    advertise,
                })
            ),
        stats_request().prop_map(Message::StatsRequest),
        stats_reply().prop_map(Message::StatsReply),
        Just(Message::BarrierRequest),
        Just(Message::BarrierReply),
        any::<u16>()
            .prop_map(|port| Message::QueueGetConfigRequest(QueueGetConfigRequest { port })),
        queue_reply().prop_map(Message::QueueGetConfigReply),
        (22..=255u8, bytes(64)).prop_map(|(msg_type, body)| Message::Unknown { msg_type, body }),
    ]
}

proptest! {
    #[test]
    fn decode_of_encode_is_identity(m in message(), xid in any::<u32>()) {
        let m = crate::Message::V10(m);
        let bytes = m.to_bytes(xid).unwrap();
        prop_assert_eq!(crate::Message::decode(&bytes).unwrap(), (xid, m.clone()));
        let json = serde_json::to_string(&m).unwrap();
        let back: crate::Message = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(back, m);
    }

    #[test]
    fn no_bytes_make_the_decoder_panic(msg_type in 0..24u8, body in bytes(200)) {
        let len = (8 + body.len()) as u16;
        let mut frame = vec![1, msg_type, (len >> 8) as u8, len as u8, 0, 0, 0, 0];
        frame.extend(body);
        if let Ok((xid, m)) = crate::Message::decode(&frame) {
            // Whatever decodes re-encodes to a message of the same length (padding may
            // come back as zeros).
            prop_assert_eq!(m.to_bytes(xid).unwrap().len(), frame.len());
        }
    }
}
