//! What the lab knows of Pharos itself: the command line of `pharos switch` and the part
//! of `pharos run`'s settings file it writes, each a typed value rendered in one place.
//!
//! DESIGN.md has the lab know nothing of OpenFlow beyond pointing switches at a
//! controller. It does start Pharos in two ways, though: a lab of Pharos switches
//! (`up --switch pharos`) runs one `pharos switch` per switch, and a lab over TLS with a
//! PKI of its own writes the controller's `[[listen]]` entry (`pki/controller.toml`) for
//! `pharos run --config`. Both are Pharos's interfaces, not the lab's, so they live
//! here and nowhere else:
//!
//! ```text
//! SwitchCommand  one `pharos switch`: name, dpid, version, pid file, management
//!                socket, controller, TLS files, data path, ports   ── argv() ──►  argv
//! RunConfig      `pharos run --config`: the OpenFlow listeners     ── to_toml() ──► TOML
//! ```
//!
//! Why this shape. Each struct holds only what the lab decides, typed (a [`SocketAddr`],
//! a path, an [`OfVersion`]), so that the lab cannot build a value the other side would
//! refuse: `ssl:` follows from the TLS files being there, a listening controller is an
//! address rather than a string to get right. Rendering is one function per struct, the
//! only code that names a flag or a key. The lab cannot check the result against
//! Pharos's own definitions itself (the `pharos` binary depends on this crate, not the
//! other way round), so the binary's tests do (`crates/pharos/src/lab.rs`): they parse
//! [`SwitchCommand::argv`] with the real clap parser of `pharos switch`, and load
//! [`RunConfig::to_toml`] through `pharos run`'s own configuration reader. A flag or key
//! renamed on one side then fails a unit test, not a lab. The TOML is written by the
//! `toml` crate from serde types, which quotes paths as TOML requires.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

use serde::Serialize;

use crate::pki::Pki;
use crate::{LabError, OfVersion};

/// The process name (`/proc/PID/comm`) of a `pharos switch`: the binary's own name. It
/// is how a lab tells its switch from another process that took its pid.
pub const SWITCH_COMM: &str = "pharos";

/// Where a Pharos switch's OpenFlow channel goes (`pharos switch --controller`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwitchController {
    /// Connect to the controller at this address: `tcp:ADDR`, or `ssl:ADDR` when the
    /// command has [`SwitchCommand::tls`].
    Connect(SocketAddr),
    /// Wait for a controller to connect on this address (`ptcp:PORT:IP`).
    Listen(SocketAddr),
}

/// The files of a Pharos switch's TLS connection to its controller: the same three
/// Open vSwitch is given with `ovs-vsctl set-ssl`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchTls {
    /// The switch's private key (PEM), `--private-key`.
    pub private_key: PathBuf,
    /// The switch's certificate (PEM), `--certificate`.
    pub certificate: PathBuf,
    /// The CA the controller's certificate must be signed by (PEM), `--ca-cert`.
    pub ca_cert: PathBuf,
}

/// One `pharos switch` as the lab starts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchCommand {
    /// The switch's name in its description and its log (`lab-s1`), `--name`.
    pub name: String,
    /// The datapath id, `--dpid`, written as Open vSwitch writes it (16 hex digits), so
    /// that both kinds of switch of a lab are given the same text.
    pub dpid: u64,
    /// The OpenFlow version it offers, `--of`. A lab gives each switch one
    /// ([`OfVersion::for_switch`]); [`OfVersion::Mixed`] would offer both.
    pub of: OfVersion,
    /// Where the switch writes its pid once its ports are open, `--pidfile`: the lab
    /// waits for it, and stops the switch by it.
    pub pidfile: PathBuf,
    /// The Unix socket it accepts management connections on, `--listen punix:PATH`:
    /// where Open vSwitch has a bridge's (`BRIDGE.mgmt` in the lab directory), so that
    /// `ovs-ofctl` reaches either kind of switch.
    pub mgmt_socket: PathBuf,
    /// Its controller, if it has one (`--controller`).
    pub controller: Option<SwitchController>,
    /// The TLS files of its controller connection: `Some` makes it `ssl:`.
    pub tls: Option<SwitchTls>,
    /// How its ports reach their interfaces (`--datapath af_xdp`...); `None`: the
    /// switch's default.
    pub datapath: Option<String>,
    /// Its ports: the OpenFlow number and the interface, `--port N=IFNAME` each, in
    /// this order.
    pub ports: Vec<(u16, String)>,
}

impl SwitchCommand {
    /// The arguments of the `pharos` binary that run this switch, `switch` first.
    pub fn argv(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            "switch".into(),
            "--name".into(),
            self.name.clone().into(),
            "--dpid".into(),
            openflow::Dpid(self.dpid).to_string().into(),
            "--of".into(),
            match self.of {
                OfVersion::V10 => "1.0",
                OfVersion::V13 => "1.3",
                OfVersion::Mixed => "both",
            }
            .into(),
            "--pidfile".into(),
            self.pidfile.clone().into(),
            "--listen".into(),
            {
                let mut l = OsString::from("punix:");
                l.push(&self.mgmt_socket);
                l
            },
        ];
        if let Some(c) = &self.controller {
            args.push("--controller".into());
            args.push(match c {
                SwitchController::Connect(addr) if self.tls.is_some() => {
                    format!("ssl:{addr}").into()
                }
                SwitchController::Connect(addr) => format!("tcp:{addr}").into(),
                SwitchController::Listen(addr) => {
                    format!("ptcp:{}:{}", addr.port(), addr.ip()).into()
                }
            });
        }
        if let Some(t) = &self.tls {
            for (flag, file) in [
                ("--private-key", &t.private_key),
                ("--certificate", &t.certificate),
                ("--ca-cert", &t.ca_cert),
            ] {
                args.push(flag.into());
                args.push(file.into());
            }
        }
        if let Some(d) = &self.datapath {
            args.push("--datapath".into());
            args.push(d.into());
        }
        for (port, iface) in &self.ports {
            args.push("--port".into());
            args.push(format!("{port}={iface}").into());
        }
        args
    }
}

