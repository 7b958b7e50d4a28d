//! The core's `Switches` service over real TCP, with emulated switches: a handler on one
//! switch's worker sends to a switch on another worker, in that switch's version; any
//! thread can send; unknown dpids, wrong versions and unencodable messages are errors;
//! a replaced connection gets what is sent after the replacement. And a request still
//! pending when its switch leaves gets `Reply::SwitchGone`, whether an app or another
//! thread (`Switches::request`, the REST API's path) made it.

mod harness;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use controller::app::PacketIn;
use controller::app::{App, Builder, Flow, Order, SwitchCtx};
use controller::info::Dpid;
use controller::services::{Services, StartError};
use controller::switches::{Reply, SendError, Switches};
use emu::{host, is_packet_out, Emu, Spec};
use harness::{eventually, test_config, Running, T};
use openflow::model::{Action, FlowMod, Ipv6Prefix, Match, PacketOut, PortNo};
use openflow::{of10, of13, Message, Version};
use testkit::emu;

const A: u64 = 0xa;
const B: u64 = 0xb;
const NOBODY: u64 = 0xdead;
/// The priority of the relayed flow, to know it when it arrives.
const RELAYED: u16 = 0x0777;

/// On a PACKET_IN from any switch but `to`, installs a flow on `to` (through
/// `Switches`, from this worker) and tries a switch that is not there.
struct Relay {
    /// Where the flows go.
    to: u64,
    /// What it saw, shared with the test.
    seen: Arc<RelaySeen>,
}

/// What one send returned.
type Sent = Result<(), SendError>;

#[derive(Default)]
struct RelaySeen {
    /// What the sends returned: (to `to`, to NOBODY).
    results: Mutex<Vec<(Sent, Sent)>>,
    /// `start` found the service.
    started_with_switches: AtomicBool,
}

impl App for Relay {
    type State = ();

    fn name(&self) -> &'static str {
        "relay"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.on_packet_in(Order::direct(0), Relay::packet_in);
    }

    fn start(&self, services: &Services) -> Result<(), StartError> {
        services.require::<Switches>(self.name())?;
        self.seen
            .started_with_switches
            .store(true, Ordering::SeqCst);
        Ok(())
    }
}

impl Relay {
    fn packet_in(&self, ctx: &mut SwitchCtx, _: &mut (), p: &PacketIn) -> Flow {
        if ctx.dpid() == openflow::Dpid(self.to) {
            return Flow::Continue;
        }
        let m = Match {
            in_port: Some(p.in_port()),
            ..Match::default()
        };
        let actions = [Action::output(PortNo::from_u32(3))];
        let fm = FlowMod::add(m, &actions).priority(RELAYED);
        let there = ctx.switches().send_flow_mod(openflow::Dpid(self.to), &fm);
        let nowhere = ctx.switches().send_flow_mod(openflow::Dpid(NOBODY), &fm);
        self.seen.results.lock().unwrap().push((there, nowhere));
        Flow::Stop
    }
}

/// The worker serving `dpid`, from the counters (published every ≤ 500 ms).
fn worker_of(ctl: &Running, dpid: u64) -> Option<usize> {
    let key = controller::info::Dpid(dpid).to_string();
    ctl.handle()
        .counters()
        .switches
        .iter()
        .find(|s| s.dpid == key)
        .map(|s| s.worker)
}

fn relayed_flow(m: &Message) -> bool {
    matches!(m, Message::V13(of13::Message::FlowMod(f)) if f.priority == RELAYED)
}

#[test]
fn a_handler_on_one_worker_sends_to_a_switch_on_another_in_its_version() {
    let seen = Arc::new(RelaySeen::default());
    let relay = Relay {
        to: B,
        seen: Arc::clone(&seen),
    };
    let config = controller::config::CoreConfig {
        workers: 2,
        counters_interval: Duration::from_millis(50),
        ..test_config()
    };
    let ctl = Running::start(&config, vec![Box::new(relay)]);
    assert!(seen.started_with_switches.load(Ordering::SeqCst));

    let mut a = Emu::connect_and_handshake(ctl.addr, Spec::v10(A), T).unwrap();
    let mut b = Emu::connect_and_handshake(ctl.addr, Spec::v13(B), T).unwrap();
    assert_eq!((a.ver(), b.ver()), (Version::V1_0, Version::V1_3));
    // Least loaded first: A on one worker, B on the other.
    assert!(eventually(T, || worker_of(&ctl, A).is_some()
        && worker_of(&ctl, B).is_some()));
    assert_ne!(worker_of(&ctl, A), worker_of(&ctl, B));

    a.send_packet_in(1, &emu::frame(host(1), host(2)), None)
        .unwrap();
    let (xid, fm) = b.wait_for(T, relayed_flow).unwrap();
    assert_ne!(xid, 0, "the worker gives the message a fresh xid");
    let Message::V13(of13::Message::FlowMod(fm)) = fm else {
        unreachable!()
    };
    assert_eq!(fm.priority, RELAYED);
    // The handler notes the results after sending: B may have the flow before.
    assert!(eventually(T, || !seen.results.lock().unwrap().is_empty()));
    let results = seen.results.lock().unwrap().clone();
    assert_eq!(
        results,
        [(Ok(()), Err(SendError::NotConnected(Dpid(NOBODY))))]
    );
    // Nothing went to A: the flow was for B only.
    a.ping(T).unwrap();
    assert!(!a.log.iter().any(|(_, m)| emu::is_flow_mod(m)));
}

