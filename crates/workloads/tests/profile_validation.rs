//! Profile validation: every number and list of `[run]` and of each family's params has a
//! stated range, and a value out of it is a `ProfileError` naming the file, the line, the key
//! and the range (tester report: `oversubscription_factor = 100000` planned 200000 threads,
//! `stream_kernels = ["copy","copy"]` a duplicate test id, `rows = 0`, `queue_depths = [0]`,
//! a step factor of 1 silently made 2, a minimum working set above the maximum, block sizes
//! 0 and 3 silently skipped, `[]` lists accepted, `data_blocks = [1, 300]`, `id = ""`).

use hwsurvey_engine::profile::{Profile, ProfileError, MAX_THREADS_PER_POINT, QUICK_TOML};
use hwsurvey_workloads::families::{check_profile, ids};

/// `text` with the value of `key` inside `[table]` (`""`: the top level) replaced by
/// `value`; also the 1-based line it is on.
fn with_value(text: &str, table: &str, key: &str, value: &str) -> (String, usize) {
    let header = format!("[{table}]");
    let mut inside = table.is_empty();
    let mut found = None;
    let lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let t = l.trim();
            if t.starts_with('[') {
                inside = t == header;
            } else if inside && found.is_none() {
                if let Some(rest) = t.strip_prefix(key) {
                    if rest.trim_start().starts_with('=') {
                        found = Some(i + 1);
                        return format!("{key} = {value}");
                    }
                }
            }
            l.to_string()
        })
        .collect();
    let line = found.unwrap_or_else(|| panic!("no `{key} =` under [{table}] in quick.toml"));
    (lines.join("\n") + "\n", line)
}

fn load(text: &str) -> Result<Profile, ProfileError> {
    let ids = ids();
    let p = Profile::parse("copy.toml", text, &ids)?;
    check_profile(&p)?;
    Ok(p)
}

const RUN: &str = "run";
const BW: &str = "families.\"mem.bandwidth\".params";
const SVC: &str = "families.\"service.point_select\".params";
const LL: &str = "families.\"mem.loaded_latency\".params";
const LAT: &str = "families.\"mem.latency\".params";
const CPU: &str = "families.\"cpu.scaling\".params";
const C2C: &str = "families.\"c2c.latency\".params";
const SYNC: &str = "families.\"sync.contention\".params";
const RAID: &str = "families.\"raid.parity\".params";
const IO: &str = "families.\"storage.iops\".params";

