//! Absurd counts and a file that contradicts itself are refused by the loader with the
//! field's JSON path: points of 0 threads or no CPUs (compare showed "STREAM Triad
//! peak @0"), a hugetlb pool of 2^63 pages (fleet printed `9223372036854775808 x 2 MiB` for a
//! host it also said had no pools), free pages beyond the pool, MemAvailable above MemTotal,
//! a last-level cache of 0 instances, pools reserved in one part of the file and none in the
//! other. The example file loads as it is.

use serde_json::{json, Value};

fn example() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../reports/examples/v1/x86_64-standard.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn load(doc: &Value) -> Result<hwsurvey_result::ResultFile, String> {
    hwsurvey_result::parse("r.json", doc.to_string().as_bytes()).map_err(|e| e.to_string())
}

#[test]
fn the_example_loads() {
    load(&example()).unwrap();
}

#[test]
fn absurd_counts_are_refused_with_the_fields_path() {
    let mem_total = example()
        .pointer("/machine/memory/meminfo/known/mem_total_bytes")
        .and_then(Value::as_u64)
        .unwrap();
    type Edit = fn(&mut Value);
    let cases: Vec<(Edit, &str)> = vec![
        (
            |d| {
                d["tests"][0]["point"]["threads"] = json!(0);
                d["tests"][0]["point"]["cpus"] = json!([]);
            },
            "at tests[0].point.threads (test \"mem.bandwidth\" \"stream.copy/threads=1\"): 0 is not a number of worker threads (1 to 4096)",
        ),
        (
            |d| d["tests"][0]["point"]["cpus"] = json!([]),
            "at tests[0].point.cpus (test \"mem.bandwidth\" \"stream.copy/threads=1\"): 0 CPUs for 1 threads",
        ),
        (
            |d| d["plan"]["families"][0]["points"][0]["threads"] = json!(0),
            "at plan.families[0].points[0].threads: 0 is not a number of worker threads",
        ),
        (
            |d| d["plan"]["usable_cpus"] = json!(0),
            "at plan.usable_cpus: 0 usable CPUs",
        ),
        (
            |d| {
                d["environment"]["huge_pools"][0]["total_pages"] = json!(1u64 << 63);
                d["environment"]["huge_pools"][0]["free_pages"] = json!(0);
            },
            "at environment.huge_pools[0].total_pages: 9223372036854775808 pages of 2097152 bytes (19342813113834066795298816 bytes) is more than the machine's MemTotal",
        ),
        (
            |d| d["environment"]["huge_pools"][0]["free_pages"] = json!(5),
            "at environment.huge_pools[0].free_pages: 5 free pages of a pool of 0",
        ),
        (
            |d| {
                d["machine"]["pages"]["hugetlb"][0]["system"]["total_pages"] =
                    json!({ "known": 1u64 << 40 })
            },
            "at machine.pages.hugetlb[0].system.total_pages.known: 1099511627776 pages of 2097152 bytes",
        ),
        (
            |d| {
                let total = d
                    .pointer("/machine/memory/meminfo/known/mem_total_bytes")
                    .and_then(Value::as_u64)
                    .unwrap();
                d["environment"]["mem_available_bytes"] = json!({ "known": total + 4096 });
            },
            "bytes available of a MemTotal of",
        ),
        (
            |d| d["environment"]["llc"]["known"]["instances"] = json!(0),
            "at environment.llc.known: 0 instances of 33554432 bytes do not make the total of 33554432 bytes",
        ),
    ];
    for (edit, want) in cases {
        let mut doc = example();
        edit(&mut doc);
        let e = load(&doc).unwrap_err();
        assert!(e.starts_with("r.json: "), "{e}");
        assert!(e.contains(want), "want {want:?}\n got {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    // a pool as large as the memory is still a pool the machine can hold
    let mut doc = example();
    let pages = mem_total / (2 << 20);
    doc["environment"]["huge_pools"][0]["total_pages"] = json!(pages);
    doc["machine"]["pages"]["hugetlb"][0]["system"]["total_pages"] = json!({ "known": pages });
    doc["machine"]["pages"]["hugetlb_total_bytes"] = json!({ "known": pages * (2 << 20) });
    load(&doc).unwrap();
}

/// One file that says two things: the host had 2^63 pages in its run environment and
/// empty pools in its probe document. Pools reserved in one and none in the other are
/// refused, whichever side holds them.
#[test]
fn pools_reserved_in_the_environment_and_none_in_the_probe_are_refused() {
    let mut doc = example();
    doc["environment"]["huge_pools"][0]["total_pages"] = json!(16);
    let e = load(&doc).unwrap_err();
    assert!(
        e.contains("at environment.huge_pools: hold 33554432 bytes of huge pages, but the probe found 0 (machine.pages.hugetlb_total_bytes): the file contradicts itself"),
        "{e}"
    );
    let mut doc = example();
    doc["machine"]["pages"]["hugetlb"][0]["system"]["total_pages"] = json!({ "known": 16 });
    let e = load(&doc).unwrap_err();
    assert!(
        e.contains("at machine.pages.hugetlb_total_bytes.known: 0 bytes, but the pools of machine.pages.hugetlb hold 33554432 bytes: the file contradicts itself"),
        "{e}"
    );
}
