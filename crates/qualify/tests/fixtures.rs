//! Verdicts over the real captures in ../shared/fixtures (facts from its README.md).

use std::path::Path;

use hwsurvey_probe::{memory, probe_machine, SysRoot};
use hwsurvey_qualify::machine::fill_memory;
use hwsurvey_qualify::{from_machine, qualify, Facts, Finding, Report, RuleSet, Verdict};
use hwsurvey_testkit::extract;
use hwsurvey_testkit::fixtures;

fn qualify_archive(rel: &str) -> Option<Report> {
    let fx = fixtures()?;
    let (_dir, top) = extract(&fx.join(rel));
    let machine = probe_machine(&SysRoot::new(&top));
    Some(qualify(
        "capture",
        &from_machine(&machine),
        &RuleSet::builtin(),
    ))
}

fn of<'a>(r: &'a Report, rule: &str) -> Vec<&'a Finding> {
    r.findings.iter().filter(|f| f.rule == rule).collect()
}

#[test]
fn ultrasparc_t1_fails_24_of_32() {
    let Some(r) = qualify_archive("sparc64-ultrasparc-t1-offline/sparc64-UltraSparc-T1.tar.gz")
    else {
        return;
    };
    let f = of(&r, "cpu.online");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].verdict, Verdict::Fail);
    assert_eq!(
        f[0].summary,
        "24 of 32 possible CPUs online: CPUs 24-31 have CPU folders but are not present"
    );
    assert_eq!(r.exit_code(false), 2);
}

/// The T1 capture has no `proc/sys/kernel/osrelease`; its sysfs still has
/// `cpu/sched_mc_power_savings`, a knob Linux removed in 3.5, so its kernel is 3.4 or older.
/// The test writes that upper bound (DERIVED, not captured) and the kernel's machine
/// (`sun4v` in cpuinfo: sparc64, DERIVED) into the extracted tree: even the newest kernel the
/// capture can come from is older than sparc64's minimum 4.4 (rustc platform support), named
/// as the source. An explicit minimum in a rules file overrides the descriptor.
#[test]
fn ultrasparc_t1_kernel_older_than_the_sparc64_minimum() {
    let Some(fx) = fixtures() else { return };
    let (_dir, top) =
        extract(&fx.join("sparc64-ultrasparc-t1-offline/sparc64-UltraSparc-T1.tar.gz"));
    assert!(top
        .join("sys/devices/system/cpu/sched_mc_power_savings")
        .is_file());
    let cpuinfo = std::fs::read_to_string(top.join("proc/cpuinfo")).unwrap();
    assert!(cpuinfo.contains("type\t\t: sun4v"), "{cpuinfo}");
    std::fs::create_dir_all(top.join("proc/sys/kernel")).unwrap();
    std::fs::write(top.join("proc/sys/kernel/osrelease"), "3.4\n").unwrap();
    std::fs::write(top.join("proc/sys/kernel/arch"), "sparc64\n").unwrap();
    let facts = from_machine(&probe_machine(&SysRoot::new(&top)));
    let r = qualify("capture", &facts, &RuleSet::builtin());
    let f = of(&r, "os.kernel_min");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].verdict, Verdict::Fail);
    assert_eq!(f[0].summary, "kernel 3.4 is older than the minimum 4.4");
    assert!(
        f[0].evidence[1].source.starts_with(
            "min_kernel of targets/sparc64.toml (built in) (chosen by the kernel's machine sparc64 (no binary: "
        ),
        "{}",
        f[0].evidence[1].source
    );
    assert!(
        f[0].evidence[1].value.starts_with(
            "4.4 (rustc platform support, sparc64-unknown-linux-gnu: \"SPARC Linux (kernel 4.4+"
        ),
        "{}",
        f[0].evidence[1].value
    );
    let set = RuleSet::parse(
        "old.toml",
        "[rules.\"os.kernel_min\"]\nmin_kernel = \"2.6.32\"\n",
    )
    .unwrap();
    let r = qualify("capture", &facts, &set);
    assert_eq!(of(&r, "os.kernel_min")[0].verdict, Verdict::Pass);
}

#[test]
fn power7_node1_has_no_cpus() {
    let Some(r) = qualify_archive("ppc64-power7-64cpu-memoryless-node/ppc64-POWER7-64cpu.tar.gz")
    else {
        return;
    };
    let f = of(&r, "numa.nodes");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].verdict, Verdict::Warn);
    assert_eq!(
        f[0].summary,
        "node1 has no CPUs: its memory is remote to every CPU"
    );
    assert_eq!(of(&r, "cpu.online")[0].verdict, Verdict::Pass);
}

