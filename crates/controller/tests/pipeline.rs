//! The app pipeline, sans-IO: a [`FakeSwitch`] builds PACKET_IN bytes of either version,
//! feeds them to `Pipeline::handle`, and decodes everything the apps wrote back, so
//! tests ask "did a FLOW_MOD with match X, output P, idle timeout T come out?" and "was
//! the packet flooded?" (Faucet's `FakeOFTable.is_output`, without a table).
//!
//! allocation-counter's counting allocator (per thread, as in
//! crates/openflow/tests/no_alloc.rs) proves the learning-switch path allocates nothing
//! per PACKET_IN in steady state.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use apps::learning_switch::Params;
use apps::{Hub, LearningSwitch};
use controller::app::PacketIn;
use controller::app::{AnyApp, App, Builder, Flow, MessageKind, Order, SwitchCtx};
use controller::dispatch::SwitchState;
use controller::driver::Driver;
use controller::host::{AppHost, Core};
use controller::info::SwitchInfo;
use controller::requests::Reply;
use controller::services::{Services, StartError};
use openflow::of10::flow_match as fw;
use openflow::view::widen_port;
use openflow::{frame_len, of10, of13, MacAddr, Message, Version};
use packet::ethernet::{EtherType, EthernetRepr};
use testkit::frames;

// ---------------------------------------------------------------------------------
// The fake switch

const A: MacAddr = MacAddr([2, 0, 0, 0, 0, 0xa]);
const B: MacAddr = MacAddr([2, 0, 0, 0, 0, 0xb]);
const C: MacAddr = MacAddr([2, 0, 0, 0, 0, 0xc]);
const FLOOD: u32 = 0xffff_fffb;
const CONTROLLER: u32 = 0xffff_fffd;

fn info(dpid: u64, version: Version) -> SwitchInfo {
    SwitchInfo {
        n_buffers: 256,
        n_tables: 254,
        peer: SocketAddr::from(([127, 0, 0, 1], 40000)),
        ..SwitchInfo::new(openflow::Dpid(dpid), version)
    }
}

/// An Ethernet frame of 64 bytes from `src` to `dst`.
fn frame(src: MacAddr, dst: MacAddr) -> Vec<u8> {
    let mut f = vec![0u8; 64];
    EthernetRepr {
        dst_addr: dst,
        src_addr: src,
        ethertype: EtherType::Ipv4,
    }
    .emit(&mut f)
    .unwrap();
    f
}

/// A PACKET_IN of `version` carrying `data` (whole: the frames here are under the 128
/// bytes a buffering switch sends), received on `in_port`, with xid 0.
fn packet_in(version: Version, in_port: u32, data: &[u8], buffer_id: Option<u32>) -> Vec<u8> {
    let buffer_id = buffer_id.unwrap_or(openflow::view::NO_BUFFER);
    frames::packet_in_message(version, in_port, data, buffer_id)
        .to_bytes(0)
        .unwrap()
}

/// A FLOW_MOD as tests look at it, whatever its version.
#[derive(Debug, Clone, PartialEq, Default)]
struct Fm {
    /// 0 add, 3 delete.
    command: u16,
    in_port: Option<u32>,
    eth_src: Option<MacAddr>,
    eth_dst: Option<MacAddr>,
    /// Some other field is matched too.
    other_fields: bool,
    /// (port widened to 32 bits, max_len).
    outputs: Vec<(u32, u16)>,
    idle_timeout: u16,
    hard_timeout: u16,
    priority: u16,
    buffer_id: u32,
}

/// A PACKET_OUT as tests look at it.
#[derive(Debug, Clone, PartialEq)]
struct Po {
    buffer_id: Option<u32>,
    in_port: u32,
    outputs: Vec<u32>,
    data: Vec<u8>,
}

/// One message the apps sent.
#[derive(Debug, Clone, PartialEq)]
enum Sent {
    FlowMod(Fm),
    PacketOut(Po),
    Other(u32, Message),
}

fn buffer(id: u32) -> Option<u32> {
    (id != openflow::view::NO_BUFFER).then_some(id)
}

