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
    /// No lab of that name in the lab directory.
    #[error("no lab named {name} in {} (start one: pharos lab up --topo linear,3{})", dir.display(), name_flag(name))]
    NoLab {
        /// The lab's name.
        name: String,
        /// The lab directory looked in.
        dir: PathBuf,
    },
    /// `up` of a name already taken in the lab directory.
    #[error("a lab named {name} already exists in {} (pharos lab show{flag}; pharos lab down{flag})", dir.display(), flag = name_flag(name))]
    Exists {
        /// The lab's name.
        name: String,
        /// The lab directory it is in.
        dir: PathBuf,
    },
    /// A command failed: "ip link add x: RTNETLINK answers: File exists".
    #[error("{cmd}: {detail}")]
    Command {
        /// The command, as labelled for a reader (`ip link add x`).
        cmd: String,
        /// What went wrong: its standard error, its exit status, or its timeout.
        detail: String,
    },
    /// An I/O error, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done (`create /run/pharos-lab/lab`).
        context: String,
        /// The error.
        source: std::io::Error,
    },
    /// Anything else, said in full.
    #[error("{0}")]
    Other(String),
}

impl LabError {
    /// A [`LabError::Io`] saying what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> LabError {
        LabError::Io {
            context: context.into(),
            source,
        }
    }
}
