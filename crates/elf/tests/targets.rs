//! The real `targets/*.toml` parse, and bad descriptors are refused naming file, line and key.

use std::path::{Path, PathBuf};

use hwsurvey_elf::{BuildMethod, Class, Endianness, GlibcRule, TargetDescriptor, TargetError};

fn targets_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../targets")
}

#[test]
fn the_four_targets_parse_with_their_facts() {
    let all = TargetDescriptor::load_dir(&targets_dir()).unwrap();
    let names: Vec<_> = all.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["aarch64", "e2k", "sparc64", "x86_64"]);
    let by = |n: &str| all.iter().find(|t| t.name == n).unwrap();

    let x86 = by("x86_64");
    assert_eq!(x86.triple, "x86_64-unknown-linux-gnu");
    assert_eq!(x86.build, BuildMethod::Native);
    assert_eq!(
        (x86.elf.machine, x86.elf.class, x86.elf.endianness),
        (62, Class::Elf64, Endianness::Little)
    );
    assert_eq!(x86.base_page_sizes_bytes, [4096]);

    let arm = by("aarch64");
    assert_eq!(arm.build, BuildMethod::DebianRustcWebBuildStd);
    assert_eq!(arm.elf.machine, 183);
    assert_eq!(
        arm.runner.as_deref(),
        Some(
            "qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib"
        )
    );
    assert_eq!(arm.base_page_sizes_bytes, [4096, 16384, 65536]);

    let sparc = by("sparc64");
    assert_eq!(
        (sparc.elf.machine, sparc.elf.endianness),
        (43, Endianness::Big)
    );
    assert_eq!(sparc.base_page_sizes_bytes, [8192]);
    assert_eq!(sparc.linker, "sparc64-linux-gnu-gcc");

    let e2k = by("e2k");
    assert_eq!(e2k.build, BuildMethod::Vendor);
    assert_eq!(e2k.elf.machine, 175);
    assert_eq!(e2k.elf.interpreter, "/lib64/ld-linux.so.2");
    assert_eq!(
        e2k.target_spec_json.as_deref(),
        Some("e2k-unknown-linux-gnu.json")
    );
    let rules = e2k.elf.e2k.as_ref().unwrap();
    assert_eq!(rules.must_be_clear, 0x20);
    assert!(rules.machine_codes.contains(&4) && rules.machine_codes.contains(&25));
    assert!(!rules.machine_codes.contains(&0) && !rules.machine_codes.contains(&1));

    for t in &all {
        assert_eq!(
            t.elf.glibc,
            GlibcRule::Static,
            "{}: dist binaries are static",
            t.name
        );
    }
}

fn parse_err(text: &str, file: &str) -> String {
    match TargetDescriptor::parse(text, Path::new(file)) {
        Ok(d) => panic!("accepted: {d:?}"),
        Err(e) => e.to_string(),
    }
}

fn with_sparc64(edit: impl Fn(String) -> String) -> String {
    edit(std::fs::read_to_string(targets_dir().join("sparc64.toml")).unwrap())
}

#[test]
fn unknown_key_names_file_line_and_key() {
    let text = with_sparc64(|t| t.replace("machine = 43", "machine = 43\nmachin = 43"));
    let line = text
        .lines()
        .position(|l| l.starts_with("machin ="))
        .unwrap()
        + 1;
    let err = parse_err(&text, "targets/sparc64.toml");
    assert!(
        err.starts_with(&format!(
            "targets/sparc64.toml:{line}:1: key `elf.machin`: unknown field `machin`"
        )),
        "{err}"
    );
    let err = parse_err(
        &format!("colour = 1\n{}", with_sparc64(|t| t)),
        "targets/sparc64.toml",
    );
    assert!(
        err.starts_with("targets/sparc64.toml:1:1: key `colour`: unknown field `colour`"),
        "{err}"
    );
}

