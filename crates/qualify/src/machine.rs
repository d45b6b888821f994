//! Fills [`Facts`] from the probe's [`Machine`] document: the one place that knows the probe's
//! field names. Fields the probe does not provide stay unknown with the reason.

use hwsurvey_machine::memory::{interleave, InterleaveState, Memory};
use hwsurvey_machine::Machine;
use hwsurvey_model::{CpuSet, Probed, Unknown};

use crate::facts::{
    not_given, BinaryFacts, ClocksourceFacts, DimmFacts, EdacDimmFacts, Facts, InterleaveFacts,
    NodeFacts, PcieLinkFacts, QuotaFacts, ResultFacts, TargetFacts,
};

/// The facts the rules need, read from a probed machine.
pub fn from_machine(m: &Machine) -> Facts {
    let mut f = Facts {
        platform: crate::verdict::Platform::of_machine(m),
        ..Facts::default()
    };
    f.cpu.possible = m.cpu.possible.clone();
    f.cpu.present = m.cpu.present.clone();
    f.cpu.online = m.cpu.online.clone();
    f.cpu.registered = if m.cpu.cpus.is_empty() {
        Probed::Unknown(Unknown::Other {
            detail: "no /sys/devices/system/cpu/cpuN folders listed".into(),
        })
    } else {
        Probed::Known(m.cpu.cpus.iter().map(|c| c.cpu).collect::<CpuSet>())
    };
    f.cpu.allowed = m.cpu.allowed.status_cpus.clone();
    f.cpu.quota = match &m.os.cgroup {
        Probed::Known(c) => match &c.cpu_max {
            Probed::Known(q) => Probed::Known(match (q.quota_us, q.period_us) {
                (Some(quota), period) if period > 0 => Some(QuotaFacts {
                    cpus: quota as f64 / period as f64,
                    source: q.source.clone().unwrap_or_else(|| {
                        "the cgroup's cpu.max or cpu.cfs_quota_us (/sys/fs/cgroup)".into()
                    }),
                }),
                _ => None,
            }),
            Probed::Unknown(u) => Probed::Unknown(u.clone()),
        },
        Probed::Unknown(u) => Probed::Unknown(u.clone()),
    };
    let by_threads = &m.cpu.topology.cores_by_threads;
    f.cpu.threads_per_core = match by_threads.keys().collect::<Vec<_>>().as_slice() {
        [one] => Probed::Known(**one),
        [] => not_given("threads per core (no topology folders)"),
        _ => Probed::Unknown(Unknown::Other {
            detail: format!("threads per core differ between cores ({by_threads:?})"),
        }),
    };
    f.numa.possible = m.numa.possible.clone();
    f.numa.nodes = match (&m.numa.source, m.numa.nodes.is_empty()) {
        (Probed::Unknown(why), true) => Probed::Unknown(why.clone()),
        _ => Probed::Known(
            m.numa
                .nodes
                .iter()
                .map(|n| NodeFacts {
                    id: n.node,
                    cpus: n.cpus.clone(),
                    mem_total_bytes: n.memory_total_bytes.clone(),
                })
                .collect(),
        ),
    };
    f.pages.thp_enabled = m.pages.thp.enabled.clone().map(|c| c.selected);
    f.pages.hugetlb = if m.pages.hugetlb.is_empty() {
        match &m.pages.hugetlb_total_bytes {
            Probed::Unknown(why) => Probed::Unknown(why.clone()),
            Probed::Known(_) => Probed::Known(vec![]),
        }
    } else {
        // The probe's reason for the first pool whose page count it could not read, or refused
        // as implausible (more than the machine's memory): the pools are then unknown.
        match m
            .pages
            .hugetlb
            .iter()
            .find_map(|p| p.system.total_pages.why_unknown())
        {
            Some(why) => Probed::Unknown(why.clone()),
            None => Probed::Known(m.pages.hugetlb.iter().map(|p| p.totals()).collect()),
        }
    };
    fill_memory(&mut f, &m.memory);
    fill_os_io(&mut f, m);
    f.target = target_facts(&f.binary, &f.os.kernel_machine);
    f
}

