use std::collections::BTreeSet;

use proptest::prelude::*;

use super::*;

fn mac(n: u8) -> MacAddr {
    MacAddr([2, 0, 0, 0, 0, n])
}

fn ap(dpid: u64, port: u32) -> AttachmentPoint {
    AttachmentPoint::new(dpid, port)
}

fn v4(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, n))
}

fn v6(n: u16) -> IpAddr {
    IpAddr::V6(Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, n))
}

fn key(m: u8, vlan: Option<u16>) -> HostKey {
    HostKey { mac: mac(m), vlan }
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// Expiry as documented: idle for `max_idle` or longer.
fn idle_for(h: &Host, now: Instant, max_idle: Duration) -> bool {
    h.last_seen
        .checked_add(max_idle)
        .is_some_and(|deadline| deadline <= now)
}

/// Everything the table promises about its indexes.
fn check(t: &HostTable) {
    let live: BTreeSet<u32> = (0..t.slots.len() as u32)
        .filter(|&s| t.slots[s as usize].is_some())
        .collect();
    assert_eq!(live.len(), t.len, "len");
    assert_eq!(t.iter().count(), t.len);
    let free: BTreeSet<u32> = t.free.iter().copied().collect();
    assert_eq!(free.len(), t.free.len(), "a slot freed twice");
    assert!(free.is_disjoint(&live), "a live slot on the free list");
    assert_eq!(free.len() + live.len(), t.slots.len(), "a slot lost");
    assert!(t.len <= t.limits.max_hosts);

    // Every live slot is on exactly one chain, its MAC's, once per VLAN.
    let mut chained = BTreeSet::new();
    for (m, head) in t.by_mac.iter() {
        let mut vlans = BTreeSet::new();
        let mut at = head;
        while at != NONE {
            assert!(chained.insert(at), "slot {at} chained twice");
            let h = t.slots[at as usize]
                .as_ref()
                .expect("chain names a free slot");
            assert_eq!(h.mac, m);
            assert!(vlans.insert(h.vlan), "{m:?} twice on VLAN {:?}", h.vlan);
            at = h.next_same_mac;
        }
        assert!(!vlans.is_empty());
        assert_eq!(t.by_mac(m).count(), vlans.len());
    }
    assert_eq!(chained, live, "chains and live slots differ");

    // The address maps and the hosts' lists say the same thing.
    let mut n_ips = 0;
    for &s in &live {
        let h = t.host(s);
        assert_eq!(t.get(h.mac, h.vlan), Some(h));
        assert!(h.first_seen <= h.last_seen);
        let distinct: BTreeSet<_> = h.ips.iter().collect();
        assert_eq!(distinct.len(), h.ips.len(), "an address twice on {h:?}");
        assert!(h.ipv4().count() <= t.limits.max_ips_per_family);
        assert!(h.ipv6().count() <= t.limits.max_ips_per_family);
        assert_eq!(h.ipv4().count() + h.ipv6().count(), h.ips.len());
        for &ip in &h.ips {
            assert!(meaningful(&ip));
            assert_eq!(t.ip_slot(ip), Some(s), "{ip} not indexed to its host");
            assert_eq!(t.by_ip(ip), Some(h));
        }
        n_ips += h.ips.len();
    }
    assert_eq!(
        t.by_ipv4.len() + t.by_ipv6.len(),
        n_ips,
        "stale addresses in the index"
    );

    // The bound expiry relies on.
    match t.oldest {
        None => assert_eq!(t.len, 0),
        Some(o) => assert!(t.iter().all(|h| o <= h.last_seen)),
    }
}

#[test]
fn added_moved_ip_added() {
    let mut t = HostTable::default();
    let t0 = Instant::now();
    assert_eq!(
        t.observe(mac(1), None, ap(1, 1), Some(v4(1)), t0),
        Some(HostEvent::Added {
            key: key(1, None),
            ap: ap(1, 1)
        })
    );
    assert_eq!(t.observe(mac(1), None, ap(1, 1), Some(v4(1)), t0), None);
    assert_eq!(t.observe(mac(1), None, ap(1, 1), None, t0 + secs(1)), None);
    assert_eq!(
        t.observe(mac(1), None, ap(1, 1), Some(v6(1)), t0 + secs(2)),
        Some(HostEvent::IpAdded {
            key: key(1, None),
            ip: v6(1),
            from: None
        })
    );
    assert_eq!(
        t.observe(mac(1), None, ap(2, 5), None, t0 + secs(3)),
        Some(HostEvent::Moved {
            key: key(1, None),
            from: ap(1, 1),
            to: ap(2, 5)
        })
    );
    // A move with a new address reports the move; the address is there all the same.
    assert_eq!(
        t.observe(mac(1), None, ap(1, 1), Some(v4(2)), t0 + secs(4)),
        Some(HostEvent::Moved {
            key: key(1, None),
            from: ap(2, 5),
            to: ap(1, 1)
        })
    );
    let h = t.get(mac(1), None).unwrap();
    assert_eq!(h.ips(), &[v4(1), v6(1), v4(2)]);
    assert_eq!(
        h.ipv4().collect::<Vec<_>>(),
        [v4(1), v4(2)].map(|a| match a {
            IpAddr::V4(a) => a,
            _ => unreachable!(),
        })
    );
    assert_eq!(h.ipv6().count(), 1);
    assert_eq!((h.first_seen(), h.last_seen()), (t0, t0 + secs(4)));
    assert_eq!(h.attachment_point(), ap(1, 1));
    assert_eq!(t.len(), 1);
    check(&t);
}

#[test]
fn one_mac_on_several_vlans() {
    let mut t = HostTable::default();
    let t0 = Instant::now();
    for vlan in [None, Some(10), Some(20)] {
        assert!(matches!(
            t.observe(mac(1), vlan, ap(1, 1), None, t0),
            Some(HostEvent::Added { .. })
        ));
    }
    t.observe(mac(2), Some(10), ap(1, 2), None, t0);
    check(&t);
    assert_eq!(t.len(), 4);
    let vlans: BTreeSet<_> = t.by_mac(mac(1)).map(|h| h.vlan()).collect();
    assert_eq!(vlans, [None, Some(10), Some(20)].into_iter().collect());
    assert_eq!(t.by_mac(mac(3)).count(), 0);
    // Unlink from the middle, the head and the tail of the chain.
    for vlan in [Some(10), Some(20), None] {
        let h = t.remove(mac(1), vlan).unwrap();
        assert_eq!(h.vlan(), vlan);
        assert!(t.get(mac(1), vlan).is_none());
        check(&t);
    }
    assert_eq!(t.by_mac(mac(1)).count(), 0);
    assert_eq!(t.len(), 1);
    assert!(t.remove(mac(1), None).is_none());
}

#[test]
fn vlan_zero_is_untagged() {
    let mut t = HostTable::default();
    let t0 = Instant::now();
    t.observe(mac(1), Some(0), ap(1, 1), None, t0);
    assert_eq!(t.get(mac(1), None).unwrap().vlan(), None);
    assert!(t.get(mac(1), Some(0)).is_some());
    assert_eq!(t.observe(mac(1), None, ap(1, 1), None, t0), None);
    assert_eq!(t.len(), 1);
}

#[test]
fn ignored_sources() {
    let mut t = HostTable::default();
    let t0 = Instant::now();
    for m in [
        MacAddr::ZERO,
        MacAddr::BROADCAST,
        MacAddr([1, 0, 0x5e, 0, 0, 1]),
    ] {
        assert_eq!(t.observe(m, None, ap(1, 1), Some(v4(1)), t0), None);
    }
    assert!(t.is_empty());
    // A host that says nothing about its address is still a host.
    let nameless = [
        "0.0.0.0",
        "255.255.255.255",
        "127.0.0.1",
        "224.0.0.251",
        "::",
        "::1",
        "ff02::1",
    ];
    for (i, ip) in nameless.iter().enumerate() {
        let ip: IpAddr = ip.parse().unwrap();
        assert!(t
            .observe(mac(i as u8 + 1), None, ap(1, 1), Some(ip), t0)
            .is_some());
        assert!(t.by_ip(ip).is_none(), "{ip}");
    }
    assert_eq!(t.len(), nameless.len());
    assert!(t.iter().all(|h| h.ips().is_empty()));
    check(&t);
}

#[test]
fn address_taken_over() {
    let mut t = HostTable::default();
    let t0 = Instant::now();
    t.observe(mac(1), None, ap(1, 1), Some(v4(1)), t0);
    t.observe(mac(1), None, ap(1, 1), Some(v6(1)), t0);
    assert_eq!(
        t.observe(mac(2), None, ap(1, 2), Some(v4(1)), t0),
        Some(HostEvent::Added {
            key: key(2, None),
            ap: ap(1, 2)
        })
    );
    assert_eq!(t.by_ip(v4(1)).unwrap().mac(), mac(2));
    assert_eq!(t.get(mac(1), None).unwrap().ips(), &[v6(1)]);
    check(&t);
    // And back, reported as such.
    assert_eq!(
        t.observe(mac(1), None, ap(1, 1), Some(v4(1)), t0),
        Some(HostEvent::IpAdded {
            key: key(1, None),
            ip: v4(1),
            from: Some(key(2, None))
        })
    );
    assert!(t.get(mac(2), None).unwrap().ips().is_empty());
    // The same MAC on another VLAN is another host.
    assert_eq!(
        t.observe(mac(1), Some(7), ap(1, 1), Some(v6(1)), t0),
        Some(HostEvent::Added {
            key: key(1, Some(7)),
            ap: ap(1, 1)
        })
    );
    assert_eq!(t.by_ip(v6(1)).unwrap().vlan(), Some(7));
    assert_eq!(t.get(mac(1), None).unwrap().ips(), &[v4(1)]);
    check(&t);
}

#[test]
fn an_address_changing_hands_too_often_is_contested_and_stays_put() {
    let mut t = HostTable::default();
    let t0 = Instant::now();
    // Host 1 has it; hosts 2..=9 take it in turn: eight changes of hands, allowed.
    for m in 1..=9 {
        t.observe(mac(m), None, ap(1, m.into()), Some(v4(1)), t0);
        assert_eq!(t.by_ip(v4(1)).unwrap().mac(), mac(m));
    }
    assert_eq!(t.contested(), 0);
    // The ninth within the window is refused: the host is added, the address stays.
    assert_eq!(
        t.observe(mac(10), None, ap(1, 10), Some(v4(1)), t0),
        Some(HostEvent::Added {
            key: key(10, None),
            ap: ap(1, 10)
        })
    );
    assert_eq!(t.contested(), 1);
    assert_eq!(t.by_ip(v4(1)).unwrap().mac(), mac(9));
    assert!(t.get(mac(10), None).unwrap().ips().is_empty());
    // Seen again: nothing to write (the address is contested and another's).
    let fresh = Duration::from_millis(100);
    assert!(t.is_current(mac(10), None, ap(1, 10), &[Some(v4(1))], t0, fresh));
    assert_eq!(t.observe(mac(10), None, ap(1, 10), Some(v4(1)), t0), None);
    assert_eq!(t.contested(), 2);
    check(&t);
    // Once the window has passed, the address may move again.
    let later = t0 + IP_MOVE_WINDOW * 2;
    assert!(!t.is_current(mac(10), None, ap(1, 10), &[Some(v4(1))], later, secs(5)));
    assert_eq!(
        t.observe(mac(10), None, ap(1, 10), Some(v4(1)), later),
        Some(HostEvent::IpAdded {
            key: key(10, None),
            ip: v4(1),
            from: Some(key(9, None))
        })
    );
    check(&t);
}

#[test]
fn is_current_says_when_observe_would_change_nothing() {
    let mut t = HostTable::default();
    let t0 = Instant::now();
    let fresh = secs(1);
    assert!(
        !t.is_current(mac(1), None, ap(1, 1), &[None], t0, fresh),
        "unknown"
    );
    t.observe(mac(1), None, ap(1, 1), Some(v4(1)), t0);
    let soon = t0 + fresh / 2;
    assert!(t.is_current(mac(1), None, ap(1, 1), &[Some(v4(1)), None], soon, fresh));
    assert!(
        t.is_current(mac(1), Some(0), ap(1, 1), &[None], soon, fresh),
        "VLAN 0 is untagged"
    );
    // Seen unspecified (an ARP probe): nothing to record either.
    let probe = Some(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    assert!(t.is_current(mac(1), None, ap(1, 1), &[probe], soon, fresh));
    // A move, a new address, another VLAN, or a sighting too old to skip: a write.
    assert!(!t.is_current(mac(1), None, ap(1, 2), &[None], soon, fresh));
    assert!(!t.is_current(mac(1), None, ap(1, 1), &[Some(v4(2))], soon, fresh));
    assert!(!t.is_current(mac(1), Some(5), ap(1, 1), &[None], soon, fresh));
    assert!(!t.is_current(mac(1), None, ap(1, 1), &[None], t0 + fresh, fresh));
}

#[test]
fn addresses_are_bounded_least_recent_first() {
    let mut t = HostTable::default();
    let t0 = Instant::now();
    for n in 1..=8u8 {
        t.observe(mac(1), None, ap(1, 1), Some(v4(n)), t0);
        t.observe(mac(1), None, ap(1, 1), Some(v6(n.into())), t0);
    }
    assert_eq!(t.get(mac(1), None).unwrap().ips().len(), 16);
    // 10.0.0.1 seen again: now the most recent, so 10.0.0.2 goes when a ninth comes.
    assert_eq!(t.observe(mac(1), None, ap(1, 1), Some(v4(1)), t0), None);
    assert_eq!(
        t.observe(mac(1), None, ap(1, 1), Some(v4(9)), t0),
        Some(HostEvent::IpAdded {
            key: key(1, None),
            ip: v4(9),
            from: None
        })
    );
    let h = t.get(mac(1), None).unwrap();
    assert_eq!(h.ipv4().count(), 8);
    assert_eq!(h.ipv6().count(), 8, "the other family is untouched");
    assert!(t.by_ip(v4(2)).is_none());
    assert_eq!(t.by_ip(v4(1)).unwrap().mac(), mac(1));
    assert_eq!(*t.get(mac(1), None).unwrap().ips().last().unwrap(), v4(9));
    check(&t);
}

#[test]
fn expiry() {
    let mut t = HostTable::default();
    let t0 = Instant::now();
    let idle = secs(300);
    assert!(t.expire(t0, idle).is_empty());
    t.observe(mac(1), None, ap(1, 1), Some(v4(1)), t0);
    t.observe(mac(2), None, ap(1, 2), Some(v4(2)), t0 + secs(10));
    assert!(t.expire(t0 + secs(299), idle).is_empty());
    // Seen again: the bound is now stale, the scan finds nothing and fixes it.
    t.observe(mac(1), None, ap(1, 1), None, t0 + secs(100));
    assert_eq!(t.oldest, Some(t0));
    assert!(t.expire(t0 + secs(300), idle).is_empty());
    assert_eq!(t.oldest, Some(t0 + secs(10)));
    check(&t);
    // Exactly max_idle after the last sighting: gone, with its address.
    let events = t.expire(t0 + secs(310), idle);
    assert_eq!(events.len(), 1);
    let HostEvent::Removed { host } = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!((host.mac(), host.ips()), (mac(2), &[v4(2)][..]));
    assert!(t.by_ip(v4(2)).is_none());
    assert_eq!(t.len(), 1);
    check(&t);
    assert_eq!(t.expire(t0 + secs(400), idle).len(), 1);
    assert!(t.is_empty());
    assert_eq!(t.oldest, None);
    assert!(t.slots.is_empty(), "an empty table gives its slots back");
    check(&t);
    // A max_idle too long to add to an Instant expires nothing.
    t.observe(mac(1), None, ap(1, 1), None, t0);
    assert!(t.expire(t0 + secs(1_000_000), Duration::MAX).is_empty());
    assert_eq!(t.expire(t0 + secs(1), Duration::ZERO).len(), 1);
}

#[test]
fn time_does_not_go_back() {
    let mut t = HostTable::default();
    let t0 = Instant::now();
    t.observe(mac(1), None, ap(1, 1), None, t0 + secs(10));
    t.observe(mac(1), None, ap(1, 1), None, t0);
    assert_eq!(t.get(mac(1), None).unwrap().last_seen(), t0 + secs(10));
    // A new host seen "earlier" lowers the bound.
    t.observe(mac(2), None, ap(1, 1), None, t0);
    assert_eq!(t.oldest, Some(t0));
    assert_eq!(t.expire(t0 + secs(5), secs(5)).len(), 1);
    check(&t);
}

#[test]
fn ports_that_become_links_and_switches_that_leave() {
    let mut t = HostTable::default();
    let t0 = Instant::now();
    for (m, dpid, port) in [(1, 1, 1), (2, 1, 1), (3, 1, 2), (4, 2, 1), (5, 2, 2)] {
        t.observe(mac(m), None, ap(dpid, port), Some(v4(m)), t0);
    }
    t.observe(mac(2), Some(5), ap(1, 1), None, t0);
    let removed: BTreeSet<_> = t
        .remove_attached_to(Dpid(1), 1)
        .into_iter()
        .map(|e| match e {
            HostEvent::Removed { host } => host.key(),
            e => panic!("{e:?}"),
        })
        .collect();
    assert_eq!(
        removed,
        [key(1, None), key(2, None), key(2, Some(5))]
            .into_iter()
            .collect()
    );
    assert!(t.by_ip(v4(1)).is_none());
    check(&t);
    assert!(t.remove_attached_to(Dpid(1), 1).is_empty());
    assert_eq!(t.remove_switch(Dpid(2)).len(), 2);
    assert_eq!(t.iter().map(|h| h.mac()).collect::<Vec<_>>(), [mac(3)]);
    check(&t);
}

#[test]
fn full_table_refuses_new_hosts() {
    let mut t = HostTable::new(Limits {
        max_hosts: 2,
        ..Limits::default()
    });
    let t0 = Instant::now();
    t.observe(mac(1), None, ap(1, 1), None, t0);
    t.observe(mac(2), None, ap(1, 1), None, t0);
    assert_eq!(t.observe(mac(3), None, ap(1, 1), Some(v4(3)), t0), None);
    assert_eq!(t.observe(mac(3), None, ap(1, 1), None, t0), None);
    assert_eq!((t.len(), t.refused()), (2, 2));
    // What a sighting would do, told without a write: refused (new, and full), a
    // change (a known host elsewhere), nothing (a group source address).
    let (fresh, none) = (secs(1), [None]);
    assert_eq!(
        t.sighting(mac(3), None, ap(1, 1), &none, t0, fresh),
        Sighting::Refused
    );
    assert_eq!(
        t.sighting(mac(1), None, ap(1, 2), &none, t0, fresh),
        Sighting::Change
    );
    let group = MacAddr([1, 0, 0x5e, 0, 0, 1]);
    assert_eq!(
        t.sighting(group, None, ap(1, 1), &none, t0, fresh),
        Sighting::Current
    );
    assert!(t.by_ip(v4(3)).is_none());
    // Known hosts are still followed.
    assert!(matches!(
        t.observe(mac(1), None, ap(1, 2), None, t0),
        Some(HostEvent::Moved { .. })
    ));
    t.remove(mac(2), None);
    assert!(t.observe(mac(3), None, ap(1, 1), None, t0).is_some());
    check(&t);
}

#[test]
fn slots_are_reused() {
    let mut t = HostTable::default();
    let t0 = Instant::now();
    for m in 0..50 {
        t.observe(mac(m + 1), None, ap(1, 1), None, t0);
    }
    for round in 1..10 {
        let prev = (round > 1).then_some(round - 1);
        for m in 0..25 {
            assert!(t.remove(mac(m + 1), prev).is_some());
        }
        for m in 0..25 {
            t.observe(mac(m + 1), Some(round), ap(1, 1), None, t0);
        }
        check(&t);
    }
    assert_eq!(t.slots.len(), 50);
}

#[derive(Debug, Clone)]
enum Op {
    Observe {
        mac: u8,
        vlan: u8,
        dpid: u8,
        port: u8,
        ip: Option<u8>,
        /// Read the clock this many seconds late (another thread's `now`).
        late: u8,
    },
    Tick(u8),
    Expire(u8),
    RemovePort(u8, u8),
    RemoveSwitch(u8),
    Remove(u8, u8),
}

/// Operations on the MACs `0..macs` (0 is the all-zero MAC): with few MACs, hosts fill
/// their address families; with many, the table fills up.
fn op(macs: u8) -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => (0u8..macs, 0u8..3, 1u8..4, 1u8..4, proptest::option::weighted(0.9, 0u8..26), 0u8..3)
            .prop_map(|(mac, vlan, dpid, port, ip, late)| Op::Observe { mac, vlan, dpid, port, ip, late }),
        2 => (0u8..20).prop_map(Op::Tick),
        2 => (0u8..200).prop_map(Op::Expire),
        1 => (1u8..6, 1u8..4).prop_map(|(d, p)| Op::RemovePort(d, p)),
        1 => (1u8..6).prop_map(Op::RemoveSwitch),
        1 => (0u8..macs, 0u8..3).prop_map(|(m, v)| Op::Remove(m, v)),
    ]
}

