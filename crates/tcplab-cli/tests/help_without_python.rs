//! `tcplab --help` in a checkout without its virtual environment: the Python CLI cannot start,
//! so the binary prints its own commands' help (and how to get the full CLI) instead of failing.

use std::process::Command;

fn native(args: &[&str], python: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tcplab-native"))
        .args(args)
        .env("TCPLAB_PYTHON", python)
        .env_remove("TCPLAB_NATIVE")
        .env_remove("TCPLAB_NO_HANDBACK")
        .output()
        .unwrap()
}

#[test]
fn help_without_python_is_the_native_commands_help() {
    for python in ["/nonexistent/python3", "/bin/false"] {
        let p = native(&["--help"], python);
        let out = String::from_utf8_lossy(&p.stdout);
        assert!(p.status.success(), "{python}: {p:?}");
        assert!(out.contains("  run\n") && out.contains("  validate\n") && out.contains("  bench\n"), "{out}");
        assert!(!out.contains("__flags") && out.contains("make setup"), "{out}");
        let p = native(&["run", "--help"], python);
        let out = String::from_utf8_lossy(&p.stdout);
        assert!(p.status.success(), "{p:?}");
        assert!(out.contains("tcplab run") && out.contains("--seed") && out.contains("--max-memory"), "{out}");
    }
    // No help asked: a command for Python still says the interpreter cannot start.
    let p = native(&["report", "x"], "/nonexistent/python3");
    assert_eq!(p.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&p.stderr).contains("cannot start the Python CLI"), "{p:?}");
}
