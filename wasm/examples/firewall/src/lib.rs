//! A small firewall as a WebAssembly app, in the advise phase (before forwarding):
//! an IPv4 TCP or UDP packet to a denied port is dropped, and a flow dropping that
//! traffic (same source, destination and port, for `idle_timeout` seconds) is
//! installed so the switch drops the rest itself. Everything else goes on to the
//! next app.
//!
//! Parameters: `{"deny_tcp": [22, 23], "deny_udp": [53]}`.
use pharos_guest::*;

struct Firewall {
    deny_tcp: Vec<u16>,
    deny_udp: Vec<u16>,
}

/// The numbers of the JSON array under `key` in `params` (a tiny reader: the
/// parameters are a flat object of number arrays).
fn ports(params: &str, key: &str) -> Result<Vec<u16>, String> {
    let Some((_, rest)) = params.split_once(&format!("\"{key}\"")) else {
        return Ok(Vec::new());
    };
    let list = rest.split_once('[').and_then(|(_, r)| r.split_once(']'));
    let (list, _) = list.ok_or(format!("{key}: expected a list of ports"))?;
    let numbers = list.split(',').map(str::trim).filter(|s| !s.is_empty());
    numbers
        .map(|n| n.parse().map_err(|e| format!("{key}: {n}: {e}")))
        .collect()
}

impl App for Firewall {
    fn new(params: &str) -> Result<Self, String> {
        Ok(Firewall {
            deny_tcp: ports(params, "deny_tcp")?,
            deny_udp: ports(params, "deny_udp")?,
        })
    }

    fn packet_in(&mut self, _: Switch, p: PacketIn) -> Flow {
        if p.eth_type != 0x0800 {
            return Flow::Continue;
        }
        let data = packet_data();
        // Ethernet (14 bytes, no VLAN tag here), then IPv4: protocol at 9, addresses at
        // 12 and 16, header length in the low nibble of byte 0; then the ports.
        let Some(ip) = data.get(14..) else {
            return Flow::Continue;
        };
        if ip.len() < 20 || data[12..14] != [0x08, 0x00] {
            return Flow::Continue;
        }
        let header = usize::from(ip[0] & 0x0f) * 4;
        let Some(tp) = ip.get(header..header + 4) else {
            return Flow::Continue;
        };
        let (proto, dst_port) = (ip[9], u16::from_be_bytes([tp[2], tp[3]]));
        let denied = match proto {
            6 => &self.deny_tcp,
            17 => &self.deny_udp,
            _ => return Flow::Continue,
        };
        if !denied.contains(&dst_port) {
            return Flow::Continue;
        }
        let addr = |at: usize| u32::from_be_bytes([ip[at], ip[at + 1], ip[at + 2], ip[at + 3]]);
        let m = Match {
            eth_type: Some(0x0800),
            ip_proto: Some(proto),
            ipv4_src: Some(Ipv4Prefix {
                addr: addr(12),
                len: 32,
            }),
            ipv4_dst: Some(Ipv4Prefix {
                addr: addr(16),
                len: 32,
            }),
            tp_dst: Some(dst_port),
            ..ANY
        };
        // No actions: drop. Above the learning switch's flows (0x8000).
        send_flow_mod(&FlowMod {
            priority: 0x9000,
            idle_timeout: 30,
            ..flow_add(m, Vec::new())
        });
        log(
            Level::Info,
            &format!("dropped {proto}/{dst_port} from {:08x}", addr(12)),
        );
        Flow::Stop
    }
}

app!(Firewall);
