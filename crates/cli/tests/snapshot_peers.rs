//! The peers' own tools on hwsurvey snapshots: `lscpu --sysroot DIR` (util-linux)
//! and `lstopo-no-graphics --input DIR` (hwloc) run on an extracted snapshot of this machine
//! and of the real captures in `../shared/fixtures`, print what they print on the source root
//! (the snapshot holds every file they read), and agree with the probe's document on CPUs,
//! sockets, cores, threads, NUMA nodes and caches.
//!
//! Before: lscpu aborted on a snapshot (`print_cpuset: Assertion 'set' failed`: no
//! `shared_cpu_map`) and hwloc "failed to find sysfs cpu topology directory" (no
//! `thread_siblings`, `core_siblings`).

use std::path::{Path, PathBuf};
use std::process::Command;

use hwsurvey_testkit::peers::{self, lscpu, lscpu_facts, lstopo_facts, lstopo_xml, run, PeerFacts};
use hwsurvey_testkit::{fixtures, tool, unpack};

/// The probe's facts from `hwsurvey probe --json --root ROOT`.
fn probe_facts(root: &Path) -> PeerFacts {
    let out = run(Command::new(env!("CARGO_BIN_EXE_hwsurvey")).args([
        "probe",
        "--json",
        "--root",
        &root.display().to_string(),
    ]));
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    peers::probe_facts(&doc)
}

/// `hwsurvey snapshot` of `root` (`None`: this machine), extracted; returns the folder (in
/// `tmp`) standing for `/`.
fn snapshot(root: Option<&Path>, tmp: &Path) -> PathBuf {
    let archive = tmp.join("snap.tar.gz");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hwsurvey"));
    cmd.args(["snapshot", "-o", &archive.display().to_string()]);
    if let Some(r) = root {
        cmd.arg("--root").arg(r);
    }
    run(&mut cmd);
    unpack(&archive, &tmp.join("x"));
    tmp.join("x/hwsurvey-snapshot")
}

/// lscpu's outputs whose every line holds a fact of the files (not the MHz of this moment).
const LSCPU_VIEWS: &[&[&str]] = &[
    &["-p=CPU,CORE,SOCKET,NODE,BOOK,DRAWER,CACHE,ADDRESS,ONLINE,CONFIGURED,POLARIZATION"],
    &[
        "-e=CPU,NODE,SOCKET,CORE,CACHE,ONLINE,MAXMHZ,MINMHZ",
        "--all",
    ],
    &["-C", "--bytes"],
];

