//! The [`Lab`] type: a lab as recorded in its `state.json`, opened by name, and what it
//! tells of itself (name, topology, controller, probes, directory). What a lab does is
//! in the modules around this one, each an `impl Lab` of its own concern.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::cmd::{self, Cmd};
use crate::names::Names;
use crate::state::State;
use crate::tools::Tools;
use crate::topo::{self, Node, Topo};
use crate::words::{span, title};
use crate::{validate_lab_name, ControlTarget, LabError, OfVersion, TlsFiles};

/// The lab directory when `PHAROS_LAB_DIR` is not set.
pub const DEFAULT_LAB_DIR: &str = "/run/pharos-lab";

/// The lab directory: `$PHAROS_LAB_DIR`, or [`DEFAULT_LAB_DIR`].
pub fn lab_dir_from_env() -> PathBuf {
    match std::env::var_os("PHAROS_LAB_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(DEFAULT_LAB_DIR),
    }
}

/// A lab, as recorded in its `state.json`.
#[derive(Debug, Clone)]
pub struct Lab {
    /// What `up` recorded (and `move` since): the source of truth; every command reads it.
    pub(crate) state: State,
    /// The topology rebuilt from `state.topo`, with the recorded moves replayed.
    pub(crate) topo: Topo,
    /// The names of what the lab makes, prefixed with its name.
    pub(crate) names: Names,
    /// `$PHAROS_LAB_DIR/NAME`.
    pub(crate) dir: PathBuf,
    /// The OpenFlow version(s) of its switches, parsed from `state.of`.
    pub(crate) of: OfVersion,
    /// Where the programs it runs are.
    pub(crate) tools: Tools,
    /// Print every command run, on standard error.
    pub(crate) verbose: bool,
}

/// A probe interface of a lab made with [`LabOptions::probe`](crate::LabOptions::probe):
/// where host hM would be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProbePort {
    /// The host it stands for (`h1`).
    pub name: String,
    /// The interface in the root namespace (`pb-lab-1`).
    pub interface: String,
    /// Its MAC address (the host's: 00:00:00:00:00:01 for h1).
    pub mac: String,
    /// The address the host would have (not configured on the interface).
    pub ip: String,
    /// The switch (`s1`) and its port number.
    pub switch: String,
    /// Its port on that switch.
    pub port: u16,
}

/// `p` made absolute and free of symbolic links when it exists: the daemons were started
/// with the absolute path, which is how their command lines are recognised.
pub(crate) fn resolve(p: &Path) -> PathBuf {
    fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

impl Lab {
    /// The lab `name` in `dir` (the directory holding labs).
    pub fn open(name: &str, dir: &Path) -> Result<Lab, LabError> {
        validate_lab_name(name)?;
        let lab_dir = resolve(&dir.join(name));
        let state = State::load(&lab_dir)?.ok_or_else(|| LabError::NoLab {
            name: name.to_string(),
            dir: dir.to_path_buf(),
        })?;
        let mut topo = Topo::parse(&state.topo)?;
        for m in &state.moves {
            topo.move_host(m.host, m.switch)?;
        }
        let of = OfVersion::parse(&state.of)?;
        Ok(Lab {
            names: Names::new(&state.name),
            state,
            topo,
            dir: lab_dir,
            of,
            tools: Tools::get()?,
            verbose: false,
        })
    }

    pub fn set_verbose(&mut self, verbose: bool) {
        self.verbose = verbose;
    }

    pub fn name(&self) -> &str {
        &self.state.name
    }

    pub fn topo(&self) -> &Topo {
        &self.topo
    }

    pub fn of(&self) -> OfVersion {
        self.of
    }

    pub fn controller(&self) -> &str {
        &self.state.controller
    }

    /// Where the switches' OpenFlow channel goes.
    pub fn control_target(&self) -> ControlTarget {
        ControlTarget::parse(&self.state.controller).unwrap_or(ControlTarget::None)
    }

    /// The address switch `num` listens on for a controller (a `ptcp:PORT` lab).
    pub fn switch_listen_addr(&self, num: u32) -> Option<std::net::SocketAddr> {
        match self.control_target() {
            ControlTarget::Listen(p) => Some(std::net::SocketAddr::from((
                [127, 0, 0, 1],
                u16::try_from(u32::from(p) + num - 1).ok()?,
            ))),
            _ => None,
        }
    }

    /// Whether the lab has probe interfaces instead of hosts.
    pub fn is_probe(&self) -> bool {
        self.state.probe
    }

    /// The probe interfaces (empty unless made with
    /// [`LabOptions::probe`](crate::LabOptions::probe)), by host number.
    pub fn probes(&self) -> Vec<ProbePort> {
        if !self.state.probe {
            return Vec::new();
        }
        self.topo
            .hosts
            .iter()
            .map(|h| ProbePort {
                name: h.name(),
                interface: self.names.probe_iface(h.num),
                mac: h.mac_string(),
                ip: h.ip.to_string(),
                switch: format!("s{}", h.switch),
                port: h.port,
            })
            .collect()
    }

    /// The lab directory (OVS's run, log and database directory).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The TLS files of a lab over TLS.
    pub fn tls(&self) -> Option<&TlsFiles> {
        self.state.tls.as_ref()
    }

    pub fn is_complete(&self) -> bool {
        self.state.complete
    }

    pub(crate) fn ip(&self) -> Cmd {
        Cmd::new(&self.tools.ip)
    }

    pub(crate) fn run(&self, c: Cmd) -> Result<cmd::Output, LabError> {
        c.run(self.verbose)
    }

    pub(crate) fn save(&self) -> Result<(), LabError> {
        self.state.save(&self.dir)
    }

    pub(crate) fn host_of(&self, name: &str) -> Result<&topo::Host, LabError> {
        if self.state.probe {
            return Err(LabError::Invalid(format!(
                "{} has probe interfaces ({}), not hosts: send and capture on those",
                title(&self.state.name),
                self.names.probe_iface(1).replace("-1", "-M")
            )));
        }
        match Node::parse(name) {
            Some(Node::Host(h)) => self.topo.host(h).ok_or_else(|| {
                LabError::Invalid(format!(
                    "no host {name} in {} (hosts {})",
                    self.topo.spec,
                    span("h", self.topo.hosts.len())
                ))
            }),
            _ => Err(LabError::Invalid(format!(
                "{name:?} is not a host: hosts are {}",
                span("h", self.topo.hosts.len())
            ))),
        }
    }

    pub(crate) fn node_of(&self, name: &str) -> Result<Node, LabError> {
        match Node::parse(name) {
            Some(n) if self.topo.has(n) => Ok(n),
            _ => Err(LabError::Invalid(format!(
                "no node {name:?} in {}: switches {}, hosts {}",
                self.topo.spec,
                span("s", self.topo.switches.len()),
                span("h", self.topo.hosts.len())
            ))),
        }
    }
}
