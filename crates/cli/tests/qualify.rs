//! `hwsurvey qualify` end to end: exit codes, formats, rules-file errors.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

/// A small snapshot with the UltraSPARC T1 capture's CPU sets: possible 0-31, present and
/// online 0-23, CPU folders 0-31.
fn t1_like(dir: &Path) {
    let cpu = dir.join("sys/devices/system/cpu");
    std::fs::create_dir_all(&cpu).unwrap();
    std::fs::write(cpu.join("possible"), "0-31\n").unwrap();
    std::fs::write(cpu.join("present"), "0-23\n").unwrap();
    std::fs::write(cpu.join("online"), "0-23\n").unwrap();
    for n in 0..32 {
        std::fs::create_dir_all(cpu.join(format!("cpu{n}"))).unwrap();
    }
}

#[test]
fn failing_snapshot_exits_2_and_names_the_cpus() {
    let dir = tempfile::tempdir().unwrap();
    t1_like(dir.path());
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--root"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stdout(predicate::str::contains("FAIL          cpu.online"))
        .stdout(predicate::str::contains("24 of 32 possible CPUs online"));
}

#[test]
fn json_and_markdown_formats() {
    let dir = tempfile::tempdir().unwrap();
    t1_like(dir.path());
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--format", "json", "--root"])
        .arg(dir.path())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &v["findings"][0];
    assert_eq!(first["rule"], "cpu.online");
    assert_eq!(first["verdict"], "fail");
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--format", "markdown", "--root"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stdout(predicate::str::contains("| fail | `cpu.online` | 24 of 32"));
}

#[test]
fn rules_file_errors_name_file_line_key() {
    let dir = tempfile::tempdir().unwrap();
    t1_like(dir.path());
    let rules = dir.path().join("rules.toml");
    std::fs::write(&rules, "[rules.\"memory.triad_share\"]\nmin_share = 7\n").unwrap();
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--rules"])
        .arg(&rules)
        .arg("--root")
        .arg(dir.path())
        .assert()
        .code(3)
        .stderr(predicate::str::contains(format!(
            "{}:2: key \"rules.\\\"memory.triad_share\\\".min_share\": 7 is out of range",
            rules.display()
        )));
}

/// With the failing rule disabled nothing warns or fails, but the DIMM, EDAC and governor rules
/// cannot be evaluated on this snapshot: the verdict is incomplete (exit 4), never a pass
/// (before, it exited 0); --strict makes it a failure (2).
#[test]
fn disabling_the_failing_rule_leaves_an_incomplete_verdict_and_strict_fails_it() {
    let dir = tempfile::tempdir().unwrap();
    t1_like(dir.path());
    // one fact besides the CPU sets, so that some enabled rule is evaluated (cpu.isolation
    // passes on this command line); with nothing evaluable the root is an input error (exit 3)
    std::fs::create_dir_all(dir.path().join("proc")).unwrap();
    std::fs::write(
        dir.path().join("proc/cmdline"),
        "root=/dev/sda1 console=ttyS0\n",
    )
    .unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(&rules, "[rules.\"cpu.online\"]\nenabled = false\n").unwrap();
    let run = |strict: bool| {
        let mut c = Command::cargo_bin("hwsurvey").unwrap();
        c.args(["qualify", "--rules"])
            .arg(&rules)
            .arg("--root")
            .arg(dir.path());
        if strict {
            c.arg("--strict");
        }
        c.output().unwrap().status.code()
    };
    // DIMMs, EDAC, governors ... are not in this snapshot: not evaluated
    assert_eq!(run(false), Some(4));
    assert_eq!(run(true), Some(2));
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--rules"])
        .arg(&rules)
        .arg("--root")
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\nverdict: incomplete, not a pass: ")
            && text.contains(" not evaluated: ")
            && text.contains("memory.channels"),
        "{text}"
    );
}

