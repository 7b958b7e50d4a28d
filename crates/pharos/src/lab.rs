//! `pharos lab`: a test network of Open vSwitch switches and hosts in network namespaces,
//! pointed at a controller (the `lab` crate does the work).
//!
//! Errors are one line on standard error with exit status 1; a machine that cannot run a
//! lab (not root, a tool missing) exits 2 with what to do. `pingall` and `ping` exit 0 iff
//! every ping was answered; `exec` exits with the command's status. Every command reads
//! `PHAROS_LAB_DIR` (default /run/pharos-lab).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Subcommand;
use lab::probe::Seen;
use lab::{Lab, LabError, LabOptions, OfVersion, Topo};
use signal_hook::consts::{SIGINT, SIGTERM};

/// `println!` that returns the error (a closed pipe ends the command quietly, through
/// `main`) instead of panicking.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($t)*)?
    }};
}

/// Exit status when the machine cannot run a lab (not root, Open vSwitch missing, ...).
pub const EXIT_PREFLIGHT: u8 = 2;

/// How long `up` and `restart` wait for the switches' OpenFlow connections.
const CONNECT_WAIT: Duration = Duration::from_secs(5);
/// How long the hint's probe waits to connect, then for the controller's first bytes.
const PROBE_WAIT: Duration = Duration::from_secs(1);

const LONG_ABOUT: &str = "\
Test networks on this machine: Open vSwitch switches (userspace datapath, run from a private \
directory, never the system's OVS, and beside any other Open vSwitch, userspace ones included) and hosts in network namespaces, every switch pointed at \
an OpenFlow controller. Needs root, Open vSwitch, iproute2, ethtool and ping \
(apt-get install openvswitch-switch iproute2 ethtool iputils-ping).

Try it: run a controller (cargo run --release -p pharos -- run), then, as root,
  pharos lab up --topo linear,3
  pharos lab pingall
  pharos lab down

