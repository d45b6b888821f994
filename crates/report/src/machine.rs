//! The machine table: one row per probed fact (CPU model, topology, caches, NUMA, pages,
//! memory population, governor, the run's energy counters, virtualization, the binary on its
//! kernel, PCIe links below their maximum), read from each result file's machine document; an unknown fact shows the
//! probe's reason.

use hwsurvey_machine::virt::Virtualization;
use hwsurvey_model::units::{format_bytes_binary, format_rate_decimal};
use hwsurvey_model::{Probed, Unknown};
use hwsurvey_result::provenance::{platform_words, Wording};
use hwsurvey_result::ResultFile;

use crate::input::Input;
use crate::layout::{Cell, Row, Table};

/// A probed value of the machine, or why not in the words a cell shows: `unknown (REASON)`,
/// the reason in the probe's words ([`hwsurvey_model::Unknown`]'s `Display`).
pub(crate) fn known<T>(p: &Probed<T>) -> Result<&T, String> {
    match p {
        Probed::Known(v) => Ok(v),
        Probed::Unknown(u) => Err(format!("unknown ({u})")),
    }
}

/// The probe's platform of the file's machine (`machine.os.virtualization`), or why not:
/// `Err(None)` for a file written before the probe read it (the field absent from its machine
/// document, which reads as [`hwsurvey_machine::os::virtualization_not_probed`]), else the
/// probe's reason.
pub(crate) fn virtualization(f: &ResultFile) -> Result<&Virtualization, Option<&Unknown>> {
    let virt = &f.machine.os.virtualization;
    match virt {
        Probed::Known(v) => Ok(v),
        Probed::Unknown(_) if *virt == hwsurvey_machine::os::virtualization_not_probed() => {
            Err(None)
        }
        Probed::Unknown(u) => Err(Some(u)),
    }
}

fn cell_of(r: Result<String, String>) -> Cell {
    match r {
        Ok(t) => Cell::text(t),
        Err(why) => Cell::missing(why),
    }
}

