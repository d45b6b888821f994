//! Result files -> [`Comparison`]: the machine table, then per family the headline metric of
//! every test side by side, with relative columns against the baseline judged by the runs' own
//! noise (`hwsurvey_stats::within_noise`).

use hwsurvey_model::text::{one_line, quote, shorten};
use hwsurvey_model::units::{format_bytes_binary, format_rate_decimal, three_significant};
use hwsurvey_result::outcome::Better;
use hwsurvey_result::{MetricResult, ResultFile};
use serde_json::Value;

use crate::layout::{Cell, Comparison, Row, Table};

/// One result file with its column label.
#[derive(Debug, Clone)]
pub struct Input {
    /// Column label.
    pub label: String,
    /// The loaded file.
    pub file: ResultFile,
}

/// Why results cannot be compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    /// No inputs.
    #[error("no result files to compare")]
    Empty,
    /// Different profiles or profile versions, without --force.
    #[error("results come from different profile versions ({0}); compare them anyway with --mixed-profiles, and every table is flagged")]
    ProfileMismatch(String),
    /// --baseline names no column.
    #[error("--baseline {} is not one of the column labels ({})", quote(.0), shorten(.1, 1000))]
    NoSuchBaseline(String, String),
    /// Two columns with one label.
    #[error("two results have the label {}; give distinct labels with --label", quote(.0))]
    DuplicateLabel(String),
}

/// Longest hostname, CPU model or kernel release in a default label, characters.
const MAX_LABEL_PART_CHARS: usize = 48;

/// The default labels of a result file, shortest first: its hostname, then hostname and arch,
/// then hostname, arch and kernel release (a hostname the file does not know: its CPU model,
/// else `unknown-host`, with the arch). Each part is shown on one line with control
/// characters escaped and at most 48 characters ([`hwsurvey_model::text::one_line`]).
/// [`distinct_labels`] takes the first that no other column shares.
pub fn label_candidates(f: &ResultFile) -> Vec<String> {
    let part = |s: &str| one_line(s, MAX_LABEL_PART_CHARS).into_owned();
    let arch = part(&f.environment.arch);
    let mut out = Vec::new();
    match f.environment.hostname.known() {
        Some(host) => {
            let host = part(host);
            out.push(host.clone());
            out.push(format!("{host} {arch}"));
        }
        None => {
            let id = f.machine.pointer("/cpu/identity");
            let model = id
                .and_then(|i| i.get("model_name").or_else(|| i.get("sparc_type")))
                .and_then(Value::as_str)
                .unwrap_or("unknown-host");
            out.push(format!("{} {arch}", part(model)));
        }
    }
    if let Some(kernel) = f.environment.kernel_release.known() {
        let longest = out.last().cloned().unwrap_or_default();
        out.push(format!("{longest} {}", part(kernel)));
    }
    out
}

/// The default column label of one result file: the first of [`label_candidates`] (its
/// hostname). Several files: [`distinct_labels`].
pub fn default_label(f: &ResultFile) -> String {
    label_candidates(f).swap_remove(0)
}

