//! Device tracking: the hosts seen in PACKET_INs, where they are attached, and their
//! addresses.
//!
//! ```text
//! app.rs     DeviceManager, the `device_manager` app: learns hosts from PACKET_IN (never on
//!            inter-switch ports), ages them out, forgets them when their port becomes a
//!            link, goes down, or their switch leaves; provides the Devices service
//! moves.rs   MoveRule: a host seen elsewhere has moved, or it is a copy of its frame
//!            that crossed a cable discovery has not found yet
//! table.rs   HostTable: hosts by (MAC, VLAN), indexed by MAC and IP, with attachment
//!            points, first and last seen, expiry; pure, no I/O (the devices app feeds it)
//! service.rs Devices: the table behind a lock for other apps (lookups by MAC, IP,
//!            attachment) and host events to subscribers
//! ```
//!
//! ```
//! use std::time::{Duration, Instant};
//! use apps::devices::table::{AttachmentPoint, HostEvent, HostTable};
//! use openflow::MacAddr;
//!
//! let mut hosts = HostTable::default();
//! let mac = MacAddr([2, 0, 0, 0, 0, 1]);
//! let (s1p1, s2p3) = (AttachmentPoint::new(1, 1), AttachmentPoint::new(2, 3));
//! let t0 = Instant::now();
//! let ip = "10.0.0.1".parse().unwrap();
//! assert!(matches!(hosts.observe(mac, None, s1p1, Some(ip), t0), Some(HostEvent::Added { .. })));
//! assert_eq!(hosts.by_ip(ip).unwrap().mac(), mac);
//! // Seen again at the same place: nothing to announce.
//! assert_eq!(hosts.observe(mac, None, s1p1, Some(ip), t0), None);
//! // Seen somewhere else: it moved.
//! let later = t0 + Duration::from_secs(1);
//! assert_eq!(
//!     hosts.observe(mac, None, s2p3, None, later),
//!     Some(HostEvent::Moved { key: hosts.get(mac, None).unwrap().key(), from: s1p1, to: s2p3 })
//! );
//! // Idle for five minutes: gone, with its address.
//! let events = hosts.expire(later + Duration::from_secs(300), Duration::from_secs(300));
//! assert_eq!(events.len(), 1);
//! assert!(hosts.by_ip(ip).is_none());
//! ```

pub mod app;
pub mod host_log;
pub mod moves;
pub mod service;
pub mod table;

pub use app::DeviceManager;
pub use service::Devices;
