//! Test networks on one machine: Open vSwitch switches (userspace datapath, in a private
//! run directory) and hosts in network namespaces, joined by veth pairs, every switch
//! pointed at an OpenFlow controller. This is what `pharos lab` drives.
//!
//! It shells out to `ip`, `ovs-vsctl`, `ovsdb-tool`, `ovsdb-server`, `ovs-vswitchd`,
//! `ethtool` and `ping`, as Mininet does, each with a timeout and its standard error in
//! the error message. What it does follows `shared/notes/open-vswitch.md`:
//!
//! * `ovsdb-server` and `ovs-vswitchd` run from the lab directory
//!   (`$PHAROS_LAB_DIR/NAME`, default `/run/pharos-lab/NAME`), with `OVS_RUNDIR`,
//!   `OVS_LOGDIR` and `OVS_DBDIR` set to it for every OVS command: never the system's
//!   `/var/run/openvswitch`.
//! * Bridges use the userspace datapath (dpif-netdev) as `datapath_type=dummy`, which
//!   ovs-vswitchd offers when started with `--enable-dummy`: the same datapath as
//!   `netdev`, but its internal ports are not kernel taps. With `netdev` the datapath's
//!   own tap is named `ovs-netdev` in the root namespace, so a second userspace Open
//!   vSwitch on the machine (another lab, or one not made by `pharos lab`) could not
//!   create its datapath while the first held that name. Bridges are also set
//!   `fail_mode=secure`, the one OpenFlow version asked for, datapath id N for sN, in-band
//!   control off, and retry a missing controller every second (`max_backoff=1000`, set in
//!   the same transaction: the notes saw no effect when it was set during a backoff);
//!   switches are joined by veth pairs, never patch ports.
//! * Hosts are network namespaces with transmit checksum offload off (TCP and UDP die on
//!   the userspace datapath otherwise) and IPv6 off, as are the switch-side veth ends, so
//!   that the only packets reaching the controller are the ones the user sends.
//! * `state.json` in the lab directory is an intent log ([`state`]): `down` removes what
//!   was recorded, in the order bridges, veths, namespaces, daemons; daemons are stopped
//!   only by the pid they recorded, after checking the process is that daemon of this lab.
//!
//! * `move` re-plugs a host into a new port of another switch (recorded in `state.json`
//!   and replayed on the topology by every later command); [`frame`] sends and receives
//!   raw Ethernet frames as a host, from a packet socket in its namespace.
//!
//! When switches do not connect, [`probe`] tells what a connection to the controller
//! sees (refused, accepted then closed, ...), for the hint.
//!
//! Names ([`names`]) carry the lab's name, so labs of different names coexist; numbering
//! and shapes are in [`topo`].

pub mod cmd;
pub mod frame;
pub mod names;
pub mod pki;
pub mod probe;
pub mod state;
pub mod topo;

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::fs;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::cmd::Cmd;
pub use crate::names::{validate_lab_name, Names};
use crate::state::{plan_teardown, Daemon, Move, State, Step};
pub use crate::topo::{Link, Node, Topo};

/// How a lab is named in a sentence: "lab" for the default one (not "lab lab"), "lab t1"
/// for the others.
pub fn title(name: &str) -> String {
    if name == DEFAULT_NAME {
        "lab".to_string()
    } else {
        format!("lab {name}")
    }
}

/// The lab directory when `PHAROS_LAB_DIR` is not set.
pub const DEFAULT_LAB_DIR: &str = "/run/pharos-lab";
/// The lab name when none is given.
pub const DEFAULT_NAME: &str = "lab";
/// The controller when none is given.
pub const DEFAULT_CONTROLLER: &str = "tcp:127.0.0.1:6653";

const OVS_SCHEMA: &[&str] = &[
    "/usr/share/openvswitch/vswitch.ovsschema",
    "/usr/local/share/openvswitch/vswitch.ovsschema",
];
/// The longest wait between a switch's attempts to reach its controller (OVS's minimum;
/// its default is 8 s).
const MAX_BACKOFF_MS: u32 = 1000;
/// Timeout of every ovs-vsctl call (it blocks forever without ovs-vswitchd otherwise).
const VSCTL_TIMEOUT: u64 = 10;

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

fn name_flag(name: &str) -> String {
    if name == DEFAULT_NAME {
        String::new()
    } else {
        format!(" --name {name}")
    }
}

impl LabError {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> LabError {
        LabError::Io {
            context: context.into(),
            source,
        }
    }
}

/// The OpenFlow version the switches speak (each only one, so a controller that knows
/// both is made to use it): all 1.0, all 1.3, or mixed (odd-numbered switches 1.0,
/// even-numbered 1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum OfVersion {
    V10,
    V13,
    Mixed,
}

impl OfVersion {
    /// "1.0", "1.3" or "mixed".
    pub fn parse(s: &str) -> Result<OfVersion, LabError> {
        match s.trim() {
            "1.0" | "10" | "1" | "OpenFlow10" => Ok(OfVersion::V10),
            "1.3" | "13" | "OpenFlow13" => Ok(OfVersion::V13),
            "mixed" => Ok(OfVersion::Mixed),
            other => Err(LabError::Invalid(format!(
                "bad OpenFlow version {other:?}: 1.0, 1.3 or mixed"
            ))),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            OfVersion::V10 => "1.0",
            OfVersion::V13 => "1.3",
            OfVersion::Mixed => "mixed",
        }
    }

    /// The version switch sN speaks: for a mixed lab, 1.0 when N is odd, 1.3 when even.
    pub fn for_switch(self, num: u32) -> OfVersion {
        match self {
            OfVersion::Mixed if num % 2 == 1 => OfVersion::V10,
            OfVersion::Mixed => OfVersion::V13,
            v => v,
        }
    }

    /// The name Open vSwitch uses (`protocols=`, `ovs-ofctl -O`); for a mixed lab the
    /// list `ovs-ofctl -O` takes to talk to either kind of switch.
    pub fn ovs_protocol(self) -> &'static str {
        match self {
            OfVersion::V10 => "OpenFlow10",
            OfVersion::V13 => "OpenFlow13",
            OfVersion::Mixed => "OpenFlow10,OpenFlow13",
        }
    }
}

impl fmt::Display for OfVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Checks a controller target `tcp:HOST:PORT` or `ssl:HOST:PORT` (HOST an IPv4 address
/// or a bracketed IPv6 one); returns its port.
pub fn parse_controller(s: &str) -> Result<u16, LabError> {
    let bad = |why: &str| {
        LabError::Invalid(format!(
            "bad controller {s:?}: {why} (expected tcp:HOST:PORT, for example {DEFAULT_CONTROLLER})"
        ))
    };
    let rest = s
        .strip_prefix("tcp:")
        .or_else(|| s.strip_prefix("ssl:"))
        .ok_or_else(|| bad("only tcp: and ssl: are supported"))?;
    let (host, port) = rest.rsplit_once(':').ok_or_else(|| bad("no port"))?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.parse::<IpAddr>()
        .map_err(|_| bad("HOST must be an IP address"))?;
    match port.parse::<u16>() {
        Ok(p) if p != 0 => Ok(p),
        _ => Err(bad("PORT must be 1-65535")),
    }
}

/// The address of a controller target `tcp:HOST:PORT` or `ssl:HOST:PORT` (checked as
/// [`parse_controller`] does).
pub fn controller_addr(s: &str) -> Result<std::net::SocketAddr, LabError> {
    let port = parse_controller(s)?;
    let host = s["tcp:".len()..s.len() - port.to_string().len() - 1]
        .trim_start_matches('[')
        .trim_end_matches(']');
    let ip: IpAddr = host
        .parse()
        .map_err(|_| LabError::Invalid(format!("bad controller {s:?}")))?;
    Ok(std::net::SocketAddr::new(ip, port))
}

/// The controller target of a lab: with TLS, `tcp:HOST:PORT` becomes `ssl:HOST:PORT`;
/// without, `ssl:` is refused (the switches would have no certificates).
fn tls_target(controller: &str, tls: bool) -> Result<String, LabError> {
    match (tls, ControlTarget::parse(controller)?) {
        (true, ControlTarget::Connect(_)) => Ok(format!("ssl:{}", &controller[4..])),
        (true, _) => Err(LabError::Invalid(format!(
            "--tls needs a controller the switches connect to (tcp:HOST:PORT), not {controller}"
        ))),
        (false, _) if controller.starts_with("ssl:") => Err(LabError::Invalid(format!(
            "{controller}: a lab over TLS is made with --tls (and --controller tcp:HOST:PORT)"
        ))),
        (false, _) => Ok(controller.to_string()),
    }
}

/// Where a lab's switches have their OpenFlow channel (`--controller`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlTarget {
    /// `tcp:HOST:PORT` (or `ssl:HOST:PORT`, over TLS): every switch connects to the
    /// controller there.
    Connect(std::net::SocketAddr),
    /// `ptcp:PORT`: switch sN listens on 127.0.0.1:(PORT + N - 1) for a controller to
    /// connect (`pharos bench switch --switch-connect`).
    Listen(u16),
    /// `none`: no controller at all. With `fail_mode=secure` the switches forward nothing
    /// until someone (`ovs-ofctl`, a bench on a listening target) installs flows.
    None,
}

/// The `--controller` value for [`ControlTarget::None`].
pub const NO_CONTROLLER: &str = "none";

impl ControlTarget {
    /// Parses `tcp:HOST:PORT`, `ptcp:PORT` or `none`.
    pub fn parse(s: &str) -> Result<ControlTarget, LabError> {
        if s == NO_CONTROLLER {
            return Ok(ControlTarget::None);
        }
        if let Some(port) = s.strip_prefix("ptcp:") {
            return match port.parse::<u16>() {
                Ok(p) if p != 0 => Ok(ControlTarget::Listen(p)),
                _ => Err(LabError::Invalid(format!(
                    "bad controller {s:?}: ptcp:PORT with PORT 1-65535 (switch sN listens on \
                     PORT+N-1)"
                ))),
            };
        }
        if !s.starts_with("tcp:") && !s.starts_with("ssl:") {
            return Err(LabError::Invalid(format!(
                "bad controller {s:?}: expected tcp:HOST:PORT (for example \
                 {DEFAULT_CONTROLLER}), ssl:HOST:PORT, ptcp:PORT or none"
            )));
        }
        controller_addr(s).map(ControlTarget::Connect)
    }

    /// What OVS's `set-controller` gets for switch `num`, if anything.
    fn ovs_target(&self, original: &str, num: u32) -> Option<String> {
        match self {
            ControlTarget::Connect(_) => Some(original.to_string()),
            ControlTarget::Listen(p) => Some(format!("ptcp:{}:127.0.0.1", u32::from(*p) + num - 1)),
            ControlTarget::None => None,
        }
    }
}

/// What `up` builds.
#[derive(Debug, Clone)]
pub struct LabOptions {
    pub name: String,
    /// The directory holding labs (`$PHAROS_LAB_DIR`); this lab lives in `dir/name`.
    pub dir: PathBuf,
    pub topo: Topo,
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
        exe: PathBuf,
        datapath: Option<String>,
    },
}

/// The process name (`/proc/PID/comm`) of a Pharos switch of a lab.
const PHAROS_SWITCH_COMM: &str = "pharos";

