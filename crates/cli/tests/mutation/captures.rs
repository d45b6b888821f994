//! Kind 1 of the mutation campaign: captures of /proc and /sys, mutated file by file,
//! through the probe, its summary and qualify.

use super::*;

/// Captures with archives (tree roots), chosen for variety: x86 with THP/mTHP/hugetlb, x86
/// with SMBIOS Type 17 blobs, hybrid x86, sparc64 with offline CPUs, big.LITTLE arm64,
/// ppc64 with a memory-less node, s390x with offline books.
const CAPTURES: &[&str] = &[
    "x86_64-firecracker-guest-epyc-2vcpu-thp-mthp",
    "x86_64-intel-2s-2numa-dmi-type17-raw",
    "x86_64-intel-raptorlake-hybrid-pe-cores",
    "sparc64-ultrasparc-t1-offline",
    "aarch64-biglittle-a510-a710-a715-x3",
    "ppc64-power7-64cpu-memoryless-node",
    "s390x-z196-lpar-offline-books",
];

pub(super) struct Capture {
    name: &'static str,
    _dir: tempfile::TempDir,
    pub(super) root: PathBuf,
    /// Kernel paths of the regular files the clean probe read.
    files: Vec<String>,
    /// Kernel paths of folders holding them.
    dirs: Vec<String>,
    clean_json: usize,
    clean_summary: usize,
    clean_qualify: Vec<usize>,
}

pub(super) fn load_capture(fixtures: &Path, name: &'static str) -> Option<Capture> {
    let folder = fixtures.join(name);
    let archive = std::fs::read_dir(&folder)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".tar.gz") || n.ends_with(".tar.bz2")
        })?;
    let (dir, root) = hwsurvey_testkit::extract(&archive);
    let sys = SysRoot::new(&root);
    let m = probe_machine(&sys);
    let files: Vec<String> = sys
        .accessed()
        .into_iter()
        .filter(|p| {
            std::fs::symlink_metadata(sys.host_path(p)).is_ok_and(|md| md.file_type().is_file())
        })
        .collect();
    let dirs: BTreeSet<String> = files
        .iter()
        .filter_map(|p| p.rsplit_once('/').map(|(d, _)| d.to_string()))
        .filter(|d| d.matches('/').count() >= 2)
        .collect();
    let report = qualify("capture", &from_machine(&m), &RuleSet::builtin());
    Some(Capture {
        name,
        _dir: dir,
        clean_json: serde_json::to_string(&m).unwrap().len(),
        clean_summary: summary_text(&m).len(),
        clean_qualify: qualify_texts(&report)
            .iter()
            .map(|(_, t)| t.len())
            .collect(),
        root,
        files,
        dirs: dirs.into_iter().collect(),
    })
}

/// What one mutation did to a capture, to undo it.
enum Undo {
    /// Restore this file's bytes (whatever is at the path now is removed first).
    File(PathBuf, Vec<u8>),
    /// Move the folder back from where it was put aside.
    Dir { path: PathBuf, aside: PathBuf },
}

fn remove_any(p: &Path) {
    match std::fs::symlink_metadata(p) {
        Ok(md) if md.is_dir() => std::fs::remove_dir_all(p).unwrap(),
        Ok(_) => std::fs::remove_file(p).unwrap(),
        Err(_) => {}
    }
}

fn undo(u: Undo) {
    match u {
        Undo::File(p, bytes) => {
            remove_any(&p);
            std::fs::write(&p, bytes).unwrap();
        }
        Undo::Dir { path, aside } => {
            remove_any(&path);
            std::fs::rename(&aside, &path).unwrap();
        }
    }
}

/// Replaces one run of decimal digits of `text` (picked at random) by `by`; appends it when
/// there is none.
fn replace_number(rng: &mut Rng, text: &[u8], by: &str) -> Vec<u8> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text[i].is_ascii_digit() {
            let start = i;
            while i < text.len() && text[i].is_ascii_digit() {
                i += 1;
            }
            runs.push((start, i));
        } else {
            i += 1;
        }
    }
    if runs.is_empty() {
        let mut v = text.to_vec();
        v.extend_from_slice(by.as_bytes());
        return v;
    }
    let (a, b) = *rng.pick(&runs);
    let mut v = text[..a].to_vec();
    v.extend_from_slice(by.as_bytes());
    v.extend_from_slice(&text[b..]);
    v
}