/// Column labels without duplicates. Each file starts at its first candidate
/// (`candidates[k]`, from [`label_candidates`]: hostname, + arch, + kernel); files sharing a
/// label take their next candidate until none is shared or none is left. Labels still shared
/// then get `" (<names[k].0>)"` with the file name stem, then `" (<names[k].1>)"` with the path
/// as given, then `" (column N)"`. `names[k]` = (file name stem, path) of file k. Returns the
/// labels and, when a file name or column number was needed, a note saying which columns
/// share hostname, arch and kernel and how they are told apart.
pub fn distinct_labels(
    candidates: &[Vec<String>],
    names: &[(String, String)],
) -> (Vec<String>, Option<String>) {
    let shared =
        |labels: &[String], k: usize| labels.iter().filter(|l| **l == labels[k]).count() > 1;
    let mut level = vec![0usize; candidates.len()];
    let mut labels: Vec<String> = candidates
        .iter()
        .map(|c| c.first().cloned().unwrap_or_default())
        .collect();
    loop {
        let dup: Vec<usize> = (0..labels.len()).filter(|&k| shared(&labels, k)).collect();
        let mut advanced = false;
        for &k in &dup {
            if let Some(next) = candidates[k].get(level[k] + 1) {
                level[k] += 1;
                labels[k] = next.clone();
                advanced = true;
            }
        }
        if !advanced {
            break;
        }
    }
    let longest = labels.clone();
    let mut changed: Vec<usize> = Vec::new();
    let steps: [&dyn Fn(usize) -> String; 3] = [
        &|k| {
            let stem = names.get(k).map(|n| n.0.as_str()).unwrap_or("");
            format!("{} ({stem})", longest[k])
        },
        &|k| {
            let path = names.get(k).map(|n| n.1.as_str()).unwrap_or("");
            format!("{} ({path})", longest[k])
        },
        &|k| format!("{} (column {})", longest[k], k + 1),
    ];
    for step in steps {
        let dup: Vec<usize> = (0..labels.len()).filter(|&k| shared(&labels, k)).collect();
        if dup.is_empty() {
            break;
        }
        for &k in &dup {
            labels[k] = step(k);
            if !changed.contains(&k) {
                changed.push(k);
            }
        }
    }
    if changed.is_empty() {
        return (labels, None);
    }
    changed.sort_unstable();
    let cols: Vec<String> = changed
        .iter()
        .map(|&k| format!("\"{}\"", labels[k]))
        .collect();
    let note = format!(
        "columns {} have the same hostname, arch and kernel: told apart by file name; name them with --label",
        cols.join(", ")
    );
    (labels, Some(note))
}

/// [`Input`]s of `files` with their default labels ([`distinct_labels`]; files that share
/// hostname, arch and kernel are told apart by column number).
pub fn inputs_with_default_labels(files: Vec<ResultFile>) -> Vec<Input> {
    let candidates: Vec<Vec<String>> = files.iter().map(label_candidates).collect();
    let (labels, _) = distinct_labels(&candidates, &[]);
    labels
        .into_iter()
        .zip(files)
        .map(|(label, file)| Input { label, file })
        .collect()
}

impl Comparison {
    /// Adds a note that concerns the whole comparison: to [`Comparison::flags`] and under
    /// the machine table (every format shows one or the other).
    pub fn add_note(&mut self, note: String) {
        if let Some(t) = self.tables.iter_mut().find(|t| t.id == "machine") {
            t.notes.push(note.clone());
        }
        // and as the next footnote of the headline, which writes every flag once
        let numbered = self
            .tables
            .iter()
            .filter(|t| {
                t.id == crate::headline::MACHINES_ID || t.id == crate::headline::HEADLINE_ID
            })
            .flat_map(|t| &t.notes)
            .filter(|n| n.starts_with('['))
            .count();
        if let Some(t) = self
            .tables
            .iter_mut()
            .find(|t| t.id == crate::headline::HEADLINE_ID)
        {
            t.notes.push(format!("[{}] {note}", numbered + 1));
        }
        self.flags.push(note);
    }
}

