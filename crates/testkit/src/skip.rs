//! The visible-skip rule of every test: a test that did not run in full says so, on
//! standard error and in the file `PHAROS_SKIP_LOG` names, so that it never looks like
//! a test that ran (scripts/test counts those lines and fails the run under CI=true).
//! Nothing here knows of labs; the lab's own checks (programs, root) are in the lab
//! harness of `crates/pharos/tests/common/lab`.

use std::io::Write as _;

/// Records that `test` did not run in full: `kind` is `SKIPPED` (it checked nothing)
/// or `SHORTENED` (it checked less than it is written to). Said on stderr, and appended
/// to the file `PHAROS_SKIP_LOG` names (scripts/test sets it, counts the lines at the
/// end, and fails the run under CI=true): a test that passes without having run must
/// never look like one that ran.
pub fn record_not_full(kind: &str, test: &str, why: &str) {
    let line = format!("{kind} {test}: {why}");
    // Straight to the stderr handle: libtest captures eprintln! of passing tests.
    let _ = writeln!(std::io::stderr(), "{line}");
    if let Some(path) = std::env::var_os("PHAROS_SKIP_LOG") {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path);
        // One write per line, in append mode: lines from tests running at once do not
        // interleave.
        if let Err(e) = file.and_then(|mut f| f.write_all(format!("{line}\n").as_bytes())) {
            panic!("cannot record `{line}` in PHAROS_SKIP_LOG: {e}");
        }
    }
}

/// Whether the environment asks to skip tests of this kind (`VAR=1`, `PHAROS_SKIP_LAB=1`
/// for the lab's): if so the skip is recorded ([`record_not_full`]) and the test is to
/// return at once.
pub fn skip_requested(test: &str, var: &str) -> bool {
    if std::env::var(var).is_ok_and(|v| v == "1") {
        record_not_full("SKIPPED", test, &format!("{var}=1"));
        return true;
    }
    false
}
