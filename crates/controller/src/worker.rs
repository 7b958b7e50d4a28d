//! A worker: one thread, one `mio::Poll`, the switches it owns (actix-server's workers,
//! Beacon's run-to-completion loop).
//!
//! ```text
//! loop {
//!     poll (timeout: zero if switches were left with work, else the nearest
//!           keepalive / stall / request / timer deadline / publish time)
//!     waker     → take new switches, close orders and messages from `Switches`
//!     READABLE  → the switch joins this turn's ready list (once)
//!     WRITABLE  → flush again
//!     ready list, in order (last turn's leftovers first, then new events): each switch
//!         handles up to TURN_BUDGET messages (frame, echo or driver.handle →
//!         conn.out); one with more waiting goes on the next turn's list
//!     after the turn: flush every connection with new output once (one with more
//!         to handle next turn: once it holds FLUSH_BATCH or FLUSH_DELAY passed); a queue past the
//!         high-water mark pauses its switch (no READABLE), one drained to the
//!         low-water mark resumes it and puts it on the next turn's list
//!     deadlines: keepalive (silent while output is blocked), stall timeout,
//!         driver.tick; every publish interval: counters snapshot
//! }
//! ```
//!
//! Fairness: every ready switch gets the same budget once per turn, round-robin, so a
//! switch with a full socket cannot starve the others, and a switch both left over and
//! newly readable is still served once.
//!
//! Handlers get `&mut` per-switch state with no lock: a switch lives on one worker for
//! its whole connection.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mio::{Events, Poll, Token, Waker};
use tracing::{debug, info, warn};

use crate::command::{
    Address, Command, Control, Delivery, DpidRegistry, Inbox, NewSwitch, RequestCommand, Route,
    WorkerHandle,
};
use crate::conn::{count_handed_over, CloseReason, Conn, ConnLimits, FLUSH_BATCH, FLUSH_DELAY};
use crate::counters::{ReasonCounts, SwitchSnapshot, TypeCounts, WorkerSnapshot};
use crate::driver::Driver;
use crate::output::Output;
use crate::requests::Reply;
use crate::sync::lock;

/// The waker's token; connection tokens are slot indexes below it.
const WAKER: Token = Token(usize::MAX);

/// Settings a worker needs.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// This worker's index (logs, counters, the dpid registry).
    pub index: usize,
    /// Per-connection limits and keepalive.
    pub limits: ConnLimits,
    /// How often the counters snapshot is published.
    pub publish_interval: Duration,
}

/// A worker's state, owned by its thread (see the module doc).
pub struct Worker<D: Driver> {
    /// Settings.
    cfg: WorkerConfig,
    /// This worker's poll.
    poll: Poll,
    /// What runs the apps for each switch (shared by the workers).
    driver: Arc<D>,
    /// Commands from admission, the app host, the handle and `Switches`.
    inbox: Inbox,
    /// Poll turns (wake-ups) so far: a test's proof that an idle worker sleeps.
    turns: u64,
    /// Connections by slot (token) index.
    conns: Vec<Option<Conn<D::State>>>,
    /// Free slots in `conns`.
    free: Vec<usize>,
    /// Slots with output queued this turn, flushed once at the end of the turn.
    dirty: Vec<usize>,
    /// Slots to close at the end of the turn, with why.
    closing: Vec<(usize, CloseReason)>,
    /// Slots to read next turn although no event will say so (edge-triggered): left
    /// with work by the budget or the high-water mark, or just resumed. Each slot once
    /// (`Conn::scheduled`).
    again: Vec<usize>,
    /// This turn's ready list: `again` moved over, then the slots of new READABLE
    /// events, each once, served in order (both lists keep their capacity: no
    /// allocation per turn).
    ready: Vec<usize>,
    /// Who owns which dpid (shared with admission).
    registry: DpidRegistry,
    /// This worker's switch count (shared with admission).
    load: Arc<AtomicUsize>,
    /// Where the counters snapshot is published.
    published: Arc<Mutex<Arc<WorkerSnapshot>>>,
    /// Counts of closed connections, kept so totals never go down.
    closed: Closed,
    /// When the deadlines (keepalive, request timeouts) are next checked.
    next_scan: Instant,
    /// When the counters are next published.
    next_publish: Instant,
}

