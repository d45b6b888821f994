//! Each rule on its own, over facts written from the fixture READMEs' facts.

use hwsurvey_model::{CpuSet, Probed, Unknown};
use hwsurvey_qualify::facts::*;
use hwsurvey_qualify::machine::target_facts;
use hwsurvey_qualify::{qualify, rules, Evidence, Facts, Finding, Params, RuleSet, Verdict};

/// A hugetlb pool of `pages` pages of `page_size_bytes`, all free.
fn pool(page_size_bytes: u64, pages: u64) -> PoolTotals {
    PoolTotals {
        page_size_bytes,
        total_pages: Probed::Known(pages),
        free_pages: Probed::Known(pages),
    }
}

fn set(s: &str) -> Probed<CpuSet> {
    Probed::Known(CpuSet::parse_list(s).unwrap())
}

fn params(id: &str) -> Params {
    RuleSet::builtin().params(id).unwrap()
}

fn verdicts(f: &[Finding]) -> Vec<Verdict> {
    f.iter().map(|f| f.verdict).collect()
}

#[test]
fn cpu_online_t1_dormant_threads_fail() {
    let mut f = Facts::default();
    f.cpu.possible = set("0-31");
    f.cpu.present = set("0-23");
    f.cpu.online = set("0-23");
    f.cpu.registered = set("0-31");
    let out = rules::cpu_online(&f, &Params::default());
    assert_eq!(verdicts(&out), vec![Verdict::Fail]);
    assert!(
        out[0].summary.starts_with("24 of 32 possible CPUs online"),
        "{}",
        out[0].summary
    );
    assert!(out[0].summary.contains("24-31"));
}

#[test]
fn cpu_online_hotplug_slots_info() {
    let mut f = Facts::default();
    f.cpu.possible = set("0-79");
    f.cpu.present = set("0-63");
    f.cpu.online = set("0-63");
    f.cpu.registered = set("0-63");
    let out = rules::cpu_online(&f, &Params::default());
    assert_eq!(verdicts(&out), vec![Verdict::Info]);
    assert!(out[0]
        .summary
        .starts_with("16 possible CPUs not present (64-79)"));
}

#[test]
fn cpu_online_offline_present_fail() {
    // s390x z196 capture: present 0-19, online 1-5,8-19
    let mut f = Facts::default();
    f.cpu.possible = set("0-63");
    f.cpu.present = set("0-19");
    f.cpu.online = set("1-5,8-19");
    let out = rules::cpu_online(&f, &Params::default());
    assert_eq!(out[0].verdict, Verdict::Fail);
    assert_eq!(
        out[0].summary,
        "17 of 20 present CPUs online; offline: 0,6-7"
    );
    let f = Facts::default();
    let out = rules::cpu_online(&f, &Params::default());
    assert_eq!(verdicts(&out), vec![Verdict::NotEvaluated]);
    assert_eq!(out[0].summary, "not evaluated: online CPUs not given");
}

#[test]
fn cpu_allowed_narrower_warns() {
    let mut f = Facts::default();
    f.cpu.online = set("0-49");
    f.cpu.allowed = set("2-49");
    let out = rules::cpu_allowed(&f, &Params::default());
    assert_eq!(out[0].verdict, Verdict::Warn);
    assert!(out[0].summary.contains("48 of 50 online CPUs"));
    f.cpu.allowed = set("0-49");
    assert!(rules::cpu_allowed(&f, &Params::default()).is_empty());
}