#[test]
fn live_machine_says_what_was_not_evaluated() {
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--format", "json"])
        .output()
        .unwrap();
    // a verdict: pass, warn, fail, incomplete (this VM cannot evaluate the DIMM rules) or
    // emulated
    assert!(
        matches!(out.status.code(), Some(0..=2 | 4 | 5)),
        "{:?}",
        out.status
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // the JSON carries the verdict beside the findings, and the exit status follows it
    let code = match v["verdict"].as_str().unwrap() {
        "pass" => 0,
        "warn" => 1,
        "fail" => 2,
        "incomplete" => 4,
        "emulated" => 5,
        other => panic!("verdict {other}"),
    };
    assert_eq!(out.status.code(), Some(code), "{}", v["verdict_line"]);
    let findings = v["findings"].as_array().unwrap();
    // every not-evaluated finding carries its reason
    for f in findings.iter().filter(|f| f["verdict"] == "not_evaluated") {
        let s = f["summary"].as_str().unwrap();
        assert!(s.starts_with("not evaluated: ") && s.len() > 20, "{s}");
    }
    // the binary check runs against the running kernel: a pass natively, a failure that says
    // "emulation" when this suite runs under qemu-user on another machine's kernel (the
    // aarch64 and sparc64 stages of scripts/test run on an x86_64 kernel)
    let bin = findings
        .iter()
        .find(|f| f["rule"] == "binary.arch")
        .unwrap();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/arch")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let native = match std::env::consts::ARCH {
        "x86_64" => kernel == "x86_64",
        "aarch64" => kernel == "aarch64",
        "sparc64" => kernel == "sparc64",
        _ => true,
    };
    if native || kernel.is_empty() {
        assert_ne!(bin["verdict"], "fail", "{bin}");
    } else {
        assert_eq!(bin["verdict"], "fail", "{bin}");
        let s = bin["summary"].as_str().unwrap();
        assert!(s.contains("emulation") && s.contains(&kernel), "{s}");
    }
}

/// os.kernel_min takes its minimum from the target descriptor of the binary checked: the
/// running binary's own target by default, `--binary FILE`'s target otherwise (a snapshot
/// with an osrelease of 4.2: at least aarch64's 4.1, older than sparc64's 4.4).
#[test]
fn kernel_minimum_comes_from_the_binarys_target() {
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let k = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "os.kernel_min")
        .unwrap()
        .clone();
    if k["verdict"] != "not_evaluated" {
        let src = k["evidence"][1]["source"].as_str().unwrap();
        let arch = std::env::consts::ARCH;
        assert!(
            src.starts_with(&format!("min_kernel of targets/{arch}.toml (built in)")),
            "{src}"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    t1_like(dir.path());
    let kernel = dir.path().join("proc/sys/kernel");
    std::fs::create_dir_all(&kernel).unwrap();
    std::fs::write(kernel.join("osrelease"), "4.2.0\n").unwrap();
    std::fs::write(kernel.join("arch"), "sparc64\n").unwrap();
    let elf = |machine: u16, big: bool| {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = if big { 2 } else { 1 };
        h[6] = 1;
        let (t, m, v) = if big {
            (
                2u16.to_be_bytes(),
                machine.to_be_bytes(),
                1u32.to_be_bytes(),
            )
        } else {
            (
                2u16.to_le_bytes(),
                machine.to_le_bytes(),
                1u32.to_le_bytes(),
            )
        };
        h[16..18].copy_from_slice(&t);
        h[18..20].copy_from_slice(&m);
        h[20..24].copy_from_slice(&v);
        h[52] = if big { 0 } else { 64 };
        h[53] = if big { 64 } else { 0 };
        h
    };
    let finding = |bin: &Path| {
        let out = Command::cargo_bin("hwsurvey")
            .unwrap()
            .args(["qualify", "--format", "json", "--root"])
            .arg(dir.path())
            .arg("--binary")
            .arg(bin)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule"] == "os.kernel_min")
            .unwrap()
            .clone()
    };
    let sparc = dir.path().join("sparc64.elf");
    std::fs::write(&sparc, elf(43, true)).unwrap();
    let k = finding(&sparc);
    assert_eq!(k["verdict"], "fail", "{k}");
    assert_eq!(k["summary"], "kernel 4.2.0 is older than the minimum 4.4");
    let src = k["evidence"][1]["source"].as_str().unwrap();
    assert!(
        src.starts_with(
            "min_kernel of targets/sparc64.toml (built in) (chosen by ELF64 e_machine 43 of "
        ),
        "{src}"
    );
    let arm = dir.path().join("aarch64.elf");
    std::fs::write(&arm, elf(183, false)).unwrap();
    let k = finding(&arm);
    assert_eq!(k["verdict"], "pass", "{k}");
    assert!(
        k["evidence"][1]["value"]
            .as_str()
            .unwrap()
            .starts_with("4.1 ("),
        "{k}"
    );
}

/// Exit 2 is "a rule failed" only; input and usage errors exit 3.
#[test]
fn input_and_usage_errors_exit_3_verdicts_keep_0_1_2() {
    let dir = tempfile::tempdir().unwrap();
    t1_like(dir.path());
    let missing = dir.path().join("no-such-rules.toml");
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--rules"])
        .arg(&missing)
        .arg("--root")
        .arg(dir.path())
        .assert()
        .code(3)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(
            "no-such-rules.toml: cannot read: ",
        ));
    let unknown = dir.path().join("unknown.toml");
    std::fs::write(&unknown, "[rules.\"cpu.nosuch\"]\nenabled = true\n").unwrap();
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--rules"])
        .arg(&unknown)
        .arg("--root")
        .arg(dir.path())
        .assert()
        .code(3);
    // an unreadable result file
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .arg("qualify")
        .arg(dir.path().join("missing.json"))
        .assert()
        .code(3);
    // a usage error (clap) of qualify
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--format", "yaml", "--root"])
        .arg(dir.path())
        .assert()
        .code(3)
        .stderr(predicate::str::contains("invalid value 'yaml'"));
    // --root that is a file but no archive
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--root"])
        .arg(&unknown)
        .assert()
        .code(3)
        .stderr(predicate::str::contains("is a file, not a folder"));
    // the failing verdict itself is still 2, and --help documents 3
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--root"])
        .arg(dir.path())
        .assert()
        .code(2);
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--help"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("3  input or usage error"));
}

