//! The first example from a machine that is not emulated (reports/hardware/kvm-xeon-model207-16c:
//! a 16-vCPU KVM guest on an Intel Xeon, family 6 model 207, lent for 15 minutes). What the
//! probe derives from the snapshot taken there must agree with what `lscpu` and `lstopo`
//! printed on the same machine in the same minute (`lscpu-lstopo.txt`), and its standard run
//! must load and say what it is: a virtual machine, not an emulator, and time-limited.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/hardware/kvm-xeon-model207-16c")
}

/// `key: value` lines of the `== lscpu` section of the capture, keys trimmed.
fn lscpu() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(dir().join("lscpu-lstopo.txt")).unwrap();
    let section = text
        .split("\n== ")
        .find(|s| s.starts_with("lscpu\n"))
        .expect("an `== lscpu` section");
    section
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
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

fn probe() -> serde_json::Value {
    let out = Command::cargo_bin("hwsurvey")
        .unwrap()
        .args(["probe", "--json", "--root"])
        .arg(dir().join("snapshot.tar.gz"))
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
fn the_probe_of_the_snapshot_agrees_with_lscpu_on_the_same_machine() {
    let l = lscpu();
    let m = probe();
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

#[test]
fn the_standard_run_loads_and_says_it_is_virtualised_and_time_limited() {
    let path = dir().join("standard.json");
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
    assert!(text.contains("time-limited"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(json["status"], "complete", "every point of the plan ran");
    assert_eq!(json["tool"]["arch"], "x86_64");
}