#[test]
fn smt_and_governor() {
    let mut f = Facts::default();
    f.cpu.smt_control = Probed::Known("off".into());
    let mut p = params("cpu.smt");
    assert_eq!(rules::cpu_smt(&f, &p)[0].verdict, Verdict::Info);
    p.0.insert(
        "expect".into(),
        hwsurvey_qualify::ParamValue::Str("on".into()),
    );
    let out = rules::cpu_smt(&f, &p);
    assert_eq!(out[0].verdict, Verdict::Warn);
    assert_eq!(out[0].summary, "SMT is off, the rules expect on");

    f.cpu.governors = Probed::Known(vec![
        (0, "performance".into()),
        (1, "powersave".into()),
        (2, "powersave".into()),
    ]);
    let out = rules::cpu_governor(&f, &params("cpu.governor"));
    assert_eq!(out[0].verdict, Verdict::Warn);
    assert_eq!(
        out[0].summary,
        "governor not performance: powersave on 2 CPUs (1-2)"
    );
    f.cpu.governors = Probed::Known(vec![]);
    assert_eq!(
        rules::cpu_governor(&f, &params("cpu.governor"))[0].verdict,
        Verdict::NotEvaluated
    );
}

#[test]
fn isolation_from_thunderx2_cmdline() {
    let Some(shared) = hwsurvey_testkit::shared() else {
        return;
    };
    let text = std::fs::read_to_string(
        shared.join("fixtures/aarch64-cavium-thunderx2-gigabyte-r181-2s/proc-cmdline.txt"),
    )
    .unwrap();
    let mut f = Facts::default();
    f.os.cmdline = Probed::Known(text);
    let out = rules::cpu_isolation(&f, &Params::default());
    assert_eq!(out[0].verdict, Verdict::Info);
    assert!(out[0].summary.contains("isolcpus="), "{}", out[0].summary);
    assert!(out[0].summary.contains("nohz_full="), "{}", out[0].summary);
}

fn dimm(loc: &str, bank: &str, array: &str, gib: Option<u64>) -> DimmFacts {
    DimmFacts {
        locator: loc.into(),
        bank_locator: Some(bank.into()),
        array_handle: Some(array.into()),
        socket: None,
        channel: None,
        populated: gib.is_some(),
        size_bytes: gib.map(|g| g << 30),
        memory_type: Some("DDR4".into()),
        speed_mt_per_s: gib.map(|_| 2133),
        configured_speed_mt_per_s: gib.map(|_| 2133),
        rank: gib.map(|_| 4),
        part_number: gib.map(|_| "M386A4G40DM0-CPB".into()),
    }
}

/// A module whose SMBIOS size is unknown (Size 0xFFFF) occupies its slot: it is neither an
/// empty slot nor a 0-byte module (it once became `Some(0)` here).
#[test]
fn module_of_unknown_size_is_populated_not_zero() {
    let mut f = Facts::default();
    let mut unknown = dimm("D1", "/SYS/MB/P0", "0x1", Some(32));
    unknown.size_bytes = None;
    f.memory.dimms = Probed::Known(vec![
        dimm("D0", "/SYS/MB/P0", "0x1", Some(32)),
        unknown,
        dimm("D0", "/SYS/MB/P1", "0x2", Some(32)),
        dimm("D1", "/SYS/MB/P1", "0x2", Some(32)),
    ]);
    let out = rules::memory_balance(&f, &Params::default());
    let text = format!("{out:?}");
    assert!(text.contains("2 of 2 slots"), "{text}");
    assert!(text.contains("1 module of unknown size"), "{text}");
    assert!(!text.contains("empty D1"), "{text}");
    // the mixed-module rule must not call it a 0-byte module
    let mixed = format!("{:?}", rules::memory_mixed(&f, &Params::default()));
    assert!(!mixed.contains("0 B"), "{mixed}");
}

#[test]
fn balance_uneven_across_sockets() {
    let mut f = Facts::default();
    f.memory.dimms = Probed::Known(vec![
        dimm("D0", "/SYS/MB/P0", "0x1", Some(32)),
        dimm("D1", "/SYS/MB/P0", "0x1", Some(32)),
        dimm("D0", "/SYS/MB/P1", "0x2", Some(32)),
        dimm("D1", "/SYS/MB/P1", "0x2", None),
    ]);
    let out = rules::memory_balance(&f, &Params::default());
    assert_eq!(out[0].verdict, Verdict::Warn);
    assert!(out[0]
        .summary
        .starts_with("DIMMs populated unevenly across sockets"));
    assert!(out[0]
        .evidence
        .iter()
        .any(|e| e.value == "P1: 1 of 2 slots, 32 GiB, empty D1"));
}

