//! [`Switches`]: send to any connected switch, from any handler on any worker or from
//! any thread, and look up what every switch is (ports as they are now).
//!
//! The core provides it: [`crate::host::AppHost::build`] puts an `Arc<Switches>`
//! into the services before any app starts, so an app takes it in `start`
//! (`services.require::<Switches>(name)`), and a handler reaches the same one through
//! [`crate::ctx::SwitchCtx::switches`].
//!
//! ```
//! use std::sync::{Arc, OnceLock};
//! use std::time::Duration;
//! use controller::app::{
//!     App, Builder, Dpid, PortInfo, PortReason, Services, StartError, SwitchCtx, Switches,
//! };
//! use openflow::model::{Action, PacketOut, PortNo};
//!
//! /// Says hello out of every up port of every switch, once a second; notes ports
//! /// that go down.
//! #[derive(Default)]
//! struct Hello(OnceLock<Arc<Switches>>);
//!
//! impl App for Hello {
//!     type State = u32; // ports seen going down on this switch
//!     fn name(&self) -> &'static str { "hello" }
//!     fn build(&self, b: &mut Builder<Self>) {
//!         b.every(Duration::from_secs(1), Duration::from_millis(100), Hello::tick);
//!         b.on_port_status(|_, _, downs, _: PortReason, port: &PortInfo| {
//!             if !port.is_up() { *downs += 1 }
//!         });
//!     }
//!     fn start(&self, services: &Services) -> Result<(), StartError> {
//!         let _ = self.0.set(services.require::<Switches>(self.name())?);
//!         Ok(())
//!     }
//! }
//!
//! impl Hello {
//!     fn tick(&self, ctx: &mut SwitchCtx, _: &mut u32) {
//!         for port in ctx.info().ports.iter().filter(|p| p.is_up()) {
//!             let out = [Action::output(PortNo::from_u32(port.port_no))];
//!             let po = PacketOut::unbuffered(b"hello", PortNo::Controller, &out);
//!             // To this switch through ctx; to another one (a dpid) through Switches.
//!             ctx.send_packet_out(&po);
//!             let _ = ctx.switches().send_packet_out(Dpid(ctx.dpid().0 + 1), &po);
//!         }
//!     }
//! }
//! ```
//!
//! ## How a message gets there
//!
//! [`Switches::send`] and friends encode the message on the caller's thread, in the
//! version the switch negotiated, with xid 0, and queue it to the worker serving the
//! switch through its command channel (bounded: a worker that far behind refuses more,
//! [`SendError::Busy`]); the worker is woken (once for any number of
//! messages queued before it looks) and, on its next turn, gives the message a fresh
//! xid from the switch's counter and appends it to the switch's output buffer, which is
//! flushed with everything else that turn. A message is one allocation (its bytes) and a
//! read lock on the map; the PACKET_IN path of the core takes neither.
//!
//! - **Ordering.** Messages sent through `Switches` to one switch arrive in the order
//!   they were sent from one thread. Their order relative to what a handler sends
//!   through its `ctx` (straight into the output buffer) is not kept, even for the
//!   handler's own switch: a `ctx` send goes out in this turn, a `Switches` send in the
//!   next one.
//! - **Gone switches.** A dpid not connected is [`SendError::NotConnected`]. A switch
//!   that leaves after the message was queued loses it; the worker counts it in the
//!   `drops` counter. A switch replaced by a new connection with the same dpid gets
//!   what is sent after the replacement was announced on the new connection (and what
//!   was already queued, if the new connection speaks the same version).
//! - **Without a network** (a pipeline driven by hand, as in sans-IO tests): switches
//!   created with [`crate::dispatch::Dispatcher::new_switch`] are listed too, and what is
//!   sent to them waits until [`crate::dispatch::Dispatcher::take_queued`] moves it into
//!   an output buffer.
//!
//! ## Events
//!
//! `Switches` is a [`Publisher`] of [`SwitchEvent`]s: a switch listed (its handshake
//! completed), unlisted (with the reason its connection closed), and each PORT_STATUS
//! applied to its port list. They are told by the worker that made the change, after
//! the map is changed and before any app's handler hears of it, in the order the
//! changes were made (see [`crate::events`]). A subscriber runs on a worker thread: it
//! must be quick and never block (the REST API's event stream only copies the event
//! into a bounded channel). A replaced connection (the same dpid connecting again
//! before the old connection was closed) is one `Connected`, and the old connection's
//! closing tells nothing, as the switch stayed listed.
//!
//! ## Requests from outside the apps
//!
//! [`Switches::request`] and [`Switches::request_flow_mod`] send a request the same
//! way and hand the worker a [`ReplyFn`] with it: the worker gives the messages fresh
//! xids and registers them in the switch's table of pending requests (see
//! [`crate::requests`]), so the reply (multipart gathered), the switch's ERROR, the
//! timeout or the switch's departure reaches the callback, exactly once, on the worker
//! thread. A request that cannot be queued at the worker is answered at once:
//! [`Reply::SwitchGone`] when the switch left meanwhile, [`Reply::Busy`] when its output
//! is at `output_buffer_limit`. The
//! REST API's switch routes stand on this.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use openflow::cookie::CookieOwner;
use openflow::model::{FlowMod, PacketOut};
use openflow::{EncodeError, Message, Version};

