//! The discovery frame: an LLDP frame that says which switch port sent it, signed with a
//! per-controller secret so that only this controller can make one that [`verify`]
//! accepts.
//!
//! The topology app sends one out of every switch port (PACKET_OUT) and reads it back
//! where it arrives (PACKET_IN): the frame names the sending port, the PACKET_IN the
//! receiving one, and the two make a link. A host can send LLDP too; without the key it
//! cannot make a frame that passes [`verify`], and a frame it captured and sends again
//! is refused once older than the app's `max_age`.
//!
//! ```text
//! Ethernet     dst 01:80:c2:00:00:0e (nearest bridge), src: the sending port's MAC,
//!              type 0x88cc                                                  14 bytes
//! Chassis ID   subtype 7 (locally assigned), "dpid:%016x" as text, the way
//!              Open vSwitch and Floodlight write it: "dpid:0000000000000001"  2+22
//! Port ID      subtype 2 (port component), the port number as 4 bytes,
//!              big-endian (OpenFlow 1.3's width; 1.0's ports fit)            2+5
//! TTL          120 s (not used by Pharos)                                    2+2
//! Org-specific OUI 00:26:e1 (the OpenFlow OUI, under which Beacon and Floodlight
//!              put their own discovery TLVs), subtype 0x50 ('P', Pharos):    2+33
//!                format  1 byte   = 1
//!                dpid    8 bytes  big-endian
//!                port    4 bytes  big-endian
//!                sent_at 8 bytes  big-endian, milliseconds on the sender's clock
//!                tag     8 bytes  SipHash-2-4 (128-bit key) of the 25 bytes from
//!                                 the OUI to sent_at, big-endian
//! End                                                                        2
//!                                                            = FRAME_LEN, 86 bytes
//! ```
//!
//! What the tag covers: the OUI, subtype, format, dpid, port and time. [`verify`] also
//! requires the Chassis ID and Port ID to say the same dpid and port, so every field a
//! reader may look at is authenticated. What it does not cover, and what may change on
//! the way without changing what [`verify`] returns: the Ethernet addresses, VLAN tags
//! (a tagged frame is read through its tags), the TTL, other TLVs, and bytes after the
//! End TLV.
//!
//! A frame is recognised as a Pharos frame by its organisation-specific TLV (OUI and
//! subtype): LLDP without it, a real switch's or a host's, is [`Reject::NotOurs`] and
//! the topology app can ignore it quietly. One with it that fails the tag is
//! [`Reject::BadTag`]: a forgery, or another controller's frame (each controller draws
//! its own key).
//!
//! The time is the sender's to choose, as long as [`encode`] and [`verify`] use the
//! same clock: milliseconds since the controller started (from an `Instant`) suit, and
//! a restart changes the key anyway. A replay of a genuine frame within `max_age` is
//! accepted here (it is the same frame); a replay that loops a port onto itself shows
//! up as a link from a port to itself, which the topology app refuses, and one relayed
//! between two hosts arrives on a host port, which the app refuses too
//! (`topology::guard`).
//!
//! ```
//! use apps::topology::lldp::{self, Discovery, DiscoveryKey, Reject};
//! use openflow::MacAddr;
//!
//! let key = DiscoveryKey::random().unwrap();
//! let mut frame = Vec::new();
//! lldp::encode(&key, 0x1, 2, MacAddr([2, 0, 0, 0, 0, 1]), 1_000, &mut frame);
//! assert_eq!(frame.len(), lldp::FRAME_LEN);
//! assert_eq!(
//!     lldp::verify(&key, &frame, 1_500, 10_000),
//!     Ok(Discovery { dpid: 0x1, port: 2, sent_at_ms: 1_000 })
//! );
//! assert_eq!(lldp::verify(&key, &frame, 20_000, 10_000), Err(Reject::Stale));
//! let other = DiscoveryKey::random().unwrap();
//! assert_eq!(lldp::verify(&other, &frame, 1_500, 10_000), Err(Reject::BadTag));
//! ```

use std::fmt;

