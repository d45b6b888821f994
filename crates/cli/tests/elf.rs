//! End-to-end tests of `hwsurvey elf`: real and hand-built ELF files, `--target` checks, and
//! inputs that are not ELF (one-line error, non-zero exit, no panic).

use std::io::Write;
use std::path::{Path, PathBuf};

use assert_cmd::prelude::*;
use hwsurvey_testkit::hwsurvey;
use predicates::prelude::*;

fn write_temp(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
    path
}

/// A header-only little-endian ELF file.
fn header(class64: bool, machine: u16, flags: u32) -> Vec<u8> {
    let mut out = b"\x7fELF".to_vec();
    out.extend_from_slice(&[if class64 { 2 } else { 1 }, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    out.extend_from_slice(&machine.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    if class64 {
        out.extend_from_slice(&[0; 24]); // entry, phoff, shoff
    } else {
        out.extend_from_slice(&[0; 12]);
    }
    out.extend_from_slice(&flags.to_le_bytes());
    let (ehsize, phentsize, shentsize) = if class64 {
        (64u16, 56u16, 64u16)
    } else {
        (52, 32, 40)
    };
    for v in [ehsize, phentsize, 0, shentsize, 0, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

fn assert_one_line_error(path: &Path, what: &str) {
    let out = hwsurvey().arg("elf").arg(path).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{what}: {out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{what}: {stderr}");
    assert!(stderr.starts_with("hwsurvey: error: "), "{what}: {stderr}");
    assert!(
        stderr.contains(&path.display().to_string()),
        "{what}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
}

#[test]
fn non_elf_inputs_get_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write_temp(dir.path(), "empty", b"");
    assert_one_line_error(&empty, "empty");
    let four = write_temp(dir.path(), "four", b"\x7fELF");
    assert_one_line_error(&four, "4-byte file");
    let png = write_temp(
        dir.path(),
        "image.png",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89",
    );
    assert_one_line_error(&png, "PNG");
    let mut blob = vec![0u8; 64 * 1024];
    let mut state = 0x2545_f491_4f6c_dd1du64; // xorshift64*: a fixed pseudo-random blob
    for b in &mut blob {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        *b = (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8;
    }
    let random = write_temp(dir.path(), "random", &blob);
    assert_one_line_error(&random, "random 64 KiB");
    let exe = std::fs::read(assert_cmd::cargo::cargo_bin("hwsurvey")).unwrap();
    let truncated = write_temp(dir.path(), "truncated", &exe[..exe.len() / 3]);
    assert_one_line_error(&truncated, "truncated ELF");
    assert_one_line_error(&dir.path().join("missing"), "missing file");

    hwsurvey()
        .arg("elf")
        .arg(&png)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "not an ELF file: expected magic 7f 45 4c 46, found 89 50 4e 47 (a PNG image)",
        ));
    hwsurvey()
        .arg("elf")
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("empty file"));
}

#[test]
fn the_hwsurvey_binary_fits_its_own_target() {
    let exe = assert_cmd::cargo::cargo_bin("hwsurvey");
    let (name, machine) = if cfg!(target_arch = "x86_64") {
        ("x86_64", "x86_64 (62)")
    } else if cfg!(target_arch = "aarch64") {
        ("aarch64", "aarch64 (183)")
    } else if cfg!(target_arch = "sparc64") {
        ("sparc64", "SPARCV9 (43)")
    } else {
        println!("SKIPPED: no targets/*.toml for this architecture");
        return;
    };
    let out = hwsurvey().arg("elf").arg(&exe).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains(&format!("machine:      {machine}\n")),
        "{stdout}"
    );
    assert!(stdout.contains("class:        ELF64\n"), "{stdout}");
    // a test build is dynamic; with --target it fails only the "static" rule, by name
    if stdout.contains("linking:      dynamic") {
        assert!(stdout.contains("needed:       "), "{stdout}");
        assert!(stdout.contains("libc.so.6"), "{stdout}");
        assert!(stdout.contains("newest glibc: GLIBC_2."), "{stdout}");
        hwsurvey()
            .args(["elf", "--target", name])
            .arg(&exe)
            .assert()
            .code(1)
            .stdout(predicate::str::contains(
                "mismatch:     linking: expected static, found dynamic",
            ))
            .stdout(predicate::str::contains("mismatch:     machine").not());
        // against another (static-expecting) target: machine and linking, never also the
        // interpreter of a dynamic build of that target (tester defect)
        let other = if name == "aarch64" {
            "x86_64"
        } else {
            "aarch64"
        };
        hwsurvey()
            .args(["elf", "--target", other])
            .arg(&exe)
            .assert()
            .code(1)
            .stdout(predicate::str::contains("mismatch:     machine: expected"))
            .stdout(predicate::str::contains(
                "mismatch:     linking: expected static, found dynamic",
            ))
            .stdout(predicate::str::contains("mismatch:     interpreter").not());
    }
}

#[test]
fn e2k_headers_are_decoded_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let v4 = write_temp(dir.path(), "e2k-v4", &header(true, 175, 0x0400_0000));
    hwsurvey()
        .args(["elf", "--target", "e2k"])
        .arg(&v4)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "machine:      EM_MCST_ELBRUS (175)",
        ))
        .stdout(predicate::str::contains(
            "e2k:          machine code 4 (elbrus-v4), flags: none",
        ))
        .stdout(predicate::str::contains("linking:      static"))
        .stdout(predicate::str::contains("check:        ok"));

    let pm = write_temp(dir.path(), "e2k-pm", &header(true, 175, 0x0400_0020));
    hwsurvey()
        .args(["elf", "--target", "targets/e2k.toml"])
        .arg(&pm)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("EF_E2K_PM (protected mode)"))
        .stdout(predicate::str::contains(
            "mismatch:     e_flags: expected bits 0x20 clear",
        ))
        .stderr(predicate::str::contains("does not fit target e2k"));
}

#[test]
fn i386_and_arm_headers_are_named_and_fail_64_bit_targets() {
    let dir = tempfile::tempdir().unwrap();
    let i386 = write_temp(dir.path(), "i386", &header(false, 3, 0));
    hwsurvey()
        .args(["elf", "--target", "x86_64"])
        .arg(&i386)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("machine:      i386 (3)"))
        .stdout(predicate::str::contains(
            "mismatch:     class: expected ELF64, found ELF32",
        ))
        .stdout(predicate::str::contains(
            "mismatch:     machine: expected x86_64 (62), found i386 (3)",
        ));
    let arm = write_temp(dir.path(), "arm", &header(false, 40, 0x0500_0000));
    hwsurvey()
        .args(["elf", "--target", "aarch64"])
        .arg(&arm)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("machine:      arm (40)"))
        .stdout(predicate::str::contains(
            "mismatch:     machine: expected aarch64 (183), found arm (40)",
        ));
    let odd = write_temp(dir.path(), "odd", &header(true, 4242, 0));
    hwsurvey()
        .arg("elf")
        .arg(&odd)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "machine:      unknown machine 4242",
        ));
}

#[test]
fn unknown_target_name_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let v4 = write_temp(dir.path(), "e2k-v4", &header(true, 175, 0x0400_0000));
    hwsurvey()
        .args(["elf", "--target", "mips"])
        .arg(&v4)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such target \"mips\""));
}
