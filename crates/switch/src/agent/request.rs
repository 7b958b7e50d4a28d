//! Incoming messages of either version as one version-neutral [`Request`]: the
//! differences between 1.0 and 1.3 are settled here, in one place, so the handler
//! has one arm per request and not one per version.

use openflow::common::SwitchConfig;
use openflow::ofctl::{Flow, FlowAction, FlowMatch, FlowModCommand, PortNo, SetField};
use openflow::{of10, of13, MacAddr};

use super::channel::port_from_v10;
use super::errors::{bad_action, bad_request as brc, Kind, Refusal};

/// A FLOW_MOD, version-neutral.
#[derive(Debug)]
pub struct FlowModReq {
    pub command: FlowModCommand,
    pub flow: Flow,
    pub buffer_id: Option<u32>,
    pub out_port: Option<PortNo>,
    pub out_group: Option<u32>,
}

/// A flow or aggregate statistics request.
#[derive(Debug)]
pub struct FlowStatsReq {
    pub table: Option<u8>,
    pub matching: FlowMatch,
    pub out_port: Option<PortNo>,
    pub out_group: Option<u32>,
    pub cookie: u64,
    pub cookie_mask: u64,
}

/// A statistics (1.0) or multipart (1.3) request.
#[derive(Debug)]
pub enum StatsReq {
    Desc,
    Flow(FlowStatsReq),
    Aggregate(FlowStatsReq),
    Table,
    /// `None`: every port.
    Port(Option<u32>),
    /// 1.3 only.
    PortDesc,
    /// 1.3 only: the tables' features (their names and sizes).
    TableFeatures,
    /// Queue statistics: the switch has no queues, the reply is empty.
    Queue,
    /// 1.3: the statistics of a group (`OFPG_ALL`: of every group).
    Group(u32),
    /// 1.3: every group's type and buckets.
    GroupDesc,
    /// 1.3: what groups this switch supports.
    GroupFeatures,
    /// 1.3 meter statistics and configuration: empty replies (no meters).
    Empty(of13::multipart::MultipartType),
}

/// What a controller asked.
#[derive(Debug)]
pub enum Request {
    /// Needs no answer (HELLO after the handshake, ECHO_REPLY, ERROR).
    Nothing,
    Echo(Vec<u8>),
    Features,
    GetConfig,
    SetConfig(SwitchConfig),
    Barrier,
    FlowMod(FlowModReq),
    /// 1.3 only.
    GroupMod(of13::GroupMod),
    PacketOut {
        buffer_id: Option<u32>,
        in_port: u32,
        actions: Vec<FlowAction>,
        data: Vec<u8>,
    },
    PortMod {
        port_no: u32,
        hw_addr: MacAddr,
        config: u32,
        mask: u32,
    },
    Stats(StatsReq),
    /// 1.3 ROLE_REQUEST: answered with the role asked (every controller is equal to
    /// this switch; the role is not enforced).
    Role(of13::Role),
    /// 1.3 GET_ASYNC_REQUEST.
    GetAsync,
    /// 1.3 QUEUE_GET_CONFIG_REQUEST / 1.0 alike: no queues.
    QueueConfig(u32),
    /// Refused with this error.
    Refuse(Refusal),
}

fn buffer(id: u32) -> Option<u32> {
    (id != of10::flow::OFP_NO_BUFFER).then_some(id)
}

fn port_or_none_v10(p: u16) -> Option<PortNo> {
    (p != of10::port::OFPP_NONE).then(|| PortNo::from_u32(port_from_v10(p)))
}

fn port_or_any_v13(p: u32) -> Option<PortNo> {
    (p != of13::OFPP_ANY).then(|| PortNo::from_u32(p))
}

fn command_v10(c: of10::FlowModCommand) -> Option<FlowModCommand> {
    use of10::FlowModCommand as C;
    Some(match c {
        C::Add => FlowModCommand::Add,
        C::Modify => FlowModCommand::Modify,
        C::ModifyStrict => FlowModCommand::ModifyStrict,
        C::Delete => FlowModCommand::Delete,
        C::DeleteStrict => FlowModCommand::DeleteStrict,
        C::Unknown(_) => return None,
    })
}

