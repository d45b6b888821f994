//! `hwsurvey probe --dmidecode FILE` and `hwsurvey qualify --dmidecode FILE` on the four
//! captures of ../shared/fixtures that hold saved `dmidecode` text (Dell R640, Oracle X5-2,
//! Ampere Altra, Cavium ThunderX2), read in place; the expected values are the facts of
//! ../shared/fixtures/README.md. Before, the command line refused the option.
//!
//! The root is a bare tree (`proc/`, `sys/devices/system/cpu/`, nothing in them): every
//! memory fact below can only have come from the file, and every rule but the memory ones is
//! "not evaluated", so qualify's exit code is decided by the memory findings alone: 1 or 2
//! when one warns or fails, else 4 (incomplete: the other rules not evaluated), never 0. Such a
//! root states no system, sockets or memory size, so no text is refused for another machine's.

use std::path::{Path, PathBuf};

use assert_cmd::prelude::*;
use hwsurvey_testkit::hwsurvey;
use predicates::prelude::*;
use serde_json::Value;

const GIB: u64 = 1 << 30;

const DELL: &str = "x86_64-dell-r640-2s-dmidecode-24slots/dmidecode.txt";
const ORACLE: &str = "x86_64-oracle-x5-2-2s-dmidecode-24slots/dmidecode.txt";
const ALTRA: &str = "aarch64-ampere-altra-q80-2s/dmidecode-memory.txt";
const THUNDERX2: &str = "aarch64-cavium-thunderx2-gigabyte-r181-2s/dmidecode-memory.txt";

fn fixture(rel: &str) -> Option<PathBuf> {
    hwsurvey_testkit::fixtures().map(|f| f.join(rel))
}

/// A root with the folders of a Linux root and no file in them.
fn bare_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("proc")).unwrap();
    std::fs::create_dir_all(dir.path().join("sys/devices/system/cpu")).unwrap();
    dir
}

/// `probe --json --root ROOT --dmidecode FILE`, the `memory` document in the tagged form
/// (`{"known": v}`, as the probe holds it in memory: read back through
/// `Machine::from_document`, so the plain document's round trip is checked on every capture).
fn probe_memory(root: &Path, file: &Path) -> Value {
    let out = hwsurvey()
        .args(["probe", "--json", "--root"])
        .arg(root)
        .arg("--dmidecode")
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let m = hwsurvey_probe::Machine::from_document(v).expect("a machine document");
    serde_json::to_value(&m).unwrap()["memory"].clone()
}

