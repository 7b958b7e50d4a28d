//! What a handler may do to the switch it runs for: [`SwitchCtx`], and the
//! [`AppSwitches`] it gives to reach the others.
//!
//! A context is made by the dispatcher for each run of handlers on one switch and
//! pointed at each app in turn: it carries the switch's info, its output queue (an
//! [`Output`], which counts each message as it is encoded), its table of pending
//! requests, the directory of switches, the time the worker passed in, and the running
//! app's cookie owner, which the encoders write into every FLOW_MOD the app sends (see
//! [`crate::cookie`]). Requests with callbacks ([`SwitchCtx::request`],
//! [`SwitchCtx::barrier`]) are in [`crate::app`], beside the [`crate::app::App`] trait
//! their callbacks are typed by.

use std::any::Any;
use std::time::Instant;

use openflow::cookie::CookieOwner;
use openflow::model::{EncodedActions, FlowMod, PacketOut};
use openflow::{msg_type, EncodeError, Message, Version};

use crate::counters::PipelineCounters;
use crate::info::{Dpid, SwitchInfo};
use crate::output::Output;
use crate::requests::{Reply, Requests};
use crate::switches::{SendError, Switches};

/// A request's callback, type-erased: `(app, ctx, state, reply)`; the app's own
/// closure, typed, is wrapped by [`SwitchCtx::request`].
pub type Callback =
    Box<dyn FnOnce(&dyn Any, &mut SwitchCtx<'_>, &mut (dyn Any + Send), Reply) + Send>;

/// What a handler may do to the switch it runs for (see the module doc).
pub struct SwitchCtx<'a> {
    /// The switch, ports current.
    pub(crate) info: &'a SwitchInfo,
    /// The switch's output queue.
    pub(crate) out: Output<'a>,
    /// The switch's xid counter and pending requests.
    pub(crate) requests: &'a mut Requests<Callback>,
    /// Where an encoding error is counted.
    pub(crate) counters: &'a PipelineCounters,
    /// Every connected switch.
    pub(crate) switches: &'a Switches,
    /// The time the worker passed in.
    pub(crate) now: Instant,
    /// The app whose handler is running (requests are tagged with it).
    pub(crate) app: usize,
    /// Its name, for the log.
    pub(crate) app_name: &'static str,
    /// Its cookie tag ([`crate::cookie`]), written into its FLOW_MODs by the encoders
    /// ([`SwitchCtx::owner`]).
    pub(crate) tag: u16,
    /// While initializers run: the flows found on the switch and kept by their apps
    /// ([`crate::reconcile`]); `None` when the switch's table is not known.
    pub(crate) adopted: Option<&'a [openflow::ofctl::FlowEntry]>,
}