const HUGE_NUMBERS: &[&str] = &[
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "4294967295",
    "4294967296",
    "99999999999999999999999999999",
    "1e300",
    "0",
];

const NEGATIVE_IDS: &[&str] = &["-1", "-2", "-9223372036854775808", "-4294967296", "-0"];

const CONTROLS: &[&str] = &[
    "\u{1b}[2J",
    "\u{7}",
    "\0",
    "\r",
    "\u{202e}",
    "\u{1b}]0;pwned\u{7}",
    "\u{fffe}",
    "\n\n",
];

fn huge_lists() -> Vec<String> {
    let mut v: Vec<String> = [
        "0-1048575",
        "0-4294967295",
        "0-18446744073709551615",
        "0-8191",
        "8191",
        "8192",
        "3-1",
        "0-3:2/4",
        "0--1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // 1 MiB of overlapping ranges (each within the kernel's maximum)
    v.push("0-8191,".repeat(150_000));
    // a mask with 8192 bits set, then one with 2^20 bits
    v.push(vec!["ffffffff"; 256].join(","));
    v.push(vec!["ffffffff"; 32768].join(","));
    // 32768 single CPUs
    v.push(
        (0..32768)
            .map(|i| (2 * i).to_string())
            .collect::<Vec<_>>()
            .join(","),
    );
    v
}

/// A 1 MiB line: the file's own first token repeated, or letters with control characters.
fn mib_line(rng: &mut Rng, text: &[u8]) -> Vec<u8> {
    let unit: Vec<u8> = match rng.below(3) {
        0 => {
            let t = String::from_utf8_lossy(text);
            let tok = t.split_whitespace().next().unwrap_or("x").to_string();
            format!("{tok},").into_bytes()
        }
        1 => b"A".to_vec(),
        _ => "evil\u{1b}[2J\u{7}\0<&>\u{202e}".as_bytes().to_vec(),
    };
    let mut v = Vec::with_capacity(MIB + 64);
    while v.len() < MIB {
        v.extend_from_slice(&unit);
    }
    if rng.chance(50) {
        v.push(b'\n');
    }
    v
}

/// Applies one mutation to the file at kernel path `path`; returns the words for it.
fn mutate_file(rng: &mut Rng, root: &Path, path: &str, undos: &mut Vec<Undo>) -> String {
    let host = root.join(path.trim_start_matches('/'));
    let original = std::fs::read(&host).unwrap_or_default();
    undos.push(Undo::File(host.clone(), original.clone()));
    let write = |bytes: &[u8]| {
        remove_any(&host);
        std::fs::write(&host, bytes).unwrap();
    };
    match rng.below(14) {
        0 => {
            let at = if original.is_empty() {
                0
            } else {
                rng.below(original.len())
            };
            write(&original[..at]);
            format!("{path}: truncated to {at} of {} bytes", original.len())
        }
        1 => {
            let mut v = original.clone();
            if v.is_empty() {
                v.push(0xff);
            }
            let n = 1 + rng.below(8);
            for _ in 0..n {
                let at = rng.below(v.len());
                v[at] ^= 1 << rng.below(8);
            }
            write(&v);
            format!("{path}: {n} bits flipped")
        }
        2 => {
            let mut v = original.clone();
            if v.is_empty() {
                v.push(0);
            }
            let n = 1 + rng.below(4);
            for _ in 0..n {
                let at = rng.below(v.len());
                v[at] = rng.next() as u8;
            }
            write(&v);
            format!("{path}: {n} random bytes")
        }
        3 | 4 => {
            let by = *rng.pick(HUGE_NUMBERS);
            write(&replace_number(rng, &original, by));
            format!("{path}: a number replaced by {by}")
        }
        5 => {
            let by = *rng.pick(NEGATIVE_IDS);
            write(&replace_number(rng, &original, by));
            format!("{path}: a number replaced by {by}")
        }
        6 => {
            let c = *rng.pick(CONTROLS);
            let mut v = original.clone();
            let at = if v.is_empty() { 0 } else { rng.below(v.len()) };
            v.splice(at..at, c.bytes());
            write(&v);
            format!("{path}: {c:?} inserted at byte {at}")
        }
        7 => {
            let v = mib_line(rng, &original);
            write(&v);
            format!(
                "{path}: a 1 MiB line ({:?}...)",
                cut(&String::from_utf8_lossy(&v[..40]))
            )
        }
        8 => {
            let lists = huge_lists();
            let l = rng.pick(&lists);
            write(format!("{l}\n").as_bytes());
            format!("{path}: the list {:?}", cut(l))
        }
        9 => {
            remove_any(&host);
            format!("{path}: deleted")
        }
        10 => {
            remove_any(&host);
            let name = host.file_name().unwrap().to_owned();
            std::os::unix::fs::symlink(&name, &host).unwrap();
            format!("{path}: a symlink to itself")
        }
        11 => {
            remove_any(&host);
            let target = *rng.pick(&[
                "/dev/zero",
                "../../../../../../../../../../dev/zero",
                "/proc/self/mem",
                "../../../../../../../../../../etc/passwd",
                "/nonexistent",
            ]);
            std::os::unix::fs::symlink(target, &host).unwrap();
            format!("{path}: a symlink to {target}")
        }
        12 => {
            remove_any(&host);
            std::fs::create_dir(&host).unwrap();
            format!("{path}: a folder")
        }
        _ => {
            write(b"");
            format!("{path}: emptied")
        }
    }
}

/// Turns the folder at kernel path `dir` into a symlink loop (itself, or a pair).
fn loop_dir(rng: &mut Rng, root: &Path, dir: &str, undos: &mut Vec<Undo>) -> String {
    let host = root.join(dir.trim_start_matches('/'));
    let aside = host.with_extension("mutation-aside");
    std::fs::rename(&host, &aside).unwrap();
    undos.push(Undo::Dir {
        path: host.clone(),
        aside,
    });
    let name = host.file_name().unwrap().to_owned();
    if rng.chance(50) {
        std::os::unix::fs::symlink(&name, &host).unwrap();
        format!("{dir}: a symlink to itself")
    } else {
        // dir -> dir.loop -> dir
        let other = host.with_extension("mutation-loop");
        std::os::unix::fs::symlink(other.file_name().unwrap(), &host).unwrap();
        remove_any(&other);
        std::os::unix::fs::symlink(&name, &other).unwrap();
        undos.push(Undo::File(other.clone(), Vec::new()));
        format!("{dir}: a symlink loop through {}", other.display())
    }
}

/// Copies a tree, keeping symlinks as symlinks (loops included).
fn copy_tree(from: &Path, to: &Path) {
    let Ok(md) = std::fs::symlink_metadata(from) else {
        return;
    };
    if md.file_type().is_symlink() {
        if let Ok(t) = std::fs::read_link(from) {
            let _ = std::os::unix::fs::symlink(t, to);
        }
    } else if md.is_dir() {
        let _ = std::fs::create_dir_all(to);
        if let Ok(rd) = std::fs::read_dir(from) {
            for e in rd.flatten() {
                copy_tree(&e.path(), &to.join(e.file_name()));
            }
        }
    } else if md.is_file() {
        let _ = std::fs::copy(from, to);
    }
}

/// The base page sizes Linux has on `arch` (None: not known here, any power of two).
fn page_sizes_of(arch: Arch) -> Option<&'static [u64]> {
    Some(match arch {
        Arch::X86_64 | Arch::X86 | Arch::S390x | Arch::E2k => &[4096],
        Arch::Sparc64 => &[8192],
        Arch::Aarch64 => &[4096, 16384, 65536],
        Arch::Ppc64 => &[4096, 65536],
        Arch::Ia64 => &[4096, 8192, 16384, 65536],
        Arch::Loongarch64 => &[4096, 16384, 65536],
        Arch::Riscv64 | Arch::Arm => &[4096],
        Arch::Unknown => return None,
    })
}