Topologies (Mininet's):
  single,K          switch s1 with hosts h1..hK
  linear,N          s1..sN in a line, host hI on switch sI
  tree,DEPTH,FANOUT a tree of switches, FANOUT hosts under each leaf (tree,2,2: s1 above
                    s2 (h1, h2) and s3 (h3, h4)); numbered depth first
  ring,N            linear,N plus a link sN-s1 (N >= 3)
  fattree,K         k-ary fat tree (K even): (K/2)^2 core switches first, then per pod its K/2
                    aggregation and K/2 edge switches, K/2 hosts per edge switch
                    (fattree,4: 20 switches, 16 hosts)
  ring and fattree have loops: a plain learning switch floods broadcasts around them
  forever; they are for controllers that handle loops.

Numbering: switch sN has datapath id N. Host hM has 10.0.0.M/8 (10.0.y.z beyond 255) and MAC \
00:00:00:00:xx:xx from M. A switch numbers its ports 1, 2, ... in link order: its hosts first, \
then its links to other switches in the order the shape makes them (linear,3: s2 port 1 = h2, \
2 = s1, 3 = s3). `pharos lab move h1 s3` re-plugs h1 into a new port of s3, numbered after \
its highest (linear,3: port 3).

Versions: --of 1.3 (the default), 1.0, or mixed: odd-numbered switches speak 1.0, \
even-numbered 1.3.

Misbehaving hosts: `pharos lab send h1 --hex FRAME` puts a raw Ethernet frame on h1's wire \
(forged LLDP, say); `pharos lab recv h1 --ethertype 0x88cc` prints what h1 receives.

Measuring a switch (pharos bench switch): `pharos lab up --topo single,2 --controller none \
--probe` makes s1 with no controller and, in place of h1 and h2, probe interfaces pb-lab-1 and \
pb-lab-2 in the root namespace (veth peers of s1's ports 1 and 2) to send and capture on; \
--controller ptcp:6653 instead has s1 listen on 127.0.0.1:6653 for the bench to connect. \
pharos lab show lists the probes (--json: \"probes\").

Over TLS: `pharos lab up --topo linear,3 --tls` makes a private CA and the controller's and \
switches' certificates in $PHAROS_LAB_DIR/NAME/pki, points the switches at ssl:HOST:PORT with \
ovs-vsctl set-ssl, and writes the controller's listen entry to pki/controller.toml: run \
`pharos run --config` with it. --tls-cert, --tls-key and --tls-ca use certificates of your own.

Names: with --name NAME (default lab; a lowercase letter then up to 3 lowercase letters or \
digits), switch sN is bridge NAME-sN, its port P the interface NAME-sN-ethP, host hM the \
network namespace NAME-hM with interface hM-eth0 inside. Labs of different names coexist. \
Commands take the short names (s1, h2).

Switches connect from this machine, so a local controller counts them with its other \
local clients: Pharos's handshake.max_pending_per_ip (64) bounds connections still in their \
handshake from one address and handshake.max_waiting_per_ip (2000) those waiting for a slot, \
so a flood of idle local connections delays a reconnecting lab switch, and past those caps \
keeps it out until it ends (up and restart say so). Point the lab at a non-loopback address of \
this machine (--controller tcp:ADDR:PORT) to keep its switches apart. State, OVS database, sockets and logs live in \
$PHAROS_LAB_DIR/NAME (default /run/pharos-lab/NAME); its state.json lets `down` remove \
everything even after a crash. To use ovs-ofctl on a lab, set OVS_RUNDIR to that directory \
(pharos lab show prints the line).";

/// Test networks of Open vSwitch switches and namespace hosts
#[derive(Debug, clap::Args)]
#[command(long_about = LONG_ABOUT)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Up(UpArgs),
    Show(ShowArgs),
    Pingall(PingallArgs),
    Ping(PingArgs),
    Exec(ExecArgs),
    Link(LinkArgs),
    Move(MoveArgs),
    Send(SendArgs),
    Recv(RecvArgs),
    Restart(RestartArgs),
    Down(DownArgs),
    List(ListArgs),
}

#[derive(Debug, clap::Args)]
struct NameArg {
    /// The lab's name: the prefix of its bridges, interfaces and namespaces
    #[arg(long, default_value = lab::DEFAULT_NAME, value_name = "NAME")]
    name: String,
    /// Print every command run, on standard error
    #[arg(short, long)]
    verbose: bool,
}

/// Start Open vSwitch, create the switches, hosts and links, point the switches at the
/// controller, and wait up to 5 s for them to connect
#[derive(Debug, clap::Args)]
struct UpArgs {
    /// single,K | linear,N | tree,DEPTH,FANOUT | ring,N | fattree,K (see pharos lab --help)
    #[arg(long, value_name = "SHAPE")]
    topo: String,
    /// OpenFlow version the switches speak: 1.0, 1.3, or mixed (odd-numbered switches
    /// 1.0, even-numbered 1.3)
    #[arg(long = "of", default_value = "1.3", value_name = "VERSION")]
    of: String,
    /// Where the switches' OpenFlow channel goes: tcp:HOST:PORT (they connect to a
    /// controller there; ssl:HOST:PORT, or --tls, over TLS), ptcp:PORT (switch sN listens on 127.0.0.1:PORT+N-1, for
    /// `pharos bench switch --switch-connect`), or none (no controller: with fail_mode
    /// secure they forward nothing until flows are installed)
    #[arg(
        long,
        default_value = lab::DEFAULT_CONTROLLER,
        value_name = "tcp:HOST:PORT|ssl:HOST:PORT|ptcp:PORT|none"
    )]
    controller: String,
    /// Probe interfaces instead of hosts: each host's switch port gets a veth whose other
    /// end, pb-NAME-M, stays in the root namespace (no address, transmit offload off) for
    /// `pharos bench switch --data-port` to send and capture on; no namespaces are made
    #[arg(long)]
    probe: bool,
    /// The OpenFlow channel over TLS: makes a private CA, the controller's and the
    /// switches' certificates in the lab directory (pki/), points the switches at
    /// ssl:HOST:PORT (the --controller address) with `ovs-vsctl set-ssl`, and writes the
    /// controller's listen entry to pki/controller.toml (pharos run --config it)
    #[arg(long)]
    tls: bool,
    /// With --tls, the switches' certificate (PEM) instead of a new PKI's
    #[arg(long, value_name = "FILE", requires_all = ["tls_key", "tls_ca"])]
    tls_cert: Option<PathBuf>,
    /// With --tls, the switches' private key (PEM)
    #[arg(long, value_name = "FILE", requires_all = ["tls_cert", "tls_ca"])]
    tls_key: Option<PathBuf>,
    /// With --tls, the CA the controller's certificate must be signed by (PEM)
    #[arg(long, value_name = "FILE", requires_all = ["tls_cert", "tls_key"])]
    tls_ca: Option<PathBuf>,
    /// Which switches: ovs (Open vSwitch bridges on its userspace datapath) or pharos
    /// (`pharos switch`, one process per switch, logs in the lab directory as sN.log)
    #[arg(long, default_value = "ovs", value_name = "ovs|pharos", value_parser = ["ovs", "pharos"])]
    switch: String,
    /// With --switch pharos: the switches' data path (`pharos switch --datapath`;
    /// af_packet by default)
    #[arg(long, value_enum)]
    switch_datapath: Option<crate::switch::Datapath>,
    #[command(flatten)]
    common: NameArg,
}