fn normalize(xid: u32, msg: Message) -> Sent {
    match msg {
        Message::V10(of10::Message::FlowMod(f)) => {
            let w = f.match_.wildcards;
            let others = fw::OFPFW_DL_VLAN
                | fw::OFPFW_DL_TYPE
                | fw::OFPFW_NW_PROTO
                | fw::OFPFW_TP_SRC
                | fw::OFPFW_TP_DST
                | fw::OFPFW_DL_VLAN_PCP
                | fw::OFPFW_NW_TOS;
            let other_fields = w & others != others
                || (w & fw::OFPFW_NW_SRC_MASK) >> fw::OFPFW_NW_SRC_SHIFT < 32
                || (w & fw::OFPFW_NW_DST_MASK) >> fw::OFPFW_NW_DST_SHIFT < 32;
            Sent::FlowMod(Fm {
                command: f.command.to_raw(),
                in_port: (w & fw::OFPFW_IN_PORT == 0).then(|| widen_port(f.match_.in_port)),
                eth_src: (w & fw::OFPFW_DL_SRC == 0).then_some(f.match_.dl_src),
                eth_dst: (w & fw::OFPFW_DL_DST == 0).then_some(f.match_.dl_dst),
                other_fields,
                outputs: outputs_v10(&f.actions)
                    .into_iter()
                    .collect::<Vec<(u32, u16)>>(),
                idle_timeout: f.idle_timeout,
                hard_timeout: f.hard_timeout,
                priority: f.priority,
                buffer_id: f.buffer_id,
            })
        }
        Message::V13(of13::Message::FlowMod(f)) => {
            let mac = |field| match f.match_.get(field).map(|b| &b.value) {
                Some(of13::OxmValue::Mac(m)) => Some(*m),
                _ => None,
            };
            let in_port = match f.match_.get(of13::OxmField::InPort).map(|b| &b.value) {
                Some(of13::OxmValue::Int(p)) => Some(*p as u32),
                _ => None,
            };
            use of13::OxmField::*;
            let other_fields = f.match_.fields().iter().any(|o| {
                !matches!(o, of13::Oxm::Basic(b) if matches!(b.field, InPort | EthSrc | EthDst))
            });
            let mut outputs = Vec::new();
            for i in &f.instructions {
                if let of13::Instruction::ApplyActions { actions } = i {
                    outputs.extend(outputs_v13(actions));
                }
            }
            Sent::FlowMod(Fm {
                command: f.command.to_raw() as u16,
                in_port,
                eth_src: mac(EthSrc),
                eth_dst: mac(EthDst),
                other_fields,
                outputs,
                idle_timeout: f.idle_timeout,
                hard_timeout: f.hard_timeout,
                priority: f.priority,
                buffer_id: f.buffer_id,
            })
        }
        Message::V10(of10::Message::PacketOut(p)) => Sent::PacketOut(Po {
            buffer_id: buffer(p.buffer_id),
            in_port: widen_port(p.in_port),
            outputs: outputs_v10(&p.actions).into_iter().map(|o| o.0).collect(),
            data: p.data,
        }),
        Message::V13(of13::Message::PacketOut(p)) => Sent::PacketOut(Po {
            buffer_id: buffer(p.buffer_id),
            in_port: p.in_port,
            outputs: outputs_v13(&p.actions).into_iter().map(|o| o.0).collect(),
            data: p.data,
        }),
        m => Sent::Other(xid, m),
    }
}

fn outputs_v10(actions: &[of10::Action]) -> Vec<(u32, u16)> {
    actions
        .iter()
        .filter_map(|a| match a {
            of10::Action::Output { port, max_len } => Some((widen_port(*port), *max_len)),
            _ => None,
        })
        .collect()
}

fn outputs_v13(actions: &[of13::Action]) -> Vec<(u32, u16)> {
    actions
        .iter()
        .filter_map(|a| match a {
            of13::Action::Output { port, max_len } => Some((*port, *max_len)),
            _ => None,
        })
        .collect()
}

/// Every message in `out`, decoded and normalized.
fn decode_all(mut out: &[u8]) -> Vec<Sent> {
    let mut msgs = Vec::new();
    while !out.is_empty() {
        let n = frame_len(out).unwrap().expect("a whole message");
        let (xid, m) = Message::decode(&out[..n]).unwrap();
        msgs.push(normalize(xid, m));
        out = &out[n..];
    }
    msgs
}

/// A switch connected to a pipeline, without a socket.
struct FakeSwitch<'p> {
    pipeline: &'p Core,
    state: Option<SwitchState>,
    version: Version,
    out: Vec<u8>,
    now: Instant,
}

