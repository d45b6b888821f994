//! The checks of a guest's measured run: the storage ladder over its drives, a clocksource
//! switched during a run, the plan's landmarks and every family's figures against what the
//! guest's definition makes true, the memory cap under its cgroup limit.

use super::*;

/// For a guest with drives: an ext2 file system on every NVMe namespace its drives give
/// (`/dev/nvme<k>n1`, made by busybox's mke2fs, mounted through the ext4 module at `/mnt/d<k>`),
/// then a quick storage.iops run with one `--storage-dir` per drive, writing `storage.json`.
/// Returns the two commands.
pub(super) fn storage_run(guest: &Guest) -> Option<[String; 2]> {
    if guest.drives.is_empty() {
        return None;
    }
    let n = guest.drives.len();
    let ks: Vec<String> = (0..n).map(|k| k.to_string()).collect();
    let setup = format!(
        "sh -c for k in {}; do mke2fs -q /dev/nvme${{k}}n1 && mkdir -p /mnt/d$k && \
         mount -t ext2 /dev/nvme${{k}}n1 /mnt/d$k || exit 1; done",
        ks.join(" ")
    );
    let mut run = "hwsurvey run --profile quick --only storage".to_string();
    for k in 0..n {
        run += &format!(" --storage-dir /mnt/d{k}");
    }
    Some([setup, run + " -o storage.json"])
}

/// The guest's storage run (one `--storage-dir` per namespace): every drive alone and the
/// device-count ladder (2, then all 4) measured for 4 KiB random reads; the result marked as full-system emulation (never compared
/// as hardware); and the report's ladder note: the efficiency against N x one device computed
/// from the file's own medians, the knee and the limit.
pub(super) fn check_storage_ladder(r: &GuestRun, index: usize) -> Vec<String> {
    let out = &r.outputs[index];
    if out.status != 0 {
        return vec![exited(out)];
    }
    let file = match hwsurvey_result::load(&r.files_dir.join("storage.json")) {
        Ok(f) => f,
        Err(e) => return vec![format!("result file of the guest's storage run: {e}")],
    };
    let mut failures = Vec::new();
    let iops = |target: &str| {
        file.tests
            .iter()
            .find(|t| t.point.id == format!("randread_4k/target={target}/threads=1/qd=4"))
            .filter(|t| t.outcome == hwsurvey_result::Outcome::Measured)
            .and_then(|t| t.metrics.iter().find(|m| m.name == "iops"))
            .and_then(|m| m.summary.as_ref())
            .map(|s| s.median)
    };
    for target in ["dir0", "dir1", "dir2", "dir3", "first2", "all"] {
        if iops(target).is_none() {
            failures.push(format!("storage: randread_4k/target={target} not measured"));
        }
    }
    let why = hwsurvey_report::headline::not_comparable(&file);
    if !why.iter().any(|w| w.contains("full-system emulation")) {
        failures.push(format!("storage: not marked as emulated: {why:?}"));
    }
    if let (Some(one), Some(all)) = (iops("dir0"), iops("all")) {
        let input = hwsurvey_report::Input {
            label: "guest".into(),
            file: file.clone(),
        };
        let notes = hwsurvey_report::scaling::ladder_notes(&[input], "randread_4k/threads=1/qd=4");
        let want = format!(
            "guest: 4 devices {} = {:.0} % of 4 x 1 device",
            hwsurvey_report::format::human(all, "IOPS"),
            100.0 * all / (4.0 * one)
        );
        // the four namespaces' links are Gen1 x1 (250 MB/s each) behind one Gen1 x1 uplink: the
        // ceiling of all four together is the uplink's 250 MB/s, not 4 x 250 MB/s
        if !(notes.len() == 1
            && notes[0].starts_with(&want)
            && notes[0].contains("; limit: the ")
            && notes[0].contains(" of 250 MB/s together"))
        {
            failures.push(format!(
                "storage ladder note: expected {want:?}..., got {notes:?}"
            ));
        }
    }
    // each namespace against the Gen1 x1 link of its controller (250 MB/s)
    let input = hwsurvey_report::Input {
        label: "guest".into(),
        file: file.clone(),
    };
    match hwsurvey_report::scaling::storage_ceilings_table(&[input], &[]) {
        None => failures.push("storage: no ceilings table".into()),
        Some(t) => {
            let rows: Vec<(String, Option<String>)> = t
                .rows
                .iter()
                .map(|r| (r.label.clone(), r.cells[0].note.clone()))
                .collect();
            // which controller becomes nvme<k> follows the driver's probe order
            let mut addresses: Vec<&str> = rows
                .iter()
                .filter_map(|(label, _)| label.split_once(" (").map(|(_, a)| a))
                .collect();
            addresses.sort();
            let good = addresses
                == [
                    "0000:03:00.0)",
                    "0000:04:00.0)",
                    "0000:05:00.0)",
                    "0000:06:00.0)",
                ]
                && rows.iter().all(|(label, note)| {
                    label.starts_with("nvme")
                        && note
                            .as_deref()
                            .is_some_and(|n| n.ends_with("of its 250 MB/s link ceiling"))
                });
            if !good {
                failures.push(format!("storage ceilings: {rows:?}"));
            }
        }
    }
    failures
}