#[test]
fn channels_named_in_bank_locator() {
    let mut f = Facts::default();
    f.memory.dimms = Probed::Known(vec![
        dimm("DIMM 0", "P0 CHANNEL A", "0x1", Some(16)),
        dimm("DIMM 0", "P0 CHANNEL B", "0x1", None),
        dimm("DIMM 0", "P1 CHANNEL A", "0x1", Some(16)),
        dimm("DIMM 0", "P1 CHANNEL B", "0x1", Some(16)),
    ]);
    let out = rules::memory_channels(&f, &Params::default());
    assert_eq!(out[0].verdict, Verdict::Warn);
    assert_eq!(out[0].summary, "1 of 4 channels empty: P0 channel B");
}

#[test]
fn mixed_and_speed() {
    let mut f = Facts::default();
    let mut a = dimm("A1", "CPU0", "0x1", Some(16));
    a.speed_mt_per_s = Some(3200);
    a.configured_speed_mt_per_s = Some(2933);
    let b = dimm("A2", "CPU0", "0x1", Some(32));
    f.memory.dimms = Probed::Known(vec![a, b]);
    let out = rules::memory_mixed(&f, &params("memory.mixed"));
    assert_eq!(out[0].verdict, Verdict::Warn);
    assert!(
        out[0].summary.contains("sizes 1 x 16 GiB, 1 x 32 GiB"),
        "{}",
        out[0].summary
    );
    assert!(out[0]
        .summary
        .contains("rated speeds 1 x 2133 MT/s, 1 x 3200 MT/s"));
    let out = rules::memory_speed(&f, &Params::default());
    assert_eq!(
        out[0].summary,
        "configured 2933 MT/s below rated 3200 MT/s on 1 of 2 DIMMs"
    );
}

#[test]
fn triad_share() {
    let mut f = Facts::default();
    f.memory.theoretical_peak_bytes_per_s = Probed::Known(100e9);
    assert_eq!(
        rules::memory_triad_share(&f, &params("memory.triad_share"))[0].summary,
        "not evaluated: result file not given"
    );
    f.result = Probed::Known(ResultFacts {
        path: "r.json".into(),
        triad_peak_bytes_per_s: Some(45e9),
        page_modes: vec![],
        clocksource_changes: vec![],
        watch: None,
    });
    let out = rules::memory_triad_share(&f, &params("memory.triad_share"));
    assert_eq!(out[0].verdict, Verdict::Warn);
    assert_eq!(
        out[0].summary,
        "Triad peak 45.0 GB/s is 45% of the theoretical 100 GB/s (threshold 60%)"
    );
}

#[test]
fn edac_uncorrected_fails() {
    let mut f = Facts::default();
    f.memory.edac = Probed::Known(vec![EdacDimmFacts {
        mc: 0,
        dimm: 2,
        label: None,
        ce_count: Some(0),
        ue_count: Some(1),
    }]);
    let out = rules::memory_edac(&f, &params("memory.edac"));
    assert_eq!(verdicts(&out), vec![Verdict::Fail]);
    f.memory.edac = Probed::Known(vec![]);
    assert_eq!(
        rules::memory_edac(&f, &params("memory.edac"))[0].verdict,
        Verdict::NotEvaluated
    );
}