impl<'p> FakeSwitch<'p> {
    /// Connects: switch-added runs; what the apps sent is in `self.take()`.
    fn connect(pipeline: &'p Core, dpid: u64, version: Version) -> FakeSwitch<'p> {
        let mut state = pipeline.dispatcher.new_switch(info(dpid, version));
        let mut out = Vec::new();
        let now = Instant::now();
        pipeline.dispatcher.switch_added(&mut state, &mut out, now);
        FakeSwitch {
            pipeline,
            state: Some(state),
            version,
            out,
            now,
        }
    }

    fn state(&mut self) -> &mut SwitchState {
        self.state.as_mut().unwrap()
    }

    /// What the apps sent since the last call.
    fn take(&mut self) -> Vec<Sent> {
        let msgs = decode_all(&self.out);
        self.out.clear();
        msgs
    }

    /// Feeds one message; returns what the apps sent in answer.
    fn feed(&mut self, msg: &[u8]) -> Vec<Sent> {
        let (p, now) = (self.pipeline, self.now);
        let mut out = std::mem::take(&mut self.out);
        p.dispatcher.handle(self.state(), msg, &mut out, now);
        self.out = out;
        self.take()
    }

    /// A packet from `src` to `dst` arriving on `in_port`.
    fn packet(&mut self, in_port: u32, src: MacAddr, dst: MacAddr, buf: Option<u32>) -> Vec<Sent> {
        let m = packet_in(self.version, in_port, &frame(src, dst), buf);
        self.feed(&m)
    }

    /// Moves the clock and runs the timeouts.
    fn advance(&mut self, by: Duration) -> Vec<Sent> {
        self.now += by;
        let (p, now) = (self.pipeline, self.now);
        let mut out = std::mem::take(&mut self.out);
        p.dispatcher.tick(self.state(), &mut out, now);
        self.out = out;
        self.take()
    }

    fn disconnect(mut self, reason: &str) {
        let s = self.state.take().unwrap();
        self.pipeline.dispatcher.disconnected(s, reason, self.now);
    }
}

fn pipeline(apps: Vec<Box<dyn AnyApp>>) -> Core {
    AppHost::build(apps, Services::new()).unwrap()
}

fn flood(in_port: u32, buffer_id: Option<u32>, data: Vec<u8>) -> Sent {
    Sent::PacketOut(Po {
        buffer_id,
        in_port,
        outputs: vec![FLOOD],
        data,
    })
}

// ---------------------------------------------------------------------------------
// Test apps

type Log = Arc<Mutex<Vec<String>>>;

/// Logs its name for each PACKET_IN and BARRIER_REPLY, then returns `flow`.
struct Step {
    name: &'static str,
    order: Order,
    flow: Flow,
    /// Register with `observe_packet_in` instead.
    observer: bool,
    log: Log,
}

impl App for Step {
    type State = ();
    fn name(&self) -> &'static str {
        self.name
    }
    fn build(&self, b: &mut Builder<Self>) {
        if self.observer {
            b.observe_packet_in(self.order.number, |s, _, _, _| s.note("pi"));
        } else {
            b.on_packet_in(self.order, |s, _, _, _| {
                s.note("pi");
                s.flow
            });
        }
        b.on_message(MessageKind::BarrierReply, self.order, |s, _, _, _| {
            s.note("barrier");
            s.flow
        });
    }
}

impl Step {
    fn note(&self, what: &str) {
        self.log
            .lock()
            .unwrap()
            .push(format!("{}:{what}", self.name));
    }
}

fn step(name: &'static str, order: Order, flow: Flow, log: &Log) -> Box<dyn AnyApp> {
    Box::new(Step {
        name,
        order,
        flow,
        observer: false,
        log: Arc::clone(log),
    })
}

fn taken(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

// ---------------------------------------------------------------------------------
// Order, Stop, observers

#[test]
fn handlers_run_in_order_and_stop_is_enforced() {
    let log = Log::default();
    let p = pipeline(vec![
        step("d5", Order::direct(5), Flow::Continue, &log),
        step("a0", Order::advise(0), Flow::Continue, &log),
        step("d1", Order::direct(1), Flow::Stop, &log),
        step("o_stop", Order::observe(0), Flow::Stop, &log),
        Box::new(Step {
            name: "obs",
            order: Order::observe(1),
            flow: Flow::Continue,
            observer: true,
            log: Arc::clone(&log),
        }),
        step("d9", Order::direct(9), Flow::Continue, &log),
        step("a0_too", Order::advise(0), Flow::Continue, &log),
    ]);
    let mut sw = FakeSwitch::connect(&p, 1, Version::V1_3);
    sw.packet(1, A, B, None);
    // Advise before Direct; equal orders in app order; d1's Stop ends d5 and d9; the
    // observers run anyway, and an observer's Stop stops nothing.
    assert_eq!(
        taken(&log),
        ["a0:pi", "a0_too:pi", "d1:pi", "o_stop:pi", "obs:pi"]
    );
    // The same for decoded messages (a BARRIER_REPLY nobody asked for).
    sw.feed(&[4, 21, 0, 8, 0, 0, 0, 99]);
    assert_eq!(
        taken(&log),
        [
            "a0:barrier",
            "a0_too:barrier",
            "d1:barrier",
            "o_stop:barrier",
            "obs:barrier"
        ]
    );
}

// ---------------------------------------------------------------------------------
// Per-switch state

/// Counts PACKET_INs per switch and logs `dpid:count`.
struct Counter(Log);

impl App for Counter {
    type State = u32;
    fn name(&self) -> &'static str {
        "counter"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_packet_in(Order::direct(0), |c, ctx, n, _| {
            *n += 1;
            c.0.lock().unwrap().push(format!("{}:{n}", ctx.dpid().0));
            Flow::Continue
        });
    }
}

