//! The `Devices` service: the host table, for every other app.
//!
//! Lookups take a read lock ([`Devices::attachment`] allocates nothing, for the
//! forwarding hot path; [`Devices::sighting`] lets the device app skip the write
//! for a host it knows already); the device app changes the table through
//! [`Devices::update`], which tells the subscribers what changed, in order.

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::RwLock;
use std::time::{Duration, Instant};

use openflow::MacAddr;

use super::table::{AttachmentPoint, Host, HostEvent, HostTable, Limits, Sighting};
use controller::events::{Publisher, Subscribers};

/// The service (see the module doc).
#[derive(Default)]
pub struct Devices {
    table: RwLock<HostTable>,
    subscribers: Subscribers<HostEvent>,
    /// New hosts refused by a full table without the write lock ([`Devices::refuse`]),
    /// besides those the table counted itself ([`HostTable::refused`]): under a flood
    /// of new source addresses, a full table must not make every PACKET_IN a write.
    refused: AtomicU64,
    /// Calls of [`Devices::update`] (write locks taken) so far: what the device app's
    /// read-locked fast paths are there to keep low, so tests can see they do.
    writes: AtomicU64,
}

impl std::fmt::Debug for Devices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Devices")
            .field("hosts", &self.len())
            .finish_non_exhaustive()
    }
}

impl Devices {
    pub fn new(limits: Limits) -> Devices {
        Devices {
            table: RwLock::new(HostTable::new(limits)),
            ..Devices::default()
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HostTable> {
        self.table.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Where the host with this MAC (on this VLAN) is attached: (dpid, port).
    pub fn attachment(&self, mac: MacAddr, vlan: Option<u16>) -> Option<(u64, u32)> {
        self.read().get(mac, vlan).map(|h| {
            let ap = h.attachment_point();
            (ap.dpid, ap.port)
        })
    }

    /// [`HostTable::sighting`], under the read lock: the device app's common cases (a
    /// known host at its known place; a new host when the table is full) answered
    /// without the write lock.
    pub fn sighting(
        &self,
        mac: MacAddr,
        vlan: Option<u16>,
        ap: AttachmentPoint,
        ips: &[Option<IpAddr>],
        now: Instant,
        fresh: Duration,
    ) -> Sighting {
        self.read().sighting(mac, vlan, ap, ips, now, fresh)
    }

    /// Counts a new host refused by the full table, as [`HostTable::observe`] would,
    /// for a [`Sighting::Refused`] answered without the write lock.
    pub fn refuse(&self) {
        self.refused.fetch_add(1, Relaxed);
    }

    /// New hosts refused so far because the table was full.
    pub fn refused(&self) -> u64 {
        self.refused.load(Relaxed) + self.read().refused()
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
        self.writes.fetch_add(1, Relaxed);
        self.subscribers
            .publish(|| change(&mut self.table.write().unwrap_or_else(|e| e.into_inner())))
    }
}

impl Publisher<HostEvent> for Devices {
    fn subscribers(&self) -> &Subscribers<HostEvent> {
        &self.subscribers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn lookups_see_updates_and_subscribers_hear_of_them() {
        let devices = Devices::new(Limits::default());
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&heard);
        devices.subscribe(Box::new(move |e| sink.lock().unwrap().push(e.clone())));
        let mac = MacAddr([2, 0, 0, 0, 0, 7]);
        let ip: IpAddr = "10.0.0.7".parse().unwrap();
        let ap = AttachmentPoint { dpid: 3, port: 4 };
        devices.update(|t| {
            t.observe(mac, None, ap, Some(ip), Instant::now())
                .into_iter()
                .collect()
        });
        assert_eq!(devices.attachment(mac, None), Some((3, 4)));
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
        devices.update(|t| t.remove_attached_to(3, 4));
        assert!(devices.is_empty());
        assert!(matches!(
            heard.lock().unwrap()[1],
            HostEvent::Removed { .. }
        ));
    }
}
