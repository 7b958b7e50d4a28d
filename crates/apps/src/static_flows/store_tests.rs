use super::*;

/// A fresh directory under the system's temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!(
            "pharos-static-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn flow(text: &str) -> Flow {
    parse_flow(text).unwrap()
}

fn config(name: &str, dpid: u64, flow: &str) -> StaticFlowConfig {
    StaticFlowConfig {
        name: name.into(),
        dpid: Dpid(dpid),
        flow: flow.into(),
    }
}

#[test]
fn added_flows_are_kept_in_the_file_and_read_back() {
    let dir = TempDir::new("roundtrip");
    // A directory that does not exist yet is made.
    let path = dir.0.join("state").join("static.json");
    let s = StaticFlows::open(&path, &[]).unwrap();
    assert!(s.list().is_empty());
    assert!(!path.exists(), "nothing written before a change");
    let (a, old) = s
        .add(
            "drop-ping",
            Dpid(2),
            flow("priority=1000,icmp,actions=drop"),
            false,
        )
        .unwrap();
    assert_eq!(
        (a.status.clone(), a.source, old),
        (Status::Pending, Source::Api, None)
    );
    s.add("arp", Dpid(0x0102), flow("arp,actions=flood"), false)
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("\"dpid\": \"00:00:00:00:00:00:01:02\""),
        "{text}"
    );
    assert!(text.contains("priority=1000,icmp,actions=drop"), "{text}");

    let again = StaticFlows::open(&path, &[]).unwrap();
    let got: Vec<(String, Dpid, String)> = again
        .list()
        .into_iter()
        .map(|f| (f.name, f.dpid, f.flow.to_string()))
        .collect();
    assert_eq!(
        got,
        [
            ("arp".into(), Dpid(0x0102), "arp,actions=FLOOD".into()),
            (
                "drop-ping".into(),
                Dpid(2),
                "priority=1000,icmp,actions=drop".into()
            ),
        ]
    );
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["static.json"]);
}

#[test]
fn names_are_unique_unless_replaced_and_removal_saves() {
    let dir = TempDir::new("replace");
    let path = dir.0.join("s.json");
    let s = StaticFlows::open(&path, &[]).unwrap();
    let (first, _) = s.add("f", Dpid(1), flow("actions=drop"), false).unwrap();
    assert_eq!(
        s.add("f", Dpid(1), flow("ip,actions=drop"), false),
        Err(StoreError::Exists("f".into()))
    );
    let (second, old) = s.add("f", Dpid(2), flow("ip,actions=drop"), true).unwrap();
    assert_eq!(old.unwrap().generation, first.generation);
    assert_ne!(second.generation, first.generation);
    // An answer about the replaced flow changes nothing.
    assert!(!s.set_status("f", first.generation, Status::Installed));
    assert_eq!(s.get("f").unwrap().status, Status::Pending);
    assert!(s.set_status("f", second.generation, Status::Installed));
    assert_eq!(s.get("f").unwrap().status, Status::Installed);
    assert_eq!(s.of_switch(Dpid(2)).len(), 1);
    assert!(s.of_switch(Dpid(1)).is_empty());

    // Another name with the same selection on the same switch would fight over one
    // flow entry; on another switch, or at another priority, it is fine.
    assert_eq!(
        s.add("g", Dpid(2), flow("ip,actions=output:1"), false),
        Err(StoreError::SameSelection { other: "f".into() })
    );
    s.add("g", Dpid(1), flow("ip,actions=output:1"), false)
        .unwrap();
    s.add("h", Dpid(2), flow("priority=1,ip,actions=output:1"), false)
        .unwrap();
    s.remove("g").unwrap();
    s.remove("h").unwrap();

    assert_eq!(s.remove("nope"), Err(StoreError::NotFound("nope".into())));
    assert_eq!(s.remove("f").unwrap().dpid, Dpid(2));
    assert!(StaticFlows::open(&path, &[]).unwrap().list().is_empty());
    assert!(matches!(
        s.add("a b", Dpid(1), flow("actions=drop"), false),
        Err(StoreError::BadName(_))
    ));
}

