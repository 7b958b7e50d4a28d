//! A route's flows on the switches: one per switch, added from the destination end
//! back (so the first switch's, which asks for FLOW_REMOVED, leaves last) and deleted
//! strictly, under routing's cookie tag; and which of routing's flows a switch that
//! connects may keep.

use controller::app::{keep_if_outputs_up, tag_of, Adopt, AppSwitches, SwitchCtx, SwitchInfo};
use openflow::model::{Action, FlowMod, FlowModCommand, PortNo};

use super::route::PortHop;
use super::routes::{Installed, Key, Routes, COOKIE_TAG};
use super::shared::Shared;

impl Shared {
    /// Sends the flow of one hop of a route (through `ctx` on this switch, through
    /// `Switches` elsewhere). The first switch's flow asks for FLOW_REMOVED. `buffer`:
    /// the packet buffered on this switch that the flow applies to.
    pub(super) fn add_flow(
        &self,
        ctx: &mut SwitchCtx,
        key: &Key,
        cookie: u64,
        hop: PortHop,
        first: bool,
        buffer: Option<u32>,
    ) {
        let actions = [Action::output(PortNo::from_u32(hop.out_port))];
        let mut fm = FlowMod::add(key.matching(hop.in_port), &actions)
            .cookie(cookie)
            .idle_timeout(self.params.idle_timeout)
            .hard_timeout(self.params.hard_timeout)
            .priority(self.params.priority);
        if first {
            fm = fm.send_flow_removed();
        }
        if hop.dpid == ctx.dpid() {
            ctx.send_flow_mod(&fm.buffer_id(buffer));
        } else if let Err(e) = ctx.switches().send_flow_mod(hop.dpid, &fm) {
            tracing::debug!(dpid = %hop.dpid, error = %e, "route flow not sent");
        }
    }

    /// Deletes the flows of route `r` on the hops `which` picks.
    pub(super) fn delete_flows(&self, key: &Key, r: &Installed, which: impl Fn(&PortHop) -> bool) {
        // Under routing's tag: on 1.3 the delete reaches routing's flows only.
        let tagged = AppSwitches::new(&self.switches, tag_of(COOKIE_TAG));
        for hop in r.hops().filter(which) {
            let fm = FlowMod {
                command: FlowModCommand::DeleteStrict,
                priority: self.params.priority,
                ..FlowMod::delete(key.matching(hop.in_port))
            };
            // A switch that left took its flows with it.
            let _ = tagged.send_flow_mod(hop.dpid, &fm);
        }
    }

    /// Removes the routes `stale` picks, with their flows.
    pub(super) fn remove_routes(
        &self,
        routes: &mut Routes,
        stale: impl FnMut(&Key, &Installed) -> bool,
    ) {
        for (key, r) in routes.take(stale) {
            self.delete_flows(&key, &r, |_| true);
        }
    }
}

/// Whether a flow of routing's found on a switch that connects is still valid
/// ([`controller::app::Adopt`]): it is while every port it sends out of is on the
/// switch and up. A flow of a route that no longer holds for another reason (a host
/// that moved while no controller ran) stays until its idle timeout: this process does
/// not know the routes a previous one installed.
pub(super) fn adopt(info: &SwitchInfo, flow: &openflow::ofctl::Flow) -> Adopt {
    keep_if_outputs_up(info, flow)
}

#[cfg(test)]
mod tests {
    use super::*;
    use controller::app::PortInfo;
    use openflow::MacAddr;

    fn m(n: u8) -> MacAddr {
        MacAddr([2, 0, 0, 0, 0, n])
    }

    #[test]
    fn a_restart_keeps_the_flows_whose_ports_are_up_and_deletes_the_others() {
        let port = |port_no, state| PortInfo {
            port_no,
            hw_addr: m(port_no as u8),
            name: format!("eth{port_no}"),
            config: 0,
            state,
        };
        let info = SwitchInfo {
            dpid: openflow::Dpid(1),
            version: openflow::Version::V1_3,
            n_buffers: 0,
            n_tables: 1,
            capabilities: 0,
            // Port 2 is there but its link is down (OFPPS_LINK_DOWN).
            ports: vec![port(1, 0), port(2, 1)],
            peer: "127.0.0.1:1".parse().unwrap(),
        };
        let flow = |text: &str| openflow::ofctl::parse_flow(text).unwrap();
        assert_eq!(
            adopt(&info, &flow("in_port=2,actions=output:1")),
            Adopt::Keep
        );
        assert_eq!(
            adopt(&info, &flow("priority=0,actions=CONTROLLER:65535")),
            Adopt::Keep
        );
        assert_eq!(
            adopt(&info, &flow("in_port=1,actions=output:2")),
            Adopt::Delete
        );
        assert_eq!(
            adopt(&info, &flow("in_port=1,actions=output:9")),
            Adopt::Delete
        );
    }
}
