//! What the rest of the core tells a worker: the command channel's types, in a module
//! of their own so that admission, the switch directory and the workers share them
//! without importing each other.
//!
//! ```text
//! admission ──Control::Add──────────┐
//! app host  ──Control::Refresh──────┤ control: unbounded (each is rare, and bounded
//! handle    ──Control::Shutdown─────┤          by admission's caps or one per change)
//!                                   ├──► worker (drains control, then data, per wake)
//! Switches  ──Delivery::Send────────┤ data: bounded (COMMAND_QUEUE): a worker that
//!           ──Delivery::Request─────┘       falls behind refuses more (Busy)
//! ```
//!
//! A sender wakes the worker's poll once per batch (its `wake_pending` flag). A
//! full data queue is [`Full::Busy`], told to the sender as busy (the REST API answers
//! 503 "busy"), never as a switch that has gone.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, TryRecvError, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mio::Waker;

use crate::info::{Dpid, SwitchInfo};
use crate::requests::Answer;
use crate::tls::Stream;

/// How many messages and requests from other threads may wait for one worker. A worker
/// serving its switches drains its queue every turn (a turn takes well under a
/// millisecond): one this far behind is overloaded, and senders are told so.
pub const COMMAND_QUEUE: usize = 16 * 1024;

/// Where a switch is served: its worker, its slot (poll token) there, and its
/// connection's unique id. Given by the worker when the switch arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The worker's index.
    pub worker: usize,
    /// The connection's slot on that worker.
    pub slot: usize,
    /// The connection's uid (never reused), so a message for a closed connection whose
    /// slot was reused cannot reach the newcomer.
    pub uid: u64,
}

/// A switch handed over by admission.
#[derive(Debug)]
pub struct NewSwitch {
    /// Unique connection id (see [`crate::conn::Conn::uid`]).
    pub uid: u64,
    /// The socket (or the TLS session over it, established), deregistered from
    /// admission's poll.
    pub stream: Stream,
    /// What the handshake learned.
    pub info: SwitchInfo,
    /// Bytes read past the handshake, to be processed first.
    pub leftover: Vec<u8>,
    /// Handshake bytes admission could not write yet.
    pub pending_out: Vec<u8>,
    /// The switch's flows when it connected, for the apps to adopt (`None`: not
    /// known; see [`crate::reconcile`]).
    pub flows: Option<Vec<openflow::ofctl::FlowEntry>>,
}

/// What admission, the app host and the handle tell a worker.
#[derive(Debug)]
pub enum Control {
    /// Serve this switch.
    Add(Box<NewSwitch>),
    /// Close this connection (if it is still open) with this reason.
    Close {
        /// The connection's uid.
        uid: u64,
        /// Logged and counted.
        reason: &'static str,
    },
    /// Bring every switch to the apps' current plan, then say so on the channel (the
    /// app host waits for every worker).
    Refresh(Sender<()>),
    /// Close every switch ("shutdown") and exit.
    Shutdown,
}

/// What the switch directory ([`crate::switches::Switches`]) hands a worker for one of
/// its switches.
#[derive(Debug)]
pub enum Delivery {
    /// Append this message (one, encoded for the switch's version, xid 0) to the
    /// switch's output.
    Send {
        /// Where the switch is served.
        to: Address,
        /// The message.
        bytes: Vec<u8>,
    },
    /// Append these messages (a request) and wait for the reply.
    Request(Box<RequestCommand>),
}

/// A connection a delivery is for, and the switch to find if it was replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Address {
    /// The connection's slot.
    pub slot: usize,
    /// The connection's uid (if the slot holds another, the delivery is for a
    /// connection that left).
    pub uid: u64,
    /// The switch, to find its replacement when the connection was replaced.
    pub dpid: Dpid,
}

/// A request from [`crate::switches::Switches::request`] (boxed in [`Delivery`], which
/// stays as small as a plain send).
#[derive(Debug)]
pub struct RequestCommand {
    /// Where the switch is served.
    pub to: Address,
    /// The request's messages, back to back, xid 0.
    pub messages: Vec<u8>,
    /// How long the switch has to answer, from when the worker queues the messages.
    pub timeout: Duration,
    /// The callback.
    pub answer: Answer,
}

/// Why a delivery was not queued.
#[derive(Debug)]
pub enum Full {
    /// The worker's queue holds [`COMMAND_QUEUE`] deliveries: it is behind. The
    /// delivery comes back.
    Busy(Delivery),
    /// The worker has stopped (the controller is shutting down). The delivery comes
    /// back.
    Gone(Delivery),
}

/// dpid → (worker index, connection uid) of the connection that currently owns it.
pub type DpidRegistry = Arc<Mutex<HashMap<Dpid, (usize, u64)>>>;

