//! What else a raw device is part of: every block device (or mounted btrfs) built on it, and
//! every other user of the devices it is itself built on, walked through the whole stack in
//! both directions. Pure: a [`BlockStack`] (read by [`hwsurvey_probe::block::block_stack`],
//! loop devices matched by what the kernel says they are over), the mount tables of every
//! mount namespace and the swap list in, one [`StackUse`] per finding out.
//!
//! Why: a loop device over a block device registers no holder and takes no exclusive claim,
//! so neither `holders/` nor an `O_EXCL` open sees it (issue 32: a loop at offset 1 MiB over
//! the named device carried a mounted ext4 that a run destroyed). Upwards, anything built on
//! the device refuses it: a loop device whose backing file it is (with or without an offset),
//! device mapper and MD holders, bcache, a zram device writing back to it, a mounted btrfs it
//! is a member of, and what is built on those in turn (a partition of a loop device over it,
//! mounted). Downwards, when the device is itself built on another one (a loop over a block
//! device, a partition of a disk, a dm target), that lower device must have no other user and
//! no mount or swap of its own: writing the named device writes it; so must the regular file
//! under a loop device (`file PATH`): another loop over it is another user. A partition's sibling
//! partitions are not users of the disk's space that the partition covers.

use std::collections::BTreeSet;

use hwsurvey_probe::block::{BlockStack, StackEdge, StackLink};
use hwsurvey_probe::mounts::MountEntry;
use serde::{Deserialize, Serialize};

/// One finding: a device built on the named one (`user`), or the named one's lower device
/// with another user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackUse {
    /// Whether it is built on the named device (`true`), or shares a device underneath it.
    pub above: bool,
    /// What sits on it, as shown: `loop1 (loop device over loop0 from byte 1048576, mounted
    /// at /mnt)`, or for the downward walk `it is a loop device over loop0 from byte 0, and
    /// loop0 is also mounted at /m`.
    pub text: String,
}

impl std::fmt::Display for StackUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// What `edge.upper` is, in words: `loop device over loop0 from byte 1048576`, `device
/// mapper vg0-data over sdb`, `partition of loop1`.
fn relation(stack: &BlockStack, edge: &StackEdge) -> String {
    let lower = &edge.lower;
    match &edge.link {
        StackLink::Partition => format!("partition of {lower}"),
        StackLink::Holder => {
            let kind = if edge.upper.starts_with("dm-") {
                match stack.node(&edge.upper).and_then(|n| n.dm_name.as_deref()) {
                    Some(name) => format!("device mapper {name}"),
                    None => "device mapper".to_string(),
                }
            } else if edge.upper.starts_with("md") {
                "MD RAID".to_string()
            } else if edge.upper.starts_with("bcache") {
                "bcache".to_string()
            } else {
                "holder".to_string()
            };
            format!("{kind} over {lower}")
        }
        StackLink::Loop {
            offset_bytes,
            size_limit_bytes,
        } => {
            let limit = if *size_limit_bytes > 0 {
                format!(", {size_limit_bytes} bytes")
            } else {
                String::new()
            };
            format!("loop device over {lower} from byte {offset_bytes}{limit}")
        }
        StackLink::ZramBacking => format!("zram device writing back to {lower}"),
        StackLink::Bcache => format!("bcache over {lower}"),
        StackLink::BtrfsMember { label } => match label {
            Some(l) => format!("btrfs {l:?} with member {lower}"),
            None => format!("btrfs with member {lower}"),
        },
    }
}

