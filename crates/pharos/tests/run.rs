//! `pharos run` as a user runs it: the real binary, a real switch connection, a signal.

use std::io::Read;
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use emu::{host, is_packet_out, output_ports, Emu, Spec, FLOOD};
use testkit::emu;
use testkit::http;

const T: Duration = Duration::from_secs(20);

/// A port nobody listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The running binary, its stderr collected as it comes.
struct Pharos {
    child: Child,
    stderr: Arc<Mutex<String>>,
    /// The thread reading stderr; joined once the process has exited, so that
    /// everything it wrote is in `stderr`.
    reader: Option<thread::JoinHandle<()>>,
}

impl Pharos {
    fn spawn(args: &[&str]) -> Pharos {
        Pharos::spawn_with(args, None)
    }

    /// With `RUST_LOG` set to `rust_log` (unset when `None`).
    fn spawn_with(args: &[&str], rust_log: Option<&str>) -> Pharos {
        Pharos::spawn_env(args, rust_log, &[])
    }

    /// With `RUST_LOG` as in [`Pharos::spawn_with`] and `env` set; `PHAROS_API_TOKEN`
    /// unset unless `env` sets it.
    fn spawn_env(args: &[&str], rust_log: Option<&str>, env: &[(&str, &str)]) -> Pharos {
        let mut command = Command::new(env!("CARGO_BIN_EXE_pharos"));
        command
            .env_remove("PHAROS_API_TOKEN")
            .envs(env.iter().copied());
        match rust_log {
            Some(v) => command.env("RUST_LOG", v),
            None => command.env_remove("RUST_LOG"),
        };
        // The API's default port is one for the whole machine: tests that do not ask
        // for the API run without it, so they can run side by side.
        command.arg("run").args(args);
        if !args.contains(&"--api") {
            command.args(["--api", "off"]);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("pharos starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let sink = Arc::clone(&stderr);
        let reader = thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&chunk[..n]));
            }
        });
        Pharos {
            child,
            stderr,
            reader: Some(reader),
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: kill(2) on our own child's pid.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
        assert_eq!(rc, 0, "kill failed");
    }

    /// Waits for the exit, polling until the deadline (a child has no wait with timeout).
    fn wait(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                if let Some(reader) = self.reader.take() {
                    reader.join().expect("the stderr reader");
                }
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "pharos did not exit; stderr:\n{}",
                self.stderr()
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until stderr holds `text`.
    fn wait_for_log(&self, text: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while !self.stderr().contains(text) {
            assert!(
                Instant::now() < deadline,
                "no {text:?} in stderr:\n{}",
                self.stderr()
            );
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Pharos {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Connects once the process listens (connection refused until then).
fn connect_when_up(addr: SocketAddr, spec: Spec, p: &mut Pharos) -> Emu {
    let deadline = Instant::now() + T;
    loop {
        match Emu::connect_and_handshake(addr, spec.clone(), T) {
            Ok(sw) => return sw,
            Err(e) => {
                if let Some(status) = p.child.try_wait().unwrap() {
                    panic!("pharos exited with {status}; stderr:\n{}", p.stderr());
                }
                assert!(Instant::now() < deadline, "{e}; stderr:\n{}", p.stderr());
                thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

/// Runs `pharos run` with `apps` (none: the default set), sends it an unknown
/// destination, checks how it floods, and stops it with `sig`.
fn runs_and_stops_on(sig: libc::c_int, apps: Option<&str>, flooded_to: &[u32]) {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut argv = vec!["--listen", &listen, "--workers", "1"];
    argv.extend(apps.iter().flat_map(|a| ["--apps", a]));
    let mut p = Pharos::spawn(&argv);
    let mut sw = connect_when_up(listen.parse().unwrap(), Spec::v13(0x5eed), &mut p);
    let frame = emu::frame(host(1), host(2));
    sw.send_packet_in(1, &frame, None).unwrap();
    // (The default set also sends discovery frames out of every port: not this one.)
    let (_, out) = sw
        .wait_for(T, |m| {
            is_packet_out(m) && emu::packet_out_parts(m).is_some_and(|(_, d)| d == frame)
        })
        .unwrap();
    assert_eq!(output_ports(&out), flooded_to);
    p.wait_for_log("00:00:00:00:00:00:5e:ed", T);
    p.signal(sig);
    let status = p.wait(T);
    assert!(status.success(), "exit {status}; stderr:\n{}", p.stderr());
    sw.wait_closed(T).expect("the switch is closed at shutdown");
    let log = p.stderr();
    assert!(log.contains("shutting down"), "{log}");
    assert!(log.contains("shut down cleanly"), "{log}");
    assert!(log.contains("switch connected"), "{log}");
    // One line per disconnect, with the queued messages it lost as a field
    // (`messages_lost=`).
    assert!(
        log.lines()
            .any(|l| l.contains("switch disconnected") && l.contains("lost=")),
        "{log}"
    );
    if apps.is_none() {
        // What the default set learns is said at info level, one readable line each.
        let mac = host(1).to_string();
        let learned = format!("host learned: {mac} 10.0.0.1 at 00:00:00:00:00:00:5e:ed:1");
        let forgotten =
            format!("host forgotten: {mac} 10.0.0.1 at 00:00:00:00:00:00:5e:ed:1 (switch left)");
        assert_eq!(log.matches(&learned).count(), 1, "{log}");
        assert_eq!(log.matches(&forgotten).count(), 1, "{log}");
    }
    for debug in ["Dpid(", "Link {", "Some(", "[\""] {
        assert!(!log.contains(debug), "a Rust structure in the log: {log}");
    }
}

#[test]
fn run_serves_a_switch_with_the_default_apps_and_stops_cleanly_on_sigterm() {
    // Routing floods an unknown destination out of every other port of the spanning
    // tree and the edge (on one switch: all of them), port by port.
    runs_and_stops_on(libc::SIGTERM, None, &[2, 3, 4]);
}

#[test]
fn run_serves_a_switch_with_the_learning_switch_and_stops_cleanly_on_ctrl_c() {
    // The classic mode floods to FLOOD.
    runs_and_stops_on(libc::SIGINT, Some("learning_switch"), &[FLOOD]);
}

#[test]
fn run_reads_apps_and_listen_from_a_config_file() {
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("pharos-run-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("hub.toml");
    let text = format!(
        "listen = [\"127.0.0.1:{port}\"]\nworkers = 1\n[[apps]]\nname = \"hub\"\n[keepalive]\ninterval = \"1s\"\n"
    );
    std::fs::write(&path, text).unwrap();
    let mut p = Pharos::spawn(&["--config", path.to_str().unwrap()]);
    let mut sw = connect_when_up(
        format!("127.0.0.1:{port}").parse().unwrap(),
        Spec::v10(7),
        &mut p,
    );
    // The hub floods even a known destination.
    for _ in 0..2 {
        sw.send_packet_in(1, &emu::frame(host(1), host(2)), None)
            .unwrap();
        sw.send_packet_in(2, &emu::frame(host(2), host(1)), None)
            .unwrap();
    }
    for _ in 0..4 {
        let (_, out) = sw.wait_for(T, is_packet_out).unwrap();
        assert_eq!(output_ports(&out), vec![FLOOD]);
    }
    p.signal(libc::SIGTERM);
    assert!(p.wait(T).success(), "{}", p.stderr());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_config_file_is_refused_naming_the_key() {
    let dir = std::env::temp_dir().join(format!("pharos-run-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pharos.toml");
    std::fs::write(&path, "workers = 2\n\n[keepalive]\ninterval = \"5x\"\n").unwrap();
    let mut p = Pharos::spawn(&[
        "--config",
        path.to_str().unwrap(),
        "--listen",
        "127.0.0.1:1",
    ]);
    let status = p.wait(T);
    assert_eq!(status.code(), Some(2), "{}", p.stderr());
    let err = p.stderr();
    assert!(err.contains("`keepalive.interval`"), "{err}");
    assert!(err.contains("expected e.g. \"5s\" or \"500ms\""), "{err}");
    assert!(
        err.contains(&format!("{}:4", path.display())),
        "file and line: {err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `pharos run` with `args` (and `RUST_LOG`), which must refuse to start: exit
/// status 2 and one message, whose text is returned.
fn refused(args: &[&str], rust_log: Option<&str>) -> String {
    refused_env(args, rust_log, &[])
}

/// [`refused`], with `env` set.
fn refused_env(args: &[&str], rust_log: Option<&str>, env: &[(&str, &str)]) -> String {
    let mut p = Pharos::spawn_env(args, rust_log, env);
    let status = p.wait(T);
    let err = p.stderr();
    assert_eq!(status.code(), Some(2), "{args:?}: {err}");
    assert!(
        err.starts_with("pharos run: ") && err.ends_with('\n') && !err.contains("\n\n"),
        "one message, no blank line: {err:?}"
    );
    err
}

#[test]
fn an_unknown_app_is_refused_with_the_nearest_and_the_known_ones() {
    let err = refused(
        &["--apps", "hub,learnig_switch", "--listen", "127.0.0.1:1"],
        None,
    );
    assert!(err.contains("`--apps`"), "{err}");
    assert!(err.contains("did you mean `learning_switch`?"), "{err}");
    assert!(
        err.contains("the apps are: device_manager, hub, learning_switch, routing, topology"),
        "{err}"
    );
}

#[test]
fn a_bad_log_level_is_refused_wherever_it_is_given() {
    let err = refused(&["--log-level", "verbose", "--listen", "127.0.0.1:1"], None);
    assert!(
        err.contains("`--log-level`: `verbose` is not a log level"),
        "{err}"
    );
    let err = refused(&["--listen", "127.0.0.1:1"], Some("bogus"));
    assert!(
        err.contains("`RUST_LOG`: `bogus` is not a log level"),
        "{err}"
    );
    let dir = std::env::temp_dir().join(format!("pharos-run-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pharos.toml");
    std::fs::write(&path, "workers = 1\nlog_level = \"verbose\"\n").unwrap();
    let err = refused(
        &[
            "--config",
            path.to_str().unwrap(),
            "--listen",
            "127.0.0.1:1",
        ],
        None,
    );
    assert!(
        err.contains(&format!(
            "{}:2: `log_level`: `verbose` is not a log level",
            path.display()
        )),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn warning_is_taken_for_warn_and_conflicting_apps_are_warned_of() {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut p = Pharos::spawn(&[
        "--log-level",
        "warning",
        "--apps",
        "hub,learning_switch",
        "--listen",
        &listen,
    ]);
    p.wait_for_log(
        "apps hub and learning_switch both answer every PACKET_IN",
        T,
    );
    // Running: it accepts connections.
    let deadline = Instant::now() + T;
    while std::net::TcpStream::connect(&listen).is_err() {
        assert!(Instant::now() < deadline, "never listened: {}", p.stderr());
        thread::sleep(Duration::from_millis(10));
    }
    p.signal(libc::SIGTERM);
    assert!(p.wait(T).success(), "{}", p.stderr());
    // At warn level: no info line.
    assert!(!p.stderr().contains(" INFO "), "{}", p.stderr());
}

#[test]
fn routing_alone_is_refused_once_in_the_users_words() {
    let err = refused(&["--apps", "routing", "--listen", "127.0.0.1:1"], None);
    assert_eq!(
        err,
        "pharos run: bad configuration: `--apps`: routing needs topology and device_manager: add them to --apps (or `apps` in the file), e.g. --apps topology,device_manager,routing\n"
    );
}

#[test]
fn misspelt_app_parameters_and_names_in_the_file_give_file_line_and_key() {
    let dir = std::env::temp_dir().join(format!("pharos-run-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pharos.toml");
    std::fs::write(
        &path,
        "[[apps]]\nname = \"topology\"\n[apps.params]\nlldp_intervall = \"1s\"\n",
    )
    .unwrap();
    let err = refused(
        &[
            "--config",
            path.to_str().unwrap(),
            "--listen",
            "127.0.0.1:1",
        ],
        None,
    );
    assert!(
        err.contains(&format!(
            "{}:4: `apps[0].params.lldp_intervall`: topology: unknown parameter (did you mean `lldp_interval`?)",
            path.display()
        )),
        "{err}"
    );
    std::fs::write(
        &path,
        "[[apps]]\nname = \"topology\"\n[[apps]]\nname = \"routeing\"\n",
    )
    .unwrap();
    let err = refused(
        &[
            "--config",
            path.to_str().unwrap(),
            "--listen",
            "127.0.0.1:1",
        ],
        None,
    );
    assert!(
        err.contains(&format!(
            "{}:4: `apps[1].name`: unknown app `routeing` (did you mean `routing`?)",
            path.display()
        )),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn too_many_workers_are_refused_with_the_reason() {
    let err = refused(&["--workers", "100000", "--listen", "127.0.0.1:1"], None);
    assert!(err.contains("`--workers`: 100000 is more than"), "{err}");
    assert!(err.contains("per core"), "{err}");
}

#[test]
fn a_port_in_use_exits_2_naming_the_address() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let listen = taken.local_addr().unwrap().to_string();
    let err = refused(&["--listen", &listen], None);
    assert!(err.contains(&format!("cannot listen on {listen}")), "{err}");
}

/// Waits until `addr` accepts a connection.
fn wait_listening(addr: SocketAddr, p: &mut Pharos) {
    let deadline = Instant::now() + T;
    while std::net::TcpStream::connect(addr).is_err() {
        if let Some(status) = p.child.try_wait().unwrap() {
            panic!("pharos exited with {status}; stderr:\n{}", p.stderr());
        }
        assert!(
            Instant::now() < deadline,
            "nothing on {addr}:\n{}",
            p.stderr()
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_api_runs_with_a_generated_token_in_a_0600_file_that_no_log_line_shows() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = std::env::temp_dir().join(format!("pharos-run-api-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let listen = format!("127.0.0.1:{}", free_port());
    let api: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let api_arg = api.to_string();
    let mut p = Pharos::spawn_env(
        &["--listen", &listen, "--workers", "1", "--api", &api_arg],
        Some("debug"),
        &[("XDG_RUNTIME_DIR", dir.to_str().unwrap())],
    );
    wait_listening(api, &mut p);
    let file = dir.join("pharos").join("api-token");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{}", file.display());
    let token = std::fs::read_to_string(&file).unwrap().trim().to_string();
    assert_eq!(token.len(), 64);
    p.wait_for_log(&format!("REST API token: {}", file.display()), T);

    let r = http::request(api, "GET", "/api/v1/healthz", &[], None);
    assert_eq!((r.status, r.json()["status"].as_str()), (200, Some("ok")));
    let r = http::request(api, "GET", "/api/v1/switches", &[], None);
    assert_eq!((r.status, r.text().as_str()), (200, "[]"));
    let body = Some(&br#"{"up": false}"#[..]);
    let json = ("Content-Type", "application/json");
    let path = "/api/v1/switches/1/ports/1";
    let r = http::request(api, "POST", path, &[json], body);
    assert_eq!(r.status, 401, "{}", r.text());
    let wrong = format!("Bearer {}", "0".repeat(64));
    let r = http::request(api, "POST", path, &[json, ("Authorization", &wrong)], body);
    assert_eq!(r.status, 403, "{}", r.text());
    let right = format!("Bearer {token}");
    let r = http::request(api, "POST", path, &[json, ("Authorization", &right)], body);
    // Past auth: no switch 1 is connected.
    assert_eq!(r.status, 404, "{}", r.text());

    p.signal(libc::SIGTERM);
    let status = p.wait(T);
    assert!(status.success(), "exit {status}; stderr:\n{}", p.stderr());
    let log = p.stderr();
    assert!(
        log.contains("API stopped") && log.contains("shut down cleanly"),
        "{log}"
    );
    assert!(!log.contains(&token), "the token is in the log:\n{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_token_from_the_environment_is_used_and_no_file_is_written() {
    let dir = std::env::temp_dir().join(format!("pharos-run-api-env-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let listen = format!("127.0.0.1:{}", free_port());
    let api: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let api_arg = api.to_string();
    let token = "a-token-given-in-the-environment";
    let mut p = Pharos::spawn_env(
        &["--listen", &listen, "--workers", "1", "--api", &api_arg],
        Some("debug"),
        &[
            ("XDG_RUNTIME_DIR", dir.to_str().unwrap()),
            ("PHAROS_API_TOKEN", token),
        ],
    );
    wait_listening(api, &mut p);
    let body = Some(&br#"{"up": false}"#[..]);
    let auth = format!("Bearer {token}");
    let headers = [
        ("Content-Type", "application/json"),
        ("Authorization", &auth),
    ];
    let r = http::request(api, "POST", "/api/v1/switches/1/ports/1", &headers, body);
    assert_eq!(r.status, 404, "{}", r.text());
    assert!(!dir.join("pharos").exists());
    p.signal(libc::SIGTERM);
    assert!(p.wait(T).success());
    let log = p.stderr();
    assert!(
        log.contains("REST API token: the environment (PHAROS_API_TOKEN)"),
        "{log}"
    );
    assert!(!log.contains(token), "the token is in the log:\n{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_api_port_in_use_exits_2_naming_the_address() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let api = taken.local_addr().unwrap().to_string();
    let listen = format!("127.0.0.1:{}", free_port());
    // Logs off: the controller has started (and said so) when the API's port is found
    // taken; a token given, so that no file is written.
    let err = refused_env(
        &["--listen", &listen, "--api", &api],
        Some("off"),
        &[("PHAROS_API_TOKEN", "t")],
    );
    assert!(
        err.contains(&format!("cannot listen on {api} for the API")),
        "{err}"
    );
}

#[test]
fn a_bad_api_address_or_token_file_is_refused() {
    let err = refused(&["--api", "localhost", "--listen", "127.0.0.1:1"], None);
    assert!(err.contains("`--api`") && err.contains("\"off\""), "{err}");
    let dir = std::env::temp_dir().join(format!("pharos-run-api-tf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("pharos.toml");
    std::fs::write(
        &config,
        "[api]\ntoken_file = \"/nonexistent/pharos-token\"\n",
    )
    .unwrap();
    let listen = format!("127.0.0.1:{}", free_port());
    let api = format!("127.0.0.1:{}", free_port());
    let err = refused(
        &[
            "--config",
            config.to_str().unwrap(),
            "--listen",
            &listen,
            "--api",
            &api,
        ],
        Some("off"),
    );
    assert!(
        err.contains("pharos.toml:2") && err.contains("/nonexistent/pharos-token"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bench_api_loads_a_running_api_and_reports_every_request() {
    let listen = format!("127.0.0.1:{}", free_port());
    let api: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let api_arg = api.to_string();
    let mut p = Pharos::spawn_env(
        &["--listen", &listen, "--workers", "1", "--api", &api_arg],
        None,
        &[("PHAROS_API_TOKEN", "bench-api-token")],
    );
    wait_listening(api, &mut p);
    let url = format!("http://{api}");
    let out = Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args([
            "bench",
            "api",
            "--api",
            &url,
            "--rate",
            "200",
            "--duration",
            "1",
        ])
        .args(["--connections", "2", "--json"])
        .env("PHAROS_API_TOKEN", "bench-api-token")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["url"], format!("{url}/api/v1/switches"));
    assert_eq!(
        (r["sent"].as_u64(), r["ok"].as_u64()),
        (Some(200), Some(200)),
        "{r}"
    );
    assert_eq!(r["unsent"], 0);
    assert_eq!(r["latency"]["samples"], 200);
    // `[]`: no switch is connected.
    assert_eq!(r["mean_body_bytes"], 2.0);
    // A path the API does not have: every request counted as an error, exit 1.
    let out = Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args(["bench", "api", "--api", &url, "--path", "/api/v1/nothing"])
        .args(["--rate", "50", "--duration", "0.2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("error status 404: 10"), "{text}");
    // Not loopback: refused before any request.
    let out = Command::new(env!("CARGO_BIN_EXE_pharos"))
        .args(["bench", "api", "--api", "http://192.0.2.1:8080"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--allow-remote"), "{err}");
    p.signal(libc::SIGTERM);
    assert!(p.wait(T).success(), "{}", p.stderr());
}

#[test]
fn a_static_flows_state_file_that_does_not_parse_stops_start_up_naming_it() {
    let dir = std::env::temp_dir().join(format!("pharos-run-static-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("static-flows.json");
    std::fs::write(&state, "{\"format\": 1, \"flows\": [").unwrap();
    let config = dir.join("pharos.toml");
    std::fs::write(
        &config,
        format!(
            "[static_flows]\nstate_file = {:?}\n",
            state.to_str().unwrap()
        ),
    )
    .unwrap();
    let err = refused(
        &[
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ],
        None,
    );
    assert!(
        err.contains(&format!(
            "static flows' state file {}: is not a static flows file",
            state.display()
        )) && err.contains("line 1"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_raises_its_open_file_limit_as_far_as_max_connections_needs() {
    use std::os::unix::process::CommandExt;
    let port = free_port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_pharos"));
    command
        .args(["run", "--listen", &addr.to_string(), "--api", "off"])
        .args(["--apps", "hub", "--log-level", "warn"])
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // Started with the soft limit of a login shell's default, 1024.
    // SAFETY: only async-signal-safe calls (getrlimit, setrlimit) between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let mut lim = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
                lim.rlim_cur = lim.rlim_max.min(1024);
                libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            }
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    let deadline = Instant::now() + T;
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "pharos run did not listen");
        thread::sleep(Duration::from_millis(20));
    }
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", child.id())).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let nums: Vec<u64> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let (soft, hard) = (nums[0], nums[1]);
    // max_connections (20,000 by default) and 256 for the rest.
    let want = 20_256u64;
    assert_eq!(soft, want.min(hard), "{line}");
    // Warned of only when even the hard limit is below max_connections.
    assert_eq!(
        stderr.contains("open-file limit"),
        hard < 20_000,
        "{line}\n{stderr}"
    );
}