/// Switches (datapath ids, ports and peers), links (up or down), hosts (address, MAC,
/// switch port), the controller and how many switches are connected to it
#[derive(Debug, clap::Args)]
struct ShowArgs {
    /// JSON instead of text
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    common: NameArg,
}

/// Ping every host from every other host, once each (exit 0 iff all answered)
#[derive(Debug, clap::Args)]
struct PingallArgs {
    /// Seconds to wait for each answer
    #[arg(long, default_value_t = 2.0, value_name = "SECS")]
    timeout: f64,
    #[command(flatten)]
    common: NameArg,
}

/// Ping one host from another (exit 0 iff all answered)
#[derive(Debug, clap::Args)]
struct PingArgs {
    /// The host pinging (h1)
    from: String,
    /// The host pinged (h2)
    to: String,
    /// Pings to send, 0.2 s apart
    #[arg(long, short = 'c', default_value_t = 3)]
    count: u32,
    /// Seconds to wait for each answer
    #[arg(long, default_value_t = 2.0, value_name = "SECS")]
    timeout: f64,
    #[command(flatten)]
    common: NameArg,
}

/// Run a command in a host's network namespace (exit status: the command's); host names
/// resolve (ping h2)
#[derive(Debug, clap::Args)]
struct ExecArgs {
    /// The host (h1)
    host: String,
    #[command(flatten)]
    common: NameArg,
    /// The command and its arguments, after --
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    cmd: Vec<String>,
}

/// Set a link down or up (both ends)
#[derive(Debug, clap::Args)]
struct LinkArgs {
    /// One end (s1, or a host)
    a: String,
    /// The other end
    b: String,
    /// down or up
    #[arg(value_parser = ["down", "up"])]
    state: String,
    #[command(flatten)]
    common: NameArg,
}

/// Move a host to another switch: its port is deleted (the old switch reports it gone) and
/// it is plugged into a new port of SWITCH, numbered after that switch's highest, keeping
/// its MAC and IP address
#[derive(Debug, clap::Args)]
struct MoveArgs {
    /// The host (h1)
    host: String,
    /// The switch it moves to (s3)
    switch: String,
    #[command(flatten)]
    common: NameArg,
}

/// Send a raw Ethernet frame from a host, as the host would (a packet socket in its
/// namespace): destination, source, EtherType and payload, no FCS
#[derive(Debug, clap::Args)]
struct SendArgs {
    /// The host (h1)
    host: String,
    /// The frame in hex (separators : - . and spaces allowed)
    #[arg(long, value_name = "HEX")]
    hex: String,
    /// How many times to send it
    #[arg(long, short = 'c', default_value_t = 1)]
    count: u32,
    /// Seconds between two sends
    #[arg(long, default_value_t = 0.1, value_name = "SECS")]
    interval: f64,
    #[command(flatten)]
    common: NameArg,
}

