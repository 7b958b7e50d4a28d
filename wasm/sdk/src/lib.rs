//! Write a Pharos app as a WebAssembly component.
//!
//! An app is a type implementing [`App`] (every handler has a default that does
//! nothing), exported with [`app!`]; build the crate as a `cdylib` for
//! `wasm32-wasip2` and load the `.wasm` with `pharos ctl app load` (or
//! `pharos run --wasm-app`).
//!
//! ```ignore
//! struct Hub;
//! impl pharos_guest::App for Hub {
//!     fn new(_params: &str) -> Result<Self, String> { Ok(Hub) }
//!     fn packet_in(&mut self, _: Switch, _: PacketIn) -> Flow {
//!         forward(&[Action::Output(Port::Flood)]);
//!         Flow::Stop
//!     }
//! }
//! pharos_guest::app!(Hub);
//! ```
//!
//! The host runs one instance of the app per controller worker thread, so a global
//! (the `App` value itself) sees the switches of one worker: key per-switch data by
//! [`Switch::dpid`] and drop it in [`App::switch_removed`], or keep it in the host's
//! per-switch store ([`state_get`], [`state_set`]). Sends are queued and written to
//! the switch when the handler returns. The sandbox gives no files, network or
//! environment: `std::fs`, `std::net`, `std::env` and `HashMap`'s random seeding fail
//! (trap); use [`FastMap`] for hash maps.
//!
//! An app last in the PACKET_IN order (nothing after it reads its verdict) should say
//! so with [`App::batch_packet_ins`]: the host then calls it once per turn of a switch
//! with up to 64 PACKET_INs, not once per PACKET_IN, and its sends come back in the
//! call's result. The handler is written the same way ([`App::packet_in`], one packet
//! at a time; [`send_flow_mod`], [`forward`] and the others work as before).

// The generated code names this crate by its path, from here as from the apps.
extern crate self as pharos_guest;

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "app",
        path: "../../crates/wasm/wit",
        pub_export_macro: true,
        export_macro_name: "__export_app",
        default_bindings_module: "pharos_guest::bindings",
        runtime_path: "pharos_guest::__wit_bindgen::rt",
    });
}

#[doc(hidden)]
pub use wit_bindgen as __wit_bindgen;

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::marker::PhantomData;

use bindings::pharos::app::host;
pub use bindings::pharos::app::host::{log, now_ms, state_get, state_remove, state_set};
pub use bindings::pharos::app::types::{
    Action, AppInfo, Flow, FlowMod, FlowModCommand, FlowRemoved, Ipv4Prefix, Level, Match,
    PacketIn, PacketOut, Port, PortInfo, PortReason, Switch, Version,
};

mod batch;

/// A batch being handled ([`App::batch_packet_ins`]): the index of the PACKET_IN being
/// handled, and what the handler sent so far (encoded: see `batch`).
struct Pending {
    index: u32,
    answers: Vec<u8>,
}

thread_local! {
    /// Set while `packet-ins` runs.
    static BATCH: RefCell<Option<Pending>> = const { RefCell::new(None) };
}

/// Runs `f` on the batch being handled; false (and `f` not run) outside one.
fn in_batch(f: impl FnOnce(&mut Pending)) -> bool {
    BATCH.with_borrow_mut(|b| match b {
        Some(b) => {
            f(b);
            true
        }
        None => false,
    })
}

/// Queues a FLOW_MOD to the switch being handled.
pub fn send_flow_mod(fm: &FlowMod) {
    if !in_batch(|b| batch::flow_mod(fm, &mut b.answers)) {
        host::send_flow_mod(fm)
    }
}

/// Queues a PACKET_OUT to the switch being handled (to send the packet of the
/// PACKET_IN being handled, use [`forward`]).
pub fn send_packet_out(po: &PacketOut) {
    if !in_batch(|b| batch::packet_out(po, &mut b.answers)) {
        host::send_packet_out(po)
    }
}

/// Sends the packet of the PACKET_IN being handled through `actions` (by its buffer id
/// when the switch buffered it, else with its bytes). Outside a PACKET_IN handler it
/// does nothing.
pub fn forward(actions: &[Action]) {
    if !in_batch(|b| batch::forward(b.index, actions, &mut b.answers)) {
        host::forward(actions)
    }
}

