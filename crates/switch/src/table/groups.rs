//! OpenFlow 1.3 groups (spec 1.3.5 §5.6, §7.3.4.2): the group table, GROUP_MOD's
//! semantics, and the buckets a frame takes.
//!
//! Types *all* (every bucket gets its own copy of the frame), *select* (one bucket,
//! chosen by a hash of the frame's flow fields, weighted: a flow's frames all take the
//! same bucket) and *indirect* (its one bucket). *Fast failover* is refused
//! (`BAD_TYPE`): it needs liveness of ports and groups, which this switch does not
//! track. A bucket's actions may not name a group (`CHAINING_UNSUPPORTED`), so a frame
//! never walks more than one group and a group never loops.
//!
//! Every error leaves the groups and the flows unchanged. Deleting a group removes the
//! flows that forward to it (§6.5: "and all flows entries that forward to it"), which
//! the caller reports with FLOW_REMOVED's reason GROUP_DELETE.

use std::cell::Cell;
use std::collections::HashMap;
use std::time::Instant;

use openflow::of13::group::{GroupModCommand, GroupType};
use openflow::of13::{Bucket, OFPG_ALL, OFPG_MAX};
use openflow::ofctl::{actions_from_of13, FlowAction, PortNo};

/// `ofp_group_mod_failed_code`s (spec 1.3.5 §7.4.4).
pub mod code {
    pub const GROUP_EXISTS: u16 = 0;
    pub const INVALID_GROUP: u16 = 1;
    pub const WEIGHT_UNSUPPORTED: u16 = 2;
    pub const OUT_OF_GROUPS: u16 = 3;
    pub const OUT_OF_BUCKETS: u16 = 4;
    pub const CHAINING_UNSUPPORTED: u16 = 5;
    pub const UNKNOWN_GROUP: u16 = 8;
    pub const BAD_TYPE: u16 = 10;
    pub const BAD_COMMAND: u16 = 11;
    pub const BAD_BUCKET: u16 = 12;
}

/// Why a GROUP_MOD was refused: its `OFPGMFC_*` code and a reason for the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{why}")]
pub struct GroupModError {
    pub code: u16,
    pub why: String,
}

impl GroupModError {
    fn new(code: u16, why: impl Into<String>) -> GroupModError {
        GroupModError {
            code,
            why: why.into(),
        }
    }
}

/// Buckets per group at most.
pub const MAX_BUCKETS: usize = 64;

/// A GROUP_MOD as the pipeline takes it.
#[derive(Debug, Clone, Copy)]
pub struct GroupModRequest<'a> {
    pub command: GroupModCommand,
    pub group_type: GroupType,
    pub group_id: u32,
    pub buckets: &'a [Bucket],
}

/// How a group uses its buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    All,
    Select,
    Indirect,
}

pub(crate) struct GroupBucket {
    pub weight: u16,
    pub actions: Vec<FlowAction>,
    pub packets: Cell<u64>,
    pub bytes: Cell<u64>,
}

pub(crate) struct Group {
    pub kind: Kind,
    pub buckets: Vec<GroupBucket>,
    /// Sum of the select buckets' weights.
    pub total_weight: u32,
    /// The buckets as the controller sent them (GROUP_DESC).
    pub wire: Vec<Bucket>,
    pub packets: Cell<u64>,
    pub bytes: Cell<u64>,
    pub created: Instant,
}

impl Group {
    /// The bucket a select group gives a frame whose flow hashes to `hash`.
    pub fn pick(&self, hash: u64) -> Option<&GroupBucket> {
        if self.total_weight == 0 {
            return None;
        }
        let mut at = (hash % u64::from(self.total_weight)) as u32;
        for b in &self.buckets {
            let w = u32::from(b.weight);
            if at < w {
                return Some(b);
            }
            at -= w;
        }
        None
    }
}

