//! Live clock readings of one CPU, read around a measurement: cpufreq's
//! `/sys/devices/system/cpu/cpuN/cpufreq/{scaling_cur_freq,cpuinfo_max_freq}` (kHz) and, on
//! x86, the APERF/MPERF counters through `/dev/cpu/N/msr` (the msr driver; root and
//! `modprobe msr`), as turbostat reads them.
//!
//! APERF (MSR 0xE8) counts core cycles at the actual clock and MPERF (MSR 0xE7) at a fixed
//! reference rate, both only while the CPU is not halted (Intel SDM vol. 3B, "Hardware
//! Coordination Feedback"; AMD APM vol. 2, "MPERF and APERF"): over a window the CPU spends
//! busy, ΔAPERF / seconds is the clock it ran at (turbostat's `Avg_MHz`, equal to `Bzy_MHz`
//! when busy throughout) and ΔAPERF / ΔMPERF its ratio to the reference.

use hwsurvey_model::CpuId;

use crate::{ProbeError, SysRoot};

/// `IA32_MPERF`.
pub const MSR_MPERF: u64 = 0xE7;
/// `IA32_APERF`.
pub const MSR_APERF: u64 = 0xE8;

/// `/sys/devices/system/cpu/cpu<cpu>/cpufreq/<file>`, kHz (`scaling_cur_freq`,
/// `cpuinfo_max_freq`).
///
/// Errors: the file is missing (no cpufreq driver: VMs, many arm64 and sparc64 kernels) or
/// does not hold a whole number (the error names the path and the text).
pub fn cpufreq_khz(root: &SysRoot, cpu: CpuId, file: &str) -> Result<u64, ProbeError> {
    root.read_parsed(
        &format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq/{file}"),
        "a frequency in kHz (whole number)",
    )
}

/// One CPU's msr device, `/dev/cpu/<cpu>/msr`, open for reading.
#[derive(Debug)]
pub struct MsrDevice {
    path: String,
    file: std::fs::File,
}

impl MsrDevice {
    /// Opens `/dev/cpu/<cpu>/msr`.
    ///
    /// Errors (one line naming the path): not x86 (MSRs are x86 registers), the device is
    /// missing (the msr driver is not loaded), or not readable (needs root or CAP_SYS_RAWIO).
    pub fn open(cpu: CpuId) -> Result<MsrDevice, String> {
        let path = format!("/dev/cpu/{cpu}/msr");
        if !cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
            return Err(format!(
                "{path}: MSRs are x86 registers; this is {}",
                std::env::consts::ARCH
            ));
        }
        match std::fs::File::open(&path) {
            Ok(file) => Ok(MsrDevice { path, file }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
                "{path}: missing (the msr driver is not loaded: modprobe msr)"
            )),
            Err(e) => Err(format!("{path}: {e}")),
        }
    }

    /// Reads MSR `reg` (8 bytes at offset `reg`).
    ///
    /// Errors: the read fails (EIO: the CPU or the hypervisor does not have the register).
    pub fn read(&self, reg: u64) -> Result<u64, String> {
        use std::os::unix::fs::FileExt;
        let mut b = [0u8; 8];
        self.file
            .read_exact_at(&mut b, reg)
            .map_err(|e| format!("{} register {reg:#x}: {e}", self.path))?;
        Ok(u64::from_ne_bytes(b))
    }

    /// Reads APERF and MPERF, in that order.
    ///
    /// Errors: as [`MsrDevice::read`].
    pub fn aperf_mperf(&self) -> Result<(u64, u64), String> {
        Ok((self.read(MSR_APERF)?, self.read(MSR_MPERF)?))
    }
}

/// The clock from two APERF/MPERF readings `seconds` apart: (ΔAPERF / seconds in Hz,
/// ΔAPERF / ΔMPERF). The counters are 64-bit and wrap (differences wrap too).
///
/// Errors: `seconds` not above 0, or MPERF did not advance (the CPU was halted throughout or
/// the counters are frozen), named with the readings.
pub fn aperf_mperf_clock(
    before: (u64, u64),
    after: (u64, u64),
    seconds: f64,
) -> Result<(f64, f64), String> {
    let da = after.0.wrapping_sub(before.0);
    let dm = after.1.wrapping_sub(before.1);
    if !(seconds > 0.0 && seconds.is_finite()) {
        return Err(format!("APERF/MPERF window of {seconds} s"));
    }
    if dm == 0 || da == 0 {
        return Err(format!(
            "APERF {} -> {}, MPERF {} -> {}: the counters did not advance",
            before.0, after.0, before.1, after.1
        ));
    }
    Ok((da as f64 / seconds, da as f64 / dm as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3.0 GHz core over 0.1 s with a 2.0 GHz reference: 3e8 APERF, 2e8 MPERF ticks; the
    /// counters wrap through 2^64 in the window.
    #[test]
    fn aperf_mperf_gives_the_clock_across_a_wrap() {
        let before = (u64::MAX - 1_000, u64::MAX - 5);
        let after = (
            before.0.wrapping_add(300_000_000),
            before.1.wrapping_add(200_000_000),
        );
        let (hz, ratio) = aperf_mperf_clock(before, after, 0.1).unwrap();
        assert!((hz - 3.0e9).abs() < 1.0, "{hz}");
        assert!((ratio - 1.5).abs() < 1e-12, "{ratio}");
        let e = aperf_mperf_clock(before, before, 0.1).unwrap_err();
        assert!(e.contains("did not advance"), "{e}");
        assert!(aperf_mperf_clock(before, after, 0.0).is_err());
    }

    /// cpufreq files under a root: a value, a missing file, a bad value naming the path.
    #[test]
    fn cpufreq_files_read_with_their_path() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("sys/devices/system/cpu/cpu3/cpufreq");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("scaling_cur_freq"), "2893421\n").unwrap();
        std::fs::write(d.join("cpuinfo_max_freq"), "fast\n").unwrap();
        let root = SysRoot::new(dir.path());
        assert_eq!(
            cpufreq_khz(&root, 3, "scaling_cur_freq").unwrap(),
            2_893_421
        );
        assert!(cpufreq_khz(&root, 2, "scaling_cur_freq")
            .unwrap_err()
            .is_missing());
        let e = cpufreq_khz(&root, 3, "cpuinfo_max_freq")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/sys/devices/system/cpu/cpu3/cpufreq/cpuinfo_max_freq")
                && e.contains("fast"),
            "{e}"
        );
    }
}