#[test]
fn wrong_values_and_missing_keys_are_named() {
    let err = parse_err(
        &with_sparc64(|t| t.replace("glibc = \"static\"", "glibc = \"new\"")),
        "sparc64.toml",
    );
    assert!(err.contains("key `elf.glibc`"), "{err}");
    assert!(
        err.contains("expected \"static\" or a glibc version such as \"2.17\", got \"new\""),
        "{err}"
    );

    let err = parse_err(
        &with_sparc64(|t| t.replace("endianness = \"big\"", "endianness = \"middle\"")),
        "sparc64.toml",
    );
    assert!(err.contains("key `elf.endianness`"), "{err}");

    let err = parse_err(
        &with_sparc64(|t| t.replace("triple = \"sparc64-unknown-linux-gnu\"\n", "")),
        "sparc64.toml",
    );
    assert!(
        err.contains("key `triple`: missing field `triple`"),
        "{err}"
    );

    let err = parse_err(
        &with_sparc64(|t| t.replace("[8192]", "[8000]")),
        "sparc64.toml",
    );
    assert_eq!(err, "sparc64.toml: key `base_page_sizes_bytes`: expected powers of two of at least 4096, got [8000]");

    let err = parse_err(&with_sparc64(|t| t), "targets/sparc.toml");
    assert_eq!(
        err,
        "targets/sparc.toml: key `name`: is \"sparc64\" but must equal the file name stem \"sparc\" (rename the file to sparc64.toml or set name = \"sparc\")"
    );
}

