//! Replays the packet fuzzer's corpus kept in the repository
//! (`crates/packet/fuzz/corpus/parse`, grown by `cargo +nightly fuzz run parse`) through
//! the target's oracle, on stable: every input a fuzzing run found interesting is checked
//! again by every test run.

use std::path::Path;

#[test]
fn the_parse_corpus_replays_through_its_oracle() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/parse");
    let mut n = 0;
    for e in std::fs::read_dir(&dir)
        .expect("the parse corpus is kept")
        .flatten()
    {
        let data = std::fs::read(e.path()).unwrap();
        let name = e.file_name();
        let run = std::panic::catch_unwind(|| packet::fuzz::parse(&data));
        assert!(run.is_ok(), "parse: corpus input {name:?} fails its oracle");
        n += 1;
    }
    assert!(n > 100, "the parse corpus is kept ({n} inputs)");
}