use crate::command::{Address, Delivery, Full, RequestCommand, Route, WorkerHandle};
use crate::events::{Publisher, Subscribers};
use crate::info::{Dpid, PortInfo, PortReason, SwitchInfo};
use crate::requests::Answer;
pub use crate::requests::{Reply, ReplyFn};
use crate::sync::lock;

/// Why a message could not be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// No switch with this dpid is connected (or the controller is shutting down).
    #[error("switch {0} is not connected")]
    NotConnected(Dpid),
    /// The switch is connected, but the worker serving it has
    /// [`crate::command::COMMAND_QUEUE`] messages from other threads waiting: it is
    /// behind. Nothing was queued; try again later.
    #[error("switch {0} is busy: the queue of its worker is full; try again")]
    Busy(Dpid),
    /// A version-specific message for a switch that speaks another version.
    #[error(
        "an OpenFlow {message} message cannot go to switch {dpid}, which speaks OpenFlow {switch}"
    )]
    WrongVersion {
        /// The switch.
        dpid: Dpid,
        /// The message's version.
        message: Version,
        /// The switch's version.
        switch: Version,
    },
    /// The message cannot be encoded in the switch's version (a 1.3-only match for a
    /// 1.0 switch, say).
    #[error("cannot encode for switch {dpid}: {error}")]
    Encode {
        /// The switch.
        dpid: Dpid,
        /// Why.
        error: EncodeError,
    },
}

/// A change to the list of switches or to a switch's ports (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub enum SwitchEvent {
    /// A switch completed its handshake and is listed.
    Connected(Arc<SwitchInfo>),
    /// A switch's connection closed and it is unlisted.
    Disconnected {
        /// The switch.
        dpid: Dpid,
        /// Why its connection closed (`"closed_by_switch"`, `"dead_peer"`,
        /// `"shutdown"`, ...: the worker's close reasons).
        reason: String,
    },
    /// The switch sent PORT_STATUS; its port list already shows the change.
    Port {
        /// The switch.
        dpid: Dpid,
        /// What PORT_STATUS said happened.
        reason: PortReason,
        /// The port as the message described it.
        port: PortInfo,
        /// Whether the port could carry traffic before (`None`: it was not listed).
        was_up: Option<bool>,
    },
}

/// How messages reach a listed switch.
#[derive(Debug, Clone)]
enum Path {
    /// Through its worker's command channel.
    Worker {
        /// The worker's index.
        worker: usize,
        /// The connection's slot there.
        slot: usize,
    },
    /// Into a queue the owner of a hand-driven dispatcher drains
    /// ([`crate::dispatch::Dispatcher::take_queued`]).
    Queue(Arc<Mutex<Queued>>),
}

/// What waits for a hand-driven switch: messages, and requests between them.
#[derive(Debug, Default)]
pub(crate) struct Queued {
    /// Messages (xid 0), back to back.
    pub bytes: Vec<u8>,
    /// Requests, in the order they were made.
    pub requests: Vec<QueuedRequest>,
}