fn command_v13(c: of13::FlowModCommand) -> Option<FlowModCommand> {
    use of13::FlowModCommand as C;
    Some(match c {
        C::Add => FlowModCommand::Add,
        C::Modify => FlowModCommand::Modify,
        C::ModifyStrict => FlowModCommand::ModifyStrict,
        C::Delete => FlowModCommand::Delete,
        C::DeleteStrict => FlowModCommand::DeleteStrict,
        C::Unknown(_) => return None,
    })
}

fn is_delete(c: FlowModCommand) -> bool {
    matches!(c, FlowModCommand::Delete | FlowModCommand::DeleteStrict)
}

/// The match of a 1.0 flow statistics request, through the codec's FLOW_MOD reader.
fn match_from_v10(m: &of10::Match) -> FlowMatch {
    let fm = of10::FlowMod {
        match_: *m,
        cookie: 0,
        command: of10::FlowModCommand::Add,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 0,
        buffer_id: of10::flow::OFP_NO_BUFFER,
        out_port: of10::port::OFPP_NONE,
        flags: 0,
        actions: Vec::new(),
    };
    Flow::from_of10(&fm).map(|f| f.matching).unwrap_or_default()
}

/// 1.0 PACKET_OUT actions. `mod_tp_*` names no protocol in 1.0: it writes the ports of
/// whatever transport the frame carries, so a UDP frame's ports are UDP's.
fn actions_from_v10(list: &[of10::Action], frame: &[u8]) -> Result<Vec<FlowAction>, Refusal> {
    let fm = of10::FlowMod {
        match_: of10::Match::all(),
        cookie: 0,
        command: of10::FlowModCommand::Add,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 0,
        buffer_id: of10::flow::OFP_NO_BUFFER,
        out_port: of10::port::OFPP_NONE,
        flags: 0,
        actions: list.to_vec(),
    };
    let mut actions = Flow::from_of10(&fm)
        .map_err(|e| Refusal::bad_action(bad_action::BAD_TYPE, e.to_string()))?
        .actions;
    let udp = packet::flow::FlowKey::extract(frame)
        .ok()
        .and_then(|k| k.ip)
        .is_some_and(|ip| ip.proto == 17);
    if udp {
        for a in &mut actions {
            match a {
                FlowAction::Set(SetField::TcpSrc(p)) => *a = FlowAction::Set(SetField::UdpSrc(*p)),
                FlowAction::Set(SetField::TcpDst(p)) => *a = FlowAction::Set(SetField::UdpDst(*p)),
                _ => {}
            }
        }
    }
    Ok(actions)
}

