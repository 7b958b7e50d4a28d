//! Flows in `ovs-ofctl` syntax, both ways: [`parse_flow`] reads what `ovs-ofctl add-flow`
//! takes, [`parse_flow_entry`] what `ovs-ofctl dump-flows` prints, and `Display` on
//! [`Flow`] and [`FlowEntry`] writes the same syntax back. The parsed [`Flow`] is
//! version-neutral; [`Flow::to_message`] makes the FLOW_MOD for OpenFlow 1.0 or 1.3 (or
//! says what the version cannot express), and [`FlowEntry::from_message`] reads a 1.0 or
//! 1.3 flow stats reply back.
//!
//! ```
//! use openflow::ofctl::{parse_flow, FlowModCommand};
//! use openflow::Version;
//!
//! let flow = parse_flow("priority=100,ip,nw_dst=10.0.0.2,actions=output:2").unwrap();
//! assert_eq!(flow.to_string(), "priority=100,ip,nw_dst=10.0.0.2,actions=output:2");
//! let msg = flow.to_message(Version::V1_0, FlowModCommand::Add).unwrap();
//! let mut out = Vec::new();
//! msg.encode(7, &mut out).unwrap();
//!
//! let err = parse_flow("ip,nw_dst=10.0.0.300,actions=drop").unwrap_err();
//! assert_eq!(err.to_string(), r#"nw_dst=10.0.0.300: bad IPv4 address "10.0.0.300" (at byte 3)"#);
//! ```
//!
//! It lives in the codec crate, free of HTTP and of the controller, so that the REST API,
//! `pharos ctl` and the configuration file share one grammar.
//!
//! [`Flow`] sits beside [`crate::model`] rather than in it: the model is the apps' hot
//! path (`Copy`, borrowed actions, nothing allocated), while a [`Flow`] owns its actions
//! and holds everything a person can write or a switch can report, which the model does
//! not need: 1.3's instructions, arbitrary masks, set-field on every field, flags and
//! counters. An app's [`crate::model::FlowMod`] converts into a [`Flow`] (`Flow::from`),
//! so what an app installed can be shown in this syntax. [`Flow`] is also the REST API's
//! JSON form of a flow (serde).
//!
//! ## Layout
//!
//! ```text
//! flow    Flow, FlowMatch, FlowAction, FlowEntry: a flow as this syntax holds it
//! parse   the parser: flow keys and match fields, actions and instructions, values;
//!         ParseError, with the span of the token it is about
//! print   Display: the same syntax back, with names Open vSwitch accepts
//! wire    Flow to and from 1.0 and 1.3 messages, and from an app's model::FlowMod
//! text    a Flow in serde as its ovs-ofctl text
//! ```
//!
//! ## The grammar
//!
//! Fields and actions are those of `ovs-fields(7)` and `ovs-actions(7)` that OpenFlow 1.0
//! and 1.3 express, under their old and new names. Items are separated by commas or
//! white space; `actions=` comes last and takes the rest of the line.
//!
//! ```text
//! flow       table= priority= cookie=[/mask] idle_timeout= hard_timeout=
//!            send_flow_rem check_overlap reset_counts no_packet_counts no_byte_counts
//! shorthand  ip ipv6 arp rarp icmp icmp6 tcp tcp6 udp udp6 sctp sctp6
//! match      in_port  dl_src|eth_src[/mask]  dl_dst|eth_dst[/mask]  dl_type|eth_type
//!            dl_vlan (0xffff: untagged)  vlan_vid (OXM: 0x1000|vid, 0: untagged)
//!            vlan_tci (0x0000[/0x1fff]: untagged, 0x1000/0x1000: any tag)
//!            dl_vlan_pcp|vlan_pcp  nw_src|ip_src|ipv4_src[/len|/mask]  nw_dst|ip_dst|ipv4_dst
//!            nw_proto|ip_proto  nw_tos  ip_dscp  nw_ecn|ip_ecn  tp_src|tcp_src|udp_src|sctp_src
//!            tp_dst|...  icmp_type|icmpv4_type|icmpv6_type  icmp_code|...  arp_op  arp_spa
//!            arp_tpa  arp_sha  arp_tha  ipv6_src[/len|/mask]  ipv6_dst  ipv6_label|ipv6_flabel
//!            metadata[/mask]
//! actions    drop | output:PORT | PORT | in_port | flood | all | normal | local
//!            controller[:max_len] | controller(max_len=N) | enqueue:PORT:QUEUE | set_queue:Q
//!            mod_vlan_vid: mod_vlan_pcp: strip_vlan pop_vlan push_vlan:ETHERTYPE
//!            mod_dl_src: mod_dl_dst: mod_nw_src: mod_nw_dst: mod_nw_tos: mod_nw_ecn:
//!            mod_tp_src: mod_tp_dst: set_field:VALUE->FIELD group:ID dec_ttl
//!            instructions, in this order: meter:ID, the actions above (apply-actions),
//!            clear_actions, write_actions(ACTIONS), write_metadata:VALUE[/MASK], goto_table:N
//! ```
//!
//! As in the model ([`crate::model::Match`]), ARP's opcode and addresses are kept in
//! `ip_proto`/`ipv4_src`/`ipv4_dst` and ICMP's type and code in `tp_src`/`tp_dst`; the
//! printer gives them their own names (`arp_op`, `arp_spa`, `icmp_type`, ...).
//! Prerequisites are checked, as OpenFlow 1.3 §7.2.3.8 asks ("the prerequisite ... must
//! be specified"): `nw_dst` needs `ip` or `arp`, `tp_dst` a transport protocol; Open
//! vSwitch silently drops such a field, we refuse it and name it.
//!
//! Printing then parsing is the identity; the printer writes only names Open vSwitch
//! accepts, so what it prints can be given to `ovs-ofctl add-flow`.

