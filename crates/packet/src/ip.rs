//! What IPv4 and IPv6 share: the protocol numbers of the next header.

use crate::macros::open_enum;

open_enum! {
    /// IANA "Assigned Internet Protocol Numbers": the IPv4 protocol field and the
    /// IPv6 next-header field.
    pub enum IpProtocol: u8 {
        /// IPv6 hop-by-hop options.
        HopByHop = 0,
        Icmp = 1,
        Igmp = 2,
        Tcp = 6,
        Udp = 17,
        /// IPv6 routing header.
        Ipv6Route = 43,
        /// IPv6 fragment header.
        Ipv6Frag = 44,
        /// Encapsulating security payload.
        Esp = 50,
        /// Authentication header.
        Ah = 51,
        Icmpv6 = 58,
        /// IPv6 "no next header".
        Ipv6NoNxt = 59,
        /// IPv6 destination options.
        Ipv6Opts = 60,
        Sctp = 132,
    }
}