#[test]
fn numa_memoryless_and_cpuless() {
    let mut f = Facts::default();
    f.numa.nodes = Probed::Known(vec![
        NodeFacts {
            id: 0,
            cpus: set("0-3"),
            mem_total_bytes: Probed::Known(0),
        },
        NodeFacts {
            id: 2,
            cpus: set(""),
            mem_total_bytes: Probed::Known(1 << 30),
        },
    ]);
    let out = rules::numa_nodes(&f, &Params::default());
    let s: Vec<&str> = out.iter().map(|f| f.summary.as_str()).collect();
    assert_eq!(s[0], "NUMA node1 missing (nodes present: 0, 2)");
    assert!(s.contains(&"node2 has no CPUs: its memory is remote to every CPU"));
    assert!(s.contains(&"node0 has no memory: its CPUs reach all memory remotely"));
}

/// Missing node numbers are named as ranges, whatever the highest number: a crafted
/// document's node 4294967295 made the rule list every number below it (100 GB, then an
/// abort); the kernel's own numbering with holes reads as before.
#[test]
fn numa_missing_nodes_are_ranges_in_the_time_of_the_nodes() {
    let node = |id: u32| NodeFacts {
        id,
        cpus: set("0"),
        mem_total_bytes: Probed::Known(1 << 30),
    };
    let mut f = Facts::default();
    f.numa.nodes = Probed::Known(vec![node(0), node(4), node(4_294_967_295)]);
    let start = std::time::Instant::now();
    let out = rules::numa_nodes(&f, &Params::default());
    assert!(start.elapsed().as_secs_f64() < 1.0);
    assert_eq!(
        out[0].summary,
        "NUMA node1-3, node5-4294967294 missing (nodes present: 0, 4, 4294967295)"
    );
    let many: Vec<NodeFacts> = (0..20).map(|k| node(2 * k)).collect();
    f.numa.nodes = Probed::Known(many);
    let out = rules::numa_nodes(&f, &Params::default());
    assert!(
        out[0].summary.starts_with(
            "NUMA node1, node3, node5, node7, node9, node11, node13, node15, 11 more ranges missing"
        ),
        "{}",
        out[0].summary
    );
}

#[test]
fn pages_b10_two_sizes_total() {
    // bugs/B10: 2 x 1 GiB + 1024 x 2 MiB = 4 GiB (numastat said 2048 MB)
    let mut f = Facts::default();
    f.pages.hugetlb = Probed::Known(vec![pool(2 << 20, 1024), pool(1 << 30, 2)]);
    let out = rules::pages_sizes(&f, &Params::default());
    assert_eq!(out[0].verdict, Verdict::Info);
    assert_eq!(
        out[0].summary,
        "2 huge page sizes configured: 1024 x 2 MiB + 2 x 1 GiB = 4 GiB in total"
    );
    assert!(rules::pages_hugetlb(&f, &params("pages.hugetlb")).is_empty());
}

#[test]
fn pages_firecracker_empty_pools_and_thp() {
    // fixtures/x86_64-firecracker-guest-epyc-2vcpu-thp-mthp: madvise, pools 2048kB and 1048576kB empty
    let mut f = Facts::default();
    f.pages.thp_enabled = Probed::Known("madvise".into());
    f.pages.hugetlb = Probed::Known(vec![pool(2 << 20, 0), pool(1 << 30, 0)]);
    assert!(rules::pages_thp(&f, &params("pages.thp")).is_empty());
    let out = rules::pages_hugetlb(&f, &params("pages.hugetlb"));
    assert_eq!(out[0].verdict, Verdict::Warn);
    f.pages.thp_enabled = Probed::Known("never".into());
    assert_eq!(
        rules::pages_thp(&f, &params("pages.thp"))[0].verdict,
        Verdict::Warn
    );
    // a result file that measured base pages only does not need THP
    f.result = Probed::Known(ResultFacts {
        path: "r".into(),
        triad_peak_bytes_per_s: None,
        page_modes: vec!["base".into()],
        clocksource_changes: vec![],
        watch: None,
    });
    assert_eq!(
        rules::pages_thp(&f, &params("pages.thp"))[0].verdict,
        Verdict::Info
    );
}

