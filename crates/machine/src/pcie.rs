//! The PCIe tree: root ports, switch ports and endpoints, the links on each endpoint's path to
//! its root port, the narrowest of them, the endpoints that share it, and the lanes in use per
//! root complex.
//!
//! Sources (Documentation/ABI/testing/sysfs-bus-pci, PCI Express Base Specification 4.0):
//! - the place of a function: `/sys/bus/pci/devices/<addr>` links to
//!   `/sys/devices/pci<domain>:<bus>/<port>/.../<addr>`: the component before `<addr>` is its
//!   upstream bridge when it is a PCI address, the root complex (`pci0000:00`) otherwise;
//! - the role of a bridge (class 0x0604): the Device/Port Type field of its PCI Express
//!   Capabilities register (spec 7.5.3.2: 4 root port, 5 switch upstream port, 6 switch
//!   downstream port, 7 and 8 PCIe/PCI bridges) when the `config` file holds the capability
//!   list (256 bytes: readable by root); otherwise from the tree: a bridge on a root bus is a
//!   root port, a bridge with bridges below it a switch upstream port, a bridge below a switch
//!   upstream port a downstream port, any other bridge a bridge;
//! - a link is described by both of its ends: `current_link_*` of an endpoint or a switch
//!   upstream port is the link above it; of a root port or downstream port, the link below.
//!   The links on an endpoint's path are its own and those of every switch upstream port (or
//!   bridge) above it; the port's view stands in when the device's own files are missing.
//!
//! Bandwidths are per direction, decimal bytes/s ([`crate::pci::LinkSpeed`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::pci::PciDevice;
pub use crate::pci::PcieRole;

/// The Device/Port Type of the PCI Express capability in `config` (type 0 configuration
/// header), or `None` when the bytes do not reach the capability list (a non-root reader sees
/// 64 bytes) or the function has no PCI Express capability (ID 0x10).
pub fn port_type_from_config(config: &[u8]) -> Option<PcieRole> {
    // Status register bit 4: capabilities list present.
    let status = u16::from_le_bytes([*config.get(6)?, *config.get(7)?]);
    if status & 0x10 == 0 || config.len() < 256 {
        return None;
    }
    let mut at = usize::from(config[0x34] & 0xFC);
    for _ in 0..48 {
        if at < 0x40 || at + 4 > config.len() {
            return None;
        }
        if config[at] == 0x10 {
            let flags = u16::from_le_bytes([config[at + 2], config[at + 3]]);
            return Some(match (flags >> 4) & 0xF {
                4 => PcieRole::RootPort,
                5 => PcieRole::SwitchUpstream,
                6 => PcieRole::SwitchDownstream,
                7 | 8 => PcieRole::Bridge,
                _ => PcieRole::Endpoint,
            });
        }
        at = usize::from(config[at + 1] & 0xFC);
    }
    None
}

/// Whether class code `c` is a PCI-to-PCI bridge (base class 0x06, subclass 0x04).
pub fn is_pci_bridge(class_code: Option<u32>) -> bool {
    class_code.is_some_and(|c| (c >> 8) == 0x0604)
}

/// The index in `devs` of each function's parent bridge (`None` on a root bus, or when the
/// parent is not among `devs`).
fn parent_indexes(devs: &[PciDevice]) -> Vec<Option<usize>> {
    let index: BTreeMap<&str, usize> = devs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.address.as_str(), i))
        .collect();
    devs.iter()
        .map(|d| d.parent.as_deref().and_then(|p| index.get(p).copied()))
        .collect()
}

/// The roles of `devs` (same order): `config_roles[i]` where the capability was read
/// ([`port_type_from_config`]), else from the tree (see the module doc), parents first.
pub fn roles(devs: &[PciDevice], config_roles: &[Option<PcieRole>]) -> Vec<PcieRole> {
    let parents = parent_indexes(devs);
    let parent_of = |i: usize| parents[i];
    let bridge = |i: usize| is_pci_bridge(devs[i].class_code.known().copied());
    let depth = |i: usize| {
        let (mut at, mut n) = (i, 0usize);
        while let Some(p) = parent_of(at) {
            n += 1;
            if n > 64 {
                break; // a loop in a made-up tree
            }
            at = p;
        }
        n
    };
    let mut order: Vec<usize> = (0..devs.len()).collect();
    order.sort_by_key(|&i| depth(i));
    let mut out = vec![PcieRole::Endpoint; devs.len()];
    for i in order {
        out[i] = if let Some(r) = config_roles.get(i).copied().flatten() {
            r
        } else if !bridge(i) {
            PcieRole::Endpoint
        } else {
            match parent_of(i) {
                None => PcieRole::RootPort,
                Some(p) if out[p] == PcieRole::SwitchUpstream => PcieRole::SwitchDownstream,
                Some(_) => {
                    let bridge_below =
                        (0..devs.len()).any(|j| parent_of(j) == Some(i) && bridge(j));
                    if bridge_below {
                        PcieRole::SwitchUpstream
                    } else {
                        PcieRole::Bridge
                    }
                }
            }
        };
    }
    out
}

