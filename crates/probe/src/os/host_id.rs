//! Which machine a run ran on, beyond its host name: the DMI product UUID and serial
//! (`/sys/class/dmi/id/product_uuid`, `product_serial`: SMBIOS Type 1, readable by root only)
//! and `/etc/machine-id` (systemd's machine-id(5), world-readable). `hwsurvey fleet` pools
//! the runs of one host name only when these agree ([`HostId::same_machine`]).
//!
//! The values are kept hashed, never as read: machine-id(5) asks that the ID not be exposed,
//! and a serial or UUID names one physical box. Each is
//! `SHA-256("hwsurvey host id v1\0" kind "\0" value)`, its first 16 bytes in hex: equal for
//! the same value, and saying nothing else about it. They are read on the live machine only
//! (outside [`SysRoot`]'s record, so a snapshot never holds the files); a snapshot keeps the
//! hashes in its live facts ([`crate::live::LiveFacts::host_id`]).

use crate::SysRoot;

// The types and pure functions of this part of the machine document, under their paths here.
pub use hwsurvey_machine::os::host_id::*;

/// The live machine's identity read from the files under `dir` (`/` live): each file read
/// directly, not through a [`SysRoot`], so no snapshot records it.
pub fn read_under(dir: &std::path::Path) -> HostId {
    let read = |rel: &str, kind: &str| {
        let text = std::fs::read(dir.join(rel)).ok()?;
        // a one-line file: anything long is not an identity
        (text.len() <= 256)
            .then(|| String::from_utf8(text).ok())
            .flatten()
            .and_then(|t| hashed(kind, &t))
    };
    HostId {
        dmi_uuid: read("sys/class/dmi/id/product_uuid", "dmi_uuid"),
        dmi_serial: read("sys/class/dmi/id/product_serial", "dmi_serial"),
        machine_id: read("etc/machine-id", "machine_id"),
    }
}

/// The identity of the machine `root` stands for: read live on the live machine, the hashes a
/// snapshot kept ([`crate::live::LiveFacts::host_id`]) in a capture; empty in a capture
/// without them (a copy of `/`, an older snapshot).
pub fn probe(root: &SysRoot) -> HostId {
    if root.is_live() {
        return read_under(root.root());
    }
    crate::live::read_live_facts(root)
        .and_then(|f| f.host_id)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn read_from_a_folder_standing_for_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("etc")).unwrap();
        std::fs::write(
            dir.path().join("etc/machine-id"),
            "4a1f6c1e2b3d4e5f60718293a4b5c6d7\n",
        )
        .unwrap();
        let id = read_under(dir.path());
        assert_eq!(
            id.machine_id,
            hashed("machine_id", "4a1f6c1e2b3d4e5f60718293a4b5c6d7")
        );
        assert_eq!(id.dmi_uuid, None);
    }
}
