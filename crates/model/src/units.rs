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
    const UNITS: [(&str, f64); 4] = [("TB/s", 1e12), ("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)];
    for (name, unit) in UNITS {
        if bytes_per_s >= unit {
            return format!("{} {name}", three_significant(bytes_per_s / unit));
        }
    }
    format!("{} B/s", three_significant(bytes_per_s))
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
