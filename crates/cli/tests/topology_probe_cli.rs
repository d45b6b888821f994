//! End-to-end tests of `hwsurvey probe` and `hwsurvey snapshot`: the summary and the JSON on
//! a real capture, the live machine, and the snapshot round trip (probe of the extracted
//! snapshot gives the same Machine document apart from `root`).

use std::path::Path;

use assert_cmd::Command;
use hwsurvey_testkit::shared;
use hwsurvey_testkit::unpack;

fn json_of(args: &[&str]) -> serde_json::Value {
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn without_root(mut v: serde_json::Value) -> serde_json::Value {
    if let Some(o) = v.as_object_mut() {
        o.remove("root");
    }
    v
}

/// Keys of values that move between two probes of a live machine: free and available memory,
/// the memory total itself (a virtio-balloon VM such as CI's resizes it), huge page pool
/// counts (another process may allocate from the pool), and the block device list (loop and
/// device-mapper devices come and go), and khugepaged's counters (it collapses pages while the
/// test runs: 32 then 34 under qemu-aarch64).
const MOVING: &[&str] = &[
    "mem_available_bytes",
    "mem_total_bytes",
    "memory_free_bytes",
    "memory_total_bytes",
    "free_pages",
    "reserved_pages",
    "surplus_pages",
    "total_pages",
    "total_bytes",
    "free_bytes",
    "block",
    "pages_collapsed",
    "full_scans",
];

/// The document without the [`MOVING`] values, at any depth.
fn without_moving(mut v: serde_json::Value) -> serde_json::Value {
    match &mut v {
        serde_json::Value::Object(o) => {
            for k in MOVING {
                o.remove(*k);
            }
            for (_, x) in o.iter_mut() {
                *x = without_moving(x.take());
            }
        }
        serde_json::Value::Array(a) => {
            for x in a.iter_mut() {
                *x = without_moving(x.take());
            }
        }
        _ => {}
    }
    v
}

/// The JSON paths at which `a` and `b` differ, each with both values (shortened), so that a
/// failure names the field instead of printing two whole documents.
fn differences(a: &serde_json::Value, b: &serde_json::Value, path: &str, out: &mut Vec<String>) {
    use serde_json::Value::{Array, Object};
    match (a, b) {
        (Object(x), Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let null = serde_json::Value::Null;
                differences(
                    x.get(k).unwrap_or(&null),
                    y.get(k).unwrap_or(&null),
                    &format!("{path}.{k}"),
                    out,
                );
            }
        }
        (Array(x), Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differences(p, q, &format!("{path}[{i}]"), out);
            }
        }
        _ if a != b => {
            let short = |v: &serde_json::Value| v.to_string().chars().take(160).collect::<String>();
            out.push(format!("{path}: {} != {}", short(a), short(b)));
        }
        _ => {}
    }
}

/// Asserts `a == b`, naming every differing path.
fn assert_same(a: &serde_json::Value, b: &serde_json::Value, what: &str) {
    let mut diffs = Vec::new();
    differences(a, b, "", &mut diffs);
    assert!(diffs.is_empty(), "{what}:\n{}", diffs.join("\n"));
}

/// Probe -> snapshot -> extract -> probe --root gives the same document.
fn round_trip(root: Option<&Path>) {
    let tmp = hwsurvey_testkit::scratch_tempdir();
    let archive = tmp.path().join("snap.tar.gz");
    let mut snap = vec![
        "snapshot".to_string(),
        "-o".to_string(),
        archive.display().to_string(),
    ];
    let mut probe = vec!["probe".to_string(), "--json".to_string()];
    if let Some(r) = root {
        snap.extend(["--root".to_string(), r.display().to_string()]);
        probe.extend(["--root".to_string(), r.display().to_string()]);
    }
    let probe_args: Vec<&str> = probe.iter().map(String::as_str).collect();
    let before = json_of(&probe_args);
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(&snap)
        .assert()
        .success();
    let out = tmp.path().join("x");
    unpack(&archive, &out);
    let snap_root = out.join("hwsurvey-snapshot");
    assert!(snap_root.join("proc/cpuinfo").is_file() || root.is_some());
    let after = json_of(&[
        "probe",
        "--json",
        "--root",
        &snap_root.display().to_string(),
    ]);
    // One --root for every form of the capture: the archive itself (named by its path, not
    // by the temporary folder it is unpacked into) and the folder it was extracted into.
    let of_archive = json_of(&["probe", "--json", "--root", &archive.display().to_string()]);
    assert_eq!(of_archive["root"], archive.display().to_string());
    let of_folder = json_of(&["probe", "--json", "--root", &out.display().to_string()]);
    assert_eq!(of_folder["root"], snap_root.display().to_string());
    for (doc, what) in [
        (of_archive, "--root ARCHIVE"),
        (of_folder, "--root EXTRACTED"),
    ] {
        assert_same(
            &without_root(doc),
            &without_root(after.clone()),
            &format!("{what} differs from --root EXTRACTED/hwsurvey-snapshot"),
        );
    }
    // Exactly the document the snapshot's own probe produced (apart from `root`).
    let stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(snap_root.join("hwsurvey/machine.json")).unwrap())
            .unwrap();
    let (stored, after, before) = (
        without_root(stored),
        without_root(after),
        without_root(before),
    );
    assert_same(
        &stored,
        &after,
        "the stored document differs from a probe of the snapshot",
    );
    // The whole document of the probe before the snapshot, apart from `root` (the live
    // running binary and os-release through its symlink included) and the values that move
    // on a live machine between two probes.
    let (before, after) = (without_moving(before), without_moving(after));
    assert_same(
        &before,
        &after,
        "probe before and after the snapshot round trip",
    );
}