#[test]
fn any_thread_can_send_and_errors_say_why() {
    let ctl = Running::start(&test_config(), Vec::new());
    let switches = ctl
        .pipeline
        .services()
        .get::<Switches>()
        .expect("the core provides Switches");
    assert!(Arc::ptr_eq(&switches, ctl.pipeline.switches()));
    let mut a = Emu::connect_and_handshake(ctl.addr, Spec::v10(A), T).unwrap();
    assert!(eventually(T, || switches.is_connected(openflow::Dpid(A))));
    let info = switches.info(openflow::Dpid(A)).unwrap();
    assert_eq!((info.version, info.ports.len()), (Version::V1_0, 4));
    assert_eq!(switches.dpids(), [openflow::Dpid(A)]);

    // From the test's own thread.
    let flood = [Action::output(PortNo::Flood)];
    let po = PacketOut::unbuffered(b"from a thread", PortNo::Controller, &flood);
    switches.send_packet_out(openflow::Dpid(A), &po).unwrap();
    let (_, m) = a.wait_for(T, is_packet_out).unwrap();
    assert_eq!(emu::packet_out_parts(&m).unwrap().1, b"from a thread");

    // Version-specific messages must match the switch.
    let barrier13 = Message::V13(of13::Message::BarrierRequest);
    assert_eq!(
        switches.send(openflow::Dpid(A), &barrier13),
        Err(SendError::WrongVersion {
            dpid: Dpid(A),
            message: Version::V1_3,
            switch: Version::V1_0
        })
    );
    let barrier10 = Message::V10(of10::Message::BarrierRequest);
    let before = a.barriers_answered;
    switches.send(openflow::Dpid(A), &barrier10).unwrap();
    a.wait_for(T, |m| {
        matches!(m, Message::V10(of10::Message::BarrierRequest))
    })
    .unwrap();
    assert_eq!(a.barriers_answered, before + 1);

    // A 1.3-only match cannot go to a 1.0 switch.
    let v6 = Match {
        ipv6_src: Some(Ipv6Prefix {
            addr: "2001:db8::1".parse().unwrap(),
            len: 128,
        }),
        eth_type: Some(0x86dd),
        ..Match::default()
    };
    let fm = FlowMod::add(v6, &flood);
    assert!(matches!(
        switches.send_flow_mod(openflow::Dpid(A), &fm),
        Err(SendError::Encode { dpid: Dpid(A), .. })
    ));
    assert_eq!(
        switches.send_packet_out(openflow::Dpid(NOBODY), &po),
        Err(SendError::NotConnected(Dpid(NOBODY)))
    );

    // Gone: unlisted, and sends say so.
    drop(a);
    assert!(eventually(T, || !switches.is_connected(openflow::Dpid(A))));
    assert!(switches.connected().is_empty());
    assert_eq!(
        switches.send_packet_out(openflow::Dpid(A), &po),
        Err(SendError::NotConnected(Dpid(A)))
    );
}

#[test]
fn a_replaced_connection_gets_the_messages_on_the_new_one() {
    let ctl = Running::start(&test_config(), Vec::new());
    let switches = Arc::clone(ctl.pipeline.switches());
    let mut old = Emu::connect_and_handshake(ctl.addr, Spec::v13(B), T).unwrap();
    assert!(eventually(T, || switches
        .info(openflow::Dpid(B))
        .is_some_and(|i| i.peer == old.local_addr())));

    let mut new = Emu::connect_and_handshake(ctl.addr, Spec::v13(B), T).unwrap();
    old.wait_closed(T).unwrap();
    assert!(eventually(T, || switches
        .info(openflow::Dpid(B))
        .is_some_and(|i| i.peer == new.local_addr())));
    assert_eq!(switches.len(), 1);

    let flood = [Action::output(PortNo::Flood)];
    let po = PacketOut::unbuffered(b"to the new one", PortNo::Controller, &flood);
    switches.send_packet_out(openflow::Dpid(B), &po).unwrap();
    let (_, m) = new.wait_for(T, is_packet_out).unwrap();
    assert_eq!(emu::packet_out_parts(&m).unwrap().1, b"to the new one");
}