impl Request {
    /// A 1.0 message as a request.
    pub fn from_v10(m: of10::Message) -> Request {
        use of10::Message as M;
        match m {
            M::Hello(_) | M::EchoReply { .. } | M::Error(_) => Request::Nothing,
            M::EchoRequest { data } => Request::Echo(data),
            M::FeaturesRequest => Request::Features,
            M::GetConfigRequest => Request::GetConfig,
            M::SetConfig(c) => Request::SetConfig(c),
            M::BarrierRequest => Request::Barrier,
            M::FlowMod(fm) => {
                let Some(command) = command_v10(fm.command) else {
                    return Request::Refuse(Refusal::new(
                        Kind::FlowModBadCommand,
                        "unknown FLOW_MOD command",
                    ));
                };
                if fm.flags & of10::flow::OFPFF_EMERG != 0 {
                    return Request::Refuse(Refusal::new(
                        Kind::FlowMod(crate::table::FlowModError::Unsupported("emergency flows")),
                        "emergency flows are not supported",
                    ));
                }
                let flow = match Flow::from_of10(&fm) {
                    Ok(f) => f,
                    Err(e) => {
                        return Request::Refuse(Refusal::bad_action(
                            bad_action::BAD_TYPE,
                            e.to_string(),
                        ))
                    }
                };
                Request::FlowMod(FlowModReq {
                    command,
                    flow,
                    buffer_id: buffer(fm.buffer_id),
                    // 1.0 §5.3.3: out_port is for deletes only ("ignored by ADD, MODIFY").
                    out_port: if is_delete(command) {
                        port_or_none_v10(fm.out_port)
                    } else {
                        None
                    },
                    out_group: None,
                })
            }
            M::PacketOut(po) => match actions_from_v10(&po.actions, &po.data) {
                Ok(actions) => Request::PacketOut {
                    buffer_id: buffer(po.buffer_id),
                    in_port: port_from_v10(po.in_port),
                    actions,
                    data: po.data,
                },
                Err(r) => Request::Refuse(r),
            },
            M::PortMod(pm) => Request::PortMod {
                port_no: port_from_v10(pm.port_no),
                hw_addr: pm.hw_addr,
                config: pm.config,
                mask: pm.mask,
            },
            M::StatsRequest(s) => {
                use of10::StatsRequestBody as B;
                Request::Stats(match s.body {
                    B::Desc => StatsReq::Desc,
                    B::Table => StatsReq::Table,
                    B::Flow(f) => StatsReq::Flow(flow_stats_v10(&f)),
                    B::Aggregate(f) => StatsReq::Aggregate(flow_stats_v10(&f)),
                    B::Port(p) => StatsReq::Port(
                        (p.port_no != of10::port::OFPP_NONE).then(|| port_from_v10(p.port_no)),
                    ),
                    B::Queue(_) => StatsReq::Queue,
                    B::Vendor { .. } => {
                        return Request::Refuse(Refusal::bad_request(
                            brc::BAD_VENDOR,
                            "vendor statistics",
                        ))
                    }
                    B::Unknown { .. } => {
                        return Request::Refuse(Refusal::bad_request(
                            brc::BAD_STAT,
                            "statistics type",
                        ))
                    }
                })
            }
            M::QueueGetConfigRequest(q) => Request::QueueConfig(port_from_v10(q.port)),
            M::Vendor(_) => {
                Request::Refuse(Refusal::bad_request(brc::BAD_VENDOR, "vendor message"))
            }
            other => Request::Refuse(Refusal::bad_request(
                brc::BAD_TYPE,
                format!("{} is not for a switch", other.name()),
            )),
        }
    }