/// The built-in target descriptor (`hwsurvey_elf::target::BUILTIN`, the copies of
/// `targets/*.toml`) of `binary` (by ELF class and `e_machine`); when the binary is unknown,
/// that of the kernel's machine (`uname -m`: x86_64, aarch64, sparc64, e2k), saying so.
/// Unknown, with the reason, when neither names a hwsurvey target. Call it again after
/// replacing [`Facts::binary`] (`--binary FILE`).
pub fn target_facts(
    binary: &Probed<BinaryFacts>,
    kernel_machine: &Probed<String>,
) -> Probed<TargetFacts> {
    use hwsurvey_elf::TargetDescriptor;
    let (found, chosen_by) = match (binary, kernel_machine) {
        (Probed::Known(b), _) => (
            TargetDescriptor::builtin_for_elf(b.class_bits, b.machine),
            format!("ELF{} e_machine {} of {}", b.class_bits, b.machine, b.path),
        ),
        (Probed::Unknown(why), Probed::Known(kmach)) => {
            let native = hwsurvey_elf::MachineInfo::for_kernel(kmach);
            (
                native.and_then(|m| TargetDescriptor::builtin_for_elf(m.bits, m.e_machine)),
                format!("the kernel's machine {kmach} (no binary: {why})"),
            )
        }
        (Probed::Unknown(why), Probed::Unknown(kwhy)) => {
            return Probed::Unknown(Unknown::Other {
                detail: format!("no binary ({why}) and no kernel machine ({kwhy})"),
            })
        }
    };
    match found {
        Some((d, source)) => Probed::Known(TargetFacts {
            name: d.name,
            triple: d.triple,
            descriptor: source.to_string(),
            chosen_by,
            min_kernel: d.min_kernel,
            min_kernel_source: d.min_kernel_source,
        }),
        None => Probed::Unknown(Unknown::Other {
            detail: format!("no hwsurvey target descriptor for {chosen_by}"),
        }),
    }
}

/// Governors, SMT, command line, kernel identity, the running binary, PCIe links.
fn fill_os_io(f: &mut Facts, m: &Machine) {
    let os = &m.os;
    f.cpu.governors = os.cpufreq.clone().map(|policies| {
        let mut out = Vec::new();
        for p in policies {
            if let (Probed::Known(cpus), Probed::Known(g)) = (&p.cpus, &p.governor) {
                out.extend(cpus.iter().map(|c| (c, g.clone())));
            }
        }
        out
    });
    f.cpu.smt_control = os.smt.clone().map(|s| s.control);
    f.os.cmdline = os.cmdline.clone().map(|c| c.raw);
    f.os.kernel_release = os.kernel.release.clone();
    f.os.kernel_machine = os.kernel.machine.clone();
    f.os.clocksource = os.clocksource.clone().map(|c| ClocksourceFacts {
        current: c.current,
        available: c.available,
    });
    f.binary = os.binary.clone().map(|b| BinaryFacts {
        path: "/proc/self/exe".into(),
        class_bits: b.class_bits,
        machine: b.e_machine,
        little_endian: b.endianness.to_ascii_lowercase().starts_with("little"),
    });
    f.io.pcie_paths = m.io.pci.known().is_some().then(|| m.io.pcie_paths.clone());
    f.io.pcie = m.io.pci.clone().map(|devs| {
        devs.iter()
            .filter_map(|d| {
                let l = d.link.as_ref()?;
                Some(PcieLinkFacts {
                    address: d.address.clone(),
                    device: d.class_name.clone(),
                    current_gt_per_s: l
                        .current_speed
                        .known()
                        .map(|s| s.transfer_rate_mt_per_s as f64 / 1000.0),
                    max_gt_per_s: l
                        .max_speed
                        .known()
                        .map(|s| s.transfer_rate_mt_per_s as f64 / 1000.0),
                    current_width: l.current_width_lanes.known().copied(),
                    max_width: l.max_width_lanes.known().copied(),
                })
            })
            .collect()
    });
}

