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
        "hz",
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
        "hz" => {
            let (v, p) = hwsurvey_model::units::decimal_prefixed(value);
            format!("{v} {p}Hz")
        }
        u => {
            let (v, p) = hwsurvey_model::units::decimal_prefixed(value);
            format!("{v}{p} {}", u.replace("_per_s", "/s"))
        }
    }
}

/// Seconds for people: `42 s`, `3 min 30 s`, `1 h 05 min`; a duration that rounds to no
/// second but is not zero is `under 1 s` (cpu.clock's 0.26 s read "estimated 0 s").
pub fn duration_text(s: f64) -> String {
    if s > 0.0 && s < 0.5 {
        return "under 1 s".into();
    }
    let s = s.max(0.0).round() as u64;
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    }
}

/// A duration in ns with the unit that keeps it readable: ns below 1 µs, µs below 1 ms, else ms.
pub fn human_ns(v: f64) -> String {
    if v.abs() < 1e3 {
        format!("{} ns", three_significant(v))
    } else if v.abs() < 1e6 {
        format!("{} µs", three_significant(v / 1e3))
    } else {
        format!("{} ms", three_significant(v / 1e6))
    }
}

/// `text` with every whole number of nanoseconds (`p99 4091903 ns`, as result files store
/// the notes of a run) written in the unit people read ([`human_ns`]: `p99 4.09 ms`); numbers
/// below 1000 ns and other text stay as they are.
pub fn humanize_ns(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(" ns") {
        let (head, tail) = rest.split_at(i);
        let digits = head.len() - head.bytes().rev().take_while(u8::is_ascii_digit).count();
        let number = &head[digits..];
        // a whole word: no letter, digit, '.' or ',' before it, and the unit ends there
        let whole_before = head[..digits]
            .chars()
            .last()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '.' || c == ','));
        let whole_after = tail[3..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric());
        match number.parse::<u64>() {
            Ok(n) if n >= 1000 && whole_before && whole_after => {
                out += &head[..digits];
                out += &human_ns(n as f64);
            }
            _ => {
                out += head;
                out += " ns";
            }
        }
        rest = &tail[3..];
    }
    out += rest;
    out
}

/// A metric's value with its unit, read from the metric name's suffix (`_bytes_per_s`, `_ns`,
/// `_ns_per_io`, `_per_s`, `iops`).
pub fn human_metric(name: &str, v: f64) -> String {
    if name.ends_with("bytes_per_s") {
        format_rate_decimal(v)
    } else if name.ends_with("_hz") {
        human(v, "hz")
    } else if name.ends_with("_ns") {
        human_ns(v)
    } else if name.ends_with("_ns_per_io") {
        format!("{} CPU/IO", human_ns(v))
    } else if name.ends_with("_per_s") || name == "iops" {
        let (v, u) = hwsurvey_model::units::decimal_prefixed(v);
        let what = if name == "iops" { "IOPS" } else { "/s" };
        format!("{v} {u}{what}")
    } else {
        three_significant(v)
    }
}

#[cfg(test)]
mod duration_tests {
    use super::duration_text;

    #[test]
    fn a_short_duration_is_never_written_as_zero() {
        assert_eq!(duration_text(0.26), "under 1 s");
        assert_eq!(duration_text(0.0), "0 s");
        assert_eq!(duration_text(0.5), "1 s");
        assert_eq!(duration_text(42.4), "42 s");
        assert_eq!(duration_text(210.0), "3 min 30 s");
        assert_eq!(duration_text(3900.0), "1 h 05 min");
    }
}