/// Print the frames a host receives, one line of hex each (exit 0 iff COUNT arrived)
#[derive(Debug, clap::Args)]
struct RecvArgs {
    /// The host (h1)
    host: String,
    /// Only frames of this EtherType (0x88cc for LLDP)
    #[arg(long, value_name = "TYPE", value_parser = parse_ethertype)]
    ethertype: Option<u16>,
    /// How many frames to wait for
    #[arg(long, short = 'c', default_value_t = 1)]
    count: usize,
    /// Seconds to wait for them
    #[arg(long, default_value_t = 5.0, value_name = "SECS")]
    timeout: f64,
    #[command(flatten)]
    common: NameArg,
}

fn parse_ethertype(s: &str) -> Result<u16, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u16::from_str_radix(hex, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("bad EtherType {s:?}: 0x88cc or 35020"))
}

/// Delete a switch and create it again (same datapath id, ports and controller)
#[derive(Debug, clap::Args)]
struct RestartArgs {
    /// The switch (s1)
    switch: String,
    #[command(flatten)]
    common: NameArg,
}

/// Remove everything the lab created (switches, links, namespaces, OVS daemons) and
/// nothing else; works on a half-built or crashed lab; no lab is not an error
#[derive(Debug, clap::Args)]
struct DownArgs {
    #[command(flatten)]
    common: NameArg,
}