/// Builds the comparison. `baseline` defaults to the first column.
pub fn compare(
    inputs: &[Input],
    baseline: Option<&str>,
    force: bool,
) -> Result<Comparison, CompareError> {
    let first = inputs.first().ok_or(CompareError::Empty)?;
    let labels: Vec<String> = inputs.iter().map(|i| i.label.clone()).collect();
    for (i, l) in labels.iter().enumerate() {
        if labels[..i].contains(l) {
            return Err(CompareError::DuplicateLabel(l.clone()));
        }
    }
    let base = match baseline {
        Some(b) => labels
            .iter()
            .position(|l| l == b)
            .ok_or_else(|| CompareError::NoSuchBaseline(b.into(), labels.join(", ")))?,
        None => 0,
    };
    let versions: Vec<String> = inputs
        .iter()
        .map(|i| {
            format!(
                "{}: {} v{}",
                i.label, i.file.profile.id, i.file.profile.version
            )
        })
        .collect();
    let mut flags = Vec::new();
    if inputs.iter().any(|i| {
        i.file.profile.id != first.file.profile.id
            || i.file.profile.version != first.file.profile.version
    }) {
        if !force {
            return Err(CompareError::ProfileMismatch(versions.join("; ")));
        }
        flags.push(format!(
            "DIFFERENT PROFILE VERSIONS (--mixed-profiles): {}",
            versions.join("; ")
        ));
    }
    for i in inputs {
        if let Some(t) = &i.file.time_limit {
            flags.push(format!(
                "{}: TIME-LIMITED run, not comparable to full runs ({})",
                i.label,
                t.summary()
            ));
        }
        if i.file.status != hwsurvey_result::RunStatus::Complete {
            flags.push(format!(
                "{}: run status {}, not complete",
                i.label, i.file.status
            ));
        }
    }
    let [glance, headline] = crate::headline::top_tables(inputs, base, &flags);
    let mut tables = vec![
        glance,
        headline,
        machine_table(inputs, &flags),
        qualify_table(inputs, &flags),
    ];
    for family in families(inputs) {
        tables.push(family_table(inputs, base, &family, &flags));
        tables.extend(crate::scaling::scaling_tables(inputs, &family, &flags));
        if family == "storage.iops" {
            tables.extend(crate::scaling::storage_ceilings_table(inputs, &flags));
        }
    }
    tables.push(normalised_table(inputs, &tables, &flags));
    let mut c = Comparison {
        platforms: labels.clone(),
        baseline: labels[base].clone(),
        flags,
        tables,
    };
    c.make_printable();
    Ok(c)
}

