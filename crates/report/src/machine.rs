//! The machine table: one row per probed fact (CPU model, topology, caches, NUMA, pages,
//! memory population, governor, the run's energy counters, virtualization, the binary on its
//! kernel, PCIe links below their maximum), read from each result file's machine document; an unknown fact shows the
//! probe's reason.

use hwsurvey_model::units::{format_bytes_binary, format_rate_decimal};
use hwsurvey_result::ResultFile;
use serde_json::Value;

use crate::input::Input;
use crate::layout::{Cell, Row, Table};

/// `{"known": v}` -> Ok(v); `{"unknown": {...}}` -> Err(reason).
pub(crate) fn known(v: Option<&Value>) -> Result<&Value, String> {
    match v {
        None | Some(Value::Null) => Err("not in this result file".into()),
        Some(v) => match (v.get("known"), v.get("unknown")) {
            (Some(k), _) => Ok(k),
            (None, Some(u)) => Err(unknown_text(u)),
            (None, None) => Ok(v),
        },
    }
}

fn unknown_text(u: &Value) -> String {
    // the probe's own words (path and detail) when the reason is one it writes
    if let Ok(known) = serde_json::from_value::<hwsurvey_model::Unknown>(u.clone()) {
        return format!("unknown ({known})");
    }
    let reason = u.get("reason").and_then(Value::as_str).unwrap_or("unknown");
    let detail = u
        .get("path")
        .or_else(|| u.get("detail"))
        .and_then(Value::as_str)
        .unwrap_or("");
    format!(
        "unknown ({reason}{}{detail})",
        if detail.is_empty() { "" } else { ": " }
    )
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
        let id = f.machine.pointer("/cpu/identity");
        id.and_then(|i| i.get("model_name").and_then(Value::as_str))
            .or_else(|| id.and_then(|i| i.get("sparc_type").and_then(Value::as_str)))
            .map(str::to_string)
            .ok_or_else(|| "not in this result file".into())
    }),
    ("architecture", |f| Ok(f.environment.arch.clone())),
    ("packages / cores / threads", |f| {
        let t = f.machine.pointer("/cpu/topology");
        let counts: Vec<Result<String, String>> = ["packages", "cores", "threads"]
            .iter()
            .map(|k| known(t.and_then(|t| t.get(*k))).map(|v| v.to_string()))
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
        let kinds = f
            .machine
            .pointer("/cpu/kinds")
            .and_then(Value::as_array)
            .ok_or("not in this result file")?;
        if kinds.is_empty() {
            return Err("unknown (no core kinds probed)".into());
        }
        Ok(kinds
            .iter()
            .map(|k| {
                format!(
                    "{} x {}",
                    k.get("cores")
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| "?".into()),
                    k.get("name").and_then(Value::as_str).unwrap_or("?")
                )
            })
            .collect::<Vec<_>>()
            .join(", "))
    }),
    ("caches", |f| {
        let caches = f
            .machine
            .pointer("/cpu/caches")
            .and_then(Value::as_array)
            .ok_or("not in this result file")?;
        if caches.is_empty() {
            return Err("unknown (no cache sizes probed)".into());
        }
        Ok(caches
            .iter()
            .map(|c| {
                let level = c
                    .get("level")
                    .and_then(Value::as_u64)
                    .map(|l| l.to_string())
                    .unwrap_or_else(|| "?".into());
                let ty = match c.get("cache_type").and_then(Value::as_str) {
                    Some("data") => "d",
                    Some("instruction") => "i",
                    _ => "",
                };
                let size = known(c.get("size_bytes"))
                    .ok()
                    .and_then(Value::as_u64)
                    .map(format_bytes_binary)
                    .unwrap_or_else(|| "?".into());
                let n = c
                    .get("instances")
                    .and_then(Value::as_u64)
                    .map(|n| n.to_string())
                    .unwrap_or_else(|| "?".into());
                format!("L{level}{ty} {size} x {n}")
            })
            .collect::<Vec<_>>()
            .join(", "))
    }),
    ("NUMA nodes (distances)", |f| {
        let nodes = f
            .machine
            .pointer("/numa/nodes")
            .and_then(Value::as_array)
            .ok_or("not in this result file")?;
        if nodes.is_empty() {
            // no node folders read: why, never "0 nodes"
            return Err(match known(f.machine.pointer("/numa/source")) {
                Err(why) => format!("no NUMA nodes read: {why}"),
                Ok(_) => "no NUMA nodes read".into(),
            });
        }
        let ids: Vec<String> = nodes
            .iter()
            .filter_map(|n| n.get("node").map(|v| v.to_string()))
            .collect();
        let distances = known(f.machine.pointer("/numa/distances"));
        let dist = distances
            .as_ref()
            .ok()
            .and_then(|d| d.get("matrix"))
            .and_then(Value::as_array)
            .map(|rows| {
                rows.iter()
                    .map(|r| {
                        r.as_array()
                            .map(|c| {
                                c.iter()
                                    .map(|x| x.to_string())
                                    .collect::<Vec<_>>()
                                    .join(" ")
                            })
                            .unwrap_or_default()
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            });
        let dist = match (dist, &distances) {
            (Some(d), _) => format!(" [{d}]"),
            (None, Err(why)) => format!(" [distances {why}]"),
            (None, Ok(_)) => " [distances not in this result file]".into(),
        };
        Ok(format!("{} ({}){dist}", ids.len(), ids.join(", ")))
    }),
    ("page sizes (base, huge)", |f| {
        let base = known(f.machine.pointer("/pages/base_page_size_bytes"))?
            .as_u64()
            .map(format_bytes_binary)
            .ok_or("not a number")?;
        let huge = match f
            .machine
            .pointer("/pages/hugetlb")
            .and_then(Value::as_array)
        {
            None => "huge page sizes not in this result file".to_string(),
            Some(a) if a.is_empty() => {
                // no pool read: the probe records why in the totals
                match known(f.machine.pointer("/pages/hugetlb_total_bytes")) {
                    Err(why) => format!("huge page sizes {why}"),
                    Ok(_) => "no hugetlb page sizes offered by the kernel".to_string(),
                }
            }
            Some(a) => a
                .iter()
                .map(|p| {
                    p.pointer("/system/page_size_bytes")
                        .and_then(Value::as_u64)
                        .map(format_bytes_binary)
                        .unwrap_or_else(|| "?".into())
                })
                .collect::<Vec<_>>()
                .join(", "),
        };
        Ok(format!("{base}; {huge}"))
    }),
    ("THP", |f| {
        known(f.machine.pointer("/pages/thp/enabled")).and_then(|v| {
            v.get("selected")
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| "not in this result file".into())
        })
    }),
    ("DIMMs populated / slots", |f| {
        let p = known(f.machine.pointer("/memory/population"))?;
        Ok(format!(
            "{} / {}",
            p.get("populated")
                .map(|v| v.to_string())
                .unwrap_or_else(|| "?".into()),
            p.get("slots_listed")
                .map(|v| v.to_string())
                .unwrap_or_else(|| "?".into())
        ))
    }),
    ("theoretical memory peak", |f| {
        let p = known(f.machine.pointer("/memory/population"))?;
        let b = known(p.get("peak_bandwidth"))?;
        b.get("bandwidth_bytes_per_s")
            .and_then(Value::as_f64)
            .map(format_rate_decimal)
            .ok_or_else(|| "not in this result file".into())
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
/// CPUID 0x40000000, DMI strings, /sys/hypervisor, device tree, /proc/sysinfo). Figures of an
/// emulated machine measure the emulator: the cell says so in capitals, as the binary row does.
fn platform(f: &ResultFile) -> Result<String, String> {
    let v = known(f.machine.pointer("/os/virtualization"))?;
    let words = match hwsurvey_result::provenance::platform_key(v) {
        Some("no_hypervisor_seen") => "native (no hypervisor seen)",
        Some("virtual_machine") => "virtual machine",
        Some("emulated") => "EMULATED: full-system emulator, figures measure it",
        Some("emulation_not_excluded") => {
            "virtual machine, EMULATION NOT EXCLUDED: figures may measure the emulator"
        }
        Some("partition") => "logical partition",
        Some(other) => return Err(format!("platform {other:?} not known to this hwsurvey")),
        None => return Err("not in this result file".into()),
    };
    Ok(match v.get("hypervisor").and_then(Value::as_str) {
        Some(h) => format!("{words} ({h})"),
        None => words.to_string(),
    })
}

/// Whether the measuring binary ran natively on the kernel's machine or under emulation
/// (qemu-user or binfmt): emulated figures measure the emulator, not the hardware. From the
/// probe's `os.binary_vs_kernel` (the binary's ELF header against /proc/sys/kernel/arch).
fn binary_on_kernel(f: &ResultFile) -> Result<String, String> {
    let b = known(f.machine.pointer("/os/binary_vs_kernel"))?;
    let kernel = b
        .get("kernel_machine")
        .and_then(Value::as_str)
        .unwrap_or("?");
    match b.get("native").and_then(Value::as_bool) {
        Some(true) => Ok(format!("native ({kernel} kernel)")),
        Some(false) => Ok(format!(
            "EMULATED: {}",
            b.get("finding")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| format!("on a {kernel} kernel"))
        )),
        None => Err("not in this result file".into()),
    }
}

/// The PCIe row: addresses of links running below their maximum speed or width. "none" only
/// when links were read and judged; without link data (no function has `current_link_speed` /
/// `max_link_speed`: conventional PCI, a VM, an older kernel) or with unreadable speeds and
/// widths it says so, with the probe's reason.
fn pcie_below_max(f: &ResultFile) -> Result<String, String> {
    let devs = known(f.machine.pointer("/io/pci"))?
        .as_array()
        .ok_or("PCI list not readable in this result file")?;
    let links: Vec<(&str, &Value)> = devs
        .iter()
        .filter_map(|d| {
            let link = d.get("link").filter(|l| !l.is_null())?;
            Some((
                d.get("address").and_then(Value::as_str).unwrap_or("?"),
                link,
            ))
        })
        .collect();
    if links.is_empty() {
        return Err(format!(
            "no PCIe link data read ({} PCI function{}, none with current_link_speed or max_link_speed: conventional PCI, a VM or an older kernel)",
            devs.len(),
            if devs.len() == 1 { "" } else { "s" }
        ));
    }
    let flag = |l: &Value, k: &str| l.get(k).and_then(Value::as_bool);
    let slow: Vec<&str> = links
        .iter()
        .filter(|(_, l)| {
            flag(l, "below_max_speed") == Some(true) || flag(l, "below_max_width") == Some(true)
        })
        .map(|(a, _)| *a)
        .collect();
    // not slow, and speed or width not comparable: not judged
    let unjudged: Vec<&Value> = links
        .iter()
        .filter(|(a, l)| {
            !slow.contains(a)
                && (flag(l, "below_max_speed").is_none() || flag(l, "below_max_width").is_none())
        })
        .map(|(_, l)| *l)
        .collect();
    let why = unjudged
        .iter()
        .flat_map(|l| {
            [
                "current_speed",
                "max_speed",
                "current_width_lanes",
                "max_width_lanes",
            ]
            .into_iter()
            .filter_map(|k| known(l.get(k)).err())
        })
        .next()
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
