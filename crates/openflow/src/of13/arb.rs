//! proptest strategies for the 1.3 building blocks and messages, shared by the
//! property tests of every 1.3 module: each generates only values that encode (widths
//! respected, lengths within their fields), so `parse(emit(x)) == x` must hold.

use std::net::{Ipv4Addr, Ipv6Addr};

use proptest::collection::vec;
use proptest::prelude::*;

use crate::common::{ErrorBody, Hello, QueueProperty, SwitchConfig};
use crate::of13::action::Action;
use crate::of13::flow::{
    FlowMod, FlowModCommand, FlowRemoved, FlowRemovedReason, PacketIn, PacketInReason, PacketOut,
};
use crate::of13::group::{Bucket, GroupMod, GroupModCommand, GroupType};
use crate::of13::instruction::Instruction;
use crate::of13::meter::{MeterBand, MeterMod, MeterModCommand};
use crate::of13::oxm::{BasicOxm, Match, Oxm, OxmField, OxmValue, ValueKind};
use crate::of13::port::{Port, PortMod, PortReason, PortStatus};
use crate::of13::switch::{
    AsyncConfig, ControllerRole, Experimenter, FeaturesReply, PacketQueue, QueueGetConfigReply,
    QueueGetConfigRequest, Role, TableMod,
};
use crate::of13::Message;
use crate::types::{FixedStr, MacAddr};

pub fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..=max)
}

/// Bytes whose length keeps `fixed + len` a multiple of 8.
pub fn bytes_aligned(fixed: usize, max_words: usize) -> impl Strategy<Value = Vec<u8>> {
    (0..=max_words).prop_flat_map(move |w| {
        let len = 8 * w + (8 - fixed % 8) % 8;
        vec(any::<u8>(), len..=len)
    })
}

pub fn mac() -> impl Strategy<Value = MacAddr> {
    any::<[u8; 6]>().prop_map(MacAddr)
}

fn value(kind: ValueKind) -> BoxedStrategy<OxmValue> {
    match kind {
        ValueKind::Int(8) => any::<u64>().prop_map(OxmValue::Int).boxed(),
        ValueKind::Int(n) => (0..(1u64 << (8 * n))).prop_map(OxmValue::Int).boxed(),
        ValueKind::Mac => mac().prop_map(OxmValue::Mac).boxed(),
        ValueKind::Ipv4 => any::<u32>()
            .prop_map(|a| OxmValue::Ipv4(Ipv4Addr::from(a)))
            .boxed(),
        ValueKind::Ipv6 => any::<u128>()
            .prop_map(|a| OxmValue::Ipv6(Ipv6Addr::from(a)))
            .boxed(),
    }
}

/// Any basic field of 1.3, masked or not.
pub fn basic_oxm() -> impl Strategy<Value = Oxm> {
    (0u8..40).prop_flat_map(|f| {
        let field = OxmField::from_raw(f);
        let kind = field.kind().expect("0..40 are all known");
        (value(kind), proptest::option::of(value(kind)))
            .prop_map(move |(value, mask)| Oxm::Basic(BasicOxm { field, value, mask }))
    })
}

/// Any OXM: basic, experimenter, Nicira or an unknown basic field id.
pub fn oxm() -> impl Strategy<Value = Oxm> {
    prop_oneof![
        6 => basic_oxm(),
        1 => (0u8..128, any::<bool>(), any::<u32>(), bytes(20)).prop_map(
            |(field, hasmask, experimenter, data)| Oxm::Experimenter {
                field,
                hasmask,
                experimenter,
                data
            }
        ),
        1 => (0u16..2, 0u8..128, any::<bool>(), bytes(16)).prop_map(
            |(class, field, hasmask, payload)| Oxm::Raw {
                class,
                field,
                hasmask,
                payload
            }
        ),
        1 => (40u8..128, any::<bool>(), bytes(16)).prop_map(|(field, hasmask, payload)| {
            Oxm::Raw {
                class: 0x8000,
                field,
                hasmask,
                payload,
            }
        }),
    ]
}