#[test]
fn xeon_x7550_possible_not_present_info_and_node1_missing() {
    let Some(r) = qualify_archive("x86_64-intel-xeon-x7550-4s-numa-holes/x86_64-64cpu.tar.gz")
    else {
        return;
    };
    let f = of(&r, "cpu.online");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].verdict, Verdict::Info);
    assert!(f[0]
        .summary
        .starts_with("16 possible CPUs not present (64-79)"));
    let n = of(&r, "numa.nodes");
    assert_eq!(n.len(), 1);
    assert_eq!(n[0].verdict, Verdict::Warn);
    assert_eq!(n[0].summary, "NUMA node1 missing (nodes present: 0, 2, 3)");
}

fn dmidecode_facts(rel: &str) -> Option<Facts> {
    let fx = fixtures()?;
    let text = std::fs::read_to_string(fx.join(rel)).unwrap();
    let empty = tempfile::tempdir().unwrap();
    let mem = memory::probe_with_dmidecode_text(&SysRoot::new(empty.path()), &text);
    let mut f = Facts::default();
    fill_memory(&mut f, &mem);
    Some(f)
}

#[test]
fn dell_r640_configured_below_rated_on_every_dimm() {
    let Some(f) = dmidecode_facts("x86_64-dell-r640-2s-dmidecode-24slots/dmidecode.txt") else {
        return;
    };
    let r = qualify("dell", &f, &RuleSet::builtin());
    let s = of(&r, "memory.speed");
    assert_eq!(s[0].verdict, Verdict::Warn);
    assert_eq!(
        s[0].summary,
        "configured 2400 MT/s below rated 3200 MT/s on every DIMM (12 of 12)"
    );
    // A1-A6 and B1-B6 populated alike with 8 GiB each
    let b = of(&r, "memory.balance");
    assert_eq!(b[0].verdict, Verdict::Pass);
    assert!(b[0]
        .evidence
        .iter()
        .any(|e| e.value == "A: 6 of 12 slots, 48 GiB, empty A7 A8 A9 A10 A11 A12"));
    assert_eq!(of(&r, "memory.mixed")[0].verdict, Verdict::Pass);
}

/// The Intel 2-socket capture (Locators `DIMM_A1`..`DIMM_B12`, no Bank Locator) with the
/// modules of DIMM_B1-B4 moved to DIMM_A5-A8: socket A 8 of 12, socket B empty. The probe
/// places the slots on sockets A and B; memory.balance grouped everything as "one group"
/// and passed. It must group as the probe does and warn.
#[test]
fn intel_2s_with_one_socket_empty_is_uneven_across_sockets() {
    let Some(fx) = fixtures() else {
        return;
    };
    let (_dir, root) = extract(
        &fx.join("x86_64-intel-2s-2numa-dmi-type17-raw/32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2"),
    );
    let mut mem = memory::probe(&SysRoot::new(&root));
    // as captured: 4 + 4, alike
    let mut f = Facts::default();
    fill_memory(&mut f, &mem);
    let b = of(&qualify("intel", &f, &RuleSet::builtin()), "memory.balance")[0].clone();
    assert_eq!(b.verdict, Verdict::Pass, "{}", b.summary);
    assert!(
        b.summary.starts_with("populated alike over 2 groups"),
        "{}",
        b.summary
    );
    // moved: 8 + 0
    let smbios = match &mut mem.smbios {
        hwsurvey_model::Probed::Known(s) => s,
        other => panic!("{other:?}"),
    };
    for n in 1..=4 {
        let from = smbios
            .devices
            .iter()
            .position(|d| d.locator.as_deref() == Some(&format!("DIMM_B{n}")))
            .unwrap();
        let to = smbios
            .devices
            .iter()
            .position(|d| d.locator.as_deref() == Some(&format!("DIMM_A{}", n + 4)))
            .unwrap();
        let size = smbios.devices[from].size;
        smbios.devices[from].size = smbios.devices[to].size;
        smbios.devices[to].size = size;
    }
    mem.population = hwsurvey_model::Probed::Known(memory::population::derive(smbios));
    let sockets = mem.population.known().unwrap().sockets.known().unwrap();
    assert_eq!(
        sockets
            .iter()
            .map(|s| (s.socket.as_str(), s.populated))
            .collect::<Vec<_>>(),
        [("A", 8), ("B", 0)]
    );
    let mut f = Facts::default();
    fill_memory(&mut f, &mem);
    let r = qualify("intel-moved", &f, &RuleSet::builtin());
    let b = of(&r, "memory.balance");
    assert_eq!(b[0].verdict, Verdict::Warn, "{}", b[0].summary);
    assert!(
        b[0].summary
            .starts_with("DIMMs populated unevenly across sockets"),
        "{}",
        b[0].summary
    );
}

