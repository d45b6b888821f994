//! The kernel's own RAID-6 choice and boot-time benchmark, from its log.
//!
//! Source: lib/raid6/algos.c prints, at boot or when raid6_pq loads,
//! `raid6: avx2x4   gen() 12345 MB/s`, `raid6: .... xor()  6789 MB/s, rmw enabled`,
//! `raid6: using algorithm avx2x4 gen() 12345 MB/s` and `raid6: using avx2x2 recovery algorithm`;
//! with CONFIG_RAID6_PQ_BENCHMARK unset only `raid6: skipped pq benchmark and selected avx512x4`;
//! kernels before 4.x print `raid6: sse2x4    5432 MB/s` and
//! `raid6: using algorithm sse2x4 (5432 MB/s)`. The kernel computes its figure as
//! `(calls · HZ · data_disks) >> (20 - PAGE_SHIFT + RAID6_TIME_JIFFIES_LG2)`, i.e. bytes of data
//! per second shifted right by 20: its "MB/s" is MiB/s (2^20 bytes/s), converted here to bytes/s.
//! Since 5.x the test stripe is 6 data pages + P + Q (RAID6_TEST_DISKS = 8, one page per disk).
//!
//! Lines may come from `dmesg` (`[    0.276695] raid6: ...`) or `/dev/kmsg`
//! (`6,312,276695,-;raid6: ...`); only the text after `raid6: ` is read.

use serde::{Deserialize, Serialize};

/// One algorithm's boot-time figure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelGenFigure {
    /// Kernel name (`avx2x4`, `neonx4`, `int64x8`, `sse2x4`, ...).
    pub algorithm: String,
    /// gen() rate, data bytes per second (the kernel's MiB/s × 2^20).
    pub gen_bandwidth_bytes_per_s: u64,
}

/// What the kernel log says about RAID-6.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelRaid6Log {
    /// Per-algorithm gen() figures, in log order (empty when the benchmark was skipped).
    pub gen_figures: Vec<KernelGenFigure>,
    /// The algorithm the kernel selected for gen().
    pub selected_algorithm: Option<String>,
    /// The selected algorithm's gen() rate, data bytes per second; `None` when the kernel
    /// skipped its benchmark (CONFIG_RAID6_PQ_BENCHMARK unset).
    pub selected_gen_bandwidth_bytes_per_s: Option<u64>,
    /// Whether the log says the benchmark was skipped.
    pub benchmark_skipped: bool,
    /// xor() (read-modify-write) rate of the selected algorithm, bytes per second, when printed.
    pub xor_bandwidth_bytes_per_s: Option<u64>,
    /// The recovery algorithm the kernel chose.
    pub recovery_algorithm: Option<String>,
}

const MIB: u64 = 1 << 20;

/// Parses `<number> MB/s` at the start of `s` (after optional spaces or `(`); the number is
/// the kernel's MiB/s, returned as bytes/s.
fn rate(s: &str) -> Option<u64> {
    let s = s.trim_start_matches([' ', '(']);
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: u64 = s.get(..end)?.parse().ok()?;
    let rest = s.get(end..)?.trim_start();
    rest.starts_with("MB/s").then(|| n.saturating_mul(MIB))
}

/// Parses kernel log text (any mix of lines). Returns `None` when no `raid6:` line is present.
/// Unrecognised `raid6:` lines are ignored.
pub fn parse_kernel_log(text: &str) -> Option<KernelRaid6Log> {
    let mut out = KernelRaid6Log::default();
    let mut seen = false;
    for line in text.lines() {
        let Some(pos) = line.find("raid6: ") else {
            continue;
        };
        seen = true;
        let msg = line[pos + "raid6: ".len()..].trim();
        if let Some(rest) = msg.strip_prefix("skipped pq benchmark and selected ") {
            out.benchmark_skipped = true;
            out.selected_algorithm = Some(rest.trim().to_string());
        } else if let Some(rest) = msg.strip_prefix("using algorithm ") {
            let mut it = rest.splitn(2, char::is_whitespace);
            let name = it.next().unwrap_or("").to_string();
            let tail = it.next().unwrap_or("").trim_start();
            let tail = tail.strip_prefix("gen()").unwrap_or(tail);
            out.selected_gen_bandwidth_bytes_per_s = rate(tail);
            if !name.is_empty() {
                out.selected_algorithm = Some(name);
            }
        } else if let Some(rest) = msg.strip_prefix("using ") {
            if let Some(name) = rest.strip_suffix(" recovery algorithm") {
                out.recovery_algorithm = Some(name.trim().to_string());
            }
        } else if let Some(rest) = msg.strip_prefix("....") {
            if let Some(r) = rest.trim_start().strip_prefix("xor()") {
                out.xor_bandwidth_bytes_per_s = rate(r);
            }
        } else {
            let mut it = msg.splitn(2, char::is_whitespace);
            let name = it.next().unwrap_or("");
            let tail = it.next().unwrap_or("").trim_start();
            let (is_gen, tail) = match tail.strip_prefix("gen()") {
                Some(t) => (true, t),
                None => (!tail.starts_with("xor()"), tail),
            };
            if is_gen
                && !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                if let Some(bps) = rate(tail) {
                    out.gen_figures.push(KernelGenFigure {
                        algorithm: name.to_string(),
                        gen_bandwidth_bytes_per_s: bps,
                    });
                }
            }
        }
    }
    seen.then_some(out)
}

/// Reads the kernel log: `/dev/kmsg` (all records still in the ring buffer, through
/// [`hwsurvey_probe::kmsg::read_all`], the reader the hardware watch shares) when it is
/// readable, else the `dmesg` command's output.
///
/// Errors: a sentence saying why neither source could be read (permission, kernel.dmesg_restrict,
/// no such command).
pub fn read_kernel_log() -> Result<String, String> {
    let kmsg = hwsurvey_probe::kmsg::read_all(&hwsurvey_probe::SysRoot::live());
    if let Ok(text) = &kmsg {
        if !text.is_empty() {
            return Ok(text.clone());
        }
    }
    let why = match kmsg {
        Ok(_) => "/dev/kmsg empty".to_string(),
        Err(e) => e.to_string(),
    };
    match std::process::Command::new("dmesg").output() {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
        Ok(o) => Err(format!(
            "{why}, and `dmesg` failed ({}): {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(format!("{why}, and `dmesg` could not run: {e}")),
    }
}

/// Reads and parses the kernel log: `Ok(None)` when readable but without `raid6:` lines
/// (raid6_pq never loaded, or its lines rotated out of the ring buffer).
pub fn probe_kernel_raid6() -> Result<Option<KernelRaid6Log>, String> {
    read_kernel_log().map(|t| parse_kernel_log(&t))
}