/// lstopo's XML without the attributes that name the input (its path, the time).
fn lstopo_comparable(root: &Path) -> String {
    lstopo_xml(root)
        .lines()
        .filter(|l| !l.contains("name=\"HostName\"") && !l.contains("name=\"LinuxCgroup\""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines of `snap` and `source` that differ (at most 10 pairs), empty when they are equal.
fn line_differences(snap: &str, source: &str) -> Vec<String> {
    let (a, b): (Vec<&str>, Vec<&str>) = (snap.lines().collect(), source.lines().collect());
    let mut out: Vec<String> = (0..a.len().max(b.len()))
        .filter(|&i| a.get(i) != b.get(i))
        .take(10)
        .map(|i| {
            format!(
                "line {}: snapshot {:?}, source {:?}",
                i + 1,
                a.get(i),
                b.get(i)
            )
        })
        .collect();
    if a.len() != b.len() {
        out.push(format!("{} lines against {}", a.len(), b.len()));
    }
    out
}

/// Both tools print on the snapshot of `source` what they print on `source` itself.
fn peers_print_the_same(source: &Path, snap: &Path, what: &str) {
    for view in LSCPU_VIEWS {
        let diffs = line_differences(&lscpu(snap, view), &lscpu(source, view));
        assert!(
            diffs.is_empty(),
            "{what}: lscpu {view:?} on the snapshot differs from lscpu on the source:\n{}",
            diffs.join("\n")
        );
    }
    let diffs = line_differences(&lstopo_comparable(snap), &lstopo_comparable(source));
    assert!(
        diffs.is_empty(),
        "{what}: lstopo on the snapshot differs from lstopo on the source:\n{}",
        diffs.join("\n")
    );
}

fn have_peers() -> bool {
    tool("lscpu") && tool("lstopo-no-graphics")
}

#[test]
fn peers_read_a_snapshot_of_this_machine_and_agree_with_the_probe() {
    if !have_peers() || hwsurvey_testkit::under_qemu_user() {
        return;
    }
    let tmp = hwsurvey_testkit::scratch_tempdir();
    let snap = snapshot(None, tmp.path());
    for view in LSCPU_VIEWS {
        let diffs = line_differences(&lscpu(&snap, view), &lscpu(Path::new("/"), view));
        assert!(
            diffs.is_empty(),
            "lscpu {view:?} on the snapshot differs from lscpu on this machine:\n{}",
            diffs.join("\n")
        );
    }
    let probe = probe_facts(&snap);
    assert_eq!(
        lscpu_facts(&snap),
        probe,
        "lscpu --sysroot SNAPSHOT against the probe"
    );
    assert_eq!(
        lstopo_facts(&snap),
        probe,
        "lstopo --input SNAPSHOT against the probe"
    );
    assert_eq!(
        lscpu_facts(Path::new("/")),
        probe,
        "lscpu of this machine against the probe"
    );
}

/// Captures of `../shared/fixtures`: (folder, archive, whether the tools' facts are the
/// probe's). Where they are not, the fixture's README says why (Bulldozer compute units,
/// sun4v's cores called sockets, POWER7's memory-less node, s390 books and offline CPUs,
/// the big.LITTLE phone's caches without sizes, hybrid cores).
const CAPTURES: &[(&str, &str, bool)] = &[
    (
        "x86_64-firecracker-guest-epyc-2vcpu-thp-mthp",
        "firecracker-guest-capture.tar.gz",
        true,
    ),
    (
        "x86_64-amd-epyc7451-2s-8numa",
        "x86_64-epyc_7451.tar.gz",
        true,
    ),
    (
        "x86_64-intel-2s-2numa-dmi-type17-raw",
        "32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2",
        true,
    ),
    (
        "aarch64-hisilicon-kunpeng920-2s-4numa-clusters",
        "128arm-2pa2n8cluster4co.tar.bz2",
        true,
    ),
    (
        "x86_64-intel-xeon-x7550-4s-numa-holes",
        "x86_64-64cpu.tar.gz",
        false,
    ),
    (
        "x86_64-amd-opteron-bulldozer-4s-8numa",
        "64amd64-4s2n4ca2co.tar.bz2",
        false,
    ),
    (
        "x86_64-intel-raptorlake-hybrid-pe-cores",
        "20em64t-hybrid-1p6c2t+2ca4co1t.tar.bz2",
        false,
    ),
    (
        "ppc64-power7-64cpu-memoryless-node",
        "ppc64-POWER7-64cpu.tar.gz",
        false,
    ),
    ("s390x-z196-lpar-offline-books", "s390-lpar.tar.gz", false),
    (
        "sparc64-ultrasparc-t1-offline",
        "sparc64-UltraSparc-T1.tar.gz",
        false,
    ),
    (
        "aarch64-biglittle-a510-a710-a715-x3",
        "arm-A510-A710-A715-X3.tar.gz",
        false,
    ),
];

#[test]
fn peers_read_snapshots_of_the_captures_as_the_captures() {
    let Some(fixtures) = fixtures() else { return };
    if !have_peers() {
        return;
    }
    for (folder, archive, agree) in CAPTURES {
        let tmp = hwsurvey_testkit::scratch_tempdir();
        let (_src_tmp, source) = hwsurvey_testkit::extract(&fixtures.join(folder).join(archive));
        let snap = snapshot(Some(&source), tmp.path());
        peers_print_the_same(&source, &snap, folder);
        if *agree {
            let probe = probe_facts(&snap);
            assert_eq!(
                lscpu_facts(&snap),
                probe,
                "{folder}: lscpu against the probe"
            );
            assert_eq!(
                lstopo_facts(&snap),
                probe,
                "{folder}: lstopo against the probe"
            );
        }
    }
}