#[test]
fn the_configurations_flows_are_listed_but_read_only_and_not_saved() {
    let dir = TempDir::new("config");
    let path = dir.0.join("s.json");
    let s = StaticFlows::open(&path, &[config("cfg", 1, "arp,actions=flood")]).unwrap();
    let f = s.get("cfg").unwrap();
    assert_eq!((f.source, f.dpid), (Source::Config, Dpid(1)));
    assert_eq!(
        s.add("cfg", Dpid(1), flow("actions=drop"), true),
        Err(StoreError::FromConfig("cfg".into()))
    );
    assert_eq!(s.remove("cfg"), Err(StoreError::FromConfig("cfg".into())));
    s.add("api", Dpid(1), flow("actions=drop"), false).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"api\"") && !text.contains("cfg"), "{text}");

    // A name in both: the configuration's wins.
    std::fs::write(
        &path,
        r#"{"format":1,"flows":[{"name":"cfg","dpid":"2","flow":"actions=drop","updated_at":0}]}"#,
    )
    .unwrap();
    let s = StaticFlows::open(&path, &[config("cfg", 1, "arp,actions=flood")]).unwrap();
    assert_eq!(s.get("cfg").unwrap().dpid, Dpid(1));
}

#[test]
fn a_bad_state_file_is_an_error_naming_it() {
    let dir = TempDir::new("bad");
    let path = dir.0.join("s.json");
    let cases = [
        ("{\"format\":1,\"flows\":[", "is not a static flows file"),
        ("[]", "is not a static flows file"),
        ("{\"format\":2,\"flows\":[]}", "format 2"),
        (
            r#"{"format":1,"flows":[{"name":"x","dpid":"1","flow":"ip,nw_dst=1.2.3.300,actions=drop","updated_at":0}]}"#,
            "flows[0] (\"x\"): nw_dst=1.2.3.300",
        ),
        (
            r#"{"format":1,"flows":[{"name":"x","dpid":"zz:1","flow":"actions=drop","updated_at":0}]}"#,
            "not a dpid",
        ),
        (
            r#"{"format":1,"flows":[{"name":"a/b","dpid":"1","flow":"actions=drop","updated_at":0}]}"#,
            "'/'",
        ),
        (
            r#"{"format":1,"flows":[{"name":"x","dpid":"1","flow":"actions=drop","updated_at":0},{"name":"x","dpid":"1","flow":"actions=drop","updated_at":0}]}"#,
            "listed twice",
        ),
    ];
    for (text, says) in cases {
        std::fs::write(&path, text).unwrap();
        let e = StaticFlows::open(&path, &[]).unwrap_err();
        assert_eq!(e.path, path);
        let shown = e.to_string();
        assert!(
            shown.contains(&path.display().to_string()) && shown.contains(says),
            "{text}: {shown}"
        );
    }
    // A directory where the file should be cannot be read.
    let e = StaticFlows::open(&dir.0, &[]).unwrap_err();
    assert!(e.reason.starts_with("cannot be read"), "{e}");
}

#[test]
fn a_failed_write_changes_nothing() {
    let dir = TempDir::new("unwritable");
    let state = dir.0.join("state");
    let s = StaticFlows::open(&state.join("s.json"), &[]).unwrap();
    // The state file's directory becomes a file: nothing can be written there.
    std::fs::write(&state, "").unwrap();
    let e = s
        .add("f", Dpid(1), flow("actions=drop"), false)
        .unwrap_err();
    assert!(matches!(e, StoreError::Save { .. }), "{e}");
    assert!(e.to_string().contains("state/s.json"), "{e}");
    assert!(s.list().is_empty());
    // And an unreadable path is an error at start-up.
    let e = StaticFlows::open(&state.join("s.json"), &[]).unwrap_err();
    assert!(e.reason.starts_with("cannot be read"), "{e}");
}

#[test]
fn in_memory_keeps_flows_without_a_file() {
    let s = StaticFlows::in_memory();
    s.add("f", Dpid(1), flow("actions=drop"), false).unwrap();
    assert_eq!(s.list().len(), 1);
    assert_eq!(s.file(), None);
}