/// The locators of the listed slots, populated (`true`) or empty (`false`), in table order.
fn locators(memory: &Value, populated: bool) -> Vec<String> {
    memory["smbios"]["known"]["devices"]
        .as_array()
        .expect("devices")
        .iter()
        .filter(|d| (d["size"]["state"] != "empty") == populated)
        .map(|d| d["locator"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// The population's facts every capture is checked on: (slots listed, populated, module
/// sizes, total installed, rated speeds, ranks).
fn population_facts(memory: &Value) -> (u64, u64, Vec<u64>, u64, Vec<u64>, Vec<u64>) {
    let p = &memory["population"]["known"];
    let nums = |v: &Value| -> Vec<u64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect()
    };
    (
        p["slots_listed"].as_u64().unwrap(),
        p["populated"].as_u64().unwrap(),
        nums(&p["module_sizes_bytes"]),
        p["total_installed_bytes"].as_u64().unwrap(),
        nums(&p["rated_speeds_mt_per_s"]),
        nums(&p["ranks"]),
    )
}

/// The source the document records: the dmidecode text, naming the file.
/// `version`: the `# dmidecode X.Y` header's, `None` for a text saved without it.
fn assert_source_is(memory: &Value, file: &Path, version: Option<&str>) {
    let src = &memory["smbios"]["known"]["source"];
    assert_eq!(src["kind"], "dmidecode_text", "{src}");
    assert_eq!(
        src["dmidecode_version"],
        serde_json::json!(version),
        "{src}"
    );
    assert_eq!(src["file"], file.display().to_string(), "{src}");
}

/// `qualify --format json --root ROOT --dmidecode FILE`: the exit code and the findings.
fn qualify(root: &Path, file: &Path) -> (i32, Vec<Value>) {
    let out = hwsurvey()
        .args(["qualify", "--format", "json", "--root"])
        .arg(root)
        .arg("--dmidecode")
        .arg(file)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let origin = v["origin"].as_str().unwrap_or_default();
    assert!(
        origin.contains(&format!("dmidecode text {}", file.display())),
        "{origin}"
    );
    (
        out.status.code().unwrap_or(-1),
        v["findings"].as_array().unwrap().clone(),
    )
}

/// The findings of one rule: (verdict, summary, evidence values).
fn rule(findings: &[Value], id: &str) -> Vec<(String, String, Vec<String>)> {
    findings
        .iter()
        .filter(|f| f["rule"] == id)
        .map(|f| {
            (
                f["verdict"].as_str().unwrap().to_string(),
                f["summary"].as_str().unwrap().to_string(),
                f["evidence"]
                    .as_array()
                    .map(|e| {
                        e.iter()
                            .map(|x| x["value"].as_str().unwrap_or_default().to_string())
                            .collect()
                    })
                    .unwrap_or_default(),
            )
        })
        .collect()
}

/// R640: 24 slots A1-A12, B1-B12; A1-A6 and B1-B6 hold 8 GiB DDR4 rated 3200, configured
/// 2400 MT/s, rank 1; 96 GiB; per socket 6 channels with one DIMM each.
#[test]
fn dell_r640() {
    let Some(file) = fixture(DELL) else {
        return;
    };
    let root = bare_root();
    let m = probe_memory(root.path(), &file);
    assert_source_is(&m, &file, Some("3.2"));
    assert_eq!(
        population_facts(&m),
        (24, 12, vec![8 * GIB], 96 * GIB, vec![3200], vec![1])
    );
    assert_eq!(
        locators(&m, true),
        ["A1", "A2", "A3", "A4", "A5", "A6", "B1", "B2", "B3", "B4", "B5", "B6"]
    );
    let p = &m["population"]["known"];
    assert_eq!(p["configured_speeds_mt_per_s"], serde_json::json!([2400]));
    let sockets = p["sockets"]["known"].as_array().unwrap();
    assert_eq!(sockets.len(), 2);
    for (s, name) in sockets.iter().zip(["A", "B"]) {
        assert_eq!(s["socket"], name);
        let channels = s["channels"]["known"].as_array().unwrap();
        assert_eq!(channels.len(), 6, "{s}");
        assert!(channels.iter().all(|c| c["populated"] == 1), "{s}");
        assert_eq!(s["empty_channels"]["known"], serde_json::json!([]));
    }
    // the summary names the file as the source of the slots
    hwsurvey()
        .args(["probe", "--root"])
        .arg(root.path())
        .arg("--dmidecode")
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "SMBIOS 3.2 from dmidecode 3.2 text in {}: 24 slots listed",
            file.display()
        )))
        .stdout(predicate::str::contains(
            "socket A: 6/12 populated, 48 GiB; 6 channels, DIMMs per channel ch0:1 ch1:1 ch2:1 ch3:1 ch4:1 ch5:1; no empty channel",
        ));

    // configured below rated on every DIMM: a warning, exit 1; populated alike per socket
    let (code, f) = qualify(root.path(), &file);
    assert_eq!(code, 1, "{f:?}");
    let speed = rule(&f, "memory.speed");
    assert_eq!(speed[0].0, "warn");
    assert_eq!(
        speed[0].1,
        "configured 2400 MT/s below rated 3200 MT/s on every DIMM (12 of 12)"
    );
    let balance = rule(&f, "memory.balance");
    assert_eq!(balance[0].0, "pass", "{balance:?}");
    assert!(balance[0]
        .2
        .contains(&"A: 6 of 12 slots, 48 GiB, empty A7 A8 A9 A10 A11 A12".to_string()));
    assert!(balance[0]
        .2
        .contains(&"B: 6 of 12 slots, 48 GiB, empty B7 B8 B9 B10 B11 B12".to_string()));
    assert_eq!(rule(&f, "memory.mixed")[0].0, "pass");
    // no warning but the speed one
    let warned: Vec<&str> = f
        .iter()
        .filter(|x| x["verdict"] == "warn" || x["verdict"] == "fail")
        .map(|x| x["rule"].as_str().unwrap())
        .collect();
    assert_eq!(warned, ["memory.speed"]);
}

