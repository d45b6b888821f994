//! The text `hwsurvey probe` prints for a [`Machine`]: CPUs in the spirit of `lscpu`, NUMA in
//! the spirit of `numactl -H`, pages, then the memory / I/O / OS sections, and last a list of
//! what could not be read and why. Pure functions: machine in, text out. (Not the report's
//! `summary` tables of scaling and A/B views, `hwsurvey_report::summary`.)

use std::collections::BTreeSet;
use std::fmt::Write as _;

use hwsurvey_model::units::format_bytes_binary;
use hwsurvey_model::{CpuSet, Probed, Unknown};

use crate::cpu::{Cpu, NO_CLUSTER_LEVEL};
use crate::numa::Numa;
use crate::pages::{Choice, Pages};
use crate::Machine;

fn set(p: &Probed<CpuSet>) -> String {
    match p {
        Probed::Known(s) if s.is_empty() => "none".to_string(),
        Probed::Known(s) => format!("{} ({})", s.to_list_string(), s.len()),
        Probed::Unknown(u) => format!("unknown ({u})"),
    }
}

/// `1 core`, `2 cores`.
fn plural(n: u32, noun: &str) -> String {
    hwsurvey_model::units::plural(u64::from(n), noun)
}

fn count(p: &Probed<u32>) -> String {
    p.display()
}

fn bytes(p: &Probed<u64>) -> String {
    match p {
        Probed::Known(b) => format_bytes_binary(*b),
        Probed::Unknown(u) => format!("unknown ({u})"),
    }
}

fn choice(p: &Probed<Choice>) -> String {
    match p {
        Probed::Known(c) => c.selected.clone(),
        Probed::Unknown(u) => format!("unknown ({u})"),
    }
}

