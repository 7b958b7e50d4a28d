//! The test bed of `pharos bench datapath`, as the paper built it with two machines:
//! a generator namespace with three veth ends (`g1` and `g3` send, `g2` receives) wired
//! to a device-under-test namespace (`d1`, `d2`, `d3`), where the device under test
//! forwards from `d1` and from `d3` to `d2`. `g3` is the paper's second input link, for
//! the fairness test's second scenario; every other test sends on `g1` only.
//! [`Testbed::new`] builds the wiring; [`Testbed::linux_bridge`],
//! [`Testbed::ip_forwarding`], [`Testbed::ovs_userspace`] and
//! [`Testbed::pharos_switch`] make the devices under test; another switch is measured
//! by opening its ports on `d1`, `d2` (and `d3`) inside [`Testbed::dut`].
//!
//! ```text
//!   generator ns                 DUT ns
//!   g1 (tx) ----- veth -----  d1 \
//!   g3 (tx) ----- veth -----  d3 -  (bridge | IP forwarding | switch)
//!   g2 (rx) ----- veth -----  d2 /
//! ```

use std::io;

use afpacket::netns::Netns;
use afpacket::Port;

use super::gen::Addresses;

pub const G1_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x01, 0x01];
pub const D1_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x01, 0x02];
/// The receiver's address: where the generator's frames go. `g2` itself has another
/// ([`G2_DEV_MAC`]) and reads in promiscuous mode, so that the frames it receives are
/// not for its host: the kernel drops them before IP (which would route each to
/// nowhere, allocating and freeing a route entry per frame, on whichever core does
/// `g2`'s receive processing) and only the generator's packet socket sees them.
pub const G2_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x02, 0x01];
pub const G2_DEV_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x02, 0x03];
pub const D2_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x02, 0x02];
pub const G3_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x03, 0x01];
pub const D3_MAC: [u8; 6] = [0x02, 0, 0, 0, 0x03, 0x02];

/// What the generator sends through a device that forwards by Ethernet address (the
/// bridge, a switch): from `g1` to `g2`, one subnet.
pub const SWITCHED: Addresses = Addresses {
    src_mac: G1_MAC,
    dst_mac: G2_MAC,
    src_ip: [10, 0, 1, 2],
    dst_ip: [10, 0, 1, 3],
    src_port: 5000,
    dst_port: 6000,
};

/// [`SWITCHED`]'s counterpart sent on `g3`.
pub const SWITCHED_3: Addresses = Addresses {
    src_mac: G3_MAC,
    src_ip: [10, 0, 1, 4],
    ..SWITCHED
};

