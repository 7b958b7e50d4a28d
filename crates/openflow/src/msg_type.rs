//! The message types whose number is the same in OpenFlow 1.0 and 1.3: `ofp_type`
//! values 0 to 14 (OpenFlow 1.0.0 §5.1 and 1.3.5 §7.1, "enum ofp_type"), as `u8`
//! constants, for code that reads the type byte of a header (`frame[1]`,
//! [`crate::Header::msg_type`]) before it knows, or needs, the version.
//!
//! From 15 on the versions part: 1.0's 15 is PORT_MOD, 1.3's is GROUP_MOD; 1.0's
//! STATS_REPLY and BARRIER_REPLY are 17 and 19, 1.3's MULTIPART_REPLY and BARRIER_REPLY
//! 19 and 21. Those are named by the per-version enums, [`crate::of10::MsgType`] and
//! [`crate::of13::MsgType`], whose `to_raw` is a `const fn`:
//!
//! ```
//! use openflow::{msg_type, of10, of13};
//!
//! const BARRIER_REPLY_10: u8 = of10::MsgType::BarrierReply.to_raw();
//! const BARRIER_REPLY_13: u8 = of13::MsgType::BarrierReply.to_raw();
//! assert_eq!((BARRIER_REPLY_10, BARRIER_REPLY_13), (19, 21));
//! assert_eq!(msg_type::PACKET_IN, of13::MsgType::PacketIn.to_raw());
//! ```
//!
//! Each constant names its message's section in both specs (1.0.0, then 1.3.5).

/// `OFPT_HELLO`: version negotiation, the first message both ways (§5.5.1, §7.5.1).
pub const HELLO: u8 = 0;
/// `OFPT_ERROR`: an error report, either way (§5.4.4, §7.4.4).
pub const ERROR: u8 = 1;
/// `OFPT_ECHO_REQUEST`: a liveness request, either way (§5.5.2, §7.5.2).
pub const ECHO_REQUEST: u8 = 2;
/// `OFPT_ECHO_REPLY`: the answer to an ECHO_REQUEST, with its data (§5.5.3, §7.5.3).
pub const ECHO_REPLY: u8 = 3;
/// `OFPT_VENDOR` in 1.0, `OFPT_EXPERIMENTER` in 1.3: an extension (§5.5.4, §7.5.4).
pub const EXPERIMENTER: u8 = 4;
/// 1.0's name for [`EXPERIMENTER`].
pub const VENDOR: u8 = EXPERIMENTER;
/// `OFPT_FEATURES_REQUEST`: the controller asks for the datapath id and the
/// capabilities (§5.3.1, §7.3.1).
pub const FEATURES_REQUEST: u8 = 5;
/// `OFPT_FEATURES_REPLY`: the switch's datapath id and capabilities (§5.3.1, §7.3.1).
pub const FEATURES_REPLY: u8 = 6;
/// `OFPT_GET_CONFIG_REQUEST`: the controller asks for the switch's configuration
/// (§5.3.2, §7.3.2).
pub const GET_CONFIG_REQUEST: u8 = 7;
/// `OFPT_GET_CONFIG_REPLY`: the switch's configuration (§5.3.2, §7.3.2).
pub const GET_CONFIG_REPLY: u8 = 8;
/// `OFPT_SET_CONFIG`: the controller sets the configuration (§5.3.2, §7.3.2).
pub const SET_CONFIG: u8 = 9;
/// `OFPT_PACKET_IN`: a packet for the controller (§5.4.1, §7.4.1).
pub const PACKET_IN: u8 = 10;
/// `OFPT_FLOW_REMOVED`: a flow entry left the table (§5.4.2, §7.4.2).
pub const FLOW_REMOVED: u8 = 11;
/// `OFPT_PORT_STATUS`: a port was added, removed or changed (§5.4.3, §7.4.3).
pub const PORT_STATUS: u8 = 12;
/// `OFPT_PACKET_OUT`: the controller sends a packet out of the switch (§5.3.6, §7.3.7).
pub const PACKET_OUT: u8 = 13;
/// `OFPT_FLOW_MOD`: the controller changes the flow table (§5.3.3, §7.3.4.1).
pub const FLOW_MOD: u8 = 14;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{of10, of13};

    #[test]
    fn each_constant_is_the_same_type_in_both_versions() {
        let all = [
            (HELLO, "HELLO"),
            (ERROR, "ERROR"),
            (ECHO_REQUEST, "ECHO_REQUEST"),
            (ECHO_REPLY, "ECHO_REPLY"),
            (FEATURES_REQUEST, "FEATURES_REQUEST"),
            (FEATURES_REPLY, "FEATURES_REPLY"),
            (GET_CONFIG_REQUEST, "GET_CONFIG_REQUEST"),
            (GET_CONFIG_REPLY, "GET_CONFIG_REPLY"),
            (SET_CONFIG, "SET_CONFIG"),
            (PACKET_IN, "PACKET_IN"),
            (FLOW_REMOVED, "FLOW_REMOVED"),
            (PORT_STATUS, "PORT_STATUS"),
            (PACKET_OUT, "PACKET_OUT"),
            (FLOW_MOD, "FLOW_MOD"),
        ];
        for (n, name) in all {
            assert_eq!(of10::MsgType::from_raw(n).name(), Some(name));
            assert_eq!(of13::MsgType::from_raw(n).name(), Some(name));
        }
        assert_eq!(of10::MsgType::from_raw(VENDOR).name(), Some("VENDOR"));
        assert_eq!(
            of13::MsgType::from_raw(EXPERIMENTER).name(),
            Some("EXPERIMENTER")
        );
        // Every number up to 14 is named here, and 15 is the first that differs.
        let mut numbers: Vec<u8> = all.iter().map(|(n, _)| *n).collect();
        numbers.push(EXPERIMENTER);
        numbers.sort();
        assert_eq!(numbers, (0..=14).collect::<Vec<u8>>());
        assert_ne!(
            of10::MsgType::from_raw(15).name(),
            of13::MsgType::from_raw(15).name()
        );
    }
}
