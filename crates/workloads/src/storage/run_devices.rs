//! The `--storage-device` list a run writes, checked before it (and for `--plan-only`): each
//! device proven free ([`super::device`]), none named twice, every `--confirm-device` naming
//! one of them, and each device's identity kept for the run ([`super::identity`]), so that a
//! device swapped under its name mid-run is refused at its next open.

use std::path::PathBuf;

use hwsurvey_probe::block::decode_dev;
use hwsurvey_probe::SysRoot;

use super::device::{describe, refuse, DeviceDescription, WriteOptions};
use super::sample;

/// Checks the `--storage-device` list before a run (and for `--plan-only`): every device as
/// [`super::device::check_device_with`], no device named twice (same device number under two names, e.g. a
/// `/dev/disk/by-id` link), and every `--confirm-device` value naming one of them. Keeps each
/// device's identity for the run ([`super::identity::keep`]). Returns what a warning names
/// about each, in order.
///
/// Errors: [`super::StorageError::DeviceRefused`] for the first refused device, every reason
/// on one line.
pub fn check_storage_devices(
    devices: &[PathBuf],
    options: &WriteOptions,
) -> Result<Vec<DeviceDescription>, super::StorageError> {
    use std::os::unix::fs::MetadataExt;
    // every --confirm-device value names one of the devices (a typo confirms nothing)
    let described: Vec<DeviceDescription> = devices
        .iter()
        .map(|p| describe(p, &SysRoot::live()))
        .collect();
    for c in &options.confirm {
        let named = described.iter().any(|d| {
            sample::confirmed_by(std::slice::from_ref(c), d.serial.as_deref(), d.size_bytes)
        });
        if !named {
            return Err(super::StorageError::DeviceRefused {
                device: format!("--confirm-device {}", hwsurvey_model::text::one_line(c, 64)),
                reasons: "names none of the --storage-device devices (give a device's serial \
                          or its size in bytes, as the refusal printed them)"
                    .into(),
            });
        }
    }
    let mut out: Vec<(Option<(u32, u32)>, DeviceDescription)> = Vec::new();
    for path in devices {
        refuse(path, options)?;
        let dev = std::fs::metadata(path).ok().map(|m| decode_dev(m.rdev()));
        if let Some((_, first)) = out.iter().find(|(d, _)| d.is_some() && *d == dev) {
            return Err(super::StorageError::DeviceRefused {
                device: hwsurvey_model::text::path(path).into_owned(),
                reasons: format!(
                    "the same device as --storage-device {}; name each device once",
                    hwsurvey_model::text::one_line(&first.path, 200)
                ),
            });
        }
        super::identity::keep(path).map_err(|e| super::StorageError::DeviceRefused {
            device: hwsurvey_model::text::path(path).into_owned(),
            reasons: format!("cannot be looked at: {e}"),
        })?;
        out.push((dev, describe(path, &SysRoot::live())));
    }
    Ok(out.into_iter().map(|(_, d)| d).collect())
}