/// The clocksource file the kernel's watchdog and `clocksource=` set.
pub(super) const CURRENT_CLOCKSOURCE: &str =
    "/sys/devices/system/clocksource/clocksource0/current_clocksource";

/// The commands of [`Expect::clocksource_switch`]: a measured run whose clocksource is switched
/// to `to` 2 s in (the quick cpu.scaling and service.point_select points take 3-6 s in a
/// 2-vCPU guest), then qualify and the probe's summary on the switched clock.
pub(super) fn clocksource_switch(to: &str) -> [String; 3] {
    [
        format!(
            "sh -c (sleep 2; echo {to} > {CURRENT_CLOCKSOURCE}) & hwsurvey run --profile quick \
             --only cpu.scaling --only service.point_select -o clock.json; s=$?; wait; exit $s"
        ),
        "hwsurvey qualify --format json".to_owned(),
        "hwsurvey probe".to_owned(),
    ]
}

/// Checks the commands of [`clocksource_switch`] (the first at `at`): the run's file records
/// the change to `to` after a point, its load_before the clocksource it started on, its
/// summary says it is not comparable; qualify warns `clock.source` and the probe's summary
/// names `to`.
pub(super) fn check_clocksource_switch(r: &GuestRun, at: usize, to: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let run = &r.outputs[at];
    if run.status != 0 {
        failures.push(format!("clocksource switch run: {}", exited(run)));
        return failures;
    }
    match hwsurvey_result::load(&r.files_dir.join("clock.json")) {
        Err(e) => failures.push(format!("clocksource switch run's file: {e}")),
        Ok(f) => {
            let before = f.load_before.clocksource.known().cloned();
            println!(
                "clocksource switch run: started on {before:?}, changes {:?}",
                f.clocksource_changes
            );
            if before.as_deref() == Some(to) {
                failures.push(format!(
                    "clocksource switch run: the switch to {to} came before the run read its \
                     clocksource (the run started more than 2 s late?)"
                ));
            }
            if !(f.clocksource_changes.len() == 1
                && f.clocksource_changes[0].to == to
                && Some(&f.clocksource_changes[0].from) == before.as_ref())
            {
                failures.push(format!(
                    "clocksource switch run: changes {:?}, want one from {before:?} to {to}",
                    f.clocksource_changes
                ));
            }
            let want = format!(
                "clocksource changed from {} to {to}",
                before.unwrap_or_default()
            );
            if !run.stdout.contains(&want) {
                failures.push(format!(
                    "clocksource switch run: its summary does not say \"{want}\":\n{}",
                    run.stdout
                ));
            }
        }
    }
    let qualify = &r.outputs[at + 1].stdout;
    if !qualify.contains("\"clock.source\"") || !qualify.contains(&format!("clocksource {to}:")) {
        failures.push(format!(
            "qualify after the switch: no clock.source warning naming {to}:\n{qualify}"
        ));
    }
    let probe = &r.outputs[at + 2].stdout;
    if !probe.contains(&format!("clocksource {to} (available: ")) {
        failures.push(format!(
            "probe after the switch: no \"clocksource {to}\" line:\n{probe}"
        ));
    }
    failures
}

/// The measured run of the multi-socket guest: the families whose points sit on the topology
/// landmarks (`cpu.scaling`) and the critical-rate search (`service.point_select`).
pub(super) const MEASURED_RUN: &str =
    "hwsurvey run --profile quick --only cpu.scaling --only service.point_select -o run.json";