/// The "silent wrong" classes on a probed machine: a value the probe states as a
/// fact that no kernel can have reported.
fn machine_facts_problems(m: &Machine, out: &mut Vec<String>) {
    let c = &m.cpu;
    let max = |s: &CpuSet| s.last().map(|v| v as u64);
    let sets = [
        ("possible", &c.possible),
        ("present", &c.present),
        ("online", &c.online),
        ("offline", &c.offline),
        ("present_offline", &c.present_offline),
        ("allowed status", &c.allowed.status_cpus),
        ("allowed cgroup", &c.allowed.cgroup_cpus),
    ];
    for (name, set) in sets {
        if let Probed::Known(s) = set {
            if max(s).is_some_and(|v| v >= MAX_CPUS as u64) {
                out.push(format!(
                    "cpu.{name} holds CPU {} (beyond the kernel maximum {MAX_CPUS})",
                    max(s).unwrap()
                ));
            }
        }
    }
    if let Probed::Known(possible) = &c.possible {
        for (name, set) in &sets[1..5] {
            if let Probed::Known(s) = set {
                if !s.is_subset(possible) {
                    out.push(format!(
                        "cpu.{name} {} is not within possible {}",
                        cut(&s.to_list_string()),
                        cut(&possible.to_list_string())
                    ));
                }
            }
        }
        if let Probed::Known(t) = &c.topology.threads {
            if *t as usize > possible.len() {
                out.push(format!(
                    "{t} online threads on a machine of {} possible CPUs",
                    possible.len()
                ));
            }
        }
        for k in &c.kinds {
            if !k.cpus.is_subset(possible) {
                out.push(format!("core kind {:?} holds CPUs beyond possible", k.name));
            }
        }
        for n in &m.numa.nodes {
            if let Probed::Known(s) = &n.cpus {
                if !s.is_subset(possible) {
                    out.push(format!("NUMA node {} holds CPUs beyond possible", n.node));
                }
            }
        }
        for cache in &c.caches {
            if cache.instances as usize > possible.len().max(1) {
                out.push(format!(
                    "L{} has {} instances on {} possible CPUs",
                    cache.level,
                    cache.instances,
                    possible.len()
                ));
            }
        }
    }
    for cache in &c.caches {
        if !(1..=5).contains(&cache.level) {
            out.push(format!("a cache of level {}", cache.level));
        }
        if let Probed::Known(s) = &cache.size_bytes {
            if *s == 0 || *s > 4 << 30 {
                out.push(format!("L{} instance of {s} bytes", cache.level));
            }
        }
    }
    if let (Probed::Known(cores), Probed::Known(threads)) = (&c.topology.cores, &c.topology.threads)
    {
        if cores > threads {
            out.push(format!("{cores} cores for {threads} threads"));
        }
    }
    for id in &c.topology.package_ids {
        if *id < 0 {
            out.push(format!("package id {id} counted as a package"));
        }
    }
    if c.kinds.len() > 1 {
        let mut all = CpuSet::new();
        for k in &c.kinds {
            if !all.intersection(&k.cpus).is_empty() {
                out.push(format!("core kind {:?} overlaps another kind", k.name));
            }
            all = all.union(&k.cpus);
        }
    }
    // pages
    let p = &m.pages;
    if let Probed::Known(size) = &p.base_page_size_bytes {
        if let Some(allowed) = page_sizes_of(c.arch) {
            if !allowed.contains(size) {
                out.push(format!(
                    "base page size {size} on {} (from {})",
                    c.arch.as_str(),
                    p.base_page_size_source
                ));
            }
        } else if !size.is_power_of_two() || *size < 4096 {
            out.push(format!("base page size {size}"));
        }
    }
    let mem_total = m.memory.meminfo.known().map(|mi| mi.mem_total_bytes);
    // 4 PiB: the largest physical address space of any architecture here (x86 5-level paging)
    let memory_bound = mem_total.unwrap_or(4 << 50);
    for pool in &p.hugetlb {
        let s = &pool.system;
        if !s.page_size_bytes.is_power_of_two() {
            out.push(format!("a huge page size of {} bytes", s.page_size_bytes));
        }
        if let (Probed::Known(free), Probed::Known(total)) = (&s.free_pages, &s.total_pages) {
            if free > total {
                out.push(format!(
                    "{free} free of {total} huge pages of {} bytes",
                    s.page_size_bytes
                ));
            }
        }
        if let Probed::Known(b) = &s.total_bytes {
            if *b > memory_bound {
                out.push(format!(
                    "a hugetlb pool of {b} bytes (MemTotal {mem_total:?})"
                ));
            }
        }
    }
}

