//! Unit constants and the one place where human-scaled units are formatted.
//!
//! Files carry base units (bytes, nanoseconds, bytes per second) with the unit in the field
//! name; people get scaled units. Decimal (MB = 10^6) and binary (MiB = 2^20) prefixes are
//! never mixed silently: each formatter says which one it uses.

/// 2^10 bytes.
pub const KIB: u64 = 1 << 10;
/// 2^20 bytes.
pub const MIB: u64 = 1 << 20;
/// 2^30 bytes.
pub const GIB: u64 = 1 << 30;
/// 2^40 bytes.
pub const TIB: u64 = 1 << 40;
/// 10^6 bytes.
pub const MB: u64 = 1_000_000;
/// 10^9 bytes.
pub const GB: u64 = 1_000_000_000;

/// Formats a size in bytes with binary prefixes (KiB, MiB, GiB, TiB), e.g. `32 MiB`,
/// `1.5 GiB`. Used for memory and cache sizes, which hardware builds in powers of two.
pub fn format_bytes_binary(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [("TiB", TIB), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)];
    for (name, unit) in UNITS {
        if bytes >= unit {
            return trim_fraction(bytes as f64 / unit as f64, name);
        }
    }
    format!("{bytes} B")
}

/// Formats a rate in bytes per second with decimal prefixes (MB/s, GB/s), as STREAM,
/// fio and PCIe specifications do: `7.88 GB/s`.
pub fn format_rate_decimal(bytes_per_s: f64) -> String {
    if !bytes_per_s.is_finite() {
        return "n/a".to_string();
    }
    let (v, p) = decimal_prefixed(bytes_per_s);
    format!("{v} {p}B/s")
}