/// (table, key, bad value, part of the expected message: the range or rule).
const BAD: &[(&str, &str, &str, &str)] = &[
    ("", "id", "\"\"", "non-empty profile id"),
    ("", "id", "\"my profile\"", "without spaces"),
    (RUN, "oversubscription_factor", "100000", "1..=64"),
    (RUN, "oversubscription_factor", "0", "1..=64"),
    (RUN, "sample_min_s", "0", "(0, 60]"),
    (RUN, "sample_min_s", "1e9", "(0, 60]"),
    (RUN, "sample_min_clock_ticks", "0", "1..=1000000"),
    (RUN, "warmup_s", "-1", "[0, 60]"),
    (RUN, "warmup_s", "3600", "[0, 60]"),
    (RUN, "samples_min", "1", "at least 2"),
    (RUN, "samples_max", "100000", "2..=1000"),
    (RUN, "samples_max", "1", "2..=1000"),
    (RUN, "target_cv", "0", "(0, 1]"),
    (RUN, "target_cv", "5", "(0, 1]"),
    (RUN, "memory_fraction", "0", "(0, 1]"),
    (RUN, "memory_llc_multiple", "1000", "(0, 64]"),
    (
        RUN,
        "memory_min_working_set_bytes",
        "0",
        "4096..=1099511627776",
    ),
    (
        RUN,
        "memory_min_working_set_bytes",
        "99999999999",
        ">= memory_min_working_set_bytes",
    ),
    (
        RUN,
        "memory_max_working_set_bytes",
        "0",
        "4096..=1099511627776",
    ),
    (
        BW,
        "stream_kernels",
        "[\"copy\", \"copy\"]",
        "without duplicates, got \"copy\" twice",
    ),
    (BW, "stream_kernels", "[]", "non-empty"),
    (BW, "block_sizes_bytes", "[0, 3]", "64..=1073741824"),
    (BW, "block_sizes_bytes", "[]", "non-empty"),
    (BW, "block_sizes_bytes", "[4100]", "multiple of 8"),
    (
        BW,
        "block_sizes_bytes",
        "[4096, 4096]",
        "without duplicates",
    ),
    (
        BW,
        "block_ops",
        "[\"read\", \"read\"]",
        "without duplicates",
    ),
    (SVC, "rows", "0", "1..=100000000"),
    (SVC, "page_modes", "[]", "non-empty"),
    (SVC, "max_clients", "0", "1..=4096"),
    (SVC, "max_clients", "200000", "1..=4096"),
    (SVC, "warmup_s", "-0.5", "[0, 60]"),
    (SVC, "window_s", "0", "(0, 60]"),
    (SVC, "p99_bound_ns", "0", "1..=60000000000"),
    (SVC, "search_window_s", "0", "(0, 60]"),
    (SVC, "search_max_trials", "0", "1..=100"),
    (SVC, "search_start_fraction", "0", "(0, 1]"),
    (SVC, "search_step_factor", "1.0", "[1.01, 16]"),
    (SVC, "search_resolution", "0", "(0, 1]"),
    (SVC, "confirm_trials", "1000", "0..=100"),
    (LL, "load_kinds", "[]", "non-empty"),
    (
        LL,
        "delays_ns_per_chunk",
        "[2000, 2000]",
        "without duplicates",
    ),
    (LL, "delays_ns_per_chunk", "[2000, 1000]", "ascending"),
    (LL, "load_buffer_bytes", "0", "4096..="),
    (
        LL,
        "load_buffer_bytes",
        "5000",
        "multiple of the 4096-byte chunk",
    ),
    (LL, "warmup_s", "-1", "[0, 60]"),
    (LL, "window_s", "0", "(0, 60]"),
    (LAT, "working_set_min_bytes", "0", "128..=1099511627776"),
    (LAT, "working_set_step_factor", "1", "2..=1024"),
    (
        LAT,
        "orders",
        "[\"full_random\", \"full_random\"]",
        "without duplicates",
    ),
    (LAT, "page_local_window_pages", "0", "1..=1048576"),
    (LAT, "page_local_min_bytes", "0", "128..="),
    (LAT, "page_modes", "[]", "non-empty"),
    (LAT, "huge_min_bytes", "0", "128..="),
    (CPU, "kernels", "[]", "non-empty"),
    (CPU, "iterations_per_rep", "0", "1..=1000000000"),
    (C2C, "calibration_round_trips", "0", "1..=10000000"),
    (
        SYNC,
        "primitives",
        "[\"mutex\", \"mutex\"]",
        "without duplicates",
    ),
    (RAID, "data_blocks", "[1, 300]", "2..=255"),
    (RAID, "data_blocks", "[]", "non-empty"),
    (RAID, "chunk_bytes", "0", "1..=16777216"),
    (RAID, "stripes_per_thread", "0", "1..=1024"),
    (RAID, "paths", "[]", "non-empty"),
    (RAID, "ops", "[\"gen\", \"gen\"]", "without duplicates"),
    (IO, "patterns", "[]", "non-empty"),
    (
        IO,
        "patterns",
        "[\"randread_8k\"]",
        "randread_4k, randwrite_4k",
    ),
    (IO, "threads_per_target", "[0]", "1..=256"),
    (IO, "queue_depths", "[0]", "1..=1024"),
    (
        IO,
        "queue_depths",
        "[4, 4]",
        "without duplicates, got 4 twice",
    ),
    (IO, "file_size_bytes", "0", "1048576..="),
    (IO, "file_size_bytes", "8388609", "multiple of 1 MiB"),
    (IO, "window_s", "0", "(0, 60]"),
];

