//! `pharos switch`: a software OpenFlow switch (crate `pharos-switch`) on Linux
//! interfaces, connected to one or more controllers.
//!
//! ```text
//! pharos switch --dpid 1 --port 1=veth1 --port 2=veth2 --controller tcp:127.0.0.1:6653
//! ```
//!
//! The switch runs on this thread until SIGINT or SIGTERM, which stop it within 100 ms
//! (connections closed, ports released). A refused argument ends the process with exit
//! status 2 and a message naming it.

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context as _;
use ofswitch::agent::PortIo;
use ofswitch::agent::{AgentConfig, ListenAddr, Switch, SwitchConfig, Target, Versions};
use ofswitch::datapath::xdp::XdpMode;
use ofswitch::datapath::xsk::XdpPort;
use ofswitch::datapath::Port;
use openflow::Dpid;
use signal_hook::consts::{SIGINT, SIGTERM};
use tracing_subscriber::EnvFilter;

/// Exit status for refused arguments.
const EXIT_USAGE: u8 = 2;

/// Run a software OpenFlow switch on Linux interfaces until Ctrl-C or SIGTERM
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Datapath id: 00:00:00:00:00:00:00:01, 0x1, of:0000000000000001, 16 hex digits (as
    /// Open vSwitch writes it: 0000000000000001) or decimal 1
    #[arg(long, value_name = "ID")]
    pub dpid: Dpid,
    /// The switch's name (its description's dp_desc, and the logs); by default "s" and
    /// the datapath id
    #[arg(long)]
    pub name: Option<String>,
    /// A port: its OpenFlow number and the interface (repeat for each port)
    #[arg(long = "port", value_name = "N=IFNAME", required = true, value_parser = parse_port)]
    pub ports: Vec<(u32, String)>,
    /// A controller: tcp:HOST:PORT or tcp:HOST (port 6653) to connect to, ssl:HOST:PORT
    /// over TLS (with --private-key, --certificate and --ca-cert), or ptcp:PORT,
    /// ptcp:PORT:IP or punix:PATH to wait for it; repeat for several (none: the switch
    /// forwards by the flows it is given through --listen)
    #[arg(long = "controller", value_name = "tcp:HOST:PORT", value_parser = parse_controller)]
    pub controllers: Vec<Controller>,
    /// The switch's private key for ssl: controllers (PEM)
    #[arg(long, value_name = "FILE", requires_all = ["certificate", "ca_cert"])]
    pub private_key: Option<std::path::PathBuf>,
    /// The switch's certificate for ssl: controllers (PEM)
    #[arg(long, value_name = "FILE", requires_all = ["private_key", "ca_cert"])]
    pub certificate: Option<std::path::PathBuf>,
    /// The CA a controller's certificate must be signed by (PEM); its name is not
    /// checked, as Open vSwitch does not
    #[arg(long, value_name = "FILE", requires_all = ["private_key", "certificate"])]
    pub ca_cert: Option<std::path::PathBuf>,
    /// Accept connections (ovs-ofctl, passive controllers): punix:PATH or
    /// ptcp:PORT or ptcp:PORT:IP; repeat for several. They are answered but sent no PACKET_IN,
    /// FLOW_REMOVED or PORT_STATUS
    #[arg(long = "listen", value_name = "punix:PATH|ptcp:PORT")]
    pub listen: Vec<ListenAddr>,
    /// Write the process id to FILE once the ports are open (removed at exit)
    #[arg(long, value_name = "FILE")]
    pub pidfile: Option<std::path::PathBuf>,
    /// OpenFlow versions offered: 1.0, 1.3 or both (with both, the first controller's
    /// version is kept for the tables)
    #[arg(long = "of", value_name = "1.0|1.3|both", default_value = "both")]
    pub versions: Versions,
    /// Flows per table before an add is refused (table full)
    #[arg(long, value_name = "N", default_value_t = 1 << 20)]
    pub max_flows: usize,
    /// Tables in OpenFlow 1.3
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u8).range(1..=254))]
    pub tables: u8,
    /// Packet buffers for PACKET_IN (0: the whole frame in every PACKET_IN)
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub buffers: u32,
    /// Log filter: a level (error, warn, info, debug, trace) or tracing directives;
    /// overrides RUST_LOG [default: info]
    #[arg(long, value_name = "FILTER")]
    pub log_level: Option<String>,
    /// How the ports reach their interfaces: af_packet (packet sockets: any interface);
    /// af_xdp (AF_XDP sockets fed by an XDP program in the driver: much faster on veth,
    /// one receive queue per interface, no other XDP program on it; each interface's
    /// NAPI is made threaded and pinned to the cores the switch may run on);
    /// af_xdp_generic (the same with XDP on socket buffers: any driver)
    #[arg(long, value_enum, default_value_t = Datapath::Packet)]
    pub datapath: Datapath,
    /// With --datapath af_xdp: run the switch's thread and its interfaces' NAPI threads
    /// as real-time threads (SCHED_FIFO) at this priority, 1 to 99, so that no ordinary
    /// thread on their cores delays them while the interfaces' rings overflow. For cores
    /// given to the switch: a switch busy forwarding then leaves ordinary threads there
    /// only what the kernel's real-time limit keeps for them (5% by default)
    #[arg(long, value_name = "PRIORITY", value_parser = clap::value_parser!(i32).range(1..=99))]
    pub rt_priority: Option<i32>,
}

