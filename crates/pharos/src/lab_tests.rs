//! The tests of `pharos lab`'s command line (lab.rs), and of the lab's seam to Pharos
//! (`lab::pharos`): what the lab renders, read by the real parsers of `pharos switch`
//! and `pharos run`.

use super::*;
use clap::Parser;

#[derive(Debug, Parser)]
struct Cli {
    #[command(subcommand)]
    cmd: Top,
}

#[derive(Debug, Subcommand)]
enum Top {
    Lab(Args),
}

fn parse(argv: &[&str]) -> Command {
    let mut v = vec!["pharos", "lab"];
    v.extend_from_slice(argv);
    match Cli::try_parse_from(v).unwrap().cmd {
        Top::Lab(a) => a.command,
    }
}

#[test]
fn up_defaults() {
    let Command::Up(a) = parse(&["up", "--topo", "linear,3"]) else {
        panic!()
    };
    assert_eq!(a.of, "1.3");
    assert_eq!(a.controller, "tcp:127.0.0.1:6653");
    assert_eq!(a.common.name, "lab");
}

#[test]
fn a_switch_datapath_needs_pharos_switches_and_a_known_name() {
    let Command::Up(a) = parse(&["up", "--topo", "linear,3", "--switch-datapath", "af_xdp"]) else {
        panic!()
    };
    assert_eq!(a.switch_datapath.map(|d| d.name()), Some("af_xdp"));
    // Refused before anything is made (the directory is not even looked at).
    let e = up(a, PathBuf::from("/nonexistent")).unwrap_err();
    assert!(e.to_string().contains("add --switch pharos"), "{e}");
    let v = vec![
        "pharos", "lab", "up", "--topo", "linear,3", "--switch", "pharos",
    ];
    let bad = [v.clone(), vec!["--switch-datapath", "dpdk"]].concat();
    assert!(Cli::try_parse_from(bad).is_err());
}

#[test]
fn exec_takes_everything_after_the_host() {
    let Command::Exec(a) = parse(&["exec", "--name", "t1", "h1", "--", "ping", "-c1", "h2"]) else {
        panic!()
    };
    assert_eq!(a.host, "h1");
    assert_eq!(a.common.name, "t1");
    let cmd: Vec<&str> = a.cmd.iter().map(String::as_str).collect();
    assert!(
        cmd == ["ping", "-c1", "h2"] || cmd == ["--", "ping", "-c1", "h2"],
        "{cmd:?}"
    );
    let Command::Exec(a) = parse(&["exec", "h1", "ip", "-br", "addr"]) else {
        panic!()
    };
    assert_eq!(a.cmd, ["ip", "-br", "addr"]);
}

#[test]
fn link_states_are_checked() {
    let Command::Link(a) = parse(&["link", "s1", "s2", "down", "--name", "t2"]) else {
        panic!()
    };
    assert_eq!(
        (a.a.as_str(), a.b.as_str(), a.state.as_str()),
        ("s1", "s2", "down")
    );
    let mut v = vec!["pharos", "lab", "link", "s1", "s2", "sideways"];
    assert!(Cli::try_parse_from(v.drain(..)).is_err());
}

#[test]
fn move_send_and_recv_arguments() {
    let Command::Move(a) = parse(&["move", "h1", "s3", "--name", "t1"]) else {
        panic!()
    };
    assert_eq!((a.host.as_str(), a.switch.as_str()), ("h1", "s3"));
    let Command::Send(a) = parse(&["send", "h2", "--hex", "0180c200000e", "-c", "3"]) else {
        panic!()
    };
    assert_eq!((a.host.as_str(), a.count, a.interval), ("h2", 3, 0.1));
    let Command::Recv(a) = parse(&["recv", "h2", "--ethertype", "0x88cc"]) else {
        panic!()
    };
    assert_eq!((a.ethertype, a.count, a.timeout), (Some(0x88cc), 1, 5.0));
    let Command::Recv(a) = parse(&["recv", "h2", "--ethertype", "2048"]) else {
        panic!()
    };
    assert_eq!(a.ethertype, Some(0x800));
    let v = ["pharos", "lab", "recv", "h1", "--ethertype", "0x1ffff"];
    assert!(Cli::try_parse_from(v).is_err());
    let v = ["pharos", "lab", "send", "h1"];
    assert!(Cli::try_parse_from(v).is_err(), "--hex is required");
}

/// Runs `argv` (the binary's arguments, without its name) through the real command
/// line of `pharos`, as `main` does.
fn pharos_cli(argv: Vec<std::ffi::OsString>) -> crate::Command {
    let argv = std::iter::once("pharos".into()).chain(argv);
    crate::Cli::try_parse_from(argv)
        .unwrap_or_else(|e| panic!("pharos refuses the lab's command line: {e}"))
        .command
}

