use openflow::types::from_hex;
use proptest::prelude::*;

use super::*;

const KEY: DiscoveryKey =
    DiscoveryKey::from_bytes([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
const MAC: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x01]);
const MAX_AGE: u64 = 10_000;

fn frame(dpid: u64, port: u32, sent_at_ms: u64) -> Vec<u8> {
    let mut out = Vec::new();
    encode(&KEY, dpid, port, MAC, sent_at_ms, &mut out);
    out
}

fn found(dpid: u64, port: u32, sent_at_ms: u64) -> Result<Discovery, Reject> {
    Ok(Discovery {
        dpid,
        port,
        sent_at_ms,
    })
}

/// The frame Open vSwitch's notes used to check that a PACKET_OUT of LLDP comes back
/// as the neighbour's PACKET_IN (shared/notes/open-vswitch.md §4): dpid 1, port 2, no
/// Pharos TLV.
const OVS_NOTES_FRAME: &str = "0180c200000e02000000000188cc021607647069643a3030303030303030303030303030303104050200000002060200780000";

/// SipHash-2-4's reference vector (Aumasson and Bernstein, appendix A): key 00..0f,
/// message 00..0e. Pins the algorithm: SipHash-1-3 or another hash would not match.
#[test]
fn tag_is_siphash_2_4() {
    let msg: Vec<u8> = (0..15).collect();
    assert_eq!(KEY.tag(&msg), 0xa129ca6149be45e5);
}

/// The whole frame, byte for byte: what another implementation (a forging test in the
/// lab, a dissector) must produce.
/// The tag of the golden frame, also computed by a separate SipHash-2-4 written from the
/// paper (in Python) over the 25 bytes `0026e1 50 01 0000000000000001 00000002
/// 00000000000003e8` with key 00..0f.
const GOLDEN_TAG: u64 = 0xcd15_c014_7b1d_1a84;

#[test]
fn golden_frame() {
    let f = frame(0x1, 2, 1_000);
    let hex = openflow::types::to_hex(&f);
    let expected = concat!(
        "0180c200000e",
        "020000000001",
        "88cc", // Ethernet
        "0216",
        "07",
        "647069643a30303030303030303030303030303031", // chassis
        "0405",
        "02",
        "00000002", // port id
        "0602",
        "0078", // TTL 120
        "fe21",
        "0026e1",
        "50", // org-specific: OUI, subtype
        "01",
        "0000000000000001",
        "00000002",
        "00000000000003e8", // format, dpid, port, time
    );
    assert_eq!(f.len(), FRAME_LEN);
    assert_eq!(FRAME_LEN, 86);
    assert_eq!(&hex[..expected.len()], expected);
    // Tag then End.
    let mut signed = [0u8; SIGNED_LEN];
    signed.copy_from_slice(&f[f.len() - 2 - 8 - SIGNED_LEN..f.len() - 2 - 8]);
    let tag = KEY.tag_tlv(&signed);
    assert_eq!(&f[f.len() - 10..f.len() - 2], &tag.to_be_bytes());
    assert_eq!(&f[f.len() - 2..], &[0, 0]);
    assert_eq!(tag, GOLDEN_TAG);
    assert_eq!(&hex[expected.len()..], format!("{tag:016x}0000"));
    // And it reads as LLDP through the packet crate, as a real switch's would.
    let pdu = LldpPdu::new_checked(&f[14..]).unwrap();
    assert_eq!(pdu.chassis_id().id, b"dpid:0000000000000001");
    assert_eq!(pdu.ttl(), TTL_SECS);
}

#[test]
fn round_trip() {
    for (dpid, port) in [
        (0, 0),
        (1, 1),
        (0x0000_0a0b_0c0d_0e0f, 0xffff_ff00),
        (u64::MAX, u32::MAX),
        (0x8000_0000_0000_0000, 0xfffe),
    ] {
        for t in [0, 1, 1_000, u64::MAX - MAX_FUTURE_SKEW_MS] {
            let f = frame(dpid, port, t);
            assert_eq!(verify(&KEY, &f, t, MAX_AGE), found(dpid, port, t));
        }
    }
}

#[test]
fn appends() {
    let mut out = vec![0xaa; 3];
    encode(&KEY, 7, 8, MAC, 9, &mut out);
    encode(&KEY, 7, 8, MAC, 9, &mut out);
    assert_eq!(out.len(), 3 + 2 * FRAME_LEN);
    assert_eq!(verify(&KEY, &out[3..3 + FRAME_LEN], 9, 0), found(7, 8, 9));
    assert_eq!(&out[3..3 + FRAME_LEN], &out[3 + FRAME_LEN..]);
}

