//! The test binary itself (under qemu-user, /proc/self/exe is the guest binary) must be what
//! its target descriptor says: right machine, class, byte order, interpreter when dynamic.

use std::path::PathBuf;

use hwsurvey_elf::{check, inspect_file, Class, Endianness, Linking, Machine, TargetDescriptor};

fn this_target() -> Option<&'static str> {
    if cfg!(target_arch = "x86_64") {
        Some("x86_64")
    } else if cfg!(target_arch = "aarch64") {
        Some("aarch64")
    } else if cfg!(target_arch = "sparc64") {
        Some("sparc64")
    } else {
        None
    }
}

#[test]
fn this_test_binary_matches_its_target_descriptor() {
    let Some(name) = this_target() else {
        println!("SKIPPED: no targets/*.toml for this architecture");
        return;
    };
    let exe = std::env::current_exe().unwrap();
    let info = inspect_file(&exe).unwrap();
    let desc = TargetDescriptor::load(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../targets/{name}.toml")),
    )
    .unwrap();
    assert_eq!(info.machine, Machine(desc.elf.machine));
    assert_eq!(info.class, Class::Elf64);
    let endian = if cfg!(target_endian = "big") {
        Endianness::Big
    } else {
        Endianness::Little
    };
    assert_eq!(info.endianness, endian);
    if cfg!(target_feature = "crt-static") {
        assert!(info.linking.is_static(), "{info}");
        assert_eq!(check(&info, &desc), vec![]);
    } else {
        // a test binary is dynamic: it needs libc and some GLIBC_2.x, through the target's
        // interpreter; only the static rule fails
        assert_eq!(info.linking, Linking::Dynamic);
        assert!(
            info.needed.iter().any(|n| n == "libc.so.6"),
            "{:?}",
            info.needed
        );
        assert!(info
            .newest_glibc
            .is_some_and(|v| v.major == 2 && v.minor >= 2));
        assert_eq!(
            info.interpreter.as_deref(),
            Some(desc.elf.interpreter.as_str())
        );
        let fields: Vec<_> = check(&info, &desc).iter().map(|m| m.field).collect();
        assert_eq!(fields, ["linking"]);
    }
}
