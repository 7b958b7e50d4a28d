//! Requests with replies (barrier, stats/multipart, role, config), correlated by xid:
//! Ryu's `send_request`, without the thread per request.
//!
//! Each switch has one [`Requests`]: its xid counter and its table of pending requests.
//! A reply whose xid is pending goes to whoever asked, not to the message handlers;
//! a multipart reply is gathered until a part arrives without the MORE flag; an ERROR with
//! the xid is the request's answer too. Deadlines are `Instant`s handed in by the caller
//! (no clock reads here), so timeouts are tested without sleeping. A request still
//! pending when its switch leaves gets [`Reply::SwitchGone`]: every callback runs once.
//!
//! Two kinds of requester:
//! - an app, from a handler ([`crate::ctx::SwitchCtx::request`]): one message, and the
//!   callback (of the type `C` the table is made for: the dispatcher's
//!   [`crate::ctx::Callback`]) runs under the app's guard with its state for the switch;
//! - anyone else, from any thread ([`crate::switches::Switches::request`], the REST
//!   API): one or more messages sent back to back with consecutive xids, one pending
//!   entry covering them all, and a plain [`ReplyFn`] called on the worker thread. An
//!   ERROR carrying any of the xids ends it with [`Reply::Error`]; the reply to the last
//!   message ends it with [`Reply::Messages`] (so "FLOW_MOD, BARRIER_REQUEST" is
//!   answered by the barrier reply once the switch applied the FLOW_MOD, or by the
//!   FLOW_MOD's ERROR). Replies to the earlier messages are dropped.

use std::time::Instant;

use openflow::Message;

/// What a request's callback gets.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The reply: one message, or every part of a multipart reply in arrival order.
    Messages(Vec<Message>),
    /// The switch refused the request with an ERROR message.
    Error(Message),
    /// No complete reply before the deadline (parts received so far are dropped).
    TimedOut,
    /// The switch left (disconnected, replaced, or the controller is shutting down)
    /// before the reply came. An app's callback runs just before the switch-removed
    /// listeners, with the app's state for the switch; what it sends to this switch is
    /// discarded (`ctx.switches()` still reaches the others).
    SwitchGone,
    /// The switch is connected but its output queue was full (at
    /// `output_buffer_limit`): the request was not sent. Try again later.
    Busy,
}

/// The callback of a request made from outside the apps
/// ([`crate::switches::Switches::request`]): called once, on the switch's worker
/// thread, with the answer. It must be quick (send on a channel); it must not block.
pub type ReplyFn = Box<dyn FnOnce(Reply) + Send>;

/// A [`ReplyFn`] that is called exactly once: by [`Answer::send`], or with
/// [`Reply::SwitchGone`] when it is dropped unanswered (a request still in a worker's
/// command queue when the worker stops, a hand-driven switch's queue dropped).
pub struct Answer(Option<ReplyFn>);

impl Answer {
    /// Wraps `reply`.
    pub fn new(reply: ReplyFn) -> Answer {
        Answer(Some(reply))
    }

    /// Calls the callback with `reply`. A panic in it is caught and logged: it runs on
    /// a worker thread, which must not die of it.
    pub fn send(mut self, reply: Reply) {
        if let Some(f) = self.0.take() {
            call(f, reply);
        }
    }

    /// The callback back, uncalled (the request was refused before it was queued: the
    /// caller got the error instead).
    pub(crate) fn defuse(mut self) -> Option<ReplyFn> {
        self.0.take()
    }
}

impl Drop for Answer {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            call(f, Reply::SwitchGone);
        }
    }
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Answer(waiting)"
        } else {
            "Answer(sent)"
        })
    }
}

fn call(f: ReplyFn, reply: Reply) {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || f(reply)));
    if r.is_err() {
        tracing::error!("a request's reply callback panicked; ignored");
    }
}

/// Who waits for a request's reply.
pub(crate) enum Owner<C> {
    /// An app (its index among the apps): the reply goes to it only, under its guard.
    App {
        /// The app's index.
        app: usize,
        /// Where the reply goes.
        callback: C,
    },
    /// A caller outside the apps.
    External(Answer),
}

/// A request waiting for its reply.
struct Pending<C> {
    /// The xid of the request's first message (an ERROR with any xid from `first` to
    /// `last` ends the request).
    first: u32,
    /// The xid of its last message, which the reply carries (`first` for one message;
    /// never below `first`: ranges do not wrap).
    last: u32,
    /// When the request times out.
    deadline: Instant,
    /// Multipart parts received so far.
    parts: Vec<Message>,
    /// Who asked, and where the reply goes.
    owner: Owner<C>,
}

/// A switch's xid counter and pending requests; `C` is an app's callback.
pub struct Requests<C> {
    /// The last xid handed out (0 is never used: switches send async messages with it).
    last_xid: u32,
    /// Pending requests; few at a time, so a vector searched linearly.
    pending: Vec<Pending<C>>,
}

impl<C> Default for Requests<C> {
    fn default() -> Self {
        Requests::new()
    }
}