#[test]
fn dpid_text_is_lower_case_hex() {
    assert_eq!(&dpid_text(1), b"dpid:0000000000000001");
    assert_eq!(&dpid_text(0xfedc_ba98_7654_3210), b"dpid:fedcba9876543210");
    assert_eq!(&dpid_text(u64::MAX), b"dpid:ffffffffffffffff");
}

#[test]
fn wrong_key_is_bad_tag() {
    let f = frame(1, 2, 3);
    let mut other = [0u8; 16];
    other[15] = 1;
    let other = DiscoveryKey::from_bytes(other);
    assert_eq!(verify(&other, &f, 3, MAX_AGE), Err(Reject::BadTag));
    let mut g = Vec::new();
    encode(&other, 1, 2, MAC, 3, &mut g);
    assert_eq!(verify(&KEY, &g, 3, MAX_AGE), Err(Reject::BadTag));
    assert_eq!(verify(&other, &g, 3, MAX_AGE), found(1, 2, 3));
}

#[test]
fn random_keys_differ_and_do_not_show() {
    let a = DiscoveryKey::random().unwrap();
    let b = DiscoveryKey::random().unwrap();
    assert_ne!(a.0, b.0);
    assert_eq!(format!("{a:?}"), "DiscoveryKey(..)");
    let mut f = Vec::new();
    encode(&a, 1, 2, MAC, 3, &mut f);
    assert_eq!(verify(&a, &f, 3, 0), found(1, 2, 3));
    assert_eq!(verify(&b, &f, 3, 0), Err(Reject::BadTag));
}

#[test]
fn stale_and_future() {
    let t = 1_000_000;
    let f = frame(1, 2, t);
    assert_eq!(verify(&KEY, &f, t, 0), found(1, 2, t));
    assert_eq!(verify(&KEY, &f, t + MAX_AGE, MAX_AGE), found(1, 2, t));
    assert_eq!(
        verify(&KEY, &f, t + MAX_AGE + 1, MAX_AGE),
        Err(Reject::Stale)
    );
    assert_eq!(verify(&KEY, &f, u64::MAX, MAX_AGE), Err(Reject::Stale));
    assert_eq!(verify(&KEY, &f, u64::MAX, u64::MAX), found(1, 2, t));
    // From the future: a little is clock skew between threads, more is refused.
    assert_eq!(
        verify(&KEY, &f, t - MAX_FUTURE_SKEW_MS, MAX_AGE),
        found(1, 2, t)
    );
    assert_eq!(
        verify(&KEY, &f, t - MAX_FUTURE_SKEW_MS - 1, MAX_AGE),
        Err(Reject::Stale)
    );
    assert_eq!(verify(&KEY, &f, 0, u64::MAX), Err(Reject::Stale));
    let f = frame(1, 2, u64::MAX);
    assert_eq!(verify(&KEY, &f, 0, MAX_AGE), Err(Reject::Stale));
    assert_eq!(
        verify(&KEY, &f, u64::MAX - MAX_FUTURE_SKEW_MS, MAX_AGE),
        found(1, 2, u64::MAX)
    );
}

#[test]
fn real_lldp_is_not_ours() {
    let f = from_hex(OVS_NOTES_FRAME).unwrap();
    assert_eq!(f.len(), 51);
    assert_eq!(verify(&KEY, &f, 0, MAX_AGE), Err(Reject::NotOurs));
    // With a Floodlight-style dpid TLV (same OUI, subtype 0): still not ours.
    let mut r = LldpRepr::parse(&LldpPdu::new_checked(&f[14..]).unwrap()).unwrap();
    let dpid = 1u64.to_be_bytes();
    r.org_specific.push(OrgSpecific {
        oui: OUI,
        subtype: 0,
        info: &dpid,
    });
    let mut g = f[..14].to_vec();
    g.resize(14 + r.buffer_len(), 0);
    r.emit(&mut g[14..]).unwrap();
    assert_eq!(verify(&KEY, &g, 0, MAX_AGE), Err(Reject::NotOurs));
}

#[test]
fn not_lldp() {
    assert_eq!(verify(&KEY, &[], 0, 0), Err(Reject::NotLldp));
    let f = frame(1, 2, 3);
    assert_eq!(verify(&KEY, &f[..13], 3, 0), Err(Reject::NotLldp));
    let mut g = f.clone();
    g[12..14].copy_from_slice(&[0x08, 0x00]);
    assert_eq!(verify(&KEY, &g, 3, 0), Err(Reject::NotLldp));
    // A VLAN tag announced but cut short.
    let mut g = f[..14].to_vec();
    g[12..14].copy_from_slice(&[0x81, 0x00]);
    g.push(0);
    assert_eq!(verify(&KEY, &g, 3, 0), Err(Reject::NotLldp));
}