#[test]
fn every_bad_value_is_an_error_naming_file_line_key_and_range() {
    let mut failures = Vec::new();
    for &(table, key, value, want) in BAD {
        let (text, line) = with_value(QUICK_TOML, table, key, value);
        // `memory_min_working_set_bytes` above the maximum: the error names the maximum
        let (key, line) = if want.starts_with(">= ") {
            let max = "memory_max_working_set_bytes";
            let line = text
                .lines()
                .position(|l| l.starts_with(max))
                .map(|i| i + 1)
                .unwrap_or(0);
            (max, line)
        } else {
            (key, line)
        };
        let full_key = if table.is_empty() {
            key.to_string()
        } else {
            format!("{table}.{key}")
        };
        match load(&text) {
            Ok(_) => failures.push(format!("{full_key} = {value}: accepted")),
            Err(e) => {
                let shown = e.to_string();
                if e.file != "copy.toml"
                    || e.line != Some(line)
                    || e.key.as_deref() != Some(full_key.as_str())
                    || !shown.contains(want)
                    || !shown.contains(&format!("`{full_key}`"))
                {
                    failures.push(format!(
                        "{full_key} = {value}: want copy.toml:{line}, key and {want:?}; got {shown} (line {:?}, key {:?})",
                        e.line, e.key
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn checked_in_profiles_still_load() {
    for name in ["standard", "quick"] {
        let p = hwsurvey_workloads::families::load_profile(name).unwrap();
        assert_eq!(p.id, name);
        assert!(p.run.oversubscription_factor <= 64);
    }
    for file in ["standard.toml", "quick.toml"] {
        let path = format!("{}/../../profiles/{file}", env!("CARGO_MANIFEST_DIR"));
        let p = hwsurvey_workloads::families::load_profile(&path).unwrap();
        assert_eq!(
            p.families.len(),
            ids().len(),
            "{file}: one section per family"
        );
    }
}

#[test]
fn values_at_the_ends_of_their_ranges_load() {
    for (table, key, value) in [
        (RUN, "oversubscription_factor", "64"),
        (RUN, "oversubscription_factor", "1"),
        (BW, "block_sizes_bytes", "[64, 1073741824]"),
        (LAT, "working_set_step_factor", "2"),
        (RAID, "data_blocks", "[2, 255]"),
        (IO, "queue_depths", "[1]"),
        (SVC, "max_clients", "4096"),
    ] {
        let (text, _) = with_value(QUICK_TOML, table, key, value);
        if let Err(e) = load(&text) {
            panic!("{table}.{key} = {value}: {e}");
        }
    }
    assert_eq!(MAX_THREADS_PER_POINT, 4096);
}

/// What one profile may cost is bounded (524288 storage points were accepted and
/// `run --plan-only` took 1.4 GB for a 19 h plan): a list of more than 64 entries, and more
/// than 256 storage points a target (patterns x threads_per_target x queue_depths), are
/// refused naming the key.
#[test]
fn a_profile_that_would_plan_without_bound_is_refused() {
    let list = |n: usize| {
        format!(
            "[{}]",
            (1..=n)
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let (text, line) = with_value(QUICK_TOML, IO, "queue_depths", &list(1024));
    let e = load(&text).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "copy.toml:{line}: key `families.\"storage.iops\".params.queue_depths`: expected at most 64 entries, got 1024"
        )
    );
    let (text, _) = with_value(QUICK_TOML, IO, "queue_depths", &list(64));
    let (text, _) = with_value(&text, IO, "threads_per_target", &list(64));
    let e = load(&text).unwrap_err().to_string();
    assert!(
        e.ends_with("families.\"storage.iops\".params.queue_depths`: expected at most 256 points a target (patterns x threads_per_target x queue_depths), got 2 x 64 x 64 = 8192"),
        "{e}"
    );
    // at the bound: 2 x 2 x 64
    let (text, _) = with_value(QUICK_TOML, IO, "queue_depths", &list(64));
    let (text, _) = with_value(&text, IO, "threads_per_target", "[1, 2]");
    load(&text).unwrap();
    assert_eq!(hwsurvey_engine::profile::MAX_LIST_ENTRIES, 64);
}
