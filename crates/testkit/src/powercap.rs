//! Synthetic powercap trees for the energy reader (`hwsurvey_probe::energy`): the zones a
//! two-package Intel server exposes under `/sys/class/powercap` (kernel `intel_rapl_common`:
//! `name`, `energy_uj`, `max_energy_range_uj` per zone), with counter values a test or a
//! benchmark moves itself ([`set_energy_uj`]).

use std::path::Path;

use crate::write;

/// `max_energy_range_uj` of a package zone on a Xeon Gold 6252 (2^32 energy units of
/// 61 uJ, as the kernel reports it).
pub const PACKAGE_MAX_UJ: u64 = 262_143_328_850;
/// `max_energy_range_uj` of its DRAM subzone (15.3 uJ units).
pub const DRAM_MAX_UJ: u64 = 65_712_999_613;

/// One zone: its folder under `/sys/class/powercap`, its `name`, the first `energy_uj` and
/// its `max_energy_range_uj`.
pub type Zone = (&'static str, &'static str, u64, u64);

/// A two-package server: `intel-rapl:0` package-0 with its `core` and `dram` subzones,
/// `intel-rapl:1` package-1 with `dram`, and `intel-rapl:2` psys (the platform). The reader
/// reads 5 counters (the packages, their DRAM and psys), keeps psys out of the total and skips
/// `core`.
pub const TWO_PACKAGE_SERVER: [Zone; 6] = [
    ("intel-rapl:0", "package-0", 262_141_328_850, PACKAGE_MAX_UJ),
    ("intel-rapl:0:0", "core", 5, PACKAGE_MAX_UJ),
    ("intel-rapl:0:1", "dram", 1_000_000, DRAM_MAX_UJ),
    ("intel-rapl:1", "package-1", 7_000_000, PACKAGE_MAX_UJ),
    ("intel-rapl:1:0", "dram", 2_000_000, DRAM_MAX_UJ),
    ("intel-rapl:2", "psys", 9_000_000, PACKAGE_MAX_UJ),
];

/// Writes `zones` under `root` (`/sys/class/powercap/<zone>/{name,energy_uj,max_energy_range_uj}`).
pub fn write_zones(root: &Path, zones: &[Zone]) {
    for (zone, name, uj, max) in zones {
        let dir = format!("/sys/class/powercap/{zone}");
        write(root, &format!("{dir}/name"), name);
        write(root, &format!("{dir}/energy_uj"), &uj.to_string());
        write(
            root,
            &format!("{dir}/max_energy_range_uj"),
            &max.to_string(),
        );
    }
}

/// The `energy_uj` of `zone` (`intel-rapl:0`) under `root`.
///
/// Panics when the file is missing or holds no number.
pub fn energy_uj(root: &Path, zone: &str) -> u64 {
    let path = root.join(format!("sys/class/powercap/{zone}/energy_uj"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.trim()
        .parse()
        .unwrap_or_else(|e| panic!("{}: {text:?}: {e}", path.display()))
}

/// Advances `zone`'s counter by `microjoules`, wrapping at `max_uj` as the hardware counter
/// does.
pub fn add_energy_uj(root: &Path, zone: &str, microjoules: u64, max_uj: u64) {
    let next = (energy_uj(root, zone) + microjoules) % max_uj;
    set_energy_uj(root, zone, next);
}

/// Sets `zone`'s `energy_uj`.
pub fn set_energy_uj(root: &Path, zone: &str, value: u64) {
    write(
        root,
        &format!("/sys/class/powercap/{zone}/energy_uj"),
        &value.to_string(),
    );
}
