//! OpenFlow 1.0 error types and codes (spec 1.0.0 §5.4.4, `ofp_error_type` and the
//! `ofp_*_code` enums). The ERROR message itself is the shared [`crate::common::ErrorBody`];
//! this module gives its numbers names.

use crate::open_enum;

open_enum! {
    /// `ofp_error_type`: the class of an error.
    pub enum ErrorType: u16 {
        /// Hello protocol failed.
        HelloFailed = 0 => "HELLO_FAILED",
        /// Request was not understood.
        BadRequest = 1 => "BAD_REQUEST",
        /// Error in action description.
        BadAction = 2 => "BAD_ACTION",
        /// Problem modifying flow entry.
        FlowModFailed = 3 => "FLOW_MOD_FAILED",
        /// Port mod request failed.
        PortModFailed = 4 => "PORT_MOD_FAILED",
        /// Queue operation failed.
        QueueOpFailed = 5 => "QUEUE_OP_FAILED",
    }
}

open_enum! {
    /// `ofp_hello_failed_code`.
    pub enum HelloFailedCode: u16 {
        /// No compatible version.
        Incompatible = 0 => "INCOMPATIBLE",
        /// Permissions error.
        Eperm = 1 => "EPERM",
    }
}

open_enum! {
    /// `ofp_bad_request_code`.
    pub enum BadRequestCode: u16 {
        /// `ofp_header.version` not supported.
        BadVersion = 0 => "BAD_VERSION",
        /// `ofp_header.type` not supported.
        BadType = 1 => "BAD_TYPE",
        /// `ofp_stats_request.type` not supported.
        BadStat = 2 => "BAD_STAT",
        /// Vendor not supported (in `ofp_vendor_header` or `ofp_stats_request`).
        BadVendor = 3 => "BAD_VENDOR",
        /// Vendor subtype not supported.
        BadSubtype = 4 => "BAD_SUBTYPE",
        /// Permissions error.
        Eperm = 5 => "EPERM",
        /// Wrong request length for type.
        BadLen = 6 => "BAD_LEN",
        /// Specified buffer has already been used.
        BufferEmpty = 7 => "BUFFER_EMPTY",
        /// Specified buffer does not exist.
        BufferUnknown = 8 => "BUFFER_UNKNOWN",
    }
}

open_enum! {
    /// `ofp_bad_action_code`.
    pub enum BadActionCode: u16 {
        /// Unknown action type.
        BadType = 0 => "BAD_TYPE",
        /// Length problem in actions.
        BadLen = 1 => "BAD_LEN",
        /// Unknown vendor id specified.
        BadVendor = 2 => "BAD_VENDOR",
        /// Unknown action type for vendor id.
        BadVendorType = 3 => "BAD_VENDOR_TYPE",
        /// Problem validating output action.
        BadOutPort = 4 => "BAD_OUT_PORT",
        /// Bad action argument.
        BadArgument = 5 => "BAD_ARGUMENT",
        /// Permissions error.
        Eperm = 6 => "EPERM",
        /// Can't handle this many actions.
        TooMany = 7 => "TOO_MANY",
        /// Problem validating output queue.
        BadQueue = 8 => "BAD_QUEUE",
    }
}

open_enum! {
    /// `ofp_flow_mod_failed_code`.
    pub enum FlowModFailedCode: u16 {
        /// Flow not added because of full tables.
        AllTablesFull = 0 => "ALL_TABLES_FULL",
        /// Attempted to add overlapping flow with `CHECK_OVERLAP` flag set.
        Overlap = 1 => "OVERLAP",
        /// Permissions error.
        Eperm = 2 => "EPERM",
        /// Flow not added because of non-zero idle/hard timeout on an emergency entry.
        BadEmergTimeout = 3 => "BAD_EMERG_TIMEOUT",
        /// Unknown command.
        BadCommand = 4 => "BAD_COMMAND",
        /// Unsupported action list: cannot process in the order specified.
        Unsupported = 5 => "UNSUPPORTED",
    }
}

open_enum! {
    /// `ofp_port_mod_failed_code`.
    pub enum PortModFailedCode: u16 {
        /// Specified port does not exist.
        BadPort = 0 => "BAD_PORT",
        /// Specified hardware address is wrong.
        BadHwAddr = 1 => "BAD_HW_ADDR",
    }
}

open_enum! {
    /// `ofp_queue_op_failed_code`.
    pub enum QueueOpFailedCode: u16 {
        /// Invalid port (or port does not exist).
        BadPort = 0 => "BAD_PORT",
        /// Queue does not exist.
        BadQueue = 1 => "BAD_QUEUE",
        /// Permissions error.
        Eperm = 2 => "EPERM",
    }
}

/// The spec's name of error type `err_type` (`"BAD_ACTION"`), if 1.0 defines it.
pub fn error_type_name(err_type: u16) -> Option<&'static str> {
    ErrorType::from_raw(err_type).name()
}

/// The spec's name of `code` within error type `err_type` (`"BAD_OUT_PORT"`), if 1.0
/// defines both.
pub fn error_code_name(err_type: u16, code: u16) -> Option<&'static str> {
    match ErrorType::from_raw(err_type) {
        ErrorType::HelloFailed => HelloFailedCode::from_raw(code).name(),
        ErrorType::BadRequest => BadRequestCode::from_raw(code).name(),
        ErrorType::BadAction => BadActionCode::from_raw(code).name(),
        ErrorType::FlowModFailed => FlowModFailedCode::from_raw(code).name(),
        ErrorType::PortModFailed => PortModFailedCode::from_raw(code).name(),
        ErrorType::QueueOpFailed => QueueOpFailedCode::from_raw(code).name(),
        ErrorType::Unknown(_) => None,
    }
}

/// `"BAD_ACTION/BAD_OUT_PORT"`, falling back to numbers for whatever has no name.
pub fn describe_error(err_type: u16, code: u16) -> String {
    let t = ErrorType::from_raw(err_type).to_string();
    match error_code_name(err_type, code) {
        Some(c) => format!("{t}/{c}"),
        None => format!("{t}/{code}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_of_every_type_has_its_name() {
        let counts = [(0, 2), (1, 9), (2, 9), (3, 6), (4, 2), (5, 3)];
        for (t, n) in counts {
            assert!(error_type_name(t).is_some());
            for c in 0..n {
                assert!(error_code_name(t, c).is_some(), "type {t} code {c}");
            }
            assert_eq!(error_code_name(t, n), None);
        }
        assert_eq!(error_code_name(2, 4), Some("BAD_OUT_PORT"));
        assert_eq!(error_code_name(6, 0), None);
        assert_eq!(describe_error(3, 1), "FLOW_MOD_FAILED/OVERLAP");
        assert_eq!(describe_error(9, 7), "9/7");
    }
}