/// Queues a BARRIER_REQUEST: the switch finishes everything sent before it first.
pub fn barrier() {
    if !in_batch(|b| b.answers.push(batch::BARRIER)) {
        host::barrier()
    }
}

/// The bytes of the PACKET_IN being handled (empty outside a PACKET_IN handler).
pub fn packet_data() -> Vec<u8> {
    match BATCH.with_borrow(|b| b.as_ref().map(|b| b.index)) {
        Some(index) => host::packet_data_at(index),
        None => host::packet_data(),
    }
}

/// A Pharos app. Every handler but [`App::new`] has a default that does nothing (and a
/// PACKET_IN handler's default lets the next app see the packet).
pub trait App: 'static {
    /// Makes the app from its parameters (JSON, `"{}"` when none); an error refuses
    /// the load with that message.
    fn new(params: &str) -> Result<Self, String>
    where
        Self: Sized;
    /// Run [`App::timer`] on every switch this often (milliseconds).
    fn timer_period_ms(&self) -> Option<u32> {
        None
    }
    /// True to have PACKET_INs handed over a turn at a time (one call into the app for
    /// up to 64 of them; much cheaper). The cost: the verdict [`App::packet_in`] returns
    /// is ignored (the apps after this one have already seen the packet), and what it
    /// sends goes out after what the other apps sent for that turn's packets. For an app
    /// last in the PACKET_IN order, such as a learning switch.
    fn batch_packet_ins(&self) -> bool {
        false
    }
    /// A switch connected, before any app's `switch_added`: install table-miss entries.
    fn initialize_switch(&mut self, sw: Switch, ports: Vec<PortInfo>) {
        let _ = (sw, ports);
    }
    /// A switch connected, after every app's initializer.
    fn switch_added(&mut self, sw: Switch) {
        let _ = sw;
    }
    /// A switch left.
    fn switch_removed(&mut self, sw: Switch) {
        let _ = sw;
    }
    /// A PACKET_IN; return [`Flow::Stop`] to hide it from the apps after this one.
    fn packet_in(&mut self, sw: Switch, pkt: PacketIn) -> Flow {
        let _ = (sw, pkt);
        Flow::Continue
    }
    /// A port came, went or changed.
    fn port_status(&mut self, sw: Switch, reason: PortReason, port: PortInfo) {
        let _ = (sw, reason, port);
    }
    /// A flow installed with `send_flow_removed` left the table.
    fn flow_removed(&mut self, sw: Switch, removed: FlowRemoved) {
        let _ = (sw, removed);
    }
    /// Every [`App::timer_period_ms`], on every switch.
    fn timer(&mut self, sw: Switch) {
        let _ = sw;
    }
}

/// A match on nothing (every field a wildcard): `Match { eth_dst: Some(m), ..ANY }`.
pub const ANY: Match = Match {
    in_port: None,
    eth_src: None,
    eth_dst: None,
    eth_type: None,
    vlan_vid: None,
    ip_proto: None,
    ipv4_src: None,
    ipv4_dst: None,
    tp_src: None,
    tp_dst: None,
};

/// A FLOW_MOD adding a flow: priority 0x8000, no timeouts, cookie 0, table 0.
pub fn flow_add(match_: Match, actions: Vec<Action>) -> FlowMod {
    FlowMod {
        command: FlowModCommand::Add,
        match_,
        actions,
        cookie: 0,
        priority: 0x8000,
        idle_timeout: 0,
        hard_timeout: 0,
        buffer_id: None,
        table_id: 0,
        send_flow_removed: false,
    }
}

/// A FLOW_MOD deleting this app's flows that `match_` covers.
pub fn flow_delete(match_: Match) -> FlowMod {
    FlowMod {
        command: FlowModCommand::Delete,
        ..flow_add(match_, Vec::new())
    }
}

/// Whether a MAC address (low 48 bits) is multicast (broadcast included).
pub fn is_multicast(mac: u64) -> bool {
    mac & (1 << 40) != 0
}