pub fn match_() -> impl Strategy<Value = Match> {
    prop_oneof![
        8 => vec(oxm(), 0..8).prop_map(Match::Oxm),
        1 => (prop_oneof![Just(0u16), 2u16..], bytes(90))
            .prop_map(|(match_type, body)| Match::Other { match_type, body }),
    ]
}

pub fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        (any::<u32>(), any::<u16>()).prop_map(|(port, max_len)| Action::Output { port, max_len }),
        Just(Action::CopyTtlOut),
        Just(Action::CopyTtlIn),
        any::<u8>().prop_map(|mpls_ttl| Action::SetMplsTtl { mpls_ttl }),
        Just(Action::DecMplsTtl),
        any::<u16>().prop_map(|ethertype| Action::PushVlan { ethertype }),
        Just(Action::PopVlan),
        any::<u16>().prop_map(|ethertype| Action::PushMpls { ethertype }),
        any::<u16>().prop_map(|ethertype| Action::PopMpls { ethertype }),
        any::<u32>().prop_map(|queue_id| Action::SetQueue { queue_id }),
        any::<u32>().prop_map(|group_id| Action::Group { group_id }),
        any::<u8>().prop_map(|nw_ttl| Action::SetNwTtl { nw_ttl }),
        Just(Action::DecNwTtl),
        oxm().prop_map(|field| Action::SetField { field }),
        any::<u16>().prop_map(|ethertype| Action::PushPbb { ethertype }),
        Just(Action::PopPbb),
        (any::<u32>(), bytes_aligned(8, 3))
            .prop_map(|(experimenter, data)| Action::Experimenter { experimenter, data }),
        (28u16..0xffff, bytes_aligned(4, 3))
            .prop_map(|(action_type, body)| Action::Unknown { action_type, body }),
    ]
}

pub fn actions() -> impl Strategy<Value = Vec<Action>> {
    vec(action(), 0..6)
}

pub fn instruction() -> impl Strategy<Value = Instruction> {
    prop_oneof![
        any::<u8>().prop_map(|table_id| Instruction::GotoTable { table_id }),
        (any::<u64>(), any::<u64>()).prop_map(|(metadata, metadata_mask)| {
            Instruction::WriteMetadata {
                metadata,
                metadata_mask,
            }
        }),
        actions().prop_map(|actions| Instruction::WriteActions { actions }),
        actions().prop_map(|actions| Instruction::ApplyActions { actions }),
        Just(Instruction::ClearActions),
        any::<u32>().prop_map(|meter_id| Instruction::Meter { meter_id }),
        (any::<u32>(), bytes_aligned(8, 3))
            .prop_map(|(experimenter, data)| Instruction::Experimenter { experimenter, data }),
        (7u16..0xffff, bytes_aligned(4, 3)).prop_map(|(instruction_type, body)| {
            Instruction::Unknown {
                instruction_type,
                body,
            }
        }),
    ]
}

pub fn instructions() -> impl Strategy<Value = Vec<Instruction>> {
    vec(instruction(), 0..5)
}

pub fn bucket() -> impl Strategy<Value = Bucket> {
    (any::<u16>(), any::<u32>(), any::<u32>(), actions()).prop_map(
        |(weight, watch_port, watch_group, actions)| Bucket {
            weight,
            watch_port,
            watch_group,
            actions,
        },
    )
}

pub fn meter_band() -> impl Strategy<Value = MeterBand> {
    prop_oneof![
        (any::<u32>(), any::<u32>())
            .prop_map(|(rate, burst_size)| MeterBand::Drop { rate, burst_size }),
        (any::<u32>(), any::<u32>(), any::<u8>()).prop_map(|(rate, burst_size, prec_level)| {
            MeterBand::DscpRemark {
                rate,
                burst_size,
                prec_level,
            }
        }),
        (any::<u32>(), any::<u32>(), any::<u32>(), bytes(12)).prop_map(
            |(rate, burst_size, experimenter, data)| MeterBand::Experimenter {
                rate,
                burst_size,
                experimenter,
                data
            }
        ),
        (3u16..0xffff, any::<u32>(), any::<u32>(), bytes(12)).prop_map(
            |(band_type, rate, burst_size, body)| MeterBand::Unknown {
                band_type,
                rate,
                burst_size,
                body
            }
        ),
    ]
}