#[test]
fn oracle_x5_2_no_imbalance_and_says_channels_unknown() {
    let Some(f) = dmidecode_facts("x86_64-oracle-x5-2-2s-dmidecode-24slots/dmidecode.txt") else {
        return;
    };
    let r = qualify("x5-2", &f, &RuleSet::builtin());
    let b = of(&r, "memory.balance");
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].verdict, Verdict::Pass, "{}", b[0].summary);
    assert!(b[0]
        .summary
        .contains("the per-channel mapping is not in these locators"));
    // both sockets: 8 of 12, each array 4 of 6, D2 D5 D6 D9 empty
    let ev: Vec<&str> = b[0].evidence.iter().map(|e| e.value.as_str()).collect();
    assert!(
        ev.contains(&"P0: 8 of 12 slots, 256 GiB, empty D9 D6 D2 D5"),
        "{ev:?}"
    );
    assert!(
        ev.contains(&"P1: 8 of 12 slots, 256 GiB, empty D9 D6 D2 D5"),
        "{ev:?}"
    );
    assert_eq!(
        ev.iter()
            .filter(|e| e.contains(" array ") && e.contains("4 of 6 slots"))
            .count(),
        4,
        "{ev:?}"
    );
    let c = of(&r, "memory.channels");
    assert_eq!(c[0].verdict, Verdict::NotEvaluated);
    assert!(c[0]
        .summary
        .contains("per-channel mapping is not in these locators"));
    assert_eq!(of(&r, "memory.speed")[0].verdict, Verdict::Pass);
}

/// Writes `grep . /sys/...` output (`/sys/path:value` lines) as files under `dir`.
fn tree_from_grep(dir: &Path, text: &str) {
    for line in text.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix('/') else {
            continue;
        };
        let Some((path, value)) = rest.split_once(':') else {
            continue;
        };
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{value}\n")).unwrap();
    }
}

#[test]
fn thunderx2_edac_corrected_errors_warn() {
    let Some(fx) = fixtures() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for name in ["edac-dimm-labels.txt", "edac-error-counts.txt"] {
        let text =
            std::fs::read_to_string(fx.join("aarch64-thunderx2-edac-ghes-16dimm").join(name))
                .unwrap();
        tree_from_grep(dir.path(), &text);
    }
    let mem = memory::probe(&SysRoot::new(dir.path()));
    let mut f = Facts::default();
    fill_memory(&mut f, &mem);
    let r = qualify("tx2", &f, &RuleSet::builtin());
    let e = of(&r, "memory.edac");
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].verdict, Verdict::Warn);
    assert_eq!(
        e[0].summary,
        "9 corrected memory errors on mc0 dimm0/dimm3/dimm4/dimm6 and mc1 dimm0/dimm3/dimm6"
    );
    assert!(e[0]
        .evidence
        .iter()
        .any(|x| x.value == "2 (mc0 dimm6 (N0 DIMM_G0))"));
    assert_eq!(r.exit_code(false), 1);
}

#[test]
fn s390x_offline_present_cpus_fail() {
    let Some(r) = qualify_archive("s390x-z196-lpar-offline-books/s390-lpar.tar.gz") else {
        return;
    };
    let f = of(&r, "cpu.online");
    assert_eq!(f[0].verdict, Verdict::Fail);
    assert_eq!(f[0].summary, "17 of 20 present CPUs online; offline: 0,6-7");
}

#[test]
fn firecracker_guest_thp_madvise_and_empty_hugetlb_pools() {
    let Some(r) = qualify_archive(
        "x86_64-firecracker-guest-epyc-2vcpu-thp-mthp/firecracker-guest-capture.tar.gz",
    ) else {
        return;
    };
    assert_eq!(of(&r, "pages.thp")[0].verdict, Verdict::Pass);
    let h = of(&r, "pages.hugetlb");
    assert_eq!(h[0].verdict, Verdict::Warn);
    assert_eq!(
        h[0].summary,
        "hugetlb pools are empty: the hugetlb page mode will be skipped"
    );
    assert_eq!(h[0].evidence.len(), 2, "{:?}", h[0].evidence);
    assert_eq!(of(&r, "pages.sizes")[0].verdict, Verdict::Pass);
    // smt/control says "notsupported" (one thread per vCPU): not "SMT is off"
    let smt = of(&r, "cpu.smt");
    assert_eq!(smt[0].verdict, Verdict::Info);
    assert_eq!(
        smt[0].summary,
        "SMT not supported by this CPU (or the hypervisor hides it)"
    );
    // no PCI link data in this guest: not evaluated, never a pass
    assert_eq!(of(&r, "io.pcie_link")[0].verdict, Verdict::NotEvaluated);
}

