//! ELF headers built by the tests themselves (e2k, i386, arm, sparc64, unknown machines),
//! inspected and checked against the real `targets/*.toml`.

use std::path::PathBuf;

use hwsurvey_elf::{check, inspect, Class, Endianness, Linking, Machine, TargetDescriptor};

fn targets_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../targets")
}

fn target(name: &str) -> TargetDescriptor {
    TargetDescriptor::load(&targets_dir().join(format!("{name}.toml"))).unwrap()
}

/// A minimal ELF file: header only (no program or section headers), `ET_EXEC`, or with one
/// `PT_INTERP` program header and the interpreter string when `interp` is given.
fn elf_file(
    class64: bool,
    little: bool,
    machine: u16,
    flags: u32,
    interp: Option<&str>,
) -> Vec<u8> {
    let mut out = Vec::new();
    let u16b = |v: u16| {
        if little {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        }
    };
    let u32b = |v: u32| {
        if little {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        }
    };
    let u64b = |v: u64| {
        if little {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        }
    };
    let (ehsize, phentsize) = if class64 { (64u16, 56u16) } else { (52, 32) };
    out.extend_from_slice(b"\x7fELF");
    out.push(if class64 { 2 } else { 1 });
    out.push(if little { 1 } else { 2 });
    out.push(1); // EV_CURRENT
    out.push(0); // ELFOSABI_SYSV
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&u16b(2)); // ET_EXEC
    out.extend_from_slice(&u16b(machine));
    out.extend_from_slice(&u32b(1)); // e_version
    let phnum = u16::from(interp.is_some());
    let phoff = if phnum > 0 { u64::from(ehsize) } else { 0 };
    if class64 {
        out.extend_from_slice(&u64b(0x400000)); // e_entry
        out.extend_from_slice(&u64b(phoff));
        out.extend_from_slice(&u64b(0)); // e_shoff
    } else {
        out.extend_from_slice(&u32b(0x8048000));
        out.extend_from_slice(&u32b(phoff as u32));
        out.extend_from_slice(&u32b(0));
    }
    out.extend_from_slice(&u32b(flags));
    out.extend_from_slice(&u16b(ehsize));
    out.extend_from_slice(&u16b(phentsize));
    out.extend_from_slice(&u16b(phnum));
    out.extend_from_slice(&u16b(if class64 { 64 } else { 40 })); // e_shentsize
    out.extend_from_slice(&u16b(0)); // e_shnum
    out.extend_from_slice(&u16b(0)); // e_shstrndx
    assert_eq!(out.len(), usize::from(ehsize));
    if let Some(interp) = interp {
        let text_off = u64::from(ehsize) + u64::from(phentsize);
        let len = interp.len() as u64 + 1;
        if class64 {
            out.extend_from_slice(&u32b(3)); // PT_INTERP
            out.extend_from_slice(&u32b(4)); // PF_R
            out.extend_from_slice(&u64b(text_off));
            out.extend_from_slice(&u64b(0x400000 + text_off));
            out.extend_from_slice(&u64b(0x400000 + text_off));
            out.extend_from_slice(&u64b(len));
            out.extend_from_slice(&u64b(len));
            out.extend_from_slice(&u64b(1));
        } else {
            out.extend_from_slice(&u32b(3));
            out.extend_from_slice(&u32b(text_off as u32));
            out.extend_from_slice(&u32b(0x8048000 + text_off as u32));
            out.extend_from_slice(&u32b(0x8048000 + text_off as u32));
            out.extend_from_slice(&u32b(len as u32));
            out.extend_from_slice(&u32b(len as u32));
            out.extend_from_slice(&u32b(4));
            out.extend_from_slice(&u32b(1));
        }
        out.extend_from_slice(interp.as_bytes());
        out.push(0);
    }
    out
}

#[test]
fn e2k_elbrus_v4_header_is_accepted() {
    let bytes = elf_file(true, true, 175, 0x0400_0000, None);
    let info = inspect(&bytes).unwrap();
    assert_eq!(info.machine, Machine::MCST_ELBRUS);
    assert_eq!(info.class, Class::Elf64);
    assert_eq!(info.endianness, Endianness::Little);
    assert_eq!(info.linking, Linking::Static);
    let flags = info.e2k_flags().unwrap();
    assert_eq!(flags.machine_code(), 4);
    assert!(!flags.protected_mode());
    let text = info.to_string();
    assert!(
        text.contains("machine:      EM_MCST_ELBRUS (175)"),
        "{text}"
    );
    assert!(
        text.contains("e2k:          machine code 4 (elbrus-v4), flags: none"),
        "{text}"
    );
    assert_eq!(check(&info, &target("e2k")), vec![]);
}

#[test]
fn e2k_protected_mode_header_is_rejected() {
    let bytes = elf_file(true, true, 175, 0x0400_0020, None);
    let info = inspect(&bytes).unwrap();
    let mismatches = check(&info, &target("e2k"));
    assert_eq!(mismatches.len(), 1, "{mismatches:?}");
    assert_eq!(mismatches[0].field, "e_flags");
    assert_eq!(
        mismatches[0].to_string(),
        "e_flags: expected bits 0x20 clear (0x20 = protected mode), found 0x20 set \
         (machine code 4 (elbrus-v4), flags: EF_E2K_PM (protected mode))"
    );
}

