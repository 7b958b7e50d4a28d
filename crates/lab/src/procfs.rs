//! The lab's processes as /proc shows them: whether a daemon's pid file names a live
//! process of this lab, stopping one, and the OpenFlow connections a switch process has
//! established (its socket inodes, matched against /proc/PID/net/tcp).

use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::state::Daemon;

/// The pid of `daemon` if its pid file names a live process with the expected name that
/// belongs to the lab in `dir` (its command line mentions the directory), else `None`.
pub(crate) fn daemon_pid(dir: &Path, daemon: &Daemon) -> Option<i32> {
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
pub(crate) fn stop_pid(pid: i32, grace: Duration) -> bool {
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
pub(crate) fn established_to_port(pid: i32, port: u16) -> usize {
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
#[cfg(test)]
mod tests {
    use super::*;

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