impl<'a> SwitchCtx<'a> {
    /// A context for the switch `info`, pointed at no app yet ([`SwitchCtx::run_as`]).
    pub(crate) fn new(
        info: &'a SwitchInfo,
        out: Output<'a>,
        requests: &'a mut Requests<Callback>,
        counters: &'a PipelineCounters,
        switches: &'a Switches,
        now: Instant,
    ) -> SwitchCtx<'a> {
        SwitchCtx {
            info,
            out,
            requests,
            counters,
            switches,
            now,
            app: 0,
            app_name: "",
            tag: 0,
            adopted: None,
        }
    }

    /// Points the context at app `app` (its index, name and cookie tag) for the
    /// handlers that run next.
    #[inline]
    pub(crate) fn run_as(&mut self, app: usize, name: &'static str, tag: u16) {
        self.app = app;
        self.app_name = name;
        self.tag = tag;
    }

    /// The running app's cookie owner, for the encoders: made where a FLOW_MOD is,
    /// not each time the context is pointed at an app (three handlers a PACKET_IN).
    #[inline]
    fn owner(&self) -> CookieOwner {
        crate::cookie::owner(self.tag)
    }

    /// The switch, ports current. Borrowed for the whole handler, not from `self`, so
    /// a handler can send while it walks the ports:
    /// `for p in &ctx.info().ports { ctx.send_packet_out(..); }`.
    pub fn info(&self) -> &'a SwitchInfo {
        self.info
    }

    /// The switch's datapath id.
    pub fn dpid(&self) -> Dpid {
        self.info.dpid
    }

    /// The switch's negotiated version.
    pub fn version(&self) -> Version {
        self.info.version
    }

    /// The time the worker passed in for this message.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Every connected switch: send to any of them, look them up (the core's
    /// [`Switches`] service, the same one `services.require::<Switches>` gives).
    /// Sends from it carry the app's cookie tag like the ctx's own ([`crate::cookie`]).
    pub fn switches(&self) -> AppSwitches<'a> {
        AppSwitches::new(self.switches, self.tag)
    }

    /// In an initializer: the flows the switch had when it connected that their apps
    /// kept (every app's, see [`crate::reconcile`]), so that an app installs only what
    /// is missing (the table-miss entry: [`crate::reconcile::has_table_miss`]). `None`
    /// when the switch's table is not known (it did not answer FLOW_STATS) and outside
    /// initializers.
    pub fn adopted(&self) -> Option<&'a [openflow::ofctl::FlowEntry]> {
        self.adopted
    }

    /// A fresh xid from the switch's counter.
    pub(crate) fn next_xid(&mut self) -> u32 {
        self.requests.next_xid()
    }

    /// Sends a version-neutral FLOW_MOD; returns its xid, or `None` when it could not
    /// be encoded for this switch (logged and counted).
    #[inline]
    pub fn send_flow_mod(&mut self, fm: &FlowMod<'_>) -> Option<u32> {
        let xid = self.requests.next_xid();
        let (version, owner) = (self.info.version, self.owner());
        let r = self.out.push(version.wire(), msg_type::FLOW_MOD, |b| {
            fm.encode_owned(version, xid, owner, b)
        });
        self.sent(r.map(|_| xid), "FLOW_MOD")
    }

    /// Sends a version-neutral PACKET_OUT; returns its xid, or `None` (logged, counted).
    #[inline]
    pub fn send_packet_out(&mut self, po: &PacketOut<'_>) -> Option<u32> {
        let xid = self.requests.next_xid();
        let version = self.info.version;
        let r = self.out.push(version.wire(), msg_type::PACKET_OUT, |b| {
            po.encode(version, xid, b)
        });
        self.sent(r.map(|_| xid), "PACKET_OUT")
    }

    /// Sends a PACKET_OUT with actions encoded beforehand: `pre`'s but its action
    /// number `skip`, then the PACKET_OUT's own ([`PacketOut::encode_with`]); returns
    /// its xid, or `None` (logged, counted).
    pub fn send_packet_out_with(
        &mut self,
        po: &PacketOut<'_>,
        pre: &EncodedActions,
        skip: Option<usize>,
    ) -> Option<u32> {
        let xid = self.requests.next_xid();
        let version = self.info.version;
        let r = self.out.push(version.wire(), msg_type::PACKET_OUT, |b| {
            po.encode_with(version, xid, pre, skip, b)
        });
        self.sent(r.map(|_| xid), "PACKET_OUT")
    }

    /// Sends any message of the switch's version; returns its xid, or `None` (logged,
    /// counted) when the message is of another version or cannot be encoded.
    pub fn send(&mut self, msg: &Message) -> Option<u32> {
        let xid = self.requests.next_xid();
        self.send_with_xid(msg, xid)
    }

    /// Sends `msg` with `xid`.
    pub(crate) fn send_with_xid(&mut self, msg: &Message, xid: u32) -> Option<u32> {
        if msg.version() != self.info.version {
            self.counters.count_encode_error();
            tracing::warn!(
                app = self.app_name,
                dpid = %self.info.dpid,
                message = msg.type_name(),
                "not sent: an OpenFlow {} message to an OpenFlow {} switch",
                msg.version(),
                self.info.version
            );
            return None;
        }
        let owner = self.owner();
        let r = self.out.push(msg.version().wire(), msg.msg_type(), |b| {
            msg.encode_owned(xid, owner, b)
        });
        self.sent(r.map(|_| xid), msg.type_name())
    }

    /// Registers `callback` for the reply to `xid` (sent), timing out after `timeout`.
    pub(crate) fn pending(&mut self, xid: u32, timeout: std::time::Duration, callback: Callback) {
        self.requests
            .insert(xid, self.app, self.now + timeout, callback);
    }

    fn sent(&mut self, r: Result<u32, EncodeError>, what: &'static str) -> Option<u32> {
        match r {
            Ok(xid) => Some(xid),
            Err(e) => {
                self.counters.count_encode_error();
                tracing::warn!(
                    app = self.app_name,
                    dpid = %self.info.dpid,
                    message = what,
                    error = %e,
                    "not sent: cannot encode for this switch"
                );
                None
            }
        }
    }
}

/// [`Switches`] as an app sees it in a handler ([`SwitchCtx::switches`]): everything of
/// `Switches` (it derefs to it), with the sends that may carry a FLOW_MOD marked with
/// the app's tag (see [`crate::cookie`]).
#[derive(Clone, Copy)]
pub struct AppSwitches<'a> {
    /// The core's directory.
    switches: &'a Switches,
    /// The app's tag.
    tag: u16,
}

impl std::fmt::Debug for AppSwitches<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppSwitches")
            .field("tag", &self.tag)
            .finish()
    }
}

impl<'a> AppSwitches<'a> {
    /// `switches`, sending under `tag`.
    pub fn new(switches: &'a Switches, tag: u16) -> AppSwitches<'a> {
        AppSwitches { switches, tag }
    }

    /// The directory itself (sends from it are not marked).
    pub fn inner(&self) -> &'a Switches {
        self.switches
    }

    /// [`Switches::send_flow_mod`], marked with the app's tag.
    pub fn send_flow_mod(&self, dpid: Dpid, fm: &FlowMod<'_>) -> Result<(), SendError> {
        self.switches
            .send_flow_mod_owned(dpid, fm, crate::cookie::owner(self.tag))
    }

    /// [`Switches::send`], a FLOW_MOD marked with the app's tag.
    pub fn send(&self, dpid: Dpid, msg: &Message) -> Result<(), SendError> {
        self.switches
            .send_owned(dpid, msg, crate::cookie::owner(self.tag))
    }
}

impl std::ops::Deref for AppSwitches<'_> {
    type Target = Switches;
    fn deref(&self) -> &Switches {
        self.switches
    }
}
