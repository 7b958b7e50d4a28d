//! Static flows (`static_flows`), as Floodlight's static entry pusher: named flows in
//! `ovs-ofctl` syntax that the controller keeps ([`StaticFlows`], a service) and
//! installs on their switch each time it connects.
//!
//! The flows come from the configuration file (`[[static_flows.flow]]`, read-only, see
//! [`config`]) and from the REST API (kept in the state file, see [`store`]). `pharos
//! run` always runs this app, last, without it being listed in `apps`. Its flows carry
//! its cookie tag like every app's ([`controller::app::app_tag`]): the top 16 bits of a static
//! flow's cookie are the app's, only the low 48 are the user's. A restarted controller finds them on
//! the switch and keeps them ([`controller::app::Adopt`]); they are sent again anyway
//! (an ADD of the same flow replaces it).
//!
//! On a switch that connects:
//!
//! 1. Each of its flows is sent as an ADD FLOW_MOD in the switch's version, its xid
//!    noted in the app's state for the switch; a flow the version cannot express (a
//!    1.3 instruction for a 1.0 switch) is refused at once, with the reason.
//! 2. A BARRIER_REQUEST follows. The switch answers a FLOW_MOD it refuses with an ERROR
//!    carrying the start of the FLOW_MOD, whose header holds the xid: 2a. that flow is
//!    refused, with the error's type and code names (`BAD_ACTION/BAD_OUT_PORT`).
//! 3. The barrier reply comes after every FLOW_MOD was applied or refused: the flows
//!    not refused are installed. No reply in [`REPLY_TIMEOUT`] leaves them pending.
//!
//! A flow's status is what its switch said the last time it was sent; whether the
//! switch is connected now is for the reader to check (the REST API shows the flows of
//! a switch not connected as pending). A flow added, replaced or deleted through the
//! REST API while its switch is connected is sent at once by the API.

pub mod config;
pub mod store;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use controller::app::{App, Builder, Flow, MessageKind, Order, Reply, SwitchCtx};
use openflow::common::ErrorBody;
use openflow::ofctl::FlowModCommand;
use openflow::{of10, of13, Message};

pub use config::{StaticFlowConfig, StaticFlowsConfig};
pub use store::{LoadError, Source, StaticFlow, StaticFlows, Status, StoreError};

/// How long a switch has to answer the barrier after its static flows.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// The app's name.
pub const NAME: &str = "static_flows";

/// The app: installs the flows of [`StaticFlows`] on each switch that connects.
#[derive(Debug)]
pub struct StaticFlowsApp {
    /// The flows, shared with the REST API (provided as a service).
    store: Arc<StaticFlows>,
}

/// Per switch: the static flows sent and not yet answered, by FLOW_MOD xid (name and
/// generation).
#[derive(Debug, Default)]
pub struct Sent(HashMap<u32, (String, u64)>);

impl StaticFlowsApp {
    /// The app over `store`.
    pub fn new(store: Arc<StaticFlows>) -> StaticFlowsApp {
        StaticFlowsApp { store }
    }

    /// The flows.
    pub fn store(&self) -> &Arc<StaticFlows> {
        &self.store
    }