#[test]
fn each_switch_has_its_own_state() {
    let log = Log::default();
    let p = pipeline(vec![Box::new(Counter(Arc::clone(&log)))]);
    let mut s1 = FakeSwitch::connect(&p, 1, Version::V1_0);
    let mut s2 = FakeSwitch::connect(&p, 2, Version::V1_3);
    s1.take();
    s2.take();
    s1.packet(1, A, B, None);
    s1.packet(1, A, B, None);
    s2.packet(1, A, B, None);
    s1.packet(1, A, B, None);
    assert_eq!(taken(&log), ["1:1", "1:2", "2:1", "1:3"]);
    // A reconnecting switch starts afresh.
    s2.disconnect("test");
    let mut s2 = FakeSwitch::connect(&p, 2, Version::V1_3);
    s2.packet(1, A, B, None);
    assert_eq!(taken(&log), ["2:1"]);
}

static TRACKED_LIVE: AtomicUsize = AtomicUsize::new(0);
static TRACKED_GIVEN_BACK: AtomicUsize = AtomicUsize::new(0);

/// A state that counts how many of it are alive.
struct Tracked;

impl Default for Tracked {
    fn default() -> Self {
        TRACKED_LIVE.fetch_add(1, Ordering::SeqCst);
        Tracked
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        TRACKED_LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Tracked state, with a switch-removed listener that gets it back.
struct Keeper;
impl App for Keeper {
    type State = Tracked;
    fn name(&self) -> &'static str {
        "keeper"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_switch_removed(|_, info, state| {
            assert_eq!(info.dpid, openflow::Dpid(7));
            TRACKED_GIVEN_BACK.fetch_add(1, Ordering::SeqCst);
            drop(state);
        });
    }
}

/// Tracked state, no listener: the state is just dropped.
struct Dropper;
impl App for Dropper {
    type State = Tracked;
    fn name(&self) -> &'static str {
        "dropper"
    }
    fn build(&self, _: &mut Builder<Self>) {}
}

#[test]
fn switch_removed_drops_every_apps_state() {
    let p = pipeline(vec![Box::new(Keeper), Box::new(Dropper)]);
    let sw = FakeSwitch::connect(&p, 7, Version::V1_3);
    assert_eq!(TRACKED_LIVE.load(Ordering::SeqCst), 2);
    sw.disconnect("connection reset");
    assert_eq!(TRACKED_LIVE.load(Ordering::SeqCst), 0);
    assert_eq!(TRACKED_GIVEN_BACK.load(Ordering::SeqCst), 1);
}

// ---------------------------------------------------------------------------------
// Requests and replies

/// On switch-added: asks for the switch description (multipart) and sends a barrier;
/// logs what comes back and counts replies in its per-switch state.
struct Asker(Log);

impl App for Asker {
    type State = u32;
    fn name(&self) -> &'static str {
        "asker"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_switch_added(|_, ctx, _| {
            let desc = Message::V13(of13::Message::MultipartRequest(
                of13::multipart::MultipartRequest {
                    flags: 0,
                    body: of13::multipart::MultipartRequestBody::Desc,
                },
            ));
            ctx.request::<Asker>(&desc, Duration::from_secs(2), |a, ctx, n, reply| {
                *n += 1;
                a.note(ctx, *n, "desc", &reply);
            });
            ctx.barrier::<Asker>(Duration::from_millis(500), |a, ctx, n, reply| {
                *n += 1;
                a.note(ctx, *n, "barrier", &reply);
            });
        });
        b.on_message(
            MessageKind::MultipartReply,
            Order::direct(0),
            |a, _, _, m| {
                a.0.lock()
                    .unwrap()
                    .push(format!("handler:{}", m.type_name()));
                Flow::Continue
            },
        );
    }
}

impl Asker {
    fn note(&self, ctx: &SwitchCtx, n: u32, what: &str, reply: &Reply) {
        let r = match reply {
            Reply::Messages(parts) => format!("{} parts", parts.len()),
            Reply::Error(m) => format!("error {}", m.type_name()),
            Reply::TimedOut => "timed out".to_string(),
            Reply::Busy => "busy".to_string(),
            Reply::SwitchGone => "switch gone".to_string(),
        };
        self.0
            .lock()
            .unwrap()
            .push(format!("{}#{n} {what}: {r}", ctx.dpid().0));
    }
}

