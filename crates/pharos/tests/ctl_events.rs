//! `pharos ctl events`, `paths` and `apps` end to end: the real binary against a real
//! `pharos run` with its API on a free port, emulated switches cabled together so
//! discovery finds the link.

mod ctl_kit;

use std::cell::RefCell;
use std::io::BufRead as _;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use ctl_kit::*;
use emu::{host, Spec};
use testkit::emu;

const DP1: &str = "00:00:00:00:00:00:00:01";
const DP2: &str = "00:00:00:00:00:00:00:02";

/// `pharos ctl events ARGS` running, its lines coming on a channel as they are printed.
struct Follow {
    child: Child,
    lines: mpsc::Receiver<String>,
    /// Every line read so far.
    seen: RefCell<Vec<String>>,
}

impl Follow {
    fn start(c: &Controller, args: &[&str]) -> Follow {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pharos"))
            .args(["ctl", "--api", &c.api.to_string(), "events"])
            .args(args)
            .env_remove("PHAROS_API_TOKEN")
            .env("XDG_RUNTIME_DIR", c.runtime.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("pharos ctl events starts");
        let out = std::io::BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Follow {
            child,
            lines,
            seen: RefCell::new(Vec::new()),
        }
    }

    /// The next line that satisfies `want`, skipping others; panics at the deadline.
    fn until(&self, want: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + T;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    self.seen.borrow_mut().push(l.clone());
                    if want(&l) {
                        return l;
                    }
                }
                Err(_) => panic!("no such event; saw:\n{}", self.seen.borrow().join("\n")),
            }
        }
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until every follower is subscribed: a probe switch connects, again, until each
/// has printed a probe's connection (a stream opened after an event does not get it).
fn subscribed(c: &Controller, followers: &[&Follow]) {
    const PROBE: &str = "00:00:00:00:00:00:00:63";
    for f in followers {
        let deadline = Instant::now() + T;
        loop {
            let probe = c.connect(Spec::v13(0x63));
            drop(probe);
            let got = f.lines.recv_timeout(Duration::from_millis(500));
            if let Ok(l) = got {
                f.seen.borrow_mut().push(l.clone());
                if l.contains(PROBE) && l.contains("connected") {
                    break;
                }
            }
            assert!(Instant::now() < deadline, "a follower never subscribed");
        }
    }
}

#[test]
fn events_follow_switches_links_ports_and_hosts_live() {
    let c = Controller::start("events");
    let all = Follow::start(&c, &[]);
    let links = Follow::start(&c, &["--types", "link,switch"]);
    let json = Follow::start(&c, &["--json", "--types", "switch"]);
    subscribed(&c, &[&all, &links, &json]);

    let mut sw1 = c.connect(Spec::v13(1));
    let sw2 = c.connect(Spec::v10(2));
    let line = all.until(|l| l.contains("switch  connected") && l.contains(DP1));
    assert!(
        line.contains("version=1.3") && line.contains("n_ports=4"),
        "{line}"
    );
    let doc: serde_json::Value = serde_json::from_str(
        &json.until(|l| l.contains(DP1) && l.contains(r#""event":"connected""#)),
    )
    .expect("a JSON line");
    assert_eq!(doc["event"], "switch");
    assert_eq!(doc["data"]["event"], "connected");
    assert_eq!(doc["data"]["version"], "1.3");

    // A host, a cable: their events, and `--types link` gets links only.
    sw1.send_packet_in(3, &emu::frame(host(1), host(2)), None)
        .unwrap();
    let line = all.until(|l| l.contains("host    added"));
    assert!(
        line.contains(&format!("mac={} attachment={DP1}/3", host(1))),
        "{line}"
    );
    let cable = Cable::new(sw1, sw2);
    let line = links.until(|l| l.contains("  link  "));
    assert!(line.contains("link    added"), "{line}");
    assert!(
        line.contains(&format!("link={DP1}/1->{DP2}/1"))
            || line.contains(&format!("link={DP2}/1->{DP1}/1")),
        "{line}"
    );

    // The routing engine's path over it.
    let out = c.ctl_until(&["paths", "1", "2"], |o| o.code == Some(0));
    assert_eq!(
        out.stdout,
        format!(
            "from:  {DP1}\nto:    {DP2}\nlinks: 1\n\n\
             HOP  DPID                     IN_PORT  OUT_PORT\n\
             1    {DP1}  -        1\n\
             2    {DP2}  1        -\n"
        )
    );
    let out = c.ctl(&["paths", "1", "9"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.starts_with("pharos ctl: 404 Not Found: "),
        "{}",
        out.stderr
    );

    // A switch that leaves: its event, with the reason.
    let (sw1, sw2) = cable.take();
    drop(sw2);
    let line = all.until(|l| l.contains("switch  disconnected") && l.contains(DP2));
    assert!(line.contains("reason="), "{line}");
    // A port whose link goes down (PORT_STATUS, reason modify, OFPPS_LINK_DOWN).
    let mut sw1 = sw1;
    sw1.send_port_status(2, 3, 0, 1).unwrap();
    let line = all.until(|l| l.contains("  port  "));
    assert!(
        line.contains(&format!(
            "port    down          dpid={DP1} port=3(eth3) was_up=true"
        )),
        "{line}"
    );
    drop(sw1);

    // The filter: the link follower got no host event (the others did).
    assert!(
        links.seen.borrow().iter().all(|l| !l.contains("  host  ")),
        "{:?}",
        links.seen.borrow()
    );
    assert!(all.seen.borrow().iter().any(|l| l.contains("  host  ")));

    // Handler times on /apps.
    let out = c.ctl_until(&["apps"], |o| o.stdout.contains("PACKET_IN"));
    assert!(out.stdout.contains("APP "), "{}", out.stdout);
}