fn mac(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The two namespaces, wired, with the generator's ports open.
pub struct Testbed {
    /// The generator's sending port (`g1`).
    pub tx: Port,
    /// The generator's receiving port (`g2`).
    pub rx: Port,
    /// The generator's second sending port (`g3`).
    pub tx3: Port,
    /// The addresses to send on `g3` with (set with the device under test).
    pub addrs3: Option<Addresses>,
    /// Open vSwitch's daemons when it is the device under test (stopped first).
    ovs: Option<OvsDaemons>,
    /// `pharos switch` when it is the device under test (stopped first).
    pharos: Option<PharosSwitch>,
    /// The device under test's namespace (`d1`, `d2`).
    pub dut: Netns,
    /// The generator's namespace (dropped last: the ports close first).
    pub gen: Netns,
}

impl Testbed {
    /// Both namespaces, the two veth pairs up, the generator's ports open.
    pub fn new() -> io::Result<Testbed> {
        let gen = Netns::new("pdp-gen")?;
        let dut = Netns::new("pdp-dut")?;
        gen.ip(&format!(
            "link add name g1 type veth peer name d1 netns {dut}\n\
             link add name g2 type veth peer name d2 netns {dut}\n\
             link add name g3 type veth peer name d3 netns {dut}\n\
             link set dev g1 address {g1} up\n\
             link set dev g2 address {g2} up\n\
             link set dev g3 address {g3} up\n",
            dut = dut.name(),
            g1 = mac(&G1_MAC),
            g2 = mac(&G2_DEV_MAC),
            g3 = mac(&G3_MAC),
        ))?;
        dut.ip(&format!(
            "link set dev d1 address {} up\nlink set dev d2 address {} up\n\
             link set dev d3 address {} up\n",
            mac(&D1_MAC),
            mac(&D2_MAC),
            mac(&D3_MAC)
        ))?;
        let (tx, rx, tx3) = gen.enter(|| -> io::Result<(Port, Port, Port)> {
            Ok((Port::open("g1")?, Port::open("g2")?, Port::open("g3")?))
        })??;
        Ok(Testbed {
            tx,
            rx,
            tx3,
            addrs3: None,
            ovs: None,
            pharos: None,
            dut,
            gen,
        })
    }

    /// The Linux bridge between `d1` and `d2`, taught where `g2` is (one frame from
    /// it), so it forwards instead of flooding. Returns the generator's addresses.
    pub fn linux_bridge(&mut self) -> io::Result<Addresses> {
        self.dut.ip("link add name br0 type bridge\n\
             link set dev d1 master br0\n\
             link set dev d2 master br0\n\
             link set dev d3 master br0\n\
             link set dev br0 up\n")?;
        let mut hello = [0u8; 60];
        hello[0..6].copy_from_slice(&G1_MAC);
        hello[6..12].copy_from_slice(&G2_MAC);
        hello[12..14].copy_from_slice(&[0x88, 0xb5]);
        self.rx.send(&hello);
        self.rx.flush()?;
        self.addrs3 = Some(SWITCHED_3);
        Ok(SWITCHED)
    }

    /// Linux IP forwarding from `d1` (10.0.1.1/24) and `d3` (10.0.3.1/24) to `d2`
    /// (10.0.2.1/24), with a permanent neighbour entry for the receiver (10.0.2.2 at
    /// `g2`'s address).
    pub fn ip_forwarding(&mut self) -> io::Result<Addresses> {
        self.dut.ip(&format!(
            "addr add 10.0.1.1/24 dev d1\n\
             addr add 10.0.2.1/24 dev d2\n\
             addr add 10.0.3.1/24 dev d3\n\
             neigh add 10.0.2.2 lladdr {} dev d2 nud permanent\n",
            mac(&G2_MAC)
        ))?;
        self.dut.exec(
            "sysctl",
            &[
                "-qw",
                "net.ipv4.ip_forward=1",
                "net.ipv4.conf.all.rp_filter=0",
                "net.ipv4.conf.d1.rp_filter=0",
                "net.ipv4.conf.d3.rp_filter=0",
            ],
        )?;
        self.addrs3 = Some(Addresses {
            src_mac: G3_MAC,
            dst_mac: D3_MAC,
            src_ip: [10, 0, 3, 2],
            dst_ip: [10, 0, 2, 2],
            src_port: 5000,
            dst_port: 6000,
        });
        Ok(Addresses {
            src_mac: G1_MAC,
            dst_mac: D1_MAC,
            src_ip: [10, 0, 1, 2],
            dst_ip: [10, 0, 2, 2],
            src_port: 5000,
            dst_port: 6000,
        })
    }
}

impl Testbed {
    /// Open vSwitch's userspace data path (dpif-netdev, as `pharos lab` runs it:
    /// `datapath_type=dummy`, its ports read through packet sockets) between `d1` and
    /// `d2` (and `d3`, port 3), with the flows `in_port=1 actions=output:2` and
    /// `in_port=3 actions=output:2`. Its daemons run inside the
    /// device-under-test namespace from a private directory and are stopped (by their
    /// pids) when the test bed is dropped.
    pub fn ovs_userspace(&mut self) -> io::Result<Addresses> {
        let ovs = OvsDaemons::start(&self.dut)?;
        ovs.vsctl(&[
            "add-br",
            "br0",
            "--",
            "set",
            "bridge",
            "br0",
            "datapath_type=dummy",
            "fail_mode=secure",
            "--",
            "add-port",
            "br0",
            "d1",
            "--",
            "set",
            "interface",
            "d1",
            "ofport_request=1",
            "--",
            "add-port",
            "br0",
            "d2",
            "--",
            "set",
            "interface",
            "d2",
            "ofport_request=2",
            "--",
            "add-port",
            "br0",
            "d3",
            "--",
            "set",
            "interface",
            "d3",
            "ofport_request=3",
        ])?;
        for flow in FLOWS {
            ovs.ofctl(&["add-flow", "br0", flow])?;
        }
        self.ovs = Some(ovs);
        self.addrs3 = Some(SWITCHED_3);
        Ok(SWITCHED)
    }
}

impl Testbed {
    /// `pharos switch` (the executable `exe`) between `d1` (port 1), `d2` (port 2) and
    /// `d3` (port 3), speaking OpenFlow 1.3, with the flows `in_port=1
    /// actions=output:2` and `in_port=3 actions=output:2` installed with
    /// `ovs-ofctl` through its management socket (a unix socket: reachable from outside
    /// the namespace). Stopped when the test bed is dropped.
    pub fn pharos_switch(&mut self, exe: &std::path::Path) -> io::Result<Addresses> {
        self.pharos_switch_with(exe, &[])
    }

    /// [`Testbed::pharos_switch`] with `extra` arguments for `pharos switch`
    /// (`--datapath af_xdp`, say).
    pub fn pharos_switch_with(
        &mut self,
        exe: &std::path::Path,
        extra: &[&str],
    ) -> io::Result<Addresses> {
        let dir = std::env::temp_dir().join(format!("{}-pharos", self.dut.name()));
        std::fs::create_dir_all(&dir)?;
        let mgmt = dir.join("sw.mgmt");
        let pidfile = dir.join("sw.pid");
        let _ = std::fs::remove_file(&pidfile);
        let log = std::fs::File::create(dir.join("sw.log"))?;
        let child = std::process::Command::new("ip")
            .args(["netns", "exec", self.dut.name()])
            .arg(exe)
            .args([
                "switch",
                "--dpid",
                "1",
                "--port",
                "1=d1",
                "--port",
                "2=d2",
                "--port",
                "3=d3",
                "--of",
                "1.3",
                "--log-level",
                "warn",
            ])
            .arg("--listen")
            .arg(format!("punix:{}", mgmt.display()))
            .arg("--pidfile")
            .arg(&pidfile)
            .args(extra)
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?;
        let sw = PharosSwitch { child, dir };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !pidfile.exists() {
            if std::time::Instant::now() > deadline {
                let log = std::fs::read_to_string(sw.dir.join("sw.log")).unwrap_or_default();
                return Err(io::Error::other(format!(
                    "pharos switch did not start within 10 s: {}",
                    log.trim()
                )));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        for flow in FLOWS {
            sw.ofctl(&["add-flow", flow])?;
        }
        self.addrs3 = Some(SWITCHED_3);
        self.pharos = Some(sw);
        Ok(SWITCHED)
    }

    /// Replaces the flows of the switch under test (`pharos switch` or Open vSwitch) with
    /// those of `file`, in `ovs-ofctl add-flows` syntax; an error for the kernel's
    /// bridge and forwarding, which have no flows.
    pub fn replace_flows(&self, file: &std::path::Path) -> io::Result<()> {
        let file = file
            .to_str()
            .ok_or_else(|| io::Error::other("a UTF-8 path"))?;
        if let Some(sw) = &self.pharos {
            sw.ofctl(&["del-flows"])?;
            return sw.ofctl(&["add-flows", file]);
        }
        if let Some(ovs) = &self.ovs {
            ovs.ofctl(&["del-flows", "br0"])?;
            return ovs.ofctl(&["add-flows", "br0", file]);
        }
        Err(io::Error::other("the device under test has no flow table"))
    }

    /// The processes of the device under test (`pharos switch`, or `ovs-vswitchd`),
    /// for pinning; none for the kernel's bridge and forwarding.
    pub fn dut_pids(&self) -> Vec<i32> {
        let mut pids = Vec::new();
        if let Some(sw) = &self.pharos {
            if let Ok(t) = std::fs::read_to_string(sw.dir.join("sw.pid")) {
                pids.extend(t.trim().parse::<i32>().ok());
            }
        }
        if let Some(ovs) = &self.ovs {
            if let Ok(t) = std::fs::read_to_string(ovs.dir.join("ovs-vswitchd.pid")) {
                pids.extend(t.trim().parse::<i32>().ok());
            }
        }
        pids
    }

    /// Steers the receive processing of `g2` (the generator receiving what the device
    /// under test sent, otherwise done by the core that sent it: the device under
    /// test's) to `cpu`.
    pub fn steer_generator_receive(&self, cpu: usize) -> io::Result<()> {
        let mask = format!("{:x}", 1u64 << cpu);
        self.gen.exec(
            "sh",
            &[
                "-c",
                &format!("echo {mask} > /sys/class/net/g2/queues/rx-0/rps_cpus"),
            ],
        )
    }

    /// Steers the receive processing of `d1`, `d2` and `d3` (where the bridge and IP
    /// forwarding do their work, and where a switch's packet sockets are fed) to `cpu`
    /// with RPS, instead of the core of the thread that sent into the veth: the
    /// generator's.
    pub fn steer_dut_receive(&self, cpu: usize) -> io::Result<()> {
        let mask = format!("{:x}", 1u64 << cpu);
        self.dut.exec(
            "sh",
            &[
                "-c",
                &format!(
                    "for d in d1 d2 d3; do \
                     echo {mask} > /sys/class/net/$d/queues/rx-0/rps_cpus || exit 1; done"
                ),
            ],
        )
    }
}

/// The switches' first flows: `d1` and `d3` to `d2`.
const FLOWS: [&str; 2] = ["in_port=1,actions=output:2", "in_port=3,actions=output:2"];

/// `pharos switch` run by the test bed.
struct PharosSwitch {
    /// The `ip netns exec ... pharos switch` process, waited for on drop.
    child: std::process::Child,
    /// Its directory: the management socket, the pid file, the log.
    dir: std::path::PathBuf,
}

impl PharosSwitch {
    /// `ovs-ofctl -O OpenFlow13 COMMAND unix:MGMT ARGS...` against the switch.
    fn ofctl(&self, args: &[&str]) -> io::Result<()> {
        let target = format!("unix:{}", self.dir.join("sw.mgmt").display());
        let mut argv = vec!["ovs-ofctl", "-O", "OpenFlow13", args[0], &target];
        argv.extend_from_slice(&args[1..]);
        let mut cmd = std::process::Command::new(argv[0]);
        cmd.args(&argv[1..]);
        checked(&mut cmd, &argv)
    }
}

/// Runs `cmd` (`argv`, for the error) with no input; an error with its stderr if it
/// fails.
fn checked(cmd: &mut std::process::Command, argv: &[&str]) -> io::Result<()> {
    let out = cmd.stdin(std::process::Stdio::null()).output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "{}: {}",
            argv.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

impl Drop for PharosSwitch {
    /// SIGTERM to the switch (it removes its pid file and socket), SIGKILL after 2 s,
    /// then the directory goes.
    fn drop(&mut self) {
        if let Ok(t) = std::fs::read_to_string(self.dir.join("sw.pid")) {
            if let Ok(pid) = t.trim().parse::<libc::pid_t>() {
                // SAFETY: a signal to the switch this test bed started (its pid file).
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) if std::time::Instant::now() > deadline => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
                Ok(None) => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `ovsdb-server` and `ovs-vswitchd` started in a namespace from a private directory.
struct OvsDaemons {
    /// The daemons' run, log and database directory (their pid files there).
    dir: std::path::PathBuf,
}

const OVS_SCHEMA: [&str; 2] = [
    "/usr/share/openvswitch/vswitch.ovsschema",
    "/usr/local/share/openvswitch/vswitch.ovsschema",
];

impl OvsDaemons {
    fn start(ns: &Netns) -> io::Result<OvsDaemons> {
        let dir = std::env::temp_dir().join(format!("{}-ovs", ns.name()));
        std::fs::create_dir_all(&dir)?;
        let ovs = OvsDaemons { dir };
        let d = |f: &str| ovs.dir.join(f).display().to_string();
        let schema = OVS_SCHEMA
            .iter()
            .find(|p| std::path::Path::new(p).is_file())
            .ok_or_else(|| io::Error::other("Open vSwitch's vswitch.ovsschema not found"))?;
        ovs.run(&["ovsdb-tool", "create", &d("conf.db"), schema], None)?;
        ovs.run(
            &[
                "ovsdb-server",
                &d("conf.db"),
                &format!("--remote=punix:{}", d("db.sock")),
                &format!("--pidfile={}", d("ovsdb-server.pid")),
                &format!("--log-file={}", d("ovsdb-server.log")),
                "--detach",
                "--no-chdir",
                "-vconsole:off",
            ],
            Some(ns),
        )?;
        ovs.vsctl(&["--no-wait", "init"])?;
        ovs.run(
            &[
                "ovs-vswitchd",
                &format!("unix:{}", d("db.sock")),
                &format!("--pidfile={}", d("ovs-vswitchd.pid")),
                &format!("--log-file={}", d("ovs-vswitchd.log")),
                "--enable-dummy",
                "--detach",
                "--no-chdir",
                "-vconsole:off",
            ],
            Some(ns),
        )?;
        Ok(ovs)
    }

    fn vsctl(&self, args: &[&str]) -> io::Result<()> {
        let db = format!("--db=unix:{}", self.dir.join("db.sock").display());
        let mut all = vec!["ovs-vsctl", &db, "--timeout=10"];
        all.extend_from_slice(args);
        self.run(&all, None)
    }

    fn ofctl(&self, args: &[&str]) -> io::Result<()> {
        let mut all = vec!["ovs-ofctl"];
        all.extend_from_slice(args);
        self.run(&all, None)
    }

    /// Runs an OVS program with this directory as its run, log and database directory
    /// (inside `ns` when given).
    fn run(&self, argv: &[&str], ns: Option<&Netns>) -> io::Result<()> {
        let mut cmd = match ns {
            Some(ns) => {
                let mut c = std::process::Command::new("ip");
                c.args(["netns", "exec", ns.name()]).args(argv);
                c
            }
            None => {
                let mut c = std::process::Command::new(argv[0]);
                c.args(&argv[1..]);
                c
            }
        };
        cmd.env("OVS_RUNDIR", &self.dir)
            .env("OVS_LOGDIR", &self.dir)
            .env("OVS_DBDIR", &self.dir);
        checked(&mut cmd, argv)
    }
}

impl Drop for OvsDaemons {
    /// Stops each daemon by the pid it wrote (SIGTERM, then SIGKILL after 2 s), then
    /// removes the directory.
    fn drop(&mut self) {
        for name in ["ovs-vswitchd", "ovsdb-server"] {
            let Ok(text) = std::fs::read_to_string(self.dir.join(format!("{name}.pid"))) else {
                continue;
            };
            let Ok(pid) = text.trim().parse::<libc::pid_t>() else {
                continue;
            };
            // Only the daemon this test bed started: check the pid is still it.
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() != name {
                continue;
            }
            // SAFETY: signals to a pid checked above.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
            while std::path::Path::new(&format!("/proc/{pid}")).exists() {
                if std::time::Instant::now() > deadline {
                    // SAFETY: as above.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
