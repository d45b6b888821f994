//! I/O rules: `io.pcie_uplink`, `io.pcie_link` (links below their maximum, shared uplinks).

use hwsurvey_model::units::format_rate_decimal;
use hwsurvey_model::Probed;

use crate::facts::Facts;
use crate::{Finding, Params, RuleFinding, Verdict};

/// Usable bytes per second of one PCIe lane at `gt_per_s` (after line coding: 8b/10b for
/// 2.5 and 5 GT/s, 128b/130b for 8, 16 and 32 GT/s, PCIe 6.0 FLIT 242/256 at 64 GT/s).
pub fn pcie_lane_bytes_per_s(gt_per_s: f64) -> f64 {
    let efficiency = if gt_per_s <= 5.0 {
        8.0 / 10.0
    } else if gt_per_s <= 32.0 {
        128.0 / 130.0
    } else {
        242.0 / 256.0
    };
    gt_per_s * 1e9 * efficiency / 8.0
}

/// PCIe generation of a link speed.
pub fn pcie_gen(gt_per_s: f64) -> u32 {
    match gt_per_s {
        g if g <= 2.5 => 1,
        g if g <= 5.0 => 2,
        g if g <= 8.0 => 3,
        g if g <= 16.0 => 4,
        g if g <= 32.0 => 5,
        _ => 6,
    }
}

/// `io.pcie_uplink`: endpoints whose ceiling is set above them: a link they share with other
/// endpoints whose maxima add up to more than it carries (a switch's uplink, 2:1 for four x4
/// drives on an x8), or a narrowest link that is not their own and runs below its maximum.
/// One finding per such link, naming the endpoints behind it.
pub fn io_pcie_uplink(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "io.pcie_uplink";
    let Some(paths) = &f.io.pcie_paths else {
        return vec![Finding::not_evaluated(
            ID,
            "no PCIe tree in these facts (a result file written before the probe read it)",
        )];
    };
    if paths.iter().all(|p| p.links.is_empty()) {
        return vec![Finding::not_evaluated(
            ID,
            if paths.is_empty() {
                "no endpoint below a PCIe root port (a VM's devices on the root bus, or no PCIe)"
                    .to_string()
            } else {
                format!(
                    "none of the {} endpoints below a root port has a link with known speed and width",
                    paths.len()
                )
            },
        )];
    }
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for p in paths {
        if let Some(sh) = p
            .shared
            .as_ref()
            .filter(|s| s.oversubscription.is_some_and(|o| o > 1.0))
        {
            if seen.contains(&sh.link.device) {
                continue;
            }
            seen.push(sh.link.device.clone());
            let o = sh.oversubscription.unwrap_or(0.0);
            out.push(
                Finding::new(
                    ID,
                    Verdict::Warn,
                    format!(
                        "{} endpoints ({}) share the Gen{} x{} link at {} = {}: {o:.2}:1 oversubscribed, so together they get at most {} each",
                        sh.endpoints.len(),
                        sh.endpoints.join(", "),
                        sh.link.generation,
                        sh.link.width_lanes,
                        sh.link.device,
                        format_rate_decimal(sh.link.bandwidth_bytes_per_s as f64),
                        format_rate_decimal(sh.link.bandwidth_bytes_per_s as f64 / sh.endpoints.len() as f64),
                    ),
                )
                .with(
                    format!("/sys/bus/pci/devices/{}/current_link_speed,_width", sh.link.device),
                    format!("Gen{} x{}", sh.link.generation, sh.link.width_lanes),
                )
                .fix("spread the devices over root ports (or switches) whose uplinks carry their sum, or accept the shared ceiling in the storage results"),
            );
        }
        if let Some(n) = p
            .narrowest
            .as_ref()
            .filter(|n| n.device != p.endpoint && n.below_max)
        {
            if seen.contains(&n.device) {
                continue;
            }
            seen.push(n.device.clone());
            out.push(
                Finding::new(
                    ID,
                    Verdict::Warn,
                    format!(
                        "{} is capped at {} by the link at {} above it, which runs Gen{} x{} below its maximum",
                        p.endpoint,
                        format_rate_decimal(n.bandwidth_bytes_per_s as f64),
                        n.device,
                        n.generation,
                        n.width_lanes
                    ),
                )
                .with(
                    format!("/sys/bus/pci/devices/{}/current_link_speed,_width", n.device),
                    format!("Gen{} x{}", n.generation, n.width_lanes),
                )
                .fix("reseat the switch or riser, check the slot's wiring and the firmware's link speed setting"),
            );
        }
    }
    out
}

/// `io.pcie_link`: links running below their maximum speed or width, with the ceiling lost.
pub fn io_pcie_link(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "io.pcie_link";
    let links = need!(f.io.pcie, ID);
    let mut out = Vec::new();
    let mut checked = 0usize;
    for l in links {
        let (Some(cs), Some(ms), Some(cw), Some(mw)) = (
            l.current_gt_per_s,
            l.max_gt_per_s,
            l.current_width,
            l.max_width,
        ) else {
            continue;
        };
        checked += 1;
        if cw == 0 || mw == 0 {
            continue; // link down / no device behind a bridge port
        }
        if cs < ms || cw < mw {
            let now = pcie_lane_bytes_per_s(cs) * cw as f64;
            let could = pcie_lane_bytes_per_s(ms) * mw as f64;
            out.push(
                Finding::new(
                    ID,
                    Verdict::Warn,
                    format!(
                        "{}{} runs Gen{} x{} = {} instead of Gen{} x{} = {}",
                        l.address,
                        l.device.as_deref().map(|d| format!(" ({d})")).unwrap_or_default(),
                        pcie_gen(cs),
                        cw,
                        format_rate_decimal(now),
                        pcie_gen(ms),
                        mw,
                        format_rate_decimal(could)
                    ),
                )
                .with(
                    format!("/sys/bus/pci/devices/{}/current_link_speed,_width", l.address),
                    format!("{cs} GT/s x{cw}"),
                )
                .with(
                    format!("/sys/bus/pci/devices/{}/max_link_speed,_width", l.address),
                    format!("{ms} GT/s x{mw}"),
                )
                .fix("check under load first (some devices lower the link speed when idle); then reseat the card, use a slot wired for the full width, check the firmware's slot speed setting"),
            );
        }
    }
    if checked == 0 {
        // absent is not a pass: no link to compare (a VM's virtio devices, no PCIe at all)
        return vec![Finding::not_evaluated(
            ID,
            if links.is_empty() {
                "no PCI device exposes link speed and width (a VM, or no PCIe devices)".to_string()
            } else {
                format!(
                    "none of {} PCI devices with link files has all of current/max link speed and width",
                    links.len()
                )
            },
        )];
    }
    out
}