/// A request waiting in a hand-driven switch's queue.
#[derive(Debug)]
pub(crate) struct QueuedRequest {
    /// Where it goes in `Queued::bytes`: after the messages sent before it.
    pub at: usize,
    /// Its messages (xid 0).
    pub messages: Vec<u8>,
    /// How long the switch has to answer, from when the messages are taken.
    pub timeout: Duration,
    /// Its callback.
    pub answer: Answer,
}

/// One listed switch.
#[derive(Debug)]
struct Entry {
    /// The connection's (or hand-made switch's) uid: updates and removal by an older
    /// connection with the same dpid leave a newer one alone.
    uid: u64,
    /// What the switch is, ports as they are now (replaced whole on PORT_STATUS).
    info: Arc<SwitchInfo>,
    /// How to reach it.
    path: Path,
    /// When this connection was listed (the handshake completed): the REST API's
    /// "connected since". Wall-clock time, as it is shown to people.
    since: SystemTime,
}

/// Everything behind the lock.
#[derive(Debug, Default)]
struct Inner {
    /// Connected switches by dpid.
    switches: HashMap<Dpid, Entry>,
    /// The workers' handles, attached when the controller starts (empty before).
    workers: Vec<WorkerHandle>,
}

/// The connected switches: send to any of them, look them up (see the module doc).
#[derive(Debug, Default)]
pub struct Switches {
    /// The map and the workers. Readers (sends, lookups) share it; writers are the
    /// workers, when a switch comes, goes or changes its ports.
    inner: RwLock<Inner>,
    /// uids for hand-made switches, counting down from the top so they never meet a
    /// connection's uid.
    next_local_uid: AtomicU64,
    /// Told of every switch listed, unlisted, and of its ports' changes.
    subscribers: Subscribers<SwitchEvent>,
    /// Raised under the write lock before every change: what a reader built from the
    /// map is still right while this has not moved ([`Switches::generation`]).
    generation: AtomicU64,
}

impl Publisher<SwitchEvent> for Switches {
    fn subscribers(&self) -> &Subscribers<SwitchEvent> {
        &self.subscribers
    }
}

impl Switches {
    /// An empty directory, not attached to any worker.
    pub fn new() -> Switches {
        Switches {
            inner: RwLock::default(),
            next_local_uid: AtomicU64::new(u64::MAX),
            subscribers: Subscribers::default(),
            generation: AtomicU64::new(0),
        }
    }

    /// Sends a version-neutral FLOW_MOD to switch `dpid`, encoded in its version.
    pub fn send_flow_mod(&self, dpid: Dpid, fm: &FlowMod<'_>) -> Result<(), SendError> {
        self.send_with(dpid, |version, out| {
            encoded(dpid, fm.encode(version, 0, out))
        })
    }

    /// Sends a version-neutral PACKET_OUT to switch `dpid`, encoded in its version.
    pub fn send_packet_out(&self, dpid: Dpid, po: &PacketOut<'_>) -> Result<(), SendError> {
        self.send_with(dpid, |version, out| {
            encoded(dpid, po.encode(version, 0, out))
        })
    }

    /// Sends any message of switch `dpid`'s version (its xid is replaced by a fresh one).
    pub fn send(&self, dpid: Dpid, msg: &Message) -> Result<(), SendError> {
        self.send_with(dpid, |version, out| {
            check_version(dpid, msg, version)?;
            encoded(dpid, msg.encode(0, out))
        })
    }

    /// Sends `msg` (any request: stats/multipart, barrier, config, role...) to switch
    /// `dpid` with a fresh xid and calls `reply` once with the reply (multipart
    /// gathered), the switch's ERROR, [`Reply::TimedOut`] after `timeout`, or
    /// [`Reply::SwitchGone`]. On `Err` (not connected, wrong version, cannot be
    /// encoded), `reply` is dropped uncalled. See the module doc.
    pub fn request(
        &self,
        dpid: Dpid,
        msg: &Message,
        timeout: Duration,
        reply: ReplyFn,
    ) -> Result<(), SendError> {
        self.request_with(dpid, timeout, reply, |version, out| {
            check_version(dpid, msg, version)?;
            encoded(dpid, msg.encode(0, out))
        })
    }