mod flow;
mod parse;
mod print;
mod wire;

#[cfg(test)]
mod tests;

pub use crate::model::{FlowModCommand, PortNo};
pub use flow::{
    Flow, FlowAction, FlowCounters, FlowEntry, FlowFlags, FlowMatch, Masked, SetField, Transport,
    VlanMatch, ETH_ARP, ETH_IPV4, ETH_IPV6, ETH_RARP, PROTO_ICMP, PROTO_ICMPV6, PROTO_SCTP,
    PROTO_TCP, PROTO_UDP,
};
pub use parse::{parse_flow, parse_flow_entry, parse_match, ErrorKind, ParseError};
pub use wire::{actions_from_of13, FromWireError};

/// A [`Flow`] as its `ovs-ofctl` text in serde (configuration files, `{"flow": "..."}`
/// bodies): `#[serde(with = "openflow::ofctl::text")]`. A bad string fails with the
/// parser's message (token and byte offset).
///
/// ```
/// #[derive(Debug, serde::Deserialize)]
/// struct Static {
///     #[serde(with = "openflow::ofctl::text")]
///     flow: openflow::ofctl::Flow,
/// }
/// let s: Static = serde_json::from_str(r#"{"flow": "ip,actions=drop"}"#).unwrap();
/// assert_eq!(s.flow.to_string(), "ip,actions=drop");
/// let bad = serde_json::from_str::<Static>(r#"{"flow": "ip,nw_dst=1.2.3,actions=drop"}"#);
/// assert!(bad.unwrap_err().to_string().contains(r#"nw_dst=1.2.3: bad IPv4 address "1.2.3" (at byte 3)"#));
/// ```
pub mod text {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::{parse_flow, Flow};

    pub fn serialize<S: Serializer>(flow: &Flow, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(flow)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Flow, D::Error> {
        let s = String::deserialize(d)?;
        parse_flow(&s).map_err(serde::de::Error::custom)
    }
}
