//! Numbers for people: a value in a metric's base unit, scaled and with its unit
//! (`12.3 GB/s`, `81.2 ns`, `1.5 GiB`). Files keep base units; only renderers call these.

use hwsurvey_model::units::{format_bytes_binary, format_rate_decimal, three_significant};

/// Base unit of a metric name (`bandwidth_bytes_per_s` -> `bytes_per_s`).
pub fn unit_of(name: &str) -> String {
    for u in [
        "bytes_per_s",
        "ns",
        "ops_per_s",
        "iops",
        "per_s",
        "bytes",
        "s",
    ] {
        if name.ends_with(&format!("_{u}")) || name == u {
            return u.to_string();
        }
    }
    name.to_string()
}

/// A number in a base unit for people.
pub fn human(value: f64, unit: &str) -> String {
    match unit {
        "bytes_per_s" => format_rate_decimal(value),
        "ns" => format!("{} ns", three_significant(value)),
        "bytes" => format_bytes_binary(value.max(0.0) as u64),
        "s" => format!("{} s", three_significant(value)),
        u => {
            let (v, p) = hwsurvey_model::units::decimal_prefixed(value);
            format!("{v}{p} {}", u.replace("_per_s", "/s"))
        }
    }
}