/// Totals of connections this worker closed.
#[derive(Debug, Default)]
struct Closed {
    /// Their messages in.
    msgs_in: TypeCounts,
    /// Their messages out.
    msgs_out: TypeCounts,
    /// Their PACKET_INs.
    packet_ins: u64,
    /// Their lost messages.
    drops: u64,
    /// Their pauses (backpressure).
    pauses: u64,
    /// Their milliseconds paused.
    paused_ms: u64,
    /// Disconnects by reason.
    disconnects: ReasonCounts,
    /// Of those, the ones caused by a bad frame.
    bad_frames: ReasonCounts,
}

/// The reasons that mean "the switch sent a bad frame" (counted apart).
fn is_bad_frame(reason: &str) -> bool {
    matches!(reason, "bad_length" | "wrong_version" | "message_too_long")
}

impl<D: Driver> Worker<D> {
    /// A worker and the handle to reach it; run it with [`run`](Self::run) on its thread.
    pub fn new(
        cfg: WorkerConfig,
        driver: Arc<D>,
        registry: DpidRegistry,
        published: Arc<Mutex<Arc<WorkerSnapshot>>>,
    ) -> io::Result<(Worker<D>, WorkerHandle)> {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let (handle, inbox) = crate::command::channel(waker);
        let load = Arc::clone(&handle.load);
        let now = Instant::now();
        let worker = Worker {
            next_scan: now + cfg.limits.keepalive.interval,
            next_publish: now + cfg.publish_interval,
            cfg,
            poll,
            driver,
            inbox,
            turns: 0,
            conns: Vec::new(),
            free: Vec::new(),
            dirty: Vec::new(),
            closing: Vec::new(),
            again: Vec::new(),
            ready: Vec::new(),
            registry,
            load,
            published,
            closed: Closed::default(),
        };
        Ok((worker, handle))
    }

