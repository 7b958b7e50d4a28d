//! `up`: what a lab is made of ([`LabOptions`], [`SwitchKind`]) and building it, in
//! the order the intent log needs: claim the lab directory, check that no name it would
//! use is taken, then TLS files, hosts and links, and the switches of either kind. On
//! failure what was made is removed ([`crate::down`]).

use std::fs;
use std::path::PathBuf;

use crate::down::teardown;
use crate::kernel::{etc_netns, iface_exists, netns_exists};
use crate::names::{self, Names};
use crate::state::{self, State};
use crate::target::tls_target;
use crate::tools::{is_executable, Tools};
use crate::topo::Topo;
use crate::words::title;
use crate::{tls, validate_lab_name, ControlTarget, Lab, LabError, LabTls, OfVersion};

/// What `up` builds.
#[derive(Debug, Clone)]
pub struct LabOptions {
    /// The lab's name (`--name`): the prefix of everything it makes.
    pub name: String,
    /// The directory holding labs (`$PHAROS_LAB_DIR`); this lab lives in `dir/name`.
    pub dir: PathBuf,
    /// What it is made of: switches, hosts and links.
    pub topo: Topo,
    /// The OpenFlow version the switches speak.
    pub of: OfVersion,
    /// `tcp:HOST:PORT`, `ptcp:PORT` or `none` ([`ControlTarget`]).
    pub controller: String,
    /// Probe interfaces instead of hosts: each host's veth keeps its switch end (an OVS
    /// port) and has its other end `pb-NAME-M` in the root namespace, with no address,
    /// for `pharos bench switch` to send and capture on ([`Lab::probes`]).
    pub probe: bool,
    /// Print every command run, on standard error.
    pub verbose: bool,
    /// The OpenFlow channel over TLS: the switches connect to `ssl:HOST:PORT` (the
    /// controller's address) with a certificate, and check the controller's.
    pub tls: Option<LabTls>,
    /// Which switches the lab runs.
    pub switch: SwitchKind,
}

/// The switches of a lab.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SwitchKind {
    /// Open vSwitch bridges on its userspace datapath, in one `ovs-vswitchd` of the lab.
    #[default]
    Ovs,
    /// `pharos switch`, one process per switch, run from this executable (the `pharos`
    /// binary) with the lab's ports, datapath ids and controller, and `--datapath
    /// DATAPATH` when one is given (`af_xdp`...).
    Pharos {
        /// The `pharos` binary to run `pharos switch` from.
        exe: PathBuf,
        /// Its `--datapath`; `None`: the switch's default.
        datapath: Option<String>,
    },
}

