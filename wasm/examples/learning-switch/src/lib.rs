//! The learning switch as a WebAssembly app. For each PACKET_IN:
//!
//! 1. Learns that the source address (unless multicast) is behind the in-port.
//! 2. If the destination is multicast: floods the packet.
//! 3. Otherwise looks the destination up:
//!    - 3a. unknown: floods the packet;
//!    - 3b. behind the in-port: drops it (it is already there);
//!    - 3c. behind another port: installs `in_port, eth_src, eth_dst → port`;
//!    - 3d. a packet not buffered follows in a PACKET_OUT.
//!
//! On 1.3 it installs the table-miss entry. Parameters: `{"idle_timeout": 60}`.
use pharos_guest::*;

/// MAC → port, per switch (this instance sees the switches of one worker).
struct LearningSwitch {
    tables: FastMap<u64, FastMap<u64, u32>>,
    idle_timeout: u16,
}

impl App for LearningSwitch {
    fn new(params: &str) -> Result<Self, String> {
        let idle_timeout = param_number(params, "idle_timeout")?.unwrap_or(60);
        let tables = FastMap::default();
        Ok(LearningSwitch {
            tables,
            idle_timeout,
        })
    }

    fn initialize_switch(&mut self, sw: Switch, _: Vec<PortInfo>) {
        if sw.version == Version::V13 {
            let to_controller = vec![Action::Output(Port::Controller)];
            send_flow_mod(&FlowMod {
                priority: 0,
                ..flow_add(ANY, to_controller)
            });
        }
    }

    fn switch_removed(&mut self, sw: Switch) {
        self.tables.remove(&sw.dpid);
    }

    fn packet_in(&mut self, sw: Switch, p: PacketIn) -> Flow {
        let macs = self.tables.entry(sw.dpid).or_default();
        // 1
        if !is_multicast(p.eth_src) {
            macs.insert(p.eth_src, p.in_port);
        }
        match macs.get(&p.eth_dst) {
            // 2, 3a (multicast addresses are never learned: they are unknown)
            None => forward(&[Action::Output(Port::Flood)]),
            // 3b
            Some(&port) if port == p.in_port => {}
            // 3c
            Some(&port) => {
                let m = Match {
                    in_port: Some(p.in_port),
                    eth_src: Some(p.eth_src),
                    eth_dst: Some(p.eth_dst),
                    ..ANY
                };
                let actions = vec![Action::Output(Port::Physical(port))];
                let fm = FlowMod {
                    idle_timeout: self.idle_timeout,
                    buffer_id: p.buffer_id,
                    ..flow_add(m, actions)
                };
                send_flow_mod(&fm);
                // 3d
                if p.buffer_id.is_none() {
                    forward(&fm.actions);
                }
            }
        }
        Flow::Stop
    }
}

app!(LearningSwitch);
