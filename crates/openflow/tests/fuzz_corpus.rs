//! Replays the fuzz corpora kept in the repository (`crates/openflow/fuzz/corpus/TARGET`,
//! minimized with `cargo fuzz cmin`) through the fuzz targets' oracles, on stable: every
//! input a fuzzing run found interesting is checked again by every test run.

use std::path::Path;

fn replay(target: &str, oracle: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return 0;
    };
    let mut n = 0;
    for e in entries.flatten() {
        let data = std::fs::read(e.path()).unwrap();
        let name = e.file_name();
        let run = std::panic::catch_unwind(|| oracle(&data));
        assert!(
            run.is_ok(),
            "{target}: corpus input {name:?} fails its oracle"
        );
        n += 1;
    }
    n
}

#[test]
fn the_fuzz_corpora_replay_through_their_oracles() {
    let decoded = replay("decode", openflow::fuzz::decode);
    assert!(
        decoded > 100,
        "the decode corpus is kept ({decoded} inputs)"
    );
    replay("packet_in_view", openflow::fuzz::packet_in_view);
    replay("ofctl_parse", openflow::fuzz::ofctl_parse);
}
