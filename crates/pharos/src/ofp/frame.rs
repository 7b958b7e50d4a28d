//! The Ethernet frame inside a PACKET_IN or PACKET_OUT, in one line of `ovs-ofctl`'s
//! flow syntax (`arp,dl_src=...,arp_op=1`), read with the `packet` crate. Text output
//! only; a frame cut short (a PACKET_IN carries the first `miss_send_len` bytes) shows
//! what was there and says where it stops.

use std::fmt::Write as _;

use packet::flow::{IpFrag, L4Key};
use packet::lldp::{ChassisIdSubtype, LldpPdu, PortIdSubtype};
use packet::FlowKey;

/// EtherTypes this summary names.
const ETH_ARP: u16 = 0x0806;
const ETH_IPV4: u16 = 0x0800;
const ETH_IPV6: u16 = 0x86dd;

/// `frame` as one line, or why it cannot be read.
pub fn summary(frame: &[u8]) -> String {
    let key = match FlowKey::extract(frame) {
        Ok(k) => k,
        Err(e) => return format!("(not an Ethernet frame: {e})"),
    };
    let mut parts: Vec<String> = Vec::new();
    let proto = match (key.eth_type, key.l4) {
        (ETH_ARP, _) => "arp".to_string(),
        (ETH_IPV4, Some(L4Key::Tcp { .. })) => "tcp".into(),
        (ETH_IPV4, Some(L4Key::Udp { .. })) => "udp".into(),
        (ETH_IPV4, Some(L4Key::Sctp { .. })) => "sctp".into(),
        (ETH_IPV4, Some(L4Key::Icmpv4 { .. })) => "icmp".into(),
        (ETH_IPV4, _) => "ip".into(),
        (ETH_IPV6, Some(L4Key::Tcp { .. })) => "tcp6".into(),
        (ETH_IPV6, Some(L4Key::Udp { .. })) => "udp6".into(),
        (ETH_IPV6, Some(L4Key::Sctp { .. })) => "sctp6".into(),
        (ETH_IPV6, Some(L4Key::Icmpv6 { .. })) => "icmp6".into(),
        (ETH_IPV6, _) => "ipv6".into(),
        (packet::lldp::ETHERTYPE, _) => "lldp".into(),
        (t, _) => format!("dl_type={t:#06x}"),
    };
    parts.push(proto);
    if let Some(v) = key.vlan {
        parts.push(format!("dl_vlan={},dl_vlan_pcp={}", v.vid, v.pcp));
    }
    parts.push(format!("dl_src={},dl_dst={}", key.eth_src, key.eth_dst));
    if let Some(m) = key.mpls {
        parts.push(format!(
            "mpls_label={},mpls_tc={},mpls_ttl={},mpls_bos={}",
            m.label,
            m.tc,
            m.ttl,
            u8::from(m.bos)
        ));
    }
    if let Some(a) = key.arp {
        parts.push(format!(
            "arp_spa={},arp_tpa={},arp_op={},arp_sha={},arp_tha={}",
            a.spa, a.tpa, a.op, a.sha, a.tha
        ));
    }
    if let Some(ip) = key.ipv4 {
        parts.push(format!("nw_src={},nw_dst={}", ip.src, ip.dst));
    }
    if let Some(ip) = key.ipv6 {
        parts.push(format!(
            "ipv6_src={},ipv6_dst={},ipv6_label={:#07x}",
            ip.src, ip.dst, ip.flow_label
        ));
    }
    if let Some(ip) = key.ip {
        if key.l4.is_none() {
            parts.push(format!("nw_proto={}", ip.proto));
        }
        parts.push(format!(
            "nw_tos={},nw_ecn={},nw_ttl={}",
            ip.dscp << 2,
            ip.ecn,
            ip.ttl
        ));
        match ip.frag {
            IpFrag::No => {}
            IpFrag::First => parts.push("nw_frag=first".into()),
            IpFrag::Later => parts.push("nw_frag=later".into()),
        }
    }
    match key.l4 {
        Some(L4Key::Tcp { src, dst, flags }) => {
            parts.push(format!("tp_src={src},tp_dst={dst}"));
            parts.push(format!("tcp_flags={}", tcp_flags(flags)));
        }
        Some(L4Key::Udp { src, dst } | L4Key::Sctp { src, dst }) => {
            parts.push(format!("tp_src={src},tp_dst={dst}"));
        }
        Some(L4Key::Icmpv4 { icmp_type, code }) => {
            parts.push(format!("icmp_type={icmp_type},icmp_code={code}"));
        }
        Some(L4Key::Icmpv6 { icmp_type, code }) => {
            parts.push(format!("icmp_type={icmp_type},icmp_code={code}"));
        }
        None => {}
    }
    if let Some(nd) = key.nd {
        parts.push(format!("nd_target={}", nd.target));
        if let Some(sll) = nd.sll {
            parts.push(format!("nd_sll={sll}"));
        }
        if let Some(tll) = nd.tll {
            parts.push(format!("nd_tll={tll}"));
        }
    }
    if key.eth_type == packet::lldp::ETHERTYPE {
        parts.push(lldp(frame.get(key.l3_offset..).unwrap_or_default()));
    }
    let mut line = parts.join(",");
    if let Some(e) = key.error {
        let _ = write!(line, " (cut short: {e})");
    }
    line
}

fn tcp_flags(flags: u16) -> String {
    const NAMES: [&str; 9] = ["fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr", "ns"];
    let set: Vec<&str> = NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| flags & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect();
    if set.is_empty() {
        "0".into()
    } else {
        set.join("|")
    }
}

