//! Which machine a run ran on, beyond its host name: the DMI product UUID and serial
//! (`/sys/class/dmi/id/product_uuid`, `product_serial`: SMBIOS Type 1, readable by root only)
//! and `/etc/machine-id` (systemd's machine-id(5), world-readable). `hwsurvey fleet` pools
//! the runs of one host name only when these agree ([`HostId::same_machine`]).
//!
//! The values are kept hashed, never as read: machine-id(5) asks that the ID not be exposed,
//! and a serial or UUID names one physical box. Each is
//! `SHA-256("hwsurvey host id v1\0" kind "\0" value)`, its first 16 bytes in hex: equal for
//! the same value, and saying nothing else about it. They are read on the live machine only
//! (outside `SysRoot`'s record, so a snapshot never holds the files; the readers are
//! `hwsurvey_probe::os::host_id`); a snapshot keeps the hashes in its live facts
//! (`hwsurvey_probe::live::LiveFacts::host_id`).

use serde::{Deserialize, Serialize};
use sha2::Digest;

/// The machine's identity, hashed; `None` where unknown: the file missing or unreadable (the
/// DMI files as a user other than root, no DMI on most aarch64 boards), or a placeholder the
/// firmware filled in (`Not Specified`, `To Be Filled By O.E.M.`, all zeros or all `F`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostId {
    /// `/sys/class/dmi/id/product_uuid`, hashed.
    #[serde(default)]
    pub dmi_uuid: Option<String>,
    /// `/sys/class/dmi/id/product_serial`, hashed.
    #[serde(default)]
    pub dmi_serial: Option<String>,
    /// `/etc/machine-id`, hashed.
    #[serde(default)]
    pub machine_id: Option<String>,
}

/// How two identities were told apart or matched ([`HostId::same_machine`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// The DMI product UUID.
    DmiUuid,
    /// The DMI serial.
    DmiSerial,
    /// `/etc/machine-id`.
    MachineId,
}

impl IdKind {
    /// `DMI product UUID`, `DMI serial`, `/etc/machine-id`.
    pub fn words(self) -> &'static str {
        match self {
            IdKind::DmiUuid => "DMI product UUID",
            IdKind::DmiSerial => "DMI serial",
            IdKind::MachineId => "/etc/machine-id",
        }
    }
}

impl HostId {
    /// Whether `self` and `other` are the same machine by the first identity both know, in the
    /// order DMI product UUID, DMI serial, machine-id (a reinstalled OS keeps its DMI UUID, a
    /// cloned VM image its machine-id): `Some((kind, same))`, or `None` when they share no
    /// kind (the caller then compares CPU model and topology).
    pub fn same_machine(&self, other: &HostId) -> Option<(IdKind, bool)> {
        [
            (IdKind::DmiUuid, &self.dmi_uuid, &other.dmi_uuid),
            (IdKind::DmiSerial, &self.dmi_serial, &other.dmi_serial),
            (IdKind::MachineId, &self.machine_id, &other.machine_id),
        ]
        .into_iter()
        .find_map(|(kind, a, b)| Some((kind, a.as_ref()? == b.as_ref()?)))
    }

    /// Whether nothing is known.
    pub fn is_empty(&self) -> bool {
        self.dmi_uuid.is_none() && self.dmi_serial.is_none() && self.machine_id.is_none()
    }
}

/// A value no firmware or OS gives one machine alone: a placeholder of every SMBIOS string
/// ([`crate::dmi::clean`]), one character repeated (`00000000-0000-...`, `FFFFFFFF-...`) once
/// dashes are dropped, or a value vendors ship on many boards (`0123456789`, the UUID
/// `03000200-0400-0500-0006-000700080009`).
fn is_placeholder(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    let compact: Vec<char> = lower.chars().filter(|c| *c != '-' && *c != ' ').collect();
    crate::dmi::clean(v).is_none()
        || compact.iter().all(|c| *c == compact[0])
        || ["0123456789", "03000200-0400-0500-0006-000700080009"].contains(&lower.as_str())
}

/// The hash kept of `value` of `kind`: `SHA-256("hwsurvey host id v1\0" kind "\0" value)`,
/// first 16 bytes in lower-case hex; `None` for a placeholder (`is_placeholder`).
pub fn hashed(kind: &str, value: &str) -> Option<String> {
    let value = value.trim_matches(|c: char| c == '\0' || c.is_whitespace());
    if is_placeholder(value) {
        return None;
    }
    let mut h = sha2::Sha256::new();
    h.update(b"hwsurvey host id v1\0");
    h.update(kind.as_bytes());
    h.update(b"\0");
    h.update(value.as_bytes());
    Some(
        h.finalize()
            .iter()
            .take(16)
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_not_identities_and_values_are_hashed() {
        for v in [
            "",
            "Not Specified",
            "To Be Filled By O.E.M.",
            "00000000-0000-0000-0000-000000000000",
            "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
            "03000200-0400-0500-0006-000700080009",
        ] {
            assert_eq!(hashed("dmi_uuid", v), None, "{v}");
        }
        let a = hashed("machine_id", "0123456789abcdef0123456789abcdef\n").unwrap();
        assert_eq!(a.len(), 32);
        assert!(!a.contains("0123456789abcdef"));
        assert_eq!(
            Some(a.clone()),
            hashed("machine_id", "0123456789abcdef0123456789abcdef")
        );
        assert_ne!(
            Some(a),
            hashed("dmi_serial", "0123456789abcdef0123456789abcdef")
        );
    }
    #[test]
    fn the_first_kind_both_know_decides() {
        let id = |u: Option<&str>, m: Option<&str>| HostId {
            dmi_uuid: u.map(String::from),
            dmi_serial: None,
            machine_id: m.map(String::from),
        };
        // same DMI UUID, machine-id changed (a reinstall): the same machine
        assert_eq!(
            id(Some("u"), Some("m1")).same_machine(&id(Some("u"), Some("m2"))),
            Some((IdKind::DmiUuid, true))
        );
        // one run without root (no UUID): the machine-id decides
        assert_eq!(
            id(None, Some("m1")).same_machine(&id(Some("u"), Some("m2"))),
            Some((IdKind::MachineId, false))
        );
        assert_eq!(id(None, None).same_machine(&id(Some("u"), None)), None);
    }
}