/// The CPU section.
pub fn cpu_summary(c: &Cpu) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "CPU");
    let _ = writeln!(
        w,
        "  Architecture:        {} ({})",
        c.arch.as_str(),
        c.arch_source
    );
    if let Some(v) = &c.identity.vendor {
        let _ = writeln!(w, "  Vendor:              {v}");
    }
    // lscpu's three lines, under its names
    let _ = writeln!(
        w,
        "  CPU op-mode(s):      {}",
        match &c.op_modes {
            Probed::Known(m) => m.words(),
            Probed::Unknown(u) => format!("unknown ({u})"),
        }
    );
    let _ = writeln!(
        w,
        "  Address sizes:       {}",
        match &c.address_sizes {
            Probed::Known(a) => format!(
                "{} bits physical, {} bits virtual",
                a.physical_bits, a.virtual_bits
            ),
            Probed::Unknown(u) => format!("unknown ({u})"),
        }
    );
    let _ = writeln!(
        w,
        "  Byte Order:          {}",
        match &c.byte_order {
            Probed::Known(b) => b.words().to_string(),
            Probed::Unknown(u) => format!("unknown ({u})"),
        }
    );
    if let Some(m) = &c.identity.model_name {
        let _ = writeln!(w, "  Model name:          {m}");
    }
    if let (Some(f), Some(m)) = (c.identity.family, c.identity.model) {
        let stepping = c
            .identity
            .stepping
            .map(|s| format!(", stepping {s}"))
            .unwrap_or_default();
        let _ = writeln!(w, "  Family/model:        {f}/{m}{stepping}");
    }
    if let Some(t) = &c.identity.sparc_type {
        let _ = writeln!(
            w,
            "  sparc64 type:        {t}; ncpus probed {}, active {} (informational; CPU counts come from sysfs)",
            c.identity.ncpus_probed.map(|n| n.to_string()).unwrap_or_else(|| "?".into()),
            c.identity.ncpus_active.map(|n| n.to_string()).unwrap_or_else(|| "?".into())
        );
    }
    if let Some(m) = &c.identity.machine_model {
        let _ = writeln!(w, "  Machine/platform:    {m}");
    }
    if let Some(words) = crate::isa::decisive_features(c.arch, &c.identity.flags) {
        // one line, aligned with the others: on a terminal the CLI's one wrapping layer
        // (cli/src/fit.rs) fits it
        let _ = writeln!(w, "  ISA:                 {}", words.join(", "));
    }
    let _ = writeln!(w, "  CPUs possible:       {}", set(&c.possible));
    let _ = writeln!(w, "  CPUs present:        {}", set(&c.present));
    let _ = writeln!(w, "  CPUs online:         {}", set(&c.online));
    let _ = writeln!(w, "  CPUs offline:        {}", set(&c.offline));
    let _ = writeln!(w, "  Present but offline: {}", set(&c.present_offline));
    let _ = writeln!(w, "  Allowed (status):    {}", set(&c.allowed.status_cpus));
    let _ = writeln!(
        w,
        "  Allowed (cgroup):    {}{}",
        set(&c.allowed.cgroup_cpus),
        c.allowed
            .cgroup_file
            .as_ref()
            .map(|f| format!(" from {f}"))
            .unwrap_or_default()
    );
    let t = &c.topology;
    let ids = if t.package_ids.is_empty() {
        String::new()
    } else {
        format!(
            " (kernel ids {})",
            t.package_ids
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let _ = writeln!(w, "  Packages:            {}{ids}", count(&t.packages));
    let _ = writeln!(w, "  Dies:                {}", count(&t.dies));
    let clusters = match &t.clusters {
        // a known absence: no level between core and package (the probe's one answer)
        Probed::Unknown(Unknown::Other { detail }) if detail.starts_with(NO_CLUSTER_LEVEL) => {
            format!(
                "none ({})",
                detail[NO_CLUSTER_LEVEL.len()..].trim_start_matches(": ")
            )
        }
        other => count(other),
    };
    let _ = writeln!(w, "  Clusters:            {clusters}");
    let _ = writeln!(w, "  Cores:               {}", count(&t.cores));
    let incomplete = match &t.threads {
        Probed::Known(n) if t.threads_with_topology.is_some_and(|k| k != *n) => {
            format!(
                ", topology known for {}",
                t.threads_with_topology.unwrap_or_default()
            )
        }
        _ => String::new(),
    };
    let _ = writeln!(
        w,
        "  Threads (online):    {}{incomplete}",
        count(&t.threads)
    );
    let tpc: Vec<String> = t
        .cores_by_threads
        .iter()
        .map(|(threads, cores)| {
            format!(
                "{} x {}",
                plural(*cores, "core"),
                plural(*threads, "thread")
            )
        })
        .collect();
    if !tpc.is_empty() {
        let _ = writeln!(w, "  Threads per core:    {}", tpc.join(", "));
    }
    for p in &t.per_package {
        let _ = writeln!(
            w,
            "  Package id {}: {}, {}",
            p.package_id,
            plural(p.cores, "core"),
            plural(p.threads, "thread")
        );
    }
    for n in &t.notes {
        let _ = writeln!(w, "  Note: {n}");
    }
    if !c.kinds.is_empty() {
        let _ = writeln!(
            w,
            "  Core kinds ({}):",
            c.kinds.first().map(|k| k.source.as_str()).unwrap_or("")
        );
        for k in &c.kinds {
            let mut extra = Vec::new();
            if let Some(m) = &k.midr {
                extra.push(format!(
                    "MIDR 0x{:02x}/0x{:03x} {}",
                    m.implementer,
                    m.part,
                    m.revision_string()
                ));
            }
            if let Some(cap) = k.capacity {
                extra.push(format!("capacity {cap}"));
            }
            if let Some(f) = k.max_freq_khz {
                extra.push(format!("max {:.2} GHz", f as f64 / 1e6));
            }
            let _ = writeln!(
                w,
                "    {}: CPUs {}, {} x up to {}{}",
                k.name,
                k.cpus.to_list_string(),
                plural(k.cores, "core"),
                plural(k.threads_per_core, "thread"),
                if extra.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", extra.join(", "))
                }
            );
        }
    }
    let _ = writeln!(w, "  Caches ({}):", c.caches_source.display());
    for cache in &c.caches {
        let mut geo = Vec::new();
        if let Some(l) = cache.line_size_bytes {
            geo.push(format!("line {l} B"));
        }
        if let Some(ways) = cache.ways {
            geo.push(format!("{ways}-way"));
        }
        // An unknown size is said once, not multiplied ("unknown x 8 = unknown").
        let sizes = match (&cache.size_bytes, &cache.total_bytes) {
            (Probed::Known(_), Probed::Known(_)) => format!(
                "{} x {} = {}",
                bytes(&cache.size_bytes),
                cache.instances,
                bytes(&cache.total_bytes)
            ),
            (Probed::Known(_), Probed::Unknown(_)) => {
                format!("{} x {}", bytes(&cache.size_bytes), cache.instances)
            }
            (Probed::Unknown(_), _) => {
                format!(
                    "{}, size {}",
                    plural(cache.instances, "instance"),
                    bytes(&cache.size_bytes)
                )
            }
        };
        let _ = writeln!(
            w,
            "    L{}{}: {}{} (grouped by {})",
            cache.level,
            cache.cache_type.suffix(),
            sizes,
            if geo.is_empty() {
                String::new()
            } else {
                format!(", {}", geo.join(", "))
            },
            cache.grouped_by
        );
    }
    // cpuid is an x86 instruction: on other machines the line says nothing (issue 49)
    let x86 = matches!(c.arch, crate::cpu::Arch::X86_64 | crate::cpu::Arch::X86);
    match &c.cpuid {
        _ if !x86 => {}
        Probed::Known(id) => {
            let _ = writeln!(
                w,
                "  cpuid: {} {}{}",
                id.vendor.as_deref().unwrap_or("?"),
                id.brand.as_deref().unwrap_or(""),
                if id.hybrid { " (hybrid)" } else { "" }
            );
        }
        Probed::Unknown(u) => {
            let _ = writeln!(w, "  cpuid: unknown ({u})");
        }
    }
    match &c.nominal_clock {
        Probed::Known(n) => {
            let _ = writeln!(
                w,
                "  Nominal clock: {:.2} GHz, {} ({})",
                n.hz / 1e9,
                n.kind.name(),
                n.source
            );
        }
        Probed::Unknown(u) => {
            let _ = writeln!(w, "  Nominal clock: unknown ({u})");
        }
    }
    match &c.tlb {
        Probed::Known(tlbs) => {
            for t in tlbs {
                let _ = writeln!(w, "  {}", tlb_line(t));
            }
        }
        Probed::Unknown(u) => {
            let _ = writeln!(w, "  TLB: unknown ({u})");
        }
    }
    s
}

