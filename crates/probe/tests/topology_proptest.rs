//! Property tests of the topology-side parsers: /proc/cpuinfo in every architecture's format,
//! sysfs one-line values (lists, sizes, choices, distances, node meminfo, hugepage folder
//! names). Generated well-formed input must parse to the generated values; any input must
//! never panic.

use hwsurvey_model::CpuSet;
use hwsurvey_probe::cpu::cpuinfo::{self, Arch};
use hwsurvey_probe::numa::{parse_distance_row, parse_node_meminfo};
use hwsurvey_probe::pages::{parse_choice, parse_hugepages_dir_name};
use hwsurvey_probe::smaps::first_kernel_page_size;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn cpuinfo_never_panics(text in "\\PC{0,400}") {
        let _ = cpuinfo::parse_cpuinfo(&text);
        let _ = cpuinfo::detect_arch(&text);
    }

    #[test]
    fn cpuinfo_lines_never_panic(lines in proptest::collection::vec("[a-zA-Z0-9 #$_]{0,12}\\s*:\\s*[ -~]{0,30}", 0..30)) {
        let text = lines.join("\n");
        let _ = cpuinfo::parse_cpuinfo(&text);
    }

    #[test]
    fn x86_records_parse_back(
        n in 1usize..16, family in 0u32..30, model in 0u32..255, stepping in 0u32..15,
        mhz in 800u32..5000, lm in any::<bool>()
    ) {
        let mut text = String::new();
        for p in 0..n {
            text += &format!(
                "processor\t: {p}\nvendor_id\t: GenuineIntel\ncpu family\t: {family}\nmodel\t\t: {model}\nmodel name\t: Test CPU\nstepping\t: {stepping}\ncpu MHz\t\t: {mhz}.000\nphysical id\t: 0\ncore id\t\t: {p}\nflags\t\t: fpu {}sse2\n\n",
                if lm { "lm " } else { "" }
            );
        }
        let ci = cpuinfo::parse_cpuinfo(&text);
        prop_assert_eq!(ci.arch.map(|a| a.0), Some(if lm { Arch::X86_64 } else { Arch::X86 }));
        prop_assert_eq!(ci.cpus.len(), n);
        prop_assert_eq!((ci.family, ci.model, ci.stepping), (Some(family), Some(model), Some(stepping)));
        prop_assert!(ci.cpus.iter().all(|c| c.mhz == Some(mhz as f64)));
        prop_assert_eq!(ci.cpus.last().and_then(|c| c.core_id), Some(n as u32 - 1));
    }

    #[test]
    fn aarch64_records_parse_back(parts in proptest::collection::vec((0u32..256, 0u32..16, 0u32..4096, 0u32..16), 1..12)) {
        let mut text = String::new();
        for (p, (imp, var, part, rev)) in parts.iter().enumerate() {
            text += &format!(
                "processor\t: {p}\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\nCPU implementer\t: 0x{imp:02x}\nCPU architecture: 8\nCPU variant\t: 0x{var:x}\nCPU part\t: 0x{part:03x}\nCPU revision\t: {rev}\n\n"
            );
        }
        let ci = cpuinfo::parse_cpuinfo(&text);
        prop_assert_eq!(ci.arch.map(|a| a.0), Some(Arch::Aarch64));
        let got: Vec<(u32, u32, u32, u32)> = ci.cpus.iter().filter_map(|c| c.midr).map(|m| (m.implementer, m.variant, m.part, m.revision)).collect();
        prop_assert_eq!(got, parts);
    }

    #[test]
    fn sparc64_counts_parse_back(probed in 1u32..512, active in 1u32..512) {
        let text = format!("cpu\t\t: UltraSparc T2 (Niagara2)\ntype\t\t: sun4v\nncpus probed\t: {probed}\nncpus active\t: {active}\nState:\nCPU0:\t\tonline\n");
        let ci = cpuinfo::parse_cpuinfo(&text);
        prop_assert_eq!(ci.arch.map(|a| a.0), Some(Arch::Sparc64));
        prop_assert_eq!((ci.ncpus_probed, ci.ncpus_active), (Some(probed), Some(active)));
        prop_assert!(ci.cpus.is_empty(), "no processor records on sparc64");
    }

    #[test]
    fn e2k_cache_lines_parse_back(level in 1u8..4, kib in 1u64..65536, line in 16u32..512, ways in 1u32..32, shared in any::<bool>()) {
        let scope = if shared { "Shared" } else { "Private" };
        let text = format!("processor\t: 0\nvendor_id\t: Elbrus-MCST\nmodel name\t: E8C\n\ncache0          : level={level} type=Unified scope={scope} size={kib}K line_size={line} associativity={ways}\n");
        let ci = cpuinfo::parse_cpuinfo(&text);
        prop_assert_eq!(ci.arch.map(|a| a.0), Some(Arch::E2k));
        let c = &ci.e2k_caches[0];
        prop_assert_eq!((c.level, c.size_bytes, c.line_size_bytes, c.ways), (level, Some(kib * 1024), Some(line), Some(ways)));
        prop_assert_eq!(c.scope.as_deref(), Some(scope));
    }

    #[test]
    fn s390_and_ppc_never_panic(n in 0u32..64, machine in "[0-9]{4}") {
        let text = format!("vendor_id       : IBM/S390\n# processors    : {n}\nprocessor {n}: version = 00,  identification = 279F25,  machine = {machine}\n");
        let ci = cpuinfo::parse_cpuinfo(&text);
        prop_assert_eq!(ci.arch.map(|a| a.0), Some(Arch::S390x));
        prop_assert_eq!(ci.machine_model, Some(machine));
        let ppc = format!("processor\t: {n}\ncpu\t\t: POWER9 (raw), altivec supported\nclock\t\t: 2900.000000MHz\n\ntimebase\t: 512000000\nplatform\t: PowerNV\n");
        prop_assert_eq!(cpuinfo::parse_cpuinfo(&ppc).arch.map(|a| a.0), Some(Arch::Ppc64));
    }

    #[test]
    fn cpulist_round_trips(ids in proptest::collection::btree_set(0u32..4096, 0..200)) {
        let set: CpuSet = ids.iter().copied().collect();
        let text = set.to_list_string();
        prop_assert_eq!(CpuSet::parse_list(&text).unwrap(), set.clone());
        prop_assert_eq!(CpuSet::parse_list(&format!(" {text}\n")).unwrap(), set);
    }

    #[test]
    fn sysfs_values_never_panic(text in "\\PC{0,60}") {
        let _ = CpuSet::parse_list(&text);
        let _ = CpuSet::parse_mask(&text);
        let _ = cpuinfo::parse_cache_size_bytes(&text);
        let _ = parse_choice(&text);
        let _ = parse_distance_row(&text);
        let _ = parse_node_meminfo(&text);
        let _ = parse_hugepages_dir_name(&text);
        let _ = first_kernel_page_size(&text);
        let _ = cpuinfo::parse_e2k_cache_line(&text);
    }

    #[test]
    fn sizes_parse_back(n in 0u64..1_000_000, unit in prop::sample::select(vec![("", 1u64), ("K", 1024), ("M", 1 << 20), ("G", 1 << 30)])) {
        prop_assert_eq!(cpuinfo::parse_cache_size_bytes(&format!("{n}{}", unit.0)), Some(n * unit.1));
    }

    #[test]
    fn choices_parse_back(words in proptest::collection::vec("[a-z_]{1,10}", 1..6), pick in 0usize..6) {
        let pick = pick % words.len();
        let text: Vec<String> = words.iter().enumerate().map(|(i, w)| if i == pick { format!("[{w}]") } else { w.clone() }).collect();
        let c = parse_choice(&text.join(" ")).unwrap();
        prop_assert_eq!(&c.selected, &words[pick]);
        prop_assert_eq!(c.choices, words);
    }

    #[test]
    fn distances_and_meminfo_parse_back(row in proptest::collection::vec(10u32..255, 1..16), kib in 0u64..(1u64 << 40)) {
        let text: Vec<String> = row.iter().map(|d| d.to_string()).collect();
        prop_assert_eq!(parse_distance_row(&text.join(" ")), Some(row));
        let m = parse_node_meminfo(&format!("Node 3 MemTotal: {kib:>12} kB\nNode 3 HugePages_Total:   7\n")).unwrap();
        prop_assert_eq!(m.get("MemTotal"), Some(&(kib * 1024)));
        prop_assert_eq!(m.get("HugePages_Total"), Some(&7));
    }

    #[test]
    fn hugepage_dir_names_parse_back(kib in 1u64..(1u64 << 40)) {
        prop_assert_eq!(parse_hugepages_dir_name(&format!("hugepages-{kib}kB")), Some(kib * 1024));
    }
}
