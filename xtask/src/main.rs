//! `cargo xtask dist`: static (`+crt-static`) release binaries of `hwsurvey` for every target in
//! `targets/*.toml` that can be built here, each written to `target/dist/<triple>/hwsurvey` and
//! checked with `hwsurvey-elf` against its descriptor (machine, class, byte order, static).
//!
//! - `build = "native"`: the cargo that runs xtask (rustup's), `--target <triple>` always (without
//!   it, `+crt-static` would also apply to proc-macros and break them).
//! - `build = "debian-rustc-web-build-std"`: `/usr/bin/cargo -Zbuild-std` with `/usr/bin/rustc`
//!   (Debian's rustc-web), in its own target dir (`$HWSURVEY_CROSS_TARGET_DIR`, default
//!   `target/cross`) so it never shares artifacts with rustup's cargo.
//! - `build = "vendor"` (e2k): not buildable here; says so plainly and builds nothing.
//!
//! Usage: `cargo xtask dist [NAME...]` (default: every target).

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use hwsurvey_elf::{check, inspect_file, BuildMethod, TargetDescriptor};

mod cross_args;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned)
}

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("dist") => dist(&args[1..]),
        _ => {
            eprintln!("usage: cargo xtask dist [NAME...]   (NAME: a targets/NAME.toml)");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn env_key(triple: &str) -> String {
    triple.to_uppercase().replace('-', "_")
}

fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("xtask: running {cmd:?}");
    let status = cmd
        .status()
        .with_context(|| format!("cannot start {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed: {status}");
    }
    Ok(())
}

/// Builds one target; returns the path of the release binary.
fn build(root: &Path, target: &TargetDescriptor) -> Result<PathBuf> {
    let triple = &target.triple;
    let (mut cmd, target_dir) = match target.build {
        BuildMethod::Native => {
            let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let dir =
                env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "--release", "--locked"]);
            (cmd, dir)
        }
        BuildMethod::DebianRustcWebBuildStd => {
            let dir = env::var_os("HWSURVEY_CROSS_TARGET_DIR")
                .map_or_else(|| root.join("target/cross"), PathBuf::from);
            let path = format!("/usr/bin:{}", env::var("PATH").unwrap_or_default());
            let mut cmd = Command::new("/usr/bin/cargo");
            // The suites' feature resolution and the CLI's `run` suite named (cross_args): the
            // dist binary is the very `hwsurvey` that scripts/cross-test's suites built and ran,
            // and after them this build compiles nothing. On its own it also builds that suite.
            cmd.args(["build", "-Zbuild-std", "--release", "--locked"])
                .args(cross_args::UNIFY)
                .args(cross_args::DIST_TARGETS)
                .env("PATH", path)
                .env("RUSTC", "/usr/bin/rustc")
                .env("RUSTC_BOOTSTRAP", "1")
                .env("RUSTC_ICE", "0")
                // set by rustup's cargo for `cargo xtask`; must not leak into Debian's toolchain
                .env_remove("RUSTUP_TOOLCHAIN")
                .env_remove("LD_LIBRARY_PATH")
                .env_remove("CARGO");
            (cmd, dir)
        }
        BuildMethod::Vendor => bail!("{}: only a vendor toolchain builds it", target.name),
    };
    cmd.current_dir(root)
        .args(["--package", "hwsurvey", "--target", triple])
        .env("CARGO_TARGET_DIR", &target_dir)
        .env(
            format!("CARGO_TARGET_{}_RUSTFLAGS", env_key(triple)),
            "-C target-feature=+crt-static",
        )
        .env(
            format!("CARGO_TARGET_{}_LINKER", env_key(triple)),
            &target.linker,
        );
    run(&mut cmd)?;
    Ok(target_dir.join(triple).join("release/hwsurvey"))
}

/// Whether some rustc on this machine knows `triple`.
fn rustc_knows(triple: &str) -> Vec<String> {
    let mut found = Vec::new();
    for rustc in ["rustc", "/usr/bin/rustc"] {
        let Ok(out) = Command::new(rustc)
            .args(["--print", "target-list"])
            .output()
        else {
            continue;
        };
        if String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.trim() == triple)
        {
            found.push(rustc.to_owned());
        }
    }
    found
}

