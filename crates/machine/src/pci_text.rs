//! The PCI part of the probe's text, in the spirit of `lspci`: the root complexes, one line
//! per function (`0000:02:00.0 Ethernet controller: Intel Corporation I350 Gigabit Network
//! Connection [8086:1521], node 0`, names from [`crate::pci_ids`]), the uncore functions of
//! Intel server CPUs as one line ([`is_intel_uncore`]), then the path of each endpoint to its
//! root port. The JSON keeps every function apart.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use hwsurvey_model::units::{format_rate_decimal, plural};
use hwsurvey_model::Probed;

use crate::pci::{LinkSpeed, PciDevice, PcieRole};
use crate::pci_ids::PciIdsSource;
use crate::pcie::{PciePath, RootComplexLanes};

/// Intel's PCI vendor id.
const INTEL: u16 = 0x8086;

/// Whether `d` is a register block of an Intel CPU's uncore that Linux shows as a PCI function:
/// Intel's vendor id, on a root bus (no bridge above it), not a port, base class 0x08 (System
/// peripheral: memory controller channels, QPI/UPI links, caching agents, Ubox, PCU, DMA
/// channels, VT-d) or 0x11 (Signal processing controller: the performance counters). A
/// 2-socket Xeon E5-2680 shows 114 of its 137 functions so (buses 7f and ff hold nothing
/// else); a Skylake-SP several hundred.
pub fn is_intel_uncore(d: &PciDevice) -> bool {
    let base = d.class_code.known().map(|c| (c >> 16) as u8);
    d.vendor_id.known() == Some(&INTEL)
        && d.parent.is_none()
        && d.role.is_none_or(|r| r == PcieRole::Endpoint)
        && matches!(base, Some(0x08 | 0x11))
}

/// `[8086:1521]`, or `[?]` when an id is unknown.
fn ids(d: &PciDevice) -> String {
    match (d.vendor_id.known(), d.device_id.known()) {
        (Some(v), Some(dv)) => format!("[{v:04x}:{dv:04x}]"),
        _ => "[?]".into(),
    }
}

/// The class in words: the database's, else hwsurvey's own table's, else the code.
fn class_words(d: &PciDevice) -> String {
    match (&d.names.class, &d.class_name, d.class_code.known()) {
        (Some(n), _, _) | (None, Some(n), _) => n.clone(),
        (None, None, Some(c)) => format!("class {c:#08x}"),
        (None, None, None) => "class ?".into(),
    }
}

/// `Intel Corporation I350 Gigabit Network Connection` as lspci names it (`Intel Corporation
/// Device 3c99` for a device the database lacks); `None` when the vendor is not named.
fn vendor_device(d: &PciDevice) -> Option<String> {
    let vendor = d.names.vendor.as_deref()?;
    Some(match (&d.names.device, d.device_id.known()) {
        (Some(dev), _) => format!("{vendor} {dev}"),
        (None, Some(id)) => format!("{vendor} Device {id:04x}"),
        (None, None) => vendor.to_string(),
    })
}

/// `, link Gen3 8.0 GT/s x8 (7.88 GB/s/dir) of max ...`, or nothing without link files.
fn link_words(d: &PciDevice) -> String {
    let Some(l) = &d.link else {
        return String::new();
    };
    let sp = |s: &Probed<LinkSpeed>| match s {
        Probed::Known(s) => format!(
            "Gen{} {}.{} GT/s",
            s.generation,
            s.transfer_rate_mt_per_s / 1000,
            s.transfer_rate_mt_per_s % 1000 / 100
        ),
        Probed::Unknown(_) => "?".into(),
    };
    let w = |w: &Probed<u32>| w.known().map(|w| format!("x{w}")).unwrap_or("x?".into());
    let bw = |b: &Probed<u64>| {
        b.known()
            .map(|b| format_rate_decimal(*b as f64))
            .unwrap_or("?".into())
    };
    let flag = if l.below_max_speed == Some(true) || l.below_max_width == Some(true) {
        " (below max)"
    } else {
        ""
    };
    format!(
        ", link {} {} ({}/dir) of max {} {} ({}/dir){flag}",
        sp(&l.current_speed),
        w(&l.current_width_lanes),
        bw(&l.current_bandwidth_bytes_per_s),
        sp(&l.max_speed),
        w(&l.max_width_lanes),
        bw(&l.max_bandwidth_bytes_per_s),
    )
}

/// One function: `0000:00:01.0 root port: Intel Corporation Xeon E5/Core i7 IIO PCI Express
/// Root Port 1a [8086:3c02], node 0`; without names `0000:00:01.0 root port [8086:3c02],
/// node 0`.
pub fn function_line(d: &PciDevice) -> String {
    let what = match d.role {
        Some(r) if r != PcieRole::Endpoint => r.words().to_string(),
        _ => class_words(d),
    };
    let what = match vendor_device(d) {
        Some(names) => format!("{what}: {names}"),
        None => what,
    };
    let node = match &d.numa_node {
        Probed::Known(Some(n)) => format!("node {n}"),
        Probed::Known(None) => "no node".into(),
        Probed::Unknown(_) => "node ?".into(),
    };
    format!("{} {what} {}, {node}{}", d.address, ids(d), link_words(d))
}

/// The words every one of `names` starts with (`Xeon E5/Core i7`), if any.
fn common_words(names: &[&str]) -> Option<String> {
    let first: Vec<&str> = names.first()?.split_whitespace().collect();
    let n = names.iter().skip(1).fold(first.len(), |n, name| {
        name.split_whitespace()
            .zip(&first)
            .take(n)
            .take_while(|(a, b)| a == *b)
            .count()
    });
    (n > 0).then(|| first[..n].join(" "))
}