fn multipart_part(xid: u32, more: bool) -> Vec<u8> {
    Message::V13(of13::Message::MultipartReply(
        of13::multipart::MultipartReply {
            flags: more as u16,
            body: of13::multipart::MultipartReplyBody::Flow { stats: Vec::new() },
        },
    ))
    .to_bytes(xid)
    .unwrap()
}

#[test]
fn a_multipart_reply_in_parts_reaches_the_requester_and_a_barrier_times_out() {
    let log = Log::default();
    let p = pipeline(vec![Box::new(Asker(Arc::clone(&log)))]);
    let mut sw = FakeSwitch::connect(&p, 5, Version::V1_3);
    let sent = sw.take();
    let [Sent::Other(desc_xid, Message::V13(of13::Message::MultipartRequest(_))), Sent::Other(barrier_xid, Message::V13(of13::Message::BarrierRequest))] =
        &sent[..]
    else {
        panic!("expected a MULTIPART_REQUEST and a BARRIER_REQUEST, got {sent:?}");
    };
    let (desc_xid, barrier_xid) = (*desc_xid, *barrier_xid);
    assert_ne!(desc_xid, barrier_xid);
    assert_eq!(sw.state().pending_requests(), 2);
    assert_eq!(
        sw.state().next_deadline(),
        Some(sw.now + Duration::from_millis(500))
    );

    // Three parts: nothing until the MORE flag clears; the handlers never see them.
    sw.feed(&multipart_part(desc_xid, true));
    sw.feed(&multipart_part(desc_xid, true));
    assert!(taken(&log).is_empty());
    sw.feed(&multipart_part(desc_xid, false));
    assert_eq!(taken(&log), ["5#1 desc: 3 parts"]);
    // A reply nobody waits for goes to the handlers.
    sw.feed(&multipart_part(desc_xid, false));
    assert_eq!(taken(&log), ["handler:MULTIPART_REPLY"]);

    // Not yet due; then the barrier times out, once.
    sw.advance(Duration::from_millis(499));
    assert!(taken(&log).is_empty());
    sw.advance(Duration::from_millis(1));
    assert_eq!(taken(&log), ["5#2 barrier: timed out"]);
    sw.advance(Duration::from_secs(10));
    assert!(taken(&log).is_empty());
    assert_eq!(sw.state().next_deadline(), None);
    // A late barrier reply is just a message.
    let late = Message::V13(of13::Message::BarrierReply)
        .to_bytes(barrier_xid)
        .unwrap();
    assert!(sw.feed(&late).is_empty());
    assert!(taken(&log).is_empty());
    let c = p.apps.counters();
    assert_eq!((c.replies, c.request_timeouts), (1, 1));
}

#[test]
fn an_error_answers_the_request() {
    let log = Log::default();
    let p = pipeline(vec![Box::new(Asker(Arc::clone(&log)))]);
    let mut sw = FakeSwitch::connect(&p, 6, Version::V1_3);
    let sent = sw.take();
    let Sent::Other(desc_xid, _) = sent[0] else {
        panic!("{sent:?}")
    };
    sw.feed(&multipart_part(desc_xid, true));
    // OFPET_BAD_REQUEST / OFPBRC_BAD_MULTIPART, echoing 8 bytes.
    let mut err = vec![4, 1, 0, 20];
    err.extend_from_slice(&desc_xid.to_be_bytes());
    err.extend_from_slice(&[0, 1, 0, 2, 4, 18, 0, 16, 0, 0, 0, 1]);
    sw.feed(&err);
    assert_eq!(taken(&log), ["6#1 desc: error ERROR"]);
}

// ---------------------------------------------------------------------------------
// Services

trait Greeter: Send + Sync {
    fn greet(&self) -> String;
}

struct English;
impl Greeter for English {
    fn greet(&self) -> String {
        "hello".into()
    }
}

struct Provider;
impl App for Provider {
    type State = ();
    fn name(&self) -> &'static str {
        "provider"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.provide::<dyn Greeter>(Arc::new(English));
    }
}

struct User(Mutex<Option<Arc<dyn Greeter>>>);
impl App for User {
    type State = ();
    fn name(&self) -> &'static str {
        "user"
    }
    fn build(&self, _: &mut Builder<Self>) {}
    fn start(&self, services: &Services) -> Result<(), StartError> {
        let g = services.require::<dyn Greeter>("user")?;
        assert_eq!(g.greet(), "hello");
        *self.0.lock().unwrap() = Some(g);
        Ok(())
    }
}