#[test]
fn snapshot_round_trip_live() {
    round_trip(None);
}

#[test]
fn snapshot_round_trip_capture() {
    let Some(shared) = shared() else { return };
    let tmp = hwsurvey_testkit::scratch_tempdir();
    unpack(
        &shared.join("fixtures/x86_64-firecracker-guest-epyc-2vcpu-thp-mthp/firecracker-guest-capture.tar.gz"),
        tmp.path(),
    );
    round_trip(Some(&tmp.path().join("root")));
}

/// The UltraSPARC T1 capture: 32 possible CPUs, cpu24-cpu31 offline with empty folders (no
/// topology). A snapshot of it keeps those empty folders, so the probe of the snapshot still
/// counts them (the note "8 offline CPU folders have no topology folder" was lost).
#[test]
fn snapshot_round_trip_capture_with_empty_offline_cpu_folders() {
    let Some(shared) = shared() else { return };
    let tmp = hwsurvey_testkit::scratch_tempdir();
    unpack(
        &shared.join("fixtures/sparc64-ultrasparc-t1-offline/sparc64-UltraSparc-T1.tar.gz"),
        tmp.path(),
    );
    let root = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .unwrap();
    round_trip(Some(&root));
}

#[test]
fn summary_of_a_capture_says_what_it_found_and_what_not() {
    let Some(shared) = shared() else { return };
    let tmp = hwsurvey_testkit::scratch_tempdir();
    unpack(
        &shared.join("fixtures/s390x-z196-lpar-offline-books/s390-lpar.tar.gz"),
        tmp.path(),
    );
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args([
            "probe",
            "--root",
            &tmp.path().join("s390-lpar").display().to_string(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Architecture:        s390x"), "{text}");
    assert!(
        text.contains("CPUs online:         1-5,8-19 (17)"),
        "{text}"
    );
    assert!(text.contains("Present but offline: 0,6-7 (3)"), "{text}");
    assert!(
        text.contains("no NUMA description (/sys/devices/system/node is missing)"),
        "{text}"
    );
    let tail = text
        .split("Could not be read")
        .nth(1)
        .expect("unknowns section last");
    assert!(
        tail.contains("/sys/devices/system/node is missing"),
        "{tail}"
    );
}

#[test]
fn live_probe_prints_every_section() {
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .arg("probe")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for heading in ["CPU\n", "NUMA\n", "Pages\n", "Could not be read ("] {
        assert!(text.contains(heading), "missing {heading:?} in\n{text}");
    }
    let v = json_of(&["probe", "--json"]);
    assert_eq!(v["schema_version"], 2);
    assert!(v["cpu"]["online"].is_string(), "{}", v["cpu"]["online"]);
    assert_plain(&v, "live probe --json");
}

/// A plain document (machine schema 2): no `{"known": v}` or `{"unknown": reason}` left
/// anywhere, and every pointer of the `unknown` map names a `null` with a reason.
fn assert_plain(doc: &serde_json::Value, what: &str) {
    fn walk(v: &serde_json::Value, at: &str, what: &str) {
        match v {
            serde_json::Value::Object(m) => {
                assert!(
                    !(m.len() == 1 && (m.contains_key("known") || m.contains_key("unknown"))),
                    "{what}: tagged value left at {at}: {v}"
                );
                m.iter()
                    .for_each(|(k, x)| walk(x, &format!("{at}/{k}"), what));
            }
            serde_json::Value::Array(a) => a
                .iter()
                .enumerate()
                .for_each(|(i, x)| walk(x, &format!("{at}/{i}"), what)),
            _ => {}
        }
    }
    let mut body = doc.clone();
    let reasons = body
        .as_object_mut()
        .and_then(|o| o.remove("unknown"))
        .expect("an unknown map");
    walk(&body, "", what);
    for (pointer, reason) in reasons.as_object().expect("a map") {
        assert!(
            body.pointer(pointer).is_some_and(|v| v.is_null()),
            "{what}: {pointer} is not a null of the document"
        );
        assert!(reason["reason"].is_string(), "{what}: {pointer}: {reason}");
    }
}

/// `probe --json` of real captures is the plain document, and reading it back
/// ([`hwsurvey_probe::Machine::from_document`]) gives the machine that the probe holds in
/// memory, every value and every reason: nothing is lost by printing nulls.
#[test]
fn plain_json_reads_back_into_the_same_machine() {
    let Some(shared) = shared() else {
        return;
    };
    for (archive, unknowns_at_least) in [
        (
            "aarch64-hisilicon-kunpeng920-2s-4numa-clusters/128arm-2pa2n8cluster4co.tar.bz2",
            5,
        ),
        ("x86_64-amd-epyc7451-2s-8numa/x86_64-epyc_7451.tar.gz", 5),
        (
            "sparc64-ultrasparc-t1-offline/sparc64-UltraSparc-T1.tar.gz",
            5,
        ),
    ] {
        let (_tmp, root) = hwsurvey_testkit::extract(&shared.join("fixtures").join(archive));
        let doc = json_of(&["probe", "--json", "--root", &root.display().to_string()]);
        assert_eq!(doc["schema_version"], 2, "{archive}");
        assert_plain(&doc, archive);
        let n = doc["unknown"].as_object().map_or(0, |m| m.len());
        assert!(n >= unknowns_at_least, "{archive}: {n} unknowns");
        let read = hwsurvey_probe::Machine::from_document(doc).expect(archive);
        let probed = hwsurvey_probe::probe_machine(&hwsurvey_probe::SysRoot::new(&root));
        assert_same(
            &without_root(serde_json::to_value(&read).unwrap()),
            &without_root(serde_json::to_value(&probed).unwrap()),
            &format!("{archive}: the document read back differs from the probe"),
        );
    }
}

#[test]
fn bad_root_is_an_error() {
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["probe", "--root", "/nonexistent/hwsurvey-root"])
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "--root /nonexistent/hwsurvey-root: no such folder or archive",
        ));
}

