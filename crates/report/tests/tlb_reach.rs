//! The TLB reach in the report: the "TLB reach beside the latency knee" table puts each page
//! mode's knee of the x86_64 VM example beside the reach of the TLBs the machine document
//! lists, and says why where it has none.

use std::path::PathBuf;

use hwsurvey_report::tlb::TLB_ID;
use hwsurvey_report::{compare, inputs_with_default_labels, Comparison, Table};
use hwsurvey_result::ResultFile;
use serde_json::json;

fn example(name: &str) -> ResultFile {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/examples")
        .join(name);
    hwsurvey_result::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn table<'a>(c: &'a Comparison, id: &str) -> &'a Table {
    c.tables.iter().find(|t| t.id == id).unwrap()
}

#[test]
fn tlb_reach_stands_beside_the_knee() {
    // the example predates the TLB geometry: the knees, and why the reach is unknown
    let f = example("vm-x86_64-standard.json");
    let c = compare(&inputs_with_default_labels(vec![f.clone()]), None, true).unwrap();
    let t = table(&c, TLB_ID);
    let base = t.rows.iter().find(|r| r.label == "base pages").unwrap();
    let text = &base.cells[0].text;
    assert!(
        text.starts_with("knee 4 MiB x13.6 (also 64 KiB x3.0, 1 MiB x2.7)"),
        "{text}"
    );
    assert!(
        text.ends_with(
            "; TLB reach unknown: not recorded (the document predates the TLB geometry)"
        ),
        "{text}"
    );
    // with the TLBs of a Xeon Gold 6252 (leaf 2 descriptors 0x03 and 0xC3)
    let mut g = f;
    let tlbs = json!({"known": [
        {"level": 1, "kind": "data", "page_sizes_bytes": [4096], "entries": 64,
         "associativity": "4-way", "source": "cpuid leaf 2 descriptor 0x03"},
        {"level": 2, "kind": "unified", "page_sizes_bytes": [4096, 2097152], "entries": 1536,
         "associativity": "6-way", "source": "cpuid leaf 2 descriptor 0xc3"},
    ]});
    g.machine.cpu.tlb = serde_json::from_value(tlbs).unwrap();
    let c = compare(&inputs_with_default_labels(vec![g]), None, true).unwrap();
    let t = table(&c, TLB_ID);
    let cell = |label: &str| {
        t.rows
            .iter()
            .find(|r| r.label == label)
            .unwrap_or_else(|| panic!("{label}"))
            .cells[0]
            .text
            .clone()
    };
    let base = cell("base pages");
    assert!(
        base.ends_with("; TLB reach L1 256 KiB, L2 6 MiB (4 KiB pages)"),
        "{base}"
    );
    let thp = cell("thp pages");
    assert!(
        thp.ends_with("; TLB reach L1 none, L2 3 GiB (2 MiB pages)"),
        "{thp}"
    );
}
