//! What a flow does with a packet: [`Action`], the same in every version.

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use super::port::PortNo;
use crate::types::MacAddr;

/// What a flow does with a packet (applied in order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Send out a port; `max_len` bytes go to the controller when the port is `Controller`.
    Output {
        port: PortNo,
        max_len: u16,
    },
    /// Set the 802.1Q VLAN id (1.3: a set-field; push a tag first on untagged packets).
    SetVlanVid {
        vid: u16,
    },
    SetVlanPcp {
        pcp: u8,
    },
    /// Remove the outer 802.1Q tag (1.0 STRIP_VLAN, 1.3 POP_VLAN).
    PopVlan,
    /// Push a new 802.1Q tag with this TPID (1.3 only).
    PushVlan {
        ethertype: u16,
    },
    SetEthSrc {
        addr: MacAddr,
    },
    SetEthDst {
        addr: MacAddr,
    },
    SetIpv4Src {
        addr: Ipv4Addr,
    },
    SetIpv4Dst {
        addr: Ipv4Addr,
    },
    /// Set the DSCP bits (1.0 SET_NW_TOS with the value shifted left by 2).
    SetIpDscp {
        dscp: u8,
    },
    SetTcpSrc {
        port: u16,
    },
    SetTcpDst {
        port: u16,
    },
    SetUdpSrc {
        port: u16,
    },
    SetUdpDst {
        port: u16,
    },
    /// Send through a queue of a port (1.0 ENQUEUE, 1.3 SET_QUEUE then OUTPUT).
    Enqueue {
        port: PortNo,
        queue_id: u32,
    },
    /// Process through a group (1.3 only).
    Group {
        group_id: u32,
    },
    /// Decrement the IP TTL (1.3 only).
    DecNwTtl,
}

impl Action {
    /// Output to a port, with the whole packet when that port is the controller.
    pub fn output(port: PortNo) -> Action {
        Action::Output {
            port,
            max_len: 0xffff,
        }
    }
}
