//! Requests with replies (barrier, stats/multipart, role, config), correlated by xid:
//! Ryu's `send_request`, without the thread per request.
//!
//! Each switch has one [`Requests`]: its xid counter and its table of pending requests.
//! A reply whose xid is pending goes to the app that asked, not to the message handlers;
//! a multipart reply is gathered until a part arrives without the MORE flag; an ERROR with
//! the xid is the request's answer too. Deadlines are `Instant`s handed in by the caller
//! (no clock reads here), so timeouts are tested without sleeping. A request still
//! pending when its switch leaves gets [`Reply::SwitchGone`]: every callback runs once.

use std::time::Instant;

use openflow::Message;

use crate::app::Callback;

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
    /// before the reply came. The callback runs just before the switch-removed
    /// listeners, with the app's state for the switch; what it sends to this switch is
    /// discarded (`ctx.switches()` still reaches the others).
    SwitchGone,
}

/// A request waiting for its reply.
struct Pending {
    /// The request's xid, which the reply carries.
    xid: u32,
    /// The app that asked (index in the pipeline): the reply goes to it only.
    app: usize,
    /// When the request times out.
    deadline: Instant,
    /// Multipart parts received so far.
    parts: Vec<Message>,
    /// Where the reply goes.
    callback: Callback,
}

/// A switch's xid counter and pending requests.
pub struct Requests {
    /// The last xid handed out (0 is never used: switches send async messages with it).
    last_xid: u32,
    /// Pending requests; few at a time, so a vector searched linearly.
    pending: Vec<Pending>,
}

impl Default for Requests {
    fn default() -> Self {
        Requests::new()
    }
}

impl std::fmt::Debug for Requests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Requests")
            .field("last_xid", &self.last_xid)
            .field(
                "pending",
                &self.pending.iter().map(|p| p.xid).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// A finished request: the app, its callback and what it gets.
pub(crate) struct Done {
    pub app: usize,
    pub callback: Callback,
    pub reply: Reply,
}

impl Requests {
    /// No requests, xids from 1.
    pub fn new() -> Requests {
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
        !self.pending.is_empty() && self.pending.iter().any(|p| p.xid == xid)
    }

    pub(crate) fn insert(&mut self, xid: u32, app: usize, deadline: Instant, callback: Callback) {
        self.pending.push(Pending {
            xid,
            app,
            deadline,
            parts: Vec::new(),
            callback,
        });
    }

    /// A reply part for `xid`: `more` is the multipart MORE flag, `error` whether it is
    /// an ERROR. Returns the finished request, or `None` while parts are still coming
    /// (or when nothing waits for `xid`).
    pub(crate) fn on_reply(
        &mut self,
        xid: u32,
        msg: Message,
        more: bool,
        error: bool,
    ) -> Option<Done> {
        let i = self.pending.iter().position(|p| p.xid == xid)?;
        if error {
            let p = self.pending.swap_remove(i);
            return Some(Done {
                app: p.app,
                callback: p.callback,
                reply: Reply::Error(msg),
            });
        }
        self.pending[i].parts.push(msg);
        if more {
            return None;
        }
        let p = self.pending.swap_remove(i);
        Some(Done {
            app: p.app,
            callback: p.callback,
            reply: Reply::Messages(p.parts),
        })
    }

    /// Any pending request, removed, with [`Reply::SwitchGone`] (oldest first); `None`
    /// when none is left.
    pub(crate) fn pop_gone(&mut self) -> Option<Done> {
        if self.pending.is_empty() {
            return None;
        }
        let p = self.pending.remove(0);
        Some(Done {
            app: p.app,
            callback: p.callback,
            reply: Reply::SwitchGone,
        })
    }

    /// One request whose deadline is at or before `now`, removed, with
    /// [`Reply::TimedOut`]; `None` when none is due.
    pub(crate) fn pop_expired(&mut self, now: Instant) -> Option<Done> {
        let i = self.pending.iter().position(|p| p.deadline <= now)?;
        let p = self.pending.swap_remove(i);
        Some(Done {
            app: p.app,
            callback: p.callback,
            reply: Reply::TimedOut,
        })
    }
}

#[cfg(test)]
#[path = "requests_tests.rs"]
mod tests;
