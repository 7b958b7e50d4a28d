//! The switch's description of itself (spec 1.0.0 §5.3.1, §5.3.2): FEATURES_REPLY, its
//! capability bits, and the `ofp_config_flags` of GET_CONFIG_REPLY / SET_CONFIG (whose
//! body is the shared [`crate::common::SwitchConfig`]).

use serde::{Deserialize, Serialize};

use super::port::PhyPort;
use crate::error::{DecodeResult, EncodeResult};
use crate::wire::{Put, Reader};

/// `ofp_capabilities`: flow statistics.
pub const OFPC_FLOW_STATS: u32 = 1 << 0;
/// Table statistics.
pub const OFPC_TABLE_STATS: u32 = 1 << 1;
/// Port statistics.
pub const OFPC_PORT_STATS: u32 = 1 << 2;
/// 802.1d spanning tree.
pub const OFPC_STP: u32 = 1 << 3;
/// Reserved, must be zero.
pub const OFPC_RESERVED: u32 = 1 << 4;
/// Can reassemble IP fragments.
pub const OFPC_IP_REASM: u32 = 1 << 5;
/// Queue statistics.
pub const OFPC_QUEUE_STATS: u32 = 1 << 6;
/// Match IP addresses in ARP packets.
pub const OFPC_ARP_MATCH_IP: u32 = 1 << 7;

/// `ofp_config_flags`: no special handling for IP fragments.
pub const OFPC_FRAG_NORMAL: u16 = 0;
/// Drop fragments.
pub const OFPC_FRAG_DROP: u16 = 1;
/// Reassemble (only if `OFPC_IP_REASM` is set).
pub const OFPC_FRAG_REASM: u16 = 2;
/// The fragment-handling bits.
pub const OFPC_FRAG_MASK: u16 = 3;

/// `OFP_DEFAULT_MISS_SEND_LEN`.
pub const OFP_DEFAULT_MISS_SEND_LEN: u16 = 128;

/// FEATURES_REPLY (`ofp_switch_features`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SwitchFeatures {
    /// Datapath unique id: the low 48 bits are a MAC address, the top 16 are up to the
    /// implementer.
    pub datapath_id: u64,
    /// Max packets buffered at once.
    pub n_buffers: u32,
    /// Number of tables supported by the datapath.
    pub n_tables: u8,
    /// `OFPC_*` bits.
    pub capabilities: u32,
    /// Bitmap of supported action types (see [`super::action::action_bit`]).
    pub actions: u32,
    /// The physical ports; the rest of the message, 48 bytes each.
    pub ports: Vec<PhyPort>,
}

impl SwitchFeatures {
    /// Body size before the ports.
    pub const FIXED_LEN: usize = 24;

    /// Parses the message body.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<SwitchFeatures> {
        let datapath_id = r.u64()?;
        let n_buffers = r.u32()?;
        let n_tables = r.u8()?;
        r.skip(3)?;
        let capabilities = r.u32()?;
        let actions = r.u32()?;
        // `ofp_switch_features.ports`: "Port definitions. The number of ports is
        // inferred from the length field in the header." The rest of the body is
        // whole `ofp_phy_port`s.
        let ports = PhyPort::parse_list(r)?;
        Ok(SwitchFeatures {
            datapath_id,
            n_buffers,
            n_tables,
            capabilities,
            actions,
            ports,
        })
    }

    /// Appends the message body.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u64(self.datapath_id);
        out.put_u32(self.n_buffers);
        out.put_u8(self.n_tables);
        out.put_zeros(3);
        out.put_u32(self.capabilities);
        out.put_u32(self.actions);
        for p in &self.ports {
            p.emit(out);
        }
        Ok(())
    }
}

/// VENDOR (`ofp_vendor_header`): a vendor extension message, carried opaquely.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Vendor {
    /// The vendor id (for Nicira, `0x00002320`).
    pub vendor: u32,
    /// Everything after the vendor id.
    #[serde(with = "crate::types::hex")]
    pub data: Vec<u8>,
}

impl Vendor {
    /// Parses the message body.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<Vendor> {
        Ok(Vendor {
            vendor: r.u32()?,
            data: r.rest().to_vec(),
        })
    }

    /// Appends the message body.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        out.put_u32(self.vendor);
        out.put_slice(&self.data);
        Ok(())
    }
}