/// `--datapath` (also `pharos lab up --switch-datapath` and `pharos bench datapath
/// --switch-datapath`, which pass it on).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Datapath {
    #[value(name = "af_packet")]
    Packet,
    #[value(name = "af_xdp")]
    Xdp,
    #[value(name = "af_xdp_generic")]
    XdpGeneric,
}

impl Datapath {
    /// Its name on the command line (`af_xdp`).
    pub fn name(self) -> &'static str {
        match self {
            Datapath::Packet => "af_packet",
            Datapath::Xdp => "af_xdp",
            Datapath::XdpGeneric => "af_xdp_generic",
        }
    }
}

/// The ports, opened the way `--datapath` says.
enum Opened {
    Packet(Vec<(u32, Port)>),
    Xdp(Vec<(u32, XdpPort)>),
}

fn open_ports(args: &Args) -> anyhow::Result<Opened> {
    let context = |n: &u32, ifname: &str| format!("opening port {n} on {ifname}");
    let mode = match args.datapath {
        Datapath::Packet => {
            let mut ports = Vec::with_capacity(args.ports.len());
            for (n, ifname) in &args.ports {
                ports.push((*n, Port::open(ifname).with_context(|| context(n, ifname))?));
            }
            return Ok(Opened::Packet(ports));
        }
        Datapath::Xdp => XdpMode::Native,
        Datapath::XdpGeneric => XdpMode::Generic,
    };
    let cpus = allowed_cpus();
    let mut ports = Vec::with_capacity(args.ports.len());
    for (n, ifname) in &args.ports {
        let mut port = XdpPort::open(ifname, mode).with_context(|| context(n, ifname))?;
        if mode == XdpMode::Native {
            // On veth the XDP work otherwise runs on the core of whoever sent the frame.
            let made = port.napi_threaded(&cpus).and_then(|pid| {
                if let Some(priority) = args.rt_priority {
                    port.napi_realtime(priority)?;
                }
                Ok(pid)
            });
            match made {
                Ok(pid) => tracing::info!(
                    port = n, interface = %ifname, napi_thread = pid, cpus = ?cpus,
                    realtime_priority = ?args.rt_priority,
                    "AF_XDP port; its NAPI made threaded (/sys/class/net/{ifname}/threaded, \
                     until the switch stops) and pinned to the switch's cores"
                ),
                // Asked for, so not optional.
                Err(e) if args.rt_priority.is_some() => {
                    return Err(e).with_context(|| {
                        format!("port {n} on {ifname}: its NAPI thread, real-time")
                    })
                }
                Err(e) => tracing::warn!(
                    port = n, interface = %ifname, error = %e,
                    "AF_XDP port; its NAPI could not be made threaded and pinned"
                ),
            }
        }
        ports.push((*n, port));
    }
    Ok(Opened::Xdp(ports))
}

