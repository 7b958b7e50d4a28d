//! The 1.3 error types and the names of every code of every type (§7.4.4).
//!
//! The ERROR message body itself is shared with 1.0 ([`crate::common::ErrorBody`]);
//! this module gives its numbers their 1.3 meaning.

use crate::common::ErrorBody;
use crate::open_enum;

open_enum! {
    /// `ofp_error_type`.
    pub enum ErrorType: u16 {
        HelloFailed = 0 => "HELLO_FAILED",
        BadRequest = 1 => "BAD_REQUEST",
        BadAction = 2 => "BAD_ACTION",
        BadInstruction = 3 => "BAD_INSTRUCTION",
        BadMatch = 4 => "BAD_MATCH",
        FlowModFailed = 5 => "FLOW_MOD_FAILED",
        GroupModFailed = 6 => "GROUP_MOD_FAILED",
        PortModFailed = 7 => "PORT_MOD_FAILED",
        TableModFailed = 8 => "TABLE_MOD_FAILED",
        QueueOpFailed = 9 => "QUEUE_OP_FAILED",
        SwitchConfigFailed = 10 => "SWITCH_CONFIG_FAILED",
        RoleRequestFailed = 11 => "ROLE_REQUEST_FAILED",
        MeterModFailed = 12 => "METER_MOD_FAILED",
        TableFeaturesFailed = 13 => "TABLE_FEATURES_FAILED",
        Experimenter = 0xffff => "EXPERIMENTER",
    }
}

/// `ofp_hello_failed_code`.
const HELLO_FAILED: &[&str] = &["INCOMPATIBLE", "EPERM"];
/// `ofp_bad_request_code`.
const BAD_REQUEST: &[&str] = &[
    "BAD_VERSION",
    "BAD_TYPE",
    "BAD_MULTIPART",
    "BAD_EXPERIMENTER",
    "BAD_EXP_TYPE",
    "EPERM",
    "BAD_LEN",
    "BUFFER_EMPTY",
    "BUFFER_UNKNOWN",
    "BAD_TABLE_ID",
    "IS_SLAVE",
    "BAD_PORT",
    "BAD_PACKET",
    "MULTIPART_BUFFER_OVERFLOW",
];
/// `ofp_bad_action_code`.
const BAD_ACTION: &[&str] = &[
    "BAD_TYPE",
    "BAD_LEN",
    "BAD_EXPERIMENTER",
    "BAD_EXP_TYPE",
    "BAD_OUT_PORT",
    "BAD_ARGUMENT",
    "EPERM",
    "TOO_MANY",
    "BAD_QUEUE",
    "BAD_OUT_GROUP",
    "MATCH_INCONSISTENT",
    "UNSUPPORTED_ORDER",
    "BAD_TAG",
    "BAD_SET_TYPE",
    "BAD_SET_LEN",
    "BAD_SET_ARGUMENT",
];
/// `ofp_bad_instruction_code`.
const BAD_INSTRUCTION: &[&str] = &[
    "UNKNOWN_INST",
    "UNSUP_INST",
    "BAD_TABLE_ID",
    "UNSUP_METADATA",
    "UNSUP_METADATA_MASK",
    "BAD_EXPERIMENTER",
    "BAD_EXP_TYPE",
    "BAD_LEN",
    "EPERM",
];
/// `ofp_bad_match_code`.
const BAD_MATCH: &[&str] = &[
    "BAD_TYPE",
    "BAD_LEN",
    "BAD_TAG",
    "BAD_DL_ADDR_MASK",
    "BAD_NW_ADDR_MASK",
    "BAD_WILDCARDS",
    "BAD_FIELD",
    "BAD_VALUE",
    "BAD_MASK",
    "BAD_PREREQ",
    "DUP_FIELD",
    "EPERM",
];
/// `ofp_flow_mod_failed_code`.
const FLOW_MOD_FAILED: &[&str] = &[
    "UNKNOWN",
    "TABLE_FULL",
    "BAD_TABLE_ID",
    "OVERLAP",
    "EPERM",
    "BAD_TIMEOUT",
    "BAD_COMMAND",
    "BAD_FLAGS",
];
/// `ofp_group_mod_failed_code`.
const GROUP_MOD_FAILED: &[&str] = &[
    "GROUP_EXISTS",
    "INVALID_GROUP",
    "WEIGHT_UNSUPPORTED",
    "OUT_OF_GROUPS",
    "OUT_OF_BUCKETS",
    "CHAINING_UNSUPPORTED",
    "WATCH_UNSUPPORTED",
    "LOOP",
    "UNKNOWN_GROUP",
    "CHAINED_GROUP",
    "BAD_TYPE",
    "BAD_COMMAND",
    "BAD_BUCKET",
    "BAD_WATCH",
    "EPERM",
];
/// `ofp_port_mod_failed_code`.
const PORT_MOD_FAILED: &[&str] = &[
    "BAD_PORT",
    "BAD_HW_ADDR",
    "BAD_CONFIG",
    "BAD_ADVERTISE",
    "EPERM",
];
/// `ofp_table_mod_failed_code`.
const TABLE_MOD_FAILED: &[&str] = &["BAD_TABLE", "BAD_CONFIG", "EPERM"];
/// `ofp_queue_op_failed_code`.
const QUEUE_OP_FAILED: &[&str] = &["BAD_PORT", "BAD_QUEUE", "EPERM"];
/// `ofp_switch_config_failed_code`.
const SWITCH_CONFIG_FAILED: &[&str] = &["BAD_FLAGS", "BAD_LEN", "EPERM"];
/// `ofp_role_request_failed_code`.
const ROLE_REQUEST_FAILED: &[&str] = &["STALE", "UNSUP", "BAD_ROLE"];
/// `ofp_meter_mod_failed_code`.
const METER_MOD_FAILED: &[&str] = &[
    "UNKNOWN",
    "METER_EXISTS",
    "INVALID_METER",
    "UNKNOWN_METER",
    "BAD_COMMAND",
    "BAD_FLAGS",
    "BAD_RATE",
    "BAD_BURST",
    "BAD_BAND",
    "BAD_BAND_VALUE",
    "OUT_OF_METERS",
    "OUT_OF_BANDS",
];
/// `ofp_table_features_failed_code`.
const TABLE_FEATURES_FAILED: &[&str] = &[
    "BAD_TABLE",
    "BAD_METADATA",
    "BAD_TYPE",
    "BAD_LEN",
    "BAD_ARGUMENT",
    "EPERM",
];