/// One group's statistics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupStats {
    pub group_id: u32,
    /// Flows whose actions name the group.
    pub ref_count: u32,
    pub packets: u64,
    pub bytes: u64,
    pub duration: std::time::Duration,
    /// (packets, bytes) per bucket.
    pub buckets: Vec<(u64, u64)>,
}

/// One group's description (GROUP_DESC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDesc {
    pub group_id: u32,
    pub group_type: GroupType,
    pub buckets: Vec<Bucket>,
}

/// The group table.
pub(crate) struct Groups {
    map: HashMap<u32, Group>,
    max: usize,
}

/// What a GROUP_MOD changed, for the pipeline to finish: the groups whose flows must go.
pub(crate) enum Change {
    None,
    Deleted(Vec<u32>),
}

impl Groups {
    pub fn new(max: usize) -> Groups {
        Groups {
            map: HashMap::new(),
            max,
        }
    }

    #[inline]
    pub fn get(&self, id: u32) -> Option<&Group> {
        self.map.get(&id)
    }

    pub fn contains(&self, id: u32) -> bool {
        self.map.contains_key(&id)
    }

    /// Applies a GROUP_MOD; a delete returns the groups removed (their flows are the
    /// caller's to remove).
    pub fn group_mod(
        &mut self,
        req: &GroupModRequest<'_>,
        now: Instant,
    ) -> Result<Change, GroupModError> {
        let id = req.group_id;
        match req.command {
            GroupModCommand::Delete => {
                if id == OFPG_ALL {
                    let ids: Vec<u32> = self.map.drain().map(|(id, _)| id).collect();
                    return Ok(Change::Deleted(ids));
                }
                // §6.5: "If a specified group does not exist, no error is returned".
                Ok(match self.map.remove(&id) {
                    Some(_) => Change::Deleted(vec![id]),
                    None => Change::None,
                })
            }
            GroupModCommand::Add | GroupModCommand::Modify => {
                if id > OFPG_MAX {
                    return Err(GroupModError::new(
                        code::INVALID_GROUP,
                        format!("group {id:#x} is a reserved number"),
                    ));
                }
                let exists = self.map.contains_key(&id);
                match (req.command, exists) {
                    (GroupModCommand::Add, true) => {
                        return Err(GroupModError::new(
                            code::GROUP_EXISTS,
                            format!("group {id} exists"),
                        ))
                    }
                    (GroupModCommand::Modify, false) => {
                        return Err(GroupModError::new(
                            code::UNKNOWN_GROUP,
                            format!("no group {id}"),
                        ))
                    }
                    _ => {}
                }
                if !exists && self.map.len() >= self.max {
                    return Err(GroupModError::new(
                        code::OUT_OF_GROUPS,
                        format!("the group table is full ({} groups)", self.max),
                    ));
                }
                let mut group = build(req, now)?;
                if let Some(old) = self.map.get(&id) {
                    // A modify replaces the buckets (and their counters); the group's
                    // own counters and age go on.
                    group.packets.set(old.packets.get());
                    group.bytes.set(old.bytes.get());
                    group.created = old.created;
                }
                self.map.insert(id, group);
                Ok(Change::None)
            }
            GroupModCommand::Unknown(c) => Err(GroupModError::new(
                code::BAD_COMMAND,
                format!("unknown GROUP_MOD command {c}"),
            )),
        }
    }

    /// The statistics of `id` (`OFPG_ALL`: every group), by group number; `refs`
    /// counts the flows naming a group.
    pub fn stats(&self, id: u32, now: Instant, refs: impl Fn(u32) -> u32) -> Vec<GroupStats> {
        let mut ids: Vec<u32> = if id == OFPG_ALL {
            self.map.keys().copied().collect()
        } else {
            self.map.get(&id).map(|_| id).into_iter().collect()
        };
        ids.sort_unstable();
        ids.into_iter()
            .map(|id| {
                let g = &self.map[&id];
                GroupStats {
                    group_id: id,
                    ref_count: refs(id),
                    packets: g.packets.get(),
                    bytes: g.bytes.get(),
                    duration: now.saturating_duration_since(g.created),
                    buckets: g
                        .buckets
                        .iter()
                        .map(|b| (b.packets.get(), b.bytes.get()))
                        .collect(),
                }
            })
            .collect()
    }

