//! The oracle the `parse` fuzz target (`crates/packet/fuzz`) runs, kept here so that
//! it compiles and runs with the ordinary tests too. Not part of the API.
//!
//! On any bytes: nothing panics; every view `new_checked` accepts can have all its
//! getters called; every repr that parses emits, and parsing the emitted bytes gives
//! the same repr; the OpenFlow matches encode and decode to themselves.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::arp::{ArpPacket, ArpRepr};
use crate::checksum::PseudoHeader;
use crate::ethernet::{EthernetFrame, EthernetRepr};
use crate::icmpv4::{Icmpv4Packet, Icmpv4Repr};
use crate::icmpv6::{Icmpv6Packet, Icmpv6Repr};
use crate::ip::IpProtocol;
use crate::ipv4::{Ipv4Packet, Ipv4Repr};
use crate::ipv6::{Ipv6Packet, Ipv6Repr};
use crate::ipv6ext::{Ipv6ExtHeader, Ipv6ExtHeaderRepr, Ipv6ExtHeaders};
use crate::lldp::{LldpPdu, LldpRepr};
use crate::mpls::{MplsEntry, MplsRepr};
use crate::tcp::{TcpPacket, TcpRepr};
use crate::udp::{UdpPacket, UdpRepr};
use crate::vlan::{VlanRepr, VlanTag};
use crate::FlowKey;

const SRC6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1);
const DST6: Ipv6Addr = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2);
const V4: PseudoHeader = PseudoHeader::V4 {
    src: Ipv4Addr::new(192, 0, 2, 1),
    dst: Ipv4Addr::new(192, 0, 2, 2),
};

/// Emits `$repr` into a fresh buffer with `$emit`, parses it back with `$parse`, and
/// asserts the result equals `$repr`.
macro_rules! round_trip {
    ($repr:expr, $len:expr, |$buf:ident| $emit:expr, |$bytes:ident| $parse:expr) => {{
        let repr = $repr;
        let mut $buf = vec![0u8; $len];
        let n = $emit.expect("a parsed repr must emit");
        assert_eq!(
            n,
            $buf.len(),
            "emit wrote a different length than buffer_len"
        );
        let $bytes = &$buf[..];
        assert_eq!($parse, repr, "parse(emit(r)) != r");
    }};
}

/// Runs every oracle on `data`, as a frame and as each protocol's header.
pub fn parse(data: &[u8]) {
    let key = FlowKey::extract(data);
    let m = crate::oxm_match(data, 1);
    let mut out = Vec::new();
    m.emit(&mut out)
        .expect("an extracted OXM match must encode");
    let _ = crate::of10_match(data, 1);
    let mut starts = vec![0];
    if let Ok(k) = key {
        starts.push(k.l3_offset);
        starts.extend(k.l4_offset);
    }
    for s in starts {
        if let Some(b) = data.get(s..) {
            layers(b);
        }
    }
}

/// Every view and repr over `b`.
fn layers(b: &[u8]) {
    if let Ok(f) = EthernetFrame::new_checked(b) {
        let r = EthernetRepr::parse(&f).unwrap();
        round_trip!(r, r.buffer_len(), |o| r.emit(&mut o), |x| {
            EthernetRepr::parse(&EthernetFrame::new_checked(x).unwrap()).unwrap()
        });
        for t in f.vlan_tags().flatten() {
            let _ = (t.tag.pcp(), t.tag.payload().len());
        }
    }
    if let Ok(t) = VlanTag::new_checked(b) {
        let r = VlanRepr::parse(&t).unwrap();
        round_trip!(r, 4, |o| r.emit(&mut o), |x| VlanRepr::parse(
            &VlanTag::new_checked(x).unwrap()
        )
        .unwrap());
    }
    if let Ok(e) = MplsEntry::new_checked(b) {
        let r = MplsRepr::parse(&e).unwrap();
        round_trip!(r, 4, |o| r.emit(&mut o), |x| MplsRepr::parse(
            &MplsEntry::new_checked(x).unwrap()
        )
        .unwrap());
    }
    if let Ok(p) = ArpPacket::new_checked(b) {
        let _ = (p.source_hardware_addr(), p.target_protocol_addr());
        if let Ok(r) = ArpRepr::parse(&p) {
            round_trip!(r, 28, |o| r.emit(&mut o), |x| ArpRepr::parse(
                &ArpPacket::new_checked(x).unwrap()
            )
            .unwrap());
        }
    }
    ipv4(b);
    ipv6(b);
    transport(b);
    if let Ok(p) = LldpPdu::new_checked(b) {
        let _ = (
            p.chassis_id().mac(),
            p.port_id().mac(),
            p.ttl(),
            p.system_name(),
            p.org_specific().count(),
        );
        let r = LldpRepr::parse(&p).expect("a validated PDU parses");
        round_trip!(r.clone(), r.buffer_len(), |o| r.emit(&mut o), |x| {
            LldpRepr::parse(&LldpPdu::new_checked(x).unwrap()).unwrap()
        });
    }
}