use openflow::MacAddr;
use packet::ethernet::{EtherType, EthernetFrame, EthernetRepr};
use packet::lldp::{
    ChassisId, ChassisIdSubtype, LldpPdu, LldpRepr, OrgSpecific, PortId, PortIdSubtype,
    MULTICAST_NEAREST_BRIDGE,
};
use siphasher::sip::SipHasher24;

/// The OpenFlow OUI (00:26:e1), which Beacon and Floodlight use for their discovery TLVs.
pub const OUI: [u8; 3] = [0x00, 0x26, 0xe1];
/// The subtype of Pharos's TLV under [`OUI`]: 'P'. Floodlight uses 0 (its dpid TLV).
pub const SUBTYPE: u8 = 0x50;
/// The layout of the TLV's information string described in the module doc.
pub const FORMAT: u8 = 1;
/// The TTL written in the TTL TLV, in seconds. Pharos does not read it.
pub const TTL_SECS: u16 = 120;
/// How far in the future a frame's time may be (the senders' and the verifier's reads
/// of the clock are not ordered across threads) before it is [`Reject::Stale`].
pub const MAX_FUTURE_SKEW_MS: u64 = 1_000;
/// Length of the frame [`encode`] writes.
pub const FRAME_LEN: usize =
    14 + (2 + 1 + DPID_TEXT_LEN) + (2 + 1 + 4) + (2 + 2) + (2 + 4 + INFO_LEN) + 2;

/// "dpid:" and 16 hex digits.
const DPID_TEXT_LEN: usize = 21;
/// Format, dpid, port, sent_at, tag.
const INFO_LEN: usize = 1 + 8 + 4 + 8 + 8;
/// The part of the information string the tag covers: everything before the tag.
const SIGNED_LEN: usize = INFO_LEN - 8;

mod field {
    pub const FORMAT: usize = 0;
    pub const DPID: core::ops::Range<usize> = 1..9;
    pub const PORT: core::ops::Range<usize> = 9..13;
    pub const SENT_AT: core::ops::Range<usize> = 13..21;
    pub const TAG: core::ops::Range<usize> = 21..29;
}

/// The controller's 128-bit secret for signing discovery frames. Its `Debug` does not
/// show it.
#[derive(Clone)]
pub struct DiscoveryKey([u8; 16]);

impl DiscoveryKey {
    /// A key drawn from the operating system's random source (`getrandom(2)` on
    /// Linux). Fails only if the OS has no random source to give.
    pub fn random() -> Result<DiscoveryKey, getrandom::Error> {
        let mut k = [0u8; 16];
        getrandom::fill(&mut k)?;
        Ok(DiscoveryKey(k))
    }

    /// A key with these bytes: for tests, and for controllers that must share one.
    pub const fn from_bytes(bytes: [u8; 16]) -> DiscoveryKey {
        DiscoveryKey(bytes)
    }

    /// SipHash-2-4 of `msg` under this key.
    fn tag(&self, msg: &[u8]) -> u64 {
        SipHasher24::new_with_key(&self.0).hash(msg)
    }

    /// The tag of the TLV whose signed part of the information string is `signed`.
    fn tag_tlv(&self, signed: &[u8; SIGNED_LEN]) -> u64 {
        let mut msg = [0u8; 4 + SIGNED_LEN];
        msg[..3].copy_from_slice(&OUI);
        msg[3] = SUBTYPE;
        msg[4..].copy_from_slice(signed);
        self.tag(&msg)
    }
}

impl fmt::Debug for DiscoveryKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DiscoveryKey(..)")
    }
}

/// What a valid discovery frame says: it was sent out of `port` of switch `dpid` at
/// `sent_at_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Discovery {
    pub dpid: u64,
    pub port: u32,
    pub sent_at_ms: u64,
}