/// `--binary` of a non-ELF file: the `hwsurvey elf` one-liner, exit 3 (not goblin's text).
#[test]
fn binary_not_elf_is_a_clear_one_line_input_error() {
    let dir = tempfile::tempdir().unwrap();
    t1_like(dir.path());
    let png = dir.path().join("img.png");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01").unwrap();
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--root"])
        .arg(dir.path())
        .arg("--binary")
        .arg(&png)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim_end(),
        format!(
            "hwsurvey: error: {}: not an ELF file: expected magic 7f 45 4c 46, found 89 50 4e 47 (a PNG image)",
            png.display()
        )
    );
    assert!(!err.contains("Invalid magic"), "{err}");
}

/// An empty root is not a machine that passes: it is no root (the one `--root` check of every
/// command), exit 3.
#[test]
fn empty_root_nothing_evaluated_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--root"])
        .arg(dir.path())
        .assert()
        .code(3)
        .stderr(predicate::str::contains(format!(
            "{} does not look like a Linux root or snapshot",
            dir.path().display()
        )));
    // one readable fact is enough to give a verdict again
    t1_like(dir.path());
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--root"])
        .arg(dir.path())
        .assert()
        .code(2);
}

/// The checked-in x86_64 standard run, as JSON.
fn example_result() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/examples/v1/x86_64-standard.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// A result file with hand-made stored findings (a failure no rule would find on that
/// machine): qualify and compare show these, say they were stored at run time and by which
/// rules file; an older file without them is recomputed, and both say so.
#[test]
fn stored_findings_are_shown_as_stored_older_files_recomputed() {
    let dir = tempfile::tempdir().unwrap();
    // A file as runs wrote them before findings were stored: the example without them.
    let mut old = example_result();
    old.as_object_mut().unwrap().remove("qualification");
    let old_path = dir.path().join("old.json");
    std::fs::write(&old_path, serde_json::to_vec(&old).unwrap()).unwrap();
    let mut stored = old.clone();
    stored["qualification"] = serde_json::json!({
        "rules": {"source": "hand-made.toml", "fnv1a64": "0123456789abcdef"},
        "evaluated_at": "2026-11-29T20:34:10Z",
        "findings": [
            {"rule": "cpu.online", "verdict": "fail",
             "summary": "hand-made: 24 of 32 possible CPUs online",
             "evidence": [{"source": "/sys/devices/system/cpu/online", "value": "0-23"}],
             "fix": "hand-made fix"},
            {"rule": "os.kernel_min", "verdict": "pass",
             "summary": "the kernel is at least the target's minimum version",
             "evidence": [], "fix": null}
        ]
    });
    let stored_path = dir.path().join("stored.json");
    std::fs::write(&stored_path, serde_json::to_vec(&stored).unwrap()).unwrap();

    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--format", "json"])
        .arg(&stored_path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // shown as stored, each with the kind of its rule (the stored ones predate the field)
    for f in v["findings"].as_array_mut().unwrap() {
        let kind = f.as_object_mut().unwrap().remove("kind");
        assert_eq!(kind, Some(serde_json::json!("machine")), "{f}");
    }
    assert_eq!(v["findings"], stored["qualification"]["findings"]);
    assert_eq!(
        v["origin"],
        "findings stored at run time (2026-11-29T20:34:10Z, rules hand-made.toml, fnv1a64 0123456789abcdef)"
    );
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .arg("qualify")
        .arg(&stored_path)
        .assert()
        .code(2)
        .stdout(predicate::str::contains(
            "\nfindings stored at run time (2026-11-29T20:34:10Z, rules hand-made.toml",
        ))
        .stdout(predicate::str::contains("fix: hand-made fix"));

    // the older file: recomputed with the built-in rules, and said so
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--format", "json"])
        .arg(&old_path)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let origin = v["origin"].as_str().unwrap();
    assert!(
        origin.starts_with(
            "findings recomputed now with rules profiles/qualify.toml (built in), fnv1a64 "
        ) && origin
            .ends_with(": the file stores no findings (written before hwsurvey run stored them)"),
        "{origin}"
    );
    let rules = v["findings"].as_array().unwrap();
    assert!(rules.iter().any(|f| f["rule"] == "memory.triad_share"));
    assert!(!rules
        .iter()
        .any(|f| f["summary"].as_str().unwrap().starts_with("hand-made")));

    // --rules asks for other rules: recomputed, saying the stored ones are not shown
    let rules_file = dir.path().join("r.toml");
    std::fs::write(&rules_file, "[rules.\"cpu.smt\"]\nenabled = false\n").unwrap();
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--format", "json", "--rules"])
        .arg(&rules_file)
        .arg(&stored_path)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let origin = v["origin"].as_str().unwrap();
    assert!(
        origin.starts_with(&format!(
            "findings recomputed now with rules {}, fnv1a64 ",
            rules_file.display()
        )) && origin.ends_with(": --rules given (the file's stored findings are not shown)"),
        "{origin}"
    );

    // compare: the stored verdict in the stored file's column, a note per column saying which
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args([
            "compare", "--format", "markdown", "--label", "stored", "--label", "old",
        ])
        .arg(&stored_path)
        .arg(&old_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = String::from_utf8_lossy(&out.stdout);
    let row = md
        .lines()
        .find(|l| l.starts_with("| cpu.online |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        row.contains("hand-made: 24 of 32 possible CPUs online"),
        "{row}"
    );
    assert!(
        md.contains("stored: findings stored at run time (2026-11-29T20:34:10Z, rules hand-made.toml, fnv1a64 0123456789abcdef)"),
        "{md}"
    );
    assert!(
        md.contains("old: findings recomputed now with rules profiles/qualify.toml (built in)"),
        "{md}"
    );
}

/// A result file whose statistics, sizes or page sizes were edited is refused by `qualify`
/// through the one loader: exit 3 (an input error), one line naming the file, the field and
/// the value, nothing on stdout (a CV of 1.18e21, a working set of 1.18e21
/// bytes, a huge page size of 2^64-1 were shown as if measured).
#[test]
fn edited_result_files_are_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/examples/v1/x86_64-standard.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(example).unwrap()).unwrap();
    let bw = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .position(|t| t["metrics"][0]["summary"]["cv"].is_f64())
        .unwrap();
    let ws = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .position(|t| t["point"]["params"]["working_set_bytes"].is_u64())
        .unwrap();
    let cases: [(&str, String, serde_json::Value, &str); 3] = [
        (
            "cv.json",
            format!("/tests/{bw}/metrics/0/summary/cv"),
            serde_json::json!(1.18e21),
            "1.18e21 is not the CV of the ",
        ),
        (
            "ws.json",
            format!("/tests/{ws}/point/params/working_set_bytes"),
            serde_json::json!(1.18e21),
            "1.18e21 bytes is not plausible (above 2^50 bytes, 1 PiB)",
        ),
        (
            "huge.json",
            "/environment/huge_pools/0/page_size_bytes".to_string(),
            serde_json::json!(u64::MAX),
            "18446744073709551615 bytes is not plausible (above 2^50 bytes, 1 PiB)",
        ),
    ];
    for (name, pointer, value, expect) in cases {
        let mut edited = v.clone();
        *edited.pointer_mut(&pointer).unwrap() = value;
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_vec(&edited).unwrap()).unwrap();
        let out = Command::cargo_bin("hwsurvey")
            .unwrap()
            .arg("qualify")
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{name}");
        assert!(out.stdout.is_empty(), "{name}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        let field = pointer
            .trim_start_matches('/')
            .split('/')
            .fold(String::new(), |acc, part| match part.parse::<usize>() {
                Ok(i) => format!("{acc}[{i}]"),
                Err(_) if acc.is_empty() => part.to_string(),
                Err(_) => format!("{acc}.{part}"),
            });
        assert!(
            err.contains(&format!("{name}: at {field}")) && err.contains(expect),
            "{err}"
        );
    }
    // the file as the run wrote it qualifies (0, 1, 2, 4 or 5 is a verdict, not an input error)
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .arg("qualify")
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../reports/examples/v1/x86_64-standard.json"),
        )
        .output()
        .unwrap();
    assert_ne!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Empty hugetlb pools or THP off are preconditions of the profile, not hardware
/// faults: listed apart, with `kind: precondition`, and the exit status comes from the
/// findings about the machine only.
#[test]
fn preconditions_are_apart_and_do_not_set_the_exit_status() {
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = v["findings"].as_array().unwrap();
    let kind_of = |rule: &str| {
        findings
            .iter()
            .find(|f| f["rule"] == rule)
            .map(|f| f["kind"].as_str().unwrap().to_string())
    };
    assert_eq!(kind_of("pages.hugetlb").as_deref(), Some("precondition"));
    assert_eq!(kind_of("pages.thp").as_deref(), Some("precondition"));
    assert_eq!(kind_of("cpu.online").as_deref(), Some("machine"));
    // a failure 2, a warning 1, a rule about the machine not evaluated 4 (incomplete), else 0
    let machine: Vec<&str> = findings
        .iter()
        .filter(|f| f["kind"] == "machine")
        .map(|f| f["verdict"].as_str().unwrap())
        .collect();
    let expected = if machine.contains(&"fail") {
        2
    } else if machine.contains(&"warn") {
        1
    } else if machine.contains(&"not_evaluated") {
        4
    } else {
        0
    };
    assert_eq!(out.status.code(), Some(expected));
    let text = Command::cargo_bin("hwsurvey")
        .unwrap()
        .arg("qualify")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    let (machine, preconditions) = text
        .split_once("Preconditions of the profile")
        .expect("a preconditions part");
    assert!(preconditions.contains("pages.hugetlb"), "{text}");
    assert!(!machine.contains("pages.hugetlb"), "{text}");
}

/// Qualify's hugetlb fix once said `echo 512 > .../nr_hugepages` while the plan's largest
/// hugetlb points need more ("needs 960"), so after applying it `run --plan-only` still
/// skipped them. The fix now asks for what the plan needs, per pool size, computed from the
/// same plan: on the Firecracker guest's capture (2 MiB and 1 GiB pools, 0 pages), every
/// hugetlb point that `run --plan-only --root` skips before the fix runs after it.
#[test]
fn hugetlb_fix_reserves_what_the_plan_needs() {
    let Some(fx) = hwsurvey_testkit::fixtures() else {
        return;
    };
    let archive =
        fx.join("x86_64-firecracker-guest-epyc-2vcpu-thp-mthp/firecracker-guest-capture.tar.gz");
    let (_tmp, root) = hwsurvey_testkit::extract(&archive);
    let plan = |root: &Path| {
        let out = Command::cargo_bin("hwsurvey")
            .unwrap()
            .args(["run", "--plan-only", "--root"])
            .arg(root)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let short = |text: &str| {
        text.lines()
            .filter(|l| l.contains("hugetlb pool") && l.contains("needs"))
            .count()
    };
    let before = plan(&root);
    assert!(
        short(&before) > 0,
        "no hugetlb point skipped before:\n{before}"
    );
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["qualify", "--format", "json", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let finding = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "pages.hugetlb")
        .unwrap()
        .clone();
    assert_eq!(finding["verdict"], "warn", "{finding}");
    let fix = finding["fix"].as_str().unwrap();
    // apply each `echo N > /sys/kernel/mm/hugepages/hugepages-SkB/nr_hugepages` to the
    // capture, as the kernel would: the pool then holds N pages, all free
    let mut applied = 0;
    for cmd in fix.split("; ") {
        let (n, path) = cmd
            .strip_prefix("echo ")
            .and_then(|c| c.split_once(" > "))
            .unwrap_or_else(|| panic!("not an echo command: {cmd:?} in {fix:?}"));
        let n: u64 = n.parse().unwrap();
        assert!(n > 0, "{fix}");
        let file = root.join(path.trim_start_matches('/'));
        assert!(file.is_file(), "{}", file.display());
        std::fs::write(&file, format!("{n}\n")).unwrap();
        std::fs::write(file.with_file_name("free_hugepages"), format!("{n}\n")).unwrap();
        applied += 1;
    }
    assert!(applied >= 1, "{fix}");
    let after = plan(&root);
    assert_eq!(
        short(&after),
        0,
        "hugetlb points still skipped after the fix {fix:?}:\n{after}"
    );
}
