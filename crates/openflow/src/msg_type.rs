//! The message types whose number is the same in every version this codec speaks
//! (OpenFlow 1.0.0 §5.1 `ofp_type`, 1.3.5 §7.1 `ofp_type`: the first fifteen agree), as
//! the type byte of the header. The others differ between versions: name them through
//! `of10::MsgType` and `of13::MsgType`.

/// `OFPT_HELLO`.
pub const HELLO: u8 = 0;
/// `OFPT_ERROR`.
pub const ERROR: u8 = 1;
/// `OFPT_ECHO_REQUEST`.
pub const ECHO_REQUEST: u8 = 2;
/// `OFPT_ECHO_REPLY`.
pub const ECHO_REPLY: u8 = 3;
/// `OFPT_VENDOR` (1.0), `OFPT_EXPERIMENTER` (1.3).
pub const EXPERIMENTER: u8 = 4;
/// `OFPT_FEATURES_REQUEST`.
pub const FEATURES_REQUEST: u8 = 5;
/// `OFPT_FEATURES_REPLY`.
pub const FEATURES_REPLY: u8 = 6;
/// `OFPT_GET_CONFIG_REQUEST`.
pub const GET_CONFIG_REQUEST: u8 = 7;
/// `OFPT_GET_CONFIG_REPLY`.
pub const GET_CONFIG_REPLY: u8 = 8;
/// `OFPT_SET_CONFIG`.
pub const SET_CONFIG: u8 = 9;
/// `OFPT_PACKET_IN`.
pub const PACKET_IN: u8 = 10;
/// `OFPT_FLOW_REMOVED`.
pub const FLOW_REMOVED: u8 = 11;
/// `OFPT_PORT_STATUS`.
pub const PORT_STATUS: u8 = 12;
/// `OFPT_PACKET_OUT`.
pub const PACKET_OUT: u8 = 13;
/// `OFPT_FLOW_MOD`.
pub const FLOW_MOD: u8 = 14;