/// Fills the memory facts (DIMMs, EDAC, theoretical peak) from the probe's memory document;
/// also used on its own for captured `dmidecode` text
/// (`hwsurvey_machine::memory::probe_with_dmidecode_text`).
pub fn fill_memory(f: &mut Facts, memory: &Memory) {
    // The probe's own placement of each listed slot (same table order), when it derived one.
    let places = memory
        .population
        .known()
        .map(|p| p.slots.clone())
        .unwrap_or_default();
    f.memory.channel_basis = memory
        .population
        .known()
        .and_then(|p| p.channel_basis.clone());
    f.memory.unlisted_slots = memory
        .population
        .known()
        .and_then(|p| p.unlisted_slots_note.clone());
    f.memory.dimms = memory.smbios.clone().map(|s| {
        let places = (places.len() == s.devices.len()).then_some(places);
        s.devices
            .iter()
            .enumerate()
            .map(|(i, d)| DimmFacts {
                locator: d.locator.clone().unwrap_or_else(|| "?".into()),
                bank_locator: d.bank_locator.clone(),
                array_handle: d.array_handle.map(|h| format!("{h:#06x}")),
                socket: places
                    .as_ref()
                    .and_then(|p| p.get(i))
                    .and_then(|p| p.socket.clone()),
                channel: places
                    .as_ref()
                    .and_then(|p| p.get(i))
                    .map(|p| p.channel.clone()),
                // a module of unknown size still occupies the slot: populated, size None
                populated: d.size.is_populated(),
                size_bytes: d.size.size_bytes(),
                memory_type: d.memory_type.clone(),
                speed_mt_per_s: d.speed_mt_per_s,
                configured_speed_mt_per_s: d.configured_speed_mt_per_s,
                rank: d.rank.map(u32::from),
                part_number: d.part_number.clone(),
            })
            .collect()
    });
    f.memory.edac = memory.edac.clone().map(|e| {
        let mut out = Vec::new();
        for (mc_index, c) in e.controllers.iter().enumerate() {
            let mc = number(&c.name, "mc").unwrap_or(mc_index as u32);
            for (i, d) in c.dimms.iter().enumerate() {
                out.push(EdacDimmFacts {
                    mc,
                    dimm: number(&d.name, "dimm").unwrap_or(i as u32),
                    label: d.label.known().cloned(),
                    ce_count: d.ce_count.known().copied(),
                    ue_count: d.ue_count.known().copied(),
                });
            }
        }
        out
    });
    f.memory.theoretical_peak_bytes_per_s = memory
        .population
        .clone()
        .and_then(|p| p.peak_bandwidth.map(|b| b.bandwidth_bytes_per_s as f64));
    let populated_channels: Vec<(String, u32)> = memory
        .population
        .known()
        .and_then(|p| p.sockets.known())
        .map(|sockets| {
            sockets
                .iter()
                .filter_map(|s| {
                    let channels = s.channels.known()?;
                    let n = channels.iter().filter(|c| c.populated > 0).count() as u32;
                    Some((s.socket.clone(), n))
                })
                .collect()
        })
        .unwrap_or_default();
    f.memory.interleave = memory.interleave.clone().map(|i| {
        let pick = |v: Option<bool>| -> Vec<String> {
            i.devices
                .iter()
                .filter(|d| d.interleaved == v)
                .map(|d| d.locator.clone())
                .collect()
        };
        let mut unknown = pick(None);
        unknown.extend(i.unmapped_devices.iter().cloned());
        InterleaveFacts {
            interleaved: pick(Some(true)),
            not_interleaved: pick(Some(false)),
            unknown,
            ways: match i.state {
                InterleaveState::NotInterleaved => 0,
                InterleaveState::Interleaved { ways } | InterleaveState::Partly { ways } => ways,
            },
            state: interleave::state_words(&i),
            devices: i.devices.iter().map(interleave::device_line).collect(),
            populated_channels,
        }
    });
}

fn number(name: &str, prefix: &str) -> Option<u32> {
    name.strip_prefix(prefix)?.parse().ok()
}

/// `Probed::and_then` for the nested probes above.
trait AndThen<T> {
    fn and_then<U>(self, f: impl FnOnce(T) -> Probed<U>) -> Probed<U>;
}

impl<T> AndThen<T> for Probed<T> {
    fn and_then<U>(self, f: impl FnOnce(T) -> Probed<U>) -> Probed<U> {
        match self {
            Probed::Known(v) => f(v),
            Probed::Unknown(u) => Probed::Unknown(u),
        }
    }
}