#[test]
fn services_are_provided_by_type_and_a_missing_one_fails_start() {
    let p = pipeline(vec![Box::new(User(Mutex::new(None))), Box::new(Provider)]);
    assert!(p.services().get::<dyn Greeter>().is_some());

    let e = AppHost::build(vec![Box::new(User(Mutex::new(None)))], Services::new()).unwrap_err();
    assert!(matches!(e, StartError::MissingService { app: "user", .. }));
    let text = e.to_string();
    assert!(text.contains("user") && text.contains("Greeter"), "{text}");

    // The caller may provide it instead.
    let mut s = Services::new();
    s.provide::<dyn Greeter>(Arc::new(English), "test").unwrap();
    assert!(AppHost::build(vec![Box::new(User(Mutex::new(None)))], s).is_ok());

    // Two providers of one type: refused, naming both.
    let mut s = Services::new();
    s.provide::<dyn Greeter>(Arc::new(English), "test").unwrap();
    let e = AppHost::build(vec![Box::new(Provider)], s).unwrap_err();
    assert!(matches!(
        e,
        StartError::DuplicateService {
            first: "test",
            second: "provider",
            ..
        }
    ));
}

// ---------------------------------------------------------------------------------
// Panics

/// Panics on every PACKET_IN.
struct Panicker;
impl App for Panicker {
    type State = ();
    fn name(&self) -> &'static str {
        "panicker"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_packet_in(Order::advise(0), |_, _, _, _| panic!("boom"));
    }
}

#[test]
fn a_panicking_app_is_quarantined_and_the_others_carry_on() {
    let log = Log::default();
    let p = pipeline(vec![
        Box::new(Panicker),
        Box::new(Counter(Arc::clone(&log))),
        Box::new(Hub),
    ]);
    let mut s1 = FakeSwitch::connect(&p, 1, Version::V1_0);
    let mut s2 = FakeSwitch::connect(&p, 2, Version::V1_3);
    s1.take();
    s2.take();
    assert_eq!(p.apps.is_quarantined("panicker"), Some(false));
    // The panic happens; the same message still reaches the other apps.
    let data = frame(A, B);
    assert_eq!(s1.packet(3, A, B, None), [flood(3, None, data.clone())]);
    assert_eq!(p.apps.is_quarantined("panicker"), Some(true));
    assert_eq!(p.apps.panics("panicker"), Some(1));
    // Later messages, on this switch and on others: the panicker is skipped.
    assert_eq!(s1.packet(3, A, B, None), [flood(3, None, data.clone())]);
    assert_eq!(s2.packet(4, A, B, Some(9)), [flood(4, Some(9), Vec::new())]);
    assert_eq!(p.apps.panics("panicker"), Some(1));
    assert_eq!(p.apps.counters().handler_panics, 1);
    assert_eq!(taken(&log), ["1:1", "1:2", "2:1"]);
    assert_eq!(p.apps.is_quarantined("counter"), Some(false));
}

// ---------------------------------------------------------------------------------
// The learning switch and the hub

fn learning(params: Params) -> Core {
    pipeline(vec![Box::new(LearningSwitch { params })])
}

fn learned_flow(in_port: u32, src: MacAddr, dst: MacAddr, out: u32, idle: u16) -> Sent {
    Sent::FlowMod(Fm {
        command: 0,
        in_port: Some(in_port),
        eth_src: Some(src),
        eth_dst: Some(dst),
        other_fields: false,
        outputs: vec![(out, 0xffff)],
        idle_timeout: idle,
        hard_timeout: 0,
        priority: 0x8000,
        buffer_id: openflow::view::NO_BUFFER,
    })
}

/// [`learned_flow`] carrying the buffered packet's id.
fn learned_flow_buffered(
    in_port: u32,
    src: MacAddr,
    dst: MacAddr,
    out: u32,
    idle: u16,
    buffer_id: u32,
) -> Sent {
    let Sent::FlowMod(fm) = learned_flow(in_port, src, dst, out, idle) else {
        unreachable!("learned_flow makes a FLOW_MOD")
    };
    Sent::FlowMod(Fm { buffer_id, ..fm })
}

