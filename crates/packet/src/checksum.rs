//! The Internet checksum (RFC 1071) and the IPv4/IPv6 pseudo-headers TCP, UDP and
//! ICMPv6 checksums cover.

use std::net::{Ipv4Addr, Ipv6Addr};

/// The ones'-complement sum of `data` as big-endian 16-bit words (an odd last byte is
/// padded with a zero), not yet folded. Add partial sums with `+` and finish with
/// [`finish`].
pub fn sum(data: &[u8]) -> u64 {
    let mut acc: u64 = 0;
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        acc += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        acc += u64::from(*last) << 8;
    }
    acc
}

/// Folds a partial sum to 16 bits (without complementing).
pub fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The checksum field value for a partial sum: the complement of the folded sum.
pub fn finish(acc: u64) -> u16 {
    !fold(acc)
}

/// The checksum of `data` alone (what the IPv4 header and ICMPv4 use).
pub fn checksum(data: &[u8]) -> u16 {
    finish(sum(data))
}

/// The addresses of the IP header a transport checksum is computed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PseudoHeader {
    /// IPv4 source and destination addresses.
    V4 {
        /// Source address.
        src: Ipv4Addr,
        /// Destination address.
        dst: Ipv4Addr,
    },
    /// IPv6 source and destination addresses.
    V6 {
        /// Source address.
        src: Ipv6Addr,
        /// Destination address.
        dst: Ipv6Addr,
    },
}

impl PseudoHeader {
    /// The partial sum of the pseudo-header for an upper-layer packet of `protocol`
    /// that is `length` bytes long (RFC 793 §3.1 for IPv4, RFC 8200 §8.1 for IPv6).
    pub fn sum(&self, protocol: u8, length: u32) -> u64 {
        match self {
            PseudoHeader::V4 { src, dst } => {
                sum(&src.octets())
                    + sum(&dst.octets())
                    + u64::from(protocol)
                    + u64::from(length & 0xffff)
                    + u64::from(length >> 16)
            }
            PseudoHeader::V6 { src, dst } => {
                sum(&src.octets())
                    + sum(&dst.octets())
                    + u64::from(length >> 16)
                    + u64::from(length & 0xffff)
                    + u64::from(protocol)
            }
        }
    }

    /// True for the IPv4 pseudo-header.
    pub fn is_v4(&self) -> bool {
        matches!(self, PseudoHeader::V4 { .. })
    }
}

/// The checksum of an upper-layer packet `data` (whose checksum field is zero) under
/// `pseudo`.
pub fn transport(pseudo: &PseudoHeader, protocol: u8, data: &[u8]) -> u16 {
    finish(pseudo.sum(protocol, data.len() as u32) + sum(data))
}

/// True when `data` (checksum field included) sums to all ones under `pseudo`.
pub fn verify_transport(pseudo: &PseudoHeader, protocol: u8, data: &[u8]) -> bool {
    fold(pseudo.sum(protocol, data.len() as u32) + sum(data)) == 0xffff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2 (folded).
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(fold(sum(&data)), 0xddf2);
        assert_eq!(checksum(&data), !0xddf2);
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(sum(&[0x12, 0x34, 0x56]), 0x1234 + 0x5600);
    }
}
