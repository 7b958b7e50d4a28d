//! The agent: every message a controller sends, answered, with the effects on the
//! tables, the ports and the other controllers. No sockets and no clock: the loop
//! ([`super::switch`]) feeds it bytes and the time, and writes what it queued.

use std::time::{Duration, Instant};

use openflow::common::SwitchConfig;
use openflow::header::{self, Version};
use openflow::ofctl::{FlowAction, FlowModCommand, PortNo};
use openflow::Message;

use super::buffers::{BufferError, Buffers};
use super::channel::{CloseReason, State, Versions};
use super::errors::{bad_action, bad_request, Kind, Refusal};
use super::fabric::{Drops, Fabric};
use super::ports::{config, PortIo, PortSlot};
use super::reply;
use super::request::{FlowModReq, FlowStatsReq, Request, StatsReq};
use super::tables::Tables;
use super::Channel;
use crate::table::{FlowModRequest, GroupModRequest, PipelineConfig, RemovedFlow, StatsFilter};

/// How the switch presents itself.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// The datapath id.
    pub dpid: u64,
    /// Its name (`dp_desc` in the description statistics).
    pub name: String,
    pub versions: Versions,
    /// Packet buffers (PACKET_IN's `buffer_id`); 0: every PACKET_IN carries the
    /// whole frame.
    pub n_buffers: u32,
    /// Tables in 1.3 (1.0 has one).
    pub tables: u8,
    /// Flows per table.
    pub max_flows: usize,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            dpid: 1,
            name: "pharos".into(),
            versions: Versions::Both,
            n_buffers: 256,
            tables: 8,
            max_flows: 1 << 20,
        }
    }
}

/// The OpenFlow side of one switch.
pub struct Agent<P, T> {
    pub config: AgentConfig,
    /// The tables, made when their version is known: at once when one version is
    /// configured, else on the first handshake (a switch's tables speak one version;
    /// later controllers are offered only that one).
    pub tables: Option<T>,
    pub fabric: Fabric<P>,
    /// Flows a FLOW_MOD or expiry removed (reused).
    removed: Vec<RemovedFlow>,
    /// A buffered frame taken out for a FLOW_MOD or PACKET_OUT (reused).
    frame: Vec<u8>,
}

fn buffer_refusal(e: BufferError, id: u32) -> Refusal {
    match e {
        BufferError::Unknown => {
            Refusal::bad_request(bad_request::BUFFER_UNKNOWN, format!("no buffer {id}"))
        }
        BufferError::Empty => Refusal::bad_request(
            bad_request::BUFFER_EMPTY,
            format!("buffer {id} was already used"),
        ),
    }
}