/// A small pool, so that hosts fight over addresses and fill their families: 0 is
/// 0.0.0.0 (ignored), 1..=12 IPv4, 13..=25 IPv6.
fn pool_ip(n: u8) -> IpAddr {
    match n {
        0 => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        1..=12 => v4(n),
        _ => v6(n.into()),
    }
}

/// 0 is the all-zero MAC (ignored), 1..=6 hosts.
fn pool_mac(m: u8) -> MacAddr {
    if m == 0 {
        MacAddr::ZERO
    } else {
        mac(m)
    }
}

fn pool_vlan(v: u8) -> Option<u16> {
    [None, Some(0), Some(100)][v as usize]
}

proptest! {
    /// After any sequence of operations, the indexes agree with the hosts (see
    /// `check`), and each operation did what it says.
    #[test]
    fn indexes_agree(
        max_ips in 0usize..4,
        ops in (2u8..8).prop_flat_map(|macs| proptest::collection::vec(op(macs), 1..200))
    ) {
        // Up to seven MACs on two VLANs (VLAN 0 is untagged): room for ten hosts.
        let mut t = HostTable::new(Limits { max_hosts: 10, max_ips_per_family: max_ips });
        let base = Instant::now();
        let mut clock = secs(10);
        for op in ops {
            match op {
                Op::Observe { mac: m, vlan, dpid, port, ip, late } => {
                    let m = pool_mac(m);
                    let vlan = pool_vlan(vlan);
                    let at = ap(dpid.into(), port.into());
                    let ip = ip.map(pool_ip);
                    let now = base + clock - secs(late.into());
                    let before = t.get(m, vlan).cloned();
                    let full = t.len() == 10;
                    let refused = t.refused();
                    let contested = t.contested();
                    let owner = ip.and_then(|ip| t.by_ip(ip)).map(Host::key);
                    let event = t.observe(m, vlan, at, ip, now);
                    // A claim of a contested address was refused: it stayed with its owner.
                    let kept = t.contested() > contested;
                    if kept {
                        let ip = ip.expect("only an address is refused");
                        let claimant = HostKey { mac: m, vlan: vlan.filter(|&v| v != 0) };
                        prop_assert!(owner.is_some_and(|o| o != claimant), "{:?} kept from {:?}", owner, claimant);
                        prop_assert_eq!(t.by_ip(ip).map(Host::key), owner);
                    }
                    let after = t.get(m, vlan);
                    match (&before, after) {
                        _ if m == MacAddr::ZERO => {
                            prop_assert_eq!(event, None);
                            prop_assert!(after.is_none());
                        }
                        (None, None) => {
                            prop_assert!(full);
                            prop_assert_eq!(t.refused(), refused + 1);
                            prop_assert_eq!(event, None);
                        }
                        (None, Some(h)) => {
                            prop_assert!(matches!(event, Some(HostEvent::Added { .. })), "{:?}", event);
                            prop_assert_eq!((h.first_seen(), h.last_seen()), (now, now));
                        }
                        (Some(b), Some(h)) => {
                            prop_assert_eq!(h.last_seen(), b.last_seen().max(now));
                            prop_assert_eq!(h.first_seen(), b.first_seen());
                            if b.attachment_point() != at {
                                prop_assert!(matches!(event, Some(HostEvent::Moved { .. })), "{:?}", event);
                            } else {
                                let new_ip = ip.filter(|ip| meaningful(ip) && !b.ips().contains(ip) && max_ips > 0 && !kept);
                                prop_assert_eq!(
                                    matches!(event, Some(HostEvent::IpAdded { .. })),
                                    new_ip.is_some()
                                );
                                prop_assert_eq!(event.is_none(), new_ip.is_none());
                            }
                        }
                        (Some(_), None) => prop_assert!(false, "host vanished"),
                    }
                    if let Some(h) = t.get(m, vlan) {
                        prop_assert_eq!(h.attachment_point(), at);
                        if let Some(ip) = ip.filter(|ip| meaningful(ip) && max_ips > 0 && !kept) {
                            prop_assert_eq!(t.by_ip(ip).map(|o| o.key()), Some(h.key()));
                            prop_assert_eq!(h.ips().last(), Some(&ip));
                        }
                    }
                }
                Op::Tick(s) => clock += secs(s.into()),
                Op::Expire(idle) => {
                    let now = base + clock;
                    let idle = secs(idle.into());
                    let len = t.len();
                    let events = t.expire(now, idle);
                    prop_assert_eq!(t.len(), len - events.len());
                    for e in &events {
                        let HostEvent::Removed { host } = e else { panic!("{e:?}") };
                        prop_assert!(idle_for(host, now, idle));
                        prop_assert!(t.get(host.mac(), host.vlan()).is_none());
                    }
                    prop_assert!(t.iter().all(|h| !idle_for(h, now, idle)));
                }
                Op::RemovePort(d, p) => {
                    let at = ap(d.into(), p.into());
                    let n = t.iter().filter(|h| h.attachment_point() == at).count();
                    prop_assert_eq!(t.remove_attached_to(Dpid(d.into()), p.into()).len(), n);
                    prop_assert!(t.iter().all(|h| h.attachment_point() != at));
                }
                Op::RemoveSwitch(d) => {
                    let n = t.iter().filter(|h| h.attachment_point().dpid == Dpid(u64::from(d))).count();
                    prop_assert_eq!(t.remove_switch(Dpid(d.into())).len(), n);
                }
                Op::Remove(m, v) => {
                    let existed = t.get(pool_mac(m), pool_vlan(v)).is_some();
                    prop_assert_eq!(t.remove(pool_mac(m), pool_vlan(v)).is_some(), existed);
                }
            }
            check(&t);
        }
    }
}
