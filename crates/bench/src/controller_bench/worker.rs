//! One generator thread: its share of the switches on a `mio` event loop, turned until
//! the coordinator says stop, and what the threads and the coordinator share (the
//! phase, the counts each switch publishes, what each hands back at the end).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::{Events, Interest, Poll, Token};

use super::connect::{backoff, Connecting, Joining};
use crate::switch::{Behaviour, Phase, State, Switch, Totals};
use crate::tls::Transport;
use crate::topo::Wiring;

/// What the coordinator tells the threads (they read it every turn).
pub(super) struct Control {
    /// What the switches do now: CONNECT, RUN, DRAIN or STOP.
    pub(super) phase: AtomicU8,
    /// Record round trips: off during the warm-up loops.
    pub(super) recording: AtomicBool,
}

pub(super) const CONNECT: u8 = 0;
pub(super) const LEARN: u8 = 1;
pub(super) const RUN: u8 = 2;
pub(super) const DRAIN: u8 = 3;
pub(super) const STOP: u8 = 4;

/// `Published::state` values.
pub(super) const CONNECTING: u8 = 0;
pub(super) const READY: u8 = 1;
pub(super) const CLOSED: u8 = 2;

/// One switch's counts as its thread last published them (after every turn), read by
/// the coordinator at loop boundaries: plain stores, no read-modify-write on the hot path.
#[derive(Default)]
pub(super) struct Published {
    /// CONNECTING, READY or CLOSED: when everyone is connected, the loops begin.
    pub(super) state: AtomicU8,
    /// The controller answered the echo after the announcements: the learning phase
    /// ends when every ready switch has this.
    pub(super) learned: AtomicBool,
    /// PACKET_INs sent so far, for the per-loop figures.
    pub(super) packet_ins: AtomicU64,
    /// Responses so far under the run's counting rule, for the per-loop figures.
    pub(super) counted: AtomicU64,
    /// PACKET_INs in flight: the drain after the last loop waits for 0.
    pub(super) in_flight: AtomicU64,
}

/// What a thread hands back about one switch when the run ends.
pub(super) struct Final {
    /// Which switch.
    pub(super) dpid: u64,
    /// Ready when the loops began (the others sent nothing and are reported).
    pub(super) took_part: bool,
    /// Its exact counts (the published ones may be a turn old).
    pub(super) totals: Totals,
    /// The reason the connection ended, or where the handshake stood.
    pub(super) status: String,
    /// Whether the connection ended.
    pub(super) closed: bool,
    /// Its round trips (nanoseconds), pooled for the percentiles.
    pub(super) samples: Vec<u32>,
    /// Connection attempts, and the time from the first to ready (if it got there).
    pub(super) attempts: u32,
    /// The time from the first attempt to ready, if it got there.
    pub(super) joined: Option<Duration>,
}