/// On switch-added, asks for the switch's description (the emulated switch never
/// answers it) with a long timeout; notes how the request ended and when the
/// switch-removed listener ran.
struct Asker {
    events: Arc<Mutex<Vec<String>>>,
}

impl App for Asker {
    type State = u32;

    fn name(&self) -> &'static str {
        "asker"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.on_switch_added(|_, ctx, asked| {
            let desc = Message::V13(of13::Message::MultipartRequest(
                of13::multipart::MultipartRequest {
                    flags: 0,
                    body: of13::multipart::MultipartRequestBody::Desc,
                },
            ));
            ctx.request(
                &desc,
                Duration::from_secs(600),
                |app: &Asker, ctx, asked, reply| {
                    *asked += 1;
                    let listed = ctx.switches().is_connected(ctx.dpid());
                    app.events.lock().unwrap().push(format!(
                        "reply {reply:?} after {asked} asked, listed {listed}"
                    ));
                },
            )
            .expect("sent");
            *asked = 0;
        });
        b.on_switch_removed(|app, info, asked| {
            app.events
                .lock()
                .unwrap()
                .push(format!("removed {:x} with {asked}", info.dpid.0));
        });
    }
}

#[test]
fn a_pending_request_gets_switch_gone_when_the_switch_leaves() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let asker = Asker {
        events: Arc::clone(&events),
    };
    let ctl = Running::start(&test_config(), vec![Box::new(asker)]);
    let mut sw = silent_to_stats(ctl.addr, B);
    sw.wait_for(T, |m| {
        matches!(m, Message::V13(of13::Message::MultipartRequest(r))
            if matches!(r.body, of13::multipart::MultipartRequestBody::Desc))
    })
    .unwrap();
    assert!(events.lock().unwrap().is_empty());
    drop(sw);
    assert!(eventually(T, || events.lock().unwrap().len() == 2));
    assert_eq!(
        *events.lock().unwrap(),
        [
            // Before the switch-removed listener, with the app's state, and the
            // switch already unlisted.
            "reply SwitchGone after 1 asked, listed false".to_string(),
            "removed b with 1".to_string(),
        ]
    );
}

#[test]
fn switches_tells_its_subscribers_of_switches_listed_unlisted_and_their_ports() {
    use controller::events::Publisher;
    use controller::info::PortReason;
    use controller::switches::SwitchEvent;

    let ctl = Running::start(&test_config(), Vec::new());
    let seen: Arc<Mutex<Vec<SwitchEvent>>> = Arc::default();
    let log = Arc::clone(&seen);
    ctl.pipeline
        .switches()
        .subscribers()
        .subscribe(Box::new(move |e| log.lock().unwrap().push(e.clone())));
    let taken = || std::mem::take(&mut *seen.lock().unwrap());

    let mut a = Emu::connect_and_handshake(ctl.addr, Spec::v13(A), T).unwrap();
    assert!(eventually(T, || !seen.lock().unwrap().is_empty()));
    match &taken()[..] {
        [SwitchEvent::Connected(info)] => assert_eq!((info.dpid.0, info.ports.len()), (A, 4)),
        other => panic!("{other:?}"),
    }
    // Port 2's link goes down: told with the port as it is now and as it was.
    a.send_port_status(2, 2, 0, 1).unwrap();
    assert!(eventually(T, || !seen.lock().unwrap().is_empty()));
    match &taken()[..] {
        [SwitchEvent::Port {
            dpid,
            reason,
            port,
            was_up,
        }] => {
            assert_eq!((dpid.0, *reason, port.port_no), (A, PortReason::Modify, 2));
            assert!(!port.is_up());
            assert_eq!(*was_up, Some(true));
        }
        other => panic!("{other:?}"),
    }
    // The list already showed it when the event was told.
    assert!(!ctl
        .pipeline
        .switches()
        .info(openflow::Dpid(A))
        .unwrap()
        .port(2)
        .unwrap()
        .is_up());

    // A new port, then the switch leaves.
    a.send_port_status(0, 9, 0, 0).unwrap();
    assert!(eventually(T, || !seen.lock().unwrap().is_empty()));
    assert!(matches!(
        &taken()[..],
        [SwitchEvent::Port {
            reason: PortReason::Add,
            was_up: None,
            ..
        }]
    ));
    drop(a);
    assert!(eventually(T, || !seen.lock().unwrap().is_empty()));
    match &taken()[..] {
        [SwitchEvent::Disconnected { dpid, reason }] => {
            assert_eq!(*dpid, openflow::Dpid(A));
            assert!(!reason.is_empty());
        }
        other => panic!("{other:?}"),
    }
    assert!(!ctl.pipeline.switches().is_connected(openflow::Dpid(A)));
}

