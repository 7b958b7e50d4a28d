//! Where frames leave to: the ports, the controllers (PACKET_IN, with the packet
//! buffers) — the [`Sink`] the tables hand each output to. Nothing here allocates per
//! frame: a port send copies into the port's transmit queue, a PACKET_IN is encoded
//! straight into each controller's output buffer.

use openflow::header::Version;

use super::buffers::Buffers;
use super::channel::Channel;
use super::ports::{config, PortIo, PortSlot};
use crate::{Egress, Sink, ToController};

/// Frames the fabric dropped, by cause (nothing is lost silently).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drops {
    /// Output to a port number the switch does not have.
    pub no_such_port: u64,
    /// Output to the local port (the switch has none).
    pub local: u64,
    /// PACKET_IN with no controller connected, or its input port set NO_PACKET_IN.
    pub packet_in: u64,
}

/// Everything a frame can go to.
#[derive(Debug)]
pub struct Fabric<P> {
    pub ports: Vec<PortSlot<P>>,
    /// One per controller target, in the order given (connected or not).
    pub channels: Vec<Channel>,
    pub buffers: Buffers,
    /// The version the tables run (decides how `miss_send_len` applies).
    pub version: Option<Version>,
    pub drops: Drops,
    /// PACKET_INs queued (one per frame, whatever the number of controllers).
    pub packet_ins: u64,
}

impl<P: PortIo> Fabric<P> {
    /// The index of port `port_no`. Ports are few and numbered from 1 in order, so
    /// the common case is a direct index.
    #[inline]
    pub fn index(&self, port_no: u32) -> Option<usize> {
        let guess = port_no.wrapping_sub(1) as usize;
        match self.ports.get(guess) {
            Some(p) if p.port_no == port_no => Some(guess),
            _ => self.ports.iter().position(|p| p.port_no == port_no),
        }
    }

    fn out_port(&mut self, port_no: u32, frame: &[u8]) {
        match self.index(port_no) {
            Some(i) => self.ports[i].send(frame),
            None => self.drops.no_such_port += 1,
        }
    }

    fn flood(&mut self, in_port: u32, frame: &[u8], honour_no_flood: bool) {
        for p in &mut self.ports {
            if p.port_no == in_port || (honour_no_flood && p.config & config::NO_FLOOD != 0) {
                continue;
            }
            p.send(frame);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn packet_in(
        &mut self,
        in_port: u32,
        frame: &[u8],
        max_len: u16,
        reason: ToController,
        table_id: u8,
        cookie: u64,
    ) {
        let blocked = self
            .index(in_port)
            .is_some_and(|i| self.ports[i].config & config::NO_PACKET_IN != 0);
        if blocked || !self.channels.iter().any(|c| c.async_version().is_some()) {
            self.drops.packet_in += 1;
            return;
        }
        // 1.0 §5.3.3: a table miss sends `miss_send_len` bytes (the controller's
        // SET_CONFIG). 1.3.3 §7.2.5: output:CONTROLLER's max_len, and
        // OFPCML_NO_BUFFER (0xffff) asks for the whole frame, unbuffered.
        let v10 = self.version == Some(Version::V1_0);
        let unbuffered = !v10 && max_len == 0xffff;
        let buffer_id = if unbuffered {
            None
        } else {
            self.buffers.store(in_port, frame)
        };
        let id = buffer_id.unwrap_or(openflow::model::NO_BUFFER);
        for ch in &mut self.channels {
            let len = match buffer_id {
                None => frame.len(),
                Some(_) if v10 && reason == ToController::NoMatch => ch.miss_send_len as usize,
                Some(_) => max_len as usize,
            };
            ch.packet_in(id, in_port, reason, table_id, cookie, frame, len);
        }
        self.packet_ins += 1;
    }
}

impl<P: PortIo> Sink for Fabric<P> {
    #[inline]
    fn emit(&mut self, egress: Egress, in_port: u32, frame: &[u8]) {
        match egress {
            Egress::Port(p) => self.out_port(p, frame),
            Egress::InPort => self.out_port(in_port, frame),
            Egress::Flood => self.flood(in_port, frame, true),
            Egress::All => self.flood(in_port, frame, false),
            Egress::Local => self.drops.local += 1,
            Egress::Controller {
                max_len,
                reason,
                table_id,
                cookie,
            } => self.packet_in(in_port, frame, max_len, reason, table_id, cookie),
        }
    }
}
