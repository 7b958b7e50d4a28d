//! The hosts behind each emulated switch (see the frame, in the module doc of
//! [`super`]): their ports, addresses and partners, and the frame they send.

use openflow::MacAddr;

/// The port the template's PACKET_IN comes in on (patched per packet).
pub(super) const IN_PORT: u32 = 1;

/// The port host `index` lives behind: 1 for even indexes, 2 for odd ones.
pub fn host_port(index: u32) -> u32 {
    1 + (index & 1)
}

/// The host the packets of host `index` go to, among `macs` hosts: its partner behind
/// the other port, or `None` with one host.
pub fn partner(index: u32, macs: u32) -> Option<u32> {
    if macs < 2 {
        None
    } else if index ^ 1 < macs {
        Some(index ^ 1)
    } else {
        Some(index - 1)
    }
}
/// Bytes of the Ethernet frame a PACKET_IN carries.
pub(super) const FRAME_LEN: usize = 60;

/// A source MAC of switch `dpid`: host `index`.
pub fn host_mac(dpid: u64, index: u32) -> MacAddr {
    let d = (dpid as u16).to_be_bytes();
    let i = index.to_be_bytes();
    MacAddr([0x02, d[0], d[1], i[1], i[2], i[3]])
}

/// The IPv4 address of host `index` of switch `dpid` among `macs` per switch: in
/// 10.0.0.0/8, numbered across the switches (unique up to 2^24 hosts in all).
pub fn host_ip(dpid: u64, index: u32, macs: u32) -> [u8; 4] {
    let n = (dpid.wrapping_sub(1) as u32)
        .wrapping_mul(macs)
        .wrapping_add(index)
        & 0x00ff_ffff;
    let b = n.to_be_bytes();
    [10, b[1], b[2], b[3]]
}

/// The destination MAC of the frames of a switch with one host (never announced).
pub fn dst_mac(dpid: u64) -> MacAddr {
    let d = (dpid as u16).to_be_bytes();
    MacAddr([0x0a, d[0], d[1], 0, 0, 1])
}

/// An Ethernet/IPv4/UDP frame of 60 bytes from `src` to `dst`.
pub(super) fn frame(src: MacAddr, dst: MacAddr) -> Vec<u8> {
    let mut f = Vec::with_capacity(FRAME_LEN);
    f.extend_from_slice(&dst.0);
    f.extend_from_slice(&src.0);
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    let ip_len = (FRAME_LEN - 14) as u16;
    let mut ip = [
        0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
    ];
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    let sum = packet::checksum::checksum(&ip);
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    f.extend_from_slice(&ip);
    let udp_len = ip_len - 20;
    // UDP 1234 -> 5678, no checksum (0 is allowed over IPv4).
    f.extend_from_slice(&[0x04, 0xd2, 0x16, 0x2e]);
    f.extend_from_slice(&udp_len.to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.resize(FRAME_LEN, 0);
    f
}

#[cfg(test)]
mod tests {
    use openflow::{of10, of13, Message, Version};

    use super::super::template::{Template, NO_BUFFER};
    use super::*;

    #[test]
    fn packets_go_between_hosts_with_their_own_addresses() {
        for version in [Version::V1_0, Version::V1_3] {
            let mut out = Vec::new();
            Template::new(version, 3).append_from_host(&mut out, 5, NO_BUFFER, 3, 100, 7);
            let (_, msg) = Message::decode(&out).unwrap();
            let data = match msg {
                Message::V10(of10::Message::PacketIn(p)) => p.data,
                Message::V13(of13::Message::PacketIn(p)) => p.data,
                other => panic!("{other:?}"),
            };
            let eth = packet::ethernet::EthernetFrame::new_checked(&data[..]).unwrap();
            assert_eq!(eth.src_addr(), host_mac(3, 7));
            assert_eq!(eth.dst_addr(), host_mac(3, 6));
            let ip = packet::ipv4::Ipv4Packet::new_checked(eth.payload()).unwrap();
            assert!(ip.verify_checksum(), "the header checksum is recomputed");
            assert_eq!(ip.src_addr().octets(), host_ip(3, 7, 100));
            assert_eq!(ip.dst_addr().octets(), host_ip(3, 6, 100));
            assert_eq!(host_ip(3, 7, 100), [10, 0, 0, 207]);
        }
    }

    #[test]
    fn partners_live_behind_the_other_port() {
        for macs in [2u32, 3, 4, 7, 100] {
            for i in 0..macs {
                let p = partner(i, macs).unwrap();
                assert!(p < macs && p != i);
                assert_ne!(host_port(p), host_port(i), "{i} of {macs}");
            }
        }
        assert_eq!(partner(0, 1), None);
    }
}