/// The LLDP PDU's chassis id, port id and TTL, or why it does not validate.
fn lldp(pdu: &[u8]) -> String {
    match LldpPdu::new_checked(pdu) {
        Ok(p) => {
            let chassis = p.chassis_id();
            let chassis_text = match chassis.mac() {
                Some(mac) => format!("mac:{mac}"),
                None => format!(
                    "{}:{}",
                    chassis_subtype(chassis.subtype),
                    id_text(chassis.id)
                ),
            };
            let port = p.port_id();
            let port_text = match port.mac() {
                Some(mac) => format!("mac:{mac}"),
                None => format!("{}:{}", port_subtype(port.subtype), id_text(port.id)),
            };
            format!(
                "lldp_chassis_id={chassis_text},lldp_port_id={port_text},lldp_ttl={}",
                p.ttl()
            )
        }
        Err(e) => format!("lldp_invalid=\"{e}\""),
    }
}

fn chassis_subtype(s: ChassisIdSubtype) -> String {
    match s {
        ChassisIdSubtype::LocallyAssigned => "local".into(),
        ChassisIdSubtype::InterfaceName => "ifname".into(),
        ChassisIdSubtype::MacAddress => "mac".into(),
        other => format!("subtype{}", u8::from(other)),
    }
}

fn port_subtype(s: PortIdSubtype) -> String {
    match s {
        PortIdSubtype::LocallyAssigned => "local".into(),
        PortIdSubtype::InterfaceName => "ifname".into(),
        PortIdSubtype::MacAddress => "mac".into(),
        other => format!("subtype{}", u8::from(other)),
    }
}

/// An id as text when it is printable ASCII, else as hex.
fn id_text(id: &[u8]) -> String {
    if !id.is_empty() && id.iter().all(|c| c.is_ascii_graphic()) {
        String::from_utf8_lossy(id).into_owned()
    } else {
        format!("0x{}", openflow::types::to_hex(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        openflow::types::from_hex(s).unwrap()
    }

    #[test]
    fn arp_request() {
        // The ARP request of the 1.3 PACKET_IN vector.
        let f = hex(
            "fffffffffffff20ba47df8ea08060001080006040001f20ba47df8ea0a0000010000000000000a000003",
        );
        assert_eq!(
            summary(&f),
            "arp,dl_src=f2:0b:a4:7d:f8:ea,dl_dst=ff:ff:ff:ff:ff:ff,arp_spa=10.0.0.1,arp_tpa=10.0.0.3,arp_op=1,arp_sha=f2:0b:a4:7d:f8:ea,arp_tha=00:00:00:00:00:00"
        );
    }

    #[test]
    fn icmp_echo_and_a_frame_cut_short() {
        // The ping of the 1.3 PACKET_OUT vector.
        let f = hex(concat!(
            "f20ba4d03f70f20ba47df8ea080045000054f81a0000ff01af8b0a0000010a00",
            "000208000208f760000031d6020000000000ab8d2d3100000000101112131415",
            "161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f000000000000",
            "0000"
        ));
        let s = summary(&f);
        assert!(
            s.starts_with("icmp,dl_src=f2:0b:a4:7d:f8:ea,dl_dst=f2:0b:a4:d0:3f:70,nw_src=10.0.0.1,nw_dst=10.0.0.2,nw_tos=0,nw_ecn=0,nw_ttl=255,icmp_type=8,icmp_code=0"),
            "{s}"
        );
        // Cut inside the IPv4 header.
        let s = summary(&f[..20]);
        assert!(
            s.starts_with("ip,dl_src=") && s.contains("(cut short: "),
            "{s}"
        );
        assert!(summary(&f[..10]).starts_with("(not an Ethernet frame"));
    }

    #[test]
    fn tcp_over_ipv6_and_lldp() {
        use packet::ipv6::Ipv6Repr;
        let mut f = hex("00000000000200000000000186dd");
        let ip = Ipv6Repr {
            src_addr: "2001:db8::1".parse().unwrap(),
            dst_addr: "2001:db8::2".parse().unwrap(),
            next_header: packet::ip::IpProtocol::Tcp,
            payload_len: 20,
            hop_limit: 64,
            traffic_class: 0,
            flow_label: 0,
        };
        let n = f.len();
        f.resize(n + ip.buffer_len(), 0);
        ip.emit(&mut f[n..]).unwrap();
        // A bare SYN from port 40000 to 6653 (checksum not checked here).
        f.extend_from_slice(&hex("9c4019fd000000010000000050020000 00000000"
            .replace(' ', "")
            .as_str()));
        let s = summary(&f);
        assert!(s.starts_with("tcp6,dl_src=00:00:00:00:00:01,dl_dst=00:00:00:00:00:02,ipv6_src=2001:db8::1,ipv6_dst=2001:db8::2"), "{s}");
        assert!(s.ends_with("tp_src=40000,tp_dst=6653,tcp_flags=syn"), "{s}");
        // LLDP: chassis id "dpid:1" (locally assigned), port id 2 (locally assigned), TTL 120.
        let mut f = hex("0180c200000e00000000000188cc");
        f.extend_from_slice(&hex("0207 07 647069643a31 0402 07 32 0602 0078 0000"
            .replace(' ', "")
            .as_str()));
        let s = summary(&f);
        assert_eq!(
            s,
            "lldp,dl_src=00:00:00:00:00:01,dl_dst=01:80:c2:00:00:0e,lldp_chassis_id=local:dpid:1,lldp_port_id=local:2,lldp_ttl=120"
        );
    }
}
