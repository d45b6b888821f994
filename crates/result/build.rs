//! Records the git revision of the source tree at build time as `HWSURVEY_GIT_REVISION`
//! (`<12 hex digits>[-dirty]`), or "unknown" when this is not a git checkout or git is
//! absent. A value already set in the build environment wins (release scripts, tarballs).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=HWSURVEY_GIT_REVISION");
    if let Ok(v) = std::env::var("HWSURVEY_GIT_REVISION") {
        println!("cargo:rustc-env=HWSURVEY_GIT_REVISION={v}");
        return;
    }
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(&dir)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let rev = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(rev) if !rev.is_empty() => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .map(|s| !s.is_empty())
                .unwrap_or(false);
            // `--git-path` names where git keeps each file: in a linked worktree, HEAD is the
            // worktree's own and the branch's ref is in the common git dir (watching
            // `<worktree git dir>/refs/heads/...`, a file that never exists, rebuilt this crate
            // and everything above it on every cargo call). A packed ref lives in packed-refs.
            if let Some(head) = git(&["rev-parse", "--path-format=absolute", "--git-path", "HEAD"])
            {
                println!("cargo:rerun-if-changed={head}");
            }
            if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
                let loose = git(&["rev-parse", "--path-format=absolute", "--git-path", &r]);
                let packed = git(&[
                    "rev-parse",
                    "--path-format=absolute",
                    "--git-path",
                    "packed-refs",
                ]);
                match loose {
                    Some(f) if std::path::Path::new(&f).exists() => {
                        println!("cargo:rerun-if-changed={f}")
                    }
                    _ => {
                        if let Some(p) = packed {
                            println!("cargo:rerun-if-changed={p}");
                        }
                    }
                }
            }
            if dirty {
                format!("{rev}-dirty")
            } else {
                rev
            }
        }
        _ => "unknown".to_string(),
    };
    println!("cargo:rustc-env=HWSURVEY_GIT_REVISION={rev}");
}