    /// A 1.3 message as a request.
    pub fn from_v13(m: of13::Message) -> Request {
        use of13::Message as M;
        match m {
            M::Hello(_) | M::EchoReply { .. } | M::Error(_) => Request::Nothing,
            M::EchoRequest { data } => Request::Echo(data),
            M::FeaturesRequest => Request::Features,
            M::GetConfigRequest => Request::GetConfig,
            M::SetConfig(c) => Request::SetConfig(c),
            M::BarrierRequest => Request::Barrier,
            M::FlowMod(fm) => {
                let Some(command) = command_v13(fm.command) else {
                    return Request::Refuse(Refusal::new(
                        Kind::FlowModBadCommand,
                        "unknown FLOW_MOD command",
                    ));
                };
                let flow = match Flow::from_of13(&fm) {
                    Ok(f) => f,
                    Err(e) => {
                        return Request::Refuse(Refusal::bad_action(
                            bad_action::BAD_TYPE,
                            e.to_string(),
                        ))
                    }
                };
                Request::FlowMod(FlowModReq {
                    command,
                    flow,
                    buffer_id: buffer(fm.buffer_id),
                    out_port: port_or_any_v13(fm.out_port),
                    out_group: (fm.out_group != of13::OFPG_ANY).then_some(fm.out_group),
                })
            }
            M::PacketOut(po) => match openflow::ofctl::actions_from_of13(&po.actions) {
                Ok(actions) => Request::PacketOut {
                    buffer_id: buffer(po.buffer_id),
                    in_port: po.in_port,
                    actions,
                    data: po.data,
                },
                Err(e) => Request::Refuse(Refusal::bad_action(bad_action::BAD_TYPE, e.to_string())),
            },
            M::PortMod(pm) => Request::PortMod {
                port_no: pm.port_no,
                hw_addr: pm.hw_addr,
                config: pm.config,
                mask: pm.mask,
            },
            M::MultipartRequest(r) => {
                use of13::multipart::MultipartRequestBody as B;
                use of13::multipart::MultipartType as T;
                Request::Stats(match r.body {
                    B::Desc => StatsReq::Desc,
                    B::Table => StatsReq::Table,
                    B::Flow(f) => StatsReq::Flow(flow_stats_v13(&f)),
                    B::Aggregate(f) => StatsReq::Aggregate(flow_stats_v13(&f)),
                    B::PortStats { port_no } => {
                        StatsReq::Port((port_no != of13::OFPP_ANY).then_some(port_no))
                    }
                    B::PortDesc => StatsReq::PortDesc,
                    B::Queue { .. } => StatsReq::Queue,
                    B::Group { group_id } => StatsReq::Group(group_id),
                    B::GroupDesc => StatsReq::GroupDesc,
                    B::GroupFeatures => StatsReq::GroupFeatures,
                    B::Meter { .. } => StatsReq::Empty(T::Meter),
                    B::MeterConfig { .. } => StatsReq::Empty(T::MeterConfig),
                    // A request that would set features is refused (1.3.3 §7.3.5.5: the
                    // switch may); an empty one asks for the current ones.
                    B::TableFeatures { tables } if tables.is_empty() => StatsReq::TableFeatures,
                    B::Experimenter(_) => {
                        return Request::Refuse(Refusal::bad_request(
                            brc::BAD_VENDOR,
                            "experimenter multipart",
                        ))
                    }
                    other => {
                        return Request::Refuse(Refusal::bad_request(
                            brc::BAD_STAT,
                            format!("multipart {:?} is not supported", kind_name(&other)),
                        ))
                    }
                })
            }
            M::RoleRequest(r) => Request::Role(r),
            M::GetAsyncRequest => Request::GetAsync,
            M::SetAsync(_) | M::TableMod(_) => Request::Nothing,
            M::QueueGetConfigRequest(q) => Request::QueueConfig(q.port),
            M::GroupMod(gm) => Request::GroupMod(gm),
            M::MeterMod(_) => {
                Request::Refuse(Refusal::new(Kind::MeterMod, "meters are not supported"))
            }
            M::Experimenter(_) => Request::Refuse(Refusal::bad_request(
                brc::BAD_VENDOR,
                "experimenter message",
            )),
            other => Request::Refuse(Refusal::bad_request(
                brc::BAD_TYPE,
                format!("{} is not for a switch", other.name()),
            )),
        }
    }
}

fn kind_name(b: &of13::multipart::MultipartRequestBody) -> String {
    of13::multipart::MultipartRequest {
        flags: 0,
        body: b.clone(),
    }
    .kind()
    .to_string()
}

fn flow_stats_v10(f: &of10::stats::FlowStatsRequest) -> FlowStatsReq {
    FlowStatsReq {
        table: (f.table_id != of10::stats::OFPTT_ALL).then_some(f.table_id),
        matching: match_from_v10(&f.match_),
        out_port: port_or_none_v10(f.out_port),
        out_group: None,
        cookie: 0,
        cookie_mask: 0,
    }
}

fn flow_stats_v13(f: &of13::multipart::FlowStatsRequest) -> FlowStatsReq {
    let fm = of13::FlowMod {
        cookie: 0,
        cookie_mask: 0,
        table_id: 0,
        command: of13::FlowModCommand::Add,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 0,
        buffer_id: of13::flow::OFP_NO_BUFFER,
        out_port: of13::OFPP_ANY,
        out_group: of13::OFPG_ANY,
        flags: 0,
        match_: f.match_.clone(),
        instructions: Vec::new(),
    };
    FlowStatsReq {
        table: (f.table_id != of13::flow::OFPTT_ALL).then_some(f.table_id),
        matching: Flow::from_of13(&fm).map(|f| f.matching).unwrap_or_default(),
        out_port: port_or_any_v13(f.out_port),
        out_group: (f.out_group != of13::OFPG_ANY).then_some(f.out_group),
        cookie: f.cookie,
        cookie_mask: f.cookie_mask,
    }
}