/// Where a lab over TLS gets its certificates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabTls {
    /// A new private PKI in the lab directory, `pki/` ([`pki::Pki::create`]): the
    /// controller is given its certificate and the CA there.
    Generate,
    /// The switches' certificate and key, and the CA the controller's certificate must
    /// be signed by (a PKI of one's own, `ovs-pki`'s for instance).
    Files {
        ca_cert: PathBuf,
        cert: PathBuf,
        key: PathBuf,
    },
}

/// The files a lab over TLS uses (recorded in its `state.json`; `show` lists them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct TlsFiles {
    /// The CA the switches check the controller's certificate against.
    pub ca_cert: PathBuf,
    /// The switches' certificate and private key (`ovs-vsctl set-ssl`).
    pub switch_cert: PathBuf,
    pub switch_key: PathBuf,
    /// The PKI the lab made (`up --tls` without files of one's own): the controller's
    /// certificate and key are there, and `controller.toml`, its listen entry.
    pub pki_dir: Option<PathBuf>,
}

/// The file in a lab's `pki/` holding the controller's listen entry.
pub const CONTROLLER_TOML: &str = "controller.toml";

/// A probe interface of a lab made with [`LabOptions::probe`]: where host hM would be.
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
    pub port: u16,
}

/// The lab directory: `$PHAROS_LAB_DIR`, or [`DEFAULT_LAB_DIR`].
pub fn lab_dir_from_env() -> PathBuf {
    match std::env::var_os("PHAROS_LAB_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(DEFAULT_LAB_DIR),
    }
}

// ----------------------------------------------------------------------------------------
// Tools and preflight

/// Paths of the programs the lab runs.
#[derive(Debug, Clone)]
struct Tools {
    ip: PathBuf,
    vsctl: PathBuf,
    ovsdb_tool: PathBuf,
    ovsdb_server: PathBuf,
    vswitchd: PathBuf,
    ethtool: PathBuf,
    ping: PathBuf,
    schema: PathBuf,
}

/// Finds `name` on PATH or in the sbin directories (which a sudo'd PATH may lack).
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(
            [
                "/usr/local/sbin",
                "/usr/local/bin",
                "/usr/sbin",
                "/usr/bin",
                "/sbin",
                "/bin",
            ]
            .iter()
            .map(PathBuf::from),
        )
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

impl Tools {
    /// The tools, or the list of (what, Debian package) missing.
    fn find() -> Result<Tools, Vec<(&'static str, &'static str)>> {
        let mut missing: Vec<(&str, &str)> = Vec::new();
        let mut need = |name: &str, what: &'static str, pkg: &'static str| {
            let p = which(name);
            if p.is_none() && !missing.iter().any(|m| m.1 == pkg) {
                missing.push((what, pkg));
            }
            p.unwrap_or_default()
        };
        let ovs = ("Open vSwitch", "openvswitch-switch");
        let ip = need("ip", "iproute2", "iproute2");
        let vsctl = need("ovs-vsctl", ovs.0, ovs.1);
        let ovsdb_tool = need("ovsdb-tool", ovs.0, ovs.1);
        let ovsdb_server = need("ovsdb-server", ovs.0, ovs.1);
        let vswitchd = need("ovs-vswitchd", ovs.0, ovs.1);
        let ethtool = need("ethtool", "ethtool", "ethtool");
        let ping = need("ping", "ping", "iputils-ping");
        let schema = OVS_SCHEMA.iter().map(PathBuf::from).find(|p| p.is_file());
        if schema.is_none() && !missing.iter().any(|m| m.1 == ovs.1) {
            missing.push(ovs);
        }
        if missing.is_empty() {
            Ok(Tools {
                ip,
                vsctl,
                ovsdb_tool,
                ovsdb_server,
                vswitchd,
                ethtool,
                ping,
                schema: schema.unwrap_or_default(),
            })
        } else {
            Err(missing)
        }
    }

    fn get() -> Result<Tools, LabError> {
        Tools::find().map_err(|m| LabError::Preflight(missing_message(&m)))
    }
}

fn missing_message(missing: &[(&str, &str)]) -> String {
    let whats: Vec<&str> = missing.iter().map(|m| m.0).collect();
    let pkgs: Vec<&str> = missing.iter().map(|m| m.1).collect();
    let (list, verb) = match whats.as_slice() {
        [one] => (one.to_string(), "is"),
        [init @ .., last] => (format!("{} and {last}", init.join(", ")), "are"),
        [] => (String::new(), "is"),
    };
    format!(
        "{list} {verb} not installed: apt-get install {}",
        pkgs.join(" ")
    )
}

/// Whether this machine can run a lab: the tools are installed and we are root. The
/// message names what is missing and how to install it.
pub fn preflight() -> Result<(), LabError> {
    Tools::get()?;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(LabError::Preflight(
            "pharos lab needs root (network namespaces and Open vSwitch): run it as root or \
             with sudo"
                .into(),
        ));
    }
    Ok(())
}

// ----------------------------------------------------------------------------------------
// The lab

/// A lab, as recorded in its `state.json`.
#[derive(Debug, Clone)]
pub struct Lab {
    state: State,
    topo: Topo,
    names: Names,
    /// `$PHAROS_LAB_DIR/NAME`.
    dir: PathBuf,
    of: OfVersion,
    tools: Tools,
    verbose: bool,
}

/// What `down` removed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DownReport {
    pub name: String,
    /// Whether there was a lab to take down.
    pub existed: bool,
    pub bridges: usize,
    pub veths: usize,
    pub netns: usize,
    pub daemons: usize,
    /// Processes left running in the hosts' namespaces, stopped.
    pub processes: usize,
}

impl fmt::Display for DownReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.existed {
            return write!(f, "no lab named {}: nothing to remove", self.name);
        }
        write!(
            f,
            "{} removed: {}, {}, {}, {}",
            title(&self.name),
            plural(self.bridges, "bridge", "bridges"),
            plural(self.veths, "veth pair", "veth pairs"),
            plural(self.netns, "namespace", "namespaces"),
            plural(self.daemons, "daemon", "daemons"),
        )?;
        if self.processes > 0 {
            write!(
                f,
                ", {} left in the hosts",
                plural(self.processes, "process", "processes")
            )?;
        }
        Ok(())
    }
}

/// "s1..s3", "s1", or "none".
pub fn span(prefix: &str, n: usize) -> String {
    match n {
        0 => "none".to_string(),
        1 => format!("{prefix}1"),
        n => format!("{prefix}1..{prefix}{n}"),
    }
}

/// "1 switch", "3 switches".
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The result of pinging one host from another.
#[derive(Debug, Clone, Serialize)]
pub struct PingResult {
    pub from: String,
    pub to: String,
    pub transmitted: u32,
    pub received: u32,
    /// Average round trip, when something came back.
    pub rtt_avg_ms: Option<f64>,
    /// ping's own output.
    pub output: String,
}

impl PingResult {
    pub fn ok(&self) -> bool {
        self.transmitted > 0 && self.received == self.transmitted
    }
}

/// Every ordered pair of hosts, one ping each.
#[derive(Debug, Clone, Serialize)]
pub struct PingAll {
    /// For each host, in order, the hosts it reached and did not reach.
    pub rows: Vec<PingRow>,
    pub sent: usize,
    pub received: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct PingRow {
    pub from: String,
    /// (destination, reached)
    pub to: Vec<(String, bool)>,
}

impl PingAll {
    /// Percentage of pings lost, rounded down as Mininet does.
    pub fn dropped_pct(&self) -> usize {
        ((self.sent - self.received) * 100)
            .checked_div(self.sent)
            .unwrap_or(0)
    }

    pub fn all_ok(&self) -> bool {
        self.received == self.sent
    }
}

impl fmt::Display for PingAll {
    /// Mininet's matrix: `h1 -> h2 X h4`, then `*** Results: 0% dropped (12/12 received)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "*** Ping: testing ping reachability")?;
        for row in &self.rows {
            write!(f, "{} ->", row.from)?;
            for (to, ok) in &row.to {
                write!(f, " {}", if *ok { to.as_str() } else { "X" })?;
            }
            writeln!(f)?;
        }
        write!(
            f,
            "*** Results: {}% dropped ({}/{} received)",
            self.dropped_pct(),
            self.received,
            self.sent
        )
    }
}