impl ErrorType {
    /// The names of this type's codes, indexed by code (empty for experimenter and
    /// unknown types).
    pub fn code_names(self) -> &'static [&'static str] {
        match self {
            ErrorType::HelloFailed => HELLO_FAILED,
            ErrorType::BadRequest => BAD_REQUEST,
            ErrorType::BadAction => BAD_ACTION,
            ErrorType::BadInstruction => BAD_INSTRUCTION,
            ErrorType::BadMatch => BAD_MATCH,
            ErrorType::FlowModFailed => FLOW_MOD_FAILED,
            ErrorType::GroupModFailed => GROUP_MOD_FAILED,
            ErrorType::PortModFailed => PORT_MOD_FAILED,
            ErrorType::TableModFailed => TABLE_MOD_FAILED,
            ErrorType::QueueOpFailed => QUEUE_OP_FAILED,
            ErrorType::SwitchConfigFailed => SWITCH_CONFIG_FAILED,
            ErrorType::RoleRequestFailed => ROLE_REQUEST_FAILED,
            ErrorType::MeterModFailed => METER_MOD_FAILED,
            ErrorType::TableFeaturesFailed => TABLE_FEATURES_FAILED,
            ErrorType::Experimenter | ErrorType::Unknown(_) => &[],
        }
    }

    /// The spec's name of `code` within this type (`"BAD_OUT_PORT"`).
    pub fn code_name(self, code: u16) -> Option<&'static str> {
        self.code_names().get(code as usize).copied()
    }
}

/// `BAD_ACTION/BAD_OUT_PORT`-style text for an ERROR body, numbers where a name is
/// unknown.
pub fn describe(e: &ErrorBody) -> String {
    match e {
        ErrorBody::Standard { err_type, code, .. } => {
            let t = ErrorType::from_raw(*err_type);
            match t.code_name(*code) {
                Some(c) => format!("{t}/{c}"),
                None => format!("{t}/{code}"),
            }
        }
        ErrorBody::Experimenter {
            exp_type,
            experimenter,
            ..
        } => format!("EXPERIMENTER/0x{experimenter:08x}/{exp_type}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_names_its_codes() {
        assert_eq!(ErrorType::BadAction.code_name(4), Some("BAD_OUT_PORT"));
        assert_eq!(ErrorType::BadRequest.code_names().len(), 14);
        assert_eq!(ErrorType::TableFeaturesFailed.code_name(5), Some("EPERM"));
        assert_eq!(ErrorType::BadMatch.code_name(12), None);
        for t in 0..=13 {
            assert!(!ErrorType::from_raw(t).code_names().is_empty(), "type {t}");
        }
        let e = ErrorBody::Standard {
            err_type: 2,
            code: 11,
            data: vec![],
        };
        assert_eq!(describe(&e), "BAD_ACTION/UNSUPPORTED_ORDER");
        let e = ErrorBody::Standard {
            err_type: 99,
            code: 1,
            data: vec![],
        };
        assert_eq!(describe(&e), "99/1");
    }
}
