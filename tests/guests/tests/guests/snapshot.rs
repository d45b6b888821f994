//! The snapshot taken inside a guest, read outside it: probed here it gives the guest's own
//! document, and the peers' tools (`lscpu --sysroot`, `lstopo --input`) read it and agree with
//! the guest's probe on CPUs, sockets, cores, threads, NUMA nodes and caches.

use std::path::{Path, PathBuf};

use hwsurvey_guests::{Guest, GuestRun};
use hwsurvey_probe::{probe_machine, SysRoot};
use hwsurvey_testkit::peers::{contradictory_cache_ids, lscpu_facts, lstopo_facts, probe_facts};

/// The snapshot the guest wrote (`hwsurvey snapshot -o snapshot.tar.gz`), unpacked here: the
/// temporary folder and the root in it.
pub fn unpack(guest: &Guest, r: &GuestRun) -> (tempfile::TempDir, PathBuf) {
    let archive = r.files_dir.join("snapshot.tar.gz");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = std::fs::File::open(&archive)
        .unwrap_or_else(|e| panic!("guest {}: {}: {e}", guest.name, archive.display()));
    tar::Archive::new(flate2::read::GzDecoder::new(file))
        .unpack(dir.path())
        .unwrap_or_else(|e| {
            panic!(
                "guest {}: cannot unpack {}: {e}",
                guest.name,
                archive.display()
            )
        });
    let root = dir.path().join("hwsurvey-snapshot");
    (dir, root)
}

/// The snapshot written in the guest (unpacked at `root`), probed here, equals the document the
/// guest's probe wrote into it (`hwsurvey/machine.json`, taken from the same files), apart from
/// `root` and the PCI names ([`without_pci_names`]).
pub fn matches(guest: &Guest, root: &Path) -> Option<String> {
    let outside = probe_machine(&SysRoot::new(root)).document();
    let machine_json = root.join("hwsurvey/machine.json");
    let text = std::fs::read_to_string(&machine_json)
        .unwrap_or_else(|e| panic!("guest {}: {}: {e}", guest.name, machine_json.display()));
    let mut inside: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mut outside = outside;
    for v in [&mut inside, &mut outside] {
        v.as_object_mut().expect("object").remove("root");
        without_pci_names(v);
    }
    if inside == outside {
        return None;
    }
    let mut diffs = Vec::new();
    diff_json("", &inside, &outside, &mut diffs);
    Some(diffs.join("\n"))
}

/// `doc` without the PCI names and the database that gave them (`io.pci_ids`,
/// `io.pci[].names`): they come from the pci.ids of the machine that reads the files (none in
/// the guest's initramfs, Debian's on the host), not from the files.
fn without_pci_names(doc: &mut serde_json::Value) {
    let Some(io) = doc.get_mut("io").and_then(|v| v.as_object_mut()) else {
        return;
    };
    io.remove("pci_ids");
    if let Some(devs) = io.get_mut("pci").and_then(|v| v.as_array_mut()) {
        for d in devs.iter_mut().filter_map(|d| d.as_object_mut()) {
            d.remove("names");
        }
    }
    if let Some(unknown) = doc.get_mut("unknown").and_then(|v| v.as_object_mut()) {
        unknown.retain(|pointer, _| !pointer.starts_with("/io/pci_ids"));
    }
}

fn diff_json(path: &str, a: &serde_json::Value, b: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let p = format!("{path}/{k}");
                match (x.get(k), y.get(k)) {
                    (Some(va), Some(vb)) => diff_json(&p, va, vb, out),
                    (va, vb) => out.push(format!("{p}: inside {va:?}, outside {vb:?}")),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                diff_json(&format!("{path}/{i}"), va, vb, out);
            }
        }
        _ if a != b => out.push(format!("{path}: inside {a}, outside {b}")),
        _ => {}
    }
}

/// What `lscpu --sysroot` and `lstopo --input` say of the snapshot at `root` where it differs
/// from what the guest's probe wrote into it (`hwsurvey/machine.json`): one line per tool that
/// disagrees, none when both agree (or, off CI, when a tool is missing: SKIPPED).
pub fn peers_disagree(root: &Path) -> Vec<String> {
    if !hwsurvey_testkit::tool("lscpu") || !hwsurvey_testkit::tool("lstopo-no-graphics") {
        return Vec::new();
    }
    let path = root.join("hwsurvey/machine.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: serde_json::Value = serde_json::from_str(&text).expect("machine.json");
    let probe = probe_facts(&doc);
    // lscpu counts by cache id where the kernel's ids contradict its sharing lists: those
    // caches are held against lstopo only
    let contradicted = contradictory_cache_ids(root);
    let mut lscpu = lscpu_facts(root);
    let mut probe_for_lscpu = probe.clone();
    for name in &contradicted {
        println!("{name}: the kernel's cache ids contradict its sharing lists; lscpu's count of it is not compared");
        lscpu.caches.remove(name);
        probe_for_lscpu.caches.remove(name);
    }
    let mut out = Vec::new();
    for (tool, facts, probe) in [
        ("lscpu --sysroot", lscpu, probe_for_lscpu),
        ("lstopo --input", lstopo_facts(root), probe),
    ] {
        println!("{tool} on the guest's snapshot: {facts:?}");
        if facts != probe {
            out.push(format!(
                "{tool} on the guest's snapshot says {facts:?}, the probe inside {probe:?}"
            ));
        }
    }
    out
}
