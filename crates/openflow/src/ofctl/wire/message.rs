//! [`Flow`] and [`FlowEntry`] to and from the messages of either version: FLOW_MOD out
//! (and in, for tests), flow-stats requests out and replies in, PACKET_OUT out.

use super::common::{FromWireError, Head};
use super::v10::{action_v10, from_parts_v10, match_v10};
use super::v13::{actions_v13, from_parts_v13, match_v13};
use crate::error::{not_in, EncodeResult};
use crate::header::Version;
use crate::message::Message;
use crate::model::{FlowModCommand, PortNo};
use crate::of10::{self, flow::OFPFF_CHECK_OVERLAP, flow::OFPFF_SEND_FLOW_REM};
use crate::of13::flow::flow_mod_flags as ff13;
use crate::of13::{self, Instruction};
use crate::ofctl::flow::{Flow, FlowCounters, FlowEntry};

impl Flow {
    /// The FLOW_MOD doing `command` with this flow, for `version`.
    pub fn to_message(&self, version: Version, command: FlowModCommand) -> EncodeResult<Message> {
        Ok(match version {
            Version::V1_0 => Message::V10(of10::Message::FlowMod(self.to_of10(command)?)),
            Version::V1_3 => Message::V13(of13::Message::FlowMod(self.to_of13(command)?)),
        })
    }

    /// The FLOW_STATS request (1.0 STATS_REQUEST, 1.3 MULTIPART_REQUEST) for the flows
    /// this selection names (see [`crate::ofctl::parse_match`]: every table when `table` is
    /// 0xff, the cookie under its mask in 1.3). [`FlowEntry::from_message`] reads the
    /// reply.
    pub fn stats_request(&self, version: Version) -> EncodeResult<Message> {
        Ok(match version {
            Version::V1_0 => {
                if self.cookie_mask != 0 {
                    return Err(not_in(version, "a cookie mask"));
                }
                Message::V10(of10::Message::StatsRequest(of10::StatsRequest {
                    flags: 0,
                    body: of10::StatsRequestBody::Flow(of10::stats::FlowStatsRequest {
                        match_: match_v10(&self.matching)?,
                        table_id: self.table,
                        out_port: 0xffff,
                    }),
                }))
            }
            Version::V1_3 => Message::V13(of13::Message::MultipartRequest(
                of13::multipart::MultipartRequest {
                    flags: 0,
                    body: of13::multipart::MultipartRequestBody::Flow(
                        of13::multipart::FlowStatsRequest {
                            table_id: self.table,
                            out_port: of13::port::OFPP_ANY,
                            out_group: of13::OFPG_ANY,
                            cookie: self.cookie,
                            cookie_mask: self.cookie_mask,
                            match_: match_v13(&self.matching)?,
                        },
                    ),
                },
            )),
        })
    }

    /// A PACKET_OUT of `data` (unbuffered) through this flow's actions, as if it came
    /// in on `in_port`, for `version` (the match only tells what `mod_tp_*` writes;
    /// instructions other than the actions are refused).
    pub fn packet_out(
        &self,
        version: Version,
        in_port: PortNo,
        data: Vec<u8>,
    ) -> EncodeResult<Message> {
        if self.has_instructions() {
            return Err(not_in(version, "instructions in a PACKET_OUT"));
        }
        let buffer_id = crate::model::NO_BUFFER;
        Ok(match version {
            Version::V1_0 => Message::V10(of10::Message::PacketOut(of10::PacketOut {
                buffer_id,
                in_port: in_port.to_v10()?,
                actions: self
                    .actions
                    .iter()
                    .map(|a| action_v10(a, &self.matching))
                    .collect::<EncodeResult<Vec<_>>>()?,
                data,
            })),
            Version::V1_3 => Message::V13(of13::Message::PacketOut(of13::PacketOut {
                buffer_id,
                in_port: in_port.to_v13()?,
                actions: actions_v13(&self.actions)?,
                data,
            })),
        })
    }

    fn is_delete(command: FlowModCommand) -> bool {
        matches!(
            command,
            FlowModCommand::Delete | FlowModCommand::DeleteStrict
        )
    }