/// The number under `key` in the parameters (a flat JSON object): `None` when the key
/// is absent, an error naming it when its value is not a `T`.
pub fn param_number<T>(params: &str, key: &str) -> Result<Option<T>, String>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    let Some((_, rest)) = params.split_once(&format!("\"{key}\"")) else {
        return Ok(None);
    };
    let value = rest.trim_start().trim_start_matches(':').trim_start();
    let end = value
        .find(|c: char| !(c.is_ascii_digit() || c == '-' || c == '.'))
        .unwrap_or(value.len());
    let value = &value[..end];
    value
        .parse()
        .map(Some)
        .map_err(|e| format!("{key}: {value:?}: {e}"))
}

/// A log line at info level.
pub fn info(message: &str) {
    log(Level::Info, message)
}

/// A hash map that needs no random seed (the sandbox has none): FxHash's multiply.
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// FxHash (rustc's): one multiply per word. Not for keys an attacker picks to collide;
/// MAC and dpid tables are what it is for.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n))
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

thread_local! {
    /// The app (a component instance runs one thread: this is a plain global).
    static APP: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// Runs `f` with the app; called only by the glue, after `init` made it.
fn with<T: App, R>(f: impl FnOnce(&mut T) -> R) -> R {
    APP.with_borrow_mut(|app| {
        let app = app.as_mut().and_then(|a| a.downcast_mut::<T>());
        f(app.expect("pharos-guest: a handler ran before init"))
    })
}

/// The exports, forwarding to an [`App`]; [`app!`] exports it.
#[doc(hidden)]
pub struct Glue<T>(PhantomData<T>);

impl<T: App> bindings::Guest for Glue<T> {
    fn init(params: String) -> Result<AppInfo, String> {
        // A panic's message goes to the controller's log (the sandbox has no stderr),
        // where the host also adds it to the quarantine's reason; then the guest traps.
        std::panic::set_hook(Box::new(|info| log(Level::Error, &info.to_string())));
        let app = T::new(&params)?;
        let info = AppInfo {
            timer_period_ms: app.timer_period_ms(),
            batch_packet_ins: app.batch_packet_ins(),
        };
        APP.with_borrow_mut(|slot| *slot = Some(Box::new(app)));
        Ok(info)
    }
    fn initialize_switch(sw: Switch, ports: Vec<PortInfo>) {
        with(|a: &mut T| a.initialize_switch(sw, ports))
    }
    fn switch_added(sw: Switch) {
        with(|a: &mut T| a.switch_added(sw))
    }
    fn switch_removed(sw: Switch) {
        with(|a: &mut T| a.switch_removed(sw))
    }
    fn packet_in(sw: Switch, pkt: PacketIn) -> Flow {
        with(|a: &mut T| a.packet_in(sw, pkt))
    }
    fn packet_ins(sw: Switch, pkts: Vec<u8>) -> Vec<u8> {
        let n = pkts.len() / batch::RECORD;
        let answers = Vec::with_capacity(n * 64);
        BATCH.with_borrow_mut(|b| *b = Some(Pending { index: 0, answers }));
        with(|a: &mut T| {
            for (i, r) in pkts.chunks_exact(batch::RECORD).enumerate() {
                in_batch(|b| b.index = i as u32);
                a.packet_in(sw, batch::packet_in(r));
            }
        });
        BATCH
            .with_borrow_mut(Option::take)
            .map_or_else(Vec::new, |b| b.answers)
    }
    fn port_status(sw: Switch, reason: PortReason, port: PortInfo) {
        with(|a: &mut T| a.port_status(sw, reason, port))
    }
    fn flow_removed(sw: Switch, removed: FlowRemoved) {
        with(|a: &mut T| a.flow_removed(sw, removed))
    }
    fn timer(sw: Switch) {
        with(|a: &mut T| a.timer(sw))
    }
}

/// Exports `$t` (an [`App`]) as the component's app.
#[macro_export]
macro_rules! app {
    ($t:ty) => {
        type __PharosGlue = $crate::Glue<$t>;
        $crate::bindings::__export_app!(__PharosGlue with_types_in $crate::bindings);
    };
}