/// X5-2: 4 arrays of 6 slots; 16 of 24 hold 32 GiB DDR4-2133 rank 4, 512 GiB; per socket
/// D2, D5, D6, D9 empty; each array 4 of 6: even; the locators do not name channels.
#[test]
fn oracle_x5_2() {
    let Some(file) = fixture(ORACLE) else {
        return;
    };
    let root = bare_root();
    let m = probe_memory(root.path(), &file);
    assert_source_is(&m, &file, Some("2.12"));
    assert_eq!(
        population_facts(&m),
        (24, 16, vec![32 * GIB], 512 * GIB, vec![2133], vec![4])
    );
    let mut empty = locators(&m, false);
    empty.sort();
    assert_eq!(empty, ["D2", "D2", "D5", "D5", "D6", "D6", "D9", "D9"]);
    let p = &m["population"]["known"];
    let arrays = p["arrays"].as_array().unwrap();
    assert_eq!(arrays.len(), 4);
    assert!(arrays
        .iter()
        .all(|a| a["slots_listed"] == 6 && a["populated"] == 4));
    // channels: not known, not guessed
    assert!(p["peak_bandwidth"]["unknown"].is_object(), "{p}");

    // every DIMM on a Type 20 range of its own (Interleave Position 0): a warning, exit 1
    let (code, f) = qualify(root.path(), &file);
    assert_eq!(code, 1, "{f:?}");
    let interleave = rule(&f, "memory.interleave");
    assert_eq!(interleave[0].0, "warn", "{interleave:?}");
    assert!(
        interleave[0]
            .1
            .starts_with("memory is not interleaved: 16 of 16 populated DIMMs"),
        "{interleave:?}"
    );
    assert_eq!(interleave[0].2.len(), 17, "{interleave:?}");
    let balance = rule(&f, "memory.balance");
    assert_eq!(balance[0].0, "pass", "{balance:?}");
    for socket in ["P0", "P1"] {
        assert!(
            balance[0].2.contains(&format!(
                "{socket}: 8 of 12 slots, 256 GiB, empty D9 D6 D2 D5"
            )),
            "{balance:?}"
        );
    }
    assert_eq!(
        balance[0]
            .2
            .iter()
            .filter(|e| e.contains(" array ") && e.contains(": 4 of 6 slots, 128 GiB"))
            .count(),
        4
    );
    let channels = rule(&f, "memory.channels");
    assert_eq!(channels[0].0, "not_evaluated", "{channels:?}");
    assert!(channels[0]
        .1
        .contains("per-channel mapping is not in these locators"));
    assert_eq!(rule(&f, "memory.speed")[0].0, "pass");
    assert_eq!(rule(&f, "memory.mixed")[0].0, "pass");
}

/// Altra: 32 slots, 16 populated with 8 GiB DDR4-3200 rank 1, 128 GiB, half on each socket.
#[test]
fn ampere_altra() {
    let Some(file) = fixture(ALTRA) else {
        return;
    };
    let root = bare_root();
    let m = probe_memory(root.path(), &file);
    assert_source_is(&m, &file, None);
    assert_eq!(
        population_facts(&m),
        (32, 16, vec![8 * GIB], 128 * GIB, vec![3200], vec![1])
    );
    let sockets = m["population"]["known"]["sockets"]["known"]
        .as_array()
        .unwrap();
    assert_eq!(sockets.len(), 2);
    assert!(sockets.iter().all(|s| s["slots_listed"] == 16
        && s["populated"] == 8
        && s["installed_bytes"] == 64 * GIB));

    // `dmidecode -t memory` holds no Type 19/20: the interleave is not evaluated, with why;
    // nothing warns or fails, but rules were not evaluated: incomplete, no pass (exit 4)
    let (code, f) = qualify(root.path(), &file);
    assert_eq!(code, 4, "{f:?}");
    let interleave = rule(&f, "memory.interleave");
    assert_eq!(interleave[0].0, "not_evaluated", "{interleave:?}");
    assert!(
        interleave[0].1.contains("no SMBIOS Type 19/20"),
        "{interleave:?}"
    );
    let balance = rule(&f, "memory.balance");
    assert_eq!(balance[0].0, "pass", "{balance:?}");
    assert_eq!(
        balance[0]
            .2
            .iter()
            .filter(|e| e.contains(": 8 of 16 slots, 64 GiB, empty "))
            .count(),
        2,
        "{balance:?}"
    );
    // "DIMM n" / "Bank n" name no channel
    assert_eq!(rule(&f, "memory.channels")[0].0, "not_evaluated");
    assert_eq!(rule(&f, "memory.speed")[0].0, "pass");
}