/// A value with three significant digits and a decimal prefix (`""`, `k`, `M`, `G`, `T`:
/// 10^3 steps), the prefix chosen after rounding, so that 999,844 is `("1.00", "M")`, never
/// `("1000", "k")`. Negative values keep their sign; beyond T the number grows.
pub fn decimal_prefixed(value: f64) -> (String, &'static str) {
    const PREFIXES: [(&str, f64); 5] = [("", 1.0), ("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12)];
    let mut i = PREFIXES
        .iter()
        .rposition(|(_, d)| value.abs() >= *d)
        .unwrap_or(0);
    loop {
        let text = three_significant(value / PREFIXES[i].1);
        let rounded_up = text
            .trim_start_matches('-')
            .parse::<f64>()
            .is_ok_and(|v| v >= 1000.0);
        if rounded_up && i + 1 < PREFIXES.len() {
            i += 1;
            continue;
        }
        return (text, PREFIXES[i].0);
    }
}

fn trim_fraction(value: f64, unit: &str) -> String {
    if (value - value.round()).abs() < 1e-9 {
        format!("{} {unit}", value.round() as u64)
    } else {
        format!("{} {unit}", three_significant(value))
    }
}

/// A count with its noun, singular for exactly one: `plural(1, "core")` is `"1 core"`,
/// `plural(0, "core")` is `"0 cores"`. For regular English plurals only (adds `s`).
pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A machine's CPUs as lscpu users read them: sockets x cores per socket x threads per core,
/// `"2 sockets x 4 cores x 2 threads"`, from the totals (packages, physical cores and
/// hardware threads of the whole machine); `first` joins the sockets to the rest (`" x "`, or
/// `" of "` in a sentence: `"2 sockets of 4 cores x 2 threads"`). Where the sockets or the
/// cores differ (cores of different kinds, a CPU offline) no per-socket figure is true, and
/// the totals are said as such: `"2 sockets, 10 cores and 12 threads in all"`.
pub fn sockets_cores_threads(packages: u64, cores: u64, threads: u64, first: &str) -> String {
    if packages > 0 && cores > 0 && cores.is_multiple_of(packages) && threads.is_multiple_of(cores)
    {
        format!(
            "{}{first}{} x {}",
            plural(packages, "socket"),
            plural(cores / packages, "core"),
            plural(threads / cores, "thread")
        )
    } else {
        format!(
            "{}, {} and {} in all",
            plural(packages, "socket"),
            plural(cores, "core"),
            plural(threads, "thread")
        )
    }
}

/// Three significant digits, without scientific notation: 7.88, 48.2, 123.
pub fn three_significant(value: f64) -> String {
    let abs = value.abs();
    if abs >= 100.0 {
        format!("{value:.0}")
    } else if abs >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::sockets_cores_threads;

    #[test]
    fn cpus_per_socket_and_core_or_totals() {
        // the x86-2s4n-smt guest: 2 packages, 8 cores, 16 threads
        assert_eq!(
            sockets_cores_threads(2, 8, 16, " x "),
            "2 sockets x 4 cores x 2 threads"
        );
        assert_eq!(
            sockets_cores_threads(1, 2, 2, " of "),
            "1 socket of 2 cores x 1 thread"
        );
        // the Raptor Lake capture: 6 P-cores of 2 threads and 8 E-cores of 1 in one package
        assert_eq!(
            sockets_cores_threads(1, 14, 20, " x "),
            "1 socket, 14 cores and 20 threads in all"
        );
        assert_eq!(
            sockets_cores_threads(0, 0, 0, " x "),
            "0 sockets, 0 cores and 0 threads in all"
        );
    }

    #[test]
    fn prefix_chosen_after_rounding() {
        assert_eq!(decimal_prefixed(999_844.0), ("1.00".to_string(), "M"));
        assert_eq!(decimal_prefixed(999_400.0), ("999".to_string(), "k"));
        assert_eq!(decimal_prefixed(2_110_000.0), ("2.11".to_string(), "M"));
        assert_eq!(decimal_prefixed(999.96), ("1.00".to_string(), "k"));
        assert_eq!(decimal_prefixed(12.5), ("12.5".to_string(), ""));
        assert_eq!(format_rate_decimal(999_990_000.0), "1.00 GB/s");
        assert_eq!(format_rate_decimal(7.88e9), "7.88 GB/s");
        assert_eq!(format_rate_decimal(512.0), "512 B/s");
    }

    use super::*;

    #[test]
    fn binary_sizes() {
        assert_eq!(format_bytes_binary(512), "512 B");
        assert_eq!(format_bytes_binary(32 * MIB), "32 MiB");
        assert_eq!(format_bytes_binary(1280 * KIB), "1.25 MiB");
        assert_eq!(format_bytes_binary(51_539_607_552), "48 GiB");
    }

    #[test]
    fn decimal_rates() {
        assert_eq!(format_rate_decimal(7.877e9), "7.88 GB/s");
        assert_eq!(format_rate_decimal(4.0e9), "4.00 GB/s");
        assert_eq!(format_rate_decimal(f64::NAN), "n/a");
    }
}

/// A count of CPUs' worth of run time (a CPU quota's quota / period) for people: two decimals
/// (`1.50`), or as many as it takes (up to 6) when two would round it to another value
/// (`1.99999` for 199999 / 100000, never `2.00`; `0.001`, never `0.00`).
pub fn format_cpus(cpus: f64) -> String {
    let two = format!("{cpus:.2}");
    if (two.parse::<f64>().unwrap_or(f64::NAN) - cpus).abs() < 1e-12 {
        return two;
    }
    let six = format!("{cpus:.6}");
    six.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod cpus_tests {
    use super::format_cpus;

    #[test]
    fn quotas_never_round_to_another_value() {
        assert_eq!(format_cpus(1.5), "1.50");
        assert_eq!(format_cpus(2.0), "2.00");
        assert_eq!(format_cpus(199_999.0 / 100_000.0), "1.99999");
        assert_eq!(format_cpus(1_000.0 / 1_000_000.0), "0.001");
        assert_eq!(format_cpus(0.5), "0.50");
    }
}