/// The first test lets through our frames, tagged or not, and turns away others by
/// their EtherType alone.
#[test]
fn may_be_lldp_by_the_ethertype() {
    let f = frame(1, 2, 3);
    assert!(may_be_lldp(&f));
    let mut tagged = f[..12].to_vec();
    tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x0a]);
    tagged.extend_from_slice(&f[12..]);
    assert!(may_be_lldp(&tagged));
    let mut ipv4 = f.clone();
    ipv4[12..14].copy_from_slice(&[0x08, 0x00]);
    assert!(!may_be_lldp(&ipv4));
    assert!(!may_be_lldp(&f[..13]));
    assert!(!may_be_lldp(&[]));
}

#[test]
fn read_through_vlan_tags() {
    let f = frame(1, 2, 3);
    for tpids in [&[0x8100u16][..], &[0x88a8, 0x8100]] {
        let mut g = f[..12].to_vec();
        for &tpid in tpids {
            g.extend_from_slice(&tpid.to_be_bytes());
            g.extend_from_slice(&[0x00, 0x0a]); // VLAN 10
        }
        g.extend_from_slice(&f[12..]);
        assert_eq!(verify(&KEY, &g, 3, 0), found(1, 2, 3));
    }
}

#[test]
fn padding_and_other_tlvs_are_ignored() {
    let mut f = frame(1, 2, 3);
    f.extend_from_slice(&[0; 40]);
    assert_eq!(verify(&KEY, &f, 3, 0), found(1, 2, 3));
    // A system name added before ours, as a relay might: the content is the same.
    let f = frame(1, 2, 3);
    let mut r = LldpRepr::parse(&LldpPdu::new_checked(&f[14..]).unwrap()).unwrap();
    r.system_name = Some(b"br0");
    let mut g = f[..14].to_vec();
    g.resize(14 + r.buffer_len(), 0);
    r.emit(&mut g[14..]).unwrap();
    assert_eq!(verify(&KEY, &g, 3, 0), found(1, 2, 3));
}

/// Rebuilds `f` with its LLDPDU changed by `edit`.
fn rebuilt<'a>(f: &'a [u8], edit: impl FnOnce(&mut LldpRepr<'a>)) -> Vec<u8> {
    let pdu = LldpPdu::new_checked(&f[14..]).unwrap();
    let mut r = LldpRepr::parse(&pdu).unwrap();
    edit(&mut r);
    let mut g = f[..14].to_vec();
    g.resize(14 + r.buffer_len(), 0);
    r.emit(&mut g[14..]).unwrap();
    g
}

#[test]
fn malformed() {
    let f = frame(1, 2, 3);
    // Cut inside the LLDPDU: no End TLV.
    assert_eq!(
        verify(&KEY, &f[..FRAME_LEN - 2], 3, 0),
        Err(Reject::Malformed)
    );
    assert_eq!(verify(&KEY, &f[..14], 3, 0), Err(Reject::Malformed));
    // Our TLV twice.
    let g = rebuilt(&f, |r| r.org_specific.push(r.org_specific[0]));
    assert_eq!(verify(&KEY, &g, 3, 0), Err(Reject::Malformed));
    // Our TLV one byte short, or with another format.
    let g = rebuilt(&f, |r| {
        let o = &mut r.org_specific[0];
        o.info = &o.info[..INFO_LEN - 1];
    });
    assert_eq!(verify(&KEY, &g, 3, 0), Err(Reject::Malformed));
    let mut g = f.clone();
    let format_at = 14 + 24 + 7 + 4 + 2 + 4;
    assert_eq!(g[format_at], FORMAT);
    g[format_at] = 2;
    assert_eq!(verify(&KEY, &g, 3, 0), Err(Reject::Malformed));
    // Chassis or Port ID that disagrees with the signed TLV.
    let other = frame(9, 2, 3);
    let g = rebuilt(&f, |r| {
        r.chassis_id = ChassisId {
            subtype: ChassisIdSubtype::LocallyAssigned,
            id: &other[16..16 + DPID_TEXT_LEN],
        }
    });
    assert_eq!(verify(&KEY, &g, 3, 0), Err(Reject::Malformed));
    let g = rebuilt(&f, |r| r.port_id.subtype = PortIdSubtype::InterfaceName);
    assert_eq!(verify(&KEY, &g, 3, 0), Err(Reject::Malformed));
    let g = rebuilt(&f, |r| r.port_id.id = &[0, 2]);
    assert_eq!(verify(&KEY, &g, 3, 0), Err(Reject::Malformed));
}