/// Why [`verify`] refused a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reject {
    /// Not an LLDP frame: shorter than an Ethernet header, a broken VLAN tag stack, or
    /// another EtherType.
    NotLldp,
    /// LLDP, but not Pharos's: no TLV with our OUI and subtype (a real switch's or a
    /// host's LLDP). Not an attack; count it, don't shout.
    NotOurs,
    /// Our TLV is there, but the LLDPDU breaks 802.1AB, our TLV has the wrong length or
    /// format or appears twice, or the Chassis ID or Port ID does not match it.
    Malformed,
    /// The tag does not match: forged, damaged, or signed with another key (another
    /// controller's).
    BadTag,
    /// Genuine but older than `max_age_ms`, or more than [`MAX_FUTURE_SKEW_MS`] in the
    /// future: a replay, or a frame that waited in a queue too long.
    Stale,
}

impl Reject {
    /// A short name, for counters and logs.
    pub const fn as_str(self) -> &'static str {
        match self {
            Reject::NotLldp => "not_lldp",
            Reject::NotOurs => "not_ours",
            Reject::Malformed => "malformed",
            Reject::BadTag => "bad_tag",
            Reject::Stale => "stale",
        }
    }
}

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reject::NotLldp => "not an LLDP frame",
            Reject::NotOurs => "LLDP without a Pharos discovery TLV",
            Reject::Malformed => "malformed discovery frame",
            Reject::BadTag => "discovery frame with a bad tag (forged, or another key)",
            Reject::Stale => "discovery frame too old, or from the future",
        })
    }
}

impl std::error::Error for Reject {}

/// "dpid:" and the dpid in 16 lower-case hex digits.
fn dpid_text(dpid: u64) -> [u8; DPID_TEXT_LEN] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut t = [0u8; DPID_TEXT_LEN];
    t[..5].copy_from_slice(b"dpid:");
    for (i, d) in t[5..].iter_mut().enumerate() {
        *d = HEX[(dpid >> (60 - 4 * i) & 0xf) as usize];
    }
    t
}

fn be_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    u64::from_be_bytes(a)
}

/// Appends to `out` the discovery frame (exactly [`FRAME_LEN`] bytes) for port `port`
/// of switch `dpid`, from `src_mac` (the port's hardware address, as OpenFlow's port
/// description gives it), sent at `sent_at_ms`, signed with `key`.
pub fn encode(
    key: &DiscoveryKey,
    dpid: u64,
    port: u32,
    src_mac: MacAddr,
    sent_at_ms: u64,
    out: &mut Vec<u8>,
) {
    let mut info = [0u8; INFO_LEN];
    info[field::FORMAT] = FORMAT;
    info[field::DPID].copy_from_slice(&dpid.to_be_bytes());
    info[field::PORT].copy_from_slice(&port.to_be_bytes());
    info[field::SENT_AT].copy_from_slice(&sent_at_ms.to_be_bytes());
    let signed: &[u8; SIGNED_LEN] = info[..SIGNED_LEN].try_into().expect("fixed length");
    let tag = key.tag_tlv(signed);
    info[field::TAG].copy_from_slice(&tag.to_be_bytes());

    let chassis = dpid_text(dpid);
    let port_id = port.to_be_bytes();
    let mut lldp = LldpRepr::new(
        ChassisId {
            subtype: ChassisIdSubtype::LocallyAssigned,
            id: &chassis,
        },
        PortId {
            subtype: PortIdSubtype::PortComponent,
            id: &port_id,
        },
        TTL_SECS,
    );
    lldp.org_specific.push(OrgSpecific {
        oui: OUI,
        subtype: SUBTYPE,
        info: &info,
    });
    let eth = EthernetRepr {
        dst_addr: MULTICAST_NEAREST_BRIDGE,
        src_addr: src_mac,
        ethertype: EtherType::Lldp,
    };

    let start = out.len();
    out.resize(start + FRAME_LEN, 0);
    let buf = &mut out[start..];
    // Every length here is fixed and within 802.1AB's limits, which the tests check:
    // neither emit can fail.
    let n = eth.emit(buf).expect("room for the Ethernet header");
    let m = lldp
        .emit(&mut buf[n..])
        .expect("a valid, fixed-size LLDPDU");
    debug_assert_eq!(n + m, FRAME_LEN);
}

