//! The runs on machines that are not emulated (reports/hardware/<machine>/, one folder each,
//! recorded by `scripts/hardware-run`). For every folder: what the probe derives from the
//! snapshot taken there must agree with what `lscpu` printed on the same machine in the same
//! minute (`lscpu-lstopo.txt`); lscpu run on the unpacked snapshot (`snapshot-peers.txt`, where
//! it was taken) must print the same topology; and its standard run must load and say what it
//! is: a virtual machine (KVM), not an emulator, time-limited exactly when the file says so. The
//! capped run of kvm-xeon-model207-16c compares with a capped copy of itself and with an
//! uncapped run of the profile.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// Every machine folder of reports/hardware (at least two distinct machines are shipped).
fn dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/hardware");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= 2,
        "{}: fewer than two machines",
        root.display()
    );
    dirs
}

/// `key: value` lines of the `== lscpu` section of `lscpu-lstopo.txt`, keys trimmed.
fn lscpu(dir: &Path) -> BTreeMap<String, String> {
    section(&dir.join("lscpu-lstopo.txt"), "lscpu").expect("an `== lscpu` section")
}

/// `key: value` lines of the section `== NAME` of a capture file, or None without one.
fn section(file: &Path, name: &str) -> Option<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let text = format!("\n{text}");
    let section = text
        .split("\n== ")
        .find(|s| s.starts_with(&format!("{name}\n")))?;
    Some(
        section
            .lines()
            .skip(1)
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
            .collect(),
    )
}

fn num(map: &BTreeMap<String, String>, key: &str) -> u64 {
    map.get(key)
        .unwrap_or_else(|| panic!("lscpu has no {key:?}"))
        .parse()
        .unwrap_or_else(|e| panic!("lscpu {key:?}: {e}"))
}

/// lscpu's cache line `768 KiB (16 instances)` as (total bytes, instances).
fn cache(map: &BTreeMap<String, String>, key: &str) -> (u64, u64) {
    let v = &map[key];
    let (size, rest) = v.split_once(" (").expect("SIZE (N instances)");
    let (n, unit) = size.split_once(' ').expect("N UNIT");
    let mult = match unit {
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        u => panic!("lscpu unit {u:?}"),
    };
    let instances = rest.split_whitespace().next().unwrap().parse().unwrap();
    (n.parse::<u64>().unwrap() * mult, instances)
}

