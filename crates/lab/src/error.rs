//! The lab's one error type: each variant a message fit for a user.

use std::path::PathBuf;

use crate::words::name_flag;

/// Everything that can go wrong, each with a message fit for a user.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The machine cannot run a lab: not root, or a tool is missing.
    #[error("{0}")]
    Preflight(String),
    /// A bad argument: topology, name, controller, node.
    #[error("{0}")]
    Invalid(String),
    #[error("no lab named {name} in {} (start one: pharos lab up --topo linear,3{})", dir.display(), name_flag(name))]
    NoLab { name: String, dir: PathBuf },
    #[error("a lab named {name} already exists in {} (pharos lab show{flag}; pharos lab down{flag})", dir.display(), flag = name_flag(name))]
    Exists { name: String, dir: PathBuf },
    /// A command failed: "ip link add x: RTNETLINK answers: File exists".
    #[error("{cmd}: {detail}")]
    Command { cmd: String, detail: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Other(String),
}

impl LabError {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> LabError {
        LabError::Io {
            context: context.into(),
            source,
        }
    }
}