/// The lab's `pharos switch` ([`lab::pharos::SwitchCommand::argv`], every field set)
/// read by the real parser of `pharos switch` (crate::switch::Args): a flag renamed or
/// a value written differently on either side fails here, not in a lab.
#[test]
fn the_labs_switch_command_line_is_one_pharos_switch_takes() {
    use lab::pharos::{SwitchCommand, SwitchController, SwitchTls};
    use ofswitch::agent::{ListenAddr, Target, Versions};
    let tls = SwitchTls {
        private_key: "/run/pharos-lab/t1/pki/switch-key.pem".into(),
        certificate: "/run/pharos-lab/t1/pki/switch.pem".into(),
        ca_cert: "/run/pharos-lab/t1/pki/ca.pem".into(),
    };
    let mut cmd = SwitchCommand {
        name: "t1-s26".into(),
        dpid: 26,
        of: OfVersion::V10,
        pidfile: "/run/pharos-lab/t1/s26.pid".into(),
        mgmt_socket: "/run/pharos-lab/t1/t1-s26.mgmt".into(),
        controller: Some(SwitchController::Connect("127.0.0.1:6653".parse().unwrap())),
        tls: Some(tls.clone()),
        datapath: Some(crate::switch::Datapath::Xdp.name().into()),
        ports: vec![(1, "t1-s26-eth1".into()), (4, "t1-s26-eth4".into())],
    };
    let crate::Command::Switch(a) = pharos_cli(cmd.argv()) else {
        panic!("not pharos switch")
    };
    assert_eq!(a.name.as_deref(), Some("t1-s26"));
    assert_eq!(
        a.dpid,
        openflow::Dpid(26),
        "the dpid is read as the lab prints it"
    );
    assert_eq!(a.versions, Versions::V10);
    assert_eq!(a.pidfile, Some(cmd.pidfile.clone()));
    assert_eq!(a.listen, [ListenAddr::Unix(cmd.mgmt_socket.clone())]);
    assert!(
        matches!(
            a.controllers.as_slice(),
            [crate::switch::Controller::Connect(t)]
                if *t == Target { addr: "127.0.0.1:6653".parse().unwrap(), tls: true }
        ),
        "{:?}",
        a.controllers
    );
    assert_eq!(a.private_key, Some(tls.private_key));
    assert_eq!(a.certificate, Some(tls.certificate));
    assert_eq!(a.ca_cert, Some(tls.ca_cert));
    assert_eq!(a.datapath, crate::switch::Datapath::Xdp);
    assert_eq!(
        a.ports,
        [
            (1, "t1-s26-eth1".to_string()),
            (4, "t1-s26-eth4".to_string())
        ]
    );

    // A switch waiting for its controller, in clear text, on its default data path.
    cmd.controller = Some(SwitchController::Listen("127.0.0.1:6655".parse().unwrap()));
    cmd.tls = None;
    cmd.datapath = None;
    cmd.of = OfVersion::V13;
    let crate::Command::Switch(a) = pharos_cli(cmd.argv()) else {
        panic!("not pharos switch")
    };
    assert_eq!(a.versions, Versions::V13);
    assert!(
        matches!(
            a.controllers.as_slice(),
            [crate::switch::Controller::Listen(ListenAddr::Tcp(addr))]
                if *addr == "127.0.0.1:6655".parse().unwrap()
        ),
        "{:?}",
        a.controllers
    );
    assert_eq!(
        (a.private_key, a.certificate, a.ca_cert),
        (None, None, None)
    );
    assert_eq!(a.datapath, crate::switch::Datapath::Packet);

    // No controller at all; a switch of no one version offers both.
    cmd.controller = None;
    cmd.of = OfVersion::Mixed;
    let crate::Command::Switch(a) = pharos_cli(cmd.argv()) else {
        panic!("not pharos switch")
    };
    assert!(a.controllers.is_empty());
    assert_eq!(a.versions, Versions::Both);
}

/// The controller's listen entry a lab over TLS writes
/// ([`lab::pharos::RunConfig::to_toml`]) read by `pharos run --config`'s own reader,
/// which also loads the certificates: a key renamed on either side fails here.
#[test]
fn the_labs_controller_settings_are_ones_pharos_run_takes() {
    let dir = std::env::temp_dir().join(format!("pharos-lab-seam-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let pki = lab::pki::Pki::create(&dir, &[]).unwrap();
    let addr: std::net::SocketAddr = "127.0.0.1:6654".parse().unwrap();
    let file = dir.join(lab::CONTROLLER_TOML);
    let text = lab::pharos::RunConfig::tls_listener(addr, &pki)
        .to_toml()
        .unwrap();
    std::fs::write(&file, &text).unwrap();
    let crate::Command::Run(args) = pharos_cli(vec!["run".into(), "--config".into(), file.into()])
    else {
        panic!("not pharos run")
    };
    let config = crate::run::effective_config(&args)
        .unwrap_or_else(|e| panic!("pharos run refuses the lab's settings: {e}\n{text}"));
    std::fs::remove_dir_all(&dir).unwrap();
    let [l] = config.listen.as_slice() else {
        panic!("one listener: {:?}", config.listen)
    };
    assert_eq!(l.addr, addr);
    let t = l.tls.as_ref().expect("a TLS listener");
    assert_eq!(t.cert, pki.controller_cert);
    assert_eq!(t.key, pki.controller_key);
    assert_eq!(t.client_ca.as_ref(), Some(&pki.ca_cert));
    assert_eq!(t.client_auth, controller::config::ClientAuth::Required);
}

#[test]
fn timeouts_must_be_positive() {
    assert!(secs(0.0).is_err());
    assert!(secs(f64::NAN).is_err());
    assert_eq!(secs(1.5).unwrap(), Duration::from_millis(1500));
}