/// One generator thread: its switches, until the coordinator says stop.
pub(super) fn worker(
    addr: SocketAddr,
    how: Connecting,
    mine: Vec<(u64, Arc<Published>)>,
    behaviour: Behaviour,
    wiring: Option<&Wiring>,
    ctl: &Control,
) -> std::io::Result<Vec<Final>> {
    let mut poll = Poll::new()?;
    let mut events = Events::with_capacity(1024);
    let mut switches: Vec<(Switch<Transport>, Arc<Published>)> = Vec::new();
    let mut joining: Vec<Joining> = Vec::new();
    let mut finals = Vec::new();
    for (dpid, published) in mine {
        let first = Instant::now();
        match how.open(addr, dpid) {
            Ok(mut stream) => {
                let token = Token(switches.len());
                poll.registry().register(
                    &mut stream,
                    token,
                    Interest::READABLE | Interest::WRITABLE,
                )?;
                switches.push((Switch::new(dpid, stream, behaviour), published));
                joining.push(Joining {
                    first,
                    attempts: 1,
                    next: None,
                    joined: None,
                });
            }
            Err(e) => {
                published.state.store(CLOSED, Ordering::Relaxed);
                finals.push(Final {
                    dpid,
                    took_part: false,
                    totals: Totals::default(),
                    status: format!("connect: {e}"),
                    closed: true,
                    samples: Vec::new(),
                    attempts: 1,
                    joined: None,
                });
            }
        }
    }
    // Where each switch is in `switches`, for the relays.
    let by_dpid: std::collections::HashMap<u64, usize> = switches
        .iter()
        .enumerate()
        .map(|(i, (sw, _))| (sw.dpid, i))
        .collect();
    // Ready when the loops began, per switch.
    let mut took_part = vec![false; switches.len()];
    let mut started = false;
    loop {
        let phase = match ctl.phase.load(Ordering::SeqCst) {
            CONNECT => Phase::Connect,
            LEARN => Phase::Learn,
            RUN => Phase::Run,
            DRAIN => Phase::Drain,
            _ => break,
        };
        if phase != Phase::Connect && !started {
            started = true;
            for (i, (sw, _)) in switches.iter().enumerate() {
                took_part[i] = sw.state == State::Ready;
            }
        }
        // A switch left with bytes to read (the per-turn cap), or with a socket still
        // taking PACKET_INs, gets its next turn at once.
        let busy = switches.iter().enumerate().any(|(i, (sw, _))| {
            sw.busy(if started && !took_part[i] {
                Phase::Connect
            } else {
                phase
            })
        });
        let timeout = if busy {
            Duration::ZERO
        } else {
            Duration::from_millis(1)
        };
        match poll.poll(&mut events, Some(timeout)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        for ev in &events {
            if let Some((sw, _)) = switches.get_mut(ev.token().0) {
                if ev.is_read_closed() || ev.is_error() {
                    sw.read_closed = true;
                }
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    sw.readable = true;
                }
                if ev.is_writable() || ev.is_write_closed() {
                    sw.writable = true;
                }
            }
        }
        let recording = ctl.recording.load(Ordering::Relaxed);
        for (i, (sw, published)) in switches.iter_mut().enumerate() {
            // A switch that was not ready when the loops began takes no part in them.
            let phase = if started && !took_part[i] {
                Phase::Connect
            } else {
                phase
            };
            sw.turn(phase, recording);
            let j = &mut joining[i];
            if sw.state == State::Ready && j.joined.is_none() {
                j.joined = Some(j.first.elapsed());
            }
            // Refused (closed or reset before the controller's HELLO) while switches
            // are still connecting: it tries again after a backoff, as a real switch
            // does. A controller that spoke and then closed is reported at once.
            let retrying = how.retry
                && !started
                && phase == Phase::Connect
                && sw.state == State::Closed
                && !sw.heard_hello()
                && j.joined.is_none();
            if retrying {
                let now = Instant::now();
                match j.next {
                    None => j.next = Some(now + backoff(j.attempts, sw.dpid)),
                    Some(due) if now >= due => {
                        j.attempts += 1;
                        j.next = None;
                        let _ = poll.registry().deregister(sw.stream());
                        let fresh = how.open(addr, sw.dpid).and_then(|mut s| {
                            poll.registry().register(
                                &mut s,
                                Token(i),
                                Interest::READABLE | Interest::WRITABLE,
                            )?;
                            Ok(s)
                        });
                        match fresh {
                            Ok(stream) => *sw = Switch::new(sw.dpid, stream, behaviour),
                            Err(_) => j.next = Some(now + backoff(j.attempts, sw.dpid)),
                        }
                    }
                    Some(_) => {}
                }
            }
            let counted = sw.totals.counted(behaviour.counting);
            published.state.store(
                match sw.state {
                    _ if retrying => CONNECTING,
                    State::Connecting => CONNECTING,
                    State::Ready => READY,
                    State::Closed => CLOSED,
                },
                Ordering::Relaxed,
            );
            published.learned.store(sw.learned, Ordering::Relaxed);
            published
                .packet_ins
                .store(sw.totals.packet_ins, Ordering::Relaxed);
            published.counted.store(counted, Ordering::Relaxed);
            published
                .in_flight
                .store(sw.totals.in_flight, Ordering::Relaxed);
        }
        if let Some(w) = wiring {
            relay(w, &mut switches, &by_dpid);
        }
    }
    if !started {
        for (i, (sw, _)) in switches.iter().enumerate() {
            took_part[i] = sw.state == State::Ready;
        }
    }
    for (i, (mut sw, _)) in switches.into_iter().enumerate() {
        let _ = poll.registry().deregister(sw.stream());
        finals.push(Final {
            dpid: sw.dpid,
            took_part: took_part[i],
            totals: sw.totals,
            status: sw.handshake_status(),
            closed: sw.state == State::Closed,
            samples: std::mem::take(&mut sw.samples),
            attempts: joining[i].attempts,
            joined: joining[i].joined,
        });
    }
    Ok(finals)
}

/// Hands each LLDP frame a switch was told to send to the switch wired to that port,
/// as a PACKET_IN from its own port (written at its next turn).
fn relay(
    wiring: &Wiring,
    switches: &mut [(Switch<Transport>, Arc<Published>)],
    by_dpid: &std::collections::HashMap<u64, usize>,
) {
    for i in 0..switches.len() {
        if switches[i].0.relays.is_empty() {
            continue;
        }
        let from = switches[i].0.dpid;
        for (port, frame) in std::mem::take(&mut switches[i].0.relays) {
            let Some((to, to_port)) = wiring.peer(from, port) else {
                continue;
            };
            if let Some(&j) = by_dpid.get(&to) {
                let peer = &mut switches[j].0;
                // Written at its next turn.
                peer.inject(to_port, &frame);
            }
        }
    }
}
