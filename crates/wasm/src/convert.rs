//! The WIT world's records to and from the controller's version-neutral model.

use std::net::Ipv4Addr;

use controller::app::{Dpid, PacketIn, PortInfo, PortReason};
use openflow::model::{self, Ipv4Prefix, PortNo, Vlan};
use openflow::types::MacAddr;
use openflow::Version;

use crate::bindings::pharos::app::types as wit;

/// The low 48 bits of a u64 as a MAC address.
pub(crate) fn mac(v: u64) -> MacAddr {
    let b = v.to_be_bytes();
    MacAddr([b[2], b[3], b[4], b[5], b[6], b[7]])
}

fn mac_u64(b: &[u8]) -> u64 {
    b.iter().fold(0, |acc, &x| acc << 8 | u64::from(x))
}

pub(crate) fn switch(dpid: Dpid, version: Version) -> wit::Switch {
    wit::Switch {
        dpid: dpid.0,
        version: match version {
            Version::V1_0 => wit::Version::V10,
            Version::V1_3 => wit::Version::V13,
        },
    }
}

pub(crate) fn port(p: wit::Port) -> PortNo {
    match p {
        wit::Port::Physical(n) => PortNo::Physical(n),
        wit::Port::InPort => PortNo::InPort,
        wit::Port::Table => PortNo::Table,
        wit::Port::Normal => PortNo::Normal,
        wit::Port::Flood => PortNo::Flood,
        wit::Port::All => PortNo::All,
        wit::Port::Controller => PortNo::Controller,
        wit::Port::Local => PortNo::Local,
        wit::Port::Any => PortNo::Any,
    }
}

pub(crate) fn action(a: &wit::Action) -> model::Action {
    use model::Action as M;
    match *a {
        wit::Action::Output(p) => M::output(port(p)),
        wit::Action::SetVlanVid(vid) => M::SetVlanVid { vid },
        wit::Action::PopVlan => M::PopVlan,
        wit::Action::SetEthSrc(a) => M::SetEthSrc { addr: mac(a) },
        wit::Action::SetEthDst(a) => M::SetEthDst { addr: mac(a) },
        wit::Action::SetIpv4Src(a) => M::SetIpv4Src {
            addr: Ipv4Addr::from(a),
        },
        wit::Action::SetIpv4Dst(a) => M::SetIpv4Dst {
            addr: Ipv4Addr::from(a),
        },
        wit::Action::SetTcpSrc(port) => M::SetTcpSrc { port },
        wit::Action::SetTcpDst(port) => M::SetTcpDst { port },
        wit::Action::SetUdpSrc(port) => M::SetUdpSrc { port },
        wit::Action::SetUdpDst(port) => M::SetUdpDst { port },
        wit::Action::Enqueue((p, queue_id)) => M::Enqueue {
            port: port(p),
            queue_id,
        },
    }
}

pub(crate) fn prefix(p: wit::Ipv4Prefix) -> Ipv4Prefix {
    Ipv4Prefix {
        addr: Ipv4Addr::from(p.addr),
        len: p.len.min(32),
    }
}

pub(crate) fn matching(m: &wit::Match) -> model::Match {
    model::Match {
        in_port: m.in_port,
        eth_src: m.eth_src.map(mac),
        eth_dst: m.eth_dst.map(mac),
        eth_type: m.eth_type,
        vlan: m.vlan_vid.map(vlan),
        ip_proto: m.ip_proto,
        ipv4_src: m.ipv4_src.map(prefix),
        ipv4_dst: m.ipv4_dst.map(prefix),
        tp_src: m.tp_src,
        tp_dst: m.tp_dst,
        ..model::Match::default()
    }
}

/// A `vlan-vid` to match: 0xffff matches untagged packets only.
pub(crate) fn vlan(v: u16) -> Vlan {
    match v {
        0xffff => Vlan::Untagged,
        id => Vlan::Id(id & 0x0fff),
    }
}

/// The cookie bits an app may set: the top 16 name the app and are the core's.
pub(crate) const APP_COOKIE_BITS: u64 = (1 << 48) - 1;

/// A FLOW_MOD without its actions (they are added where it is sent).
pub(crate) fn flow_mod(fm: &wit::FlowMod) -> model::FlowMod<'static> {
    let command = match fm.command {
        wit::FlowModCommand::Add => model::FlowModCommand::Add,
        wit::FlowModCommand::Modify => model::FlowModCommand::Modify,
        wit::FlowModCommand::ModifyStrict => model::FlowModCommand::ModifyStrict,
        wit::FlowModCommand::Delete => model::FlowModCommand::Delete,
        wit::FlowModCommand::DeleteStrict => model::FlowModCommand::DeleteStrict,
    };
    let mut out = model::FlowMod::add(matching(&fm.match_), &[])
        .cookie(fm.cookie & APP_COOKIE_BITS)
        .priority(fm.priority)
        .idle_timeout(fm.idle_timeout)
        .hard_timeout(fm.hard_timeout)
        .buffer_id(fm.buffer_id)
        .table_id(fm.table_id);
    out.command = command;
    out.flags.send_flow_removed = fm.send_flow_removed;
    out
}

