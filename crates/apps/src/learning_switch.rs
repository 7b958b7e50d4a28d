//! The learning switch and the hub, on every switch version alike.
//!
//! For each PACKET_IN, the learning switch (POX's `forwarding/l2_learning`):
//!
//! 1. Learns that the source address lives behind the port the packet came in on
//!    (unless the source is multicast, or the table is full and the address new, or
//!    the port is a 1.3 port from 0xff00 to 0xfffffff7: see [`MacTable`]).
//! 2. If the destination is multicast (broadcast included): floods the packet.
//! 3. Otherwise looks the destination up:
//!    - 3a. unknown: floods the packet;
//!    - 3b. behind the port the packet came in on: drops it (it is already there);
//!    - 3c. behind another port: installs a flow `in_port, eth_src, eth_dst → that
//!      port` with the configured timeouts. A packet the switch buffered rides on the
//!      FLOW_MOD (its buffer_id: the switch applies the new flow to it), one message;
//!    - 3d. a packet not buffered (its bytes are in the PACKET_IN) follows in a
//!      PACKET_OUT out of that port.
//!
//! The table ([`MacTable`]) reads one cache line per lookup. Tables of 100,000
//! addresses outgrow the caches, so while a PACKET_IN is handled the lines the next
//! one (already read) will need are prefetched (`Builder::prefetch_packet_in`).
//!
//! The hub floods every packet (2 for everything).
//!
//! When a switch connects, both apps' initializer empties its flow table and, on an
//! OpenFlow 1.3 switch, installs the table-miss entry (priority 0, match everything,
//! output to the controller with `max_len` NO_BUFFER): a 1.3 switch drops what no flow
//! matches (1.3.5 §5.4), a 1.0 switch sends it to the controller. The initializer is
//! the app's, not the core's: an app that installs flows proactively wants no
//! table-miss entry, and only the app knows.

use controller::app::PacketIn;
use controller::app::{App, Builder, Flow, Order, SwitchCtx};
use openflow::model::{Action, FlowMod, Match, PacketOut, PortNo};
use openflow::Version;
use serde::Deserialize;

use crate::mac_table::MacTable;

/// The learning switch's parameters (`[apps.params]` in `pharos.toml`). Timeouts
/// are whole seconds: a number (`60`) or a duration (`"60s"`, `"1m"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Seconds without traffic before a learned flow expires (default 60).
    #[serde(deserialize_with = "controller::app::settings::whole_seconds::deserialize")]
    pub idle_timeout: u16,
    /// Seconds before a learned flow expires regardless (default 0: never).
    #[serde(deserialize_with = "controller::app::settings::whole_seconds::deserialize")]
    pub hard_timeout: u16,
    /// Priority of learned flows (default 0x8000, OpenFlow's default).
    pub priority: u16,
    /// Addresses learned per switch at most (default 8192): a host spraying source
    /// addresses cannot make the table grow without bound.
    pub max_addresses: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            idle_timeout: 60,
            hard_timeout: 0,
            priority: FlowMod::DEFAULT_PRIORITY,
            max_addresses: 8192,
        }
    }
}

/// The learning switch.
#[derive(Debug, Clone, Default)]
pub struct LearningSwitch {
    /// Timeouts, priority, table size.
    pub params: Params,
}

impl App for LearningSwitch {
    type State = MacTable;

    fn name(&self) -> &'static str {
        "learning_switch"
    }

    fn build(&self, b: &mut Builder<Self>) {
        // A flow found on a switch that connects (a restart) stays while its port does.
        b.on_adopt(|_, ctx, _, e| controller::app::keep_if_outputs_up(ctx.info(), &e.flow));
        b.on_initialize(|_, ctx, _| send_misses_to_controller(ctx));
        b.on_packet_in(Order::direct(0), LearningSwitch::packet_in);
        b.prefetch_packet_in(|_, macs, p| {
            if let Some(eth) = p.eth() {
                macs.prefetch(eth.src_addr());
                macs.prefetch(eth.dst_addr());
            }
        });
    }
}

impl LearningSwitch {
    fn packet_in(&self, ctx: &mut SwitchCtx, macs: &mut MacTable, p: &PacketIn) -> Flow {
        let Some(eth) = p.eth() else {
            return Flow::Continue;
        };
        let (src, dst, in_port) = (eth.src_addr(), eth.dst_addr(), p.in_port());
        // 1
        if !src.is_multicast() {
            macs.learn(src, in_port, self.params.max_addresses);
        }
        // 2
        if dst.is_multicast() {
            send(ctx, p, &[Action::output(PortNo::Flood)]);
            return Flow::Stop;
        }
        match macs.get(dst) {
            // 3a
            None => send(ctx, p, &[Action::output(PortNo::Flood)]),
            // 3b
            Some(port) if port == in_port => {}
            // 3c
            Some(port) => {
                let actions = [Action::output(PortNo::from_u32(port))];
                let m = Match {
                    in_port: Some(in_port),
                    eth_src: Some(src),
                    eth_dst: Some(dst),
                    ..Match::default()
                };
                // 1.0.0 §5.3.3, `ofp_flow_mod.buffer_id`: "Buffered packet to apply to
                // (or -1)." 1.3.5 §7.3.4.1: "A flow mod that includes a valid buffer_id
                // removes the corresponding packet from the buffer and processes it
                // through the entire OpenFlow pipeline after the flow is inserted [...]
                // effectively equivalent to sending a two-message sequence of a flow mod
                // and a packet-out to OFPP_TABLE". One message instead of two, as
                // Beacon's and POX's learning switches answer.
                let fm = FlowMod::add(m, &actions)
                    .idle_timeout(self.params.idle_timeout)
                    .hard_timeout(self.params.hard_timeout)
                    .priority(self.params.priority)
                    .buffer_id(p.buffer_id());
                ctx.send_flow_mod(&fm);
                // 3d
                if p.buffer_id().is_none() {
                    send(ctx, p, &actions);
                }
            }
        }
        Flow::Stop
    }
}

/// The hub: floods every packet.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hub;

impl App for Hub {
    type State = ();

    fn name(&self) -> &'static str {
        "hub"
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.on_initialize(|_, ctx, _| send_misses_to_controller(ctx));
        b.on_packet_in(Order::direct(0), |_, ctx, _, p| {
            send(ctx, p, &[Action::output(PortNo::Flood)]);
            Flow::Stop
        });
    }
}

/// Sends the packet of `p` through `actions` ([`PacketOut::of_packet_in`]).
fn send(ctx: &mut SwitchCtx, p: &PacketIn, actions: &[Action]) {
    ctx.send_packet_out(&PacketOut::of_packet_in(p, actions));
}

/// On 1.3, adds the table-miss entry sending packets to the controller whole
/// (`max_len` 0xffff, OFPCML_NO_BUFFER), unless the switch kept one when it connected
/// ([`SwitchCtx::adopted`]). The table is not emptied: the flows found on the switch
/// were already kept or deleted by their apps ([`controller::app::Adopt`]), so a
/// restarted controller does not cut traffic. (1.0 switches send table misses to the
/// controller by themselves.)
pub fn send_misses_to_controller(ctx: &mut SwitchCtx) {
    let kept = ctx.adopted().is_some_and(controller::app::has_table_miss);
    if ctx.version() == Version::V1_3 && !kept {
        let to_controller = [Action::output(PortNo::Controller)];
        ctx.send_flow_mod(&FlowMod::add(Match::default(), &to_controller).priority(0));
    }
}
