//! Build script of hwsurvey-workloads. With the `libblkid` feature, links util-linux's libblkid statically (`libblkid.a`, which
//! needs only libc) when the target's archive is found, and sets `cfg(hwsurvey_libblkid)`:
//! in `$HWSURVEY_LIBBLKID_DIR`, else Debian's multiarch directories of the target
//! (`/usr/lib/<arch>-linux-gnu`, package `libblkid-dev` or `libblkid-dev:arm64`). Where it is
//! absent (sparc64: Debian has no libblkid for it; e2k) the build says so in a warning and the
//! device check uses util-linux's `wipefs`/`blkid` commands instead, refusing the device when
//! neither exists (crates/workloads/src/storage/blkid.rs). `HWSURVEY_LIBBLKID=0` forces that path.

use std::path::PathBuf;

fn main() {
    libblkid();
}

/// Where the target's `libblkid.a` is, if anywhere.
fn find_libblkid() -> Result<PathBuf, String> {
    if let Ok(dir) = std::env::var("HWSURVEY_LIBBLKID_DIR") {
        let dir = PathBuf::from(dir);
        return if dir.join("libblkid.a").is_file() {
            Ok(dir)
        } else {
            Err(format!(
                "HWSURVEY_LIBBLKID_DIR={}: no libblkid.a there",
                dir.display()
            ))
        };
    }
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os != "linux" {
        return Err(format!("target os {os:?} is not Linux"));
    }
    let multiarch = format!("{arch}-linux-{env}");
    let dirs = [
        PathBuf::from(format!("/usr/lib/{multiarch}")),
        PathBuf::from(format!("/lib/{multiarch}")),
        PathBuf::from(format!("/usr/{multiarch}/lib")),
    ];
    dirs.iter()
        .find(|d| d.join("libblkid.a").is_file())
        .cloned()
        .ok_or_else(|| {
            format!(
                "no libblkid.a for {multiarch} in {} (Debian: libblkid-dev for that architecture)",
                dirs.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// Links libblkid when the feature asks for it and the target has it; see the module docs.
fn libblkid() {
    println!("cargo:rustc-check-cfg=cfg(hwsurvey_libblkid)");
    println!("cargo:rerun-if-env-changed=HWSURVEY_LIBBLKID");
    println!("cargo:rerun-if-env-changed=HWSURVEY_LIBBLKID_DIR");
    if std::env::var_os("CARGO_FEATURE_LIBBLKID").is_none() {
        return;
    }
    if std::env::var("HWSURVEY_LIBBLKID").is_ok_and(|v| v == "0") {
        println!(
            "cargo:warning=HWSURVEY_LIBBLKID=0: libblkid not linked; raw devices are checked \
             with the wipefs/blkid commands and refused without them"
        );
        return;
    }
    match find_libblkid() {
        Ok(dir) => {
            println!(
                "cargo:rerun-if-changed={}",
                dir.join("libblkid.a").display()
            );
            println!("cargo:rustc-link-search=native={}", dir.display());
            println!("cargo:rustc-link-lib=static=blkid");
            println!("cargo:rustc-cfg=hwsurvey_libblkid");
        }
        Err(why) => println!(
            "cargo:warning=libblkid not linked ({why}); raw devices are checked with the \
             wipefs/blkid commands and refused without them"
        ),
    }
}