#[test]
fn learning_switch_initializes_1_3_switches_with_a_table_miss_entry() {
    let p = learning(Params::default());
    let mut sw = FakeSwitch::connect(&p, 1, Version::V1_3);
    let table_miss = Sent::FlowMod(Fm {
        command: 0,
        outputs: vec![(CONTROLLER, 0xffff)],
        priority: 0,
        buffer_id: openflow::view::NO_BUFFER,
        ..Fm::default()
    });
    // The table is not emptied (a restart must not cut traffic).
    assert_eq!(sw.take(), [table_miss]);
    // 1.0 switches send misses to the controller by themselves.
    let mut sw = FakeSwitch::connect(&p, 2, Version::V1_0);
    assert_eq!(sw.take(), []);
    // A 1.3 switch that kept the learning switch's table-miss entry gets none again.
    let mut state = p.dispatcher.new_switch(info(3, Version::V1_3));
    let kept = openflow::ofctl::parse_flow_entry(&format!(
        "cookie={:#x},priority=0,actions=CONTROLLER:65535",
        controller::cookie::with_tag(controller::cookie::app_tag("learning_switch"), 0)
    ))
    .unwrap();
    p.dispatcher.set_found_flows(&mut state, Some(vec![kept]));
    let mut out = Vec::new();
    p.dispatcher
        .switch_added(&mut state, &mut out, Instant::now());
    assert!(out.is_empty(), "{out:?}");
}

#[test]
fn learning_switch_floods_unknown_then_installs_flows() {
    for version in [Version::V1_0, Version::V1_3] {
        let p = learning(Params::default());
        let mut sw = FakeSwitch::connect(&p, 1, version);
        sw.take();
        // A → B, B unknown: flooded, with the packet's bytes.
        assert_eq!(
            sw.packet(1, A, B, None),
            [flood(1, None, frame(A, B))],
            "{version}"
        );
        // B → A: A was learned on port 1: a flow and the packet out port 1.
        assert_eq!(
            sw.packet(2, B, A, None),
            [
                learned_flow(2, B, A, 1, 60),
                Sent::PacketOut(Po {
                    buffer_id: None,
                    in_port: 2,
                    outputs: vec![1],
                    data: frame(B, A),
                })
            ],
            "{version}"
        );
        // A → B, buffered: one FLOW_MOD carrying the buffer_id, no PACKET_OUT (the
        // switch applies the flow to the buffered packet).
        assert_eq!(
            sw.packet(1, A, B, Some(77)),
            [learned_flow_buffered(1, A, B, 2, 60, 77)],
            "{version}"
        );
        // Unknown C, buffered: flooded by buffer_id.
        assert_eq!(
            sw.packet(1, A, C, Some(78)),
            [flood(1, Some(78), Vec::new())]
        );
        // Broadcast: flooded even though nothing is "known" about it.
        let bcast = MacAddr([0xff; 6]);
        assert_eq!(
            sw.packet(2, B, bcast, None),
            [flood(2, None, frame(B, bcast))]
        );
        // B → A arriving on A's own port: dropped, nothing sent.
        assert_eq!(sw.packet(1, B, A, None), []);
    }
}

/// Issue 10: a packet the switch buffered is answered with one message, the FLOW_MOD
/// carrying its buffer_id; a packet whose bytes came in the PACKET_IN needs the
/// PACKET_OUT too.
#[test]
fn a_buffered_packet_rides_on_the_flow_mod_an_unbuffered_one_gets_a_packet_out() {
    for version in [Version::V1_0, Version::V1_3] {
        let p = learning(Params::default());
        let mut sw = FakeSwitch::connect(&p, 1, version);
        sw.take();
        sw.packet(1, A, C, None); // A learned on port 1
        sw.packet(2, B, C, None); // B learned on port 2
        let sent = sw.packet(1, A, B, Some(9));
        assert_eq!(
            sent,
            [learned_flow_buffered(1, A, B, 2, 60, 9)],
            "{version}"
        );
        let sent = sw.packet(2, B, A, None);
        assert_eq!(
            sent,
            [
                learned_flow(2, B, A, 1, 60),
                Sent::PacketOut(Po {
                    buffer_id: None,
                    in_port: 2,
                    outputs: vec![1],
                    data: frame(B, A),
                })
            ],
            "{version}"
        );
    }
}

#[test]
fn learning_switch_uses_its_parameters_and_learns_per_switch() {
    let p = learning(Params {
        idle_timeout: 30,
        hard_timeout: 300,
        priority: 10,
        ..Params::default()
    });
    let mut s1 = FakeSwitch::connect(&p, 1, Version::V1_3);
    let mut s2 = FakeSwitch::connect(&p, 2, Version::V1_3);
    s1.take();
    s2.take();
    s1.packet(1, A, B, None);
    let sent = s1.packet(2, B, A, None);
    let Sent::FlowMod(fm) = &sent[0] else {
        panic!("{sent:?}")
    };
    assert_eq!(
        (fm.idle_timeout, fm.hard_timeout, fm.priority),
        (30, 300, 10)
    );
    // Switch 2 learned nothing: B → A is flooded there.
    assert_eq!(s2.packet(2, B, A, None), [flood(2, None, frame(B, A))]);
}