fn dist(only: &[String]) -> Result<()> {
    let root = workspace_root();
    let mut targets = TargetDescriptor::load_dir(&root.join("targets"))?;
    for name in only {
        if !targets.iter().any(|t| &t.name == name) {
            bail!("no targets/{name}.toml");
        }
    }
    targets.retain(|t| only.is_empty() || only.contains(&t.name));
    // the native binary first: it prints `hwsurvey elf` for the others
    targets.sort_by_key(|t| (t.build != BuildMethod::Native, t.name.clone()));
    let dist_dir = root.join("target/dist");
    let mut inspector: Option<PathBuf> = None;
    let mut failures = Vec::new();
    for target in &targets {
        let start = Instant::now();
        println!(
            "== dist: {} ({}, build: {})",
            target.name, target.triple, target.build
        );
        if target.build == BuildMethod::Vendor {
            let knows = rustc_knows(&target.triple);
            if knows.is_empty() {
                println!(
                    "{}: NOT BUILT. No rustc here knows {} (upstream Rust and LLVM have no e2k \
                     backend). Needs: {}. No {} binary is built or run on this machine; the \
                     descriptor and the ELF rules are checked by tests on hand-built headers. \
                     See docs/targets.md.",
                    target.name,
                    target.triple,
                    target
                        .vendor_toolchain
                        .as_deref()
                        .unwrap_or("a vendor toolchain"),
                    target.name
                );
            } else {
                println!(
                    "{}: {} knows {}, but vendor builds are not automated (docs/targets.md)",
                    target.name,
                    knows.join(", "),
                    target.triple
                );
            }
            continue;
        }
        let built = build(&root, target)?;
        let out_dir = dist_dir.join(&target.triple);
        std::fs::create_dir_all(&out_dir)
            .with_context(|| format!("creating {}", out_dir.display()))?;
        let dest = out_dir.join("hwsurvey");
        std::fs::copy(&built, &dest)
            .with_context(|| format!("copying {} to {}", built.display(), dest.display()))?;
        let size = std::fs::metadata(&dest).map(|m| m.len()).unwrap_or(0);
        println!("{}: {} ({size} bytes)", target.name, dest.display());

        let info = inspect_file(&dest)?;
        let mismatches = check(&info, target);
        if !info.linking.is_static() {
            failures.push(format!("{}: not static ({})", target.name, info.linking));
        }
        for m in &mismatches {
            failures.push(format!("{}: {m}", target.name));
        }
        if target.build == BuildMethod::Native {
            inspector = Some(dest.clone());
        }
        let descriptor = root.join(format!("targets/{}.toml", target.name));
        if let Some(hwsurvey) = &inspector {
            println!(
                "-- {} elf {} --target {}",
                hwsurvey.display(),
                dest.display(),
                descriptor.display()
            );
            let mut cmd = Command::new(hwsurvey);
            cmd.arg("elf").arg(&dest).arg("--target").arg(&descriptor);
            if let Err(e) = run(&mut cmd) {
                failures.push(format!("{}: hwsurvey elf: {e}", target.name));
            }
        }
        if let Some(runner) = &target.runner {
            // smoke run of the cross binary itself under qemu-user: it inspects its own file
            let mut words = runner.split_whitespace();
            if let Some(program) = words.next() {
                println!(
                    "-- under {runner}: {} elf /proc/self/exe --target {}",
                    dest.display(),
                    target.name
                );
                let mut cmd = Command::new(program);
                cmd.args(words)
                    .arg(&dest)
                    .args(["elf", "/proc/self/exe", "--target"])
                    .arg(&descriptor);
                if let Err(e) = run(&mut cmd) {
                    failures.push(format!("{}: run under {runner}: {e}", target.name));
                }
            }
        }
        println!(
            "== dist: {} done in {:.0} s: {}",
            target.name,
            start.elapsed().as_secs_f64(),
            if mismatches.is_empty() && info.linking.is_static() {
                "static, right machine"
            } else {
                "MISMATCH"
            }
        );
    }
    if !failures.is_empty() {
        bail!("dist checks failed:\n  {}", failures.join("\n  "));
    }
    Ok(())
}