#[test]
fn e2k_unassigned_machine_code_and_32_bit_class_are_rejected() {
    let bytes = elf_file(false, true, 175, 0x0a00_0000, None);
    let info = inspect(&bytes).unwrap();
    let fields: Vec<_> = check(&info, &target("e2k"))
        .iter()
        .map(|m| m.field)
        .collect();
    assert_eq!(fields, ["class", "e_flags machine code"]);
}

#[test]
fn e2k_16c_and_2c3_codes_are_accepted() {
    for (flags, name) in [(0x1600_0000, "elbrus-16c"), (0x1700_0000, "elbrus-2c3")] {
        let info = inspect(&elf_file(true, true, 175, flags, None)).unwrap();
        assert!(info.to_string().contains(name));
        assert_eq!(check(&info, &target("e2k")), vec![]);
    }
}

#[test]
fn i386_header_is_named_and_fails_the_x86_64_target() {
    let info = inspect(&elf_file(false, true, 3, 0, None)).unwrap();
    assert_eq!(info.machine.to_string(), "i386 (3)");
    assert_eq!(info.class, Class::Elf32);
    let text: Vec<String> = check(&info, &target("x86_64"))
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        text,
        [
            "class: expected ELF64, found ELF32",
            "machine: expected x86_64 (62), found i386 (3)"
        ]
    );
}

#[test]
fn arm_header_with_interpreter_is_dynamic() {
    let bytes = elf_file(
        false,
        true,
        40,
        0x0500_0400,
        Some("/lib/ld-linux-armhf.so.3"),
    );
    let info = inspect(&bytes).unwrap();
    assert_eq!(info.machine.to_string(), "arm (40)");
    assert_eq!(
        info.interpreter.as_deref(),
        Some("/lib/ld-linux-armhf.so.3")
    );
    assert_eq!(info.linking, Linking::Dynamic);
    let fields: Vec<_> = check(&info, &target("aarch64"))
        .iter()
        .map(|m| m.field)
        .collect();
    // aarch64 expects static binaries: the dynamic file is one `linking` mismatch, its
    // interpreter is not compared with that of a dynamic aarch64 build (tester defect)
    assert_eq!(fields, ["class", "machine", "linking"]);
}

#[test]
fn dynamic_file_against_a_static_target_is_not_also_an_interpreter_mismatch() {
    // what `/bin/ls --target aarch64` is on x86_64: a dynamic x86_64 file
    let bytes = elf_file(true, true, 62, 0, Some("/lib64/ld-linux-x86-64.so.2"));
    let info = inspect(&bytes).unwrap();
    let text: Vec<String> = check(&info, &target("aarch64"))
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        text,
        [
            "machine: expected aarch64 (183), found x86_64 (62)",
            "linking: expected static, found dynamic (interpreter /lib64/ld-linux-x86-64.so.2)"
        ]
    );
}

#[test]
fn interpreter_is_compared_when_the_target_allows_dynamic_binaries() {
    let path = targets_dir().join("aarch64.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("glibc = \"static\"", "glibc = \"2.17\"");
    let dynamic = TargetDescriptor::parse(&text, &path).unwrap();
    let right = inspect(&elf_file(
        true,
        true,
        183,
        0,
        Some("/lib/ld-linux-aarch64.so.1"),
    ))
    .unwrap();
    assert_eq!(check(&right, &dynamic), vec![]);
    let wrong = inspect(&elf_file(
        true,
        true,
        183,
        0,
        Some("/lib/ld-musl-aarch64.so.1"),
    ))
    .unwrap();
    let text: Vec<String> = check(&wrong, &dynamic)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        text,
        ["interpreter: expected /lib/ld-linux-aarch64.so.1, found /lib/ld-musl-aarch64.so.1"]
    );
}

#[test]
fn sparc64_static_header_with_e_flags_0x200_passes() {
    let info = inspect(&elf_file(true, false, 43, 0x200, None)).unwrap();
    assert_eq!(info.endianness, Endianness::Big);
    assert_eq!(info.machine.to_string(), "SPARCV9 (43)");
    assert_eq!(info.e_flags, 0x200);
    assert_eq!(check(&info, &target("sparc64")), vec![]);
    // the same file is not an aarch64 binary
    let fields: Vec<_> = check(&info, &target("aarch64"))
        .iter()
        .map(|m| m.field)
        .collect();
    assert_eq!(fields, ["endianness", "machine"]);
}

#[test]
fn dynamic_aarch64_header_fails_the_static_rule() {
    let bytes = elf_file(true, true, 183, 0, Some("/lib/ld-linux-aarch64.so.1"));
    let info = inspect(&bytes).unwrap();
    let text: Vec<String> = check(&info, &target("aarch64"))
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        text,
        ["linking: expected static, found dynamic (interpreter /lib/ld-linux-aarch64.so.1)"]
    );
}

#[test]
fn unknown_machine_is_said_to_be_unknown() {
    let info = inspect(&elf_file(true, true, 4242, 0, None)).unwrap();
    assert_eq!(info.machine.to_string(), "unknown machine 4242");
    assert!(info
        .to_string()
        .contains("machine:      unknown machine 4242"));
}

#[test]
fn every_truncation_of_a_header_is_an_error_not_a_panic() {
    let bytes = elf_file(true, false, 43, 0x200, Some("/lib64/ld-linux.so.2"));
    for len in 0..bytes.len() {
        assert!(inspect(&bytes[..len]).is_err(), "length {len} accepted");
    }
    assert!(inspect(&bytes).is_ok());
}