/// The labs in the lab directory
#[derive(Debug, clap::Args)]
struct ListArgs {
    /// JSON instead of text
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let dir = lab::lab_dir_from_env();
    if !matches!(args.command, Command::List(_)) {
        if let Err(e) = lab::preflight() {
            eprintln!("pharos: error: {e}");
            return Ok(ExitCode::from(EXIT_PREFLIGHT));
        }
    }
    match args.command {
        Command::Up(a) => up(a, dir),
        Command::Show(a) => {
            let lab = open(&a.common, &dir)?;
            let show = lab.show();
            if a.json {
                outln!("{}", serde_json::to_string_pretty(&show)?);
            } else {
                use std::io::Write as _;
                write!(std::io::stdout().lock(), "{show}")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Pingall(a) => {
            let lab = open(&a.common, &dir)?;
            let result = lab.pingall(secs(a.timeout)?)?;
            outln!("{result}");
            Ok(if result.all_ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Ping(a) => {
            let lab = open(&a.common, &dir)?;
            let r = lab.ping(&a.from, &a.to, a.count, secs(a.timeout)?)?;
            let avg = r
                .rtt_avg_ms
                .map(|ms| format!(", rtt avg {ms:.3} ms"))
                .unwrap_or_default();
            outln!(
                "{} -> {}: {}/{} received{avg}",
                r.from,
                r.to,
                r.received,
                r.transmitted
            );
            Ok(if r.ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Exec(a) => {
            let lab = open(&a.common, &dir)?;
            let mut cmd = a.cmd;
            if cmd.first().is_some_and(|c| c == "--") {
                cmd.remove(0);
            }
            let status = lab.exec(&a.host, &cmd)?;
            Ok(ExitCode::from(exit_code(status)))
        }
        Command::Link(a) => {
            let lab = open(&a.common, &dir)?;
            lab.set_link(&a.a, &a.b, a.state == "up")?;
            outln!("link {} - {} {}", a.a, a.b, a.state);
            Ok(ExitCode::SUCCESS)
        }
        Command::Move(a) => {
            let mut lab = open(&a.common, &dir)?;
            let port = lab.move_host(&a.host, &a.switch)?;
            outln!("{} moved to {} port {port}", a.host, a.switch);
            Ok(ExitCode::SUCCESS)
        }
        Command::Send(a) => {
            let lab = open(&a.common, &dir)?;
            let frame = lab::frame::parse_hex(&a.hex)?;
            let interval = if a.interval == 0.0 {
                Duration::ZERO
            } else {
                secs(a.interval)?
            };
            let n = lab.send_frame(&a.host, &frame, a.count, interval)?;
            outln!(
                "{} sent {}, {} bytes each",
                a.host,
                lab::plural(n as usize, "frame", "frames"),
                frame.len()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Recv(a) => {
            let lab = open(&a.common, &dir)?;
            let frames = lab.recv_frames(&a.host, a.ethertype, a.count, secs(a.timeout)?)?;
            for f in &frames {
                outln!("{}", lab::frame::to_hex(f));
            }
            Ok(if frames.len() == a.count {
                ExitCode::SUCCESS
            } else {
                eprintln!(
                    "{}: {} of {} frames in {} s",
                    a.host,
                    frames.len(),
                    a.count,
                    a.timeout
                );
                ExitCode::FAILURE
            })
        }
        Command::Restart(a) => {
            let lab = open(&a.common, &dir)?;
            let t0 = Instant::now();
            lab.restart_switch(&a.switch)?;
            outln!(
                "{} restarted (bridge deleted and re-created in {:.2} s)",
                a.switch,
                t0.elapsed().as_secs_f64()
            );
            report_connections(&lab, None)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Down(a) => {
            let t0 = Instant::now();
            let report = Lab::down_verbose(&a.common.name, &dir, a.common.verbose)?;
            if report.existed {
                outln!("{report} in {:.2} s", t0.elapsed().as_secs_f64());
            } else {
                outln!("{report}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::List(a) => {
            let labs = lab::list(&dir)?;
            if a.json {
                outln!("{}", serde_json::to_string_pretty(&labs)?);
            } else if labs.is_empty() {
                outln!("no labs in {}", dir.display());
            } else {
                outln!(
                    "{:<5} {:<12} {:<3} {:<22} STATE",
                    "NAME",
                    "TOPO",
                    "OF",
                    "CONTROLLER"
                );
                for l in labs {
                    let state = match (l.complete, l.running) {
                        (true, true) => "running",
                        (false, _) => "incomplete (pharos lab down)",
                        (true, false) => "switches not running (pharos lab down)",
                    };
                    outln!(
                        "{:<5} {:<12} {:<3} {:<22} {state}",
                        l.name,
                        l.topo,
                        l.of,
                        l.controller
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn open(common: &NameArg, dir: &std::path::Path) -> Result<Lab, LabError> {
    let mut lab = Lab::open(&common.name, dir)?;
    lab.set_verbose(common.verbose);
    Ok(lab)
}

fn secs(s: f64) -> anyhow::Result<Duration> {
    if s.is_finite() && s > 0.0 && s <= 3600.0 {
        Ok(Duration::from_secs_f64(s))
    } else {
        anyhow::bail!("bad --timeout {s}: seconds, more than 0 and at most 3600")
    }
}

/// What the switches of `lab` are, for `up`'s summary.
fn switches_line(lab: &Lab) -> String {
    match lab.switch_kind() {
        lab::SwitchKind::Ovs => format!("bridges {}-sN", lab.name()),
        lab::SwitchKind::Pharos { datapath, .. } => format!(
            "Pharos switches (pharos switch, one process each, on {})",
            datapath.as_deref().unwrap_or("af_packet")
        ),
    }
}

/// What the lab directory holds besides the state.
fn logs_of(lab: &Lab) -> &'static str {
    match lab.switch_kind() {
        lab::SwitchKind::Ovs => "OVS",
        lab::SwitchKind::Pharos { .. } => "switch logs (sN.log)",
    }
}

fn up(a: UpArgs, dir: PathBuf) -> anyhow::Result<ExitCode> {
    if a.switch_datapath.is_some() && a.switch != "pharos" {
        anyhow::bail!("--switch-datapath is for Pharos switches: add --switch pharos");
    }
    let topo = Topo::parse(&a.topo)?;
    let of = OfVersion::parse(&a.of)?;
    let t0 = Instant::now();
    // Ctrl-C or SIGTERM while the lab is being built would leave half a lab (to `down`):
    // note it instead, finish building, then take the lab down again.
    let interrupted = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&interrupted))?;
    }
    let tls = match (&a.tls_cert, &a.tls_key, &a.tls_ca) {
        (Some(cert), Some(key), Some(ca)) => Some(lab::LabTls::Files {
            ca_cert: ca.clone(),
            cert: cert.clone(),
            key: key.clone(),
        }),
        _ if a.tls || a.controller.starts_with("ssl:") => Some(lab::LabTls::Generate),
        _ => None,
    };
    let controller = match a.controller.strip_prefix("ssl:") {
        Some(rest) if tls.is_some() => format!("tcp:{rest}"),
        _ => a.controller.clone(),
    };
    let lab = Lab::up(LabOptions {
        name: a.common.name.clone(),
        dir: dir.clone(),
        topo,
        of,
        controller,
        probe: a.probe,
        verbose: a.common.verbose,
        tls,
        switch: match a.switch.as_str() {
            "pharos" => lab::SwitchKind::Pharos {
                exe: std::env::current_exe()
                    .map_err(|e| anyhow::anyhow!("cannot tell where this pharos is: {e}"))?,
                datapath: a.switch_datapath.map(|d| d.name().to_string()),
            },
            _ => lab::SwitchKind::Ovs,
        },
    })?;
    if interrupted.load(Ordering::SeqCst) {
        eprintln!("pharos: interrupted: removing lab {}", a.common.name);
        Lab::down_verbose(&a.common.name, &dir, a.common.verbose)?;
        return Ok(ExitCode::from(130));
    }
    let t = lab.topo();
    let name = lab.name();
    let links = t.switch_links().count();
    outln!(
        "{} up in {:.2} s: {} ({} {}, {} {}, {}), OpenFlow {}, controller {}",
        lab::title(name),
        t0.elapsed().as_secs_f64(),
        t.spec,
        lab::plural(t.switches.len(), "switch", "switches"),
        lab::span("s", t.switches.len()),
        lab::plural(t.hosts.len(), "host", "hosts"),
        lab::span("h", t.hosts.len()),
        lab::plural(links, "switch link", "switch links"),
        of,
        lab.controller(),
    );
    if lab.is_probe() {
        let probes: Vec<String> = lab
            .probes()
            .iter()
            .map(|p| format!("{} ({}:{})", p.interface, p.switch, p.port))
            .collect();
        outln!(
            "  {}, probe interfaces {}; state and {} in {}",
            switches_line(&lab),
            probes.join(", "),
            logs_of(&lab),
            lab.dir().display()
        );
    } else {
        outln!(
            "  {}, namespaces {name}-hM, hosts 10.0.0.M/8; state and {} in {}",
            switches_line(&lab),
            logs_of(&lab),
            lab.dir().display()
        );
    }
    let new_pki = lab.tls().and_then(|t| t.pki_dir.clone());
    match lab.control_target() {
        lab::ControlTarget::Connect(_) if new_pki.is_some() => {
            // A new CA: no controller can be running with its certificates yet.
            let d = new_pki.unwrap_or_default();
            outln!(
                "TLS: a new CA and certificates in {d}; the switches connect over ssl: and \
                 retry every second until the controller runs with them:\n  pharos run \
                 --config {}\n  (or its [[listen]] entry in your settings file: certificate \
                 {}, key {}, client_ca {})",
                d.join(lab::CONTROLLER_TOML).display(),
                d.join(lab::pki::CONTROLLER_CERT).display(),
                d.join(lab::pki::CONTROLLER_KEY).display(),
                d.join(lab::pki::CA_CERT).display(),
                d = d.display(),
            );
        }
        lab::ControlTarget::Connect(_) => report_connections(&lab, Some(&interrupted))?,
        lab::ControlTarget::Listen(_) => {
            let addrs: Vec<String> = lab
                .topo()
                .switches
                .iter()
                .filter_map(|s| {
                    lab.switch_listen_addr(s.num)
                        .map(|a| format!("s{} {a}", s.num))
                })
                .collect();
            outln!("switches listen for a controller: {}", addrs.join(", "));
        }
        lab::ControlTarget::None => {
            outln!("no controller: the switches forward nothing until flows are installed")
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Waits up to 5 s for the switches' connections and says how many made it; a warning
/// (not a failure) with a hint when some did not.
fn report_connections(lab: &Lab, stop: Option<&AtomicBool>) -> anyhow::Result<()> {
    let want = lab.topo().switches.len();
    let deadline = Instant::now() + CONNECT_WAIT;
    // Lab::wait_connected in slices, so that Ctrl-C ends the wait (the lab stays up).
    let n = loop {
        let n = lab.wait_connected(Duration::from_millis(500));
        let stopped = stop.is_some_and(|s| s.load(Ordering::SeqCst));
        if n >= want || stopped || Instant::now() >= deadline {
            break n;
        }
    };
    if n >= want {
        outln!("{n}/{want} switches connected to {}", lab.controller());
    } else {
        eprintln!(
            "warning: {n}/{want} switches connected to {} after {:.1} s: {}. The switches keep \
             retrying every second; pharos lab show tells how many are connected",
            lab.controller(),
            (CONNECT_WAIT - deadline.saturating_duration_since(Instant::now())).as_secs_f64(),
            connect_hint(lab.controller())
        );
    }
    Ok(())
}

/// Why switches may not be connecting to `target`: what a connection from this machine
/// (where the switches are) sees there, and what that means.
fn connect_hint(target: &str) -> String {
    let Ok(addr) = lab::controller_addr(target) else {
        return format!("{target} is not a controller address");
    };
    match lab::probe::probe(addr, PROBE_WAIT) {
        Seen::Refused => format!(
            "a connection to {addr} is refused: no controller listens there (start one: \
             pharos run --listen {addr})"
        ),
        Seen::NoAnswer => format!(
            "a connection to {addr} got no answer in {} s: packets dropped on the way, or \
             the controller's accept queue is full",
            PROBE_WAIT.as_secs()
        ),
        Seen::ClosedAtOnce { reset } => format!(
            "{addr} accepted a connection and {} it before saying anything: the controller \
             refuses connections from this machine. Pharos does so past its handshake caps: \
             handshake.max_pending_per_ip (64 by default) bounds the connections still in \
             their handshake from one address and handshake.max_waiting_per_ip (2000) \
             those waiting for a slot (0 refuses at once), and the lab's switches share this machine's \
             address with every other client here (127.0.0.1, for a controller on \
             127.0.0.1), so a flood of idle connections from here keeps them out until it \
             ends (raise the cap; or, with the controller on this machine, point the lab at \
             one of its non-loopback addresses, --controller tcp:ADDR:PORT; see \"Try \
             Pharos in a lab\" in the README)",
            if reset { "reset" } else { "closed" },
        ),
        Seen::Spoke { .. } => format!(
            "{addr} accepts connections and answers, so a controller is there: the switches' \
             handshakes fail or are slow (its log says why; --of chooses the switches' \
             OpenFlow version)"
        ),
        Seen::Silent => format!(
            "{addr} accepts connections but said nothing in {} s (an OpenFlow controller \
             sends HELLO at once): is it overloaded, or not an OpenFlow controller?",
            PROBE_WAIT.as_secs()
        ),
        Seen::Failed(e) => format!("a connection to {addr} failed: {e}"),
    }
}

/// A command's exit status as a shell reports it (128 + signal when killed).
fn exit_code(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(c), _) => c as u8,
        (None, Some(s)) => 128u8.wrapping_add(s as u8),
        _ => 1,
    }
}

#[cfg(test)]
#[path = "lab_tests.rs"]
mod tests;