/// A reply callback that sends on a channel, as the REST API's does.
fn channel() -> (
    std::sync::mpsc::Sender<Reply>,
    std::sync::mpsc::Receiver<Reply>,
) {
    std::sync::mpsc::channel()
}

fn desc_request() -> Message {
    Message::V13(of13::Message::MultipartRequest(
        of13::multipart::MultipartRequest {
            flags: 0,
            body: of13::multipart::MultipartRequestBody::Desc,
        },
    ))
}

#[test]
fn any_thread_can_ask_a_switch_and_gets_one_answer() {
    let ctl = Running::start(&test_config(), Vec::new());
    let switches = Arc::clone(ctl.pipeline.switches());
    let sw = silent_to_stats(ctl.addr, B);
    assert!(eventually(T, || switches.is_connected(openflow::Dpid(B))));
    let sw = sw.in_background();

    // A barrier: the emulated switch answers it.
    let (tx, rx) = channel();
    let barrier = Message::V13(of13::Message::BarrierRequest);
    switches
        .request(
            openflow::Dpid(B),
            &barrier,
            T,
            Box::new(move |r| tx.send(r).unwrap()),
        )
        .unwrap();
    assert_eq!(
        rx.recv_timeout(T).unwrap(),
        Reply::Messages(vec![Message::V13(of13::Message::BarrierReply)])
    );
    assert!(rx.recv_timeout(Duration::from_millis(50)).is_err(), "once");

    // A FLOW_MOD and its barrier: applied.
    let (tx, rx) = channel();
    let fm = FlowMod::add(Match::default(), &[]).priority(RELAYED);
    switches
        .request_flow_mod(
            openflow::Dpid(B),
            &fm,
            T,
            Box::new(move |r| tx.send(r).unwrap()),
        )
        .unwrap();
    assert_eq!(
        rx.recv_timeout(T).unwrap(),
        Reply::Messages(vec![Message::V13(of13::Message::BarrierReply)])
    );

    // DESC, which this switch never answers: timed out after 300 ms, well before the
    // worker's next keepalive scan (5 s): the worker watches the new deadline.
    let (tx, rx) = channel();
    let asked = std::time::Instant::now();
    let timeout = Duration::from_millis(300);
    switches
        .request(
            openflow::Dpid(B),
            &desc_request(),
            timeout,
            Box::new(move |r| tx.send(r).unwrap()),
        )
        .unwrap();
    assert_eq!(rx.recv_timeout(T).unwrap(), Reply::TimedOut);
    let took = asked.elapsed();
    assert!(took >= timeout && took < Duration::from_secs(4), "{took:?}");
    assert_eq!(ctl.pipeline.apps.counters().request_timeouts, 1);

    // Asked again, and the switch leaves before the deadline: SwitchGone, once.
    let (tx, rx) = channel();
    switches
        .request(
            openflow::Dpid(B),
            &desc_request(),
            T,
            Box::new(move |r| tx.send(r).unwrap()),
        )
        .unwrap();
    let mut sw = sw.take();
    // The second DESC reached the switch (maybe while it ran in the background).
    let descs = |sw: &Emu| sw.log.iter().filter(|(_, m)| *m == desc_request()).count();
    if descs(&sw) < 2 {
        sw.wait_for(T, |m| *m == desc_request()).unwrap();
    }
    assert_eq!(descs(&sw), 2);
    drop(sw);
    assert_eq!(rx.recv_timeout(T).unwrap(), Reply::SwitchGone);
    assert!(rx.recv_timeout(Duration::from_millis(50)).is_err(), "once");
    assert_eq!(
        switches.request(openflow::Dpid(B), &desc_request(), T, Box::new(|_| {})),
        Err(SendError::NotConnected(Dpid(B)))
    );
}

/// A 1.3 switch that never answers statistics requests (DESC, say), handshake done.
fn silent_to_stats(addr: std::net::SocketAddr, dpid: u64) -> Emu {
    let mut sw = Emu::connect(addr, Spec::v13(dpid)).unwrap();
    sw.answer_stats = false;
    sw.handshake(T).unwrap();
    sw
}
