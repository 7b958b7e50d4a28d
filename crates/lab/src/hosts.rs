//! The hosts: network namespaces (or probe interfaces) and the veths that join them and
//! the switches, made the same for either kind of switch; and what a user does as a host
//! (`exec`, `send`, `recv`).

use std::fs;
use std::process::ExitStatus;
use std::time::Duration;

use crate::cmd::Cmd;
use crate::kernel::{batch_timeout, disable_ipv6, etc_netns, netns_exists};
use crate::names::Names;
use crate::topo::{self, Node};
use crate::{frame, Lab, LabError};

impl Lab {
    /// The root-namespace veth ends, in link order.
    pub(crate) fn root_veths(&self) -> Vec<String> {
        let mut v = Vec::new();
        for l in &self.topo.links {
            v.extend(self.names.root_iface(l.a, l.port_a));
            v.extend(self.names.root_iface(l.b, l.port_b));
        }
        v
    }

    /// The hosts (namespaces) or the probe interfaces, and every veth: the same for
    /// either kind of switch.
    pub(crate) fn make_hosts_and_links(&mut self) -> Result<(), LabError> {
        if self.state.probe {
            self.make_veths()?;
            self.configure_probes()
        } else {
            self.make_namespaces()?;
            self.make_veths()?;
            self.configure_hosts()
        }
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
    pub(crate) fn configure_host(&self, h: &topo::Host) -> Result<(), LabError> {
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

    /// The namespace and interface of host `host`.
    pub(crate) fn host_iface(&self, host: &str) -> Result<(String, String), LabError> {
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
}
