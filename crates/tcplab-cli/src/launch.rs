//! The `tcplab` command is this binary (issue 28): installed by the wheel as `bin/tcplab` (a
//! data script) and linked as `.venv/bin/tcplab` by `make setup`. What it does not take itself
//! it hands to the Python CLI, `python -m tcplab ARGS...`, with the interpreter found as:
//!
//! 1. `TCPLAB_PYTHON`, when set;
//! 2. `python3`, else `python`, in the folder the command was started from (a virtual
//!    environment's `bin/`, where pip put this binary beside the interpreter);
//! 3. the installation prefix's `lib/python3.X/site-packages/tcplab` (a `--user` or system
//!    install): `PREFIX/bin/python3.X`, else `python3.X` on the PATH;
//!    (2 and 3 are tried for the folder it was started from, then for the binary's own folder);
//! 4. `python3` on the PATH.
//!
//! The package folder (for the bundled scenarios) is found alike: `tcplab/_bin/` holding this
//! binary (the development tree, or a link to it), else the prefix's site-packages.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The exit status of a command line handed back while `TCPLAB_NO_HANDBACK=1` (the sweep runner
/// sets it: it runs such a task in-process instead, and tells this status from a failed run's).
pub const HANDBACK_STATUS: i32 = 64;

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

/// The folder the command was started from: argv[0]'s, or the PATH entry that holds it (not
/// following a symbolic link: `.venv/bin/tcplab` is `.venv/bin`).
fn invoked_dir() -> Option<PathBuf> {
    let arg0 = PathBuf::from(std::env::args_os().next()?);
    if arg0.components().count() > 1 {
        let dir = arg0.parent()?;
        return Some(if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir.to_path_buf() });
    }
    std::env::split_paths(&std::env::var_os("PATH")?).find(|d| is_executable(&d.join(&arg0)))
}

/// `PREFIX/lib/python3.X/site-packages/tcplab` folders under `prefix`: (X, folder).
fn site_packages(prefix: &Path) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    for lib in ["lib", "lib64"] {
        let Ok(entries) = std::fs::read_dir(prefix.join(lib)) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(ver) = name.strip_prefix("python3.") {
                let pkg = e.path().join("site-packages").join("tcplab");
                if pkg.is_dir() && !ver.is_empty() && ver.bytes().all(|b| b.is_ascii_digit()) {
                    found.push((format!("3.{ver}"), pkg));
                }
            }
        }
    }
    found.sort();
    found
}

/// The interpreter that runs the Python CLI (see the module's note for the order).
pub fn python() -> OsString {
    if let Some(p) = std::env::var_os("TCPLAB_PYTHON").filter(|p| !p.is_empty()) {
        return p;
    }
    // the folder it was started from, then the binary's own (the same for the wheel's copy)
    let exe_dir = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf));
    for dir in [invoked_dir(), exe_dir].into_iter().flatten() {
        for name in ["python3", "python"] {
            if is_executable(&dir.join(name)) {
                return dir.join(name).into_os_string();
            }
        }
        if let Some(prefix) = dir.parent() {
            if let Some((ver, _)) = site_packages(prefix).pop() {
                let beside = prefix.join("bin").join(format!("python{ver}"));
                return if is_executable(&beside) { beside.into_os_string() } else { format!("python{ver}").into() };
            }
        }
    }
    "python3".into()
}

/// The installed `tcplab` package folder (holding `scenarios/`), if found.
pub fn package_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    if dir.file_name().is_some_and(|n| n == "_bin") && dir.parent()?.join("scenarios").is_dir() {
        return dir.parent().map(Path::to_path_buf);
    }
    let prefixes = [dir.parent().map(Path::to_path_buf), invoked_dir().and_then(|d| d.parent().map(Path::to_path_buf))];
    prefixes.into_iter().flatten().flat_map(|p| site_packages(&p)).map(|(_, pkg)| pkg).rev().find(|pkg| pkg.join("scenarios").is_dir())
}

/// Whether the Python CLI can start: the interpreter [`python`] finds imports `tcplab.cli`.
/// Asked only before handing over a request for help (a checkout without its virtual
/// environment has a `python3` without the package).
pub fn python_cli_available() -> bool {
    std::process::Command::new(python())
        .args(["-c", "import tcplab.cli"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Hand the command line to the Python CLI (argparse's help, its messages for bad flags, and
/// every command the binary does not take): exec `python -m tcplab ARGS...`.
pub fn exec_python(args: &[OsString]) -> ! {
    use std::os::unix::process::CommandExt;
    if std::env::var_os("TCPLAB_NO_HANDBACK").is_some_and(|v| v == "1") {
        eprintln!("tcplab: this command line is for the Python CLI (TCPLAB_NO_HANDBACK=1)");
        std::process::exit(HANDBACK_STATUS)
    }
    let python = python();
    let err = std::process::Command::new(&python).arg("-m").arg("tcplab").args(args).exec();
    eprintln!("error: cannot start the Python CLI ({}): {err}", Path::new(&python).display());
    std::process::exit(2)
}