#[test]
fn pcie_gen2_x8_ceiling() {
    let mut f = Facts::default();
    f.io.pcie = Probed::Known(vec![PcieLinkFacts {
        address: "0000:3b:00.0".into(),
        device: Some("NVMe".into()),
        current_gt_per_s: Some(5.0),
        max_gt_per_s: Some(8.0),
        current_width: Some(8),
        max_width: Some(8),
    }]);
    let out = rules::io_pcie_link(&f, &Params::default());
    assert_eq!(
        out[0].summary,
        "0000:3b:00.0 (NVMe) runs Gen2 x8 = 4.00 GB/s instead of Gen3 x8 = 7.88 GB/s"
    );
}

#[test]
fn engine_reports_unknown_inputs_as_not_evaluated() {
    let mut f = Facts::default();
    f.memory.dimms = Probed::Unknown(Unknown::PermissionDenied {
        path: "/sys/firmware/dmi/tables/DMI".into(),
    });
    let r = qualify("/", &f, &RuleSet::builtin());
    let bal = r
        .findings
        .iter()
        .find(|x| x.rule == "memory.balance")
        .unwrap();
    assert_eq!(bal.verdict, Verdict::NotEvaluated);
    assert_eq!(
        bal.summary,
        "not evaluated: /sys/firmware/dmi/tables/DMI: permission denied"
    );
    // unknown inputs are no pass: the verdict is incomplete (exit 4; --strict: a failure)
    assert_eq!(r.overall(), hwsurvey_qualify::Overall::Incomplete);
    assert_eq!(r.exit_code(false), 4);
    assert_eq!(r.exit_code(true), 2);
}

/// A `mem.latency` point's params as the bench writes them (real `PageMode` serialization).
fn latency_params(mode: hwsurvey_result::PageMode) -> serde_json::Value {
    serde_json::json!({
        "order": {"kind": "full_random"},
        "page_mode": serde_json::to_value(mode).unwrap(),
        "working_set_bytes": 1u64 << 30,
        "lines": (1u64 << 30) / 64,
        "seed": 1,
    })
}

#[test]
fn result_skipped_hugetlb_points_count_as_needed() {
    use hwsurvey_qualify::machine::page_modes_of;
    use hwsurvey_result::PageMode;
    // a run on the Firecracker guest: base and THP measured, every hugetlb point skipped
    // because the 2 MiB and 1 GiB pools hold 0 pages
    let planned = [
        latency_params(PageMode::Base),
        latency_params(PageMode::Thp),
    ];
    let huge = latency_params(PageMode::HugeTlb {
        page_size_bytes: 2 << 20,
    });
    let skipped = [(
        "full_random/hugetlb-2MiB/ws=1GiB",
        &huge,
        "hugetlb pool 2MiB has 0 free pages of 0 total, needs 512",
    )];
    let modes = page_modes_of(planned.iter(), skipped.iter().copied());
    assert_eq!(modes, vec!["base", "hugetlb", "thp"]);
    // a whole mode skipped at planning: id "hugetlb", params null
    let null = serde_json::Value::Null;
    let whole = [(
        "hugetlb",
        &null,
        "no hugetlb page sizes (/sys/kernel/mm/hugepages absent or empty)",
    )];
    assert_eq!(
        page_modes_of(planned[..1].iter(), whole.iter().copied()),
        vec!["base", "hugetlb"]
    );
    // a skip for another reason that names no page mode adds nothing
    let other = [("*", &null, "no --storage-dir given")];
    assert_eq!(
        page_modes_of(planned[..1].iter(), other.iter().copied()),
        vec!["base"]
    );

    // and the verdict: pools empty -> warn, as live qualify says (was: info "measures no hugetlb")
    let mut f = Facts::default();
    f.pages.hugetlb = Probed::Known(vec![pool(2 << 20, 0), pool(1 << 30, 0)]);
    f.result = Probed::Known(ResultFacts {
        path: "r.json".into(),
        triad_peak_bytes_per_s: None,
        page_modes: modes,
        clocksource_changes: vec![],
        watch: None,
    });
    let out = rules::pages_hugetlb(&f, &params("pages.hugetlb"));
    assert_eq!(verdicts(&out), vec![Verdict::Warn]);
    assert_eq!(
        out[0].summary,
        "hugetlb pools are empty: the hugetlb page mode will be skipped"
    );
}