fn probe(dir: &Path) -> serde_json::Value {
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["probe", "--json", "--root"])
        .arg(dir.join("snapshot.tar.gz"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_probe_of_each_snapshot_agrees_with_lscpu_on_the_same_machine() {
    for dir in dirs() {
        probe_agrees_with_lscpu(&dir);
    }
}

fn probe_agrees_with_lscpu(dir: &Path) {
    let l = lscpu(dir);
    let m = probe(dir);
    let t = &m["cpu"]["topology"];
    let sockets = num(&l, "Socket(s)");
    let cores_per_socket = num(&l, "Core(s) per socket");
    let threads_per_core = num(&l, "Thread(s) per core");
    assert_eq!(t["packages"], sockets);
    assert_eq!(t["cores"], sockets * cores_per_socket);
    assert_eq!(t["threads"], num(&l, "CPU(s)"));
    assert_eq!(
        t["cores_by_threads"][threads_per_core.to_string()],
        sockets * cores_per_socket,
        "every core has lscpu's threads per core"
    );
    assert_eq!(
        m["numa"]["nodes"].as_array().unwrap().len() as u64,
        num(&l, "NUMA node(s)")
    );
    for (key, level, kind) in [
        ("L1d cache", 1, "data"),
        ("L1i cache", 1, "instruction"),
        ("L2 cache", 2, "unified"),
        ("L3 cache", 3, "unified"),
    ] {
        let (total, instances) = cache(&l, key);
        let c = m["cpu"]["caches"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["level"] == level && c["cache_type"] == kind)
            .unwrap_or_else(|| panic!("no {key} in the probe"));
        assert_eq!(c["total_bytes"], total, "{key}");
        assert_eq!(c["instances"], instances, "{key}");
    }
    assert_eq!(m["os"]["virtualization"]["platform"], "virtual_machine");
    assert_eq!(
        m["os"]["virtualization"]["hypervisor"],
        l["Hypervisor vendor"]
    );
}

/// lscpu reading the unpacked snapshot (`lscpu --sysroot`, captured by scripts/hardware-run in
/// `snapshot-peers.txt`) prints the machine's own topology and caches: the snapshot holds
/// every file lscpu reads. Folders recorded before the snapshot held them say so in
/// reports/hardware/README.md and carry no such section.
#[test]
fn lscpu_reads_each_snapshot_as_it_read_the_machine() {
    let mut checked = 0;
    for dir in dirs() {
        let Some(peer) = section(&dir.join("snapshot-peers.txt"), "lscpu --sysroot snapshot")
        else {
            continue;
        };
        let live = lscpu(&dir);
        for key in [
            "CPU(s)",
            "Socket(s)",
            "Core(s) per socket",
            "Thread(s) per core",
            "NUMA node(s)",
            "L1d cache",
            "L2 cache",
            "L3 cache",
            "Model name",
        ] {
            assert_eq!(peer.get(key), live.get(key), "{}: {key}", dir.display());
        }
        checked += 1;
    }
    assert!(
        checked >= 1,
        "no machine folder holds lscpu's reading of its snapshot"
    );
}

#[test]
fn each_standard_run_loads_and_says_it_is_virtualised() {
    for dir in dirs() {
        standard_run_says_what_it_is(&dir);
    }
}

fn standard_run_says_what_it_is(dir: &Path) {
    let path = dir.join("standard.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let capped = json["time_limit"].is_object();
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .arg("compare")
        .arg(&path)
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("virtual machine (KVM)"), "{text}");
    assert!(!text.contains("emulated"), "{text}");
    assert_eq!(
        text.contains("time-limited"),
        capped,
        "{}: {text}",
        dir.display()
    );
    assert_eq!(json["status"], "complete", "every point of the plan ran");
    assert_eq!(json["tool"]["arch"], "x86_64");
}

/// The capped run's machine (`run --max-time 6m` on a 16-vCPU KVM guest).
fn capped_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/hardware/kvm-xeon-model207-16c")
}

/// `hwsurvey compare FILES --format json`: (exit code, the layout model or stderr).
fn compare_json(files: &[&Path]) -> (Option<i32>, String) {
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .arg("compare")
        .args(files)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let text = if out.status.success() {
        String::from_utf8_lossy(&out.stdout).into_owned()
    } else {
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    (out.status.code(), text)
}

/// The headline table of a compare layout model: its column heads and, per row, the cells'
/// notes (the ratio and mark).
fn headline(model: &serde_json::Value) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let t = model["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "headline")
        .expect("a headline table");
    let columns = t["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    let rows = t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["label"].as_str().unwrap().to_owned(),
                r["cells"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["note"].as_str().unwrap_or_default().to_owned())
                    .collect(),
            )
        })
        .collect();
    (columns, rows)
}

/// No column is called not comparable (`B: not comparable: ...`), and no relative cell of a
/// family table says "not comparable".
fn assert_comparable(model: &str) {
    assert!(!model.contains(": not comparable: "), "{model}");
    assert!(!model.contains("\"text\": \"not comparable\""), "{model}");
}