pub fn port() -> impl Strategy<Value = Port> {
    (any::<u32>(), mac(), any::<[u8; 16]>(), any::<[u32; 8]>()).prop_map(|(port_no, hw, n, v)| {
        Port {
            port_no,
            hw_addr: hw,
            name: FixedStr(n),
            config: v[0],
            state: v[1],
            curr: v[2],
            advertised: v[3],
            supported: v[4],
            peer: v[5],
            curr_speed: v[6],
            max_speed: v[7],
        }
    })
}

fn queue_property() -> impl Strategy<Value = QueueProperty> {
    prop_oneof![
        any::<u16>().prop_map(|rate| QueueProperty::MinRate { rate }),
        any::<u16>().prop_map(|rate| QueueProperty::MaxRate { rate }),
        (any::<u32>(), bytes(9))
            .prop_map(|(experimenter, data)| QueueProperty::Experimenter { experimenter, data }),
        (3u16..0xffff, bytes(12))
            .prop_map(|(prop_type, body)| QueueProperty::Unknown { prop_type, body }),
    ]
}

fn flow_mod() -> impl Strategy<Value = FlowMod> {
    (
        any::<[u64; 2]>(),
        any::<[u8; 2]>(),
        any::<[u16; 4]>(),
        any::<[u32; 3]>(),
        match_(),
        instructions(),
    )
        .prop_map(|(c, b, s, w, match_, instructions)| FlowMod {
            cookie: c[0],
            cookie_mask: c[1],
            table_id: b[0],
            command: FlowModCommand::from_raw(b[1]),
            idle_timeout: s[0],
            hard_timeout: s[1],
            priority: s[2],
            buffer_id: w[0],
            out_port: w[1],
            out_group: w[2],
            flags: s[3],
            match_,
            instructions,
        })
}

fn flow_removed() -> impl Strategy<Value = FlowRemoved> {
    (
        any::<[u64; 3]>(),
        any::<[u16; 3]>(),
        any::<[u8; 2]>(),
        any::<[u32; 2]>(),
        match_(),
    )
        .prop_map(|(l, s, b, w, match_)| FlowRemoved {
            cookie: l[0],
            priority: s[0],
            reason: FlowRemovedReason::from_raw(b[0]),
            table_id: b[1],
            duration_sec: w[0],
            duration_nsec: w[1],
            idle_timeout: s[1],
            hard_timeout: s[2],
            packet_count: l[1],
            byte_count: l[2],
            match_,
        })
}

fn packet_in() -> impl Strategy<Value = PacketIn> {
    (
        any::<u32>(),
        any::<u16>(),
        any::<[u8; 2]>(),
        any::<u64>(),
        match_(),
        bytes(80),
    )
        .prop_map(|(buffer_id, total_len, b, cookie, match_, data)| PacketIn {
            buffer_id,
            total_len,
            reason: PacketInReason::from_raw(b[0]),
            table_id: b[1],
            cookie,
            match_,
            data,
        })
}

fn packet_out() -> impl Strategy<Value = PacketOut> {
    (any::<u32>(), any::<u32>(), actions(), bytes(80)).prop_map(
        |(buffer_id, in_port, actions, data)| PacketOut {
            buffer_id,
            in_port,
            actions,
            data,
        },
    )
}

