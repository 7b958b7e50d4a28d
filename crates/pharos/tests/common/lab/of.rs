//! The OpenFlow versions of a lab as the tests name them, for `pharos lab up`,
//! `ovs-ofctl`, tshark and the controller.

/// An OpenFlow version as the lab tests use it: every switch 1.0, every switch 1.3, or
/// mixed (`pharos lab up --of mixed`: odd-numbered switches 1.0, even-numbered 1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Of {
    V10,
    V13,
    Mixed,
}

impl Of {
    /// `pharos lab up --of`.
    pub fn flag(self) -> &'static str {
        match self {
            Of::V10 => "1.0",
            Of::V13 => "1.3",
            Of::Mixed => "mixed",
        }
    }

    /// `ovs-ofctl -O` (for a mixed lab, the list that talks to either kind).
    pub fn ofctl(self) -> &'static str {
        match self {
            Of::V10 => "OpenFlow10",
            Of::V13 => "OpenFlow13",
            Of::Mixed => "OpenFlow10,OpenFlow13",
        }
    }

    /// tshark's protocol filter for this version.
    pub fn tshark_proto(self) -> &'static str {
        match self {
            Of::V10 => "openflow_v1",
            Of::V13 => "openflow_v4",
            Of::Mixed => "openflow_v1 || openflow_v4",
        }
    }

    /// The version the controller negotiates with every switch of the lab (not for a
    /// mixed lab: see [`Of::version_of`]).
    pub fn version(self) -> openflow::Version {
        match self {
            Of::V10 => openflow::Version::V1_0,
            Of::V13 => openflow::Version::V1_3,
            Of::Mixed => panic!("a mixed lab has no one version: Of::version_of(dpid)"),
        }
    }

    /// The version the controller negotiates with the switch of datapath id `dpid`
    /// (switch sN has dpid N).
    pub fn version_of(self, dpid: u64) -> openflow::Version {
        match self {
            Of::Mixed if dpid % 2 == 1 => openflow::Version::V1_0,
            Of::Mixed => openflow::Version::V1_3,
            v => v.version(),
        }
    }
}
