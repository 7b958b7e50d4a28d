//! The house rules issue 35 set, kept: no source file under a crate's `src/` over 1,000
//! lines (a grab-bag in the making), and no `#[path = "../…"]` include reaching out of a
//! file's own folder (a crate is how code is shared; the test kit is one). Sibling test
//! files (`#[path = "handshake_tests.rs"]`) are fine.

use std::fs;
use std::path::{Path, PathBuf};

/// The most lines a file under `src/` may have.
const MAX_LINES: usize = 1000;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `dir`, `target` folders left out.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name()
                .is_some_and(|n| n == "target" || n == "node_modules")
            {
                continue;
            }
            rust_files(&p, found);
        } else if p.extension().is_some_and(|x| x == "rs") {
            found.push(p);
        }
    }
}

fn all_rust() -> Vec<PathBuf> {
    let mut found = Vec::new();
    rust_files(&repo().join("crates"), &mut found);
    rust_files(&repo().join("wasm"), &mut found);
    assert!(
        found.len() > 100,
        "the walk found {} Rust files under {}: wrong root?",
        found.len(),
        repo().display()
    );
    found
}

#[test]
fn no_source_file_under_src_is_over_1000_lines() {
    let long: Vec<String> = all_rust()
        .into_iter()
        .filter(|p| p.components().any(|c| c.as_os_str() == "src"))
        .filter_map(|p| {
            let n = fs::read_to_string(&p).ok()?.lines().count();
            (n > MAX_LINES).then(|| format!("{} ({n} lines)", p.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split by responsibility (issue 35: no file under src/ over {MAX_LINES} lines): {long:#?}"
    );
}

#[test]
fn no_path_include_reaches_out_of_its_folder() {
    let mut out = Vec::new();
    for p in all_rust() {
        let Ok(text) = fs::read_to_string(&p) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            let l = line.trim_start();
            if let Some(rest) = l.strip_prefix("#[path") {
                let target = rest.split('"').nth(1).unwrap_or("");
                if target.starts_with("..") || target.starts_with('/') {
                    out.push(format!("{}:{}: {l}", p.display(), i + 1));
                }
            }
        }
    }
    assert!(
        out.is_empty(),
        "share code through a crate (testkit, sim), not #[path] includes: {out:#?}"
    );
}