    /// The OpenFlow 1.0 FLOW_MOD.
    pub fn to_of10(&self, command: FlowModCommand) -> EncodeResult<of10::FlowMod> {
        const V: Version = Version::V1_0;
        // 1.0 has one table (flow_mod has no table id); "all tables" is what 1.0 deletes do.
        if self.table != 0 && !(self.table == 0xff && Self::is_delete(command)) {
            return Err(not_in(V, "a table other than 0"));
        }
        if self.cookie_mask != 0 {
            return Err(not_in(V, "a cookie mask"));
        }
        let fl = &self.flags;
        if fl.reset_counts || fl.no_packet_counts || fl.no_byte_counts {
            return Err(not_in(
                V,
                "the reset_counts, no_packet_counts and no_byte_counts flags",
            ));
        }
        if self.meter.is_some() {
            return Err(not_in(V, "a meter instruction"));
        }
        if self.clear_actions {
            return Err(not_in(V, "a clear_actions instruction"));
        }
        if self.write_actions.is_some() {
            return Err(not_in(V, "a write_actions instruction"));
        }
        if self.write_metadata.is_some() {
            return Err(not_in(V, "a write_metadata instruction"));
        }
        if self.goto_table.is_some() {
            return Err(not_in(V, "a goto_table instruction"));
        }
        let actions = self
            .actions
            .iter()
            .map(|a| action_v10(a, &self.matching))
            .collect::<EncodeResult<Vec<_>>>()?;
        Ok(of10::FlowMod {
            match_: match_v10(&self.matching)?,
            cookie: self.cookie,
            command: match command {
                FlowModCommand::Add => of10::FlowModCommand::Add,
                FlowModCommand::Modify => of10::FlowModCommand::Modify,
                FlowModCommand::ModifyStrict => of10::FlowModCommand::ModifyStrict,
                FlowModCommand::Delete => of10::FlowModCommand::Delete,
                FlowModCommand::DeleteStrict => of10::FlowModCommand::DeleteStrict,
            },
            idle_timeout: self.idle_timeout,
            hard_timeout: self.hard_timeout,
            priority: self.priority,
            buffer_id: crate::model::NO_BUFFER,
            out_port: 0xffff,
            flags: (fl.send_flow_rem as u16 * OFPFF_SEND_FLOW_REM)
                | (fl.check_overlap as u16 * OFPFF_CHECK_OVERLAP),
            actions,
        })
    }

    /// The OpenFlow 1.3 FLOW_MOD.
    pub fn to_of13(&self, command: FlowModCommand) -> EncodeResult<of13::FlowMod> {
        let mut instructions = Vec::new();
        if let Some(m) = self.meter {
            instructions.push(Instruction::Meter { meter_id: m });
        }
        if !self.actions.is_empty() {
            instructions.push(Instruction::ApplyActions {
                actions: actions_v13(&self.actions)?,
            });
        }
        if self.clear_actions {
            instructions.push(Instruction::ClearActions);
        }
        if let Some(w) = &self.write_actions {
            instructions.push(Instruction::WriteActions {
                actions: actions_v13(w)?,
            });
        }
        if let Some(md) = self.write_metadata {
            instructions.push(Instruction::WriteMetadata {
                metadata: md.value,
                metadata_mask: md.mask.unwrap_or(u64::MAX),
            });
        }
        if let Some(t) = self.goto_table {
            instructions.push(Instruction::GotoTable { table_id: t });
        }
        let fl = &self.flags;
        Ok(of13::FlowMod {
            cookie: self.cookie,
            cookie_mask: self.cookie_mask,
            table_id: self.table,
            command: match command {
                FlowModCommand::Add => of13::FlowModCommand::Add,
                FlowModCommand::Modify => of13::FlowModCommand::Modify,
                FlowModCommand::ModifyStrict => of13::FlowModCommand::ModifyStrict,
                FlowModCommand::Delete => of13::FlowModCommand::Delete,
                FlowModCommand::DeleteStrict => of13::FlowModCommand::DeleteStrict,
            },
            idle_timeout: self.idle_timeout,
            hard_timeout: self.hard_timeout,
            priority: self.priority,
            buffer_id: crate::model::NO_BUFFER,
            out_port: of13::port::OFPP_ANY,
            out_group: of13::OFPG_ANY,
            flags: (fl.send_flow_rem as u16 * ff13::SEND_FLOW_REM)
                | (fl.check_overlap as u16 * ff13::CHECK_OVERLAP)
                | (fl.reset_counts as u16 * ff13::RESET_COUNTS)
                | (fl.no_packet_counts as u16 * ff13::NO_PKT_COUNTS)
                | (fl.no_byte_counts as u16 * ff13::NO_BYT_COUNTS),
            match_: match_v13(&self.matching)?,
            instructions: if Self::is_delete(command) {
                Vec::new()
            } else {
                instructions
            },
        })
    }

