//! Synthetic trees for the hardware watch (`hwsurvey_probe::watch`), whose counters a test
//! moves between two readings as the hardware would: EDAC memory controllers with per-DIMM
//! counters and labels (`/sys/devices/system/edac/mc`, written from facts or from a real
//! capture's `grep .` output), PCIe AER statistics (`aer_dev_*` of the PCI functions
//! [`crate::pcie_switch_tree`] writes), thermal throttle counters per CPU, and a file standing
//! for `/dev/kmsg` to which kernel log records are appended.

use std::path::Path;

use crate::write;

/// The EDAC controllers' folder.
pub const EDAC_MC: &str = "/sys/devices/system/edac/mc";

/// One EDAC DIMM: controller, DIMM number, `dimm_label`, `dimm_location`, size in MiB (the
/// kernel's unit of `size`), corrected and uncorrected counts.
pub type Dimm = (u32, u32, &'static str, &'static str, u64, u64, u64);

/// The four DIMMs the Gigabyte R181 (2x ThunderX2) lists in its `dmidecode`
/// (`../shared/fixtures/aarch64-cavium-thunderx2-gigabyte-r181-2s/dmidecode-memory.txt`: 32 GB
/// DDR4 in DIMM_P0_A0, DIMM_P0_B0 (bank N0), DIMM_P1_I0, DIMM_P1_J0 (bank N1)), labelled as
/// `ghes_edac` labels them from those records (`"<Bank Locator> <Locator>"`), no errors yet.
pub const R181_GHES: [Dimm; 4] = [
    (0, 0, "N0 DIMM_P0_A0", "memory 0", 32768, 0, 0),
    (0, 1, "N0 DIMM_P0_B0", "memory 1", 32768, 0, 0),
    (1, 0, "N1 DIMM_P1_I0", "memory 0", 32768, 0, 0),
    (1, 1, "N1 DIMM_P1_J0", "memory 1", 32768, 0, 0),
];

/// Writes `mc<M>/{mc_name,ce_count,ue_count,ce_noinfo_count,ue_noinfo_count}` and
/// `mc<M>/dimm<N>/{dimm_label,dimm_location,size,dimm_mem_type,dimm_ce_count,dimm_ue_count}`
/// for `dimms` under `root` (the controller's counts the sum of its DIMMs').
pub fn edac_tree(root: &Path, dimms: &[Dimm]) {
    let mut mcs: Vec<u32> = dimms.iter().map(|d| d.0).collect();
    mcs.sort_unstable();
    mcs.dedup();
    for mc in mcs {
        let dir = format!("{EDAC_MC}/mc{mc}");
        write(root, &format!("{dir}/mc_name"), "ghes_edac");
        let (ce, ue) = dimms
            .iter()
            .filter(|d| d.0 == mc)
            .fold((0, 0), |(c, u), d| (c + d.5, u + d.6));
        write(root, &format!("{dir}/ce_count"), &ce.to_string());
        write(root, &format!("{dir}/ue_count"), &ue.to_string());
        write(root, &format!("{dir}/ce_noinfo_count"), "0");
        write(root, &format!("{dir}/ue_noinfo_count"), "0");
    }
    for (mc, n, label, location, mib, ce, ue) in dimms {
        let dir = format!("{EDAC_MC}/mc{mc}/dimm{n}");
        write(root, &format!("{dir}/dimm_label"), label);
        write(root, &format!("{dir}/dimm_location"), location);
        write(root, &format!("{dir}/size"), &mib.to_string());
        write(root, &format!("{dir}/dimm_mem_type"), "Registered-DDR4");
        write(root, &format!("{dir}/dimm_ce_count"), &ce.to_string());
        write(root, &format!("{dir}/dimm_ue_count"), &ue.to_string());
    }
}

/// Writes the files of a capture's `grep . /sys/...` output (`/sys/...:value` per line;
/// lines that are no such pair, like `# grep ...` headers, are skipped) under `root`.
pub fn write_grep_output(root: &Path, text: &str) {
    for line in text.lines().map(str::trim) {
        let Some((path, value)) = line.split_once(':') else {
            continue;
        };
        if path.starts_with("/sys/") {
            write(root, path, value);
        }
    }
}

/// An EDAC tree from a real capture: the `grep . .../dimm*/dimm_label` output `labels` and the
/// non-zero counts of `find ... -name '*count' | xargs grep . | sed -e '/:0/d'` (`counts`),
/// every count the capture left out as zero (that is what its `sed` removed).
pub fn edac_from_capture(root: &Path, labels: &str, counts: &str) {
    write_grep_output(root, labels);
    let mut mcs = std::collections::BTreeSet::new();
    for line in labels.lines().map(str::trim) {
        let Some((path, _)) = line.split_once(':') else {
            continue;
        };
        let Some(dir) = path.strip_suffix("/dimm_label") else {
            continue;
        };
        write(root, &format!("{dir}/dimm_ce_count"), "0");
        write(root, &format!("{dir}/dimm_ue_count"), "0");
        if let Some((mc, _)) = dir.rsplit_once('/') {
            mcs.insert(mc.to_string());
        }
    }
    for mc in mcs {
        for f in ["ce_count", "ue_count", "ce_noinfo_count", "ue_noinfo_count"] {
            write(root, &format!("{mc}/{f}"), "0");
        }
    }
    write_grep_output(root, counts);
}