    /// Every group's description, by group number.
    pub fn desc(&self) -> Vec<GroupDesc> {
        let mut out: Vec<GroupDesc> = self
            .map
            .iter()
            .map(|(id, g)| GroupDesc {
                group_id: *id,
                group_type: match g.kind {
                    Kind::All => GroupType::All,
                    Kind::Select => GroupType::Select,
                    Kind::Indirect => GroupType::Indirect,
                },
                buckets: g.wire.clone(),
            })
            .collect();
        out.sort_unstable_by_key(|d| d.group_id);
        out
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }
}

/// A group from an add or modify, checked whole before anything changes.
fn build(req: &GroupModRequest<'_>, now: Instant) -> Result<Group, GroupModError> {
    let kind = match req.group_type {
        GroupType::All => Kind::All,
        GroupType::Select => Kind::Select,
        GroupType::Indirect => Kind::Indirect,
        GroupType::FastFailover => {
            return Err(GroupModError::new(
                code::BAD_TYPE,
                "fast-failover groups are not supported (no liveness tracking)",
            ))
        }
        GroupType::Unknown(t) => {
            return Err(GroupModError::new(
                code::BAD_TYPE,
                format!("unknown group type {t}"),
            ))
        }
    };
    if req.buckets.len() > MAX_BUCKETS {
        return Err(GroupModError::new(
            code::OUT_OF_BUCKETS,
            format!("{} buckets (at most {MAX_BUCKETS})", req.buckets.len()),
        ));
    }
    if kind == Kind::Indirect && req.buckets.len() != 1 {
        return Err(GroupModError::new(
            code::INVALID_GROUP,
            format!(
                "an indirect group has exactly one bucket, not {}",
                req.buckets.len()
            ),
        ));
    }
    let mut buckets = Vec::with_capacity(req.buckets.len());
    for (i, b) in req.buckets.iter().enumerate() {
        if kind != Kind::Select && b.weight != 0 {
            return Err(GroupModError::new(
                code::WEIGHT_UNSUPPORTED,
                format!("bucket {i}: a weight in a group that is not select"),
            ));
        }
        let actions = actions_from_of13(&b.actions)
            .map_err(|e| GroupModError::new(code::BAD_BUCKET, format!("bucket {i}: {e}")))?;
        for a in &actions {
            match a {
                FlowAction::Group { .. } => {
                    return Err(GroupModError::new(
                        code::CHAINING_UNSUPPORTED,
                        format!("bucket {i}: a group action (groups do not chain here)"),
                    ))
                }
                FlowAction::Output {
                    port: PortNo::Table | PortNo::Normal | PortNo::Any,
                } => {
                    return Err(GroupModError::new(
                        code::BAD_BUCKET,
                        format!("bucket {i}: output to TABLE, NORMAL or ANY"),
                    ))
                }
                FlowAction::Enqueue { .. } | FlowAction::SetQueue { .. } => {
                    return Err(GroupModError::new(
                        code::BAD_BUCKET,
                        format!("bucket {i}: no queues"),
                    ))
                }
                _ => {}
            }
        }
        buckets.push(GroupBucket {
            weight: b.weight,
            actions,
            packets: Cell::new(0),
            bytes: Cell::new(0),
        });
    }
    let total_weight = if kind == Kind::Select {
        buckets.iter().map(|b| u32::from(b.weight)).sum()
    } else {
        0
    };
    Ok(Group {
        kind,
        buckets,
        total_weight,
        wire: req.buckets.to_vec(),
        packets: Cell::new(0),
        bytes: Cell::new(0),
        created: now,
    })
}
