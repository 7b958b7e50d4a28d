//! The EtherType field (and the TPID of VLAN tags), shared by Ethernet and 802.1Q.

use crate::macros::open_enum;

open_enum! {
    /// The EtherType field (and the TPID of VLAN tags). Values below 0x0600 are 802.3
    /// lengths, not types; they come through as `Unknown`.
    pub enum EtherType: u16 {
        Ipv4 = 0x0800,
        Arp = 0x0806,
        /// 802.1Q customer VLAN tag (C-tag).
        Vlan = 0x8100,
        Ipv6 = 0x86dd,
        /// MPLS unicast.
        Mpls = 0x8847,
        /// MPLS multicast.
        MplsMulticast = 0x8848,
        /// 802.1ad service VLAN tag (S-tag).
        QinQ = 0x88a8,
        Lldp = 0x88cc,
        /// The pre-standard Q-in-Q TPID some switches still send.
        QinQ9100 = 0x9100,
    }
}

impl EtherType {
    /// True for the TPIDs this crate reads as VLAN tags: 0x8100, 0x88a8 and 0x9100.
    #[inline]
    pub const fn is_vlan(self) -> bool {
        matches!(
            self,
            EtherType::Vlan | EtherType::QinQ | EtherType::QinQ9100
        )
    }

    /// True for the two MPLS EtherTypes.
    #[inline]
    pub const fn is_mpls(self) -> bool {
        matches!(self, EtherType::Mpls | EtherType::MplsMulticast)
    }
}