/// The one line of the uncore functions ([`is_intel_uncore`]): `114 Intel uncore functions
/// (Xeon E5/Core i7 ...) on buses 0000:00, 0000:7f, 0000:80, 0000:ff: 106 System peripheral,
/// 8 Performance counters (each in --json)`.
pub fn uncore_line(group: &[&PciDevice]) -> String {
    let mut buses: Vec<&str> = group
        .iter()
        .filter_map(|d| d.address.rsplit_once(':').map(|(bus, _)| bus))
        .collect();
    buses.dedup();
    let mut classes: BTreeMap<String, usize> = BTreeMap::new();
    for d in group {
        *classes.entry(class_words(d)).or_default() += 1;
    }
    let mut classes: Vec<(String, usize)> = classes.into_iter().collect();
    classes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let names: Vec<&str> = group
        .iter()
        .filter_map(|d| d.names.device.as_deref())
        .collect();
    let family = (names.len() == group.len())
        .then(|| common_words(&names))
        .flatten()
        .map(|w| format!(" ({w} ...)"))
        .unwrap_or_default();
    format!(
        "{} Intel uncore {}{family} on {} {}: {} (each in --json)",
        group.len(),
        if group.len() == 1 {
            "function"
        } else {
            "functions"
        },
        if buses.len() == 1 { "bus" } else { "buses" },
        buses.join(", "),
        classes
            .iter()
            .map(|(c, n)| format!("{n} {c}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// One line for an endpoint's PCIe path: the bridges up to the root port, the narrowest link
/// and the most oversubscribed shared link: `path 0000:03:00.0 > 0000:02:00.0 > 0000:01:00.0 >
/// 0000:00:01.0: ceiling 3.94 GB/s/dir (Gen3 x4 its own link); 0000:01:00.0 Gen3 x8
/// 7.88 GB/s/dir shared by 4 endpoints, 2.00:1 oversubscribed`.
pub fn path_line(p: &PciePath) -> String {
    let mut line = format!("path {} > {}: ", p.endpoint, p.via.join(" > "));
    match &p.narrowest {
        None => line += "ceiling unknown (no link speed and width on the path)",
        Some(n) => {
            let whose = if n.device == p.endpoint {
                "its own link".to_string()
            } else {
                format!("at {}", n.device)
            };
            line += &format!(
                "ceiling {}/dir (Gen{} x{} {whose}{})",
                format_rate_decimal(n.bandwidth_bytes_per_s as f64),
                n.generation,
                n.width_lanes,
                if n.below_max { ", below its max" } else { "" }
            );
        }
    }
    if let Some(sh) = &p.shared {
        line += &format!(
            "; {} Gen{} x{} {}/dir shared by {}",
            sh.link.device,
            sh.link.generation,
            sh.link.width_lanes,
            format_rate_decimal(sh.link.bandwidth_bytes_per_s as f64),
            plural(sh.endpoints.len() as u64, "endpoint")
        );
        match sh.oversubscription {
            Some(o) if o > 1.0 => line += &format!(", {o:.2}:1 oversubscribed"),
            Some(o) => line += &format!(", their maxima {o:.2}:1 of it"),
            None => {}
        }
    }
    if !p.unknown_links.is_empty() {
        line += &format!("; link unknown at {}", p.unknown_links.join(", "));
    }
    line
}

/// The PCI section of [`crate::io::summary`], appended to `out`: the functions `pci` (named
/// from `pci_ids`), the lanes of each root complex and the path of each endpoint.
pub fn pci_section(
    pci: &Probed<Vec<PciDevice>>,
    pci_ids: Option<&Probed<PciIdsSource>>,
    root_complexes: &[RootComplexLanes],
    paths: &[PciePath],
    out: &mut String,
) {
    let devs = match pci {
        Probed::Known(devs) => devs,
        Probed::Unknown(u) => {
            let _ = writeln!(out, "  PCI: unknown ({u})");
            return;
        }
    };
    let names = match pci_ids {
        Some(Probed::Known(source)) => format!(", named from {source}"),
        Some(Probed::Unknown(why)) => format!("; {why}"),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "  PCI: {}{names}",
        plural(devs.len() as u64, "function")
    );
    for rc in root_complexes {
        let _ = writeln!(
            out,
            "    root complex {}{}: {}, {} linked, {}",
            rc.root_complex,
            rc.numa_node
                .map(|n| format!(" (node {n})"))
                .unwrap_or_default(),
            plural(rc.root_ports as u64, "root port"),
            rc.root_ports_linked,
            match rc.lanes_in_use {
                Some(l) => format!("{} in use", plural(u64::from(l), "lane")),
                None => "lanes in use unknown (no link width known)".into(),
            },
        );
    }
    let (uncore, others): (Vec<&PciDevice>, Vec<&PciDevice>) =
        devs.iter().partition(|d| is_intel_uncore(d));
    for d in others {
        let _ = writeln!(out, "    {}", function_line(d));
    }
    if !uncore.is_empty() {
        let _ = writeln!(out, "    {}", uncore_line(&uncore));
    }
    for p in paths {
        let _ = writeln!(out, "    {}", path_line(p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_leading_words() {
        assert_eq!(
            common_words(&[
                "Xeon E5/Core i7 DMA Channel 0",
                "Xeon E5/Core i7 QPI Link 0",
                "Xeon E5/Core i7 Power Control Unit 0"
            ])
            .as_deref(),
            Some("Xeon E5/Core i7")
        );
        assert_eq!(common_words(&["Sky Lake-E CHA Registers", "Xeon"]), None);
        assert_eq!(common_words(&[]), None);
    }
}