fn ipv4(b: &[u8]) {
    let Ok(p) = Ipv4Packet::new_checked(b) else {
        return;
    };
    let _ = (p.options(), p.payload(), p.verify_checksum());
    let Ok(r) = Ipv4Repr::parse(&p) else { return };
    let len = r.buffer_len() + r.payload_len;
    round_trip!(r, len, |o| r.emit(&mut o).map(|_| len), |x| {
        Ipv4Repr::parse(&Ipv4Packet::new_checked(x).unwrap()).unwrap()
    });
}

fn ipv6(b: &[u8]) {
    let p = Ipv6Packet::new_unchecked(b);
    if p.check_header().is_ok() {
        for h in p.ext_headers().flatten() {
            let h = h.header;
            let _ = (h.frag_offset(), h.routing_type(), h.options().count());
            let r = Ipv6ExtHeaderRepr::parse(&h).unwrap();
            let kind = h.kind();
            round_trip!(r, r.buffer_len(), |o| r.emit(&mut o), |x| {
                Ipv6ExtHeaderRepr::parse(&Ipv6ExtHeader::new_checked(x, kind).unwrap()).unwrap()
            });
        }
    }
    let Ok(p) = Ipv6Packet::new_checked(b) else {
        return;
    };
    let Ok(r) = Ipv6Repr::parse(&p) else { return };
    let len = 40 + r.payload_len;
    round_trip!(r, len, |o| r.emit(&mut o).map(|_| len), |x| {
        Ipv6Repr::parse(&Ipv6Packet::new_checked(x).unwrap()).unwrap()
    });
    let _ = Ipv6ExtHeaders::new(IpProtocol::HopByHop, p.payload(), 40).walk();
}

fn transport(b: &[u8]) {
    if let Ok(p) = TcpPacket::new_checked(b) {
        let _ = (p.option_iter().count(), p.payload(), p.verify_checksum(&V4));
        let r = TcpRepr::parse(&p).unwrap();
        round_trip!(r, r.buffer_len(), |o| r.emit(&V4, &mut o), |x| {
            TcpRepr::parse(&TcpPacket::new_checked(x).unwrap()).unwrap()
        });
    }
    if let Ok(p) = UdpPacket::new_checked(b) {
        let _ = p.verify_checksum(&V4);
        let r = UdpRepr::parse(&p).unwrap();
        round_trip!(r, r.buffer_len(), |o| r.emit(&V4, &mut o), |x| {
            UdpRepr::parse(&UdpPacket::new_checked(x).unwrap()).unwrap()
        });
    }
    if let Ok(p) = Icmpv4Packet::new_checked(b) {
        let _ = (p.verify_checksum(), p.echo_seq_no());
        let r = Icmpv4Repr::parse(&p).unwrap();
        round_trip!(r, r.buffer_len(), |o| r.emit(&mut o), |x| {
            Icmpv4Repr::parse(&Icmpv4Packet::new_checked(x).unwrap()).unwrap()
        });
    }
    if let Ok(p) = Icmpv6Packet::new_checked(b) {
        let _ = (
            p.nd_target(),
            p.nd_options().count(),
            p.verify_checksum(SRC6, DST6),
        );
        if let Ok(r) = Icmpv6Repr::parse(&p) {
            round_trip!(r, r.buffer_len(), |o| r.emit(SRC6, DST6, &mut o), |x| {
                Icmpv6Repr::parse(&Icmpv6Packet::new_checked(x).unwrap()).unwrap()
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;
    use proptest::prelude::*;

    #[test]
    fn vectors_and_their_truncations() {
        for v in [
            testdata::ARP_REQUEST,
            testdata::ICMP_ECHO_IPV4_OPTIONS,
            testdata::TCP_SYN_IPV6_EXT,
            testdata::ICMPV6_NS_SLL,
            testdata::ICMPV6_NA_TLL,
            testdata::DOUBLE_TAGGED_UDP,
            testdata::LLDP_OVS,
            testdata::LLDP_SWITCH,
            testdata::MPLS_UDP,
        ] {
            for n in 0..=v.len() {
                parse(&v[..n]);
            }
            // The LLDPDU alone, too.
            parse(&v[14..]);
        }
    }

    proptest! {
        #[test]
        fn oracles_hold_on_arbitrary_bytes(b in proptest::collection::vec(any::<u8>(), 0..256)) {
            parse(&b);
        }
    }
}
