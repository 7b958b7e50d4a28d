//! The `Devices` service: the host table, for every other app.
//!
//! Lookups take a read lock ([`Devices::attachment`] allocates nothing, for the
//! forwarding hot path; [`Devices::sighting`] lets the device app skip the write
//! for a host it knows already); the device app changes the table through
//! [`Devices::update`], which tells the subscribers what changed, in order.
//!
//! **Looking ahead.** In the default set a PACKET_IN meets the table twice: the
//! device app asks about its sender, then routing asks where its destination is. The
//! device app passes the destination along ([`Devices::sighting`]'s `ahead`), and the
//! answer, taken under the same read lock, waits in a per-thread memo that
//! [`Devices::attachment`] gives back while the table has not changed since (a write
//! counter, read without a lock): one lock instead of two per PACKET_IN, the same
//! answers. Refusals by a full table are counted per thread, without a locked
//! instruction ([`Devices::refuse`]). Under cbench's load these were a tenth of the
//! default set's time (BENCHMARKS.md, issue 10).
//!
//! **Without the lock.** A full table (a flag set under the write lock) answers for
//! an address it does not hold by the MAC index's filter (`mac_index`), read without
//! the lock: a sender the filter turns away is refused, and a destination it turns
//! away is nowhere. Under cbench's load nearly every sender and destination is
//! unknown to a full table, and the read lock's two locked instructions per PACKET_IN
//! were then about 3% of the default set's PACKET_INs/s (BENCHMARKS.md, issue 10). A
//! table with room mostly finds what it is asked for (it learns every sender), and
//! asks under the lock as before (`mac_index` says why).

use std::cell::Cell;
use std::net::IpAddr;
use std::sync::atomic::{
    AtomicBool, AtomicU64, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
    Ordering::SeqCst,
};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use openflow::MacAddr;

use super::table::{AttachmentPoint, Host, HostEvent, HostTable, Limits, Sighting};
use crate::net::mac_index::Hint;
use controller::app::{Publisher, Subscribers};

/// The service (see the module doc).
pub struct Devices {
    table: RwLock<HostTable>,
    subscribers: Subscribers<HostEvent>,
    /// New hosts refused by a full table without the write lock ([`Devices::refuse`]),
    /// besides those the table counted itself ([`HostTable::refused`]): under a flood
    /// of new source addresses, a full table must not make every PACKET_IN a write.
    /// One counter per thread that refused, each written by its thread alone.
    refused: Mutex<Vec<Arc<AtomicU64>>>,
    /// Calls of [`Devices::update`] (write locks taken) so far: what the device app's
    /// read-locked fast paths are there to keep low, so tests can see they do. Also
    /// the table's version for the look-ahead memo: raised under the write lock
    /// before the table changes.
    writes: AtomicU64,
    /// This instance's number, so that a memo is never taken for another's.
    id: u64,
    /// The table's prefetch hint ([`Devices::prefetch`]), whose filter also answers
    /// for addresses the table does not hold without the lock (module doc).
    hint: Arc<Hint>,
    /// Whether the table holds `max_hosts` hosts (a new one would be refused): set
    /// under the write lock after each change, read without it.
    full: AtomicBool,
    /// Read locks taken (tests count them).
    #[cfg(test)]
    reads: AtomicU64,
}

/// Instances numbered so far.
static INSTANCES: AtomicU64 = AtomicU64::new(0);

/// An answer looked up ahead (see the module doc).
#[derive(Debug, Clone, Copy, Default)]
struct Ahead {
    /// The [`Devices`] instance (0: none yet) and its `writes` when taken.
    id: u64,
    version: u64,
    mac: MacAddr,
    vlan: Option<u16>,
    found: Option<AttachmentPoint>,
}

thread_local! {
    // Const-initialized: no lazy-initialization check on each use (the memo is read
    // on every PACKET_IN routing handles).
    static AHEAD: Cell<Ahead> = const {
        Cell::new(Ahead {
            id: 0,
            version: 0,
            mac: MacAddr::ZERO,
            vlan: None,
            found: None,
        })
    };
    /// This thread's refusal counter, for the instance numbered `.0`.
    static REFUSED: Cell<Option<(u64, *const AtomicU64)>> = const { Cell::new(None) };
}

impl std::fmt::Debug for Devices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Devices")
            .field("hosts", &self.len())
            .finish_non_exhaustive()
    }
}

impl Default for Devices {
    fn default() -> Devices {
        Devices::new(Limits::default())
    }
}