/// The part of `pharos run`'s settings file (`--config`) the lab writes: the
/// controller's OpenFlow listeners (`[[listen]]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunConfig {
    /// The controller's listeners, `[[listen]]` each.
    pub listen: Vec<Listener>,
}

/// One `[[listen]]` entry of `pharos run`'s settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listener {
    /// Where the controller listens (`addr`).
    pub addr: SocketAddr,
    /// `Some`: the port speaks TLS only (`tls`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<ListenerTls>,
}

/// A listener's TLS: the controller's certificate and key, and the CA the switches'
/// certificates must be signed by (switches must present one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListenerTls {
    /// The controller's certificate (PEM), `cert`.
    pub cert: PathBuf,
    /// The controller's private key (PEM), `key`.
    pub key: PathBuf,
    /// The CA the switches' certificates must be signed by (PEM), `client_ca`.
    pub client_ca: PathBuf,
}

impl RunConfig {
    /// One TLS listener on `addr` with the controller's certificate of `pki`, switches
    /// authenticated by its CA: what a lab over TLS needs of its controller.
    pub fn tls_listener(addr: SocketAddr, pki: &Pki) -> RunConfig {
        RunConfig {
            listen: vec![Listener {
                addr,
                tls: Some(ListenerTls {
                    cert: pki.controller_cert.clone(),
                    key: pki.controller_key.clone(),
                    client_ca: pki.ca_cert.clone(),
                }),
            }],
        }
    }

    /// The settings as TOML, as `pharos run --config` reads them. Fails only for a path
    /// that is not UTF-8 (TOML strings are).
    pub fn to_toml(&self) -> Result<String, LabError> {
        toml::to_string(self)
            .map_err(|e| LabError::Other(format!("cannot write pharos run's settings: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn command() -> SwitchCommand {
        SwitchCommand {
            name: "t1-s2".into(),
            dpid: 2,
            of: OfVersion::V13,
            pidfile: "/run/pharos-lab/t1/s2.pid".into(),
            mgmt_socket: "/run/pharos-lab/t1/t1-s2.mgmt".into(),
            controller: Some(SwitchController::Connect("127.0.0.1:6653".parse().unwrap())),
            tls: None,
            datapath: None,
            ports: vec![(1, "t1-s2-eth1".into()), (2, "t1-s2-eth2".into())],
        }
    }

    fn strings(argv: Vec<OsString>) -> Vec<String> {
        argv.into_iter().map(|a| a.into_string().unwrap()).collect()
    }

    #[test]
    fn a_switch_command_line_in_the_order_the_lab_always_gave_it() {
        assert_eq!(
            strings(command().argv()).join(" "),
            "switch --name t1-s2 --dpid 00:00:00:00:00:00:00:02 --of 1.3 \
             --pidfile /run/pharos-lab/t1/s2.pid --listen punix:/run/pharos-lab/t1/t1-s2.mgmt \
             --controller tcp:127.0.0.1:6653 --port 1=t1-s2-eth1 --port 2=t1-s2-eth2"
        );
    }

    #[test]
    fn tls_makes_the_controller_ssl_and_a_listening_switch_waits_on_its_address() {
        let mut c = command();
        c.tls = Some(SwitchTls {
            private_key: "/k.pem".into(),
            certificate: "/c.pem".into(),
            ca_cert: "/ca.pem".into(),
        });
        c.datapath = Some("af_xdp".into());
        c.controller = Some(SwitchController::Connect("[::1]:6654".parse().unwrap()));
        let argv = strings(c.argv()).join(" ");
        assert!(
            argv.contains(
                "--controller ssl:[::1]:6654 --private-key /k.pem --certificate /c.pem \
                 --ca-cert /ca.pem --datapath af_xdp --port 1="
            ),
            "{argv}"
        );
        c.tls = None;
        c.controller = Some(SwitchController::Listen("127.0.0.1:6655".parse().unwrap()));
        let argv = strings(c.argv()).join(" ");
        assert!(argv.contains("--controller ptcp:6655:127.0.0.1 "), "{argv}");
        c.controller = None;
        assert!(!strings(c.argv()).contains(&"--controller".to_string()));
    }

    /// Moved from `pki.rs` (`the_listen_entry_is_toml`, of `Pki::listen_toml`): the entry
    /// is TOML, its paths quoted however odd.
    #[test]
    fn the_listen_entry_is_toml() {
        let pki = Pki::in_dir(Path::new("/tmp/a \"b\"\\c"));
        let t = RunConfig::tls_listener("127.0.0.1:6654".parse().unwrap(), &pki)
            .to_toml()
            .unwrap();
        let v: toml::Value = toml::from_str(&t).unwrap();
        let l = &v["listen"][0];
        assert_eq!(l["addr"].as_str(), Some("127.0.0.1:6654"));
        assert_eq!(
            l["tls"]["client_ca"].as_str(),
            Some("/tmp/a \"b\"\\c/ca.pem")
        );
        assert_eq!(
            l["tls"]["key"].as_str(),
            Some("/tmp/a \"b\"\\c/controller-key.pem")
        );
        assert_eq!(
            l["tls"]["cert"].as_str(),
            Some("/tmp/a \"b\"\\c/controller.pem")
        );
    }
}