#[test]
fn hub_floods_everything() {
    for version in [Version::V1_0, Version::V1_3] {
        let p = pipeline(vec![Box::new(Hub)]);
        let mut sw = FakeSwitch::connect(&p, 1, version);
        sw.take();
        for _ in 0..2 {
            assert_eq!(sw.packet(1, A, B, None), [flood(1, None, frame(A, B))]);
            assert_eq!(sw.packet(2, B, A, Some(5)), [flood(2, Some(5), Vec::new())]);
        }
    }
}

// ---------------------------------------------------------------------------------
// No allocation per PACKET_IN

#[test]
fn learning_switch_allocates_nothing_per_packet_in_in_steady_state() {
    let p = learning(Params::default());
    for version in [Version::V1_0, Version::V1_3] {
        let mut sw = p.dispatcher.new_switch(info(1, version));
        let mut out: Vec<u8> = Vec::with_capacity(64 * 1024);
        let now = Instant::now();
        p.dispatcher.switch_added(&mut sw, &mut out, now);
        let inputs = [
            packet_in(version, 1, &frame(A, B), None),    // learns A
            packet_in(version, 2, &frame(B, A), None),    // learns B; known → flow + out
            packet_in(version, 1, &frame(A, B), Some(3)), // known, buffered
            packet_in(version, 1, &frame(A, C), None),    // unknown → flood
            packet_in(version, 2, &frame(B, MacAddr([0xff; 6])), Some(4)), // broadcast
        ];
        // Warm up: the MAC table learns (that allocates, once).
        for m in &inputs {
            out.clear();
            p.dispatcher.handle(&mut sw, m, &mut out, now);
        }
        let mut total = 0;
        let allocated = allocation_counter::measure(|| {
            for _ in 0..1000 {
                for m in &inputs {
                    out.clear();
                    p.dispatcher.handle(&mut sw, m, &mut out, now);
                    total += out.len();
                }
            }
        })
        .count_total;
        assert!(total > 0);
        assert_eq!(allocated, 0, "{version}: {allocated} allocations");
        p.dispatcher.disconnected(sw, "test", now);
    }
}

#[test]
fn the_counter_counts() {
    let info = allocation_counter::measure(|| {
        std::hint::black_box(Vec::<u8>::with_capacity(10));
    });
    assert!(info.count_total > 0);
}

#[test]
fn packet_in_views_of_the_fake_switch_are_valid() {
    for version in [Version::V1_0, Version::V1_3] {
        let m = packet_in(version, 7, &frame(A, B), Some(1));
        let v = PacketIn::parse(&m[..]).unwrap();
        assert_eq!(
            (v.in_port(), v.buffer_id(), v.version()),
            (7, Some(1), version)
        );
    }
}

/// Panics in its switch-added listener; would flood otherwise.
struct FragileStart;
impl App for FragileStart {
    type State = ();
    fn name(&self) -> &'static str {
        "fragile_start"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_switch_added(|_, _, _| panic!("cannot start on this switch"));
        b.on_packet_in(Order::direct(0), |_, _, _, _| {
            panic!("quarantined apps are never called")
        });
    }
}

/// Panics in a request callback.
struct FragileReply;
impl App for FragileReply {
    type State = ();
    fn name(&self) -> &'static str {
        "fragile_reply"
    }
    fn build(&self, b: &mut Builder<Self>) {
        b.on_switch_added(|_, ctx, _| {
            ctx.barrier::<FragileReply>(Duration::from_secs(1), |_, _, _, _| panic!("bad reply"));
        });
    }
}

#[test]
fn panics_in_listeners_and_callbacks_quarantine_too() {
    let p = pipeline(vec![
        Box::new(FragileStart),
        Box::new(FragileReply),
        Box::new(Hub),
    ]);
    let mut sw = FakeSwitch::connect(&p, 1, Version::V1_0);
    assert_eq!(p.apps.is_quarantined("fragile_start"), Some(true));
    // The hub's initializer and FragileReply's barrier still went out.
    let sent = sw.take();
    let Some(Sent::Other(xid, _)) = sent.last() else {
        panic!("{sent:?}")
    };
    let reply = Message::V10(of10::Message::BarrierReply)
        .to_bytes(*xid)
        .unwrap();
    assert!(sw.feed(&reply).is_empty());
    assert_eq!(p.apps.is_quarantined("fragile_reply"), Some(true));
    assert_eq!(p.apps.is_quarantined("hub"), Some(false));
    assert_eq!(p.apps.counters().handler_panics, 2);
    assert_eq!(sw.packet(1, A, B, None), [flood(1, None, frame(A, B))]);
}