type MachineRow = (&'static str, fn(&ResultFile) -> Result<String, String>);

const MACHINE_ROWS: &[MachineRow] = &[
    ("CPU model", |f| {
        let id = &f.machine.cpu.identity;
        id.model_name
            .as_ref()
            .or(id.sparc_type.as_ref())
            .cloned()
            .ok_or_else(|| "not in this result file".into())
    }),
    ("architecture", |f| Ok(f.environment.arch.clone())),
    ("packages / cores / threads", |f| {
        let t = &f.machine.cpu.topology;
        let counts: Vec<Result<String, String>> = [&t.packages, &t.cores, &t.threads]
            .iter()
            .map(|p| known(p).map(|v| v.to_string()))
            .collect();
        // all unknown: say why instead of "? / ? / ?"; some unknown: "?" and why
        if let Some(Err(why)) = counts.iter().find(|c| c.is_err()) {
            if counts.iter().all(|c| c.is_err()) {
                return Err(why.clone());
            }
            let shown: Vec<&str> = counts.iter().map(|c| c.as_deref().unwrap_or("?")).collect();
            return Ok(format!("{} ({why})", shown.join(" / ")));
        }
        Ok(counts
            .iter()
            .map(|c| c.as_deref().unwrap_or("?"))
            .collect::<Vec<_>>()
            .join(" / "))
    }),
    ("core kinds", |f| {
        let kinds = &f.machine.cpu.kinds;
        if kinds.is_empty() {
            return Err("unknown (no core kinds probed)".into());
        }
        Ok(kinds
            .iter()
            .map(|k| format!("{} x {}", k.cores, k.name))
            .collect::<Vec<_>>()
            .join(", "))
    }),
    ("caches", |f| {
        let caches = &f.machine.cpu.caches;
        if caches.is_empty() {
            return Err("unknown (no cache sizes probed)".into());
        }
        Ok(caches
            .iter()
            .map(|c| {
                let size = c
                    .size_bytes
                    .known()
                    .map(|&b| format_bytes_binary(b))
                    .unwrap_or_else(|| "?".into());
                format!(
                    "L{}{} {size} x {}",
                    c.level,
                    c.cache_type.suffix(),
                    c.instances
                )
            })
            .collect::<Vec<_>>()
            .join(", "))
    }),
    ("NUMA nodes (distances)", |f| {
        let numa = &f.machine.numa;
        if numa.nodes.is_empty() {
            // no node folders read: why, never "0 nodes"
            return Err(match known(&numa.source) {
                Err(why) => format!("no NUMA nodes read: {why}"),
                Ok(_) => "no NUMA nodes read".into(),
            });
        }
        let ids: Vec<String> = numa.nodes.iter().map(|n| n.node.to_string()).collect();
        let dist = match known(&numa.distances) {
            Ok(d) => {
                let rows: Vec<String> = d
                    .matrix
                    .iter()
                    .map(|r| {
                        r.iter()
                            .map(|x| x.to_string())
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .collect();
                format!(" [{}]", rows.join("; "))
            }
            Err(why) => format!(" [distances {why}]"),
        };
        Ok(format!("{} ({}){dist}", ids.len(), ids.join(", ")))
    }),
    ("page sizes (base, huge)", |f| {
        let pages = &f.machine.pages;
        let base = format_bytes_binary(*known(&pages.base_page_size_bytes)?);
        let huge = if pages.hugetlb.is_empty() {
            // no pool read: the probe records why in the totals
            match known(&pages.hugetlb_total_bytes) {
                Err(why) => format!("huge page sizes {why}"),
                Ok(_) => "no hugetlb page sizes offered by the kernel".to_string(),
            }
        } else {
            pages
                .hugetlb
                .iter()
                .map(|p| format_bytes_binary(p.system.page_size_bytes))
                .collect::<Vec<_>>()
                .join(", ")
        };
        Ok(format!("{base}; {huge}"))
    }),
    ("THP", |f| {
        known(&f.machine.pages.thp.enabled).map(|c| c.selected.clone())
    }),
    ("DIMMs populated / slots", |f| {
        let p = known(&f.machine.memory.population)?;
        Ok(format!("{} / {}", p.populated, p.slots_listed))
    }),
    ("theoretical memory peak", |f| {
        let p = known(&f.machine.memory.population)?;
        let b = known(&p.peak_bandwidth)?;
        Ok(format_rate_decimal(b.bandwidth_bytes_per_s as f64))
    }),
    ("PCIe links below maximum", pcie_below_max),
    ("kernel", |f| {
        f.environment
            .kernel_release
            .known()
            .cloned()
            .ok_or_else(|| {
                format!(
                    "unknown ({})",
                    f.environment
                        .kernel_release
                        .why_unknown()
                        .map(|u| u.to_string())
                        .unwrap_or_default()
                )
            })
    }),
    ("platform", platform),
    ("governor", |f| {
        f.environment.governor.known().cloned().ok_or_else(|| {
            format!(
                "unknown ({})",
                f.environment
                    .governor
                    .why_unknown()
                    .map(|u| u.to_string())
                    .unwrap_or_default()
            )
        })
    }),
    ("energy counters", crate::energy::counters_words),
    ("binary target", |f| {
        Ok(format!("{} (hwsurvey {})", f.tool.arch, f.tool.version))
    }),
    ("binary on kernel", binary_on_kernel),
    ("profile", |f| {
        Ok(format!("{} v{}", f.profile.id, f.profile.version))
    }),
];

/// Native, virtual machine, full-system emulation or firmware partition, with the hypervisor
/// where the probe could name it. From the probe's `os.virtualization` (hypervisor CPU flag,
/// CPUID 0x40000000, DMI strings, /sys/hypervisor, device tree, /proc/sysinfo), in the words
/// of [`hwsurvey_result::provenance::platform_words`] for a cell. Figures of an emulated
/// machine measure the emulator: the cell says so in capitals, as the binary row does.
fn platform(f: &ResultFile) -> Result<String, String> {
    let v = virtualization(f).map_err(|why| match why {
        None => "not in this result file".to_string(),
        Some(u) => format!("unknown ({u})"),
    })?;
    let words = platform_words(hwsurvey_result::provenance::platform(v), Wording::Cell);
    Ok(match &v.hypervisor {
        Some(h) => format!("{words} ({h})"),
        None => words.to_string(),
    })
}

/// Whether the measuring binary ran natively on the kernel's machine or under emulation
/// (qemu-user or binfmt): emulated figures measure the emulator, not the hardware. From the
/// probe's `os.binary_vs_kernel` (the binary's ELF header against /proc/sys/kernel/arch).
fn binary_on_kernel(f: &ResultFile) -> Result<String, String> {
    let b = known(&f.machine.os.binary_vs_kernel)?;
    let kernel = &b.kernel_machine;
    if b.native {
        return Ok(format!("native ({kernel} kernel)"));
    }
    Ok(format!(
        "EMULATED: {}",
        b.finding
            .clone()
            .unwrap_or_else(|| format!("on a {kernel} kernel"))
    ))
}

/// The PCIe row: addresses of links running below their maximum speed or width. "none" only
/// when links were read and judged; without link data (no function has `current_link_speed` /
/// `max_link_speed`: conventional PCI, a VM, an older kernel) or with unreadable speeds and
/// widths it says so, with the probe's reason.
fn pcie_below_max(f: &ResultFile) -> Result<String, String> {
    let devs = known(&f.machine.io.pci)?;
    let links: Vec<(&str, &hwsurvey_machine::pci::PcieLink)> = devs
        .iter()
        .filter_map(|d| Some((d.address.as_str(), d.link.as_ref()?)))
        .collect();
    if links.is_empty() {
        return Err(format!(
            "no PCIe link data read ({} PCI function{}, none with current_link_speed or max_link_speed: conventional PCI, a VM or an older kernel)",
            devs.len(),
            if devs.len() == 1 { "" } else { "s" }
        ));
    }
    let slow: Vec<&str> = links
        .iter()
        .filter(|(_, l)| l.below_max_speed == Some(true) || l.below_max_width == Some(true))
        .map(|(a, _)| *a)
        .collect();
    // not slow, and speed or width not comparable: not judged
    let unjudged: Vec<&hwsurvey_machine::pci::PcieLink> = links
        .iter()
        .filter(|(a, l)| {
            !slow.contains(a) && (l.below_max_speed.is_none() || l.below_max_width.is_none())
        })
        .map(|(_, l)| *l)
        .collect();
    let why = unjudged
        .iter()
        .flat_map(|l| {
            [
                l.current_speed.why_unknown(),
                l.max_speed.why_unknown(),
                l.current_width_lanes.why_unknown(),
                l.max_width_lanes.why_unknown(),
            ]
        })
        .flatten()
        .next()
        .map(|u| format!("unknown ({u})"))
        .unwrap_or_else(|| "speed or width not known".into());
    let n = links.len();
    if slow.is_empty() && unjudged.len() == n {
        return Err(format!(
            "no PCIe link judged: speed or width unreadable on all {n} link(s), {why}"
        ));
    }
    let mut text = if slow.is_empty() {
        format!("none of {n} link(s)")
    } else {
        slow.join(", ")
    };
    if !unjudged.is_empty() {
        text += &format!("; {} of {n} link(s) not judged, {why}", unjudged.len());
    }
    Ok(text)
}

pub(crate) fn machine_table(inputs: &[Input], flags: &[String]) -> Table {
    Table {
        id: "machine".into(),
        title: "Machines".into(),
        row_header: "property".into(),
        columns: inputs.iter().map(|i| i.label.clone()).collect(),
        rows: MACHINE_ROWS
            .iter()
            .map(|(label, get)| Row {
                label: label.to_string(),
                unit: None,
                x: None,
                cells: inputs.iter().map(|i| cell_of(get(&i.file))).collect(),
            })
            .collect(),
        notes: flags.to_vec(),
        plot: None,
    }
}
