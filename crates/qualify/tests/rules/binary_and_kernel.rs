//! The binary and kernel rules: `binary.arch` (a 32-bit or foreign binary on the kernel) and
//! `os.kernel_min` (from the binary's target descriptor, a rules file, or the kernel's machine).

use super::*;

#[test]
fn binary_32bit_on_64bit_kernel() {
    let mut f = Facts::default();
    f.os.kernel_machine = Probed::Known("x86_64".into());
    f.binary = Probed::Known(BinaryFacts {
        path: "a.out".into(),
        class_bits: 32,
        machine: 3,
        little_endian: true,
    });
    let out = rules::binary_arch(&f, &Params::default());
    assert_eq!(out[0].verdict, Verdict::Fail);
    assert!(out[0]
        .summary
        .contains("32-bit i386 binary on a 64-bit x86_64 kernel (compat mode"));
    f.binary = Probed::Known(BinaryFacts {
        path: "a.out".into(),
        class_bits: 64,
        machine: 43,
        little_endian: false,
    });
    assert!(rules::binary_arch(&f, &Params::default())[0]
        .summary
        .contains("built for SPARCV9 (64-bit)"));
    f.binary = Probed::Known(BinaryFacts {
        path: "a.out".into(),
        class_bits: 64,
        machine: 62,
        little_endian: true,
    });
    assert!(rules::binary_arch(&f, &Params::default()).is_empty());
}

fn binary(class_bits: u8, machine: u16) -> Probed<BinaryFacts> {
    Probed::Known(BinaryFacts {
        path: "/proc/self/exe".into(),
        class_bits,
        machine,
        little_endian: machine != 43,
    })
}

/// The minimum comes from the binary's target descriptor: RHEL 6's 2.6.32 kernel is older
/// than x86_64's 3.2 (rustc platform support); the MCST R2000's 4.9.0 (its kernel log in
/// ../shared/fixtures/sparc64-mcst-elbrus-r2000-8core) is at least sparc64's 4.4.
#[test]
fn kernel_min_from_the_binarys_target_descriptor() {
    let mut f = Facts::default();
    f.os.kernel_release = Probed::Known("2.6.32-754.el6.x86_64".into());
    f.os.kernel_machine = Probed::Known("x86_64".into());
    f.binary = binary(64, 62);
    f.target = target_facts(&f.binary, &f.os.kernel_machine);
    let out = rules::os_kernel_min(&f, &params("os.kernel_min"));
    assert_eq!(verdicts(&out), vec![Verdict::Fail]);
    assert_eq!(
        out[0].summary,
        "kernel 2.6.32-754.el6.x86_64 is older than the minimum 3.2"
    );
    assert_eq!(out[0].fix.as_deref(), Some("run a kernel 3.2 or newer"));
    assert_eq!(
        out[0].evidence[1].source,
        "min_kernel of targets/x86_64.toml (built in) (chosen by ELF64 e_machine 62 of /proc/self/exe)"
    );
    assert!(
        out[0].evidence[1]
            .value
            .starts_with("3.2 (rustc platform support, x86_64-unknown-linux-gnu:"),
        "{}",
        out[0].evidence[1].value
    );

    f.os.kernel_release = Probed::Known("4.9.0-4.12-e90s".into());
    f.os.kernel_machine = Probed::Known("sparc64".into());
    f.binary = binary(64, 43);
    f.target = target_facts(&f.binary, &f.os.kernel_machine);
    let out = rules::os_kernel_min(&f, &params("os.kernel_min"));
    assert_eq!(verdicts(&out), vec![Verdict::Pass]);
    assert_eq!(
        out[0].evidence[0],
        Evidence::new("/proc/sys/kernel/osrelease", "4.9.0-4.12-e90s")
    );
    assert!(out[0].evidence[1]
        .source
        .starts_with("min_kernel of targets/sparc64.toml (built in)"));
    assert!(out[0].evidence[1].value.starts_with("4.4 ("));
    // the same kernel under an aarch64 binary: aarch64's 4.1
    f.binary = binary(64, 183);
    f.target = target_facts(&f.binary, &f.os.kernel_machine);
    let out = rules::os_kernel_min(&f, &params("os.kernel_min"));
    assert!(out[0].evidence[1].value.starts_with("4.1 ("));
}

/// An explicit minimum in the rules file overrides the descriptor, and the evidence says so;
/// no target (a 32-bit i386 binary has none) is "not evaluated" unless the file sets one.
#[test]
fn kernel_min_rules_file_overrides_explicitly() {
    let mut f = Facts::default();
    f.os.kernel_release = Probed::Known("4.9.0-4.12-e90s".into());
    f.os.kernel_machine = Probed::Known("sparc64".into());
    f.binary = binary(64, 43);
    f.target = target_facts(&f.binary, &f.os.kernel_machine);
    let set = RuleSet::parse(
        "strict.toml",
        "[rules.\"os.kernel_min\"]\nmin_kernel = \"5.10\"\n",
    )
    .unwrap();
    let out = rules::os_kernel_min(&f, &set.params("os.kernel_min").unwrap());
    assert_eq!(verdicts(&out), vec![Verdict::Fail]);
    assert_eq!(
        out[0].summary,
        "kernel 4.9.0-4.12-e90s is older than the minimum 5.10"
    );
    assert_eq!(
        out[0].evidence[1],
        Evidence::new(
            "rules file: rules.\"os.kernel_min\".min_kernel (overrides the target descriptor)",
            "5.10"
        )
    );

    f.binary = binary(32, 3);
    f.target = target_facts(&f.binary, &f.os.kernel_machine);
    let out = rules::os_kernel_min(&f, &params("os.kernel_min"));
    assert_eq!(verdicts(&out), vec![Verdict::NotEvaluated]);
    assert_eq!(
        out[0].summary,
        "not evaluated: no hwsurvey target descriptor for ELF32 e_machine 3 of /proc/self/exe"
    );
    let out = rules::os_kernel_min(&f, &set.params("os.kernel_min").unwrap());
    assert_eq!(verdicts(&out), vec![Verdict::Fail]);
}

/// Without a binary the kernel's own machine picks the descriptor, and the evidence says so.
#[test]
fn kernel_min_without_binary_uses_the_kernel_machine() {
    let mut f = Facts::default();
    f.os.kernel_release = Probed::Known("4.9.0-4.12-e90s".into());
    f.os.kernel_machine = Probed::Known("e2k".into());
    f.target = target_facts(&f.binary, &f.os.kernel_machine);
    let out = rules::os_kernel_min(&f, &params("os.kernel_min"));
    assert_eq!(verdicts(&out), vec![Verdict::Pass]);
    assert_eq!(
        out[0].evidence[1].source,
        "min_kernel of targets/e2k.toml (built in) (chosen by the kernel's machine e2k (no binary: binary not given))"
    );
    f.os.kernel_machine = Probed::Unknown(Unknown::Other {
        detail: "no /proc/sys/kernel/arch".into(),
    });
    f.target = target_facts(&f.binary, &f.os.kernel_machine);
    let out = rules::os_kernel_min(&f, &params("os.kernel_min"));
    assert_eq!(
        out[0].summary,
        "not evaluated: no binary (binary not given) and no kernel machine (no /proc/sys/kernel/arch)"
    );
}