#[test]
fn smt_notsupported_is_not_off() {
    // Firecracker guest: smt/control = notsupported, one thread per core
    let mut f = Facts::default();
    f.cpu.smt_control = Probed::Known("notsupported".into());
    f.cpu.threads_per_core = Probed::Known(1);
    let out = rules::cpu_smt(&f, &params("cpu.smt"));
    assert_eq!(verdicts(&out), vec![Verdict::Info]);
    assert_eq!(
        out[0].summary,
        "SMT not supported by this CPU (or the hypervisor hides it)"
    );
    let mut p = params("cpu.smt");
    p.0.insert(
        "expect".into(),
        hwsurvey_qualify::ParamValue::Str("off".into()),
    );
    assert_eq!(
        verdicts(&rules::cpu_smt(&f, &p)),
        vec![Verdict::Info],
        "no SMT satisfies expect = off, but is said as not supported"
    );
    p.0.insert(
        "expect".into(),
        hwsurvey_qualify::ParamValue::Str("on".into()),
    );
    assert_eq!(verdicts(&rules::cpu_smt(&f, &p)), vec![Verdict::Warn]);
}

#[test]
fn absent_data_is_not_evaluated_never_pass() {
    let pid = Params::default();
    // PCIe: a VM's devices without link files, or none at all
    let mut f = Facts::default();
    f.io.pcie = Probed::Known(vec![]);
    let out = rules::io_pcie_link(&f, &pid);
    assert_eq!(verdicts(&out), vec![Verdict::NotEvaluated]);
    assert!(out[0].summary.contains("no PCI device exposes link speed"));
    f.io.pcie = Probed::Known(vec![PcieLinkFacts {
        address: "0000:00:03.0".into(),
        device: None,
        current_gt_per_s: None,
        max_gt_per_s: None,
        current_width: None,
        max_width: None,
    }]);
    assert_eq!(
        verdicts(&rules::io_pcie_link(&f, &pid)),
        vec![Verdict::NotEvaluated]
    );
    // a link at its maximum passes (empty findings)
    f.io.pcie = Probed::Known(vec![PcieLinkFacts {
        address: "0000:3b:00.0".into(),
        device: None,
        current_gt_per_s: Some(8.0),
        max_gt_per_s: Some(8.0),
        current_width: Some(8),
        max_width: Some(8),
    }]);
    assert!(rules::io_pcie_link(&f, &pid).is_empty());

    // EDAC: DIMMs listed but no readable counter is not "no errors"
    f.memory.edac = Probed::Known(vec![EdacDimmFacts {
        mc: 0,
        dimm: 0,
        label: None,
        ce_count: None,
        ue_count: None,
    }]);
    assert_eq!(
        verdicts(&rules::memory_edac(&f, &params("memory.edac"))),
        vec![Verdict::NotEvaluated]
    );

    // mixed DIMMs: populated slots with nothing to compare are not "all alike"
    let mut d = dimm("DIMM_A1", "P0_Node0_Channel0_Dimm0", "0x0030", None);
    d.populated = true;
    d.speed_mt_per_s = None;
    d.rank = None;
    d.part_number = None;
    f.memory.dimms = Probed::Known(vec![d.clone(), d]);
    assert_eq!(
        verdicts(&rules::memory_mixed(&f, &params("memory.mixed"))),
        vec![Verdict::NotEvaluated]
    );
}