    /// Sends a version-neutral FLOW_MOD followed by a BARRIER_REQUEST and calls `reply`
    /// once: `Reply::Messages([barrier reply])` when the switch applied it,
    /// `Reply::Error(err)` when it refused it (an ERROR carrying the FLOW_MOD's or the
    /// barrier's xid), else [`Reply::TimedOut`] / [`Reply::SwitchGone`]. On `Err`,
    /// `reply` is dropped uncalled.
    pub fn request_flow_mod(
        &self,
        dpid: Dpid,
        fm: &FlowMod<'_>,
        timeout: Duration,
        reply: ReplyFn,
    ) -> Result<(), SendError> {
        self.request_with(dpid, timeout, reply, |version, out| {
            encoded(dpid, fm.encode(version, 0, out))?;
            encoded(dpid, barrier_request(version).encode(0, out))
        })
    }

    /// Sends `msg` (a message with no reply of its own: FLOW_MOD, GROUP_MOD, PORT_MOD,
    /// PACKET_OUT...) followed by a BARRIER_REQUEST, and calls `reply` once as
    /// [`request_flow_mod`](Self::request_flow_mod) does: the barrier reply when the
    /// switch processed it, its ERROR when it refused it. On `Err`, `reply` is dropped
    /// uncalled.
    pub fn request_applied(
        &self,
        dpid: Dpid,
        msg: &Message,
        timeout: Duration,
        reply: ReplyFn,
    ) -> Result<(), SendError> {
        self.request_with(dpid, timeout, reply, |version, out| {
            check_version(dpid, msg, version)?;
            encoded(dpid, msg.encode(0, out))?;
            encoded(dpid, barrier_request(version).encode(0, out))
        })
    }

    /// Every connected switch, by dpid.
    pub fn connected(&self) -> Vec<Arc<SwitchInfo>> {
        let inner = self.read();
        let mut v: Vec<Arc<SwitchInfo>> = inner.switches.values().map(|e| e.info.clone()).collect();
        v.sort_by_key(|i| i.dpid);
        v
    }