#[test]
fn mutated_captures() {
    let Some(fixtures) = hwsurvey_testkit::fixtures() else {
        return;
    };
    let start = Instant::now();
    let captures: Vec<Arc<Capture>> = CAPTURES
        .iter()
        .filter_map(|name| load_capture(&fixtures, name).map(Arc::new))
        .collect();
    assert_eq!(captures.len(), CAPTURES.len(), "every capture extracts");
    println!(
        "captures: {} extracted and probed clean in {:.1} s",
        captures.len(),
        start.elapsed().as_secs_f64()
    );
    let rules = Arc::new(RuleSet::builtin());
    let seed = seed();
    let cases = cases(30);
    let mut slowest = (Duration::ZERO, 0);
    let mut failures = Vec::new();
    for &index in &cases {
        let mut rng = Rng::for_case(seed, "capture", index);
        let cap = captures[rng.below(captures.len())].clone();
        let mut undos = Vec::new();
        let mut what = vec![format!("capture {}", cap.name)];
        if rng.chance(8) {
            let d = rng.pick(&cap.dirs).clone();
            what.push(loop_dir(&mut rng, &cap.root, &d, &mut undos));
        } else {
            let n = 1 + rng.below(3);
            let mut chosen = BTreeSet::new();
            for _ in 0..n {
                let f = rng.pick(&cap.files).clone();
                if chosen.insert(f.clone()) {
                    what.push(mutate_file(&mut rng, &cap.root, &f, &mut undos));
                }
            }
        }
        let what = what.join("; ");
        let work = {
            let cap = cap.clone();
            let rules = rules.clone();
            move || check_capture(&cap, &rules)
        };
        match bounded(work) {
            Ok(took) => {
                if took > slowest.0 {
                    slowest = (took, index);
                }
            }
            Err(findings) => failures.push(fail("capture", index, &what, &findings, |dir| {
                copy_tree(&cap.root, &dir.join("root"))
            })),
        }
        for u in undos.into_iter().rev() {
            undo(u);
        }
    }
    println!(
        "captures: {} mutated inputs (seed {seed:#x}) in {:.1} s; slowest input {} took {:.2} s",
        cases.len(),
        start.elapsed().as_secs_f64(),
        slowest.1,
        slowest.0.as_secs_f64()
    );
    report("capture", cases.len(), &failures);
}