    /// The event loop; returns after [`Control::Shutdown`] (or when every sender is gone).
    pub fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        info!(worker = self.cfg.index, "worker started");
        loop {
            let now = Instant::now();
            let wake = self.next_scan.min(self.next_publish);
            // Connections left with work last turn are read first this turn, after
            // their output was flushed.
            std::mem::swap(&mut self.ready, &mut self.again);
            let timeout = if self.ready.is_empty() {
                wake.saturating_duration_since(now)
            } else {
                Duration::ZERO
            };
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                warn!(worker = self.cfg.index, error = %e, "poll failed; worker stops");
                break;
            }
            self.turns += 1;
            let now = Instant::now();
            let mut shutdown = false;
            for event in events.iter() {
                if event.token() == WAKER {
                    self.inbox.woken();
                    shutdown |= self.commands(now);
                    continue;
                }
                let slot = event.token().0;
                if event.is_read_closed() || event.is_error() {
                    if let Some(Some(conn)) = self.conns.get_mut(slot) {
                        conn.read_closed = true;
                    }
                }
                if event.is_readable() || event.is_read_closed() || event.is_error() {
                    self.schedule(slot, false);
                }
                if event.is_writable() {
                    self.mark_dirty(slot);
                }
            }
            // One budget each, in order; `readable` puts a switch with more waiting on
            // `again` for the next turn.
            for i in 0..self.ready.len() {
                let slot = self.ready[i];
                if let Some(Some(conn)) = self.conns.get_mut(slot) {
                    conn.scheduled = false;
                }
                self.readable(slot, now);
            }
            self.ready.clear();
            if now >= self.next_scan {
                self.scan(now);
            }
            self.flush_dirty(now);
            self.close_pending(now);
            if shutdown {
                self.shutdown(now);
                break;
            }
            if now >= self.next_publish {
                self.publish(now);
                self.next_publish = now + self.cfg.publish_interval;
            }
        }
        self.publish(Instant::now());
        info!(worker = self.cfg.index, "worker stopped");
    }

    /// Drains the command queues; true on shutdown.
    fn commands(&mut self, now: Instant) -> bool {
        while let Some(cmd) = self.inbox.next() {
            match cmd {
                Command::Control(Control::Add(sw)) => self.add(*sw, now),
                Command::Control(Control::Close { uid, reason }) => {
                    if let Some(slot) = self.slot_of(uid) {
                        self.closing.push((slot, reason));
                        // Closed right away, so switch-removed of the old connection
                        // fires before switch-added of a replacement queued behind.
                        self.close_pending(now);
                    }
                }
                Command::Control(Control::Refresh(done)) => {
                    self.refresh(now);
                    let _ = done.send(());
                }
                Command::Control(Control::Shutdown) => return true,
                Command::Delivery(Delivery::Send { to, bytes }) => self.deliver(to, &bytes),
                Command::Delivery(Delivery::Request(r)) => self.request(*r, now),
            }
        }
        false
    }

    /// A message from `Switches` for connection `to`: appended to its output. If that
    /// connection is gone but a newer one of the same switch (same version) is here, it
    /// goes there; otherwise it is lost, and counted.
    fn deliver(&mut self, to: Address, bytes: &[u8]) {
        let dpid = to.dpid;
        let at = self.find_conn(to, bytes.first().copied());
        let Some((at, conn)) = at.and_then(|s| Some((s, self.conns[s].as_mut()?))) else {
            self.closed.drops += 1;
            debug!(dpid = %dpid, "a message sent to a switch that has left; dropped");
            return;
        };
        if conn.pending_out() + bytes.len() > self.cfg.limits.output_buffer_limit {
            // The switch is not taking its queue (it is paused, or slow while others
            // send it much): the hard cap holds, and the loss is counted and told.
            if conn.count_overflow_drop() {
                warn!(
                    dpid = %dpid,
                    queued = conn.pending_out(),
                    limit = self.cfg.limits.output_buffer_limit,
                    dropped = conn.counters.overflow_drops,
                    "a message sent to a switch whose queue is at output_buffer_limit; dropped"
                );
            }
            return;
        }
        let (mut out, Some(state), _) = conn.output() else {
            return;
        };
        self.driver.deliver(state, bytes, &mut out);
        if !conn.dirty && !conn.blocked() {
            conn.dirty = true;
            self.dirty.push(at);
        }
    }

    /// A request from `Switches`: queued like [`deliver`](Self::deliver) queues a
    /// message, and registered with the switch's state; answered at once if it cannot
    /// be queued: [`Reply::SwitchGone`] when the switch left, [`Reply::Busy`] when its
    /// queue is at the hard cap.
    fn request(&mut self, r: RequestCommand, now: Instant) {
        let RequestCommand {
            to,
            messages,
            timeout,
            answer,
        } = r;
        let dpid = to.dpid;
        let Some(at) = self.find_conn(to, messages.first().copied()) else {
            self.closed.drops += 1;
            debug!(dpid = %dpid, "a request sent to a switch that has left; answered SwitchGone");
            return answer.send(Reply::SwitchGone);
        };
        let conn = self.conns[at]
            .as_mut()
            .expect("find_conn gives an open slot");
        if conn.pending_out() + messages.len() > self.cfg.limits.output_buffer_limit {
            conn.count_overflow_drop();
            warn!(
                dpid = %dpid,
                queued = conn.pending_out(),
                limit = self.cfg.limits.output_buffer_limit,
                "a request sent to a switch whose queue is at output_buffer_limit; answered Busy"
            );
            return answer.send(Reply::Busy);
        }
        let (mut out, Some(state), _) = conn.output() else {
            return answer.send(Reply::SwitchGone);
        };
        self.driver
            .request(state, &messages, &mut out, now, timeout, answer);
        if let Some(d) = conn
            .state
            .as_ref()
            .and_then(|s| self.driver.next_deadline(s))
        {
            self.next_scan = self.next_scan.min(d);
        }
        if !conn.dirty && !conn.blocked() {
            conn.dirty = true;
            self.dirty.push(at);
        }
    }

    /// The slot of connection `to` (expected at its slot), or of a newer connection of
    /// its switch speaking the version whose wire byte is `version`.
    fn find_conn(&self, to: Address, version: Option<u8>) -> Option<usize> {
        let Address { slot, uid, dpid } = to;
        match self.conns.get(slot) {
            Some(Some(c)) if c.uid == uid => Some(slot),
            // Rare (the switch left or was replaced since the send): a scan is fine.
            _ => self.conns.iter().position(|c| {
                c.as_ref()
                    .is_some_and(|c| c.dpid == dpid && version == Some(c.version.wire()))
            }),
        }
    }

    fn slot_of(&self, uid: u64) -> Option<usize> {
        self.conns
            .iter()
            .position(|c| c.as_ref().is_some_and(|c| c.uid == uid))
    }

    /// Takes a switch from admission: switch-added, leftover bytes, then reads.
    fn add(&mut self, sw: NewSwitch, now: Instant) {
        let NewSwitch {
            uid,
            stream,
            info,
            leftover,
            pending_out,
            flows,
        } = sw;
        let slot = self.free.pop().unwrap_or_else(|| {
            self.conns.push(None);
            self.conns.len() - 1
        });
        let dpid = info.dpid;
        let peer = info.peer;
        let version = info.version;
        let span = tracing::info_span!("switch", dpid = %dpid);
        let entered = span.enter();
        let route = Route {
            worker: self.cfg.index,
            slot,
            uid,
        };
        let mut out = pending_out;
        let mut counts = count_handed_over(&out);
        let state = self.driver.connected(
            info,
            route,
            flows,
            &mut Output::counted(&mut out, &mut counts),
            now,
        );
        drop(entered);
        let mut conn = Conn::new(
            stream,
            Token(slot),
            uid,
            dpid,
            peer,
            version,
            state,
            &leftover,
            out,
            counts,
            now,
            &self.cfg.limits,
            span,
        );
        if let Err(e) = conn.register(self.poll.registry()) {
            warn!(dpid = %dpid, %peer, error = %e, "cannot register switch");
            self.conns[slot] = Some(conn);
            self.closing.push((slot, "register_error"));
            return;
        }
        // Over TLS, the protocol version and cipher suite (the field is left out in
        // clear text).
        let tls = conn.tls_summary();
        info!(dpid = %dpid, %peer, %version, tls = tls.as_deref(), worker = self.cfg.index, "switch connected");
        if let Some(d) = conn
            .state
            .as_ref()
            .and_then(|s| self.driver.next_deadline(s))
        {
            self.next_scan = self.next_scan.min(d);
        }
        self.next_scan = self.next_scan.min(conn.next_keepalive);
        self.conns[slot] = Some(conn);
        // Leftover bytes, and whatever arrived while the socket changed polls: read
        // this turn, after the switches already waiting.
        self.schedule(slot, false);
        self.mark_dirty(slot);
    }

    /// Puts a connection on this turn's ready list (`next_turn`: the next turn's),
    /// unless it is on one already.
    fn schedule(&mut self, slot: usize, next_turn: bool) {
        if let Some(Some(conn)) = self.conns.get_mut(slot) {
            if !conn.scheduled {
                conn.scheduled = true;
                if next_turn {
                    self.again.push(slot);
                } else {
                    self.ready.push(slot);
                }
            }
        }
    }

    /// One turn's service of one switch (a budget of messages).
    fn readable(&mut self, slot: usize, now: Instant) {
        let Some(Some(conn)) = self.conns.get_mut(slot) else {
            return;
        };

        // The span is moved out and back rather than cloned: no reference count
        // traffic per turn, only the enter and exit.
        let span = std::mem::replace(&mut conn.span, tracing::Span::none());
        let entered = span.enter();
        let result = conn.read_ready(&*self.driver, now, &self.cfg.limits);
        drop(entered);
        conn.span = span;
        if let Some(d) = conn
            .state
            .as_ref()
            .and_then(|s| self.driver.next_deadline(s))
        {
            self.next_scan = self.next_scan.min(d);
        }
        // A connection waiting for WRITABLE is flushed when that comes, not before;
        // except one whose queue passed the high-water mark, which the flush pauses
        // (else it would be scheduled again and again with nothing to do).
        let pending = conn.pending_out();
        let over = pending > self.cfg.limits.backpressure.high_water && !conn.paused();
        if pending > 0 && !conn.dirty && (!conn.blocked() || over) {
            conn.dirty = true;
            self.dirty.push(slot);
        }
        match result {
            Ok(true) => self.schedule(slot, true),
            Ok(false) => {}
            Err(reason) => self.closing.push((slot, reason)),
        }
    }

    fn mark_dirty(&mut self, slot: usize) {
        if let Some(Some(conn)) = self.conns.get_mut(slot) {
            if !conn.dirty {
                conn.dirty = true;
                self.dirty.push(slot);
            }
        }
    }

    /// Every switch to the apps' current plan (an app started, stopped or moved):
    /// what started apps send is flushed this turn, their timers are watched.
    fn refresh(&mut self, now: Instant) {
        for slot in 0..self.conns.len() {
            let Some(conn) = self.conns[slot].as_mut() else {
                continue;
            };
            if let (mut out, Some(state), span) = conn.output() {
                let _entered = span.enter();
                self.driver.refresh(state, &mut out, now);
                if let Some(d) = self.driver.next_deadline(state) {
                    self.next_scan = self.next_scan.min(d);
                }
            }
            if conn.pending_out() > 0 {
                self.mark_dirty(slot);
            }
        }
    }

    /// Keepalive and request deadlines of every switch; sets the next scan time.
    fn scan(&mut self, now: Instant) {
        let mut next = now + self.cfg.limits.keepalive.interval;
        for slot in 0..self.conns.len() {
            let Some(conn) = self.conns[slot].as_mut() else {
                continue;
            };
            if conn.stalled(now, &self.cfg.limits) {
                self.closing.push((slot, "stalled"));
                continue;
            }
            if let Err(reason) = conn.keepalive(now, &self.cfg.limits) {
                self.closing.push((slot, reason));
                continue;
            }
            next = next.min(conn.next_keepalive);
            if let Some(d) = conn.stall_deadline(&self.cfg.limits) {
                next = next.min(d);
            }
            if let (mut out, Some(state), span) = conn.output() {
                if self.driver.next_deadline(state).is_some_and(|d| d <= now) {
                    let _entered = span.enter();
                    self.driver.tick(state, &mut out, now);
                }
                if let Some(d) = self.driver.next_deadline(state) {
                    // At most every 10 ms, however close the deadlines are.
                    next = next.min(d.max(now + Duration::from_millis(10)));
                }
            }
            if conn.pending_out() > 0 && !conn.dirty && !conn.blocked() {
                conn.dirty = true;
                self.dirty.push(slot);
            }
        }
        self.next_scan = next;
    }

    /// Flushes every connection with new output once (Beacon Alg. 2/3); a resumed
    /// switch is read next turn, and a blocked one's stall deadline is watched.
    /// A switch with more to handle next turn (on `again`), less than [`FLUSH_BATCH`]
    /// queued and held back for less than [`FLUSH_DELAY`] stays dirty: written later,
    /// with more.
    fn flush_dirty(&mut self, now: Instant) {
        let registry = self.poll.registry();
        let mut kept = 0;
        for i in 0..self.dirty.len() {
            let slot = self.dirty[i];
            let Some(Some(conn)) = self.conns.get_mut(slot) else {
                continue;
            };
            if conn.scheduled && !conn.blocked() && conn.pending_out() < FLUSH_BATCH {
                let since = *conn.held_since.get_or_insert(now);
                if now.saturating_duration_since(since) < FLUSH_DELAY {
                    self.dirty[kept] = slot;
                    kept += 1;
                    continue;
                }
            }
            conn.held_since = None;
            conn.dirty = false;
            match conn.flush(registry, &self.cfg.limits, now) {
                Ok(resumed) => {
                    if let Some(d) = conn.stall_deadline(&self.cfg.limits) {
                        self.next_scan = self.next_scan.min(d);
                    }
                    if resumed && !conn.scheduled {
                        conn.scheduled = true;
                        self.again.push(slot);
                    }
                }
                Err(reason) => self.closing.push((slot, reason)),
            }
        }
        self.dirty.truncate(kept);
    }

    /// Closes the connections marked this turn: switch-removed, registry, counters.
    fn close_pending(&mut self, now: Instant) {
        while let Some((slot, reason)) = self.closing.pop() {
            let Some(conn) = self.conns.get_mut(slot).and_then(Option::take) else {
                continue;
            };
            self.free.push(slot);
            self.load.fetch_sub(1, Ordering::Relaxed);
            let dpid = conn.dpid;
            let drops = conn.queued_messages();
            let queued = conn.pending_out();
            {
                let mut reg = lock(&self.registry);
                if reg.get(&dpid).is_some_and(|&(_, uid)| uid == conn.uid) {
                    reg.remove(&dpid);
                }
            }
            let c = &conn.counters;
            self.closed.msgs_in.add(&c.msgs_in);
            self.closed.msgs_out.add(&c.msgs_out);
            self.closed.packet_ins += c.packet_ins;
            self.closed.drops += c.drops + drops;
            self.closed.pauses += c.pauses;
            self.closed.paused_ms += conn.paused_total(now).as_millis() as u64;
            self.closed.disconnects.add(reason);
            // The messages still queued are lost with the connection: a field of the
            // one line that tells the disconnect (a separate warning per disconnect
            // flooded the log under churn; the count is also in
            // `pharos_dropped_messages_total`).
            if is_bad_frame(reason) {
                self.closed.bad_frames.add(reason);
                warn!(dpid = %dpid, peer = %conn.peer, reason, messages_lost = drops, "bad frame; switch disconnected");
            } else if matches!(reason, "stalled" | "output_overflow") {
                warn!(
                    dpid = %dpid,
                    peer = %conn.peer,
                    reason,
                    queued_bytes = queued,
                    messages_lost = drops,
                    waited_ms = conn.waited(now).as_millis() as u64,
                    "switch disconnected: it took no byte of its queue for that long"
                );
            } else if reason == "dead_peer" {
                warn!(dpid = %dpid, peer = %conn.peer, reason, messages_lost = drops, "switch disconnected");
            } else {
                info!(dpid = %dpid, peer = %conn.peer, reason, messages_lost = drops, "switch disconnected");
            }
            let span = conn.span.clone();
            let _entered = span.enter();
            if let Some(state) = conn.close(self.poll.registry()) {
                self.driver.disconnected(state, reason, now);
            }
        }
    }

    /// Closes every switch with reason "shutdown".
    fn shutdown(&mut self, now: Instant) {
        for slot in 0..self.conns.len() {
            if let Some(conn) = self.conns[slot].as_mut() {
                // Best effort: what apps queued goes out if the kernel takes it now.
                let _ = conn.flush(self.poll.registry(), &self.cfg.limits, now);
                self.closing.push((slot, "shutdown"));
            }
        }
        self.close_pending(now);
        debug!(worker = self.cfg.index, "worker closed its switches");
    }

    /// Replaces the published counters snapshot.
    fn publish(&mut self, now: Instant) {
        let mut snap = WorkerSnapshot {
            msgs_in: self.closed.msgs_in,
            msgs_out: self.closed.msgs_out,
            packet_ins: self.closed.packet_ins,
            drops: self.closed.drops,
            poll_turns: self.turns,
            pauses: self.closed.pauses,
            paused_ms: self.closed.paused_ms,
            disconnects: self.closed.disconnects.clone(),
            bad_frames: self.closed.bad_frames.clone(),
            switches: Vec::with_capacity(self.conns.len()),
        };
        for conn in self.conns.iter_mut().flatten() {
            if let Some(state) = conn.state.as_mut() {
                self.driver.publish(state);
            }
            let c = &mut conn.counters;
            let rate = match c.last_publish {
                Some(t) if now > t => {
                    (c.packet_ins - c.last_packet_ins) as f64 / (now - t).as_secs_f64()
                }
                _ => 0.0,
            };
            c.last_packet_ins = c.packet_ins;
            c.last_publish = Some(now);
            snap.msgs_in.add(&c.msgs_in);
            snap.msgs_out.add(&c.msgs_out);
            snap.packet_ins += c.packet_ins;
            snap.drops += c.drops;
            let paused_ms = conn.paused_total(now).as_millis() as u64;
            let c = &conn.counters;
            snap.pauses += c.pauses;
            snap.paused_ms += paused_ms;
            snap.switches.push(SwitchSnapshot {
                dpid: conn.dpid.to_string(),
                peer: conn.peer,
                version: conn.version,
                worker: self.cfg.index,
                msgs_in: c.msgs_in.to_map(),
                msgs_out: c.msgs_out.to_map(),
                packet_ins: c.packet_ins,
                packet_ins_per_sec: rate,
                drops: c.drops,
                bytes_in: c.bytes_in,
                bytes_out: c.bytes_out,
                reads: c.reads,
                writes: c.writes,
                queued_bytes: conn.pending_out(),
                max_queued_bytes: c.max_queued,
                paused: conn.paused(),
                pauses: c.pauses,
                paused_ms,
                overflow_drops: c.overflow_drops,
            });
        }
        // The old snapshot is dropped after the lock is released.
        let old = std::mem::replace(&mut *lock(&self.published), Arc::new(snap));
        drop(old);
    }
}