    fn install(&self, ctx: &mut SwitchCtx, sent: &mut Sent) {
        // A new connection: xids of an older one mean nothing here.
        sent.0.clear();
        let (dpid, version) = (ctx.dpid(), ctx.version());
        let flows = self.store.of_switch(dpid);
        if flows.is_empty() {
            return;
        }
        // 1
        for f in flows {
            match flow_mod(&f.flow, version, FlowModCommand::Add) {
                Ok(msg) => {
                    self.store
                        .set_status(&f.name, f.generation, Status::Pending);
                    if let Some(xid) = ctx.send(&msg) {
                        sent.0.insert(xid, (f.name, f.generation));
                    }
                }
                Err(e) => {
                    let why = format!("cannot be sent to this OpenFlow {version} switch: {e}");
                    tracing::warn!(%dpid, name = f.name, "static flow not installed: {why}");
                    self.store
                        .set_status(&f.name, f.generation, Status::Refused(why));
                }
            }
        }
        if sent.0.is_empty() {
            return;
        }
        // 2, 3
        ctx.barrier::<Self>(REPLY_TIMEOUT, |app, ctx, sent, reply| {
            let dpid = ctx.dpid();
            match reply {
                Reply::Messages(_) => {
                    let n = sent.0.len();
                    for (_, (name, generation)) in sent.0.drain() {
                        app.store.set_status(&name, generation, Status::Installed);
                    }
                    tracing::info!(%dpid, installed = n, "static flows installed");
                }
                Reply::Error(e) => {
                    let why = format!("the switch refused the barrier after it: {}", describe(&e).map_or_else(String::new, |(_, d)| d));
                    for (_, (name, generation)) in sent.0.drain() {
                        app.store.set_status(&name, generation, Status::Refused(why.clone()));
                    }
                }
                Reply::TimedOut => {
                    tracing::warn!(%dpid, pending = sent.0.len(), "the switch did not answer the barrier after its static flows in {REPLY_TIMEOUT:?}: they stay pending");
                    sent.0.clear();
                }
                Reply::SwitchGone | Reply::Busy => sent.0.clear(),
            }
        });
    }

    // 2a
    fn on_error(&self, ctx: &mut SwitchCtx, sent: &mut Sent, msg: &Message) -> Flow {
        if let Some((xid, why)) = describe(msg) {
            if let Some((name, generation)) = xid.and_then(|x| sent.0.remove(&x)) {
                tracing::warn!(dpid = %ctx.dpid(), name, error = why, "static flow refused by the switch");
                self.store
                    .set_status(&name, generation, Status::Refused(why));
            }
        }
        Flow::Continue
    }
}

/// The FLOW_MOD doing `command` with static flow `flow` in `version`, its cookie
/// carrying this app's tag ([`controller::app::app_tag`]) as the core stamps it on what the
/// app sends: the REST API, which sends static flows itself, uses it too, so a
/// restarted controller finds every static flow to be this app's. On 1.3 a delete is
/// limited to the app's tag (its cookie mask).
pub fn flow_mod(
    flow: &openflow::ofctl::Flow,
    version: openflow::Version,
    command: FlowModCommand,
) -> openflow::EncodeResult<Message> {
    use controller::app::{app_tag, with_tag, TAG_MASK};
    let mut flow = flow.clone();
    flow.cookie = with_tag(app_tag(NAME), flow.cookie);
    let deletes = matches!(
        command,
        FlowModCommand::Delete | FlowModCommand::DeleteStrict
    );
    if deletes && version == openflow::Version::V1_3 {
        flow.cookie_mask |= TAG_MASK;
    }
    flow.to_message(version, command)
}

/// An ERROR's text (`BAD_MATCH/BAD_PREREQ`, numbers where a name is unknown) and, when
/// it answers a FLOW_MOD whose header it carries, that FLOW_MOD's xid. `None` for any
/// other message.
pub fn describe(msg: &Message) -> Option<(Option<u32>, String)> {
    let (body, text) = match msg {
        Message::V10(of10::Message::Error(b)) => {
            let text = match b {
                ErrorBody::Standard { err_type, code, .. } => {
                    of10::error_codes::describe_error(*err_type, *code)
                }
                ErrorBody::Experimenter { .. } => of13::error_codes::describe(b),
            };
            (b, text)
        }
        Message::V13(of13::Message::Error(b)) => (b, of13::error_codes::describe(b)),
        _ => return None,
    };
    let data = match body {
        ErrorBody::Standard { data, .. } | ErrorBody::Experimenter { data, .. } => data,
    };
    let xid = (data.len() >= 8 && data[1] == openflow::msg_type::FLOW_MOD)
        .then(|| u32::from_be_bytes([data[4], data[5], data[6], data[7]]));
    Some((xid, text))
}

impl App for StaticFlowsApp {
    type State = Sent;

    fn name(&self) -> &'static str {
        NAME
    }

    fn build(&self, b: &mut Builder<Self>) {
        b.provide(Arc::clone(&self.store));
        b.on_initialize(Self::install);
        // Observe: it sees every ERROR, whatever another app does with it.
        b.on_message(MessageKind::Error, Order::observe(0), Self::on_error);
    }
}

#[cfg(test)]
mod tests;