    /// The flow a 1.0 FLOW_MOD adds (command, buffer and out_port are dropped).
    pub fn from_of10(fm: &of10::FlowMod) -> Result<Flow, FromWireError> {
        from_parts_v10(
            &fm.match_,
            &fm.actions,
            Head {
                table: 0,
                priority: fm.priority,
                cookie: fm.cookie,
                idle_timeout: fm.idle_timeout,
                hard_timeout: fm.hard_timeout,
                flags: fm.flags,
            },
        )
    }

    /// The flow a 1.3 FLOW_MOD adds (command, buffer, out_port and out_group are
    /// dropped; the cookie mask is kept).
    pub fn from_of13(fm: &of13::FlowMod) -> Result<Flow, FromWireError> {
        let mut f = from_parts_v13(
            &fm.match_,
            &fm.instructions,
            Head {
                table: fm.table_id,
                priority: fm.priority,
                cookie: fm.cookie,
                idle_timeout: fm.idle_timeout,
                hard_timeout: fm.hard_timeout,
                flags: fm.flags,
            },
        )?;
        f.cookie_mask = fm.cookie_mask;
        Ok(f)
    }
}

impl FlowEntry {
    /// One entry of a 1.0 flow stats reply.
    pub fn from_of10(s: &of10::stats::FlowStats) -> Result<FlowEntry, FromWireError> {
        let flow = from_parts_v10(
            &s.match_,
            &s.actions,
            Head {
                table: s.table_id,
                priority: s.priority,
                cookie: s.cookie,
                idle_timeout: s.idle_timeout,
                hard_timeout: s.hard_timeout,
                flags: 0,
            },
        )?;
        Ok(FlowEntry {
            flow,
            counters: Some(FlowCounters {
                duration_sec: s.duration_sec,
                duration_nsec: s.duration_nsec,
                packet_count: s.packet_count,
                byte_count: s.byte_count,
            }),
        })
    }

    /// One entry of a 1.3 flow stats reply.
    pub fn from_of13(s: &of13::multipart::FlowStats) -> Result<FlowEntry, FromWireError> {
        let flow = from_parts_v13(
            &s.match_,
            &s.instructions,
            Head {
                table: s.table_id,
                priority: s.priority,
                cookie: s.cookie,
                idle_timeout: s.idle_timeout,
                hard_timeout: s.hard_timeout,
                flags: s.flags,
            },
        )?;
        Ok(FlowEntry {
            flow,
            counters: Some(FlowCounters {
                duration_sec: s.duration_sec,
                duration_nsec: s.duration_nsec,
                packet_count: s.packet_count,
                byte_count: s.byte_count,
            }),
        })
    }

    /// Every entry of a flow stats reply of either version; `None` when `msg` is no
    /// flow stats reply. Entries this syntax cannot show are errors, one per entry.
    pub fn from_message(msg: &Message) -> Option<Vec<Result<FlowEntry, FromWireError>>> {
        match msg {
            Message::V10(of10::Message::StatsReply(r)) => match &r.body {
                of10::StatsReplyBody::Flow { stats } => {
                    Some(stats.iter().map(FlowEntry::from_of10).collect())
                }
                _ => None,
            },
            Message::V13(of13::Message::MultipartReply(r)) => match &r.body {
                of13::multipart::MultipartReplyBody::Flow { stats } => {
                    Some(stats.iter().map(FlowEntry::from_of13).collect())
                }
                _ => None,
            },
            _ => None,
        }
    }
}