/// Where device or btrfs `name` is mounted, in any mount namespace, or used as swap:
/// `mounted at /mnt`, `mounted at /srv (in mount namespace mnt:[4026532174] of pid 4242
/// (sleep))`; empty when nowhere.
/// A device is matched by number and by `/dev/NAME` (`/dev/mapper/DM_NAME` for device
/// mapper); a btrfs (`btrfs FSID`) by a btrfs mount of any of its members.
fn in_use(stack: &BlockStack, name: &str, mounts: &[MountEntry], swaps: &[String]) -> Vec<String> {
    let mut sources: Vec<String> = Vec::new();
    let mut dev = None;
    let mut fs_type = None;
    if name.starts_with("btrfs ") {
        fs_type = Some("btrfs");
        sources.extend(
            stack
                .edges
                .iter()
                .filter(|e| e.upper == name)
                .map(|e| format!("/dev/{}", e.lower)),
        );
    } else if let Some(node) = stack.node(name) {
        dev = Some(node.dev);
        sources.push(format!("/dev/{name}"));
        if let Some(dm) = &node.dm_name {
            sources.push(format!("/dev/mapper/{dm}"));
        }
    }
    let mut out: Vec<String> = Vec::new();
    for m in mounts {
        let by_dev = dev == Some((m.major, m.minor));
        let by_source = sources.contains(&m.source) && fs_type.is_none_or(|t| m.fs_type == t);
        if (by_dev || by_source) && !out.contains(&m.shown()) {
            out.push(m.shown());
        }
    }
    let mut words: Vec<String> = out.iter().map(|p| format!("mounted at {p}")).collect();
    if dev.is_some() && swaps.iter().any(|s| sources.contains(s)) {
        words.push("in use as swap".to_string());
    }
    words
}

/// `base (relation, mounted at X)`.
fn shown(stack: &BlockStack, edge: &StackEdge, name: &str, extra: Vec<String>) -> String {
    let mut parts = vec![relation(stack, edge)];
    parts.extend(extra);
    format!("{name} ({})", parts.join(", "))
}

/// Everything built on device `target` (kernel name), recursively, and every other user of
/// the devices `target` is built on; empty when nothing is. Direct partitions of `target` are
/// walked through (what sits on them is named) but not named themselves: the caller refuses
/// a device with partitions for that.
pub fn stack_uses(
    stack: &BlockStack,
    target: &str,
    mounts: &[MountEntry],
    swaps: &[String],
) -> Vec<StackUse> {
    let mut out = Vec::new();
    // upwards: what is built on target, and on that
    let mut seen: BTreeSet<String> = BTreeSet::from([target.to_string()]);
    let mut queue: Vec<String> = vec![target.to_string()];
    while let Some(lower) = queue.pop() {
        for e in stack.edges.iter().filter(|e| e.lower == lower) {
            if !seen.insert(e.upper.clone()) {
                continue;
            }
            queue.push(e.upper.clone());
            let direct_partition = lower == target && e.link == StackLink::Partition;
            if !direct_partition {
                let extra = in_use(stack, &e.upper, mounts, swaps);
                out.push(StackUse {
                    above: true,
                    text: shown(stack, e, &e.upper, extra),
                });
            }
        }
    }
    // downwards: what target is built on, and that lower device's other users
    let mut below: BTreeSet<String> = BTreeSet::from([target.to_string()]);
    let mut queue: Vec<String> = vec![target.to_string()];
    while let Some(upper) = queue.pop() {
        for down in stack.edges.iter().filter(|e| e.upper == upper) {
            let lower = &down.lower;
            if !below.insert(lower.clone()) {
                continue;
            }
            queue.push(lower.clone());
            let mut others: Vec<String> = in_use(stack, lower, mounts, swaps);
            for e in stack.edges.iter().filter(|e| e.lower == *lower) {
                let sibling = down.link == StackLink::Partition && e.link == StackLink::Partition;
                if below.contains(&e.upper) || e.upper == upper || sibling {
                    continue;
                }
                let extra = in_use(stack, &e.upper, mounts, swaps);
                others.push(format!("used by {}", shown(stack, e, &e.upper, extra)));
            }
            if !others.is_empty() {
                let who = if upper == target {
                    "it"
                } else {
                    upper.as_str()
                };
                out.push(StackUse {
                    above: false,
                    text: format!(
                        "{who} is a {}, and {lower} is also {}",
                        relation(stack, down),
                        others.join(" and ")
                    ),
                });
            }
        }
    }
    out
}