/// Figures the rules read from a result file: the highest STREAM Triad median over thread
/// counts (`mem.bandwidth`, points `stream.triad/...`, metric `bandwidth_bytes_per_s`).
pub fn result_facts(path: &str, r: &hwsurvey_result::ResultFile) -> ResultFacts {
    let triad = r
        .tests
        .iter()
        .filter(|t| t.point.family == "mem.bandwidth" && t.point.id.starts_with("stream.triad"))
        .flat_map(|t| t.metrics.iter())
        .filter(|m| m.name == "bandwidth_bytes_per_s")
        .filter_map(|m| m.summary.as_ref().map(|s| s.median))
        .filter(|v| v.is_finite())
        .reduce(f64::max);
    let planned = r.plan.families.iter().flat_map(|f| f.points.iter());
    let ran = r.tests.iter().map(|t| &t.point);
    let skipped = r
        .plan
        .families
        .iter()
        .flat_map(|f| f.skipped.iter())
        .chain(r.skipped.iter())
        .map(|s| (s.id.as_str(), &s.params, s.reason.as_str()));
    let modes = page_modes_of(planned.chain(ran).map(|p| &p.params), skipped);
    ResultFacts {
        path: path.to_string(),
        triad_peak_bytes_per_s: triad,
        page_modes: modes,
        clocksource_changes: r
            .clocksource_changes
            .iter()
            .map(|c| (c.from.clone(), c.to.clone(), c.seen_after.clone()))
            .collect(),
        watch: watch_facts(r),
    }
}

/// The hardware watch of a result file ([`hwsurvey_result::ResultFile::watched_points`]),
/// `None` when the file has none.
pub fn watch_facts(r: &hwsurvey_result::ResultFile) -> Option<crate::facts::WatchFacts> {
    let run = r.watch.clone()?;
    Some(crate::facts::WatchFacts {
        run,
        points: r
            .watched_points()
            .into_iter()
            .map(|p| (p.words(), p.watch.clone()))
            .collect(),
    })
}

/// Page modes (`base`, `thp`, `hugetlb`, sorted, once each) a run needed: those of its
/// planned and measured points' params, and those of the points it skipped (`(id, params,
/// reason)`), because a hugetlb point skipped for empty pools is exactly what `pages.hugetlb`
/// warns about. A whole mode skipped at planning (`mem.latency`: id `hugetlb`, params null,
/// reason "no hugetlb page sizes ...") is named by its id or reason.
pub fn page_modes_of<'a>(
    points: impl Iterator<Item = &'a serde_json::Value>,
    skipped: impl Iterator<Item = (&'a str, &'a serde_json::Value, &'a str)>,
) -> Vec<String> {
    let mut modes: Vec<String> = Vec::new();
    for params in points {
        page_modes_in(params, &mut modes);
    }
    for (id, params, reason) in skipped {
        let before = modes.len();
        page_modes_in(params, &mut modes);
        if modes.len() == before {
            if let Some(m) = mode_word(id).or_else(|| mode_in_reason(reason)) {
                modes.push(m.to_string());
            }
        }
    }
    modes.sort();
    modes.dedup();
    modes
}

/// Page-mode words (`base`, `thp`, `hugetlb`) of every `page_mode` value inside a point's
/// params, at any depth: `mem.latency` writes `{"kind": "huge_tlb", "page_size_bytes": N}`,
/// `service.point_select` writes `"thp"` inside its test variant.
fn page_modes_in(params: &serde_json::Value, out: &mut Vec<String>) {
    match params {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                if k == "page_mode" {
                    let word = match v {
                        serde_json::Value::String(s) => mode_word(s),
                        serde_json::Value::Object(o) => o
                            .get("kind")
                            .or_else(|| o.get("mode"))
                            .and_then(|w| w.as_str())
                            .and_then(mode_word),
                        _ => None,
                    };
                    if let Some(w) = word {
                        out.push(w.to_string());
                        continue;
                    }
                }
                page_modes_in(v, out);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| page_modes_in(v, out)),
        _ => {}
    }
}

/// The rules' page-mode word of a serialized page mode or point label (`huge_tlb`,
/// `hugetlb-2MiB`, `thp`, `base`).
fn mode_word(text: &str) -> Option<&'static str> {
    let t = text.to_ascii_lowercase();
    if t.starts_with("hugetlb") || t.starts_with("huge_tlb") {
        Some("hugetlb")
    } else if t == "thp" {
        Some("thp")
    } else if t == "base" {
        Some("base")
    } else {
        None
    }
}

/// Page mode named by a skip reason of a whole mode ("no hugetlb page sizes ...").
fn mode_in_reason(reason: &str) -> Option<&'static str> {
    let r = reason.to_ascii_lowercase();
    if r.contains("hugetlb") {
        Some("hugetlb")
    } else if r.contains("thp") || r.contains("transparent_hugepage") {
        Some("thp")
    } else {
        None
    }
}