/// `TLB L2 unified 4 KiB/2 MiB: 1536 entries, 6-way, reach 6 MiB / 3 GiB (cpuid leaf 2
/// descriptor 0xc3)`.
pub fn tlb_line(t: &crate::cpu::tlb::Tlb) -> String {
    let sizes: Vec<String> = t
        .page_sizes_bytes
        .iter()
        .map(|p| format_bytes_binary(*p))
        .collect();
    let reach: Vec<String> = t
        .page_sizes_bytes
        .iter()
        .filter_map(|p| t.reach_bytes(*p))
        .map(format_bytes_binary)
        .collect();
    format!(
        "TLB L{} {} {}: {} entries, {}, reach {} ({})",
        t.level,
        t.kind.word(),
        sizes.join("/"),
        t.entries,
        t.associativity,
        reach.join(" / "),
        t.source
    )
}

/// The NUMA section, in the spirit of `numactl -H`.
pub fn numa_summary(n: &Numa) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "NUMA");
    if let Probed::Unknown(u) = &n.source {
        let _ = writeln!(w, "  no NUMA description ({u})");
        return s;
    }
    let ids: Vec<String> = n.nodes.iter().map(|x| x.node.to_string()).collect();
    let _ = writeln!(
        w,
        "  available: {} nodes ({})",
        n.nodes.len(),
        ids.join(",")
    );
    if !n.id_holes.is_empty() {
        let _ = writeln!(w, "  node id holes: {}", n.id_holes.to_list_string());
    }
    for node in &n.nodes {
        let kind = if node.memory_only {
            " (memory only)"
        } else if node.cpu_less {
            " (no CPUs)"
        } else {
            ""
        };
        let _ = writeln!(
            w,
            "  node {} cpus: {}{kind}; size {}, free {}",
            node.node,
            match &node.cpus {
                Probed::Known(c) if c.is_empty() => "none".to_string(),
                p => set(p),
            },
            bytes(&node.memory_total_bytes),
            bytes(&node.memory_free_bytes)
        );
    }
    match &n.distances {
        Probed::Known(d) => {
            let _ = write!(w, "  node distances:\n  node ");
            for id in &d.nodes {
                let _ = write!(w, "{id:>4}");
            }
            let _ = writeln!(w);
            for (id, row) in d.nodes.iter().zip(&d.matrix) {
                let _ = write!(w, "  {id:>3}: ");
                for v in row {
                    let _ = write!(w, "{v:>4}");
                }
                let _ = writeln!(w);
            }
        }
        Probed::Unknown(u) => {
            let _ = writeln!(w, "  node distances: unknown ({u})");
        }
    }
    s
}