/// Every single-bit flip of a valid frame is refused, or (in the bytes the tag does
/// not cover) changes nothing verify returns.
#[test]
fn every_bit_flip() {
    let f = frame(0x0102_0304_0506_0708, 0x0a0b_0c0d, 5_000);
    let want = verify(&KEY, &f, 5_000, MAX_AGE).unwrap();
    let (mut refused, mut same) = (0, 0);
    for i in 0..f.len() * 8 {
        let mut g = f.clone();
        g[i / 8] ^= 1 << (i % 8);
        match verify(&KEY, &g, 5_000, MAX_AGE) {
            Ok(d) => {
                assert_eq!(d, want, "bit {i}");
                // Only the Ethernet addresses and the TTL value are not covered.
                let at = i / 8;
                let ttl = 14 + 24 + 7 + 2..14 + 24 + 7 + 4;
                assert!(at < 12 || ttl.contains(&at), "bit {i} (byte {at}) accepted");
                same += 1;
            }
            Err(_) => refused += 1,
        }
    }
    // The 96 bits of the two addresses and the 16 of the TTL value.
    assert_eq!(same, 12 * 8 + 16);
    assert_eq!(refused + same, FRAME_LEN * 8);
}

proptest! {
    #[test]
    fn any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        prop_assert!(verify(&KEY, &bytes, 0, u64::MAX).is_err());
    }

    /// What the first test turns away, `verify` would too: it loses no discovery frame.
    #[test]
    fn may_be_lldp_turns_away_only_what_verify_would(
        dpid in any::<u64>(),
        port in any::<u32>(),
        tags in proptest::collection::vec(prop_oneof![Just(0x8100u16), Just(0x88a8), Just(0x9100), any::<u16>()], 0..3),
    ) {
        let f = frame(dpid, port, 3);
        let mut g = f[..12].to_vec();
        for t in tags {
            g.extend_from_slice(&t.to_be_bytes());
            g.extend_from_slice(&[0x00, 0x0a]);
        }
        g.extend_from_slice(&f[12..]);
        if !may_be_lldp(&g) {
            prop_assert_eq!(verify(&KEY, &g, 3, MAX_AGE), Err(Reject::NotLldp));
        }
        if verify(&KEY, &g, 3, MAX_AGE).is_ok() {
            prop_assert!(may_be_lldp(&g));
        }
    }

    /// Any bytes after a valid Ethernet LLDP header, to reach the LLDP parser.
    #[test]
    fn any_lldpdu(body in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut f = frame(1, 2, 3)[..14].to_vec();
        f.extend_from_slice(&body);
        prop_assert!(verify(&KEY, &f, 3, u64::MAX).is_err());
    }

    /// Mutated valid frames (bit flips, overwritten, inserted and removed bytes) are
    /// never accepted with different content.
    #[test]
    fn mutated_frames(
        dpid in any::<u64>(),
        port in any::<u32>(),
        sent_at in 0u64..1 << 40,
        edits in proptest::collection::vec((0u8..4, any::<usize>(), any::<u8>()), 1..6),
    ) {
        let mut f = frame(dpid, port, sent_at);
        for (kind, at, byte) in edits {
            let at = at % (f.len() + 1);
            match kind {
                0 if at < f.len() => f[at] ^= 1 << (byte % 8),
                1 if at < f.len() => f[at] = byte,
                2 => f.insert(at, byte),
                _ if at < f.len() => { f.remove(at); }
                _ => f.push(byte),
            }
        }
        if let Ok(d) = verify(&KEY, &f, sent_at, MAX_AGE) {
            prop_assert_eq!(d, Discovery { dpid, port, sent_at_ms: sent_at });
        }
    }

    #[test]
    fn round_trips(dpid in any::<u64>(), port in any::<u32>(), sent_at in any::<u64>(), mac in any::<[u8; 6]>()) {
        let mut f = Vec::new();
        encode(&KEY, dpid, port, MacAddr(mac), sent_at, &mut f);
        prop_assert_eq!(f.len(), FRAME_LEN);
        prop_assert_eq!(&f[6..12], &mac);
        prop_assert_eq!(verify(&KEY, &f, sent_at, 0), found(dpid, port, sent_at));
    }
}