/// One link on an endpoint's path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathLink {
    /// The function on the link's lower end whose link it is (the endpoint, or a switch
    /// upstream port or bridge above it).
    pub device: String,
    /// Current per-direction bandwidth, bytes/s.
    pub bandwidth_bytes_per_s: u64,
    /// Current width, lanes.
    pub width_lanes: u32,
    /// Current PCIe generation.
    pub generation: u8,
    /// Runs below its maximum speed or width.
    pub below_max: bool,
}

/// An endpoint's path to its root port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PciePath {
    /// The endpoint's address.
    pub endpoint: String,
    /// The bridges above it, nearest first, ending with the root port.
    pub via: Vec<String>,
    /// The root complex (`pci0000:00`), when the device tree names it.
    pub root_complex: Option<String>,
    /// The links on the path whose current speed and width are known, nearest first.
    pub links: Vec<PathLink>,
    /// The link with the lowest current bandwidth: the endpoint's ceiling on its own;
    /// `None` when no link on the path is known.
    pub narrowest: Option<PathLink>,
    /// Links on the path whose speed or width is not known (their device addresses).
    pub unknown_links: Vec<String>,
    /// The most oversubscribed link on the path that other endpoints share (a switch's
    /// uplink): the ceiling when they all run at once. `None` when no known link on the path
    /// is shared.
    pub shared: Option<SharedLink>,
}

/// A link that several endpoints' paths run through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedLink {
    /// The link.
    pub link: PathLink,
    /// Every endpoint through it, this one included, in address order.
    pub endpoints: Vec<String>,
    /// Sum of those endpoints' maximum link bandwidths over the link's current bandwidth:
    /// 2.0 for four x4 Gen3 drives behind one x8 Gen3 uplink. `None` when a maximum is
    /// unknown.
    pub oversubscription: Option<f64>,
}

/// Lanes in use on one root complex.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RootComplexLanes {
    /// `pci<domain>:<bus>`.
    pub root_complex: String,
    /// NUMA node of its root ports (`None`: none known or they disagree).
    pub numa_node: Option<u32>,
    /// Root ports on it.
    pub root_ports: usize,
    /// Root ports with a trained link (known current width).
    pub root_ports_linked: usize,
    /// Sum of the current widths of its root ports' links, lanes; `None` when no root port's
    /// width is known (no link files), never 0 for unknown.
    pub lanes_in_use: Option<u32>,
}

/// The link `d` describes, when its current speed and width are known.
fn own_link(d: &PciDevice) -> Option<PathLink> {
    let l = d.link.as_ref()?;
    let speed = l.current_speed.known()?;
    let width = *l.current_width_lanes.known()?;
    Some(PathLink {
        device: d.address.clone(),
        bandwidth_bytes_per_s: speed.bandwidth_bytes_per_s(width),
        width_lanes: width,
        generation: speed.generation,
        below_max: l.below_max_speed == Some(true) || l.below_max_width == Some(true),
    })
}

