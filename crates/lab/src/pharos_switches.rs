//! Pharos switches (`up --switch pharos`): one `pharos switch` process per switch, in
//! its own process group, its pid file and log (`sN.pid`, `sN.log`) in the lab
//! directory. Its command line is [`crate::pharos::SwitchCommand`]'s.

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::procfs::{daemon_pid, stop_pid};
use crate::state::Daemon;
use crate::{pharos, ControlTarget, Lab, LabError};

impl Lab {
    /// One `pharos switch` per switch, recorded before it is started (`down` stops
    /// every switch recorded, whichever were started), then waited for.
    pub(crate) fn start_pharos_switches(&mut self) -> Result<(), LabError> {
        let nums: Vec<u32> = self.topo.switches.iter().map(|s| s.num).collect();
        self.state.daemons = nums
            .iter()
            .map(|&n| Daemon {
                name: pharos::SWITCH_COMM.into(),
                pidfile: self.pharos_pidfile(n),
            })
            .collect();
        self.save()?;
        for &n in &nums {
            self.spawn_pharos_switch(n)?;
        }
        self.wait_pharos_switches(&nums)
    }

    fn pharos_pidfile(&self, num: u32) -> PathBuf {
        self.dir.join(format!("s{num}.pid"))
    }

    fn pharos_log(&self, num: u32) -> PathBuf {
        self.dir.join(format!("s{num}.log"))
    }

    /// The pid of Pharos switch `num`, if it runs.
    pub(crate) fn pharos_switch_pid(&self, num: u32) -> Option<i32> {
        daemon_pid(
            &self.dir,
            &Daemon {
                name: pharos::SWITCH_COMM.into(),
                pidfile: self.pharos_pidfile(num),
            },
        )
    }

    /// Pharos switch `num` as it is started: its datapath id, its ports (numbered as
    /// Open vSwitch's would be), the controller and its OpenFlow version, and the rest as
    /// Open vSwitch is given it (the TLS files of `set-ssl`, one certificate for all; the
    /// management socket where a bridge has its own).
    fn switch_command(&self, num: u32) -> pharos::SwitchCommand {
        let s = self.topo.switch(num).expect("switch exists");
        let controller = match self.control_target() {
            ControlTarget::Connect(addr) => Some(pharos::SwitchController::Connect(addr)),
            // Switch sN waits for its controller on 127.0.0.1:PORT+N-1, as a bridge does.
            ControlTarget::Listen(_) => self
                .switch_listen_addr(num)
                .map(pharos::SwitchController::Listen),
            ControlTarget::None => None,
        };
        pharos::SwitchCommand {
            name: format!("{}-s{num}", self.state.name),
            dpid: s.dpid,
            of: self.of.for_switch(num),
            pidfile: self.pharos_pidfile(num),
            mgmt_socket: self.dir.join(format!("{}.mgmt", self.names.bridge(num))),
            controller,
            tls: self.state.tls.as_ref().map(|t| pharos::SwitchTls {
                private_key: t.switch_key.clone(),
                certificate: t.switch_cert.clone(),
                ca_cert: t.ca_cert.clone(),
            }),
            datapath: self.state.pharos_datapath.clone(),
            ports: self
                .topo
                .ports(num)
                .into_iter()
                .map(|(port, _, _)| (port, self.names.switch_iface(num, port)))
                .collect(),
        }
    }

    /// Starts Pharos switch `num` in the background (its own process group, so a Ctrl-C
    /// of `pharos lab up` does not reach it), its output appended to `sN.log`.
    pub(crate) fn spawn_pharos_switch(&self, num: u32) -> Result<(), LabError> {
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
        let args = self.switch_command(num).argv();
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
    pub(crate) fn wait_pharos_switches(&self, nums: &[u32]) -> Result<(), LabError> {
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
    pub(crate) fn stop_pharos_switch(&self, num: u32) -> Result<(), LabError> {
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
}