/// The measured clock of every guest: cpu.clock alone, quick profile.
pub(super) const CLOCK_RUN: &str =
    "hwsurvey run --profile quick --only cpu.clock -o cpu-clock.json";

/// Checks [`CLOCK_RUN`] (output `index`): it exits 0, and the file holds a measured clock
/// (`clock_hz` > 0, with its method) at 1 thread and at every online CPU. Under TCG the
/// figure is the emulator's pace, not a CPU's clock: printed, never compared with a value.
pub(super) fn check_clock_run(guest: &Guest, r: &GuestRun, index: usize) -> Vec<String> {
    let out = &r.outputs[index];
    if out.status != 0 {
        return vec![format!("cpu.clock run {}", exited(out))];
    }
    let path = r.files_dir.join("cpu-clock.json");
    let file = match hwsurvey_result::load(&path) {
        Ok(f) => f,
        Err(e) => return vec![format!("cpu.clock result file: {e}")],
    };
    let online = CpuSet::parse_list(&guest.expect.online)
        .map(|s| s.len())
        .unwrap_or(0);
    let mut failures = Vec::new();
    for threads in [1, online] {
        let t = file
            .tests
            .iter()
            .find(|t| t.point.family == "cpu.clock" && t.point.cpus.len() == threads);
        let Some(t) = t else {
            failures.push(format!("cpu.clock: no point on {threads} CPU(s)"));
            continue;
        };
        let hz = t
            .metrics
            .iter()
            .find(|m| m.name == "clock_hz")
            .and_then(|m| m.summary.as_ref())
            .map(|s| s.median);
        let method = t.details.get("method").and_then(|v| v.as_str());
        match (hz, method) {
            (Some(hz), Some(method)) if hz.is_finite() && hz > 0.0 => println!(
                "guest {}: cpu.clock on {threads} CPU(s): {:.0} MHz measured ({method}; the \
                 emulator's pace, not a CPU's clock)",
                guest.name,
                hz / 1e6
            ),
            _ => failures.push(format!(
                "cpu.clock {}: no measured clock_hz with its method ({:?})",
                t.point.id, t.outcome
            )),
        }
    }
    failures
}

/// The CPUs of each landmark as the guest's definition gives them (qemu numbers CPUs socket
/// by socket, core by core, thread by thread), for the landmarks the definition fixes:
/// `smt_core` (the threads of core 0), `cores` (thread 0 of every core), `numa_node` (node 0),
/// `package` (socket 0) and `all`. `llc_group` and `cluster` depend on the caches qemu
/// describes: `llc_group` must be planned, its CPUs are not checked here.
pub(super) fn expected_landmarks(guest: &Guest) -> BTreeMap<&'static str, CpuSet> {
    let t = &guest.topology;
    let per_package = t.max_cpus() / t.sockets;
    let mut want = BTreeMap::new();
    if t.threads > 1 {
        want.insert("smt_core", CpuSet::from_iter(0..t.threads));
    }
    want.insert(
        "cores",
        CpuSet::from_iter((0..t.max_cpus()).step_by(t.threads as usize)),
    );
    if let Some(node0) = guest.numa.first() {
        want.insert(
            "numa_node",
            CpuSet::parse_list(&node0.cpus).expect("numa[0].cpus"),
        );
    }
    if t.sockets > 1 {
        want.insert("package", CpuSet::from_iter(0..per_package));
    }
    want.insert(
        "all",
        CpuSet::parse_list(&guest.expect.online).expect("expect.online"),
    );
    want
}