/// The source and destination addresses and the EtherType of an Ethernet frame (the
/// one after any 802.1Q / 802.1ad tags); zeros when the frame is shorter than a header.
fn ethernet(data: &[u8]) -> (u64, u64, u16) {
    if data.len() < 14 {
        return (0, 0, 0);
    }
    let (dst, src) = (mac_u64(&data[0..6]), mac_u64(&data[6..12]));
    let mut at = 12;
    let mut eth_type = u16::from_be_bytes([data[at], data[at + 1]]);
    while matches!(eth_type, 0x8100 | 0x88a8) && data.len() >= at + 6 {
        at += 4;
        eth_type = u16::from_be_bytes([data[at], data[at + 1]]);
    }
    (src, dst, eth_type)
}

/// A PACKET_IN's fields, its Ethernet header read.
pub(crate) fn packet_in(p: &PacketIn) -> wit::PacketIn {
    let data = p.data();
    let (eth_src, eth_dst, eth_type) = ethernet(data);
    wit::PacketIn {
        in_port: p.in_port(),
        buffer_id: p.buffer_id(),
        total_len: p.total_len(),
        reason: p.reason(),
        table_id: p.table_id().unwrap_or(0),
        cookie: p.cookie().unwrap_or(0),
        eth_src,
        eth_dst,
        eth_type,
        data_len: data.len() as u32,
    }
}

pub(crate) fn port_info(p: &PortInfo) -> wit::PortInfo {
    wit::PortInfo {
        port_no: p.port_no,
        hw_addr: p.hw_addr.to_u64(),
        name: p.name.clone(),
        up: p.is_up(),
    }
}

pub(crate) fn port_reason(r: PortReason) -> wit::PortReason {
    match r {
        PortReason::Add => wit::PortReason::Add,
        PortReason::Delete => wit::PortReason::Delete,
        PortReason::Modify | PortReason::Unknown(_) => wit::PortReason::Modify,
    }
}

pub(crate) fn flow_removed(r: &model::FlowRemoved) -> wit::FlowRemoved {
    wit::FlowRemoved {
        cookie: r.cookie & APP_COOKIE_BITS,
        priority: r.priority,
        reason: r.reason.to_raw(),
        table_id: r.table_id,
        duration_ms: r.duration.as_millis() as u64,
        packet_count: r.packet_count,
        byte_count: r.byte_count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_addresses_are_the_low_48_bits() {
        let m = MacAddr([0x0e, 1, 2, 3, 4, 5]);
        assert_eq!(mac(m.to_u64()), m);
        assert_eq!(mac(0xffff_0e01_0203_0405), m, "the top 16 bits are ignored");
        assert_eq!(mac_u64(&m.0), 0x0e01_0203_0405);
    }

    #[test]
    fn the_ethertype_is_the_one_after_the_vlan_tags() {
        let mut frame = vec![0xff; 6];
        frame.extend_from_slice(&[0x0e, 0, 0, 0, 0, 1]);
        frame.extend_from_slice(&[0x08, 0x06]);
        frame.resize(60, 0);
        assert_eq!(
            ethernet(&frame),
            (0x0e00_0000_0001, 0xffff_ffff_ffff, 0x0806)
        );
        frame.splice(12..12, [0x88, 0xa8, 0, 10, 0x81, 0x00, 0, 20]);
        assert_eq!(
            ethernet(&frame).2,
            0x0806,
            "after an 802.1ad and an 802.1Q tag"
        );
        assert_eq!(ethernet(&frame[..13]), (0, 0, 0), "shorter than a header");
        // A tag cut short: the tag's type is all there is.
        assert_eq!(ethernet(&frame[..17]).2, 0x88a8);
    }

    #[test]
    fn cookies_keep_the_apps_48_bits_only() {
        let fm = wit::FlowMod {
            command: wit::FlowModCommand::Add,
            match_: wit::Match {
                in_port: Some(1),
                eth_src: None,
                eth_dst: Some(0x0e00_0000_0002),
                eth_type: None,
                vlan_vid: Some(0xffff),
                ip_proto: None,
                ipv4_src: Some(wit::Ipv4Prefix {
                    addr: 0x0a00_0001,
                    len: 40,
                }),
                ipv4_dst: None,
                tp_src: None,
                tp_dst: None,
            },
            actions: Vec::new(),
            cookie: 0xabcd_0000_0000_0042,
            priority: 7,
            idle_timeout: 5,
            hard_timeout: 0,
            buffer_id: Some(9),
            table_id: 0,
            send_flow_removed: true,
        };
        let m = flow_mod(&fm);
        assert_eq!(m.cookie, 0x42, "the top 16 bits are the core's");
        assert_eq!((m.priority, m.idle_timeout, m.buffer_id), (7, 5, Some(9)));
        assert!(m.flags.send_flow_removed);
        assert_eq!(m.matching.vlan, Some(Vlan::Untagged));
        let v4 = m.matching.ipv4_src.unwrap();
        assert_eq!((v4.addr, v4.len), (Ipv4Addr::new(10, 0, 0, 1), 32));
    }
}