/// The cores this process may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data, filled by the call for this process.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: an index within the set.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// A `--controller`: one to connect to, or a socket to wait for one on.
#[derive(Debug, Clone)]
pub enum Controller {
    Connect(Target),
    Listen(ListenAddr),
}

fn parse_controller(s: &str) -> Result<Controller, String> {
    if s.starts_with("ptcp:") || s.starts_with("punix:") {
        s.parse().map(Controller::Listen)
    } else {
        s.parse().map(Controller::Connect)
    }
}

fn parse_port(s: &str) -> Result<(u32, String), String> {
    let (n, ifname) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: expected N=IFNAME (1=veth0)"))?;
    let n: u32 = n
        .trim()
        .parse()
        .map_err(|e| format!("{s:?}: port number: {e}"))?;
    if !(1..0xff00).contains(&n) {
        return Err(format!("{s:?}: port numbers are 1 to 65279"));
    }
    if ifname.is_empty() || ifname.len() > 15 {
        return Err(format!("{s:?}: an interface name has 1 to 15 bytes"));
    }
    Ok((n, ifname.to_string()))
}

/// `pharos switch`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let filter = match &args.log_level {
        Some(f) => EnvFilter::try_new(f),
        None => EnvFilter::try_from_default_env().or_else(|_| EnvFilter::try_new("info")),
    };
    let filter = match filter {
        Ok(f) => f,
        Err(e) => {
            eprintln!("pharos switch: --log-level: {e}");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .init();
    if args.rt_priority.is_some() && args.datapath != Datapath::Xdp {
        // With AF_PACKET or generic XDP the kernel's receive work runs in softirq
        // context, deferred under load to ksoftirqd: an ordinary thread that a
        // real-time switch would starve.
        eprintln!(
            "pharos switch: --rt-priority needs --datapath af_xdp (elsewhere the kernel's \
             receive work runs in ksoftirqd, which a real-time switch would starve)"
        );
        return Ok(ExitCode::from(EXIT_USAGE));
    }
    let mut seen = std::collections::HashSet::new();
    for (n, ifname) in &args.ports {
        if !seen.insert(*n) {
            eprintln!("pharos switch: --port {n}={ifname}: port {n} is given twice");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    }
    // The TLS files before any port: a mistake in them is the user's to fix first.
    let tls = match (&args.private_key, &args.certificate, &args.ca_cert) {
        (Some(key), Some(cert), Some(ca)) => Some(
            ofswitch::agent::client_config(&ofswitch::agent::TlsFiles {
                ca_cert: ca.clone(),
                certificate: cert.clone(),
                private_key: key.clone(),
            })
            .map_err(anyhow::Error::msg)
            .context("the TLS files")?,
        ),
        _ => None,
    };
    if tls.is_none() {
        if let Some(Controller::Connect(t)) = args
            .controllers
            .iter()
            .find(|c| matches!(c, Controller::Connect(t) if t.tls))
        {
            anyhow::bail!(
                "ssl:{} needs --private-key, --certificate and --ca-cert",
                t.addr
            );
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .context("installing signal handlers")?;
    }
    let ports = open_ports(&args)?;
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| format!("s{}", args.dpid.0));
    let config = SwitchConfig {
        tls,
        agent: AgentConfig {
            dpid: args.dpid.0,
            name: name.clone(),
            versions: args.versions,
            n_buffers: args.buffers,
            tables: args.tables,
            max_flows: args.max_flows,
        },
        controllers: args
            .controllers
            .iter()
            .filter_map(|c| match c {
                Controller::Connect(t) => Some(t.clone()),
                Controller::Listen(_) => None,
            })
            .collect(),
        listen_controllers: args
            .controllers
            .iter()
            .filter_map(|c| match c {
                Controller::Listen(l) => Some(l.clone()),
                Controller::Connect(_) => None,
            })
            .collect(),
        listen: args.listen.clone(),
        ..SwitchConfig::default()
    };
    match ports {
        Opened::Packet(ports) => serve(Switch::new(config, ports), &args, &stop, &name),
        Opened::Xdp(ports) => serve(Switch::new(config, ports), &args, &stop, &name),
    }
}

/// Runs the switch until `stop`: the pid file, the loop, the pid file removed.
fn serve<P: PortIo>(
    switch: std::io::Result<Switch<P>>,
    args: &Args,
    stop: &AtomicBool,
    name: &str,
) -> anyhow::Result<ExitCode> {
    let mut switch = switch.context("starting the switch")?;
    if let Some(priority) = args.rt_priority {
        ofswitch::datapath::Sched::fifo(priority)
            .set(0)
            .context("--rt-priority: making the switch's thread real-time")?;
        tracing::info!(priority, "the switch's thread is real-time (SCHED_FIFO)");
    }
    if let Some(path) = &args.pidfile {
        // Written aside and renamed into place: whoever waits for the file finds the
        // whole pid in it, never an empty file.
        let tmp = path.with_extension("pid.tmp");
        std::fs::write(&tmp, format!("{}\n", std::process::id()))
            .and_then(|()| std::fs::rename(&tmp, path))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    tracing::info!(
        switch = %name,
        dpid = %args.dpid,
        ports = args.ports.len(),
        controllers = ?args
            .controllers
            .iter()
            .map(|c| match c {
                Controller::Connect(t) => t.addr.to_string(),
                Controller::Listen(l) => l.to_string(),
            })
            .collect::<Vec<_>>(),
        listen = ?args.listen.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "pharos switch running; Ctrl-C or SIGTERM to stop"
    );
    let result = switch.run(stop).context("the switch's loop");
    if let Some(path) = &args.pidfile {
        let _ = std::fs::remove_file(path);
    }
    result?;
    tracing::info!(switch = %name, "stopped");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dpid_is_read_by_the_one_parser() {
        use clap::Parser as _;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: Args,
        }
        let dpid = |d: &str| {
            Cli::try_parse_from(["switch", "--dpid", d, "--port", "1=veth0"])
                .map(|c| c.args.dpid)
                .map_err(|e| e.to_string())
        };
        assert_eq!(dpid("17"), Ok(Dpid(17)));
        assert_eq!(dpid("0x11"), Ok(Dpid(17)));
        assert_eq!(dpid("00:00:00:00:00:00:00:11"), Ok(Dpid(17)));
        assert_eq!(
            dpid("0000000000000011"),
            Ok(Dpid(17)),
            "Open vSwitch's form"
        );
        assert_eq!(dpid("000000000000000a"), Ok(Dpid(10)));
        // Once read as 0x12 here (and 0x1a for "1a"); refused as everywhere else now.
        let e = dpid("1:2").unwrap_err();
        assert!(e.contains("exactly 8 groups of 2 hex digits"), "{e}");
        let e = dpid("1a").unwrap_err();
        assert!(e.contains("write 0x1a"), "{e}");
        assert!(dpid("00:00:00:00:00:00:00:00:11").is_err());
        assert!(dpid("x").is_err());
    }

    #[test]
    fn a_datapaths_name_is_the_one_the_command_line_takes() {
        use clap::ValueEnum as _;
        for d in Datapath::value_variants() {
            assert_eq!(d.to_possible_value().unwrap().get_name(), d.name());
        }
    }

    #[test]
    fn ports_need_a_number_and_a_name() {
        assert_eq!(parse_port("2=veth0"), Ok((2, "veth0".into())));
        assert!(parse_port("veth0").is_err());
        assert!(parse_port("0=veth0").is_err());
        assert!(parse_port("1=").is_err());
        assert!(parse_port("1=a-very-long-interface-name").is_err());
    }
}