/// Channels as `hwsurvey probe` derives them (the memory population): each (socket, channel)
/// with its populated DIMMs, or why they are unknown.
fn probe_channels(m: &memory::Memory) -> Result<Vec<String>, String> {
    let p = m.population.known().ok_or("no population")?;
    let sockets = p.sockets.known().ok_or("sockets unknown")?;
    let mut out = Vec::new();
    for s in sockets {
        let list = s
            .channels
            .known()
            .ok_or_else(|| format!("{}: {:?}", s.socket, s.channels))?;
        for c in list {
            out.push(format!(
                "{} channel {}: {} DIMM(s)",
                s.socket, c.channel, c.populated
            ));
        }
    }
    out.sort();
    Ok(out)
}

/// The same from qualify's `memory.channels` (its evidence lines), or its not-evaluated
/// reason.
fn qualify_channels(m: &memory::Memory) -> Result<Vec<String>, String> {
    let mut f = Facts::default();
    fill_memory(&mut f, m);
    let out = hwsurvey_qualify::rules::memory_channels(&f, &Default::default());
    let mut lines: Vec<String> = out[0]
        .evidence
        .iter()
        .filter(|e| e.source == "SMBIOS Type 17")
        .map(|e| e.value.clone())
        .collect();
    if lines.is_empty() {
        return Err(out[0].summary.clone());
    }
    lines.sort();
    Ok(lines)
}

/// Whether the probe could say which channels are empty (on every socket).
fn probe_knows_empty_channels(m: &memory::Memory) -> bool {
    m.population
        .known()
        .and_then(|p| p.sockets.known())
        .is_some_and(|s| s.iter().all(|s| s.empty_channels.known().is_some()))
}

/// For the Dell R640's dmidecode text `probe --dmidecode` once said "6 channels, DIMMs
/// per channel ch0:1 ..." while `qualify --dmidecode` said the locators hold no per-channel
/// mapping. One reader (`hwsurvey_probe::memory::population::locate`) serves both now: on
/// every dmidecode text and every SMBIOS capture of ../shared/fixtures, qualify evaluates
/// channels exactly where the probe derives them, with the same DIMMs per channel, and where
/// the channels rest on Dell's slot naming, it says so.
#[test]
fn probe_and_qualify_give_one_answer_on_channels() {
    let Some(fx) = fixtures() else { return };
    let bare = tempfile::tempdir().unwrap();
    let mut captures: Vec<(String, memory::Memory)> = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(&fx)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("dmidecode") && name.ends_with(".txt") {
                let text = std::fs::read_to_string(&path).unwrap();
                let m = memory::probe_with_dmidecode_text(&SysRoot::new(bare.path()), &text);
                captures.push((path.display().to_string(), m));
            } else if name.contains(".tar.")
                && hwsurvey_testkit::archive_contains(&path, "/firmware/dmi/")
            {
                let (_tmp, top) = extract(&path);
                {
                    captures.push((
                        path.display().to_string(),
                        memory::probe(&SysRoot::new(&top)),
                    ));
                }
            }
        }
    }
    assert!(captures.len() >= 7, "{} captures", captures.len());
    let mut evaluated = 0;
    for (name, m) in &captures {
        if m.smbios.known().is_none() {
            continue;
        }
        let probe = probe_channels(m);
        let qualify = qualify_channels(m);
        assert_eq!(
            probe.is_ok(),
            qualify.is_ok(),
            "{name}: probe {probe:?}, qualify {qualify:?}"
        );
        if let (Ok(p), Ok(q)) = (&probe, &qualify) {
            assert_eq!(p, q, "{name}");
            evaluated += 1;
            // qualify passes or warns on channels only where the probe can tell empty ones
            let mut f = Facts::default();
            fill_memory(&mut f, m);
            let out = hwsurvey_qualify::rules::memory_channels(&f, &Default::default());
            assert_eq!(
                out[0].verdict != Verdict::NotEvaluated,
                probe_knows_empty_channels(m),
                "{name}: {out:?}"
            );
        }
    }
    // the Dell (by its slot naming) and the Intel board's DIMM_A1.. are evaluated
    assert!(evaluated >= 2, "{evaluated} evaluated");
    let dell = captures
        .iter()
        .find(|(n, _)| n.contains("dell-r640"))
        .unwrap();
    let mut f = Facts::default();
    fill_memory(&mut f, &dell.1);
    let out = hwsurvey_qualify::rules::memory_channels(&f, &Default::default());
    assert_eq!(out[0].verdict, Verdict::Pass, "{out:?}");
    assert_eq!(
        out[0].summary,
        "12 channels over 2 sockets, each holds 1 DIMM"
    );
    assert!(
        out[0].evidence.iter().any(|e| e.source == "channel mapping"
            && e.value.contains("Dell's slot naming")
            && e.value
                .contains("A1-A6 are the first DIMM of each of the 6 channels")),
        "{out:?}"
    );
}
