//! Records the source revision the module is built from (issue 30): `tcplab --version` prints it
//! and the results store's `code_version` carries it. From `git` when building in a checkout
//! (`pip install .` builds in place, so it works there too); else from the environment variable
//! `TCPLAB_SOURCE_REVISION` (a build from an unpacked archive); else "unknown".

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=TCPLAB_SOURCE_REVISION");
    let revision = match std::env::var("TCPLAB_SOURCE_REVISION") {
        Ok(r) if !r.trim().is_empty() => r.trim().to_string(),
        _ => from_git().unwrap_or_else(|| "unknown".to_string()),
    };
    println!("cargo:rustc-env=TCPLAB_SOURCE_REVISION={revision}");
}

/// `<full commit hash>` or `<full commit hash>-dirty` (tracked files changed at build time).
fn from_git() -> Option<String> {
    let head = git(&["rev-parse", "HEAD"])?;
    // Rebuild when the commit moves (HEAD, the branch's ref, packed refs), when files are staged
    // (the index) and when the Rust sources change (a build of an edited tree says "-dirty").
    // Python sources are not watched: their caches change on every import.
    let git_dir = PathBuf::from(git(&["rev-parse", "--absolute-git-dir"])?);
    let common = git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]).map(PathBuf::from).unwrap_or(git_dir.clone());
    // A path that does not exist would make cargo rerun this script on every build: skip those.
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").ok()?);
    let crates = manifest.parent()?.to_path_buf();
    let mut watched = vec![git_dir.join("HEAD"), git_dir.join("index"), common.join("packed-refs"), crates.clone()];
    watched.extend([crates.join("../Cargo.toml"), crates.join("../Cargo.lock")]);
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(common.join(branch));
    }
    for path in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(if dirty { format!("{head}-dirty") } else { head })
}