fn check_capture(cap: &Capture, rules: &RuleSet) -> Result<(), String> {
    let sys = SysRoot::new(&cap.root);
    let m = probe_machine(&sys);
    let mut out = Vec::new();
    let json = serde_json::to_string(&m).map_err(|e| format!("machine JSON: {e}"))?;
    // a mutation adds at most a few MiB (three 1 MiB lines)
    check_bounded(
        "probe --json",
        json.len(),
        cap.clean_json,
        8 * MIB,
        &mut out,
    );
    let summary = summary_text(&m);
    check_bounded(
        "probe summary",
        summary.len(),
        cap.clean_summary,
        64 << 10,
        &mut out,
    );
    let raw = raw_controls(&summary);
    if !raw.is_empty() {
        out.push(format!("probe summary: raw control characters {raw:?}"));
    }
    for u in hwsurvey_probe::probe_text::unknowns(&m) {
        check_error_line("probe problem", &u, &mut out);
    }
    machine_facts_problems(&m, &mut out);
    // qualify on the probed facts
    let facts = from_machine(&m);
    let report = qualify("capture", &facts, rules);
    for ((name, text), clean) in qualify_texts(&report).iter().zip(&cap.clean_qualify) {
        check_bounded(name, text.len(), *clean, 64 << 10, &mut out);
        if *name != "qualify json" {
            let raw = raw_controls(text);
            if !raw.is_empty() {
                out.push(format!("{name}: raw control characters {raw:?}"));
            }
        }
    }
    // cpu.online passes only on known online and present sets (a refused `0-1048575` once
    // left it passing)
    let passed = |rule: &str| {
        report
            .findings
            .iter()
            .any(|f| f.rule == rule && f.verdict == Verdict::Pass)
    };
    if passed("cpu.online") && (m.cpu.online.known().is_none() || m.cpu.present.known().is_none()) {
        out.push("qualify passes cpu.online with the online or present set unknown".into());
    }
    // pages.hugetlb passes only on pools whose counts are known
    if passed("pages.hugetlb")
        && m.pages
            .hugetlb
            .iter()
            .any(|p| p.system.total_pages.known().is_none())
        && m.pages
            .hugetlb
            .iter()
            .all(|p| p.system.total_pages.known().is_none_or(|n| *n == 0))
    {
        out.push("qualify passes pages.hugetlb with no pool known to hold pages".into());
    }
    if out.is_empty() {
        Ok(())
    } else {
        Err(out.join("\n"))
    }
}