/// Whether `frame` may be a discovery frame: LLDP's EtherType, or a VLAN tag that
/// [`verify`] must look behind. The first test for every PACKET_IN, most of which are
/// not LLDP: two bytes read, where `verify` walks the tags (and its caller reads the
/// clock).
#[inline]
pub fn may_be_lldp(frame: &[u8]) -> bool {
    match frame.get(12..14) {
        Some(&[a, b]) => {
            let t = EtherType::from_raw(u16::from_be_bytes([a, b]));
            t == EtherType::Lldp || t.is_vlan()
        }
        _ => false,
    }
}

/// Checks that `frame` is a discovery frame signed with `key` and sent no more than
/// `max_age_ms` before `now_ms` (and no more than [`MAX_FUTURE_SKEW_MS`] after), and
/// says where it was sent from.
///
/// Takes any bytes: it never panics and never allocates. The checks, in order: an
/// Ethernet frame with EtherType 0x88cc, possibly under VLAN tags ([`Reject::NotLldp`]);
/// a valid LLDPDU ([`Reject::Malformed`]); exactly one TLV with our OUI and subtype
/// ([`Reject::NotOurs`] if none), of the right length and format; the tag
/// ([`Reject::BadTag`]); the Chassis ID and Port ID agree with the TLV
/// ([`Reject::Malformed`]); the time ([`Reject::Stale`]).
pub fn verify(
    key: &DiscoveryKey,
    frame: &[u8],
    now_ms: u64,
    max_age_ms: u64,
) -> Result<Discovery, Reject> {
    let eth = EthernetFrame::new_checked(frame).map_err(|_| Reject::NotLldp)?;
    let (ethertype, offset) = eth.vlan_tags().skip_all().map_err(|_| Reject::NotLldp)?;
    if ethertype != EtherType::Lldp {
        return Err(Reject::NotLldp);
    }
    let pdu = frame.get(offset..).ok_or(Reject::NotLldp)?;
    let pdu = LldpPdu::new_checked(pdu).map_err(|_| Reject::Malformed)?;

    let mut ours = None;
    for o in pdu.org_specific() {
        if o.oui == OUI && o.subtype == SUBTYPE {
            if ours.is_some() {
                return Err(Reject::Malformed);
            }
            ours = Some(o.info);
        }
    }
    let info: &[u8; INFO_LEN] = ours
        .ok_or(Reject::NotOurs)?
        .try_into()
        .map_err(|_| Reject::Malformed)?;
    if info[field::FORMAT] != FORMAT {
        return Err(Reject::Malformed);
    }
    let signed: &[u8; SIGNED_LEN] = info[..SIGNED_LEN]
        .try_into()
        .map_err(|_| Reject::Malformed)?;
    // One 64-bit comparison: no early exit on the first differing byte to time.
    if key.tag_tlv(signed) != be_u64(&info[field::TAG]) {
        return Err(Reject::BadTag);
    }

    let dpid = be_u64(&info[field::DPID]);
    let mut port = [0u8; 4];
    port.copy_from_slice(&info[field::PORT]);
    let chassis = pdu.chassis_id();
    let port_id = pdu.port_id();
    if chassis.subtype != ChassisIdSubtype::LocallyAssigned
        || chassis.id != dpid_text(dpid)
        || port_id.subtype != PortIdSubtype::PortComponent
        || port_id.id != port
    {
        return Err(Reject::Malformed);
    }

    let sent_at_ms = be_u64(&info[field::SENT_AT]);
    let fresh = match now_ms.checked_sub(sent_at_ms) {
        Some(age) => age <= max_age_ms,
        None => sent_at_ms - now_ms <= MAX_FUTURE_SKEW_MS,
    };
    if !fresh {
        return Err(Reject::Stale);
    }
    Ok(Discovery {
        dpid,
        port: u32::from_be_bytes(port),
        sent_at_ms,
    })
}

#[cfg(test)]
#[path = "lldp_tests.rs"]
mod tests;