    /// The dpids of the connected switches, in order.
    pub fn dpids(&self) -> Vec<Dpid> {
        let mut v: Vec<Dpid> = self.read().switches.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// Switch `dpid` as it is now (its current ports), if connected.
    pub fn info(&self, dpid: Dpid) -> Option<Arc<SwitchInfo>> {
        self.read().switches.get(&dpid).map(|e| e.info.clone())
    }

    /// Every connected switch with the time it was listed (its handshake completed),
    /// by dpid: the REST API's switch list.
    pub fn connected_since(&self) -> Vec<(Arc<SwitchInfo>, SystemTime)> {
        let inner = self.read();
        let mut v: Vec<_> = inner
            .switches
            .values()
            .map(|e| (e.info.clone(), e.since))
            .collect();
        v.sort_by_key(|(i, _)| i.dpid);
        v
    }

    /// Switch `dpid` as it is now and the time it was listed, if connected.
    pub fn info_since(&self, dpid: Dpid) -> Option<(Arc<SwitchInfo>, SystemTime)> {
        self.read()
            .switches
            .get(&dpid)
            .map(|e| (e.info.clone(), e.since))
    }

    /// Whether switch `dpid` is connected.
    pub fn is_connected(&self, dpid: Dpid) -> bool {
        self.read().switches.contains_key(&dpid)
    }

    /// Number of connected switches.
    pub fn len(&self) -> usize {
        self.read().switches.len()
    }

    /// True when no switch is connected.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// [`Switches::send_flow_mod`] with `owner`'s bits written into the cookie (an
    /// app's sends, [`crate::ctx::AppSwitches`]).
    pub(crate) fn send_flow_mod_owned(
        &self,
        dpid: Dpid,
        fm: &FlowMod<'_>,
        owner: CookieOwner,
    ) -> Result<(), SendError> {
        self.send_with(dpid, |version, out| {
            encoded(dpid, fm.encode_owned(version, 0, owner, out))
        })
    }

    /// [`Switches::send`] with `owner`'s bits written into a FLOW_MOD's cookie.
    pub(crate) fn send_owned(
        &self,
        dpid: Dpid,
        msg: &Message,
        owner: CookieOwner,
    ) -> Result<(), SendError> {
        self.send_with(dpid, |version, out| {
            check_version(dpid, msg, version)?;
            encoded(dpid, msg.encode_owned(0, owner, out))
        })
    }

    /// Encodes with `encode(version, out)` and queues the bytes for switch `dpid`.
    fn send_with(
        &self,
        dpid: Dpid,
        encode: impl FnOnce(Version, &mut Vec<u8>) -> Result<(), SendError>,
    ) -> Result<(), SendError> {
        let inner = self.read();
        let not_connected = || SendError::NotConnected(dpid);
        let entry = inner.switches.get(&dpid).ok_or_else(not_connected)?;
        let version = entry.info.version;
        match &entry.path {
            // Encoding leaves nothing behind on error, so the queue stays whole.
            Path::Queue(q) => encode(version, &mut lock(q).bytes),
            &Path::Worker { worker, slot } => {
                let mut bytes = Vec::with_capacity(128);
                encode(version, &mut bytes)?;
                let handle = inner.workers.get(worker).ok_or_else(not_connected)?;
                let to = Address {
                    slot,
                    uid: entry.uid,
                    dpid,
                };
                match handle.deliver(Delivery::Send { to, bytes }) {
                    Ok(()) => Ok(()),
                    Err(Full::Busy(_)) => Err(SendError::Busy(dpid)),
                    Err(Full::Gone(_)) => Err(not_connected()),
                }
            }
        }
    }

    /// Encodes a request's messages with `encode(version, out)` and queues them for
    /// switch `dpid` with their callback.
    pub(crate) fn request_with(
        &self,
        dpid: Dpid,
        timeout: Duration,
        reply: ReplyFn,
        encode: impl FnOnce(Version, &mut Vec<u8>) -> Result<(), SendError>,
    ) -> Result<(), SendError> {
        let inner = self.read();
        let not_connected = || SendError::NotConnected(dpid);
        let entry = inner.switches.get(&dpid).ok_or_else(not_connected)?;
        let mut messages = Vec::with_capacity(128);
        encode(entry.info.version, &mut messages)?;
        let answer = Answer::new(reply);
        match &entry.path {
            Path::Queue(q) => {
                let mut q = lock(q);
                let at = q.bytes.len();
                q.requests.push(QueuedRequest {
                    at,
                    messages,
                    timeout,
                    answer,
                });
                Ok(())
            }
            &Path::Worker { worker, slot } => {
                let Some(handle) = inner.workers.get(worker) else {
                    answer.defuse();
                    return Err(not_connected());
                };
                let to = Address {
                    slot,
                    uid: entry.uid,
                    dpid,
                };
                let d = Delivery::Request(Box::new(RequestCommand {
                    to,
                    messages,
                    timeout,
                    answer,
                }));
                // Not queued: the caller gets the error, not a call.
                let refused = |d: Delivery| {
                    if let Delivery::Request(r) = d {
                        r.answer.defuse();
                    }
                };
                match handle.deliver(d) {
                    Ok(()) => Ok(()),
                    Err(Full::Busy(d)) => {
                        refused(d);
                        Err(SendError::Busy(dpid))
                    }
                    Err(Full::Gone(d)) => {
                        refused(d);
                        Err(not_connected())
                    }
                }
            }
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        // A panic while the lock is held leaves the map whole (every write is one
        // insert, replace or remove), so poisoning is ignored.
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        let guard = self.inner.write().unwrap_or_else(|e| e.into_inner());
        // Before the change, under the lock: a reader that loads the new value reads
        // the map after the change (it waits for this lock).
        self.generation.fetch_add(1, Ordering::Release);
        guard
    }

    /// A number that changes whenever a switch is listed, unlisted or its ports
    /// change. Load it before reading (`connected_since`, `info`...): while it is the
    /// same, what was read is still right, so a reader can keep what it made of it
    /// (the REST API's switch list).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Gives the workers' handles (by worker index); the dispatcher's
    /// [`crate::driver::Driver::attach`] does, when the controller starts.
    pub(crate) fn attach(&self, workers: &[WorkerHandle]) {
        self.write().workers = workers.to_vec();
    }

    /// The workers' handles (none before the controller started, or for switches
    /// driven by hand).
    pub(crate) fn workers(&self) -> Vec<WorkerHandle> {
        self.read().workers.clone()
    }

    /// Lists a switch served by a worker (a newer connection replaces an older one).
    pub(crate) fn add_routed(&self, info: Arc<SwitchInfo>, route: Route) {
        let path = Path::Worker {
            worker: route.worker,
            slot: route.slot,
        };
        self.insert(info, route.uid, path);
    }

    /// Lists a hand-made switch; returns its uid and the queue of what is sent to it.
    pub(crate) fn add_local(&self, info: Arc<SwitchInfo>) -> (u64, Arc<Mutex<Queued>>) {
        let uid = self.next_local_uid.fetch_sub(1, Ordering::Relaxed);
        let queue = Arc::new(Mutex::new(Queued::default()));
        self.insert(info, uid, Path::Queue(queue.clone()));
        (uid, queue)
    }

    fn insert(&self, info: Arc<SwitchInfo>, uid: u64, path: Path) {
        let dpid = info.dpid;
        self.subscribers.publish(|| {
            self.write().switches.insert(
                dpid,
                Entry {
                    uid,
                    info: Arc::clone(&info),
                    path,
                    since: SystemTime::now(),
                },
            );
            vec![SwitchEvent::Connected(info)]
        });
    }

    /// The switch's info changed (PORT_STATUS `reason` about `port`): replaces it, if
    /// connection `uid` is still the one listed.
    pub(crate) fn update(
        &self,
        uid: u64,
        info: Arc<SwitchInfo>,
        reason: PortReason,
        port: &PortInfo,
    ) {
        self.subscribers.publish(|| {
            let mut inner = self.write();
            let Some(e) = inner.switches.get_mut(&info.dpid) else {
                return Vec::new();
            };
            if e.uid != uid {
                return Vec::new();
            }
            let was_up = e.info.port(port.port_no).map(PortInfo::is_up);
            e.info = info;
            vec![SwitchEvent::Port {
                dpid: e.info.dpid,
                reason,
                port: port.clone(),
                was_up,
            }]
        });
    }

    /// The switch left (its connection closed for `reason`): unlists it, if connection
    /// `uid` is still the one listed.
    pub(crate) fn remove(&self, dpid: Dpid, uid: u64, reason: &str) {
        self.subscribers.publish(|| {
            let mut inner = self.write();
            if inner.switches.get(&dpid).is_some_and(|e| e.uid == uid) {
                inner.switches.remove(&dpid);
                vec![SwitchEvent::Disconnected {
                    dpid,
                    reason: reason.to_string(),
                }]
            } else {
                Vec::new()
            }
        });
    }
}

/// An encoder's result as a send's.
fn encoded(dpid: Dpid, r: Result<usize, EncodeError>) -> Result<(), SendError> {
    r.map(drop)
        .map_err(|error| SendError::Encode { dpid, error })
}

/// `msg` must be of the switch's version.
fn check_version(dpid: Dpid, msg: &Message, version: Version) -> Result<(), SendError> {
    if msg.version() != version {
        return Err(SendError::WrongVersion {
            dpid,
            message: msg.version(),
            switch: version,
        });
    }
    Ok(())
}

/// A BARRIER_REQUEST in `version`.
fn barrier_request(version: Version) -> Message {
    match version {
        Version::V1_0 => Message::V10(openflow::of10::Message::BarrierRequest),
        Version::V1_3 => Message::V13(openflow::of13::Message::BarrierRequest),
    }
}

#[cfg(test)]
#[path = "switches_tests.rs"]
mod tests;
