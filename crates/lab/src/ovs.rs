//! Open vSwitch switches: the lab's own `ovsdb-server` and `ovs-vswitchd` (from the lab
//! directory, see the crate doc), one bridge per switch in one `ovs-vsctl` transaction,
//! and the check that every port came up with the number asked for.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::cmd::Cmd;
use crate::procfs::daemon_pid;
use crate::state::Daemon;
use crate::tools::Tools;
use crate::{ControlTarget, Lab, LabError};

/// The longest wait between a switch's attempts to reach its controller (OVS's minimum;
/// its default is 8 s).
const MAX_BACKOFF_MS: u32 = 1000;

/// Timeout of every ovs-vsctl call (it blocks forever without ovs-vswitchd otherwise).
const VSCTL_TIMEOUT: u64 = 10;

fn flag_path(flag: &str, p: &Path) -> std::ffi::OsString {
    let mut s = std::ffi::OsString::from(flag);
    s.push(p);
    s
}

pub(crate) fn vsctl(tools: &Tools, dir: &Path) -> Cmd {
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

impl Lab {
    fn ovs_env(&self, c: Cmd) -> Cmd {
        c.env("OVS_RUNDIR", &self.dir)
            .env("OVS_LOGDIR", &self.dir)
            .env("OVS_DBDIR", &self.dir)
    }

    pub(crate) fn vsctl(&self) -> Cmd {
        vsctl(&self.tools, &self.dir)
    }

    /// For a lab over TLS, the switches' certificate, key and CA. One certificate for
    /// every switch: Open vSwitch has one SSL configuration per ovs-vswitchd, used by every
    /// `ssl:` controller connection.
    pub(crate) fn set_ssl(&self) -> Result<(), LabError> {
        if let Some(t) = &self.state.tls {
            self.run(
                self.vsctl()
                    .arg("set-ssl")
                    .arg(&t.switch_key)
                    .arg(&t.switch_cert)
                    .arg(&t.ca_cert)
                    .label("ovs-vsctl set-ssl"),
            )?;
        }
        Ok(())
    }

    pub(crate) fn start_daemons(&mut self) -> Result<(), LabError> {
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

    /// `ovs-vsctl add-br` of switch `num` with its ports and controller, one transaction.
    pub(crate) fn bridge_cmd(&self, num: u32) -> Cmd {
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

    pub(crate) fn make_bridges(&mut self) -> Result<(), LabError> {
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

    /// Checks that every port of the lab's bridges (or of one) came up with the port number
    /// asked for: ovs-vsctl succeeds even when a bridge or port fails to come up.
    pub(crate) fn check_interfaces(&self, only: Option<u32>) -> Result<(), LabError> {
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

    pub(crate) fn vswitchd_pid(&self) -> Option<i32> {
        self.state
            .daemons
            .iter()
            .find(|d| d.name == "ovs-vswitchd")
            .and_then(|d| daemon_pid(&self.dir, d))
    }
}
