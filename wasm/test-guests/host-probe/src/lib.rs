//! A guest for the host's tests that uses every import: the n-th PACKET_IN from a
//! source address on a switch (counted in the host's per-switch store) is sent back
//! out of port n in a PACKET_OUT of the bytes the guest read (`packet-data`), followed
//! by a barrier; the time and the count are logged.
use pharos_guest::*;

struct HostProbe;

impl App for HostProbe {
    fn new(_: &str) -> Result<Self, String> {
        Ok(HostProbe)
    }

    fn packet_in(&mut self, _: Switch, p: PacketIn) -> Flow {
        let n = state_get(p.eth_src).unwrap_or(0) + 1;
        state_set(p.eth_src, n);
        let data = packet_data();
        if data.len() != p.data_len as usize {
            log(Level::Error, "packet-data and data-len disagree");
        }
        let out = PacketOut {
            in_port: Port::Controller,
            actions: vec![Action::Output(Port::Physical(n as u32))],
            data,
        };
        send_packet_out(&out);
        barrier();
        log(Level::Debug, &format!("{n} at {} ms", now_ms()));
        Flow::Stop
    }
}

app!(HostProbe);