/// The minimum kernels are rustc's platform-support figures for each triple (x86_64 3.2+,
/// aarch64 4.1+, sparc64 4.4+); e2k has no entry there and takes Rust's floor for every
/// linux target (3.2), saying so. Each descriptor names its source.
#[test]
fn minimum_kernels_with_their_sources() {
    let all = TargetDescriptor::load_dir(&targets_dir()).unwrap();
    let got: Vec<(&str, &str, Vec<u64>)> = all
        .iter()
        .map(|t| {
            (
                t.name.as_str(),
                t.min_kernel.as_str(),
                t.min_kernel_numbers().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("aarch64", "4.1", vec![4, 1]),
            ("e2k", "3.2", vec![3, 2]),
            ("sparc64", "4.4", vec![4, 4]),
            ("x86_64", "3.2", vec![3, 2]),
        ]
    );
    for t in &all {
        if t.name == "e2k" {
            assert!(t
                .min_kernel_source
                .contains("no rustc platform-support entry"));
        } else {
            assert!(
                t.min_kernel_source
                    .starts_with(&format!("rustc platform support, {}:", t.triple)),
                "{}: {}",
                t.name,
                t.min_kernel_source
            );
            assert!(
                t.min_kernel_source
                    .contains(&format!("kernel {}+", t.min_kernel)),
                "{}",
                t.min_kernel_source
            );
        }
    }
}

#[test]
fn bad_or_missing_minimum_kernel_is_named() {
    let err = parse_err(
        &with_sparc64(|t| t.replace("min_kernel = \"4.4\"", "min_kernel = \"4.x\"")),
        "sparc64.toml",
    );
    assert_eq!(
        err,
        "sparc64.toml: key `min_kernel`: expected a dotted kernel version such as \"3.2\" or \"4.4\", got \"4.x\""
    );
    let err = parse_err(
        &with_sparc64(|t| t.replace("min_kernel = \"4.4\"\n", "")),
        "sparc64.toml",
    );
    assert!(
        err.contains("key `min_kernel`: missing field `min_kernel`"),
        "{err}"
    );
    let err = parse_err(
        &with_sparc64(|t| t.replace("min_kernel = \"4.4\"", "min_kernel = 4.4")),
        "sparc64.toml",
    );
    assert!(err.contains("key `min_kernel`"), "{err}");
}

#[test]
fn builtin_descriptor_found_by_elf_class_and_machine() {
    let (d, source) = TargetDescriptor::builtin_for_elf(64, 43).unwrap();
    assert_eq!((d.name.as_str(), d.min_kernel.as_str()), ("sparc64", "4.4"));
    assert_eq!(source.to_string(), "targets/sparc64.toml (built in)");
    let (d, _) = TargetDescriptor::builtin_for_elf(64, 175).unwrap();
    assert_eq!(d.name, "e2k");
    assert_eq!(
        TargetDescriptor::builtin_for_elf(64, 62).unwrap().0.name,
        "x86_64"
    );
    assert_eq!(
        TargetDescriptor::builtin_for_elf(64, 183)
            .unwrap()
            .0
            .min_kernel,
        "4.1"
    );
    // i386 (3) and a 32-bit SPARC: no hwsurvey target
    assert!(TargetDescriptor::builtin_for_elf(32, 3).is_none());
    assert!(TargetDescriptor::builtin_for_elf(32, 43).is_none());
}

#[test]
fn glibc_version_rule_parses() {
    let d = TargetDescriptor::parse(
        &with_sparc64(|t| t.replace("glibc = \"static\"", "glibc = \"2.17\"")),
        Path::new("sparc64.toml"),
    )
    .unwrap();
    assert_eq!(d.elf.glibc.to_string(), "at most GLIBC_2.17");
}

#[test]
fn e2k_rules_must_forbid_protected_mode() {
    let text = std::fs::read_to_string(targets_dir().join("e2k.toml")).unwrap();
    let err = parse_err(
        &text.replace("must_be_clear = 0x20", "must_be_clear = 0x10"),
        "e2k.toml",
    );
    assert_eq!(err, "e2k.toml: key `elf.e2k.must_be_clear`: must include 0x20 (EF_E2K_PM, protected mode), got 0x10");
    let without: String = text.split("[elf.e2k]").next().unwrap().to_owned();
    let err = parse_err(&without, "e2k.toml");
    assert!(
        err.contains("key `elf.e2k`: required for e_machine 175"),
        "{err}"
    );
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let err = TargetDescriptor::load(Path::new("/nonexistent/targets/mips.toml")).unwrap_err();
    assert!(matches!(err, TargetError::File(_)));
    assert!(
        err.to_string()
            .starts_with("/nonexistent/targets/mips.toml: cannot read:"),
        "{err}"
    );
}

#[test]
fn builtin_copies_are_the_files_in_targets() {
    for (name, text) in hwsurvey_elf::target::BUILTIN {
        let on_disk = std::fs::read_to_string(targets_dir().join(format!("{name}.toml"))).unwrap();
        assert_eq!(*text, on_disk, "{name}");
    }
    let (desc, source) = TargetDescriptor::resolve("sparc64", Path::new("/nonexistent")).unwrap();
    assert_eq!(desc.elf.machine, 43);
    assert_eq!(source.to_string(), "targets/sparc64.toml (built in)");
    let (desc, source) = TargetDescriptor::resolve("e2k", &targets_dir()).unwrap();
    assert_eq!(desc.elf.machine, 175);
    assert_eq!(
        source,
        hwsurvey_elf::DescriptorSource::File(targets_dir().join("e2k.toml"))
    );
    let err = TargetDescriptor::resolve("mips", &targets_dir())
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with("no such target \"mips\"; known: aarch64, e2k, sparc64, x86_64"),
        "{err}"
    );
}

/// Cross.toml (for users with a container engine) names exactly the targets built here with
/// -Zbuild-std, each with a qemu-user runner; e2k is only a comment (no image exists).
#[test]
fn cross_toml_matches_the_descriptors() {
    let path = targets_dir().join("../Cross.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let cross: toml::Table = toml::from_str(&text).unwrap();
    let table = cross["target"].as_table().unwrap();
    let mut triples: Vec<&str> = table.keys().map(String::as_str).collect();
    triples.sort_unstable();
    let all = TargetDescriptor::load_dir(&targets_dir()).unwrap();
    let mut expected: Vec<&str> = all
        .iter()
        .filter(|t| t.build == BuildMethod::DebianRustcWebBuildStd)
        .map(|t| t.triple.as_str())
        .collect();
    expected.sort_unstable();
    assert_eq!(triples, expected);
    for triple in triples {
        assert_eq!(
            table[triple]["runner"].as_str(),
            Some("qemu-user"),
            "{triple}"
        );
    }
    assert!(text.contains("# [target.e2k-unknown-linux-gnu]"));
}
