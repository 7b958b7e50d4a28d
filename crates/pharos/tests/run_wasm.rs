//! `pharos run --wasm-app`: a WebAssembly app loaded at start, with its order and
//! parameters, in front of a built-in app, on a real switch connection; and the flag's
//! mistakes refused with exit status 2, naming the flag.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use emu::{host, is_packet_out, packet_out_parts, Emu, Spec};
use openflow::{of13, Message};
use testkit::emu;

const T: Duration = Duration::from_secs(10);
const FIREWALL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../wasm/prebuilt/pharos_wasm_firewall.wasm"
);

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// `pharos run ARGS --api off`, killed when dropped.
struct Run(Child);

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn pharos(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pharos"));
    c.arg("run")
        .args(args)
        .args(["--api", "off"])
        .env_remove("RUST_LOG")
        .stdin(Stdio::null());
    c
}

/// An IPv4 TCP SYN from host 1 to host 2, to port `port`.
fn tcp(port: u16) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&host(2).0);
    f.extend_from_slice(&host(1).0);
    f.extend_from_slice(&[0x08, 0x00]);
    f.extend_from_slice(&[0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0]);
    f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
    f.extend_from_slice(&40000u16.to_be_bytes());
    f.extend_from_slice(&port.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0]);
    f.resize(60, 0);
    f
}

#[test]
fn a_wasm_app_given_on_the_command_line_runs_with_its_order_and_parameters() {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let app = format!("fw@advise:0={FIREWALL}");
    let args = [
        "--listen",
        &listen,
        "--workers",
        "1",
        "--apps",
        "hub",
        "--wasm-app",
        &app,
        "--wasm-params",
        r#"fw={"deny_tcp": [22]}"#,
    ];
    let mut cmd = pharos(&args);
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let mut run = Run(cmd.spawn().expect("pharos starts"));
    let deadline = Instant::now() + T;
    let mut sw = loop {
        match Emu::connect_and_handshake(listen.parse().unwrap(), Spec::v13(0x77), T) {
            Ok(sw) => break sw,
            Err(e) => {
                let exited = run.0.try_wait().unwrap();
                assert!(exited.is_none(), "pharos exited: {exited:?}");
                assert!(Instant::now() < deadline, "{e}");
                thread::sleep(Duration::from_millis(20));
            }
        }
    };
    // Port 22: the firewall (advise:0, before the hub) installs a drop flow and stops it.
    let ssh = tcp(22);
    sw.send_packet_in(1, &ssh, None).unwrap();
    let is_drop_flow = |m: &Message| match m {
        Message::V13(of13::Message::FlowMod(fm)) => fm.priority == 0x9000,
        _ => false,
    };
    sw.wait_for(T, is_drop_flow)
        .expect("the firewall's drop flow");
    // Port 80: the firewall lets it through and the hub floods it.
    let web = tcp(80);
    sw.send_packet_in(1, &web, None).unwrap();
    let flooded = |m: &Message| packet_out_parts(m).is_some_and(|(_, d)| d == web);
    sw.wait_for(T, flooded).expect("the hub floods port 80");
    let ssh_out = sw
        .log
        .iter()
        .any(|(_, m)| is_packet_out(m) && packet_out_parts(m).is_some_and(|(_, d)| d == ssh));
    assert!(!ssh_out, "the firewall stopped port 22 before the hub");
}

/// Runs `pharos run ARGS`, which must exit 2; its stderr.
fn refused(args: &[&str]) -> String {
    let out = pharos(args).output().expect("pharos runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    err
}

#[test]
fn mistakes_in_wasm_apps_are_refused_naming_the_flag() {
    let l = ["--listen", "127.0.0.1:1"];
    let err = refused(&[&l[..], &["--wasm-app", "fw"]].concat());
    assert!(
        err.contains("`--wasm-app`") && err.contains("expected NAME=FILE.wasm"),
        "{err}"
    );
    let err = refused(&[&l[..], &["--wasm-app", "fw=/nonexistent/fw.wasm"]].concat());
    assert!(err.contains("/nonexistent/fw.wasm"), "{err}");
    let bad_order = format!("fw@sideways:1={FIREWALL}");
    let err = refused(&[&l[..], &["--wasm-app", &bad_order]].concat());
    assert!(err.contains("advise, direct or observe"), "{err}");
    let err = refused(&[&l[..], &["--wasm-params", "fw={}"]].concat());
    assert!(
        err.contains("`--wasm-params`") && err.contains("no --wasm-app"),
        "{err}"
    );
    let app = format!("fw={FIREWALL}");
    let params = r#"fw={"deny_tcp": [ssh]}"#;
    let err = refused(&[&l[..], &["--wasm-app", &app, "--wasm-params", params]].concat());
    assert!(err.contains("init refused: deny_tcp: ssh"), "{err}");
}