fn families(inputs: &[Input]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in inputs {
        let names = i
            .file
            .plan
            .families
            .iter()
            .map(|f| f.family.clone())
            .chain(i.file.tests.iter().map(|t| t.point.family.clone()));
        for n in names {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

// ------------------------------------------------------------------ machine table

/// `{"known": v}` -> Ok(v); `{"unknown": {...}}` -> Err(reason).
fn known(v: Option<&Value>) -> Result<&Value, String> {
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
    let words = match v.get("platform").and_then(Value::as_str) {
        Some("no_hypervisor_seen") => "native (no hypervisor seen)",
        Some("virtual_machine") => "virtual machine",
        Some("emulated") => "EMULATED: full-system emulator, figures measure it",
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

fn machine_table(inputs: &[Input], flags: &[String]) -> Table {
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

// ------------------------------------------------------------------ family tables

/// Base unit of a metric name (`bandwidth_bytes_per_s` -> `bytes_per_s`).
pub fn unit_of(name: &str) -> String {
    for u in [
        "bytes_per_s",
        "ns",
        "ops_per_s",
        "iops",
        "per_s",
        "bytes",
        "s",
    ] {
        if name.ends_with(&format!("_{u}")) || name == u {
            return u.to_string();
        }
    }
    name.to_string()
}

/// A number in a base unit for people.
pub fn human(value: f64, unit: &str) -> String {
    match unit {
        "bytes_per_s" => format_rate_decimal(value),
        "ns" => format!("{} ns", three_significant(value)),
        "bytes" => format_bytes_binary(value.max(0.0) as u64),
        "s" => format!("{} s", three_significant(value)),
        u => {
            let (v, p) = hwsurvey_model::units::decimal_prefixed(value);
            format!("{v}{p} {}", u.replace("_per_s", "/s"))
        }
    }
}

fn headline<'a>(file: &'a ResultFile, family: &str, id: &str) -> Result<&'a MetricResult, String> {
    if let Some(t) = file
        .tests
        .iter()
        .find(|t| t.point.family == family && t.point.id == id)
    {
        return match t.outcome {
            hwsurvey_result::Outcome::Measured => t
                .metrics
                .first()
                .ok_or_else(|| "measured, but no metric recorded".into()),
            other => Err(format!(
                "{other}: {}",
                t.reason.as_deref().unwrap_or("no reason given")
            )),
        };
    }
    if let Some(s) = file
        .skipped
        .iter()
        .chain(file.plan.families.iter().flat_map(|f| f.skipped.iter()))
        .find(|s| s.family == family && (s.id == id || s.id == "*"))
    {
        return Err(format!("skipped: {}", s.reason));
    }
    if !file.plan.families.iter().any(|f| f.family == family) {
        return Err("unsupported: family not in this run's plan".into());
    }
    Err("not run: not in this run's plan".into())
}

fn family_table(inputs: &[Input], base: usize, family: &str, flags: &[String]) -> Table {
    let mut ids: Vec<String> = Vec::new();
    for i in inputs {
        let planned = i
            .file
            .plan
            .families
            .iter()
            .filter(|f| f.family == family)
            .flat_map(|f| {
                f.points
                    .iter()
                    .map(|p| p.id.clone())
                    .chain(f.skipped.iter().map(|s| s.id.clone()))
            });
        let tested = i
            .file
            .tests
            .iter()
            .filter(|t| t.point.family == family)
            .map(|t| t.point.id.clone());
        for id in planned.chain(tested) {
            if id != "*" && !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    let mut columns: Vec<String> = inputs.iter().map(|i| i.label.clone()).collect();
    let others: Vec<usize> = (0..inputs.len()).filter(|&k| k != base).collect();
    for &k in &others {
        columns.push(format!("{} vs {}", inputs[k].label, inputs[base].label));
    }
    let mut rows = Vec::new();
    for id in &ids {
        let metrics: Vec<Result<&MetricResult, String>> = inputs
            .iter()
            .map(|i| headline(&i.file, family, id))
            .collect();
        let unit = metrics
            .iter()
            .find_map(|m| m.as_ref().ok().map(|m| unit_of(&m.name)));
        let mut cells: Vec<Cell> = metrics
            .iter()
            .map(|m| match m {
                Err(why) => Cell::missing(why.clone()),
                Ok(m) => match &m.summary {
                    Some(s) => Cell::measured(s, human(s.median, &unit_of(&m.name))),
                    None => Cell::missing(format!(
                        "no statistics: {}",
                        m.summary_error.as_deref().unwrap_or("too few samples")
                    )),
                },
            })
            .collect();
        for &k in &others {
            cells.push(relative(&metrics[k], &metrics[base]));
        }
        rows.push(Row {
            label: id.clone(),
            unit,
            x: None,
            cells,
        });
    }
    if family == "service.point_select" {
        rows.push(critical_ratio_row(inputs, others.len()));
    }
    let mut notes = flags.to_vec();
    notes.push("value = median of the samples (CV = coefficient of variation); a relative figure inside both runs' noise (overlapping 95% bootstrap intervals of the medians, or a difference below the larger CV) is shown as \"within noise\", never as a win or a loss".into());
    Table {
        id: format!("family:{family}"),
        title: family.to_string(),
        row_header: "test".into(),
        columns,
        rows,
        notes,
        plot: None,
    }
}

/// `service.point_select`: the critical rate with THP over that with base pages, per platform
/// (the page-size effect on latency-bounded throughput); a missing cell says which critical
/// point has no rate and why. The "vs" columns are left empty: the ratio is already relative.
fn critical_ratio_row(inputs: &[Input], vs_columns: usize) -> Row {
    use crate::critical::critical_thp_base_ratio;
    let mut cells: Vec<Cell> = inputs
        .iter()
        .map(|i| match critical_thp_base_ratio(&i.file.tests) {
            Ok(r) => Cell {
                text: format!("{:.2}", r.thp_over_base),
                value: Some(r.thp_over_base),
                note: Some(format!(
                    "{} / {}",
                    human(r.thp_ops_per_s, "ops_per_s"),
                    human(r.base_ops_per_s, "ops_per_s")
                )),
                missing: None,
                x: None,
                stats: None,
            },
            Err(_) => Cell::missing(crate::critical::short_reason_without_ratio(&i.file.tests)),
        })
        .collect();
    cells.extend((0..vs_columns).map(|_| Cell::text("")));
    Row {
        label: "critical rate THP/base".into(),
        unit: Some("ratio".into()),
        x: None,
        cells,
    }
}

fn relative(m: &Result<&MetricResult, String>, b: &Result<&MetricResult, String>) -> Cell {
    let (Ok(m), Ok(b)) = (m, b) else {
        return Cell::missing("no pair to compare");
    };
    let (Some(sm), Some(sb)) = (&m.summary, &b.summary) else {
        return Cell::missing("no statistics");
    };
    if sb.median == 0.0 || !sb.median.is_finite() || !sm.median.is_finite() {
        return Cell::missing("baseline is zero");
    }
    let ratio = sm.median / sb.median;
    let text = format!("{:.2}x", ratio);
    if hwsurvey_stats::within_noise(sm, sb) {
        return Cell {
            text,
            value: Some(ratio),
            note: Some("within noise".into()),
            missing: None,
            x: None,
            stats: None,
        };
    }
    let better = match m.better {
        Better::Higher => ratio > 1.0,
        Better::Lower => ratio < 1.0,
    };
    Cell {
        text,
        value: Some(ratio),
        note: Some(format!(
            "{:+.0}% {}",
            (ratio - 1.0) * 100.0,
            if better { "better" } else { "worse" }
        )),
        missing: None,
        x: None,
        stats: None,
    }
}

// ------------------------------------------------------------------ qualification

/// Qualification findings of each result's machine (and its measured figures), rule by rule:
/// the worst verdict and its one-line summary.
fn qualify_table(inputs: &[Input], flags: &[String]) -> Table {
    let rules = hwsurvey_qualify::RuleSet::builtin();
    let rules_ref = hwsurvey_qualify::stored::RulesRef::builtin();
    // the findings `hwsurvey run` stored in the file; recomputed for older files
    let reports: Vec<Result<hwsurvey_qualify::Report, String>> = inputs
        .iter()
        .map(|i| {
            hwsurvey_qualify::stored::findings_of_result(&i.label, &i.file, &rules, &rules_ref)
        })
        .collect();
    let rows = hwsurvey_qualify::RULES
        .iter()
        .map(|def| Row {
            label: def.id.to_string(),
            unit: None,
            x: None,
            cells: reports
                .iter()
                .map(|r| match r {
                    Err(why) => Cell::missing(why.clone()),
                    Ok(r) => {
                        let found: Vec<&hwsurvey_qualify::Finding> =
                            r.findings.iter().filter(|f| f.rule == def.id).collect();
                        match found.iter().max_by_key(|f| f.verdict) {
                            None => Cell::missing("rule disabled"),
                            Some(worst) => Cell {
                                text: worst.verdict.word().to_string(),
                                value: None,
                                note: Some(
                                    found
                                        .iter()
                                        .map(|f| f.summary.trim_start_matches("not evaluated: "))
                                        .collect::<Vec<_>>()
                                        .join("; "),
                                ),
                                missing: None,
                                x: None,
                                stats: None,
                            },
                        }
                    }
                })
                .collect(),
        })
        .collect();
    let mut notes = flags.to_vec();
    notes.push("hwsurvey qualify's built-in rules over each result's machine document and figures; run `hwsurvey qualify RESULT.json` for evidence and fixes".into());
    for (i, r) in inputs.iter().zip(&reports) {
        if let Ok(hwsurvey_qualify::Report {
            origin: Some(origin),
            ..
        }) = r
        {
            notes.push(format!("{}: {origin}", i.label));
        }
    }
    Table {
        id: "qualify".into(),
        title: "Qualification".into(),
        row_header: "rule".into(),
        columns: inputs.iter().map(|i| i.label.clone()).collect(),
        rows,
        notes,
        plot: None,
    }
}

// ------------------------------------------------------------------ normalised views

/// What a normalised view divides by, read from a result file.
type Divisor = fn(&ResultFile) -> Result<f64, String>;

fn cores(f: &ResultFile) -> Result<f64, String> {
    known(f.machine.pointer("/cpu/topology/cores"))?
        .as_f64()
        .filter(|c| *c > 0.0)
        .ok_or_else(|| "core count not known".into())
}

fn ghz(f: &ResultFile) -> Result<f64, String> {
    f.machine
        .pointer("/cpu/kinds")
        .and_then(Value::as_array)
        .and_then(|k| {
            k.iter()
                .filter_map(|k| k.get("max_freq_khz").and_then(Value::as_f64))
                .reduce(f64::max)
        })
        .map(|khz| khz / 1e6)
        .filter(|g| *g > 0.0)
        .ok_or_else(|| "clock not known (no cpufreq cpuinfo_max_freq)".into())
}

fn channels(f: &ResultFile) -> Result<f64, String> {
    let p = known(f.machine.pointer("/memory/population"))?;
    known(p.get("peak_bandwidth"))?
        .get("populated_channels")
        .and_then(Value::as_f64)
        .filter(|c| *c > 0.0)
        .ok_or_else(|| "populated channels not known".into())
}

/// Best headline value per family and platform, divided by cores, by GHz of the fastest core
/// kind, and by populated memory channels (bandwidth only).
fn normalised_table(inputs: &[Input], tables: &[Table], flags: &[String]) -> Table {
    let mut rows = Vec::new();
    for t in tables.iter().filter(|t| t.id.starts_with("family:")) {
        let family = &t.title;
        // best value per platform over the family's rows of its most common unit
        let Some(unit) = t.rows.iter().find_map(|r| r.unit.clone()) else {
            continue;
        };
        let lower_better = unit == "ns";
        let best: Vec<Option<f64>> = (0..inputs.len())
            .map(|k| {
                t.rows
                    .iter()
                    .filter(|r| r.unit.as_deref() == Some(unit.as_str()))
                    .filter_map(|r| r.cells.get(k).and_then(|c| c.value))
                    .reduce(if lower_better { f64::min } else { f64::max })
            })
            .collect();
        if lower_better {
            continue; // a latency per core or per GHz means nothing
        }
        let views: [(&str, Divisor); 3] = [
            ("per core", cores),
            ("per GHz", ghz),
            ("per populated memory channel", channels),
        ];
        for (name, div) in views {
            if name.ends_with("channel") && !(unit == "bytes_per_s" && family.starts_with("mem.")) {
                continue;
            }
            rows.push(Row {
                label: format!("{family} best {name}"),
                unit: Some(unit.clone()),
                x: None,
                cells: inputs
                    .iter()
                    .zip(&best)
                    .map(|(i, b)| match (b, div(&i.file)) {
                        (None, _) => Cell::missing("no measured value"),
                        (Some(_), Err(why)) => Cell::missing(why),
                        (Some(v), Ok(d)) => Cell {
                            text: human(v / d, &unit),
                            value: Some(v / d),
                            note: None,
                            missing: None,
                            x: None,
                            stats: None,
                        },
                    })
                    .collect(),
            });
        }
    }
    let mut notes = flags.to_vec();
    notes.push("best = highest median of the family's rows; per GHz uses the fastest core kind's cpuinfo_max_freq".into());
    Table {
        id: "normalised".into(),
        title: "Normalised views".into(),
        row_header: "figure".into(),
        columns: inputs.iter().map(|i| i.label.clone()).collect(),
        rows,
        notes,
        plot: None,
    }
}