/// ThunderX2: two arrays declare 12 slots each, the text lists only the 4 populated ones
/// (32 GiB DDR4-2400 RDIMM, rank 2): the other 20 are not described, and not invented.
#[test]
fn cavium_thunderx2() {
    let Some(file) = fixture(THUNDERX2) else {
        return;
    };
    let root = bare_root();
    let m = probe_memory(root.path(), &file);
    assert_source_is(&m, &file, None);
    assert_eq!(
        population_facts(&m),
        (4, 4, vec![32 * GIB], 128 * GIB, vec![2400], vec![2])
    );
    let p = &m["population"]["known"];
    assert_eq!(p["slots_declared"], 24);
    assert_eq!(p["empty"], 0);
    assert!(p["unlisted_slots_note"]
        .as_str()
        .unwrap()
        .contains("other 20 are not described"));
    for s in p["sockets"]["known"].as_array().unwrap() {
        // which channels are empty cannot be said from 2 of 12 slots
        assert!(s["empty_channels"]["unknown"].is_object(), "{s}");
    }

    // `dmidecode -t memory` holds no Type 19/20: the interleave is not evaluated, with why;
    // nothing warns or fails, but rules were not evaluated: incomplete, no pass (exit 4)
    let (code, f) = qualify(root.path(), &file);
    assert_eq!(code, 4, "{f:?}");
    let interleave = rule(&f, "memory.interleave");
    assert_eq!(interleave[0].0, "not_evaluated", "{interleave:?}");
    assert!(
        interleave[0].1.contains("no SMBIOS Type 19/20"),
        "{interleave:?}"
    );
    let balance = rule(&f, "memory.balance");
    assert_eq!(balance[0].0, "pass", "{balance:?}");
    assert!(balance[0]
        .2
        .contains(&"P0: 2 of 2 slots, 64 GiB".to_string()));
    assert!(balance[0]
        .2
        .contains(&"P1: 2 of 2 slots, 64 GiB".to_string()));
    // no channel is called empty
    let channels = rule(&f, "memory.channels");
    assert_eq!(channels[0].0, "not_evaluated", "{channels:?}");
    assert_eq!(rule(&f, "memory.speed")[0].0, "pass");
}

/// The Dell text with A6 pulled: socket A's sixth channel is empty. probe shows it, and so
/// does qualify's balance rule (socket A holds fewer DIMMs than socket B).
#[test]
fn dell_r640_with_a_module_pulled() {
    let Some(file) = fixture(DELL) else {
        return;
    };
    let text = std::fs::read_to_string(&file).unwrap();
    let edited: Vec<String> = text
        .split("\n\n")
        .map(|r| {
            if r.contains("\tLocator: A6\n") {
                r.replace("Size: 8 GB", "Size: No Module Installed")
            } else {
                r.to_string()
            }
        })
        .collect();
    let root = bare_root();
    let pulled = root.path().join("dmidecode-a6-pulled.txt");
    std::fs::write(&pulled, edited.join("\n\n")).unwrap();
    let m = probe_memory(root.path(), &pulled);
    assert_eq!(
        population_facts(&m),
        (24, 11, vec![8 * GIB], 88 * GIB, vec![3200], vec![1])
    );
    let sockets = m["population"]["known"]["sockets"]["known"]
        .as_array()
        .unwrap();
    assert_eq!(
        sockets[0]["empty_channels"]["known"],
        serde_json::json!(["ch5"])
    );
    let (code, f) = qualify(root.path(), &pulled);
    assert_eq!(code, 1);
    let balance = rule(&f, "memory.balance");
    assert_eq!(balance[0].0, "warn", "{balance:?}");
    assert!(balance[0].1.contains("across sockets"), "{balance:?}");
}