/// The handle others hold to talk to a worker.
#[derive(Debug, Clone)]
pub struct WorkerHandle {
    /// Control commands, read when the waker fires.
    control: Sender<Control>,
    /// Deliveries from the switch directory, bounded (see the module doc).
    data: SyncSender<Delivery>,
    /// Wakes the worker's poll.
    waker: Arc<Waker>,
    /// Switches the worker serves (for least-loaded assignment).
    pub load: Arc<AtomicUsize>,
    /// Set by a sender that woke the worker, cleared by the worker before it drains
    /// its queues: senders that find it set need not wake it again (one `write(2)` on
    /// the eventfd per batch, not per message).
    wake_pending: Arc<AtomicBool>,
}

/// The worker's ends of its queues.
#[derive(Debug)]
pub struct Inbox {
    /// Control commands.
    control: Receiver<Control>,
    /// Deliveries.
    data: Receiver<Delivery>,
    /// Shared with the handles (see [`WorkerHandle::wake_pending`]).
    wake_pending: Arc<AtomicBool>,
}

/// One item of a worker's queues, as [`Inbox::next`] takes it.
#[derive(Debug)]
pub enum Command {
    /// A control command.
    Control(Control),
    /// A delivery from the switch directory.
    Delivery(Delivery),
}

/// A worker's queues: its handle, and its inbox.
pub fn channel(waker: Arc<Waker>) -> (WorkerHandle, Inbox) {
    let (control_tx, control) = std::sync::mpsc::channel();
    let (data_tx, data) = std::sync::mpsc::sync_channel(COMMAND_QUEUE);
    let wake_pending = Arc::new(AtomicBool::new(false));
    let handle = WorkerHandle {
        control: control_tx,
        data: data_tx,
        waker,
        load: Arc::new(AtomicUsize::new(0)),
        wake_pending: Arc::clone(&wake_pending),
    };
    let inbox = Inbox {
        control,
        data,
        wake_pending,
    };
    (handle, inbox)
}

impl WorkerHandle {
    /// Sends a control command and wakes the worker; false if the worker is gone.
    pub fn control(&self, cmd: Control) -> bool {
        self.control.send(cmd).is_ok() && self.waker.wake().is_ok()
    }

    /// Queues a delivery and wakes the worker unless a wake is already pending. A
    /// delivery that cannot be queued comes back, saying why. Once the delivery is in
    /// the queue this is `Ok` even if the wake fails: the worker sees it on its next
    /// wake-up.
    pub fn deliver(&self, d: Delivery) -> Result<(), Full> {
        self.data.try_send(d).map_err(|e| match e {
            TrySendError::Full(d) => Full::Busy(d),
            TrySendError::Disconnected(d) => Full::Gone(d),
        })?;
        // SeqCst with the worker's clear-then-drain: either the worker's drain sees
        // this delivery, or this swap sees the flag cleared and wakes it.
        if !self.wake_pending.swap(true, Ordering::SeqCst) {
            let _ = self.waker.wake();
        }
        Ok(())
    }
}

impl Inbox {
    /// The worker woke up for its queues: senders from now on wake it again.
    pub fn woken(&self) {
        self.wake_pending.store(false, Ordering::SeqCst);
    }

    /// The next command: control first (a close before a delivery for the connection
    /// that replaced it), then deliveries. `None`: both queues are empty now. `Some(
    /// Control(Shutdown))` also when every sender is gone.
    pub fn next(&self) -> Option<Command> {
        match self.control.try_recv() {
            Ok(c) => return Some(Command::Control(c)),
            Err(TryRecvError::Disconnected) => return Some(Command::Control(Control::Shutdown)),
            Err(TryRecvError::Empty) => {}
        }
        self.data.try_recv().ok().map(Command::Delivery)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send(slot: usize) -> Delivery {
        Delivery::Send {
            to: Address {
                slot,
                uid: 1,
                dpid: openflow::Dpid(1),
            },
            bytes: vec![4, 18, 0, 8, 0, 0, 0, 0],
        }
    }

    #[test]
    fn a_full_queue_is_busy_and_a_stopped_worker_gone() {
        let poll = mio::Poll::new().unwrap();
        let waker = Arc::new(Waker::new(poll.registry(), mio::Token(0)).unwrap());
        let (handle, inbox) = channel(waker);
        for i in 0..COMMAND_QUEUE {
            handle.deliver(send(i)).unwrap();
        }
        match handle.deliver(send(0)) {
            Err(Full::Busy(Delivery::Send { .. })) => {}
            other => panic!("not busy: {other:?}"),
        }
        // Control commands are never refused for a full data queue.
        assert!(handle.control(Control::Shutdown));
        assert!(matches!(
            inbox.next(),
            Some(Command::Control(Control::Shutdown))
        ));
        assert!(matches!(inbox.next(), Some(Command::Delivery(_))));
        drop(inbox);
        assert!(matches!(handle.deliver(send(0)), Err(Full::Gone(_))));
    }
}