/// Any 1.3 message this crate's 1.3 modules define, multipart excepted (their own
/// property tests cover those).
pub fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        proptest::collection::vec(1u8..7, 1..4)
            .prop_map(|v| Message::Hello(Hello::with_versions(&v))),
        (any::<u16>(), any::<u16>(), bytes(20)).prop_map(|(t, code, data)| {
            Message::Error(if t == 0xffff {
                ErrorBody::Experimenter {
                    exp_type: code,
                    experimenter: 0,
                    data,
                }
            } else {
                ErrorBody::Standard {
                    err_type: t,
                    code,
                    data,
                }
            })
        }),
        bytes(20).prop_map(|data| Message::EchoRequest { data }),
        (any::<u32>(), any::<u32>(), bytes(20)).prop_map(|(experimenter, exp_type, data)| {
            Message::Experimenter(Experimenter {
                experimenter,
                exp_type,
                data,
            })
        }),
        Just(Message::FeaturesRequest),
        (any::<u64>(), any::<[u32; 3]>(), any::<[u8; 2]>()).prop_map(|(datapath_id, w, b)| {
            Message::FeaturesReply(FeaturesReply {
                datapath_id,
                n_buffers: w[0],
                n_tables: b[0],
                auxiliary_id: b[1],
                capabilities: w[1],
                reserved: w[2],
            })
        }),
        (any::<u16>(), any::<u16>()).prop_map(|(flags, miss_send_len)| {
            Message::SetConfig(SwitchConfig {
                flags,
                miss_send_len,
            })
        }),
        packet_in().prop_map(Message::PacketIn),
        flow_removed().prop_map(Message::FlowRemoved),
        (any::<u8>(), port()).prop_map(|(r, desc)| Message::PortStatus(PortStatus {
            reason: PortReason::from_raw(r),
            desc
        })),
        packet_out().prop_map(Message::PacketOut),
        flow_mod().prop_map(Message::FlowMod),
        (any::<u16>(), any::<u8>(), any::<u32>(), vec(bucket(), 0..4)).prop_map(
            |(c, t, group_id, buckets)| Message::GroupMod(GroupMod {
                command: GroupModCommand::from_raw(c),
                group_type: GroupType::from_raw(t),
                group_id,
                buckets,
            })
        ),
        (any::<u32>(), mac(), any::<[u32; 3]>()).prop_map(|(port_no, hw_addr, w)| {
            Message::PortMod(PortMod {
                port_no,
                hw_addr,
                config: w[0],
                mask: w[1],
                advertise: w[2],
            })
        }),
        (any::<u8>(), any::<u32>())
            .prop_map(|(table_id, config)| Message::TableMod(TableMod { table_id, config })),
        Just(Message::BarrierRequest),
        any::<u32>()
            .prop_map(|port| Message::QueueGetConfigRequest(QueueGetConfigRequest { port })),
        (
            any::<u32>(),
            vec(
                (any::<u32>(), any::<u32>(), vec(queue_property(), 0..4)).prop_map(
                    |(queue_id, port, properties)| PacketQueue {
                        queue_id,
                        port,
                        properties
                    }
                ),
                0..4
            )
        )
            .prop_map(
                |(port, queues)| Message::QueueGetConfigReply(QueueGetConfigReply { port, queues })
            ),
        (any::<u32>(), any::<u64>(), any::<bool>()).prop_map(|(r, generation_id, reply)| {
            let role = Role {
                role: ControllerRole::from_raw(r),
                generation_id,
            };
            if reply {
                Message::RoleReply(role)
            } else {
                Message::RoleRequest(role)
            }
        }),
        Just(Message::GetAsyncRequest),
        (any::<[u32; 6]>(), any::<bool>()).prop_map(|(w, set)| {
            let c = AsyncConfig {
                packet_in_mask: [w[0], w[1]],
                port_status_mask: [w[2], w[3]],
                flow_removed_mask: [w[4], w[5]],
            };
            if set {
                Message::SetAsync(c)
            } else {
                Message::GetAsyncReply(c)
            }
        }),
        (
            any::<u16>(),
            any::<u16>(),
            any::<u32>(),
            vec(meter_band(), 0..4)
        )
            .prop_map(|(c, flags, meter_id, bands)| Message::MeterMod(MeterMod {
                command: MeterModCommand::from_raw(c),
                flags,
                meter_id,
                bands,
            })),
        (30u8.., bytes(20)).prop_map(|(msg_type, body)| Message::Unknown { msg_type, body }),
    ]
}
