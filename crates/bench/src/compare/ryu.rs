//! Ryu, the other contender: the pinned PyPI recipe of its virtual environment, the
//! launcher that starts `ryu-manager` on current Python, and [`ensure_venv`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::process::tail;
use super::{strings, CompareError};

/// The PyPI packages the Ryu virtual environment gets, installed with
/// `pip install --no-build-isolation` after [`VENV_BUILD_PINS`].
///
/// - `ryu==4.34`: the last Ryu release, which still ships `ryu/app/simple_switch.py` and
///   `simple_switch_13.py` and `ryu-manager`. Its maintained fork os-ken does not do:
///   os-ken 4.x ships neither the example apps nor a manager, and 2.x/3.x ship
///   `osken-manager` but no `simple_switch`.
/// - `eventlet==0.33.3`: eventlet 0.30.2, the last with `eventlet.wsgi.ALREADY_HANDLED`
///   (which `ryu.app.wsgi` imports at start-up), does not import on Python 3.10+
///   (`socket.timeout` became the immutable `TimeoutError`); 0.33.3 imports, and
///   [`RYU_LAUNCHER`] supplies the missing name.
/// - `dnspython==2.6.1`: eventlet greens dnspython, and 1.x (what pip picks for Ryu's
///   old bounds) uses `collections.MutableMapping`, gone in Python 3.10.
pub const RYU_PINS: &[&str] = &["ryu==4.34", "eventlet==0.33.3", "dnspython==2.6.1"];

/// Installed first: Ryu 4.34's `setup.py` calls `easy_install.get_script_args`, which
/// current setuptools no longer has, hence an old setuptools and no build isolation.
pub const VENV_BUILD_PINS: &[&str] = &["setuptools==65.5.0", "wheel==0.45.1"];

/// `python -c` program that starts `ryu-manager` with its command line: it defines
/// `eventlet.wsgi.ALREADY_HANDLED` (removed in eventlet 0.30.3, imported by Ryu 4.34 at
/// start-up and used only by Ryu's websocket responses, which `simple_switch` never
/// sends), then calls Ryu's own `main`. Ryu's files are not modified.
pub const RYU_LAUNCHER: &str = "import sys, eventlet.wsgi; \
eventlet.wsgi.ALREADY_HANDLED = object(); \
sys.argv[0] = 'ryu-manager'; \
from ryu.cmd.manager import main; main()";

/// `python -c` program that succeeds when the environment can run both apps: the same
/// `ALREADY_HANDLED` shim as [`RYU_LAUNCHER`], then the imports.
pub const RYU_CHECK: &str = "import eventlet.wsgi; \
eventlet.wsgi.ALREADY_HANDLED = object(); \
import ryu.cmd.manager, ryu.app.simple_switch, ryu.app.simple_switch_13";

pub(super) fn venv_python(venv: &Path) -> PathBuf {
    venv.join("bin").join("python")
}

/// Makes sure `venv` holds a Python virtual environment that can run Ryu's
/// `simple_switch`; creates it if not: `python3 -m venv VENV`, `VENV/bin/pip install`
/// [`VENV_BUILD_PINS`], then `VENV/bin/pip install --no-build-isolation` [`RYU_PINS`].
/// Needs PyPI; tested with Python 3.11.
pub fn ensure_venv(venv: &Path) -> Result<(), CompareError> {
    let python = venv_python(venv);
    let check = |python: &Path| {
        Command::new(python)
            .args(["-c", RYU_CHECK])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if python.exists() && check(&python) {
        return Ok(());
    }
    eprintln!(
        "pharos bench compare: installing Ryu into {} (once)",
        venv.display()
    );
    let pip = venv.join("bin").join("pip");
    let venv_arg = venv.to_string_lossy().into_owned();
    let mut steps: Vec<Vec<String>> = vec![strings(&["python3", "-m", "venv", &venv_arg])];
    let mut build = strings(&[&pip.to_string_lossy(), "install", "--quiet"]);
    build.extend(strings(VENV_BUILD_PINS));
    steps.push(build);
    let mut ryu = strings(&[
        &pip.to_string_lossy(),
        "install",
        "--quiet",
        "--no-build-isolation",
    ]);
    ryu.extend(strings(RYU_PINS));
    steps.push(ryu);
    for step in steps {
        let line = step.join(" ");
        let out = Command::new(&step[0])
            .args(&step[1..])
            .output()
            .map_err(|e| CompareError::Venv {
                venv: venv.to_path_buf(),
                step: line.clone(),
                output: e.to_string(),
            })?;
        if !out.status.success() {
            let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&out.stderr));
            return Err(CompareError::Venv {
                venv: venv.to_path_buf(),
                step: line,
                output: tail(&text, 30),
            });
        }
    }
    if !check(&python) {
        return Err(CompareError::Venv {
            venv: venv.to_path_buf(),
            step: format!("{} -c 'import ryu.app.simple_switch'", python.display()),
            output: "the installed Ryu does not import".to_string(),
        });
    }
    Ok(())
}
