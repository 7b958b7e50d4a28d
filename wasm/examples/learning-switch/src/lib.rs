//! The learning switch as a WebAssembly app. For each PACKET_IN:
//! 1. Learns that the source (unless multicast) is behind the in-port (a full table,
//!    `max_addresses` per switch, is emptied first).
//! 2. Floods a packet to a multicast or unknown destination (3a);
//!    3b. drops one whose destination is behind its in-port; 3c. else installs
//!    `in_port, eth_src, eth_dst → port`, 3d. with a PACKET_OUT if not buffered.
//!
//! On 1.3 it installs the table-miss entry. Parameters (defaults):
//! `{"idle_timeout": 60, "max_addresses": 8192}`.
use pharos_guest::*;

/// MAC → port, per switch (this instance sees the switches of one worker).
struct LearningSwitch {
    tables: FastMap<u64, FastMap<u64, u32>>,
    idle_timeout: u16,
    max_addresses: usize,
}

impl App for LearningSwitch {
    fn new(params: &str) -> Result<Self, String> {
        let idle_timeout = param_number(params, "idle_timeout")?.unwrap_or(60);
        let max_addresses = param_number(params, "max_addresses")?.unwrap_or(8192);
        Ok(LearningSwitch {
            tables: FastMap::default(),
            idle_timeout,
            max_addresses,
        })
    }

    /// Nothing after a learning switch reads its verdict: a turn's PACKET_INs in one call.
    fn batch_packet_ins(&self) -> bool {
        true
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
        if !is_multicast(p.eth_src) {
            if macs.len() >= self.max_addresses && !macs.contains_key(&p.eth_src) {
                macs.clear(); // a scan or a flood of addresses: learn again
            }
            macs.insert(p.eth_src, p.in_port);
        }
        match macs.get(&p.eth_dst) {
            // 2, 3a (multicast addresses are never learned: they are unknown)
            None => forward(&[Action::Output(Port::Flood)]),
            Some(&port) if port == p.in_port => {} // 3b
            Some(&port) => {
                // 3c (3d below)
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
                if p.buffer_id.is_none() {
                    forward(&fm.actions);
                }
            }
        }
        Flow::Stop
    }
}

app!(LearningSwitch);