#[test]
fn balance_and_numa_without_data_are_not_evaluated() {
    // SMBIOS lists slots but none holds a module (a VM's empty table): not "populated alike"
    let mut f = Facts::default();
    f.memory.dimms = Probed::Known(vec![
        dimm("DIMM_A1", "P0_Node0_Channel0_Dimm0", "0x0030", None),
        dimm("DIMM_B1", "P0_Node0_Channel1_Dimm0", "0x0030", None),
    ]);
    let out = rules::memory_balance(&f, &Params::default());
    assert_eq!(verdicts(&out), vec![Verdict::NotEvaluated]);
    assert_eq!(
        out[0].summary,
        "not evaluated: none of 2 DIMM slots listed holds a module"
    );
    // NUMA node folders whose cpulist and meminfo are unreadable
    fn unknown<T>() -> Probed<T> {
        Probed::Unknown(Unknown::Other {
            detail: "unreadable".into(),
        })
    }
    f.numa.nodes = Probed::Known(vec![
        NodeFacts {
            id: 0,
            cpus: unknown(),
            mem_total_bytes: unknown(),
        },
        NodeFacts {
            id: 1,
            cpus: unknown(),
            mem_total_bytes: unknown(),
        },
    ]);
    assert_eq!(
        verdicts(&rules::numa_nodes(&f, &Params::default())),
        vec![Verdict::NotEvaluated]
    );
}

/// The seed story's PCIe platform probed from a /sys tree: the switch's x8 uplink carries four
/// x4 drives (2:1), one warning naming the four; the fifth drive's own link is below its
/// maximum, which is io.pcie_link's business, not an upstream cap. A machine whose devices sit
/// on the root bus (this VM) is not evaluated.
#[test]
fn pcie_uplink_shared_by_four_drives_warns_once_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    hwsurvey_testkit::pcie_switch_tree(dir.path());
    let machine = hwsurvey_probe::probe_machine(&hwsurvey_probe::SysRoot::new(dir.path()));
    let f = hwsurvey_qualify::from_machine(&machine);
    let out = rules::io_pcie_uplink(&f, &Params::default());
    assert_eq!(verdicts(&out), vec![Verdict::Warn], "{out:#?}");
    assert_eq!(
        out[0].summary,
        "4 endpoints (0000:03:00.0, 0000:04:00.0, 0000:05:00.0, 0000:06:00.0) share the Gen3 x8 \
         link at 0000:01:00.0 = 7.88 GB/s: 2.00:1 oversubscribed, so together they get at most \
         1.97 GB/s each"
    );
    // the same drives behind a x16 uplink: 15.75 GB/s of 15.75 GB/s, no finding
    let dir = tempfile::tempdir().unwrap();
    hwsurvey_testkit::pcie_switch_tree(dir.path());
    let up = dir
        .path()
        .join("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/current_link_width");
    std::fs::write(&up, "16\n").unwrap();
    std::fs::write(up.with_file_name("max_link_width"), "16\n").unwrap();
    let machine = hwsurvey_probe::probe_machine(&hwsurvey_probe::SysRoot::new(dir.path()));
    let f = hwsurvey_qualify::from_machine(&machine);
    assert!(rules::io_pcie_uplink(&f, &Params::default()).is_empty());
    // no endpoint below a root port
    let mut f = Facts::default();
    f.io.pcie_paths = Some(vec![]);
    let out = rules::io_pcie_uplink(&f, &Params::default());
    assert_eq!(verdicts(&out), vec![Verdict::NotEvaluated]);
    assert!(out[0]
        .summary
        .contains("no endpoint below a PCIe root port"));
}