/// What `show` prints: the switches, links and hosts, and how to reach the lab's OVS.
#[derive(Debug, Clone, Serialize)]
pub struct Show {
    pub name: String,
    /// The lab directory: OVS's run, log and database directory.
    pub dir: PathBuf,
    /// `OVS_RUNDIR`, `OVS_LOGDIR`, `OVS_DBDIR`: set them to run ovs-vsctl or ovs-ofctl
    /// against this lab's switches.
    pub env: BTreeMap<String, String>,
    pub topo: String,
    /// "1.0", "1.3" or "mixed" (each switch's is in [`ShowSwitch::of`]).
    pub of: String,
    /// `OpenFlow10`, `OpenFlow13`, or for a mixed lab `OpenFlow10,OpenFlow13` (for
    /// `ovs-ofctl -O`).
    pub of_protocol: String,
    pub controller: String,
    /// Whether `up` finished building it.
    pub complete: bool,
    /// Whether the lab's switches run (its ovs-vswitchd, or any of its Pharos switches).
    pub running: bool,
    /// `ovs` (Open vSwitch) or `pharos` (`pharos switch`, one process per switch).
    pub switch: String,
    /// OpenFlow connections established by the lab's ovs-vswitchd to the controller.
    pub connected: usize,
    pub switches: Vec<ShowSwitch>,
    pub links: Vec<ShowLink>,
    pub hosts: Vec<ShowHost>,
    /// Probe interfaces standing in for the hosts (`up --probe`).
    pub probes: Vec<ProbePort>,
    /// The OpenFlow channel's TLS files, for a lab over TLS (`up --tls`).
    pub tls: Option<TlsFiles>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ShowSwitch {
    pub name: String,
    /// The Open vSwitch bridge, or for a Pharos switch the name `ovs-ofctl` reaches it by
    /// (its management socket is `BRIDGE.mgmt` in the lab directory, as a bridge's is).
    pub bridge: String,
    /// The printed form, `00:00:00:00:00:00:00:01` (as Pharos prints every dpid).
    pub dpid: String,
    /// The OpenFlow version it speaks: "1.0" or "1.3".
    pub of: String,
    pub ports: Vec<ShowPort>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ShowPort {
    pub port: u16,
    pub interface: String,
    /// `h1` or `s2`.
    pub peer: String,
    /// The peer's port (0 for a host).
    pub peer_port: u16,
}

#[derive(Debug, Clone, Serialize)]
pub struct ShowLink {
    pub a: String,
    pub port_a: u16,
    pub b: String,
    pub port_b: u16,
    pub interface_a: String,
    /// For a host, its interface inside its namespace.
    pub interface_b: String,
    /// Both ends up and carrier on.
    pub up: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ShowHost {
    pub name: String,
    pub netns: String,
    pub interface: String,
    pub ip: String,
    pub prefix_len: u8,
    pub mac: String,
    pub switch: String,
    pub port: u16,
}

impl fmt::Display for Show {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Connections are counted to a controller the switches connect to; a lab with no
        // controller, or whose switches listen, has none to count.
        let connected =
            if self.controller.starts_with("tcp:") || self.controller.starts_with("ssl:") {
                format!(
                    ", {}/{} switches connected",
                    self.connected,
                    self.switches.len()
                )
            } else {
                String::new()
            };
        writeln!(
            f,
            "{}: {}, OpenFlow {}, controller {}{connected}{}{}",
            title(&self.name),
            self.topo,
            self.of,
            self.controller,
            if self.complete {
                ""
            } else {
                " (INCOMPLETE: pharos lab down, then up again)"
            },
            match (self.running, self.switch.as_str()) {
                (true, _) => "",
                (false, "pharos") => " (Pharos switches NOT RUNNING)",
                (false, _) => " (ovs-vswitchd NOT RUNNING)",
            },
        )?;
        if self.switch == "pharos" {
            writeln!(
                f,
                "Pharos switches: one `pharos switch` each, logs {d}/sN.log; export OVS_RUNDIR={d}; \
                 ovs-ofctl -O {} dump-flows {}",
                self.of_protocol,
                self.switches.first().map(|s| s.bridge.as_str()).unwrap_or("BRIDGE"),
                d = self.dir.display(),
            )?;
        } else {
            writeln!(
                f,
                "OVS: export OVS_RUNDIR={d} OVS_LOGDIR={d} OVS_DBDIR={d}; ovs-ofctl -O {} dump-flows {}",
                self.of_protocol,
                self.switches.first().map(|s| s.bridge.as_str()).unwrap_or("BRIDGE"),
                d = self.dir.display(),
            )?;
        }
        if let Some(t) = &self.tls {
            writeln!(
                f,
                "TLS: switches' certificate {} (key {}), CA {}",
                t.switch_cert.display(),
                t.switch_key.display(),
                t.ca_cert.display()
            )?;
            if let Some(d) = &t.pki_dir {
                writeln!(
                    f,
                    "controller: pharos run --config {} (certificate {}, key {}, client_ca {})",
                    d.join(CONTROLLER_TOML).display(),
                    d.join(pki::CONTROLLER_CERT).display(),
                    d.join(pki::CONTROLLER_KEY).display(),
                    t.ca_cert.display()
                )?;
            }
        }
        writeln!(f, "switches:")?;
        for s in &self.switches {
            writeln!(
                f,
                "  {:<5} bridge {:<12} dpid {}  OpenFlow {}",
                s.name, s.bridge, s.dpid, s.of
            )?;
            for p in &s.ports {
                let peer = if p.peer.starts_with('h') {
                    p.peer.clone()
                } else {
                    format!("{}:{}", p.peer, p.peer_port)
                };
                writeln!(f, "    port {:<3} {:<16} -> {peer}", p.port, p.interface)?;
            }
        }
        writeln!(f, "links:")?;
        for l in &self.links {
            let a = format!("{}:{}", l.a, l.port_a);
            let b = if l.b.starts_with('h') {
                l.b.clone()
            } else {
                format!("{}:{}", l.b, l.port_b)
            };
            writeln!(
                f,
                "  {a:<9} <-> {b:<9} {:<4} ({} <-> {})",
                if l.up { "up" } else { "DOWN" },
                l.interface_a,
                l.interface_b
            )?;
        }
        if !self.probes.is_empty() {
            writeln!(f, "probes (root namespace, for pharos bench switch):")?;
            for p in &self.probes {
                writeln!(
                    f,
                    "  {:<5} {:<15} {}  on {}:{}",
                    p.name, p.interface, p.mac, p.switch, p.port
                )?;
            }
            return Ok(());
        }
        writeln!(f, "hosts:")?;
        for h in &self.hosts {
            writeln!(
                f,
                "  {:<5} {:<15} {}  on {}:{}  (netns {}, {})",
                h.name,
                format!("{}/{}", h.ip, h.prefix_len),
                h.mac,
                h.switch,
                h.port,
                h.netns,
                h.interface
            )?;
        }
        Ok(())
    }
}

/// A lab found in the lab directory.
#[derive(Debug, Clone, Serialize)]
pub struct ListEntry {
    pub name: String,
    pub dir: PathBuf,
    pub topo: String,
    pub of: String,
    pub controller: String,
    pub complete: bool,
    pub running: bool,
}

/// The labs in `dir` (each subdirectory with a `state.json`), by name.
pub fn list(dir: &Path) -> Result<Vec<ListEntry>, LabError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(LabError::io(format!("read {}", dir.display()), e)),
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let path = resolve(&e.path());
        let Ok(Some(state)) = State::load(&path) else {
            continue;
        };
        let running = state
            .daemons
            .iter()
            .filter(|d| d.name == "ovs-vswitchd" || d.name == PHAROS_SWITCH_COMM)
            .any(|d| daemon_pid(&path, d).is_some());
        out.push(ListEntry {
            name: state.name,
            dir: path,
            topo: state.topo,
            of: state.of,
            controller: state.controller,
            complete: state.complete,
            running,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
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

    /// Removes everything lab `name` in `dir` created, from its `state.json`, whole or
    /// partial. Idempotent: no lab is not an error.
    pub fn down(name: &str, dir: &Path) -> Result<DownReport, LabError> {
        Lab::down_verbose(name, dir, false)
    }

    /// [`Lab::down`], printing the commands it runs.
    pub fn down_verbose(name: &str, dir: &Path, verbose: bool) -> Result<DownReport, LabError> {
        validate_lab_name(name)?;
        let lab_dir = resolve(&dir.join(name));
        let Some(state) = State::load(&lab_dir)? else {
            return Ok(DownReport {
                name: name.to_string(),
                ..DownReport::default()
            });
        };
        let tools = Tools::get()?;
        teardown(&lab_dir, &state, &tools, verbose)
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

    /// The probe interfaces (empty unless made with [`LabOptions::probe`]), by host number.
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

    pub fn is_complete(&self) -> bool {
        self.state.complete
    }

    fn ovs_env(&self, c: Cmd) -> Cmd {
        c.env("OVS_RUNDIR", &self.dir)
            .env("OVS_LOGDIR", &self.dir)
            .env("OVS_DBDIR", &self.dir)
    }

    fn vsctl(&self) -> Cmd {
        vsctl(&self.tools, &self.dir)
    }

    fn ip(&self) -> Cmd {
        Cmd::new(&self.tools.ip)
    }

    fn run(&self, c: Cmd) -> Result<cmd::Output, LabError> {
        c.run(self.verbose)
    }

    fn save(&self) -> Result<(), LabError> {
        self.state.save(&self.dir)
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

    /// The root-namespace veth ends, in link order.
    fn root_veths(&self) -> Vec<String> {
        let mut v = Vec::new();
        for l in &self.topo.links {
            v.extend(self.names.root_iface(l.a, l.port_a));
            v.extend(self.names.root_iface(l.b, l.port_b));
        }
        v
    }

    fn build(&mut self, tls: Option<&LabTls>) -> Result<(), LabError> {
        if let Some(tls) = tls {
            self.state.tls = Some(self.prepare_tls(tls)?);
            self.save()?;
        }
        if self.state.pharos_switch.is_some() {
            return self.build_pharos();
        }
        self.start_daemons()?;
        if let Some(t) = &self.state.tls {
            // One certificate for every switch: Open vSwitch has one SSL configuration
            // per ovs-vswitchd, used by every `ssl:` controller connection.
            self.run(
                self.vsctl()
                    .arg("set-ssl")
                    .arg(&t.switch_key)
                    .arg(&t.switch_cert)
                    .arg(&t.ca_cert)
                    .label("ovs-vsctl set-ssl"),
            )?;
        }
        self.make_hosts_and_links()?;
        self.make_bridges()?;
        self.state.complete = true;
        self.save()
    }

    /// The lab's TLS files: a new PKI in `pki/` (with the controller's listen entry in
    /// `pki/controller.toml`), or the files given, checked readable.
    fn prepare_tls(&self, tls: &LabTls) -> Result<TlsFiles, LabError> {
        match tls {
            LabTls::Generate => {
                let addr = controller_addr(&self.state.controller)?;
                let ip = addr.ip().to_string();
                let mut names: Vec<&str> = pki::DEFAULT_CONTROLLER_NAMES.to_vec();
                if !names.contains(&ip.as_str()) {
                    names.push(&ip);
                }
                let dir = self.dir.join("pki");
                let p = pki::Pki::create(&dir, &names)?;
                let toml = dir.join(CONTROLLER_TOML);
                let listen = if addr.ip().is_loopback() || addr.ip().is_unspecified() {
                    addr
                } else {
                    // The controller listens on every address; its switches reach it here.
                    std::net::SocketAddr::new(std::net::Ipv4Addr::UNSPECIFIED.into(), addr.port())
                };
                let text = format!(
                    "# The OpenFlow listener for {}: pharos run --config {}\n{}",
                    title(&self.state.name),
                    toml.display(),
                    p.listen_toml(listen)
                );
                fs::write(&toml, text)
                    .map_err(|e| LabError::io(format!("write {}", toml.display()), e))?;
                Ok(TlsFiles {
                    ca_cert: p.ca_cert,
                    switch_cert: p.switch_cert,
                    switch_key: p.switch_key,
                    pki_dir: Some(dir),
                })
            }
            LabTls::Files { ca_cert, cert, key } => {
                let check = |what: &str, p: &Path| -> Result<PathBuf, LabError> {
                    let text = fs::read_to_string(p).map_err(|e| {
                        LabError::Invalid(format!("cannot read {what} {}: {e}", p.display()))
                    })?;
                    if !text.contains("-----BEGIN ") {
                        return Err(LabError::Invalid(format!(
                            "{what} {} is not PEM (no -----BEGIN line)",
                            p.display()
                        )));
                    }
                    fs::canonicalize(p)
                        .map_err(|e| LabError::io(format!("resolve {}", p.display()), e))
                };
                Ok(TlsFiles {
                    ca_cert: check("the CA certificate (--tls-ca)", ca_cert)?,
                    switch_cert: check("the switches' certificate (--tls-cert)", cert)?,
                    switch_key: check("the switches' key (--tls-key)", key)?,
                    pki_dir: None,
                })
            }
        }
    }

    /// The TLS files of a lab over TLS.
    pub fn tls(&self) -> Option<&TlsFiles> {
        self.state.tls.as_ref()
    }

    fn start_daemons(&mut self) -> Result<(), LabError> {
        let d = self.dir.clone();
        self.state.daemons = ["ovsdb-server", "ovs-vswitchd"]
            .iter()
            .map(|n| Daemon {
                name: n.to_string(),
                pidfile: d.join(format!("{n}.pid")),
            })
            .collect();
        self.save()?;
        let db = d.join("conf.db");
        // A database left by an earlier lab of this name (whose state.json is gone).
        let _ = fs::remove_file(&db);
        self.run(
            self.ovs_env(Cmd::new(&self.tools.ovsdb_tool))
                .arg("create")
                .arg(&db)
                .arg(&self.tools.schema),
        )?;
        let sock = d.join("db.sock");
        let mut remote = std::ffi::OsString::from("--remote=punix:");
        remote.push(&sock);
        self.run(
            self.ovs_env(Cmd::new(&self.tools.ovsdb_server))
                .arg(&db)
                .arg(remote)
                .arg(flag_path("--pidfile=", &d.join("ovsdb-server.pid")))
                .arg(flag_path("--log-file=", &d.join("ovsdb-server.log")))
                .args(["--detach", "--no-chdir", "-vconsole:off"])
                .label("ovsdb-server"),
        )?;
        self.run(self.vsctl().arg("--no-wait").arg("init"))?;
        let mut unix = std::ffi::OsString::from("unix:");
        unix.push(&sock);
        self.run(
            self.ovs_env(Cmd::new(&self.tools.vswitchd))
                .arg(unix)
                .arg(flag_path("--pidfile=", &d.join("ovs-vswitchd.pid")))
                .arg(flag_path("--log-file=", &d.join("ovs-vswitchd.log")))
                // The `dummy` datapath type: the userspace datapath without a kernel tap
                // (see the crate doc).
                .args(["--enable-dummy", "--detach", "--no-chdir", "-vconsole:off"])
                .label("ovs-vswitchd"),
        )?;
        Ok(())
    }

    fn make_namespaces(&mut self) -> Result<(), LabError> {
        if self.topo.hosts.is_empty() {
            return Ok(());
        }
        let nss: Vec<String> = self
            .topo
            .hosts
            .iter()
            .map(|h| self.names.netns(h.num))
            .collect();
        self.state.netns = nss.clone();
        self.state.etc_netns = nss.iter().map(|n| etc_netns(n)).collect();
        self.save()?;
        let batch: String = nss.iter().map(|n| format!("netns add {n}\n")).collect();
        self.run(
            self.ip()
                .args(["-batch", "-"])
                .stdin(batch)
                .timeout(batch_timeout(nss.len()))
                .label("ip netns add"),
        )?;
        // /etc/netns/NS/hosts: `ip netns exec` shows it as /etc/hosts, so names resolve.
        let mut hosts = String::from("127.0.0.1\tlocalhost\n");
        for h in &self.topo.hosts {
            hosts.push_str(&format!("{}\t{}\n", h.ip, h.name()));
        }
        for d in &self.state.etc_netns {
            fs::create_dir_all(d)
                .map_err(|e| LabError::io(format!("create {}", d.display()), e))?;
            let f = d.join("hosts");
            fs::write(&f, &hosts).map_err(|e| LabError::io(format!("write {}", f.display()), e))?;
        }
        Ok(())
    }

    fn make_veths(&mut self) -> Result<(), LabError> {
        let roots = self.root_veths();
        if roots.is_empty() {
            return Ok(());
        }
        self.state.veths = self
            .topo
            .links
            .iter()
            .filter_map(|l| self.names.root_iface(l.a, l.port_a))
            .collect();
        if self.state.probe {
            self.state.probes = self
                .topo
                .hosts
                .iter()
                .map(|h| self.names.probe_iface(h.num))
                .collect();
        }
        self.save()?;
        let mut batch = String::new();
        for l in &self.topo.links {
            let a = self.names.root_iface(l.a, l.port_a).expect("a is a switch");
            match l.b {
                Node::Host(h) if self.state.probe => {
                    let host = self.topo.host(h).expect("host of a link");
                    batch.push_str(&format!(
                        "link add {a} type veth peer name {} address {}\n",
                        self.names.probe_iface(h),
                        host.mac_string(),
                    ));
                }
                Node::Host(h) => {
                    let host = self.topo.host(h).expect("host of a link");
                    batch.push_str(&format!(
                        "link add {a} type veth peer name {} address {} netns {}\n",
                        Names::host_iface(h),
                        host.mac_string(),
                        self.names.netns(h)
                    ));
                }
                Node::Switch(_) => {
                    let b = self.names.root_iface(l.b, l.port_b).expect("b is a switch");
                    batch.push_str(&format!("link add {a} type veth peer name {b}\n"));
                }
            }
        }
        self.run(
            self.ip()
                .args(["-batch", "-"])
                .stdin(batch)
                .timeout(batch_timeout(self.topo.links.len()))
                .label("ip link add (veths)"),
        )?;
        // No IPv6 on the switch side: the kernel would send router solicitations and MLD
        // reports into the switches, which the controller would see.
        for v in &roots {
            disable_ipv6(v);
        }
        let batch: String = roots.iter().map(|v| format!("link set {v} up\n")).collect();
        self.run(
            self.ip()
                .args(["-batch", "-"])
                .stdin(batch)
                .timeout(batch_timeout(roots.len()))
                .label("ip link set up (veths)"),
        )?;
        Ok(())
    }

    fn configure_hosts(&self) -> Result<(), LabError> {
        let hosts = &self.topo.hosts;
        if hosts.is_empty() {
            return Ok(());
        }
        let threads = hosts.len().clamp(1, 4);
        let chunk = hosts.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = hosts
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || -> Result<(), LabError> {
                        for h in part {
                            self.configure_host(h)?;
                        }
                        Ok(())
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap_or_else(|_| {
                    Err(LabError::Other("host setup thread panicked".into()))
                })?;
            }
            Ok(())
        })
    }

    /// The probe ends: IPv6 off (no router solicitations into the switch), up, transmit
    /// checksum offload off (as a host's: the userspace datapath drops TCP and UDP with
    /// offloaded checksums).
    fn configure_probes(&self) -> Result<(), LabError> {
        let mut batch = String::new();
        for pb in &self.state.probes {
            disable_ipv6(pb);
            batch.push_str(&format!("link set {pb} up\n"));
        }
        if batch.is_empty() {
            return Ok(());
        }
        self.run(
            self.ip()
                .args(["-batch", "-"])
                .stdin(batch)
                .timeout(batch_timeout(self.state.probes.len()))
                .label("ip link set up (probes)"),
        )?;
        for pb in &self.state.probes {
            self.run(
                Cmd::new(&self.tools.ethtool)
                    .args(["-K", pb, "tx", "off"])
                    .label(format!("ethtool -K {pb} tx off")),
            )?;
        }
        Ok(())
    }

    /// Inside the host's namespace: IPv6 off, loopback up, the address, the interface up,
    /// and transmit checksum offload off (REQUIRED: TCP and UDP die on the userspace
    /// datapath otherwise).
    fn configure_host(&self, h: &topo::Host) -> Result<(), LabError> {
        let iface = Names::host_iface(h.num);
        let ip = self.tools.ip.display();
        let script = format!(
            "set -e\n\
             for f in all default; do\n\
               p=/proc/sys/net/ipv6/conf/$f/disable_ipv6\n\
               if [ -w $p ]; then echo 1 > $p; fi\n\
             done\n\
             {ip} link set lo up\n\
             {ip} addr add {}/{} dev {iface}\n\
             {ip} link set {iface} up\n\
             {} -K {iface} tx off > /dev/null\n",
            h.ip,
            h.prefix_len,
            self.tools.ethtool.display(),
        );
        self.run(
            self.ip()
                .args(["netns", "exec"])
                .arg(self.names.netns(h.num))
                .args(["/bin/sh", "-c"])
                .arg(script)
                .label(format!(
                    "setting up host {} (netns {})",
                    h.name(),
                    self.names.netns(h.num)
                )),
        )?;
        Ok(())
    }

    /// `ovs-vsctl add-br` of switch `num` with its ports and controller, one transaction.
    fn bridge_cmd(&self, num: u32) -> Cmd {
        let s = self.topo.switch(num).expect("switch exists");
        let br = self.names.bridge(num);
        let mut c = self.vsctl().args([
            "--".to_string(),
            "add-br".into(),
            br.clone(),
            "--".into(),
            "set".into(),
            "bridge".into(),
            br.clone(),
            "datapath_type=dummy".into(),
            "fail_mode=secure".into(),
            format!("protocols={}", self.of.for_switch(num).ovs_protocol()),
            format!("other-config:datapath-id={:016x}", s.dpid),
            "other-config:disable-in-band=true".into(),
        ]);
        let target = ControlTarget::parse(&self.state.controller)
            .ok()
            .and_then(|t| t.ovs_target(&self.state.controller, num));
        if let Some(target) = target {
            c = c.args([
                "--".to_string(),
                "set-controller".into(),
                br.clone(),
                target,
                // Retry a missing controller every second rather than backing off to 8 s: a
                // controller started (or restarted) late is picked up within about a second.
                "--".into(),
                "set".into(),
                "controller".into(),
                br.clone(),
                format!("max_backoff={MAX_BACKOFF_MS}"),
            ]);
        }
        for (port, _, _) in self.topo.ports(num) {
            let iface = self.names.switch_iface(num, port);
            c = c.args([
                "--".to_string(),
                "add-port".into(),
                br.clone(),
                iface.clone(),
                "--".into(),
                "set".into(),
                "interface".into(),
                iface,
                format!("ofport_request={port}"),
            ]);
        }
        c.label(format!("ovs-vsctl add-br {br}"))
    }

    fn make_bridges(&mut self) -> Result<(), LabError> {
        self.state.bridges = self
            .topo
            .switches
            .iter()
            .map(|s| self.names.bridge(s.num))
            .collect();
        self.save()?;
        for s in &self.topo.switches {
            self.run(self.bridge_cmd(s.num))?;
        }
        self.check_interfaces(None)
    }

    /// The hosts (namespaces) or the probe interfaces, and every veth: the same for
    /// either kind of switch.
    fn make_hosts_and_links(&mut self) -> Result<(), LabError> {
        if self.state.probe {
            self.make_veths()?;
            self.configure_probes()
        } else {
            self.make_namespaces()?;
            self.make_veths()?;
            self.configure_hosts()
        }
    }

    /// A lab of Pharos switches: hosts (or probes) and veths as for Open vSwitch, then one
    /// `pharos switch` per switch instead of the daemons and bridges.
    fn build_pharos(&mut self) -> Result<(), LabError> {
        self.make_hosts_and_links()?;
        let nums: Vec<u32> = self.topo.switches.iter().map(|s| s.num).collect();
        // Intent first: `down` stops every switch recorded, whichever were started.
        self.state.daemons = nums
            .iter()
            .map(|&n| Daemon {
                name: PHAROS_SWITCH_COMM.into(),
                pidfile: self.pharos_pidfile(n),
            })
            .collect();
        self.save()?;
        for &n in &nums {
            self.spawn_pharos_switch(n)?;
        }
        self.wait_pharos_switches(&nums)?;
        self.state.complete = true;
        self.save()
    }

    fn pharos_pidfile(&self, num: u32) -> PathBuf {
        self.dir.join(format!("s{num}.pid"))
    }

    fn pharos_log(&self, num: u32) -> PathBuf {
        self.dir.join(format!("s{num}.log"))
    }

    /// The pid of Pharos switch `num`, if it runs.
    fn pharos_switch_pid(&self, num: u32) -> Option<i32> {
        daemon_pid(
            &self.dir,
            &Daemon {
                name: PHAROS_SWITCH_COMM.into(),
                pidfile: self.pharos_pidfile(num),
            },
        )
    }

    /// The command line of Pharos switch `num`: its datapath id, its ports (numbered as
    /// Open vSwitch's would be), the controller and its OpenFlow version.
    fn pharos_switch_args(&self, num: u32) -> Vec<std::ffi::OsString> {
        let s = self.topo.switch(num).expect("switch exists");
        let mut args: Vec<std::ffi::OsString> = vec![
            "switch".into(),
            "--name".into(),
            format!("{}-s{num}", self.state.name).into(),
            "--dpid".into(),
            openflow::Dpid(s.dpid).to_string().into(),
            "--of".into(),
            self.of.for_switch(num).as_str().into(),
            "--pidfile".into(),
            self.pharos_pidfile(num).into(),
            // Where Open vSwitch's bridge has its management socket, so that
            // `ovs-ofctl dump-flows BRIDGE` with OVS_RUNDIR set to the lab directory
            // reaches either kind of switch.
            "--listen".into(),
            {
                let mut l = std::ffi::OsString::from("punix:");
                l.push(self.dir.join(format!("{}.mgmt", self.names.bridge(num))));
                l
            },
        ];
        if let Some(target) = self
            .control_target()
            .ovs_target(&self.state.controller, num)
        {
            // The same targets Open vSwitch is given: tcp:HOST:PORT, or ptcp:PORT:IP for
            // switch sN to wait for its controller on.
            args.push("--controller".into());
            args.push(target.into());
        }
        if let Some(t) = &self.state.tls {
            // The files Open vSwitch is given with set-ssl: one certificate for all.
            for (flag, file) in [
                ("--private-key", &t.switch_key),
                ("--certificate", &t.switch_cert),
                ("--ca-cert", &t.ca_cert),
            ] {
                args.push(flag.into());
                args.push(file.into());
            }
        }
        if let Some(d) = &self.state.pharos_datapath {
            args.push("--datapath".into());
            args.push(d.into());
        }
        for (port, _, _) in self.topo.ports(num) {
            args.push("--port".into());
            args.push(format!("{port}={}", self.names.switch_iface(num, port)).into());
        }
        args
    }

    /// Starts Pharos switch `num` in the background (its own process group, so a Ctrl-C
    /// of `pharos lab up` does not reach it), its output appended to `sN.log`.
    fn spawn_pharos_switch(&self, num: u32) -> Result<(), LabError> {
        use std::os::unix::process::CommandExt as _;
        let exe = self
            .state
            .pharos_switch
            .clone()
            .ok_or_else(|| LabError::Other("not a lab of Pharos switches".into()))?;
        let log_path = self.pharos_log(num);
        let open_log = || {
            fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&log_path)
                .map_err(|e| LabError::io(format!("open {}", log_path.display()), e))
        };
        let (out, err) = (open_log()?, open_log()?);
        let _ = fs::remove_file(self.pharos_pidfile(num));
        let args = self.pharos_switch_args(num);
        if self.verbose {
            let line: Vec<String> = args.iter().map(|a| a.to_string_lossy().into()).collect();
            eprintln!("+ {} {} &", exe.display(), line.join(" "));
        }
        let child = std::process::Command::new(&exe)
            .args(&args)
            .stdin(std::process::Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .map_err(|e| LabError::io(format!("start {} switch", exe.display()), e))?;
        // Not waited for: the switch outlives `pharos lab up`, and is stopped by its pid.
        drop(child);
        Ok(())
    }

    /// Waits for each of switches `nums` to write its pid file (which it does once its
    /// ports are open); an error with the end of its log if one exits or takes too long.
    fn wait_pharos_switches(&self, nums: &[u32]) -> Result<(), LabError> {
        let deadline = Instant::now() + Duration::from_secs(10);
        for &n in nums {
            loop {
                if self.pharos_switch_pid(n).is_some() {
                    break;
                }
                if Instant::now() >= deadline {
                    let log = fs::read_to_string(self.pharos_log(n)).unwrap_or_default();
                    let tail: Vec<&str> = log.lines().rev().take(8).collect();
                    let tail: Vec<&str> = tail.into_iter().rev().collect();
                    return Err(LabError::Other(format!(
                        "Pharos switch s{n} did not start (no live pid in {} within 10 s); \
                         the end of {}:\n{}",
                        self.pharos_pidfile(n).display(),
                        self.pharos_log(n).display(),
                        tail.join("\n")
                    )));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Ok(())
    }

    /// Stops Pharos switch `num` if it runs.
    fn stop_pharos_switch(&self, num: u32) -> Result<(), LabError> {
        if let Some(pid) = self.pharos_switch_pid(num) {
            if self.verbose {
                eprintln!("+ kill {pid} (s{num})");
            }
            if !stop_pid(pid, Duration::from_secs(3)) {
                return Err(LabError::Other(format!(
                    "Pharos switch s{num} (pid {pid}) did not stop"
                )));
            }
        }
        let _ = fs::remove_file(self.pharos_pidfile(num));
        Ok(())
    }

    /// Checks that every port of the lab's bridges (or of one) came up with the port number
    /// asked for: ovs-vsctl succeeds even when a bridge or port fails to come up.
    fn check_interfaces(&self, only: Option<u32>) -> Result<(), LabError> {
        let out = self.run(self.vsctl().args([
            "--format=json",
            "--data=json",
            "--columns=name,ofport,error",
            "list",
            "Interface",
        ]))?;
        let table: serde_json::Value = serde_json::from_str(&out.stdout).map_err(|e| {
            LabError::Other(format!("ovs-vsctl list Interface: unreadable JSON: {e}"))
        })?;
        let mut seen: BTreeMap<String, (i64, Option<String>)> = BTreeMap::new();
        for row in table["data"].as_array().into_iter().flatten() {
            let name = row[0].as_str().unwrap_or_default().to_string();
            let ofport = row[1].as_i64().unwrap_or(-1);
            // A set column: ["set", []] when empty, or the string.
            let error = row[2].as_str().map(str::to_string);
            seen.insert(name, (ofport, error));
        }
        let switches: Vec<u32> = match only {
            Some(n) => vec![n],
            None => self.topo.switches.iter().map(|s| s.num).collect(),
        };
        for n in switches {
            let br = self.names.bridge(n);
            let mut want = vec![(br.clone(), 65534i64)];
            want.extend(
                self.topo
                    .ports(n)
                    .into_iter()
                    .map(|(p, _, _)| (self.names.switch_iface(n, p), i64::from(p))),
            );
            for (iface, port) in want {
                match seen.get(&iface) {
                    Some((got, None)) if *got == port => {}
                    Some((got, err)) => {
                        return Err(LabError::Other(format!(
                            "Open vSwitch did not bring up {iface} on {br} as port {port} (port \
                             {got}{}){}",
                            err.as_ref()
                                .map(|e| format!(", error: {e}"))
                                .unwrap_or_default(),
                            self.vswitchd_says()
                        )))
                    }
                    None => {
                        return Err(LabError::Other(format!(
                            "Open vSwitch has no interface {iface} on {br}{}",
                            self.vswitchd_says()
                        )))
                    }
                }
            }
        }
        Ok(())
    }

    /// The last warnings and errors of the lab's ovs-vswitchd log, for an error message
    /// (the log goes when the failed lab is removed), with a hint for the known causes.
    fn vswitchd_says(&self) -> String {
        let log = fs::read_to_string(self.dir.join("ovs-vswitchd.log")).unwrap_or_default();
        let lines: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("|WARN|") || l.contains("|ERR|"))
            .map(|l| l.splitn(4, '|').nth(3).unwrap_or(l))
            .collect();
        let mut out = String::new();
        if !lines.is_empty() {
            let tail = &lines[lines.len().saturating_sub(3)..];
            out = format!("; ovs-vswitchd says: {}", tail.join("; "));
        }
        out
    }

    fn vswitchd_pid(&self) -> Option<i32> {
        self.state
            .daemons
            .iter()
            .find(|d| d.name == "ovs-vswitchd")
            .and_then(|d| daemon_pid(&self.dir, d))
    }

    /// OpenFlow connections established by this lab's ovs-vswitchd to the controller's
    /// port, right now (read from /proc: the database's `is_connected` lags by seconds).
    pub fn connections(&self) -> usize {
        let Ok(port) = parse_controller(&self.state.controller) else {
            return 0;
        };
        if self.state.pharos_switch.is_some() {
            return self
                .topo
                .switches
                .iter()
                .filter_map(|s| self.pharos_switch_pid(s.num))
                .map(|pid| established_to_port(pid, port))
                .sum();
        }
        let Some(pid) = self.vswitchd_pid() else {
            return 0;
        };
        established_to_port(pid, port)
    }

    /// Whether the lab's switches run: its ovs-vswitchd, or any of its Pharos switches.
    pub fn running(&self) -> bool {
        if self.state.pharos_switch.is_some() {
            return self
                .topo
                .switches
                .iter()
                .any(|s| self.pharos_switch_pid(s.num).is_some());
        }
        self.vswitchd_pid().is_some()
    }

    /// Which switches the lab runs.
    pub fn switch_kind(&self) -> SwitchKind {
        match &self.state.pharos_switch {
            Some(exe) => SwitchKind::Pharos {
                exe: exe.clone(),
                datapath: self.state.pharos_datapath.clone(),
            },
            None => SwitchKind::Ovs,
        }
    }

    /// Waits until every switch has its OpenFlow connection or `timeout` passes; returns
    /// how many are connected.
    pub fn wait_connected(&self, timeout: Duration) -> usize {
        let deadline = Instant::now() + timeout;
        let want = self.topo.switches.len();
        loop {
            let n = self.connections();
            if n >= want || Instant::now() >= deadline {
                return n;
            }
            // Reading /proc/PID/net/tcp costs milliseconds of CPU on a machine with many
            // sockets: poll gently (a switch connects within ~25 ms of set-controller).
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn host_of(&self, name: &str) -> Result<&topo::Host, LabError> {
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

    fn node_of(&self, name: &str) -> Result<Node, LabError> {
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

    /// `count` pings from host `a` to host `b` (0.2 s apart), each waiting up to `timeout`.
    pub fn ping(
        &self,
        a: &str,
        b: &str,
        count: u32,
        timeout: Duration,
    ) -> Result<PingResult, LabError> {
        let from = self.host_of(a)?;
        let to = self.host_of(b)?;
        let count = count.max(1);
        let wait = timeout.as_secs_f64().max(0.001);
        let c = self
            .ip()
            .args(["netns", "exec"])
            .arg(self.names.netns(from.num))
            .arg(&self.tools.ping)
            .args([
                "-n".to_string(),
                "-q".into(),
                "-c".into(),
                count.to_string(),
                "-i".into(),
                "0.2".into(),
                "-W".into(),
                format!("{wait:.3}"),
                to.ip.to_string(),
            ])
            .timeout(
                timeout + Duration::from_millis(200 * u64::from(count)) + Duration::from_secs(5),
            )
            .label(format!("ping {a} -> {b}"));
        let out = c.output(self.verbose)?;
        let (transmitted, received) = match parse_ping_counts(&out.stdout) {
            Some(counts) => counts,
            // ping could not send at all ("connect: Network is unreachable" when the host's
            // link is down): nothing came back, which is a result, not an error.
            None if ping_refused(&out.stderr) => (count, 0),
            None => return Err(c.failed(&out)),
        };
        let output = if out.stdout.trim().is_empty() {
            out.stderr
        } else {
            out.stdout
        };
        Ok(PingResult {
            from: from.name(),
            to: to.name(),
            transmitted,
            received,
            rtt_avg_ms: parse_ping_avg(&output),
            output,
        })
    }

    /// One ping for every ordered pair of hosts, each waiting up to `timeout`; hosts ping
    /// in parallel (each its destinations in order), the matrix comes back in host order.
    pub fn pingall(&self, timeout: Duration) -> Result<PingAll, LabError> {
        let hosts: Vec<String> = self.topo.hosts.iter().map(|h| h.name()).collect();
        let threads = hosts.len().clamp(1, 8);
        let chunk = hosts.len().div_ceil(threads).max(1);
        let rows: Vec<Result<PingRow, LabError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = hosts
                .chunks(chunk)
                .map(|part| {
                    let hosts = &hosts;
                    scope.spawn(move || {
                        part.iter()
                            .map(|from| {
                                let mut to = Vec::new();
                                for dst in hosts.iter().filter(|d| *d != from) {
                                    let r = self.ping(from, dst, 1, timeout)?;
                                    to.push((dst.clone(), r.ok()));
                                }
                                Ok(PingRow {
                                    from: from.clone(),
                                    to,
                                })
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| {
                    h.join().unwrap_or_else(|_| {
                        vec![Err(LabError::Other("ping thread panicked".into()))]
                    })
                })
                .collect()
        });
        let rows = rows.into_iter().collect::<Result<Vec<_>, _>>()?;
        let sent = rows.iter().map(|r| r.to.len()).sum();
        let received = rows
            .iter()
            .map(|r| r.to.iter().filter(|t| t.1).count())
            .sum();
        Ok(PingAll {
            rows,
            sent,
            received,
        })
    }

    /// Runs `argv` in host `host`'s namespace (`ip netns exec`), standard input, output and
    /// error inherited; its exit status.
    pub fn exec(&self, host: &str, argv: &[String]) -> Result<ExitStatus, LabError> {
        let h = self.host_of(host)?;
        if argv.is_empty() {
            return Err(LabError::Invalid(
                "no command to run (pharos lab exec h1 -- ping -c1 h2)".into(),
            ));
        }
        let ns = self.names.netns(h.num);
        if !netns_exists(&ns) {
            return Err(LabError::Other(format!(
                "the namespace {ns} of {host} does not exist (is the lab complete? pharos lab show)"
            )));
        }
        std::process::Command::new(&self.tools.ip)
            .args(["netns", "exec", &ns])
            .args(argv)
            .status()
            .map_err(|e| LabError::io(format!("run ip netns exec {ns}"), e))
    }

    fn find_link(&self, a: &str, b: &str) -> Result<Link, LabError> {
        let x = self.node_of(a)?;
        let y = self.node_of(b)?;
        if let Some(l) = self.topo.links.iter().find(|l| l.joins(x, y)) {
            return Ok(*l);
        }
        let peers = |n: Node| -> String {
            let mut v: Vec<String> = self
                .topo
                .links
                .iter()
                .filter_map(|l| {
                    if l.a == n {
                        Some(l.b.to_string())
                    } else if l.b == n {
                        Some(l.a.to_string())
                    } else {
                        None
                    }
                })
                .collect();
            v.dedup();
            v.join(", ")
        };
        Err(LabError::Invalid(format!(
            "no link between {a} and {b} in {} ({a} links to {})",
            self.topo.spec,
            peers(x)
        )))
    }

    /// Sets both ends of the link between `a` and `b` up or down.
    pub fn set_link(&self, a: &str, b: &str, up: bool) -> Result<(), LabError> {
        let l = self.find_link(a, b)?;
        let state = if up { "up" } else { "down" };
        let mut batch = String::new();
        for (n, p) in [(l.a, l.port_a), (l.b, l.port_b)] {
            if let Some(i) = self.names.root_iface(n, p) {
                batch.push_str(&format!("link set {i} {state}\n"));
            }
        }
        self.run(
            self.ip()
                .args(["-batch", "-"])
                .stdin(batch)
                .label(format!("ip link set {state} ({a}-{b})")),
        )?;
        if let Node::Host(h) = l.b {
            self.run(self.ip().arg("-n").arg(self.names.netns(h)).args([
                "link",
                "set",
                &Names::host_iface(h),
                state,
            ]))?;
        }
        Ok(())
    }

    /// Deletes switch `s`'s bridge and creates it again with the same datapath id, ports
    /// and controller (the controller sees the switch leave and come back).
    pub fn restart_switch(&self, s: &str) -> Result<(), LabError> {
        let num = match self.node_of(s)? {
            Node::Switch(n) => n,
            Node::Host(_) => {
                return Err(LabError::Invalid(format!(
                    "{s} is a host; restart takes a switch ({})",
                    span("s", self.topo.switches.len())
                )))
            }
        };
        if self.state.pharos_switch.is_some() {
            self.stop_pharos_switch(num)?;
            self.spawn_pharos_switch(num)?;
            return self.wait_pharos_switches(&[num]);
        }
        if self.vswitchd_pid().is_none() {
            return Err(LabError::Other(format!(
                "the lab's ovs-vswitchd is not running (see {}); pharos lab down, then up",
                self.dir.join("ovs-vswitchd.log").display()
            )));
        }
        let br = self.names.bridge(num);
        self.run(
            self.vsctl()
                .args(["--if-exists", "del-br", &br])
                .label(format!("ovs-vsctl del-br {br}")),
        )?;
        self.run(self.bridge_cmd(num))?;
        self.check_interfaces(Some(num))
    }

    /// Moves host `host` to switch `switch`: unplugs it (its switch port is deleted, so the
    /// old switch reports the port gone) and plugs it into a new port of `switch`, numbered
    /// after that switch's highest, with the same MAC and IP address. Recorded in
    /// `state.json`, so `show` and later commands see the host where it is now, `restart`
    /// re-creates the new port, and `down` removes it. Returns the new port.
    pub fn move_host(&mut self, host: &str, switch: &str) -> Result<u16, LabError> {
        let h = self.host_of(host)?.num;
        let s = match self.node_of(switch)? {
            Node::Switch(n) => n,
            Node::Host(_) => {
                return Err(LabError::Invalid(format!(
                    "{switch} is a host; a host moves to a switch ({})",
                    span("s", self.topo.switches.len())
                )))
            }
        };
        let pharos = self.state.pharos_switch.is_some();
        if !pharos && self.vswitchd_pid().is_none() {
            return Err(LabError::Other(format!(
                "the lab's ovs-vswitchd is not running (see {}); pharos lab down, then up",
                self.dir.join("ovs-vswitchd.log").display()
            )));
        }
        let old = self.topo.host(h).expect("checked").clone();
        let mut topo = self.topo.clone();
        let port = topo.move_host(h, s)?;
        names::check(&self.names, &topo)?;
        let old_iface = self.names.switch_iface(old.switch, old.port);
        let new_iface = self.names.switch_iface(s, port);
        let ns = self.names.netns(h);
        // Intent first: `down` must find the new veth even if we stop half way.
        if !self.state.veths.contains(&new_iface) {
            self.state.veths.push(new_iface.clone());
            self.save()?;
        }
        // 1. Unplug: the port leaves the old bridge, the veth pair goes (its host end
        //    with it). A Pharos switch is stopped (its ports are fixed for its life) and
        //    started again with its new ports below.
        if pharos {
            self.stop_pharos_switch(old.switch)?;
            if s != old.switch {
                self.stop_pharos_switch(s)?;
            }
        }
        if !pharos {
            self.run(
                self.vsctl()
                    .args([
                        "--if-exists",
                        "del-port",
                        &self.names.bridge(old.switch),
                        &old_iface,
                    ])
                    .label(format!("ovs-vsctl del-port {old_iface}")),
            )?;
        }
        if iface_exists(&old_iface) {
            self.run(self.ip().args(["link", "del", &old_iface]))?;
        }
        // 2. A new veth pair: the host end keeps its name and MAC inside the namespace.
        let host = topo.host(h).expect("moved host").clone();
        self.run(
            self.ip()
                .args(["link", "add", &new_iface, "type", "veth", "peer", "name"])
                .arg(Names::host_iface(h))
                .args(["address", &host.mac_string(), "netns", &ns])
                .label(format!("ip link add {new_iface}")),
        )?;
        disable_ipv6(&new_iface);
        self.run(self.ip().args(["link", "set", &new_iface, "up"]))?;
        self.configure_host(&host)?;
        // 3. Plug it into the new switch on the new port.
        if pharos {
            self.topo = topo;
            self.state.moves.push(Move { host: h, switch: s });
            self.save()?;
            let mut restart = vec![old.switch];
            if s != old.switch {
                restart.push(s);
            }
            for &n in &restart {
                self.spawn_pharos_switch(n)?;
            }
            self.wait_pharos_switches(&restart)?;
            return Ok(port);
        }
        let br = self.names.bridge(s);
        self.run(
            self.vsctl()
                .args(["--", "add-port", &br, &new_iface])
                .args(["--", "set", "interface", &new_iface])
                .arg(format!("ofport_request={port}"))
                .label(format!("ovs-vsctl add-port {br} {new_iface}")),
        )?;
        self.topo = topo;
        self.state.moves.push(Move { host: h, switch: s });
        self.save()?;
        self.check_interfaces(Some(s))?;
        Ok(port)
    }

    /// The namespace and interface of host `host`.
    fn host_iface(&self, host: &str) -> Result<(String, String), LabError> {
        let h = self.host_of(host)?;
        let ns = self.names.netns(h.num);
        if !netns_exists(&ns) {
            return Err(LabError::Other(format!(
                "the namespace {ns} of {host} does not exist (is the lab complete? pharos lab show)"
            )));
        }
        Ok((ns, Names::host_iface(h.num)))
    }

    /// Sends `frame` (a whole Ethernet frame, no FCS) out of host `host`'s interface,
    /// `count` times `interval` apart, as the host would: a raw socket in its namespace.
    pub fn send_frame(
        &self,
        host: &str,
        frame: &[u8],
        count: u32,
        interval: Duration,
    ) -> Result<u32, LabError> {
        let (ns, iface) = self.host_iface(host)?;
        if self.verbose {
            eprintln!(
                "+ send {count} x {} bytes out of {iface} in {ns}",
                frame.len()
            );
        }
        frame::send(&ns, &iface, frame, count, interval)
    }

    /// Up to `count` frames arriving at host `host`'s interface (of EtherType `ethertype`
    /// if given) within `timeout`, in arrival order.
    pub fn recv_frames(
        &self,
        host: &str,
        ethertype: Option<u16>,
        count: usize,
        timeout: Duration,
    ) -> Result<Vec<Vec<u8>>, LabError> {
        let (ns, iface) = self.host_iface(host)?;
        frame::recv(&ns, &iface, ethertype, count, timeout)
    }

    /// The lab as it is: switches, ports, links (with their state now), hosts.
    pub fn show(&self) -> Show {
        let links_up = iface_states(&self.tools.ip);
        let d = self.dir.display().to_string();
        let env = ["OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR"]
            .iter()
            .map(|k| (k.to_string(), d.clone()))
            .collect();
        let switches = self
            .topo
            .switches
            .iter()
            .map(|s| ShowSwitch {
                name: s.name(),
                bridge: self.names.bridge(s.num),
                dpid: openflow::Dpid(s.dpid).to_string(),
                of: self.of.for_switch(s.num).as_str().into(),
                ports: self
                    .topo
                    .ports(s.num)
                    .into_iter()
                    .map(|(port, peer, peer_port)| ShowPort {
                        port,
                        interface: self.names.switch_iface(s.num, port),
                        peer: peer.to_string(),
                        peer_port,
                    })
                    .collect(),
            })
            .collect();
        let links = self
            .topo
            .links
            .iter()
            .map(|l| {
                let ia = self.names.root_iface(l.a, l.port_a).unwrap_or_default();
                let ib = match l.b {
                    Node::Host(h) if self.state.probe => self.names.probe_iface(h),
                    Node::Host(h) => Names::host_iface(h),
                    Node::Switch(_) => self.names.root_iface(l.b, l.port_b).unwrap_or_default(),
                };
                // A veth's carrier is on only when both ends are up, so the root end's
                // operational state tells for the pair.
                let up = links_up.get(&ia).copied().unwrap_or(false);
                ShowLink {
                    a: l.a.to_string(),
                    port_a: l.port_a,
                    b: l.b.to_string(),
                    port_b: l.port_b,
                    interface_a: ia,
                    interface_b: ib,
                    up,
                }
            })
            .collect();
        let probes = self.probes();
        let hosts = self
            .topo
            .hosts
            .iter()
            .filter(|_| !self.state.probe)
            .map(|h| ShowHost {
                name: h.name(),
                netns: self.names.netns(h.num),
                interface: Names::host_iface(h.num),
                ip: h.ip.to_string(),
                prefix_len: h.prefix_len,
                mac: h.mac_string(),
                switch: format!("s{}", h.switch),
                port: h.port,
            })
            .collect();
        Show {
            name: self.state.name.clone(),
            dir: self.dir.clone(),
            env,
            topo: self.topo.spec.clone(),
            of: self.of.as_str().into(),
            of_protocol: self.of.ovs_protocol().into(),
            controller: self.state.controller.clone(),
            complete: self.state.complete,
            running: self.running(),
            switch: if self.state.pharos_switch.is_some() {
                "pharos".into()
            } else {
                "ovs".into()
            },
            connected: self.connections(),
            switches,
            links,
            hosts,
            probes,
            tls: self.state.tls.clone(),
        }
    }
}

/// `p` made absolute and free of symbolic links when it exists: the daemons were started
/// with the absolute path, which is how their command lines are recognised.
fn resolve(p: &Path) -> PathBuf {
    fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn flag_path(flag: &str, p: &Path) -> std::ffi::OsString {
    let mut s = std::ffi::OsString::from(flag);
    s.push(p);
    s
}

fn vsctl(tools: &Tools, dir: &Path) -> Cmd {
    let mut db = std::ffi::OsString::from("--db=unix:");
    db.push(dir.join("db.sock"));
    Cmd::new(&tools.vsctl)
        .env("OVS_RUNDIR", dir)
        .env("OVS_LOGDIR", dir)
        .env("OVS_DBDIR", dir)
        .arg(db)
        .arg(format!("--timeout={VSCTL_TIMEOUT}"))
        .timeout(Duration::from_secs(VSCTL_TIMEOUT + 5))
}

/// A generous timeout for an `ip -batch` of `n` lines.
fn batch_timeout(n: usize) -> Duration {
    Duration::from_secs(10) + Duration::from_millis(50 * n as u64)
}

fn etc_netns(ns: &str) -> PathBuf {
    Path::new("/etc/netns").join(ns)
}

fn iface_exists(name: &str) -> bool {
    Path::new("/sys/class/net").join(name).exists()
}

fn netns_exists(ns: &str) -> bool {
    Path::new("/run/netns").join(ns).exists()
}

fn disable_ipv6(iface: &str) {
    let p = Path::new("/proc/sys/net/ipv6/conf")
        .join(iface)
        .join("disable_ipv6");
    // No IPv6 in this kernel: nothing to turn off.
    let _ = fs::write(p, "1");
}

/// Root-namespace interfaces and whether each is operationally up.
fn iface_states(ip: &Path) -> BTreeMap<String, bool> {
    let Ok(out) = Cmd::new(ip).args(["-j", "link", "show"]).run(false) else {
        return BTreeMap::new();
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&out.stdout) else {
        return BTreeMap::new();
    };
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| {
            let name = i["ifname"].as_str()?.to_string();
            let up = i["operstate"].as_str() == Some("UP");
            Some((name, up))
        })
        .collect()
}

/// "3 packets transmitted, 3 received, ..." → (3, 3).
fn parse_ping_counts(out: &str) -> Option<(u32, u32)> {
    let line = out.lines().find(|l| l.contains("packets transmitted"))?;
    let mut nums = line.split(',').map(|part| {
        part.split_whitespace()
            .next()
            .and_then(|n| n.parse::<u32>().ok())
    });
    let tx = nums.next()??;
    let rx = nums.next()??;
    Some((tx, rx))
}

/// Whether ping's standard error says it could not send (no route, interface down), as
/// opposed to ping or the namespace not running at all.
fn ping_refused(stderr: &str) -> bool {
    stderr.contains("ping: connect:") || stderr.contains("ping: sendmsg:")
}

/// "rtt min/avg/max/mdev = 0.045/0.061/0.080/0.014 ms" → 0.061.
fn parse_ping_avg(out: &str) -> Option<f64> {
    let line = out
        .lines()
        .find(|l| l.starts_with("rtt ") || l.starts_with("round-trip"))?;
    let values = line.split('=').nth(1)?.trim();
    values.split('/').nth(1)?.trim().parse().ok()
}

// ----------------------------------------------------------------------------------------
// Processes

/// The pid of `daemon` if its pid file names a live process with the expected name that
/// belongs to the lab in `dir` (its command line mentions the directory), else `None`.
fn daemon_pid(dir: &Path, daemon: &Daemon) -> Option<i32> {
    let text = fs::read_to_string(&daemon.pidfile).ok()?;
    let pid: i32 = text.trim().parse().ok().filter(|p| *p > 1)?;
    let comm = fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    if comm.trim_end() != daemon.name {
        return None;
    }
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let dir = dir.as_os_str().as_encoded_bytes();
    if !cmdline.windows(dir.len()).any(|w| w == dir) {
        return None;
    }
    if is_zombie_or_gone(pid) {
        return None;
    }
    Some(pid)
}

/// Whether `pid` has exited (gone, or a zombie not yet reaped).
fn is_zombie_or_gone(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_none_or(|s| s == "Z" || s == "X"),
        Err(_) => true,
    }
}

/// Sends SIGTERM, waits up to `grace`, then SIGKILL; true once it has exited.
fn stop_pid(pid: i32, grace: Duration) -> bool {
    // SAFETY: kill has no memory-safety preconditions; the pid was checked by the caller.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if is_zombie_or_gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if is_zombie_or_gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Socket inodes of process `pid`.
fn socket_inodes(pid: i32) -> HashSet<u64> {
    let mut set = HashSet::new();
    let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return set;
    };
    for fd in fds.flatten() {
        if let Ok(target) = fs::read_link(fd.path()) {
            let t = target.to_string_lossy();
            if let Some(inode) = t
                .strip_prefix("socket:[")
                .and_then(|r| r.strip_suffix(']'))
                .and_then(|n| n.parse().ok())
            {
                set.insert(inode);
            }
        }
    }
    set
}

/// Established TCP connections of process `pid` to remote port `port`.
fn established_to_port(pid: i32, port: u16) -> usize {
    let inodes = socket_inodes(pid);
    if inodes.is_empty() {
        return 0;
    }
    let mut n = 0;
    for table in ["tcp", "tcp6"] {
        let Ok(text) = fs::read_to_string(format!("/proc/{pid}/net/{table}")) else {
            continue;
        };
        n += count_established(&text, port, &inodes);
    }
    n
}

/// Rows of a /proc/net/tcp table in state ESTABLISHED to remote `port` whose inode is in
/// `inodes`.
fn count_established(table: &str, port: u16, inodes: &HashSet<u64>) -> usize {
    table
        .lines()
        .skip(1)
        .filter(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 10 || f[3] != "01" {
                return false;
            }
            let remote_port = f[2]
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            remote_port == Some(port) && f[9].parse().is_ok_and(|i: u64| inodes.contains(&i))
        })
        .count()
}

// ----------------------------------------------------------------------------------------
// Teardown

/// Carries out [`plan_teardown`] for `state`; on success removes the lab directory. What
/// could not be removed is named in the error, and `state.json` stays so `down` can be run
/// again.
fn teardown(
    dir: &Path,
    state: &State,
    tools: &Tools,
    verbose: bool,
) -> Result<DownReport, LabError> {
    let mut report = DownReport {
        name: state.name.clone(),
        existed: true,
        ..DownReport::default()
    };
    let mut problems: Vec<String> = Vec::new();
    // del-br needs both daemons (without ovsdb-server, ovs-vsctl would wait out its
    // timeout); when either is gone the taps are checked for at the end instead.
    let alive = |name: &str| {
        state
            .daemons
            .iter()
            .find(|d| d.name == name)
            .and_then(|d| daemon_pid(dir, d))
            .is_some()
    };
    let vswitchd_alive = alive("ovs-vswitchd") && alive("ovsdb-server");
    for step in plan_teardown(state) {
        match step {
            Step::DelBridges(bridges) => {
                if !vswitchd_alive {
                    // The bridges died with ovs-vswitchd, or cannot be reached without
                    // ovsdb-server (stopping ovs-vswitchd removes them): their taps are
                    // checked for last.
                    continue;
                }
                let mut c = vsctl(tools, dir).label("ovs-vsctl del-br");
                for b in &bridges {
                    c = c.args(["--", "--if-exists", "del-br", b.as_str()]);
                }
                match c.run(verbose) {
                    Ok(_) => report.bridges = bridges.len(),
                    Err(e) => problems.push(e.to_string()),
                }
            }
            Step::DelVeths(veths) => {
                let present: Vec<&String> = veths.iter().filter(|v| iface_exists(v)).collect();
                if !present.is_empty() {
                    let batch: String = present.iter().map(|v| format!("link del {v}\n")).collect();
                    let c = Cmd::new(&tools.ip)
                        .args(["-force", "-batch", "-"])
                        .stdin(batch)
                        .timeout(batch_timeout(present.len()))
                        .label("ip link del");
                    if let Err(e) = c.output(verbose) {
                        problems.push(e.to_string());
                    }
                }
                let left: Vec<&String> = veths.iter().filter(|v| iface_exists(v)).collect();
                report.veths = present.len().saturating_sub(left.len());
                if !left.is_empty() {
                    problems.push(format!("could not delete interfaces {}", join(&left)));
                }
            }
            Step::DelNetns(nss) => {
                let present: Vec<&String> = nss.iter().filter(|n| netns_exists(n)).collect();
                for ns in &present {
                    report.processes += stop_netns_processes(tools, ns, verbose);
                }
                if !present.is_empty() {
                    let batch: String =
                        present.iter().map(|n| format!("netns del {n}\n")).collect();
                    let c = Cmd::new(&tools.ip)
                        .args(["-force", "-batch", "-"])
                        .stdin(batch)
                        .timeout(batch_timeout(present.len()))
                        .label("ip netns del");
                    if let Err(e) = c.output(verbose) {
                        problems.push(e.to_string());
                    }
                }
                let left: Vec<&String> = nss.iter().filter(|n| netns_exists(n)).collect();
                report.netns = present.len().saturating_sub(left.len());
                if !left.is_empty() {
                    problems.push(format!("could not delete namespaces {}", join(&left)));
                }
            }
            Step::RemoveEtcNetns(dirs) => {
                for d in dirs {
                    let hosts = d.join("hosts");
                    match fs::remove_file(&hosts) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => problems.push(format!("remove {}: {e}", hosts.display())),
                    }
                    match fs::remove_dir(&d) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => problems.push(format!("remove {}: {e}", d.display())),
                    }
                }
            }
            Step::StopDaemons(daemons) => {
                for d in daemons {
                    if let Some(pid) = daemon_pid(dir, &d) {
                        if verbose {
                            eprintln!("+ kill {pid} ({})", d.name);
                        }
                        if stop_pid(pid, Duration::from_secs(3)) {
                            report.daemons += 1;
                        } else {
                            problems.push(format!("{} (pid {pid}) did not stop", d.name));
                        }
                    }
                }
            }
            Step::DelLeftoverTaps(taps) => {
                for b in taps.iter().filter(|b| iface_exists(b)) {
                    let c = Cmd::new(&tools.ip).args(["link", "del", b.as_str()]);
                    if let Err(e) = c.run(verbose) {
                        if iface_exists(b) {
                            problems.push(e.to_string());
                        }
                    } else if state.bridges.contains(b) {
                        report.bridges += 1;
                    }
                }
            }
        }
    }
    if problems.is_empty() {
        fs::remove_dir_all(dir)
            .map_err(|e| LabError::io(format!("remove {}", dir.display()), e))?;
        Ok(report)
    } else {
        Err(LabError::Other(format!(
            "{} not fully removed: {} (state kept in {}; run pharos lab down again)",
            title(&state.name),
            problems.join("; "),
            dir.join(state::STATE_FILE).display()
        )))
    }
}

fn join(v: &[&String]) -> String {
    v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
}

/// Stops the processes running in namespace `ns` (started there by `pharos lab exec` and
/// left behind); returns how many there were.
fn stop_netns_processes(tools: &Tools, ns: &str, verbose: bool) -> usize {
    let Ok(out) = Cmd::new(&tools.ip).args(["netns", "pids", ns]).run(verbose) else {
        return 0;
    };
    let pids: Vec<i32> = out
        .stdout
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .filter(|p| *p > 1 && *p != std::process::id() as i32)
        .collect();
    for &pid in &pids {
        if verbose {
            eprintln!("+ kill {pid} (in {ns})");
        }
        stop_pid(pid, Duration::from_secs(1));
    }
    pids.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_lab_is_not_called_lab_lab() {
        assert_eq!(title(DEFAULT_NAME), "lab");
        assert_eq!(title("t1"), "lab t1");
        let report = DownReport {
            name: DEFAULT_NAME.into(),
            existed: true,
            ..DownReport::default()
        };
        assert!(report.to_string().starts_with("lab removed: "), "{report}");
    }

    #[test]
    fn tls_turns_tcp_into_ssl_and_ssl_needs_tls() {
        assert_eq!(
            tls_target("tcp:127.0.0.1:6653", true).unwrap(),
            "ssl:127.0.0.1:6653"
        );
        assert_eq!(
            tls_target("tcp:[::1]:6653", true).unwrap(),
            "ssl:[::1]:6653"
        );
        assert_eq!(
            tls_target("tcp:127.0.0.1:6653", false).unwrap(),
            "tcp:127.0.0.1:6653"
        );
        for (target, tls) in [
            ("ptcp:6653", true),
            ("none", true),
            ("ssl:127.0.0.1:6653", false),
        ] {
            assert!(
                matches!(tls_target(target, tls), Err(LabError::Invalid(_))),
                "{target} tls={tls}"
            );
        }
        assert_eq!(parse_controller("ssl:127.0.0.1:6654").unwrap(), 6654);
        assert_eq!(
            ControlTarget::parse("ssl:127.0.0.1:6654").unwrap(),
            ControlTarget::Connect("127.0.0.1:6654".parse().unwrap())
        );
    }

    #[test]
    fn control_targets() {
        assert_eq!(ControlTarget::parse("none").unwrap(), ControlTarget::None);
        assert_eq!(
            ControlTarget::parse("ptcp:6653").unwrap(),
            ControlTarget::Listen(6653)
        );
        assert_eq!(
            ControlTarget::parse("tcp:127.0.0.1:6653").unwrap(),
            ControlTarget::Connect("127.0.0.1:6653".parse().unwrap())
        );
        // Switch sN listens on PORT+N-1; a connecting target is passed on as given.
        let t = ControlTarget::Listen(6653);
        assert_eq!(t.ovs_target("ptcp:6653", 3).unwrap(), "ptcp:6655:127.0.0.1");
        assert_eq!(ControlTarget::None.ovs_target("none", 1), None);
        for bad in ["ptcp:0", "ptcp:x", "ptcp:", "udp:1.2.3.4:5", "None", ""] {
            let e = ControlTarget::parse(bad).unwrap_err().to_string();
            assert!(e.contains("bad controller"), "{bad}: {e}");
        }
        // ssl: is a target (a lab over TLS, see tls_turns_tcp_into_ssl_and_ssl_needs_tls);
        // other schemes are not.
        let e = ControlTarget::parse("unix:/tmp/x").unwrap_err().to_string();
        assert!(e.contains("ssl:HOST:PORT, ptcp:PORT or none"), "{e}");
    }

    #[test]
    fn controllers() {
        assert_eq!(parse_controller("tcp:127.0.0.1:6653").unwrap(), 6653);
        assert_eq!(
            controller_addr("tcp:127.0.0.1:6653").unwrap(),
            "127.0.0.1:6653".parse().unwrap()
        );
        assert_eq!(
            controller_addr("tcp:[::1]:6633").unwrap(),
            "[::1]:6633".parse().unwrap()
        );
        assert_eq!(parse_controller("tcp:[::1]:6633").unwrap(), 6633);
        for bad in [
            "127.0.0.1:6653",
            "tcp:127.0.0.1",
            "tcp:localhost:6653",
            "tcp:1.2.3.4:0",
            "udp:1.2.3.4:6653",
            "tcp:1.2.3.4:x",
        ] {
            let e = parse_controller(bad).unwrap_err().to_string();
            assert!(e.contains("expected tcp:HOST:PORT"), "{bad}: {e}");
        }
    }

    #[test]
    fn versions() {
        assert_eq!(OfVersion::parse("1.0").unwrap(), OfVersion::V10);
        assert_eq!(
            OfVersion::parse("1.3").unwrap().ovs_protocol(),
            "OpenFlow13"
        );
        assert!(OfVersion::parse("1.4")
            .unwrap_err()
            .to_string()
            .contains("1.0, 1.3 or mixed"));
        let mixed = OfVersion::parse("mixed").unwrap();
        assert_eq!(
            (1..=4).map(|n| mixed.for_switch(n)).collect::<Vec<_>>(),
            [
                OfVersion::V10,
                OfVersion::V13,
                OfVersion::V10,
                OfVersion::V13
            ]
        );
        assert_eq!(OfVersion::V10.for_switch(2), OfVersion::V10);
        assert_eq!(mixed.ovs_protocol(), "OpenFlow10,OpenFlow13");
    }

    #[test]
    fn missing_tools_name_the_packages() {
        assert_eq!(
            missing_message(&[("Open vSwitch", "openvswitch-switch")]),
            "Open vSwitch is not installed: apt-get install openvswitch-switch"
        );
        assert_eq!(
            missing_message(&[
                ("Open vSwitch", "openvswitch-switch"),
                ("ethtool", "ethtool"),
                ("ping", "iputils-ping")
            ]),
            "Open vSwitch, ethtool and ping are not installed: apt-get install \
             openvswitch-switch ethtool iputils-ping"
        );
    }

    #[test]
    fn ping_output() {
        let out =
            "PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n\n--- 10.0.0.2 ping statistics ---\n\
                   3 packets transmitted, 2 received, 33.3333% packet loss, time 401ms\n\
                   rtt min/avg/max/mdev = 0.045/0.061/0.080/0.014 ms\n";
        assert_eq!(parse_ping_counts(out), Some((3, 2)));
        assert_eq!(parse_ping_avg(out), Some(0.061));
        let lost = "1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms\n";
        assert_eq!(parse_ping_counts(lost), Some((1, 0)));
        assert_eq!(parse_ping_avg(lost), None);
        assert_eq!(
            parse_ping_counts("ping: connect: Network is unreachable"),
            None
        );
        assert!(ping_refused(
            "/usr/bin/ping: connect: Network is unreachable\n"
        ));
        assert!(ping_refused("ping: sendmsg: No route to host"));
        assert!(!ping_refused(
            "Cannot open network namespace \"t1-h1\": No such file"
        ));
    }

    #[test]
    fn established_connections_are_counted_by_inode_and_port() {
        // 0x19FD = 6653; state 01 = ESTABLISHED, 0A = LISTEN.
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:A1B2 0100007F:19FD 01 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 20 4 30 10 -1\n\
   1: 0100007F:A1B3 0100007F:19FD 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 20 4 30 10 -1\n\
   2: 0100007F:A1B4 0100007F:19FD 01 00000000:00000000 00:00000000 00000000     0        0 333 1 0000000000000000 20 4 30 10 -1\n\
   3: 0100007F:19FD 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 20 4 30 10 -1\n\
   4: 0100007F:A1B5 0100007F:19FE 01 00000000:00000000 00:00000000 00000000     0        0 444 1 0000000000000000 20 4 30 10 -1\n";
        let ours: HashSet<u64> = [111, 222, 444].into_iter().collect();
        // 333 is someone else's; 444 goes to another port; the LISTEN row does not count.
        assert_eq!(count_established(table, 6653, &ours), 2);
        assert_eq!(count_established(table, 6654, &ours), 1);
    }

    #[test]
    fn pingall_matrix_is_mininets() {
        let p = PingAll {
            rows: vec![
                PingRow {
                    from: "h1".into(),
                    to: vec![("h2".into(), true), ("h3".into(), false)],
                },
                PingRow {
                    from: "h2".into(),
                    to: vec![("h1".into(), true), ("h3".into(), true)],
                },
                PingRow {
                    from: "h3".into(),
                    to: vec![("h1".into(), false), ("h2".into(), true)],
                },
            ],
            sent: 6,
            received: 4,
        };
        assert_eq!(
            p.to_string(),
            "*** Ping: testing ping reachability\nh1 -> h2 X\nh2 -> h1 h3\nh3 -> X h2\n\
             *** Results: 33% dropped (4/6 received)"
        );
        assert!(!p.all_ok());
    }

    #[test]
    fn zombies_and_missing_pids_count_as_gone() {
        assert!(is_zombie_or_gone(i32::MAX));
        assert!(!is_zombie_or_gone(std::process::id() as i32));
    }

    #[test]
    fn a_pidfile_of_another_process_is_not_trusted() {
        let d = std::env::temp_dir().join(format!("pharos-lab-pid-{}", std::process::id()));
        fs::create_dir_all(&d).unwrap();
        let pidfile = d.join("ovs-vswitchd.pid");
        // Our own pid: alive, but neither named ovs-vswitchd nor started in `d`.
        fs::write(&pidfile, format!("{}\n", std::process::id())).unwrap();
        let daemon = Daemon {
            name: "ovs-vswitchd".into(),
            pidfile: pidfile.clone(),
        };
        assert_eq!(daemon_pid(&d, &daemon), None);
        fs::write(&pidfile, "garbage").unwrap();
        assert_eq!(daemon_pid(&d, &daemon), None);
        fs::remove_dir_all(&d).unwrap();
    }
}