impl Devices {
    pub fn new(limits: Limits) -> Devices {
        let table = HostTable::new(limits);
        Devices {
            hint: table.prefetch_hint(),
            full: AtomicBool::new(table.len() >= table.limits().max_hosts),
            table: RwLock::new(table),
            subscribers: Subscribers::default(),
            refused: Mutex::new(Vec::new()),
            writes: AtomicU64::new(0),
            id: INSTANCES.fetch_add(1, Relaxed) + 1,
            #[cfg(test)]
            reads: AtomicU64::new(0),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HostTable> {
        #[cfg(test)]
        self.reads.fetch_add(1, Relaxed);
        self.table.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Where the host with this MAC (on this VLAN) is attached: (dpid, port). From
    /// this thread's look-ahead memo when it holds this question and the table has not
    /// changed since (see the module doc), else under the read lock.
    pub fn attachment(&self, mac: MacAddr, vlan: Option<u16>) -> Option<AttachmentPoint> {
        let a = AHEAD.get();
        if a.id == self.id && a.mac == mac && a.vlan == vlan && a.version == self.version() {
            return a.found;
        }
        if self.full.load(Acquire) && !self.hint.may_hold(mac) {
            return None;
        }
        attachment_in(&self.read(), mac, vlan)
    }

    /// Asks the CPU for the memory a look-up of `mac` reads first, without the lock:
    /// for a PACKET_IN still in the read buffer (`Builder::prefetch_packet_in`), so that
    /// its look-ups' cache misses overlap the work on the ones before it. Only a hint.
    #[inline]
    pub fn prefetch(&self, mac: MacAddr) {
        self.hint.prefetch(mac);
    }

    /// [`Devices::prefetch`] for the addresses of a raw frame that a look-up will ask
    /// for: its sender's (the device app's) and its destination's (routing's), unless
    /// a group address or the frame is too short.
    #[inline]
    pub fn prefetch_frame(&self, frame: &[u8]) {
        if let (Some(dst), Some(src)) = (frame.get(..6), frame.get(6..12)) {
            for m in [src, dst] {
                let m = MacAddr(m.try_into().expect("six bytes"));
                if !m.is_multicast() {
                    self.prefetch(m);
                }
            }
        }
    }

    /// The table's version: raised before every change (SeqCst: a thread that has
    /// seen a change made elsewhere sees the version raised).
    fn version(&self) -> u64 {
        self.writes.load(SeqCst)
    }

    /// [`HostTable::sighting`], under the read lock: the device app's common cases (a
    /// known host at its known place; a new host when the table is full) answered
    /// without the write lock. With `ahead`, also where that host is attached, for
    /// this thread's next [`Devices::attachment`] of it (see the module doc).
    // The table's question and the look-ahead, for one caller: a struct to bundle
    // them would add a type and no clarity.
    #[allow(clippy::too_many_arguments)]
    pub fn sighting(
        &self,
        mac: MacAddr,
        vlan: Option<u16>,
        ap: AttachmentPoint,
        ips: &[Option<IpAddr>],
        now: Instant,
        fresh: Duration,
        ahead: Option<(MacAddr, Option<u16>)>,
    ) -> Sighting {
        // A full table: a sender it does not hold, by its filter, is refused without
        // the lock (module doc). The look-ahead is left to `attachment`, which asks
        // the filter too.
        if self.full.load(Acquire)
            && !mac.is_multicast()
            && mac != MacAddr::ZERO
            && !self.hint.may_hold(mac)
        {
            return Sighting::Refused;
        }
        let t = self.read();
        if let Some((mac, vlan)) = ahead {
            // Under the read lock no write is under way: the version is the table's.
            AHEAD.set(Ahead {
                id: self.id,
                version: self.version(),
                mac,
                vlan,
                found: attachment_in(&t, mac, vlan),
            });
        }
        t.sighting(mac, vlan, ap, ips, now, fresh)
    }

    /// Counts a new host refused by the full table, as [`HostTable::observe`] would,
    /// for a [`Sighting::Refused`] answered without the write lock: in this thread's
    /// counter, which only this thread writes (a load and a store, no locked
    /// instruction).
    pub fn refuse(&self) {
        let counter = match REFUSED.get() {
            Some((id, c)) if id == self.id => c,
            _ => {
                let c = Arc::new(AtomicU64::new(0));
                let at = Arc::as_ptr(&c);
                self.refused
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(c);
                REFUSED.set(Some((self.id, at)));
                at
            }
        };
        // SAFETY: `counter` points into an Arc this instance keeps in `refused` until
        // it is dropped, and the memo names this instance (`id`), which is alive: we
        // are in its method.
        let c = unsafe { &*counter };
        c.store(c.load(Relaxed) + 1, Relaxed);
    }

    /// New hosts refused so far because the table was full.
    pub fn refused(&self) -> u64 {
        let threads = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        threads.iter().map(|c| c.load(Relaxed)).sum::<u64>() + self.read().refused()
    }

    /// The hosts with this MAC (one per VLAN it was seen on).
    pub fn by_mac(&self, mac: MacAddr) -> Vec<Host> {
        self.read().by_mac(mac).cloned().collect()
    }

    /// The host that has this address.
    pub fn by_ip(&self, ip: IpAddr) -> Option<Host> {
        self.read().by_ip(ip).cloned()
    }

    /// Every host.
    pub fn all(&self) -> Vec<Host> {
        self.read().iter().cloned().collect()
    }

    /// Calls of [`Devices::update`] so far (each takes the write lock).
    pub fn writes(&self) -> u64 {
        self.writes.load(Relaxed)
    }

    /// How many hosts are tracked.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` for every change, on the thread that made it, after the table changed.
    /// Keep it quick and do not call [`Devices::update`] from it (deadlock). For callers
    /// outside the pipeline (tests, tools): a panic in `f` unwinds into the device app.
    /// Apps subscribe with `Builder::subscribe::<Devices, _>`, under their own guard.
    pub fn subscribe(&self, f: Box<dyn Fn(&HostEvent) + Send + Sync>) {
        self.subscribers.subscribe(f);
    }

    /// For the device app: changes the table under the write lock, then tells the
    /// subscribers about the events `change` returns, in order. Returns them.
    pub fn update(&self, change: impl FnOnce(&mut HostTable) -> Vec<HostEvent>) -> Vec<HostEvent> {
        self.subscribers.publish(|| {
            let mut t = self.table.write().unwrap_or_else(|e| e.into_inner());
            // Before the change, under the lock: a memo taken at the old version is
            // from before it (see the module doc).
            self.writes.fetch_add(1, SeqCst);
            let events = change(&mut t);
            let full = t.len() >= t.limits().max_hosts;
            if self.full.load(Relaxed) != full {
                self.full.store(full, Release);
            }
            events
        })
    }
}

/// Where the host is attached, in `t`.
fn attachment_in(t: &HostTable, mac: MacAddr, vlan: Option<u16>) -> Option<AttachmentPoint> {
    t.get(mac, vlan).map(|h| h.attachment_point())
}

impl Publisher<HostEvent> for Devices {
    fn subscribers(&self) -> &Subscribers<HostEvent> {
        &self.subscribers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openflow::Dpid;
    use std::sync::{Arc, Mutex};

    fn learn(d: &Devices, mac: MacAddr, port: u32) {
        let ap = AttachmentPoint::new(1, port);
        d.update(|t| {
            t.observe(mac, None, ap, None, Instant::now())
                .into_iter()
                .collect()
        });
    }

    fn sight(d: &Devices, mac: MacAddr, ahead: MacAddr) -> Sighting {
        let ap = AttachmentPoint::new(1, 1);
        let fresh = Duration::from_secs(60);
        d.sighting(
            mac,
            None,
            ap,
            &[],
            Instant::now(),
            fresh,
            Some((ahead, None)),
        )
    }

    #[test]
    fn the_destination_looked_up_ahead_is_answered_without_a_lock_until_the_table_changes() {
        let d = Devices::new(Limits::default());
        let (a, b, c) = (
            MacAddr([2, 0, 0, 0, 0, 1]),
            MacAddr([2, 0, 0, 0, 0, 2]),
            MacAddr([2, 0, 0, 0, 0, 3]),
        );
        learn(&d, a, 1);
        learn(&d, b, 2);
        sight(&d, a, b);
        let reads = d.reads.load(Relaxed);
        assert_eq!(d.attachment(b, None), Some(AttachmentPoint::new(1, 2)));
        assert_eq!(d.reads.load(Relaxed), reads, "answered from the memo");
        // Another question, or the same one on another VLAN: the lock.
        assert_eq!(d.attachment(a, None), Some(AttachmentPoint::new(1, 1)));
        assert_eq!(d.attachment(b, Some(7)), None);
        assert_eq!(d.reads.load(Relaxed), reads + 2);
        // Looked up ahead while unknown, then learned: the memo is stale, not used.
        sight(&d, a, c);
        learn(&d, c, 3);
        assert_eq!(d.attachment(c, None), Some(AttachmentPoint::new(1, 3)));
        // Moved after the look-ahead: the new place.
        sight(&d, a, b);
        learn(&d, b, 4);
        assert_eq!(d.attachment(b, None), Some(AttachmentPoint::new(1, 4)));
        // Another instance never takes this one's memo.
        let other = Devices::new(Limits::default());
        sight(&d, a, b);
        assert_eq!(other.attachment(b, None), None);
        // Nor another thread.
        std::thread::scope(|s| {
            s.spawn(|| {
                let reads = d.reads.load(Relaxed);
                assert_eq!(d.attachment(b, None), Some(AttachmentPoint::new(1, 4)));
                assert_eq!(d.reads.load(Relaxed), reads + 1);
            });
        });
    }

    /// What the filter is for here: while the table is full, a sender or destination
    /// it does not hold is answered without the lock (refused, nowhere); held ones are
    /// answered as before, and once it has room again a new sender is a change to make.
    #[test]
    fn addresses_the_table_does_not_hold_are_answered_without_the_lock() {
        let d = Devices::new(Limits {
            max_hosts: 100,
            ..Limits::default()
        });
        let held = |n: u32| MacAddr([2, 0, 0, 0, 0, n as u8]);
        let new = |n: u32| MacAddr([4, 0, 0, (n >> 16) as u8, (n >> 8) as u8, n as u8]);
        // All at port 1 (where `sight` sees them) but the last, at port 100.
        for n in 1..=99 {
            learn(&d, held(n), 1);
        }
        // Room for one more: an unknown sender is a change to make, found so under
        // the lock (a table with room mostly finds what it is asked for).
        let reads = d.reads.load(Relaxed);
        let changes = (0..1000)
            .filter(|&n| sight(&d, new(n), new(n + 1)) == Sighting::Change)
            .count();
        assert_eq!(changes, 1000);
        assert_eq!(d.reads.load(Relaxed) - reads, 1000);
        learn(&d, held(100), 100);
        // Full: refused, mostly without the lock; destinations unknown, likewise.
        let reads = d.reads.load(Relaxed);
        for n in 0..1000 {
            assert_eq!(sight(&d, new(n), new(n + 1)), Sighting::Refused);
            assert_eq!(d.attachment(new(n + 1), None), None);
        }
        let locked = d.reads.load(Relaxed) - reads;
        assert!(locked < 300, "{locked} of 2,000 look-ups took the lock");
        // Held hosts: found, under the lock.
        for n in 1..=99 {
            assert_eq!(sight(&d, held(n), held(n + 1)), Sighting::Current);
            assert_eq!(
                d.attachment(held(n), None),
                Some(AttachmentPoint::new(1, 1))
            );
        }
        assert_eq!(
            d.attachment(held(100), None),
            Some(AttachmentPoint::new(1, 100))
        );
        // One gone: room again, so a new sender is a change, not a refusal.
        d.update(|t| t.remove_attached_to(Dpid(1), 100));
        assert_eq!(sight(&d, new(5000), held(1)), Sighting::Change);
        assert_eq!(d.attachment(held(100), None), None);
    }

    #[test]
    fn refusals_counted_per_thread_add_up() {
        let d = Devices::new(Limits::default());
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        d.refuse();
                    }
                });
            }
        });
        d.refuse();
        assert_eq!(d.refused(), 4001);
        // A second instance on the same thread counts apart.
        let e = Devices::new(Limits::default());
        e.refuse();
        d.refuse();
        assert_eq!((d.refused(), e.refused()), (4002, 1));
    }

    #[test]
    fn lookups_see_updates_and_subscribers_hear_of_them() {
        let devices = Devices::new(Limits::default());
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&heard);
        devices.subscribe(Box::new(move |e| sink.lock().unwrap().push(e.clone())));
        let mac = MacAddr([2, 0, 0, 0, 0, 7]);
        let ip: IpAddr = "10.0.0.7".parse().unwrap();
        let ap = AttachmentPoint::new(3, 4);
        devices.update(|t| {
            t.observe(mac, None, ap, Some(ip), Instant::now())
                .into_iter()
                .collect()
        });
        assert_eq!(
            devices.attachment(mac, None),
            Some(AttachmentPoint::new(3, 4))
        );
        assert_eq!(devices.attachment(mac, Some(5)), None);
        assert_eq!(devices.by_ip(ip).unwrap().mac(), mac);
        assert_eq!(devices.by_mac(mac).len(), 1);
        assert_eq!(devices.all().len(), 1);
        // Seen again at the same place: no event, no notification.
        devices.update(|t| {
            t.observe(mac, None, ap, Some(ip), Instant::now())
                .into_iter()
                .collect()
        });
        assert_eq!(heard.lock().unwrap().len(), 1);
        devices.update(|t| t.remove_attached_to(Dpid(3), 4));
        assert!(devices.is_empty());
        assert!(matches!(
            heard.lock().unwrap()[1],
            HostEvent::Removed { .. }
        ));
    }
}