impl<C> std::fmt::Debug for Requests<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Requests")
            .field("last_xid", &self.last_xid)
            .field(
                "pending",
                &self
                    .pending
                    .iter()
                    .map(|p| (p.first, p.last))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// A finished request: who asked and what it gets.
pub(crate) struct Done<C> {
    /// Who asked.
    pub owner: Owner<C>,
    /// What it gets.
    pub reply: Reply,
}

impl<C> Requests<C> {
    /// No requests, xids from 1.
    pub fn new() -> Requests<C> {
        Requests {
            last_xid: 0,
            pending: Vec::new(),
        }
    }

    /// A fresh xid for a message to this switch (wraps, skipping 0).
    pub fn next_xid(&mut self) -> u32 {
        self.last_xid = self.last_xid.wrapping_add(1);
        if self.last_xid == 0 {
            self.last_xid = 1;
        }
        self.last_xid
    }

    /// `n` consecutive fresh xids (`n` ≥ 1) for messages sent back to back; returns
    /// the first. The range never wraps: when it would, it starts again at 1.
    pub fn next_xids(&mut self, n: u32) -> u32 {
        let n = n.max(1);
        if self.last_xid > u32::MAX - n {
            self.last_xid = 0;
        }
        let first = self.next_xid();
        self.last_xid = first + (n - 1);
        first
    }

    /// Sets the last xid handed out (tests near the wrap).
    #[cfg(test)]
    pub(crate) fn set_last_xid(&mut self, xid: u32) {
        self.last_xid = xid;
    }

    /// Number of requests waiting for a reply.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// True when no request is waiting.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// The earliest deadline of a pending request.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.pending.iter().map(|p| p.deadline).min()
    }

    /// True when a request with `xid` waits for its reply.
    #[inline]
    pub fn is_pending(&self, xid: u32) -> bool {
        !self.pending.is_empty() && self.pending.iter().any(|p| p.first <= xid && xid <= p.last)
    }

    /// App `app` waits for the reply to `xid`.
    pub(crate) fn insert(&mut self, xid: u32, app: usize, deadline: Instant, callback: C) {
        self.pending.push(Pending {
            first: xid,
            last: xid,
            deadline,
            parts: Vec::new(),
            owner: Owner::App { app, callback },
        });
    }

    /// A caller outside the apps waits for the reply to messages `first..=last`.
    pub(crate) fn insert_external(
        &mut self,
        first: u32,
        last: u32,
        deadline: Instant,
        answer: Answer,
    ) {
        debug_assert!(first <= last);
        self.pending.push(Pending {
            first,
            last,
            deadline,
            parts: Vec::new(),
            owner: Owner::External(answer),
        });
    }

    /// A reply part for `xid`: `more` is the multipart MORE flag, `error` whether it is
    /// an ERROR. Returns the finished request, or `None` while parts are still coming
    /// (or when nothing waits for `xid`, or `xid` is an earlier message of a request
    /// whose reply is the last one's: dropped).
    pub(crate) fn on_reply(
        &mut self,
        xid: u32,
        msg: Message,
        more: bool,
        error: bool,
    ) -> Option<Done<C>> {
        let i = self
            .pending
            .iter()
            .position(|p| p.first <= xid && xid <= p.last)?;
        if error {
            let p = self.pending.swap_remove(i);
            return Some(Done {
                owner: p.owner,
                reply: Reply::Error(msg),
            });
        }
        if xid != self.pending[i].last {
            return None;
        }
        self.pending[i].parts.push(msg);
        if more {
            return None;
        }
        let p = self.pending.swap_remove(i);
        Some(Done {
            owner: p.owner,
            reply: Reply::Messages(p.parts),
        })
    }

    /// Drops the pending requests of the apps `keep` refuses (apps stopped): their
    /// callbacks are dropped without being run, as none of a stopped app's code runs.
    /// Replies that come later are taken as unsolicited.
    pub(crate) fn drop_apps(&mut self, keep: impl Fn(usize) -> bool) {
        self.pending.retain(|p| match &p.owner {
            Owner::App { app, .. } => keep(*app),
            Owner::External(_) => true,
        });
    }

    /// Any pending request, removed, with [`Reply::SwitchGone`] (oldest first); `None`
    /// when none is left.
    pub(crate) fn pop_gone(&mut self) -> Option<Done<C>> {
        if self.pending.is_empty() {
            return None;
        }
        let p = self.pending.remove(0);
        Some(Done {
            owner: p.owner,
            reply: Reply::SwitchGone,
        })
    }

    /// One request whose deadline is at or before `now`, removed, with
    /// [`Reply::TimedOut`]; `None` when none is due.
    pub(crate) fn pop_expired(&mut self, now: Instant) -> Option<Done<C>> {
        let i = self.pending.iter().position(|p| p.deadline <= now)?;
        let p = self.pending.swap_remove(i);
        Some(Done {
            owner: p.owner,
            reply: Reply::TimedOut,
        })
    }
}

#[cfg(test)]
#[path = "requests_tests.rs"]
mod tests;