/// The pages section.
pub fn pages_summary(p: &Pages) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "Pages");
    let _ = writeln!(
        w,
        "  Base page size:      {} ({})",
        bytes(&p.base_page_size_bytes),
        p.base_page_size_source
    );
    let _ = writeln!(
        w,
        "  Default huge page:   {}",
        bytes(&p.default_hugepage_size_bytes)
    );
    for pool in &p.hugetlb {
        let sys = &pool.system;
        let _ = writeln!(
            w,
            "  hugetlb {}: total {}, free {}, reserved {}, surplus {} pages = {}",
            format_bytes_binary(sys.page_size_bytes),
            sys.total_pages.display(),
            sys.free_pages.display(),
            sys.reserved_pages
                .as_ref()
                .map(|r| r.display())
                .unwrap_or_else(|| "n/a".into()),
            sys.surplus_pages.display(),
            bytes(&sys.total_bytes)
        );
    }
    let _ = writeln!(
        w,
        "  hugetlb total (all sizes): {}",
        bytes(&p.hugetlb_total_bytes)
    );
    for n in &p.hugetlb_per_node {
        let _ = writeln!(
            w,
            "    node {}: {} (free {})",
            n.node,
            bytes(&n.total_bytes),
            bytes(&n.free_bytes)
        );
    }
    let _ = writeln!(
        w,
        "  THP: enabled {}, defrag {}, shmem {}, PMD size {}",
        choice(&p.thp.enabled),
        choice(&p.thp.defrag),
        choice(&p.thp.shmem_enabled),
        bytes(&p.thp.pmd_size_bytes)
    );
    if let Some(d) = p.thp.khugepaged.get("defrag") {
        let _ = writeln!(w, "  khugepaged defrag: {d}");
    }
    if !p.thp.sizes.is_empty() {
        let sizes: Vec<String> = p
            .thp
            .sizes
            .iter()
            .map(|m| {
                format!(
                    "{} {}",
                    format_bytes_binary(m.size_bytes),
                    choice(&m.enabled)
                )
            })
            .collect();
        let _ = writeln!(w, "  mTHP: {}", sizes.join(", "));
    }
    s
}

/// Every reason something is unknown anywhere in the machine document, deduplicated, in
/// document order: what could not be read, and why. Loop devices and RAM disks are left out
/// ([`crate::io::is_pseudo_disk`]: no storage hardware; the Intel 2-socket capture listed 72
/// lines of their missing `size` and `queue/*` files).
pub fn unknowns(m: &Machine) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    let mut m = m.clone();
    if let Probed::Known(block) = &mut m.io.block {
        block.retain(|d| !crate::io::is_pseudo_disk(d));
    }
    if let Ok(v) = serde_json::to_value(&m) {
        collect(&v, &mut out, &mut seen);
    }
    out
}

fn collect(v: &serde_json::Value, out: &mut Vec<String>, seen: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, child) in map {
                if k == "unknown" || k == "problems" {
                    let items: Vec<&serde_json::Value> = match child {
                        serde_json::Value::Array(a) => a.iter().collect(),
                        other => vec![other],
                    };
                    for item in items {
                        if let Ok(u) = serde_json::from_value::<Unknown>(item.clone()) {
                            let text = u.to_string();
                            if seen.insert(text.clone()) {
                                out.push(text);
                            }
                            continue;
                        }
                        collect(item, out, seen);
                    }
                } else {
                    collect(child, out, seen);
                }
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                collect(x, out, seen);
            }
        }
        _ => {}
    }
}

/// The whole summary except the memory / I/O / OS sections, which their modules render.
pub fn topology_summary(m: &Machine) -> String {
    format!(
        "{}\n{}\n{}",
        cpu_summary(&m.cpu),
        numa_summary(&m.numa),
        pages_summary(&m.pages)
    )
}

/// The "could not be read" section.
pub fn unknowns_summary(m: &Machine) -> String {
    let list = unknowns(m);
    let mut s = format!("Could not be read ({})\n", list.len());
    for u in list {
        let _ = writeln!(s, "  - {u}");
    }
    s
}
