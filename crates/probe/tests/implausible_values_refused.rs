//! Defects the mutation campaign (crates/cli/tests/mutation/) found, each held on the real
//! capture it was found on: a sparc64 per-CPU cache size of 2^64-1 bytes was a fact, a 1 MiB
//! cpufreq governor made the summary 1 MB (and `qualify` 2 MB), and U+FFFE in the SMT control
//! reached the summary raw.

use hwsurvey_model::Probed;
use hwsurvey_probe::{probe_machine, SysRoot};

fn capture(folder: &str) -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    let dir = hwsurvey_testkit::fixtures()?.join(folder);
    let archive = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.to_string_lossy().contains(".tar."))
        .unwrap();
    Some(hwsurvey_testkit::extract(&archive))
}

#[test]
fn sparc64_cache_size_beyond_any_cache_is_refused() {
    let Some((_t, root)) = capture("sparc64-ultrasparc-t1-offline") else {
        return;
    };
    let path = "/sys/devices/system/cpu/cpu0/l1_dcache_size";
    let clean = probe_machine(&SysRoot::new(&root));
    let l1d = |m: &hwsurvey_probe::Machine| {
        m.cpu
            .caches
            .iter()
            .filter(|c| c.level == 1 && c.cache_type == hwsurvey_probe::cpu::CacheType::Data)
            .map(|c| c.size_bytes.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(l1d(&clean), vec![Probed::Known(8192)]);
    hwsurvey_testkit::write(&root, path, "18446744073709551615");
    let m = probe_machine(&SysRoot::new(&root));
    assert!(
        l1d(&m).iter().all(|s| s.known() != Some(&u64::MAX)),
        "{:?}",
        l1d(&m)
    );
    let problems = serde_json::to_string(&m.cpu.problems).unwrap();
    assert!(
        problems.contains(path) && problems.contains("plausible L1 size"),
        "{problems}"
    );
}

#[test]
fn a_megabyte_governor_and_control_characters_are_refused_naming_the_file() {
    let Some((_t, root)) = capture("x86_64-intel-raptorlake-hybrid-pe-cores") else {
        return;
    };
    let governor = "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor";
    let clean = probe_machine(&SysRoot::new(&root));
    let summary_len = hwsurvey_probe::os::summary(&clean.os).len();
    hwsurvey_testkit::write(&root, governor, &"powersave,".repeat(1 << 17));
    hwsurvey_testkit::write(&root, "/sys/devices/system/cpu/smt/control", "on\u{fffe}");
    let m = probe_machine(&SysRoot::new(&root));
    let Probed::Known(policies) = &m.os.cpufreq else {
        panic!("cpufreq unknown: {:?}", m.os.cpufreq)
    };
    let p0 = policies.iter().find(|p| p.name == "policy0").unwrap();
    let why = p0
        .governor
        .why_unknown()
        .expect("the governor is refused")
        .to_string();
    assert!(
        why.contains(governor) && why.contains("(1310720 bytes)"),
        "{why}"
    );
    assert!(why.len() < 400, "{} bytes", why.len());
    let smt = format!("{:?}", m.os.smt);
    assert!(smt.contains("control characters"), "{smt}");
    let summary = hwsurvey_probe::os::summary(&m.os);
    assert!(
        summary.len() < summary_len + 2000,
        "{} bytes",
        summary.len()
    );
    assert!(!summary.contains('\u{fffe}'), "{summary}");
}
