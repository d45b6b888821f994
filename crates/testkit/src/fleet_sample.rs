//! Fleets built from the example result files of this repository (`reports/examples/v1/`,
//! schema 1), for the fleet tests and benchmark: a copy renamed to another host, its samples
//! scaled (statistics recomputed, so the loader's checks pass), its THP mode or start time
//! changed. Never shipped: a module of the test support crate (it was `hwsurvey_testkit::fleet_sample`).

use hwsurvey_model::Probed;
use hwsurvey_result::{Metric, MetricResult, ResultFile};

/// `reports/examples/v1/<name>` of this source tree, loaded. Panics when absent (a test
/// helper: the examples are part of the repository).
pub fn example(name: &str) -> ResultFile {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/examples/v1")
        .join(name);
    hwsurvey_result::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// `file` as run on host `name` (`environment.hostname`).
pub fn with_host(mut file: ResultFile, name: &str) -> ResultFile {
    file.environment.hostname = Probed::Known(name.to_string());
    file
}

/// Every sample of every metric of the tests of `family` (all families: `None`) times
/// `factor`, statistics and peak recomputed from the new samples.
pub fn scale(mut file: ResultFile, family: Option<&str>, factor: f64) -> ResultFile {
    for t in file
        .tests
        .iter_mut()
        .filter(|t| family.is_none_or(|f| t.point.family == f))
    {
        for m in t.metrics.iter_mut() {
            let samples: Vec<f64> = m.samples.iter().map(|v| v * factor).collect();
            *m = MetricResult::from_metric(Metric {
                name: m.name.clone(),
                better: m.better,
                samples,
                report_peak: m.peak.is_some(),
            });
        }
    }
    file
}

/// THP set to `mode` (`never`) in both the run environment and the machine
/// (`machine.pages.thp.enabled`'s selected choice, where the probe read it).
pub fn set_thp(mut file: ResultFile, mode: &str) -> ResultFile {
    file.environment.thp_enabled = Probed::Known(mode.to_string());
    if let Probed::Known(choice) = &mut file.machine.pages.thp.enabled {
        choice.selected = mode.to_string();
    }
    file
}

/// Start time set to `rfc3339`.
pub fn started_at(mut file: ResultFile, rfc3339: &str) -> ResultFile {
    file.started_at = rfc3339.to_string();
    file
}

/// The machine as the probe records it when only the CPUs `online` (a list: `0`, `0-3`) of
/// the present ones are online (`maxcpus=`, CPUs taken offline): `cpu.online`, `offline`,
/// `present_offline`, each logical CPU's `online`, and the topology counts over the online
/// CPUs (cores and threads: one thread per core, as the examples have).
pub fn offline_cpus(mut file: ResultFile, online: &str) -> ResultFile {
    let on = hwsurvey_model::CpuSet::parse_list(online)
        .unwrap_or_else(|e| panic!("offline_cpus: {online:?}: {e}"));
    let cpu = &mut file.machine.cpu;
    let present = cpu
        .present
        .known()
        .cloned()
        .expect("cpu.present known in the example");
    let off = present.difference(&on);
    let n = u32::try_from(on.len()).expect("at most 2^32 CPUs");
    for c in cpu.cpus.iter_mut() {
        c.online = on.contains(c.cpu);
    }
    cpu.online = Probed::Known(on);
    cpu.offline = Probed::Known(off.clone());
    cpu.present_offline = Probed::Known(off);
    let topo = &mut cpu.topology;
    topo.cores = Probed::Known(n);
    topo.threads = Probed::Known(n);
    topo.threads_with_topology = Some(n);
    file
}

/// The machine as the probe records it on a host with `fraction` of the memory (`MemTotal`
/// and `MemAvailable` of /proc/meminfo, `machine.memory.meminfo`, and the run's MemAvailable
/// scaled): a DIMM missing, or half the memory (`mem=` on the kernel command line).
pub fn memory_fraction(mut file: ResultFile, fraction: f64) -> ResultFile {
    let Probed::Known(mi) = &mut file.machine.memory.meminfo else {
        panic!("the example's meminfo is known");
    };
    let scaled = |v: u64| (v as f64 * fraction) as u64;
    mi.mem_total_bytes = scaled(mi.mem_total_bytes);
    mi.mem_available_bytes = mi.mem_available_bytes.map(scaled);
    // the run's MemAvailable too: a file with more available than MemTotal is refused
    if let Some(v) = file.environment.mem_available_bytes.known().copied() {
        file.environment.mem_available_bytes = Probed::Known(scaled(v));
    }
    file
}

/// The file as a run whose every stored qualification finding was evaluated (a server whose
/// DMI, EDAC and PCIe links the probe could read): each `not_evaluated` finding made a pass.
/// The examples ran in virtual machines, where the DIMM, EDAC and PCIe rules cannot be
/// evaluated; only such a file can pass a verdict.
pub fn every_rule_evaluated(mut file: ResultFile) -> ResultFile {
    use hwsurvey_result::qualification::Verdict;
    let stored = file
        .qualification
        .as_mut()
        .expect("the example stores its qualification findings");
    for f in stored.findings.iter_mut() {
        if f.verdict == Verdict::NotEvaluated {
            f.verdict = Verdict::Pass;
            f.summary = format!("{}: evaluated (test fixture)", f.rule);
        }
    }
    file
}

/// `text` (a fleet terminal report) with its wrapped prose joined again: every line break
/// followed by 4 or more spaces (the hanging indent of a wrapped line) becomes one space, so
/// a test can hold a whole sentence whatever the width it was wrapped at. Table lines and the
/// details' 2-space items are kept as they are.
pub fn unwrapped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 && line.starts_with("    ") {
            out.push(' ');
            out.push_str(line.trim_start());
            continue;
        }
        if i > 0 {
            out.push('\n');
        }
        out.push_str(line);
    }
    out
}
