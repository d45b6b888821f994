//! The peers' own tools on hwsurvey snapshots (issue 35): `lscpu --sysroot DIR` (util-linux)
//! and `lstopo-no-graphics --input DIR` (hwloc) run on an extracted snapshot of this machine
//! and of the real captures in `../shared/fixtures`, print what they print on the source root
//! (the snapshot holds every file they read), and agree with the probe's document on CPUs,
//! sockets, cores, threads, NUMA nodes and caches.
//!
//! Before: lscpu aborted on a snapshot (`print_cpuset: Assertion 'set' failed`: no
//! `shared_cpu_map`) and hwloc "failed to find sysfs cpu topology directory" (no
//! `thread_siblings`, `core_siblings`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use hwsurvey_testkit::{fixtures, tool, unpack};

/// What a tool (or the probe) says of the CPU side of a machine.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Facts {
    /// Online CPUs.
    cpus: usize,
    sockets: usize,
    cores: usize,
    /// Hardware threads (online CPUs with a topology).
    threads: usize,
    /// NUMA nodes holding CPUs.
    nodes: usize,
    /// Per cache name (`L1d`, `L1i`, `L2`, `L3`): size of one instance in bytes, instances.
    caches: BTreeMap<String, (u64, usize)>,
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// `lscpu` on `root` (`--sysroot` unless `/`) with `args`.
fn lscpu(root: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new("lscpu");
    if root != Path::new("/") {
        cmd.arg("--sysroot").arg(root);
    }
    run(cmd.args(args).env("LC_ALL", "C"))
}

/// lscpu's facts: `-p=CPU,CORE,SOCKET,NODE` (online CPUs) and `-C --bytes` (caches).
fn lscpu_facts(root: &Path) -> Facts {
    let table = lscpu(root, &["-p=CPU,CORE,SOCKET,NODE"]);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(',').collect())
        .collect();
    let distinct = |i: usize| {
        rows.iter()
            .filter_map(|r| r.get(i).filter(|v| !v.is_empty()))
            .collect::<BTreeSet<_>>()
            .len()
    };
    let mut caches = BTreeMap::new();
    for line in lscpu(root, &["-C", "--bytes"]).lines().skip(1) {
        let w: Vec<&str> = line.split_whitespace().collect();
        let (Some(one), Some(all)) = (
            w.get(1).and_then(|v| v.parse::<u64>().ok()),
            w.get(2).and_then(|v| v.parse::<u64>().ok()),
        ) else {
            continue;
        };
        if one > 0 {
            caches.insert(w[0].to_string(), (one, (all / one) as usize));
        }
    }
    Facts {
        cpus: rows.len(),
        sockets: distinct(2),
        cores: distinct(1),
        threads: rows.len(),
        nodes: distinct(3),
        caches,
    }
}

/// `lstopo-no-graphics` on `root` (`--input` unless `/`): the XML of the whole system (CPUs
/// outside this process's cgroup too), without I/O.
fn lstopo_xml(root: &Path) -> String {
    let mut cmd = Command::new("lstopo-no-graphics");
    if root != Path::new("/") {
        cmd.arg("--input").arg(root);
    }
    run(cmd
        .args(["--no-io", "--disallowed", "--of", "xml", "-"])
        .env("HWLOC_COMPONENTS", "-pci"))
}

/// hwloc's facts from its XML: objects counted by type; caches by level and type.
fn lstopo_facts(root: &Path) -> Facts {
    let xml = lstopo_xml(root);
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&xml, options).expect("lstopo XML");
    let objects: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("object"))
        .collect();
    let count = |t: &str| {
        objects
            .iter()
            .filter(|n| n.attribute("type") == Some(t))
            .count()
    };
    let nodes_with_cpus = objects
        .iter()
        .filter(|n| n.attribute("type") == Some("NUMANode"))
        .filter(|n| {
            // hwloc's bitmask: 32-bit words `0x...` joined by `,` (an empty word is 0)
            n.attribute("cpuset").is_some_and(|c| {
                c.split(',').any(|w| {
                    u64::from_str_radix(w.trim_start_matches("0x"), 16).is_ok_and(|v| v != 0)
                })
            })
        })
        .count();
    let mut caches: BTreeMap<String, (u64, usize)> = BTreeMap::new();
    for n in &objects {
        let Some(t) = n.attribute("type") else {
            continue;
        };
        let Some(level) = t.strip_prefix('L').and_then(|r| r.strip_suffix("Cache")) else {
            continue;
        };
        let name = match (level, n.attribute("cache_type")) {
            ("1", Some("1")) => "L1d".to_string(),
            ("1i", _) => "L1i".to_string(),
            (l, _) => format!("L{l}"),
        };
        let size: u64 = n
            .attribute("cache_size")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let e = caches.entry(name).or_insert((size, 0));
        e.1 += 1;
    }
    caches.retain(|_, (size, _)| *size > 0);
    Facts {
        cpus: count("PU"),
        sockets: count("Package"),
        cores: count("Core"),
        threads: count("PU"),
        nodes: nodes_with_cpus,
        caches,
    }
}

/// The probe's facts from its document (`hwsurvey probe --json --root ROOT`).
fn probe_facts(root: &Path) -> Facts {
    let out = run(Command::new(env!("CARGO_BIN_EXE_hwsurvey")).args([
        "probe",
        "--json",
        "--root",
        &root.display().to_string(),
    ]));
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let cpu = &doc["cpu"];
    let topo = &cpu["topology"];
    let n =
        |v: &serde_json::Value| v.as_u64().unwrap_or_else(|| panic!("not a count: {v}")) as usize;
    let online = cpu["cpus"]
        .as_array()
        .expect("cpu.cpus")
        .iter()
        .filter(|c| c["online"] == true)
        .count();
    let nodes = doc["numa"]["nodes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|n| n["cpus"].as_str().is_some_and(|c| !c.is_empty()))
                .count()
        })
        .unwrap_or(0);
    let mut caches = BTreeMap::new();
    for c in cpu["caches"].as_array().expect("cpu.caches") {
        let level = c["level"].as_u64().expect("level");
        let name = match (level, c["cache_type"].as_str()) {
            (1, Some("data")) => "L1d".to_string(),
            (1, Some("instruction")) => "L1i".to_string(),
            (l, _) => format!("L{l}"),
        };
        if let (Some(size), Some(instances)) = (c["size_bytes"].as_u64(), c["instances"].as_u64()) {
            caches.insert(name, (size, instances as usize));
        }
    }
    Facts {
        cpus: online,
        sockets: n(&topo["packages"]),
        cores: n(&topo["cores"]),
        threads: n(&topo["threads"]),
        nodes,
        caches,
    }
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
    let tmp = tempfile::tempdir().unwrap();
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
        let tmp = tempfile::tempdir().unwrap();
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
