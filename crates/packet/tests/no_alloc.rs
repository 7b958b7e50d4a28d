//! The hot path allocates nothing: the Ethernet view's getters, FlowKey extraction of
//! every kind of frame, the LLDP view a topology app reads, and emitting frames into a
//! buffer that has room. allocation-counter's counting allocator proves it. The frames are built
//! with the crate's own reprs, which doubles as a test of building a frame layer by
//! layer.

use std::net::{Ipv4Addr, Ipv6Addr};

use openflow::MacAddr;
use packet::arp::{ArpOperation, ArpRepr};
use packet::checksum::PseudoHeader;
use packet::ethernet::{EtherType, EthernetFrame, EthernetRepr};
use packet::icmpv6::Icmpv6Repr;
use packet::ip::IpProtocol;
use packet::ipv4::Ipv4Repr;
use packet::ipv6::Ipv6Repr;
use packet::lldp::{ChassisId, ChassisIdSubtype, LldpPdu, LldpRepr, PortId, PortIdSubtype};
use packet::tcp::{TcpFlags, TcpPacket, TcpRepr};
use packet::vlan::VlanRepr;
use packet::FlowKey;

const MAC1: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);
const MAC2: MacAddr = MacAddr([2, 0, 0, 0, 0, 2]);
const IP1: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const IP2: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const IP6_1: Ipv6Addr = Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 1);
const IP6_2: Ipv6Addr = Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 2);

/// A VLAN-tagged TCP segment over IPv4, written into `buf`; returns its length.
fn tagged_tcp(buf: &mut [u8]) -> usize {
    let payload = b"GET / HTTP/1.1\r\n\r\n";
    let eth = EthernetRepr {
        dst_addr: MAC2,
        src_addr: MAC1,
        ethertype: EtherType::Vlan,
    };
    let tag = VlanRepr {
        pcp: 3,
        dei: false,
        vid: 42,
        ethertype: EtherType::Ipv4,
    };
    let tcp = TcpRepr {
        src_port: 40000,
        dst_port: 80,
        seq_number: 1,
        ack_number: 1,
        flags: TcpFlags(TcpFlags::ACK | TcpFlags::PSH),
        window_len: 1024,
        urgent_at: 0,
        options: &[1, 1, 1, 1],
        payload,
    };
    let ip = Ipv4Repr {
        src_addr: IP1,
        dst_addr: IP2,
        protocol: IpProtocol::Tcp,
        payload_len: tcp.buffer_len(),
        ttl: 64,
        dscp: 0,
        ecn: 0,
        ident: 7,
        dont_frag: true,
        more_frags: false,
        frag_offset: 0,
        options: &[],
    };
    let mut at = eth.emit(buf).unwrap();
    at += tag.emit(&mut buf[at..]).unwrap();
    at += ip.emit(&mut buf[at..]).unwrap();
    at += tcp
        .emit(&PseudoHeader::V4 { src: IP1, dst: IP2 }, &mut buf[at..])
        .unwrap();
    at
}

/// An IPv6 neighbor solicitation, written into `buf`; returns its length.
fn neighbor_solicitation(buf: &mut [u8]) -> usize {
    let eth = EthernetRepr {
        dst_addr: MAC2,
        src_addr: MAC1,
        ethertype: EtherType::Ipv6,
    };
    let ns = Icmpv6Repr::NeighborSolicit {
        target_addr: IP6_2,
        lladdr: Some(MAC1),
    };
    let ip = Ipv6Repr {
        src_addr: IP6_1,
        dst_addr: IP6_2,
        next_header: IpProtocol::Icmpv6,
        payload_len: ns.buffer_len(),
        hop_limit: 255,
        traffic_class: 0,
        flow_label: 0,
    };
    let mut at = eth.emit(buf).unwrap();
    at += ip.emit(&mut buf[at..]).unwrap();
    at += ns.emit(IP6_1, IP6_2, &mut buf[at..]).unwrap();
    at
}

fn arp_reply(buf: &mut [u8]) -> usize {
    let eth = EthernetRepr {
        dst_addr: MAC2,
        src_addr: MAC1,
        ethertype: EtherType::Arp,
    };
    let arp = ArpRepr {
        operation: ArpOperation::Reply,
        source_hardware_addr: MAC1,
        source_protocol_addr: IP1,
        target_hardware_addr: MAC2,
        target_protocol_addr: IP2,
    };
    let at = eth.emit(buf).unwrap();
    at + arp.emit(&mut buf[at..]).unwrap()
}

fn lldp(buf: &mut [u8]) -> usize {
    let eth = EthernetRepr {
        dst_addr: packet::lldp::MULTICAST_NEAREST_BRIDGE,
        src_addr: MAC1,
        ethertype: EtherType::Lldp,
    };
    let pdu = LldpRepr::new(
        ChassisId {
            subtype: ChassisIdSubtype::LocallyAssigned,
            id: b"dpid:0000000000000001",
        },
        PortId {
            subtype: PortIdSubtype::PortComponent,
            id: &[0, 0, 0, 7],
        },
        120,
    );
    let at = eth.emit(buf).unwrap();
    at + pdu.emit(&mut buf[at..]).unwrap()
}

#[test]
fn building_and_reading_frames_allocates_nothing() {
    let mut bufs = [[0u8; 128]; 4];
    let mut seen = 0u64;
    let mut lens = [0; 4];
    let info = allocation_counter::measure(|| {
        let [a, b, c, d] = &mut bufs;
        lens = [
            tagged_tcp(a),
            neighbor_solicitation(b),
            arp_reply(c),
            lldp(d),
        ];
        for (buf, len) in bufs.iter().zip(lens) {
            let frame = &buf[..len];
            let eth = EthernetFrame::new_checked(frame).unwrap();
            seen +=
                eth.src_addr().to_u64() + eth.dst_addr().to_u64() + u64::from(eth.ethertype_raw());
            let key = FlowKey::extract(frame).unwrap();
            assert_eq!(key.error, None);
            seen += u64::from(key.tp_dst().unwrap_or(0));
        }
        let pdu = LldpPdu::new_checked(&bufs[3][14..lens[3]]).unwrap();
        seen +=
            u64::from(pdu.ttl()) + pdu.chassis_id().id.len() as u64 + pdu.port_id().id.len() as u64;
        let tcp = &bufs[0][14 + 4 + 20..lens[0]];
        let t = TcpPacket::new_checked(tcp).unwrap();
        seen += t.option_iter().count() as u64;
    });
    assert_eq!(info.count_total, 0, "the hot path allocated");
    assert!(seen > 0);
    let tcp = &bufs[0][14 + 4 + 20..lens[0]];
    let t = TcpPacket::new_checked(tcp).unwrap();

    // And what was built reads back as built.
    let k = FlowKey::extract(&bufs[0][..lens[0]]).unwrap();
    assert_eq!(k.vlan.map(|v| (v.vid, v.pcp)), Some((42, 3)));
    assert_eq!((k.tp_src(), k.tp_dst()), (Some(40000), Some(80)));
    assert!(t.verify_checksum(&PseudoHeader::V4 { src: IP1, dst: IP2 }));
    let k = FlowKey::extract(&bufs[1][..lens[1]]).unwrap();
    assert_eq!(k.nd.map(|n| (n.target, n.sll)), Some((IP6_2, Some(MAC1))));
    let k = FlowKey::extract(&bufs[2][..lens[2]]).unwrap();
    assert_eq!(k.arp.map(|a| a.op), Some(2));
}