/// A count file's value under `root`. Panics when it is missing or no number.
pub fn read_count(root: &Path, path: &str) -> u64 {
    let p = root.join(path.trim_start_matches('/'));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    text.trim()
        .parse()
        .unwrap_or_else(|e| panic!("{}: {text:?}: {e}", p.display()))
}

fn add(root: &Path, path: &str, n: u64) {
    let v = read_count(root, path) + n;
    write(root, path, &v.to_string());
}

/// Counts `ce` corrected and `ue` uncorrected errors on `mc<M>/dimm<N>` (and its controller),
/// as the driver does when the memory reports them.
pub fn add_edac_errors(root: &Path, mc: u32, dimm: u32, ce: u64, ue: u64) {
    let dir = format!("{EDAC_MC}/mc{mc}");
    add(root, &format!("{dir}/dimm{dimm}/dimm_ce_count"), ce);
    add(root, &format!("{dir}/dimm{dimm}/dimm_ue_count"), ue);
    add(root, &format!("{dir}/ce_count"), ce);
    add(root, &format!("{dir}/ue_count"), ue);
}

/// The kinds of `aer_dev_correctable` (Linux 6.x names) and the total line.
const CORRECTABLE: [&str; 8] = [
    "RxErr",
    "BadTLP",
    "BadDLLP",
    "Rollover",
    "Timeout",
    "NonFatalErr",
    "CorrIntErr",
    "HeaderOF",
];
/// The kinds of `aer_dev_nonfatal` and `aer_dev_fatal`.
const UNCORRECTABLE: [&str; 6] = ["DLP", "SDES", "TLP", "FCP", "CmpltTO", "MalfTLP"];

fn aer_file(kinds: &[&str], counts: &[(&str, u64)], total_key: &str) -> String {
    let mut text = String::new();
    let mut total = 0;
    for k in kinds {
        let n = counts.iter().find(|(c, _)| c == k).map_or(0, |c| c.1);
        total += n;
        text += &format!("{k} {n}\n");
    }
    text + &format!("{total_key} {total}")
}

/// Writes `aer_dev_{correctable,nonfatal,fatal}` of PCI function `address` (under
/// `/sys/bus/pci/devices`, as [`crate::pci_function`] links it) with the given counts per kind
/// (`[("RxErr", 2)]`).
pub fn aer_files(
    root: &Path,
    address: &str,
    correctable: &[(&str, u64)],
    nonfatal: &[(&str, u64)],
    fatal: &[(&str, u64)],
) {
    let dir = format!("/sys/bus/pci/devices/{address}");
    write(
        root,
        &format!("{dir}/aer_dev_correctable"),
        &aer_file(&CORRECTABLE, correctable, "TOTAL_ERR_COR"),
    );
    write(
        root,
        &format!("{dir}/aer_dev_nonfatal"),
        &aer_file(&UNCORRECTABLE, nonfatal, "TOTAL_ERR_NONFATAL"),
    );
    write(
        root,
        &format!("{dir}/aer_dev_fatal"),
        &aer_file(&UNCORRECTABLE, fatal, "TOTAL_ERR_FATAL"),
    );
}

/// Sets `current_link_speed` and `current_link_width` of `address`: the link retrained.
pub fn set_link(root: &Path, address: &str, speed: &str, width: u32) {
    let dir = format!("/sys/bus/pci/devices/{address}");
    write(root, &format!("{dir}/current_link_speed"), speed);
    write(
        root,
        &format!("{dir}/current_link_width"),
        &width.to_string(),
    );
}

/// Writes `cpu<N>/thermal_throttle/{core,package}_throttle_count` (and the max/total time
/// files the kernel has beside them) for every CPU of `cpus`, all at `count`.
pub fn thermal_throttle_tree(root: &Path, cpus: &[u32], count: u64) {
    for cpu in cpus {
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/thermal_throttle");
        for f in ["core_throttle_count", "package_throttle_count"] {
            write(root, &format!("{dir}/{f}"), &count.to_string());
        }
        for f in [
            "core_throttle_max_time_ms",
            "core_throttle_total_time_ms",
            "package_throttle_max_time_ms",
            "package_throttle_total_time_ms",
        ] {
            write(root, &format!("{dir}/{f}"), "0");
        }
    }
}

/// Adds `events` to `cpu<N>`'s `kind` counter (`core` or `package`): the CPU throttled.
pub fn add_throttle(root: &Path, cpu: u32, kind: &str, events: u64) {
    add(
        root,
        &format!("/sys/devices/system/cpu/cpu{cpu}/thermal_throttle/{kind}_throttle_count"),
        events,
    );
}

/// Creates the file standing for `/dev/kmsg` under `root` (empty).
pub fn kmsg_file(root: &Path) {
    let p = root.join("dev/kmsg");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, "").unwrap_or_else(|e| panic!("{}: {e}", p.display()));
}

/// Appends kernel log records (`/dev/kmsg` framing: `<prio>,<seq>,<usec>,-;<text>`) of `lines`.
pub fn log(root: &Path, lines: &[&str]) {
    use std::io::Write as _;
    let p = root.join("dev/kmsg");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    for (i, l) in lines.iter().enumerate() {
        writeln!(f, "2,{},{},-;{l}", 1000 + i, 5_000_000 + i).unwrap();
    }
}