#[test]
fn probe_of_an_empty_folder_or_an_archive_is_an_error() {
    let tmp = hwsurvey_testkit::scratch_tempdir();
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["probe", "--json", "--root", &empty.display().to_string()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "no document for a non-root");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{} does not look like a Linux root or snapshot (no /proc/cpuinfo, no /sys/devices/system/cpu)",
            empty.display()
        )),
        "{err}"
    );
    let archive = tmp.path().join("x.tar.gz");
    std::fs::write(&archive, b"\x1f\x8b").unwrap();
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["probe", "--root", &archive.display().to_string()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    // an archive is unpacked (as run --plan-only --root does): a damaged one says so
    assert!(
        err.contains("damaged archive") || err.contains("not a tar archive"),
        "{err}"
    );
    // a file that is no archive is not told to be extracted with tar
    let png = tmp.path().join("x.png");
    std::fs::write(&png, b"\x89PNG").unwrap();
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["probe", "--root", &png.display().to_string()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is a file, not a folder") && !err.contains("tar xzf"),
        "{err}"
    );
    // A root with only /proc/cpuinfo is a (poor) root: it probes.
    std::fs::create_dir_all(empty.join("proc")).unwrap();
    std::fs::write(empty.join("proc/cpuinfo"), "processor\t: 0\n").unwrap();
    Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["probe", "--json", "--root", &empty.display().to_string()])
        .assert()
        .success();
}

/// An archive whose only entry is a symlink to `/` is no capture: `--root` never follows it
/// out to the machine running the command (which would then be reported under the archive's
/// name).
#[test]
fn an_archive_holding_only_a_link_to_slash_is_no_root() {
    let tmp = hwsurvey_testkit::scratch_tempdir();
    let archive = tmp.path().join("evil.tar.gz");
    let gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&archive).unwrap(),
        flate2::Compression::fast(),
    );
    let mut tar = tar::Builder::new(gz);
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Symlink);
    h.set_size(0);
    h.set_mode(0o777);
    tar.append_link(&mut h, "x", "/").unwrap();
    tar.into_inner().unwrap().finish().unwrap();
    for cmd in ["probe", "qualify"] {
        let out = Command::cargo_bin("hwsurvey")
            .unwrap()
            .args([cmd, "--root", &archive.display().to_string()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{cmd}: {err}");
        assert!(
            err.contains(&format!(
                "{} does not look like a Linux root or snapshot",
                archive.display()
            )),
            "{cmd}: {err}"
        );
        assert!(out.stdout.is_empty(), "{cmd}");
    }
}