/// Refuses outputs the switch cannot do: NORMAL (no traditional forwarding), ANY,
/// TABLE outside a PACKET_OUT; queues (none exist); a group that does not exist.
fn check_actions(
    actions: &[FlowAction],
    in_packet_out: bool,
    has_group: impl Fn(u32) -> bool,
) -> Result<(), Refusal> {
    for a in actions {
        match a {
            FlowAction::Output { port } => match port {
                PortNo::Normal | PortNo::Any => {
                    return Err(Refusal::bad_action(
                        bad_action::BAD_OUT_PORT,
                        format!("output to {port:?} is not supported"),
                    ))
                }
                PortNo::Table if !in_packet_out => {
                    return Err(Refusal::bad_action(
                        bad_action::BAD_OUT_PORT,
                        "output to TABLE outside a PACKET_OUT",
                    ))
                }
                _ => {}
            },
            FlowAction::Enqueue { .. } | FlowAction::SetQueue { .. } => {
                return Err(Refusal::bad_action(bad_action::BAD_QUEUE, "no queues"))
            }
            FlowAction::Group { group_id } if !has_group(*group_id) => {
                return Err(Refusal::bad_action(
                    bad_action::BAD_OUT_GROUP,
                    format!("no group {group_id}"),
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

impl<P: PortIo, T: Tables> Agent<P, T> {
    /// An agent for `ports` (numbers and I/O) and `controllers` connection slots.
    pub fn new(
        config: AgentConfig,
        ports: Vec<(u32, P)>,
        controllers: usize,
        now: Instant,
    ) -> Agent<P, T> {
        let mut agent = Agent {
            tables: None,
            fabric: Fabric {
                ports: ports
                    .into_iter()
                    .map(|(n, io)| PortSlot::new(n, io, now))
                    .collect(),
                channels: (0..controllers).map(|_| Channel::new(now)).collect(),
                buffers: Buffers::new(config.n_buffers),
                version: None,
                drops: Drops::default(),
                packet_ins: 0,
            },
            removed: Vec::new(),
            frame: Vec::with_capacity(2048),
            config,
        };
        if let Some(v) = agent.config.versions.single() {
            agent.make_tables(v);
        }
        agent
    }

    fn make_tables(&mut self, v: Version) {
        self.tables = Some(T::create(PipelineConfig {
            version: v,
            tables: match v {
                Version::V1_0 => 1,
                Version::V1_3 => self.config.tables.max(1),
            },
            max_flows: self.config.max_flows,
        }));
        self.fabric.version = Some(v);
    }

    /// The versions a new connection is offered.
    pub fn offered(&self) -> Versions {
        match self.fabric.version {
            Some(Version::V1_0) => Versions::V10,
            Some(Version::V1_3) => Versions::V13,
            None => self.config.versions,
        }
    }

    /// A new connection slot (an accepted connection); its index.
    pub fn add_channel(&mut self, now: Instant) -> usize {
        self.fabric.channels.push(Channel::new(now));
        self.fabric.channels.len() - 1
    }

    /// Controller `ch` is connected: its HELLO is queued.
    pub fn connected(&mut self, ch: usize, now: Instant) {
        let offered = self.offered();
        self.fabric.channels[ch].connected(offered, now);
    }

    /// Controller `ch`'s connection is gone.
    pub fn closed(&mut self, ch: usize) {
        self.fabric.channels[ch].closed();
    }

    /// Handles every whole message in controller `ch`'s receive buffer (the rest
    /// stays for the next read). `Err`: close the connection (framing is lost, or the
    /// handshake failed); one bad message is answered with an ERROR, never that.
    pub fn receive(&mut self, ch: usize, now: Instant) -> Result<(), CloseReason> {
        let mut rx = std::mem::take(&mut self.fabric.channels[ch].rx);
        if !rx.is_empty() {
            self.fabric.channels[ch].heard(now);
        }
        let mut at = 0;
        let result = loop {
            match header::frame_len(&rx[at..]) {
                Ok(None) => break Ok(()),
                Ok(Some(n)) => {
                    let r = self.handle(ch, &rx[at..at + n], now);
                    at += n;
                    if r.is_err() {
                        break r;
                    }
                }
                Err(e) => break Err(CloseReason::Framing(e.to_string())),
            }
        };
        rx.drain(..at);
        self.fabric.channels[ch].rx = rx;
        result
    }

    /// Handles one whole message from controller `ch`.
    pub fn handle(&mut self, ch: usize, frame: &[u8], now: Instant) -> Result<(), CloseReason> {
        match self.fabric.channels[ch].state {
            State::Down => Ok(()),
            State::Hello { offered, .. } => self.hello(ch, offered, frame),
            State::Ready(v) => {
                let xid = u32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
                let result = if frame[0] != v.wire() {
                    Err(Refusal::bad_request(
                        bad_request::BAD_VERSION,
                        format!("version 0x{:02x} after agreeing on {v}", frame[0]),
                    ))
                } else {
                    match Message::decode(frame) {
                        Ok((_, Message::V10(m))) => {
                            self.serve(ch, v, xid, Request::from_v10(m), now)
                        }
                        Ok((_, Message::V13(m))) => {
                            self.serve(ch, v, xid, Request::from_v13(m), now)
                        }
                        Err(e) => Err(Refusal::bad_request(bad_request::BAD_LEN, e.to_string())),
                    }
                };
                if let Err(r) = result {
                    tracing::info!(
                        controller = ch,
                        xid,
                        message = header::Header::new_unchecked(frame).msg_type(),
                        why = %r.why,
                        "refused"
                    );
                    let msg = r.message(v, frame);
                    self.fabric.channels[ch].send(&msg, xid);
                }
                Ok(())
            }
        }
    }

    fn hello(&mut self, ch: usize, offered: Versions, frame: &[u8]) -> Result<(), CloseReason> {
        let channel = &mut self.fabric.channels[ch];
        let ours = offered.single().unwrap_or(Version::V1_3);
        let fail = |channel: &mut Channel, why: String| {
            // 1.3.3 §6.3.1: "an OFPT_ERROR message with a type field of
            // OFPET_HELLO_FAILED, a code field of OFPHFC_INCOMPATIBLE, and optionally an
            // ASCII string explaining the situation in data".
            let r = Refusal::new(Kind::HelloIncompatible, why.clone());
            let (err_type, code) = r.wire(ours);
            let body = openflow::common::ErrorBody::Standard {
                err_type,
                code,
                data: why.clone().into_bytes(),
            };
            let msg = match ours {
                Version::V1_0 => Message::V10(openflow::of10::Message::Error(body)),
                Version::V1_3 => Message::V13(openflow::of13::Message::Error(body)),
            };
            channel.send(&msg, 0);
            CloseReason::NoCommonVersion(why)
        };
        if frame[1] != openflow::msg_type::HELLO {
            let name = Message::decode(frame)
                .map(|(_, m)| m.type_name())
                .unwrap_or("an unknown message");
            fail(channel, format!("first message was {name}, not HELLO"));
            return Err(CloseReason::NoHello(name.to_string()));
        }
        let v = match channel.negotiate(frame) {
            Ok(v) => v,
            Err(why) => return Err(fail(channel, format!("no common version: {why}"))),
        };
        match self.fabric.version {
            Some(t) if t != v => {
                let why = format!("this switch's tables speak {t}, the connection {v}");
                return Err(fail(&mut self.fabric.channels[ch], why));
            }
            Some(_) => {}
            None => self.make_tables(v),
        }
        self.fabric.channels[ch].state = State::Ready(v);
        tracing::info!(controller = ch, version = %v, "OpenFlow version agreed");
        Ok(())
    }

    fn send(&mut self, ch: usize, msg: &Message, xid: u32) {
        self.fabric.channels[ch].send(msg, xid);
    }

    fn serve(
        &mut self,
        ch: usize,
        v: Version,
        xid: u32,
        req: Request,
        now: Instant,
    ) -> Result<(), Refusal> {
        match req {
            Request::Nothing => {}
            Request::Refuse(r) => return Err(r),
            Request::Echo(data) => self.send(ch, &reply::echo(v, data), xid),
            Request::Features => {
                let msg = reply::features(
                    v,
                    self.config.dpid,
                    self.fabric.buffers.len(),
                    self.config.tables.max(1),
                    &self.fabric.ports,
                );
                self.send(ch, &msg, xid);
            }
            Request::GetConfig => {
                let c = &self.fabric.channels[ch];
                let msg = reply::config(
                    v,
                    SwitchConfig {
                        flags: c.config_flags,
                        miss_send_len: c.miss_send_len,
                    },
                );
                self.send(ch, &msg, xid);
            }
            Request::SetConfig(c) => {
                let channel = &mut self.fabric.channels[ch];
                channel.config_flags = c.flags;
                channel.miss_send_len = c.miss_send_len;
            }
            // Every earlier message of every connection has been applied, to the tables
            // the data path reads, by this same thread: the reply can go now.
            Request::Barrier => self.send(ch, &reply::barrier(v), xid),
            Request::FlowMod(fm) => self.flow_mod(fm, now)?,
            Request::GroupMod(gm) => self.group_mod(gm, now)?,
            Request::PacketOut {
                buffer_id,
                in_port,
                actions,
                data,
            } => self.packet_out(buffer_id, in_port, &actions, &data, now)?,
            Request::PortMod {
                port_no,
                hw_addr,
                config: bits,
                mask,
            } => self.port_mod(port_no, hw_addr, bits, mask)?,
            Request::Stats(s) => self.stats(ch, v, xid, s, now)?,
            Request::Role(r) => self.send(ch, &reply::role(r), xid),
            Request::GetAsync => self.send(ch, &reply::async_config(), xid),
            Request::QueueConfig(port) => self.send(ch, &reply::queue_config(v, port), xid),
        }
        Ok(())
    }

    fn tables(&mut self) -> &mut T {
        self.tables
            .as_mut()
            .expect("a connection is ready only once the tables exist")
    }

    fn flow_mod(&mut self, fm: FlowModReq, now: Instant) -> Result<(), Refusal> {
        let deleting = matches!(
            fm.command,
            FlowModCommand::Delete | FlowModCommand::DeleteStrict
        );
        if !deleting {
            let tables = self.tables();
            let has = |g| tables.has_group(g);
            check_actions(&fm.flow.actions, false, has)?;
            if let Some(w) = &fm.flow.write_actions {
                check_actions(w, false, has)?;
            }
            if fm.flow.meter.is_some() {
                return Err(Refusal::new(Kind::MeterMod, "meters are not supported"));
            }
        }
        let req = FlowModRequest {
            command: fm.command,
            flow: &fm.flow,
            out_port: fm.out_port,
            out_group: fm.out_group,
        };
        self.removed.clear();
        let mut removed = std::mem::take(&mut self.removed);
        let result = self.tables().flow_mod(&req, now, &mut removed);
        self.flows_removed(&removed);
        self.removed = removed;
        result.map_err(|e| Refusal::new(Kind::FlowMod(e.clone()), e.to_string()))?;
        // 1.0.0 §5.3.3 / 1.3.3 §7.3.4.1: the buffered frame goes through the tables
        // (now holding the new flow), as a PACKET_OUT to TABLE would.
        if let (Some(id), false) = (fm.buffer_id, deleting) {
            let in_port = self
                .fabric
                .buffers
                .take(id, &mut self.frame)
                .map_err(|e| buffer_refusal(e, id))?;
            let tables = self.tables.as_mut().expect("tables exist");
            tables.execute(
                &[FlowAction::Output {
                    port: PortNo::Table,
                }],
                in_port,
                &self.frame,
                now,
                &mut self.fabric,
            );
        }
        Ok(())
    }

    /// GROUP_MOD (1.3): the flows a deleted group takes with it are reported.
    fn group_mod(&mut self, gm: openflow::of13::GroupMod, now: Instant) -> Result<(), Refusal> {
        let req = GroupModRequest {
            command: gm.command,
            group_type: gm.group_type,
            group_id: gm.group_id,
            buckets: &gm.buckets,
        };
        self.removed.clear();
        let mut removed = std::mem::take(&mut self.removed);
        let result = self.tables().group_mod(&req, now, &mut removed);
        self.flows_removed(&removed);
        self.removed = removed;
        result.map_err(|e| Refusal::new(Kind::GroupMod(e.code), e.why))
    }

    fn packet_out(
        &mut self,
        buffer_id: Option<u32>,
        in_port: u32,
        actions: &[FlowAction],
        data: &[u8],
        now: Instant,
    ) -> Result<(), Refusal> {
        let tables = self.tables();
        check_actions(actions, true, |g| tables.has_group(g))?;
        let frame: &[u8] = match buffer_id {
            Some(id) => {
                self.fabric
                    .buffers
                    .take(id, &mut self.frame)
                    .map_err(|e| buffer_refusal(e, id))?;
                &self.frame
            }
            None => data,
        };
        let tables = self.tables.as_mut().expect("tables exist");
        tables.execute(actions, in_port, frame, now, &mut self.fabric);
        Ok(())
    }

    fn port_mod(
        &mut self,
        port_no: u32,
        hw_addr: openflow::MacAddr,
        bits: u32,
        mask: u32,
    ) -> Result<(), Refusal> {
        let i = self
            .fabric
            .index(port_no)
            .ok_or_else(|| Refusal::new(Kind::PortModBadPort, format!("no port {port_no}")))?;
        let port = &mut self.fabric.ports[i];
        if port.io.mac() != hw_addr {
            return Err(Refusal::new(
                Kind::PortModBadHwAddr,
                format!("port {port_no} is {}, not {hw_addr}", port.io.mac()),
            ));
        }
        let mask = mask & config::SUPPORTED;
        let new = (port.config & !mask) | (bits & mask);
        if new != port.config {
            port.config = new;
            tracing::info!(
                port = port_no,
                config = format_args!("{new:#x}"),
                "port configured"
            );
            self.port_changed(i);
        }
        Ok(())
    }

    fn stats(
        &mut self,
        ch: usize,
        v: Version,
        xid: u32,
        s: StatsReq,
        now: Instant,
    ) -> Result<(), Refusal> {
        let msgs = match s {
            StatsReq::Desc => vec![reply::desc(v, &self.config.name)],
            StatsReq::Flow(f) => reply::flow_stats(v, self.select(&f, now)),
            StatsReq::Aggregate(f) => vec![reply::aggregate(v, &self.select(&f, now))],
            StatsReq::Table => vec![reply::table_stats(v, &self.tables().table_stats())],
            StatsReq::Port(None) => vec![reply::port_stats(v, self.fabric.ports.iter(), now)],
            StatsReq::Port(Some(p)) => {
                let i = self.fabric.index(p).ok_or_else(|| {
                    // 1.3: OFPBRC_BAD_PORT; 1.0 has no such code: an empty reply there.
                    Refusal::bad_request(11, format!("no port {p}"))
                });
                match (i, v) {
                    (Ok(i), _) => vec![reply::port_stats(v, self.fabric.ports[i..=i].iter(), now)],
                    (Err(_), Version::V1_0) => vec![reply::port_stats(
                        v,
                        std::iter::empty::<&PortSlot<P>>(),
                        now,
                    )],
                    (Err(r), Version::V1_3) => return Err(r),
                }
            }
            StatsReq::PortDesc => vec![reply::port_desc(&self.fabric.ports)],
            StatsReq::TableFeatures => vec![reply::table_features(
                self.config.tables.max(1),
                self.config.max_flows,
            )],
            StatsReq::Queue => vec![reply::queue_stats(v)],
            StatsReq::Group(id) => vec![reply::group_stats(self.tables().group_stats(id, now))],
            StatsReq::GroupDesc => vec![reply::group_desc(self.tables().group_desc())],
            StatsReq::GroupFeatures => {
                vec![reply::group_features(crate::table::MAX_GROUPS as u32)]
            }
            StatsReq::Empty(kind) => vec![reply::empty_v13(kind)],
        };
        for m in &msgs {
            self.send(ch, m, xid);
        }
        Ok(())
    }

    fn select(&mut self, f: &FlowStatsReq, now: Instant) -> Vec<openflow::ofctl::FlowEntry> {
        let filter = StatsFilter {
            table: f.table,
            matching: &f.matching,
            out_port: f.out_port,
            out_group: f.out_group,
            cookie: f.cookie,
            cookie_mask: f.cookie_mask,
        };
        self.tables().flows(&filter, now)
    }

    /// Tells every controller of flows that left (those with `send_flow_rem`).
    fn flows_removed(&mut self, removed: &[RemovedFlow]) {
        for r in removed.iter().filter(|r| r.flow.flags.send_flow_rem) {
            for ch in &mut self.fabric.channels {
                if let Some(v) = ch.async_version() {
                    if let Some(msg) = reply::flow_removed(v, r) {
                        ch.send(&msg, 0);
                    }
                }
            }
        }
    }

    /// Tells every controller port `i` changed (PORT_STATUS, reason MODIFY).
    fn port_changed(&mut self, i: usize) {
        let Fabric {
            ports, channels, ..
        } = &mut self.fabric;
        for ch in channels.iter_mut() {
            if let Some(v) = ch.async_version() {
                ch.send(&reply::port_status(v, &ports[i]), 0);
            }
        }
    }

    /// A frame received on the port at index `i`: through the tables (dropped when
    /// the port does not receive, or there are no tables yet: no controller has
    /// spoken).
    #[inline]
    pub fn frame_in(&mut self, i: usize, frame: &[u8], now: Instant) {
        let port = &self.fabric.ports[i];
        if !port.can_receive() {
            return;
        }
        let port_no = port.port_no;
        if let Some(t) = self.tables.as_mut() {
            t.process(port_no, frame, now, &mut self.fabric);
        }
    }

    /// Removes expired flows, telling the controllers.
    pub fn expire(&mut self, now: Instant) {
        let mut removed = std::mem::take(&mut self.removed);
        removed.clear();
        if let Some(t) = self.tables.as_mut() {
            t.expire(now, &mut removed);
        }
        self.flows_removed(&removed);
        self.removed = removed;
    }

    /// Reads each port's link state and reports changes (PORT_STATUS).
    pub fn check_links(&mut self) {
        for i in 0..self.fabric.ports.len() {
            let p = &mut self.fabric.ports[i];
            let up = p.io.link_up();
            if up != p.link_up {
                p.link_up = up;
                tracing::info!(port = p.port_no, up, "link state changed");
                self.port_changed(i);
            }
        }
    }

    /// Runs the keepalive of every connection; returns those to close.
    pub fn keepalive(&mut self, now: Instant, interval: Duration) -> Vec<(usize, CloseReason)> {
        let mut close = Vec::new();
        for (i, ch) in self.fabric.channels.iter_mut().enumerate() {
            match ch.keepalive(now, interval) {
                Ok(true) => {
                    let v = ch.version().expect("echo only when ready");
                    let xid = ch.xid();
                    ch.send(&reply::echo_request(v), xid);
                }
                Ok(false) => {}
                Err(e) => close.push((i, e)),
            }
        }
        close
    }
}
