use super::*;

#[test]
fn binary_findings() {
    let b = |bits, m: u16, name: &str| BinaryElf {
        class_bits: bits,
        e_machine: m,
        machine_name: name.into(),
        endianness: "little".into(),
    };
    assert!(compare_binary("x86_64", &b(64, 62, "X86_64")).native);
    let f = compare_binary("x86_64", &b(32, 3, "386"));
    assert!(!f.native);
    assert!(f
        .finding
        .unwrap()
        .contains("32-bit 386 binary on a 64-bit x86_64 kernel"));
    let f = compare_binary("x86_64", &b(64, 183, "AARCH64"));
    assert!(f.finding.unwrap().contains("emulated"));
    assert!(compare_binary("sparc64", &b(64, 43, "SPARCV9")).native);
    assert_eq!(
        compare_binary("sparc64", &b(64, 43, "SPARCV9")).kernel_bits,
        Some(64)
    );
    // compat pairs come from the one table: SPARC32PLUS on sparc64, arm on aarch64
    let f = compare_binary("sparc64", &b(32, 18, "SPARC32PLUS"));
    assert!(f.finding.unwrap().contains("(compat mode)"));
    let f = compare_binary("aarch64", &b(32, 40, "arm"));
    assert!(f.finding.unwrap().contains("(compat mode)"));
    assert!(compare_binary("vax", &b(32, 75, "VAX"))
        .kernel_bits
        .is_none());
}

#[test]
fn header_of_this_test_binary() {
    let bytes = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    let b = parse_elf_header(&bytes[..64]).unwrap();
    assert_eq!(b.class_bits as usize, 8 * std::mem::size_of::<usize>());
    let expected = if cfg!(target_arch = "x86_64") {
        (62, "x86_64")
    } else if cfg!(target_arch = "aarch64") {
        (183, "aarch64")
    } else if cfg!(target_arch = "sparc64") {
        (43, "SPARCV9")
    } else {
        (b.e_machine, b.machine_name.as_str())
    };
    assert_eq!((b.e_machine, b.machine_name.as_str()), expected);
    assert_eq!(
        parse_elf_header(b"hello world").unwrap_err(),
        "not an ELF file: expected magic 7f 45 4c 46, found 68 65 6c 6c"
    );
}

#[test]
fn cpu_max_forms() {
    assert_eq!(
        parse_cpu_max("max 100000\n"),
        Some(CpuMax {
            quota_us: None,
            period_us: 100000,
            source: None,
        })
    );
    assert_eq!(
        parse_cpu_max("50000 100000"),
        Some(CpuMax {
            quota_us: Some(50000),
            period_us: 100000,
            source: None,
        })
    );
    assert_eq!(parse_cpu_max("x"), None);
}