/// Two runs capped with `--max-time` compare on the points both measured.
/// The capped real run beside a copy of itself whose last five mem.latency points were dropped
/// by `--max-time` (as the engine records them: in `skipped`, with the reason): no column is
/// "not comparable" (main said "not comparable: time-limited run" of a file and its own copy,
/// every ratio `!`), every shared figure is within noise of itself (`1.00x ~`), and the five
/// points are named as only the first run's.
#[test]
fn two_capped_runs_of_one_plan_compare_on_their_shared_points() {
    let a = capped_dir().join("standard.json");
    let mut b = hwsurvey_result::load(&a).expect("the capped run loads");
    assert!(b.time_limit.is_some(), "the shipped run is capped");
    let latency: Vec<usize> = b
        .tests
        .iter()
        .enumerate()
        .filter(|(_, t)| t.point.family == "mem.latency")
        .map(|(i, _)| i)
        .collect();
    let reason = "dropped by --max-time 300 s: the plan with the shortest samples was estimated \
                  over it";
    for &i in latency.iter().rev().take(5) {
        let t = b.tests.remove(i);
        b.skipped.push(hwsurvey_result::SkippedPoint {
            family: t.point.family.clone(),
            id: t.point.id.clone(),
            params: t.point.params.clone(),
            reason: reason.into(),
        });
    }
    if let Some(t) = b.time_limit.as_mut() {
        t.dropped_points = 5;
        t.max_time_s = 300.0;
    }
    let tmp = tempfile::tempdir().unwrap();
    let b_path = tmp.path().join("dropped.json");
    b.write_atomic(&b_path).unwrap();
    let (code, text) = compare_json(&[&a, &b_path]);
    assert_eq!(code, Some(0), "{text}");
    let model: serde_json::Value = serde_json::from_str(&text).unwrap();
    let (columns, rows) = headline(&model);
    assert!(columns.iter().all(|c| !c.contains('!')), "{columns:?}");
    assert_comparable(&text);
    let marks: Vec<&String> = rows
        .iter()
        .map(|(_, n)| &n[1])
        .filter(|n| !n.is_empty())
        .collect();
    assert!(marks.len() >= 10, "{rows:?}");
    assert!(
        marks.iter().all(|n| n.as_str() == "1.00x ~"),
        "a shared point is not itself: {rows:?}"
    );
    let flags: Vec<&str> = model["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    let unshared = flags
        .iter()
        .find(|f| f.starts_with("points not measured by every run"))
        .unwrap_or_else(|| panic!("{flags:?}"));
    assert!(
        unshared.contains("lacks 5 points that")
            && unshared.contains("mem.latency 5 (skipped: dropped by --max-time 300 s)"),
        "{unshared}"
    );
    assert_eq!(
        flags
            .iter()
            .filter(|f| f.contains("time-limited run"))
            .count(),
        2,
        "{flags:?}"
    );
}

/// A capped run beside an uncapped run of the same profile compares. The
/// uncapped side is the capped run as a full run of today's build would write it: no
/// `time_limit`, the standard profile's own sampling rules, today's settings fingerprints
/// (the built-in standard v2 gained the cpu.clock family after the capped run was made, so the
/// whole-text fingerprints differ; main refused: "results come from different profile versions
/// or settings ... an edited copy of a profile"). It compares, says that what differs cannot be
/// told from the older file, and no figure is "not comparable".
#[test]
fn a_capped_run_beside_an_uncapped_run_of_the_profile_compares() {
    let capped = capped_dir().join("standard.json");
    let mut full = hwsurvey_result::load(&capped).unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles/standard.toml"),
    )
    .unwrap();
    let profile = hwsurvey_engine::Profile::parse(
        "profiles/standard.toml (built in)",
        &text,
        &hwsurvey_workloads::families::ids(),
    )
    .unwrap();
    full.time_limit = None;
    full.profile.run = profile.run.clone();
    full.profile.fingerprint = Some(profile.fingerprint.clone());
    full.profile.point_settings = profile.point_settings.clone();
    assert_ne!(
        full.profile.fingerprint,
        hwsurvey_result::load(&capped).unwrap().profile.fingerprint,
        "the built-in profile's text changed since the capped run"
    );
    let tmp = tempfile::tempdir().unwrap();
    let full_path = tmp.path().join("full.json");
    full.write_atomic(&full_path).unwrap();
    let (code, text) = compare_json(&[&full_path, &capped]);
    assert_eq!(code, Some(0), "{text}");
    let model: serde_json::Value = serde_json::from_str(&text).unwrap();
    let (columns, rows) = headline(&model);
    assert!(columns.iter().all(|c| !c.contains('!')), "{columns:?}");
    assert_comparable(&text);
    assert!(rows.iter().any(|(_, n)| n[1] == "1.00x ~"), "{rows:?}");
    assert!(
        text.contains(
            "so what differs (sample counts, or settings that define points) cannot be told"
        ),
        "{text}"
    );
}

/// As it was first run: the capped run beside a full run of a later build
/// (reports/hardware's other machine, run on main at 081f64c, whose standard v2 has the
/// cpu.clock family the capped run's build had not) compares; no column is "not comparable"
/// (both are KVM guests, neither emulated), and the cpu.clock points only the later run has
/// are named.
#[test]
fn the_capped_run_compares_with_a_full_run_of_a_later_build() {
    let capped = capped_dir().join("standard.json");
    let full = dirs()
        .into_iter()
        .map(|d| d.join("standard.json"))
        .find(|p| *p != capped && hwsurvey_result::load(p).is_ok_and(|f| f.time_limit.is_none()))
        .expect("an uncapped run in reports/hardware");
    let (code, text) = compare_json(&[&full, &capped]);
    assert_eq!(code, Some(0), "{text}");
    assert_comparable(&text);
    let model: serde_json::Value = serde_json::from_str(&text).unwrap();
    let (columns, _) = headline(&model);
    assert!(columns.iter().all(|c| !c.contains('!')), "{columns:?}");
    let flags = model["flags"].to_string();
    assert!(flags.contains("cpu.clock"), "{flags}");
}