/// A bad file is one line on stderr naming the file and what is wrong, with the exit code of
/// the other input errors (probe 2, qualify 3), and nothing on stdout.
#[test]
fn bad_files_are_one_line_errors() {
    let root = bare_root();
    let dir = root.path();
    let empty = dir.join("empty.txt");
    std::fs::write(&empty, "\n").unwrap();
    let binary = dir.join("DMI");
    std::fs::write(&binary, b"\x11\x54\x00\x11\x00\x10").unwrap();
    let lscpu = dir.join("lscpu.txt");
    std::fs::write(&lscpu, "Architecture: x86_64\nCPU(s): 4\n").unwrap();
    let mut cases: Vec<(PathBuf, String)> = vec![
        (dir.join("absent.txt"), "cannot read".into()),
        (
            dir.join("proc"),
            "is a directory, not a regular file".into(),
        ),
        (empty, "empty: expected `dmidecode` output".into()),
        (binary, "binary data (a NUL byte at offset 2)".into()),
        (
            lscpu,
            "found none in 2 lines (no \"Handle 0x..., DMI type N\" record at all".into(),
        ),
    ];
    // The Altra capture's dmidecode.txt holds BIOS, system, board and chassis records only.
    if let Some(f) = fixture("aarch64-ampere-altra-q80-2s/dmidecode.txt") {
        cases.push((
            f,
            "found none in 63 lines (records of DMI types 0, 1, 2, 3 only: save `dmidecode -t memory`"
                .into(),
        ));
    }
    for (file, problem) in &cases {
        for (cmd, code) in [("probe", 2), ("qualify", 3)] {
            let out = hwsurvey()
                .args([cmd, "--root"])
                .arg(dir)
                .arg("--dmidecode")
                .arg(file)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(code),
                "{cmd} {}: {stderr}",
                file.display()
            );
            assert!(
                out.stdout.is_empty(),
                "{cmd}: {}",
                String::from_utf8_lossy(&out.stdout)
            );
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
            assert!(
                stderr.starts_with(&format!(
                    "hwsurvey: error: --dmidecode {}: ",
                    file.display()
                )),
                "{stderr}"
            );
            assert!(stderr.contains(problem.as_str()), "{problem}: {stderr}");
            assert!(!stderr.contains("panicked"), "{stderr}");
        }
    }
}