/// Checks the result file of [`MEASURED_RUN`] (command `index`): the plan holds the landmarks
/// the topology defines, with the CPUs it defines; every measured point on a landmark ran
/// pinned, one worker on each of the landmark's CPUs; the critical-rate search, for every page
/// mode, found a rate under the p99 bound or says which criterion failed, with its numbers.
/// Returns the failures.
pub(super) fn check_measured_run(guest: &Guest, r: &GuestRun, index: usize) -> MeasuredCheck {
    let mut failures = Vec::new();
    let mut critical = Vec::new();
    let out = &r.outputs[index];
    if out.status != 0 {
        failures.push(exited(out));
        return MeasuredCheck {
            failures,
            critical,
            clocksource_changed: None,
        };
    }
    let path = r.files_dir.join("run.json");
    let result = match hwsurvey_result::load(&path) {
        Ok(f) => f,
        Err(e) => {
            failures.push(format!("result file of the guest's run: {e}"));
            return MeasuredCheck {
                failures,
                critical,
                clocksource_changed: None,
            };
        }
    };
    let clocksource_changed = result
        .clocksource_changes
        .first()
        .map(|c| format!("{} to {} after {}", c.from, c.to, c.seen_after));
    for c in &result.clocksource_changes {
        println!(
            "guest {}: clocksource changed from {} to {} (first read after {})",
            guest.name, c.from, c.to, c.seen_after
        );
    }
    // the init names the guest (result files and compare's default labels tell guests apart)
    if result.environment.hostname.known() != Some(&guest.name) {
        failures.push(format!(
            "hostname in the result file: {:?}, the init sets {}",
            result.environment.hostname, guest.name
        ));
    }
    let planned: BTreeMap<&str, CpuSet> = result
        .plan
        .landmarks
        .iter()
        .filter(|l| !l.cpus.is_empty())
        .map(|l| (l.name.as_str(), CpuSet::from_iter(l.cpus.iter().copied())))
        .collect();
    println!(
        "guest {}: landmarks {}",
        guest.name,
        result
            .plan
            .landmarks
            .iter()
            .map(|l| format!("{}={}", l.name, l.threads))
            .collect::<Vec<_>>()
            .join(" ")
    );
    for (name, want) in expected_landmarks(guest) {
        match planned.get(name) {
            None => failures.push(format!("landmark {name} missing from the plan")),
            Some(got) if *got != want => failures.push(format!(
                "landmark {name}: planned CPUs {}, the topology gives {}",
                got.to_list_string(),
                want.to_list_string()
            )),
            Some(_) => {}
        }
    }
    // qemu's L3 is one per socket: a landmark of its own where a socket has more than one
    // core (the plan leaves out an LLC group of one core, which the package landmark covers)
    let t = &guest.topology;
    if t.cores * t.clusters.unwrap_or(1) * t.dies.unwrap_or(1) > 1
        && !planned.contains_key("llc_group")
    {
        failures.push("landmark llc_group missing from the plan".to_owned());
    }
    for f in &result.family_times {
        println!(
            "guest {}: {} estimated {:.1} s, actual {:.1} s",
            guest.name, f.family, f.estimated_s, f.actual_s
        );
    }
    let mut pinned_points = 0;
    for t in &result.tests {
        if t.point.landmarks.is_empty() || t.outcome != Outcome::Measured {
            continue;
        }
        let mut cpus = CpuSet::default();
        for pin in &t.pins {
            match pin {
                PinStatus::Pinned { cpu } => {
                    cpus.insert(*cpu);
                }
                PinStatus::Unpinned {
                    intended_cpu,
                    reason,
                } => failures.push(format!(
                    "{} {}: worker for CPU {intended_cpu} ran unpinned: {reason}",
                    t.point.family, t.point.id
                )),
            }
        }
        for name in &t.point.landmarks {
            let Some(want) = planned.get(name.as_str()) else {
                continue; // oversubscribed: workers wrap around `all`
            };
            if cpus != *want || t.pins.len() != want.len() {
                failures.push(format!(
                    "{} {} (landmark {name}): {} workers pinned to {}, the landmark is {}",
                    t.point.family,
                    t.point.id,
                    t.pins.len(),
                    cpus.to_list_string(),
                    want.to_list_string()
                ));
            }
        }
        pinned_points += 1;
    }
    if pinned_points == 0 {
        failures.push("no measured point sits on a landmark".to_owned());
    }
    for t in result
        .tests
        .iter()
        .filter(|t| t.point.family == "service.point_select" && t.point.id.starts_with("critical/"))
    {
        let rate = t
            .metrics
            .iter()
            .find(|m| m.name == "critical_throughput_ops_per_s");
        match (t.outcome, rate) {
            (Outcome::Measured, Some(m)) => println!(
                "guest {}: {} {:.0} ops/s at p99 <= bound",
                guest.name,
                t.point.id,
                m.summary.as_ref().map_or(f64::NAN, |s| s.median)
            ),
            // 16 emulated CPUs on the host's few: a worker is off its CPU for tens of ms, so
            // a 1 ms p99 may be out of reach. Then the reason must name the failing criterion
            // with its numbers ("failed: p99 ... > bound ...", "achieved ... <
            // required ..."), never a bare "budget spent". A guest that is not
            // oversubscribed must find the rate, unless the host took its vCPUs away
            // (`search.stop = "stalled"`, see `Expect::critical_rate_found`).
            (Outcome::Skipped, _)
                if t.reason.as_deref().is_some_and(|r| {
                    r.contains("lowest rate tried:")
                        && r.contains("requested")
                        && r.contains("achieved")
                        && r.contains("; failed: ")
                }) && (!guest.expect.critical_rate_found
                    || t.details.get("search").and_then(|s| s.get("stop"))
                        == Some(&serde_json::Value::from("stalled"))) =>
            {
                println!(
                    "guest {}: {} not found, reason: {}",
                    guest.name,
                    t.point.id,
                    t.reason.as_deref().unwrap_or_default()
                )
            }
            _ => critical.push(format!(
                "service.point_select {}: no critical rate, {} ({}: {})",
                t.point.id,
                if guest.expect.critical_rate_found {
                    "and its search did not stop for a busy host (search.stop = \"stalled\"), \
                     or its reason does not name the failing criterion with its numbers"
                } else {
                    "and no reason naming the failing criterion with its numbers"
                },
                t.outcome,
                t.reason.as_deref().unwrap_or("no reason")
            )),
        }
    }
    if !result
        .tests
        .iter()
        .any(|t| t.point.id.starts_with("critical/"))
    {
        failures.push("service.point_select ran no critical/ point".to_owned());
    }
    MeasuredCheck {
        failures,
        critical,
        clocksource_changed,
    }
}

