//! What a worker drives: the sans-IO side of each switch it serves.
//!
//! [`Driver`] is the boundary between the event loop ([`crate::worker`]) and the apps
//! ([`crate::dispatch::Dispatcher`] implements it, as its own methods; the worker's
//! tests drive a recording one). Everything here takes the bytes, an [`crate::output::Output`] and
//! `now` from the worker; nothing reads a socket or a clock.
//!
//! ```text
//! worker                         driver
//! handshake done ──────────────► connected(info, route, flows) ─► state
//! frame (header checked) ──────► handle(state, frame)    ┐
//! next frame read ahead ───────► prefetch(state, frame)  │ what apps send ─► out
//! turn over ───────────────────► turn_end(state)         │
//! deadline ────────────────────► tick(state)             ┘
//! Delivery from Switches ──────► deliver / request(state)
//! Control::Refresh ────────────► refresh(state)
//! publish interval ────────────► publish(state)
//! closed ──────────────────────► disconnected(state, reason)
//! controller start ────────────► attach(workers), global timers: global_tick(now)
//! ```

use std::time::{Duration, Instant};

use openflow::Frame;

use crate::command::{Route, WorkerHandle};
use crate::info::SwitchInfo;
use crate::output::Queue;
use crate::requests::{Answer, Reply};

/// The sans-IO side of the switches a worker serves (see the module doc).
pub trait Driver: Send + Sync + 'static {
    /// The per-switch state the driver keeps.
    type State: Send + 'static;

    /// A switch completed its handshake and is served at `route`, with `flows` found on
    /// it (`None`: not known; see [`crate::reconcile`]): its state, the flows adopted
    /// and the initializers and switch-added listeners run (what they send is in `out`).
    fn connected(
        &self,
        info: SwitchInfo,
        route: Route,
        flows: Option<Vec<openflow::ofctl::FlowEntry>>,
        out: &mut impl Queue,
        now: Instant,
    ) -> Self::State;

    /// One whole message from the switch, its header checked (never echo).
    fn handle(&self, sw: &mut Self::State, frame: Frame<'_>, out: &mut impl Queue, now: Instant);

    /// A hint: `frame`, the switch's next whole message, will be handled after the
    /// current one (see [`crate::app::Builder::prefetch_packet_in`]).
    fn prefetch(&self, sw: &Self::State, frame: Frame<'_>) {
        let _ = (sw, frame);
    }

    /// The end of a turn: the messages of the switch read together were all handled
    /// (see [`crate::app::Builder::on_turn_end`]).
    fn turn_end(&self, sw: &mut Self::State, out: &mut impl Queue, now: Instant) {
        let _ = (sw, out, now);
    }

    /// Request timeouts and timers due by `now`.
    fn tick(&self, sw: &mut Self::State, out: &mut impl Queue, now: Instant);

    /// When `tick` is next needed for this switch.
    fn next_deadline(&self, sw: &Self::State) -> Option<Instant>;

    /// The switch left (its connection closed for `reason`): the state is given back.
    fn disconnected(&self, sw: Self::State, reason: &str, now: Instant);

    /// Messages sent to this switch from elsewhere (whole messages, xid 0): appended to
    /// `out` (the dispatcher gives each a fresh xid).
    fn deliver(&self, sw: &mut Self::State, messages: &[u8], out: &mut impl Queue) {
        let _ = sw;
        let mut out = out.output();
        for frame in frames(messages) {
            out.push_frame(
                frame,
                u32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]),
            );
        }
    }

    /// A request sent to this switch from elsewhere: appends its messages to `out` and
    /// answers `answer` when the reply comes, the timeout (from `now`) passes or the
    /// switch leaves. A driver that keeps no pending requests answers
    /// [`Reply::SwitchGone`] without sending (the default).
    fn request(
        &self,
        sw: &mut Self::State,
        messages: &[u8],
        out: &mut impl Queue,
        now: Instant,
        timeout: Duration,
        answer: Answer,
    ) {
        let _ = (sw, messages, out, now, timeout);
        answer.send(Reply::SwitchGone);
    }

    /// The apps changed: bring this switch to the current plan now, between two
    /// messages (what started apps' initializers send goes to `out`).
    fn refresh(&self, sw: &mut Self::State, out: &mut impl Queue, now: Instant) {
        let _ = (sw, out, now);
    }

    /// The worker's publish interval came: make what this switch's state counted
    /// locally visible to readers (handler timings).
    fn publish(&self, sw: &mut Self::State) {
        let _ = sw;
    }

    /// The workers are running: their handles, by index (for the directory of switches
    /// that sends through them, and for the app host to tell them of changes); and how
    /// to wake the controller's timer thread.
    fn attach(&self, workers: &[WorkerHandle], timer_waker: Box<dyn Fn() + Send + Sync>) {
        let _ = (workers, timer_waker);
    }

    /// Runs the timers not tied to a switch that are due at `now` (on the controller's
    /// timer thread); returns when it should be called next, `None` for never.
    fn global_tick(&self, now: Instant) -> Option<Instant> {
        let _ = now;
        None
    }
}

/// The whole messages in `bytes`, by their header's length (a length below the header's
/// is taken as the header's, one past the end as the rest: the bytes come from our own
/// encoders).
pub(crate) fn frames(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.len() < openflow::HEADER_LEN {
            return None;
        }
        let len = usize::from(u16::from_be_bytes([rest[2], rest[3]]));
        let (frame, tail) = rest.split_at(len.clamp(openflow::HEADER_LEN, rest.len()));
        rest = tail;
        Some(frame)
    })
}