/// `qualify RESULT.json --dmidecode FILE`: a result file carries its own machine; refused as
/// a usage error (exit 3).
#[test]
fn qualify_of_a_result_file_refuses_dmidecode() {
    hwsurvey()
        .args(["qualify", "r.json", "--dmidecode", "d.txt"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("cannot be used with"));
}

/// A root standing for this VM: 1 socket of 2 CPUs, MemTotal 23.5 GiB, DMI system `QEMU
/// Standard PC (Q35 + ICH9, 2009)`.
fn vm_root() -> tempfile::TempDir {
    let dir = bare_root();
    let w = |rel: &str, text: &str| hwsurvey_testkit::write(dir.path(), rel, text);
    for f in ["online", "present", "possible"] {
        w(&format!("/sys/devices/system/cpu/{f}"), "0-1\n");
    }
    for cpu in 0..2 {
        let t = format!("/sys/devices/system/cpu/cpu{cpu}/topology");
        w(&format!("{t}/physical_package_id"), "0\n");
        w(&format!("{t}/core_id"), &format!("{cpu}\n"));
        w(&format!("{t}/thread_siblings_list"), &format!("{cpu}\n"));
    }
    w(
        "/proc/meminfo",
        "MemTotal:       24641536 kB\nMemFree:        1000 kB\n",
    );
    w("/sys/class/dmi/id/sys_vendor", "QEMU\n");
    w(
        "/sys/class/dmi/id/product_name",
        "Standard PC (Q35 + ICH9, 2009)\n",
    );
    dir
}

/// Facts of another machine are refused: the R640's text (2 sockets, 96 GiB) on a
/// 1-socket VM of 23.5 GiB is one error line naming the file and each fact that disagrees,
/// probe exit 2 and qualify exit 3, nothing on stdout (before, `qualify --dmidecode r640.txt`
/// passed "12 channels over 2 sockets" on the VM). `--dmidecode-other-machine` reads it,
/// saying above everything that the DIMMs are another machine's.
#[test]
fn the_text_of_a_two_socket_machine_is_refused_on_a_one_socket_one() {
    let Some(file) = fixture(DELL) else {
        return;
    };
    let root = vm_root();
    for (cmd, code) in [("probe", 2), ("qualify", 3)] {
        let out = hwsurvey()
            .args([cmd, "--root"])
            .arg(root.path())
            .arg("--dmidecode")
            .arg(&file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{cmd}: {stderr}");
        assert!(out.stdout.is_empty(), "{cmd}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        for words in [
            format!(
                "hwsurvey: error: --dmidecode {}: the dmidecode text describes another machine: ",
                file.display()
            ),
            "system: Dell Inc. PowerEdge R640 (DMI type 1 System Information) in the text, QEMU Standard PC (Q35 + ICH9, 2009) (/sys/class/dmi/id) here".into(),
            "sockets: 2 (populated DMI type 4 Processor Information records) in the text, 1 (".into(),
            "memory: 96 GiB installed (DMI type 17 Memory Devices) in the text, MemTotal 23.5 GiB".into(),
            "add --dmidecode-other-machine to read it anyway".into(),
        ] {
            assert!(stderr.contains(&words), "{cmd}: {words}\n{stderr}");
        }
    }
    // insisting: the note first, then the summary with the other machine's DIMMs
    let out = hwsurvey()
        .args(["probe", "--dmidecode-other-machine", "--root"])
        .arg(root.path())
        .arg("--dmidecode")
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(
            "note: the DIMMs and firmware below are another machine's (--dmidecode-other-machine): "
        ),
        "{text}"
    );
    assert!(
        text.lines().next().unwrap().contains("sockets: 2"),
        "{text}"
    );
    let (code, findings) = {
        let out = hwsurvey()
            .args([
                "qualify",
                "--format",
                "json",
                "--dmidecode-other-machine",
                "--root",
            ])
            .arg(root.path())
            .arg("--dmidecode")
            .arg(&file)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            v["origin"]
                .as_str()
                .unwrap()
                .contains("the dmidecode text describes another machine: system: Dell Inc."),
            "{v}"
        );
        (out.status.code(), v["findings"].clone())
    };
    assert!(code.is_some_and(|c| c != 3), "{findings}");
    // the Altra's memory text (128 GiB) on the VM: refused for its memory
    let Some(altra) = fixture(ALTRA) else {
        return;
    };
    let out = hwsurvey()
        .args(["probe", "--root"])
        .arg(root.path())
        .arg("--dmidecode")
        .arg(&altra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("memory: 128 GiB installed (DMI type 17 Memory Devices) in the text, MemTotal 23.5 GiB (/proc/meminfo), 18 % of it"),
        "{stderr}"
    );
}

/// The same refusal reads the machine as `qualify` and `probe` do live: a text that fits (the
/// R640's on a tree of 2 sockets, 94 GiB, the same DMI strings) is read without a word.
#[test]
fn the_text_of_the_machine_itself_is_read() {
    let Some(file) = fixture(DELL) else {
        return;
    };
    let root = bare_root();
    let w = |rel: &str, text: &str| hwsurvey_testkit::write(root.path(), rel, text);
    for f in ["online", "present", "possible"] {
        w(&format!("/sys/devices/system/cpu/{f}"), "0-3\n");
    }
    for cpu in 0..4 {
        let t = format!("/sys/devices/system/cpu/cpu{cpu}/topology");
        w(
            &format!("{t}/physical_package_id"),
            &format!("{}\n", cpu / 2),
        );
        w(&format!("{t}/core_id"), &format!("{}\n", cpu % 2));
        w(&format!("{t}/thread_siblings_list"), &format!("{cpu}\n"));
    }
    w(
        "/proc/meminfo",
        "MemTotal:       98566144 kB\nMemFree:        1000 kB\n",
    );
    w("/sys/class/dmi/id/sys_vendor", "Dell Inc.\n");
    w("/sys/class/dmi/id/product_name", "PowerEdge R640\n");
    let out = hwsurvey()
        .args(["probe", "--root"])
        .arg(root.path())
        .arg("--dmidecode")
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("another machine"));
}