/// The paths of every endpoint below a root port, and the lanes per root complex. `roles`:
/// from [`roles`], same order as `devs`.
pub fn paths(devs: &[PciDevice], roles: &[PcieRole]) -> (Vec<PciePath>, Vec<RootComplexLanes>) {
    let parents = parent_indexes(devs);
    let parent_of = |i: usize| parents[i];
    // The link above `i` (i is an endpoint, switch upstream port or bridge): its own files,
    // or its parent port's view of the same link.
    let link_above = |i: usize| -> Option<PathLink> {
        own_link(&devs[i]).or_else(|| {
            let p = parent_of(i)?;
            matches!(roles[p], PcieRole::RootPort | PcieRole::SwitchDownstream)
                .then(|| own_link(&devs[p]))
                .flatten()
                .map(|mut l| {
                    l.device = devs[i].address.clone();
                    l
                })
        })
    };
    let mut out = Vec::new();
    for (i, d) in devs.iter().enumerate() {
        if roles[i] != PcieRole::Endpoint {
            continue;
        }
        let mut via = Vec::new();
        let mut owners = vec![i];
        let mut at = i;
        while let Some(p) = parent_of(at) {
            if via.len() > 64 {
                break;
            }
            via.push(devs[p].address.clone());
            if matches!(roles[p], PcieRole::SwitchUpstream | PcieRole::Bridge) {
                owners.push(p);
            }
            at = p;
        }
        if via.is_empty() || roles[at] != PcieRole::RootPort {
            continue; // on a root bus: integrated, no PCIe path
        }
        let mut links = Vec::new();
        let mut unknown_links = Vec::new();
        for &o in &owners {
            match link_above(o) {
                Some(l) => links.push(l),
                None => unknown_links.push(devs[o].address.clone()),
            }
        }
        let narrowest = links
            .iter()
            .min_by_key(|l| l.bandwidth_bytes_per_s)
            .cloned();
        out.push((
            owners,
            PciePath {
                endpoint: d.address.clone(),
                via,
                root_complex: d.root_complex.clone(),
                links,
                narrowest,
                unknown_links,
                shared: None,
            },
        ));
    }
    // Sharing: the endpoints whose links (owners) include a link's device.
    let owners_of: Vec<Vec<String>> = out
        .iter()
        .map(|(o, _)| o.iter().map(|&k| devs[k].address.clone()).collect())
        .collect();
    let endpoints: Vec<String> = out.iter().map(|(_, p)| p.endpoint.clone()).collect();
    // the endpoint itself is the first owner of its path
    let max_bw: Vec<Option<u64>> = out
        .iter()
        .map(|(owners, _)| {
            devs[owners[0]]
                .link
                .as_ref()
                .and_then(|l| l.max_bandwidth_bytes_per_s.known().copied())
        })
        .collect();
    for (_, path) in out.iter_mut() {
        let mut best: Option<SharedLink> = None;
        for l in &path.links {
            let through: Vec<usize> = (0..endpoints.len())
                .filter(|&j| owners_of[j].contains(&l.device))
                .collect();
            if through.len() < 2 {
                continue;
            }
            let sum: Option<u64> = through.iter().map(|&j| max_bw[j]).sum();
            let shared = SharedLink {
                link: l.clone(),
                endpoints: through.iter().map(|&j| endpoints[j].clone()).collect(),
                oversubscription: sum
                    .filter(|_| l.bandwidth_bytes_per_s > 0)
                    .map(|s| s as f64 / l.bandwidth_bytes_per_s as f64),
            };
            let worse = match &best {
                None => true,
                Some(b) => {
                    shared.oversubscription.unwrap_or(0.0) > b.oversubscription.unwrap_or(0.0)
                }
            };
            if worse {
                best = Some(shared);
            }
        }
        path.shared = best;
    }
    let paths: Vec<PciePath> = out.into_iter().map(|(_, p)| p).collect();
    // Lanes per root complex.
    let mut rcs: BTreeMap<String, RootComplexLanes> = BTreeMap::new();
    let mut nodes: BTreeMap<String, Vec<Option<u32>>> = BTreeMap::new();
    for (i, d) in devs.iter().enumerate() {
        if roles[i] != PcieRole::RootPort {
            continue;
        }
        let Some(rc) = &d.root_complex else { continue };
        let e = rcs.entry(rc.clone()).or_insert_with(|| RootComplexLanes {
            root_complex: rc.clone(),
            numa_node: None,
            root_ports: 0,
            root_ports_linked: 0,
            lanes_in_use: None,
        });
        e.root_ports += 1;
        // the root port's view of the link below, else a child's view of it
        let width = own_link(d).map(|l| l.width_lanes).or_else(|| {
            devs.iter()
                .filter(|c| c.parent.as_deref() == Some(d.address.as_str()))
                .find_map(own_link)
                .map(|l| l.width_lanes)
        });
        if let Some(w) = width {
            e.root_ports_linked += 1;
            e.lanes_in_use = Some(e.lanes_in_use.unwrap_or(0) + w);
        }
        nodes
            .entry(rc.clone())
            .or_default()
            .push(d.numa_node.known().copied().flatten());
    }
    for (rc, n) in nodes {
        let first = n.first().copied().flatten();
        if n.iter().all(|x| *x == first) {
            if let Some(e) = rcs.get_mut(&rc) {
                e.numa_node = first;
            }
        }
    }
    (paths, rcs.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A type 1 header whose capability list holds a power management capability at 0x40
    /// and the PCI Express capability at 0x60 with Device/Port Type `kind`.
    fn config(kind: u16) -> Vec<u8> {
        let mut c = vec![0u8; 256];
        c[6] = 0x10; // status: capabilities list
        c[0x34] = 0x40;
        c[0x40] = 0x01; // power management
        c[0x41] = 0x60;
        c[0x60] = 0x10; // PCI Express
        c[0x61] = 0x00;
        let flags = 0x0002 | (kind << 4); // version 2
        c[0x62..0x64].copy_from_slice(&flags.to_le_bytes());
        c
    }

    #[test]
    fn port_type_is_read_from_the_pci_express_capability() {
        assert_eq!(port_type_from_config(&config(4)), Some(PcieRole::RootPort));
        assert_eq!(
            port_type_from_config(&config(5)),
            Some(PcieRole::SwitchUpstream)
        );
        assert_eq!(
            port_type_from_config(&config(6)),
            Some(PcieRole::SwitchDownstream)
        );
        assert_eq!(port_type_from_config(&config(7)), Some(PcieRole::Bridge));
        assert_eq!(port_type_from_config(&config(0)), Some(PcieRole::Endpoint));
        // 64 bytes (what a user who is not root reads), no capability list, a loop
        assert_eq!(port_type_from_config(&config(4)[..64]), None);
        let mut none = config(4);
        none[6] = 0;
        assert_eq!(port_type_from_config(&none), None);
        let mut looped = config(4);
        looped[0x60] = 0x05;
        looped[0x61] = 0x40;
        assert_eq!(port_type_from_config(&looped), None);
    }
}
