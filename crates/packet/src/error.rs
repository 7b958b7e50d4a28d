//! Parse and emit errors.
//!
//! One variant per rule a packet can break. Every parse error names the layer (`"ipv4"`,
//! `"lldp chassis id tlv"`, ...) and the byte offset where the problem starts, counted
//! from the start of the buffer handed to the function that failed; the frame-level
//! parser ([`crate::FlowKey`]) reports offsets from the start of the frame. Length errors
//! say what was needed and what was there, as etherparse does.

/// Why a buffer could not be read as a packet of some layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum Error {
    /// The buffer ends before the structure does.
    #[error("{layer}: needs {needed} bytes at offset {offset}, only {available} present")]
    Truncated {
        /// The layer (structure) the error is about.
        layer: &'static str,
        /// Where the problem starts.
        offset: usize,
        /// Bytes needed from `offset`.
        needed: usize,
        /// Bytes there were.
        available: usize,
    },
    /// A length field is smaller than the fixed part of the structure it describes
    /// (IPv4 IHL below 5, TCP data offset below 5, UDP length below 8, ...).
    #[error("{layer}: {field} {length} at offset {offset} is below the minimum of {min}")]
    LengthTooShort {
        /// The layer (structure) the error is about.
        layer: &'static str,
        /// The field at fault.
        field: &'static str,
        /// Where the problem starts.
        offset: usize,
        /// The length the field gives.
        length: usize,
        /// The smallest valid length.
        min: usize,
    },
    /// A length field claims more bytes than its container has left (an IPv4 header
    /// longer than its total length, an LLDP or NDP TLV running past the frame, ...).
    #[error("{layer}: {field} {length} at offset {offset} runs past its container ({available} bytes left)")]
    LengthOverrun {
        /// The layer (structure) the error is about.
        layer: &'static str,
        /// The field at fault.
        field: &'static str,
        /// Where the problem starts.
        offset: usize,
        /// The length the field gives.
        length: usize,
        /// Bytes there were.
        available: usize,
    },
    /// A length field disagrees with the fixed size its structure has (an LLDP TTL TLV
    /// whose length is not 2, an End TLV whose length is not 0, ...).
    #[error("{layer}: {field} {length} at offset {offset} should be {expected}")]
    LengthMismatch {
        /// The layer (structure) the error is about.
        layer: &'static str,
        /// The field at fault.
        field: &'static str,
        /// Where the problem starts.
        offset: usize,
        /// The length the field gives.
        length: usize,
        /// The length the structure must have.
        expected: usize,
    },
    /// A field holds a value the structure cannot have (an IPv4 header whose version is
    /// not 4, an ARP packet that is not Ethernet/IPv4, LLDP TLVs out of order, ...).
    #[error("{layer}: bad {field} {value:#x} at offset {offset}: {reason}")]
    BadValue {
        /// The layer (structure) the error is about.
        layer: &'static str,
        /// The field at fault.
        field: &'static str,
        /// Where the problem starts.
        offset: usize,
        /// The value found.
        value: u64,
        /// What the value should be.
        reason: &'static str,
    },
    /// A chain of headers (VLAN tags, IPv6 extension headers) is longer than the limit
    /// this crate walks, which bounds the work one packet can cost.
    #[error("{layer}: more than {limit} headers in a chain, at offset {offset}")]
    TooManyHeaders {
        /// The layer (structure) the error is about.
        layer: &'static str,
        /// Where the problem starts.
        offset: usize,
        /// The most headers walked.
        limit: usize,
    },
}

impl Error {
    /// The offset the error points at.
    pub fn offset(&self) -> usize {
        match *self {
            Error::Truncated { offset, .. }
            | Error::LengthTooShort { offset, .. }
            | Error::LengthOverrun { offset, .. }
            | Error::LengthMismatch { offset, .. }
            | Error::BadValue { offset, .. }
            | Error::TooManyHeaders { offset, .. } => offset,
        }
    }

    /// The layer the error is about.
    pub fn layer(&self) -> &'static str {
        match *self {
            Error::Truncated { layer, .. }
            | Error::LengthTooShort { layer, .. }
            | Error::LengthOverrun { layer, .. }
            | Error::LengthMismatch { layer, .. }
            | Error::BadValue { layer, .. }
            | Error::TooManyHeaders { layer, .. } => layer,
        }
    }

    /// The same error with its offset moved by `base`: for an error found in a layer
    /// that starts `base` bytes into an enclosing buffer.
    pub fn at(mut self, base: usize) -> Self {
        match &mut self {
            Error::Truncated { offset, .. }
            | Error::LengthTooShort { offset, .. }
            | Error::LengthOverrun { offset, .. }
            | Error::LengthMismatch { offset, .. }
            | Error::BadValue { offset, .. }
            | Error::TooManyHeaders { offset, .. } => *offset += base,
        }
        self
    }

    /// True for the "the buffer ends too early" error, as opposed to a malformed field.
    pub fn is_truncated(&self) -> bool {
        matches!(self, Error::Truncated { .. })
    }
}

/// Why a repr could not be emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    /// The buffer handed to `emit` is shorter than the repr's `buffer_len()`.
    #[error("{layer}: emitting needs {needed} bytes, the buffer has {available}")]
    BufferTooSmall {
        /// The layer (structure) being emitted.
        layer: &'static str,
        /// Bytes the structure takes.
        needed: usize,
        /// Bytes the buffer has.
        available: usize,
    },
    /// A value does not fit the wire field it goes to.
    #[error("{layer}: {field} value {value:#x} does not fit: {reason}")]
    BadValue {
        /// The layer (structure) being emitted.
        layer: &'static str,
        /// The field at fault.
        field: &'static str,
        /// The value given.
        value: u64,
        /// What the value should be.
        reason: &'static str,
    },
}

/// The result of parsing.
pub type Result<T> = core::result::Result<T, Error>;
/// The result of emitting.
pub type EmitResult<T> = core::result::Result<T, EmitError>;

/// `Err(Truncated)` unless `buf` holds `needed` bytes from its start.
#[inline]
pub(crate) fn need(layer: &'static str, buf: &[u8], needed: usize) -> Result<()> {
    if buf.len() < needed {
        Err(Error::Truncated {
            layer,
            offset: 0,
            needed,
            available: buf.len(),
        })
    } else {
        Ok(())
    }
}

/// `Err(BufferTooSmall)` unless `buf` holds `needed` bytes; the first `needed` bytes.
#[inline]
pub(crate) fn room<'b>(
    layer: &'static str,
    buf: &'b mut [u8],
    needed: usize,
) -> EmitResult<&'b mut [u8]> {
    let available = buf.len();
    buf.get_mut(..needed).ok_or(EmitError::BufferTooSmall {
        layer,
        needed,
        available,
    })
}

/// `Err(EmitError::BadValue)` when `ok` is false.
#[inline]
pub(crate) fn fits(
    ok: bool,
    layer: &'static str,
    field: &'static str,
    value: u64,
    reason: &'static str,
) -> EmitResult<()> {
    if ok {
        Ok(())
    } else {
        Err(EmitError::BadValue {
            layer,
            field,
            value,
            reason,
        })
    }
}