/// What [`check_measured_run`] found wrong: `critical` holds the critical-rate searches that
/// missed where the guest must find the rate, apart from the rest, since a busy host can be
/// their cause (see [`HOST_BUSY`]).
pub(super) struct MeasuredCheck {
    pub(super) failures: Vec<String>,
    pub(super) critical: Vec<String>,
    /// The first clocksource change the run recorded (`clocksource_changes`), in words: the
    /// guest kernel's watchdog moving from the TSC to the emulated HPET makes every clock read
    /// a trap into qemu (30 k/s served instead of 1.4 M/s), so a critical rate searched across
    /// the change is out of reach for the guest, not for hwsurvey (CI of 2026-12-05).
    pub(super) clocksource_changed: Option<String>,
}

/// Bytes of a figure as `format_bytes_binary` prints it (`159 MiB`, `1.23 GiB`, `512 B`).
pub(super) fn binary_bytes(text: &str) -> Option<f64> {
    let (n, unit) = text.trim().split_once(' ')?;
    let scale = match unit {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(n.parse::<f64>().ok()? * scale)
}

/// The plan's line `... memory cap CAP (from SOURCE: limit LIMIT, USED in use)`: the limit is
/// the cgroup's, what is in use is plausible (under 128 MiB: this run in the guest's otherwise
/// empty cgroup), and the cap is `fraction` x (limit - in use) within the 3 figures printed.
pub(super) fn check_memory_cap(line: &str, fraction: f64, limit: u64) -> Result<(), String> {
    let want_limit = format!(": limit {}, ", format_bytes_binary(limit));
    let bad = |why: &str| {
        Err(format!(
            "{why}; expected {fraction} x (the cgroup limit less what is in use), planned: {line}"
        ))
    };
    let Some((head, tail)) = line.split_once(&want_limit) else {
        return bad(&format!("no \"{}\"", want_limit.trim()));
    };
    let Some(used) = tail.strip_suffix(" in use)").and_then(binary_bytes) else {
        return bad("no \"... in use)\" after the limit");
    };
    let cap = head
        .split_once("memory cap ")
        .and_then(|(_, c)| c.split_once(" (from"))
        .and_then(|(c, _)| binary_bytes(c));
    let Some(cap) = cap else {
        return bad("no \"memory cap N UNIT (from\"");
    };
    if used >= 128.0 * 1024.0 * 1024.0 {
        return bad("over 128 MiB in use");
    }
    let want = fraction * (limit as f64 - used);
    if (cap / want - 1.0).abs() > 0.01 {
        return bad(&format!("cap {cap} B, want {want:.0} B"));
    }
    Ok(())
}