impl Lab {
    /// Builds a lab: OVS daemons, namespaces, veths, bridges. Refuses if a lab of that name
    /// exists in the directory, or if any name it would use is taken; on failure removes
    /// what it made and returns the error.
    pub fn up(opts: LabOptions) -> Result<Lab, LabError> {
        validate_lab_name(&opts.name)?;
        let names = Names::new(&opts.name);
        names::check(&names, &opts.topo)?;
        let mut opts = opts;
        opts.controller = tls_target(&opts.controller, opts.tls.is_some())?;
        if let ControlTarget::Listen(p) = ControlTarget::parse(&opts.controller)? {
            if u32::from(p) + (opts.topo.switches.len() as u32).saturating_sub(1)
                > u32::from(u16::MAX)
            {
                return Err(LabError::Invalid(format!(
                    "ptcp:{p}: switch sN listens on {p}+N-1, past 65535 for {} switches",
                    opts.topo.switches.len()
                )));
            }
        }
        let tools = Tools::get()?;
        fs::create_dir_all(&opts.dir)
            .map_err(|e| LabError::io(format!("create {}", opts.dir.display()), e))?;
        let dir = opts.dir.join(&opts.name);
        match fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(LabError::io(format!("create {}", dir.display()), e)),
        }
        let dir = fs::canonicalize(&dir)
            .map_err(|e| LabError::io(format!("resolve {}", dir.display()), e))?;
        if let SwitchKind::Pharos { exe, .. } = &opts.switch {
            if !is_executable(exe) {
                return Err(LabError::Invalid(format!(
                    "--switch pharos: {} is not an executable",
                    exe.display()
                )));
            }
        }
        let mut state = State::new(
            &opts.name,
            &opts.topo.spec,
            opts.of.as_str(),
            &opts.controller,
        );
        state.probe = opts.probe;
        if let SwitchKind::Pharos { exe, datapath } = &opts.switch {
            state.pharos_switch = Some(exe.clone());
            state.pharos_datapath = datapath.clone();
        }
        state.claim(&dir)?;
        let mut lab = Lab {
            state,
            topo: opts.topo,
            names,
            dir,
            of: opts.of,
            tools,
            verbose: opts.verbose,
        };
        if let Err(e) = lab.check_free() {
            // Nothing made yet: release the claim.
            let _ = fs::remove_file(lab.dir.join(state::STATE_FILE));
            let _ = fs::remove_dir(&lab.dir);
            return Err(e);
        }
        match lab.build(opts.tls.as_ref()) {
            Ok(()) => Ok(lab),
            Err(e) => match teardown(&lab.dir, &lab.state, &lab.tools, lab.verbose) {
                Ok(_) => Err(e),
                Err(t) => Err(LabError::Other(format!(
                    "{e}; removing what was made failed too: {t}"
                ))),
            },
        }
    }

    /// Refuses to start if a namespace, interface or /etc/netns entry of ours already
    /// exists (a lab of this name under another lab directory, or someone else's).
    fn check_free(&self) -> Result<(), LabError> {
        let mut taken = Vec::new();
        for s in &self.topo.switches {
            let b = self.names.bridge(s.num);
            if iface_exists(&b) {
                taken.push(format!("interface {b}"));
            }
        }
        for v in self.root_veths() {
            if iface_exists(&v) {
                taken.push(format!("interface {v}"));
            }
        }
        for h in &self.topo.hosts {
            if self.state.probe {
                let pb = self.names.probe_iface(h.num);
                if iface_exists(&pb) {
                    taken.push(format!("interface {pb}"));
                }
                continue;
            }
            let ns = self.names.netns(h.num);
            if netns_exists(&ns) {
                taken.push(format!("network namespace {ns}"));
            }
            if etc_netns(&ns).exists() {
                taken.push(format!("{}", etc_netns(&ns).display()));
            }
        }
        if taken.is_empty() {
            return Ok(());
        }
        let more = if taken.len() > 3 {
            format!(" and {} more", taken.len() - 3)
        } else {
            String::new()
        };
        taken.truncate(3);
        Err(LabError::Other(format!(
            "{} would clash with what already exists: {}{more} (a lab of the same name \
             under another PHAROS_LAB_DIR? take it down there, or use another --name)",
            title(&self.state.name),
            taken.join(", ")
        )))
    }

    /// Everything after the claim: the TLS files, then for Open vSwitch its daemons,
    /// the hosts and links, and the bridges; for Pharos switches the hosts and links, then
    /// one `pharos switch` per switch instead of the daemons and bridges.
    pub(crate) fn build(&mut self, tls: Option<&LabTls>) -> Result<(), LabError> {
        if let Some(tls) = tls {
            let files = tls::prepare(tls, &self.dir, &self.state.name, &self.state.controller)?;
            self.state.tls = Some(files);
            self.save()?;
        }
        if self.state.pharos_switch.is_some() {
            self.make_hosts_and_links()?;
            self.start_pharos_switches()?;
        } else {
            self.start_daemons()?;
            self.set_ssl()?;
            self.make_hosts_and_links()?;
            self.make_bridges()?;
        }
        self.state.complete = true;
        self.save()
    }
}