/// A cgroup CPU quota below the CPUs the process may use warns, naming the quota's file and
/// the CPUs; a quota at or above them, or none, passes silently.
#[test]
fn cpu_quota_below_the_usable_cpus_warns() {
    let mut f = Facts::default();
    f.cpu.online = set("0-3");
    f.cpu.allowed = set("0-3");
    f.cpu.quota = Probed::Known(Some(QuotaFacts {
        cpus: 1.5,
        source: "cgroup v2 cpu.max (/sys/fs/cgroup/job/cpu.max)".into(),
    }));
    let out = rules::cpu_quota(&f, &Params::default());
    assert_eq!(verdicts(&out), vec![Verdict::Warn]);
    assert_eq!(
        out[0].summary,
        "a cgroup CPU quota allows 1.50 CPUs' worth of run time of the 4 this process may use: \
         threads past it are throttled"
    );
    // the usable CPUs are the allowed and online ones: 2 allowed, a quota of 2.5 does not bind
    f.cpu.allowed = set("0-1");
    f.cpu.quota = Probed::Known(Some(QuotaFacts {
        cpus: 2.5,
        source: "cgroup v1 cpu.cfs_quota_us (x)".into(),
    }));
    assert!(rules::cpu_quota(&f, &Params::default()).is_empty());
    f.cpu.quota = Probed::Known(None);
    assert!(rules::cpu_quota(&f, &Params::default()).is_empty());
    f.cpu.quota = Facts::default().cpu.quota;
    assert_eq!(
        verdicts(&rules::cpu_quota(&f, &Params::default())),
        vec![Verdict::NotEvaluated]
    );
}

/// `clock.source` over the clocksources seen here and in the guests: the TSC and the Arm
/// timer pass; the HPET (the 2-vCPU guest after its kernel left the TSC, CI 2026-12-04) warns
/// with the fix back to the TSC; the tick counter warns for its resolution; a name hwsurvey
/// does not know is reported, not passed; a result file whose clocksource changed warns.
#[test]
fn clock_source_by_kind_and_a_change_during_the_run() {
    let run = |current: &str, available: &[&str]| {
        let mut f = Facts::default();
        f.os.clocksource = Probed::Known(ClocksourceFacts {
            current: current.into(),
            available: Probed::Known(available.iter().map(|s| s.to_string()).collect()),
        });
        rules::clock_source(&f, &params("clock.source"))
    };
    assert!(run("tsc", &["tsc", "hpet", "acpi_pm"]).is_empty());
    assert!(run("arch_sys_counter", &["arch_sys_counter"]).is_empty());
    let hpet = run("hpet", &["tsc", "hpet", "acpi_pm"]);
    assert_eq!(verdicts(&hpet), [Verdict::Warn]);
    assert!(hpet[0]
        .summary
        .starts_with("clocksource hpet: every clock read is a device register"));
    assert!(hpet[0].fix.as_deref().unwrap().contains("echo tsc >"));
    let jiffies = run("jiffies", &["jiffies"]);
    assert!(jiffies[0]
        .summary
        .contains("the tick counter: its resolution is 1-10 ms"));
    assert!(jiffies[0]
        .fix
        .as_deref()
        .unwrap()
        .starts_with("no CPU counter"));
    let foo = run("foo", &["foo"]);
    assert_eq!(verdicts(&foo), [Verdict::Info]);
    assert!(foo[0].summary.contains("not one hwsurvey knows"));

    let mut f = Facts::default();
    f.os.clocksource = Probed::Known(ClocksourceFacts {
        current: "tsc".into(),
        available: Probed::Known(vec!["tsc".into(), "hpet".into()]),
    });
    f.result = Probed::Known(ResultFacts {
        path: "r.json".into(),
        triad_peak_bytes_per_s: None,
        page_modes: vec![],
        clocksource_changes: vec![(
            "tsc".into(),
            "hpet".into(),
            "service.point_select critical/pages=base".into(),
        )],
        watch: None,
    });
    let out = rules::clock_source(&f, &params("clock.source"));
    assert_eq!(verdicts(&out), [Verdict::Warn]);
    assert_eq!(
        out[0].summary,
        "the kernel changed the clocksource from tsc to hpet during the run (first read after \
         service.point_select critical/pages=base): figures timed before and after read \
         different clocks"
    );
}

mod binary_and_kernel;
mod watch;
