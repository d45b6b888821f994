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
    // the example (this KVM Xeon, whose hypervisor hides the TLB leaves): the knees, from
    // the full-random medians (6.9 ns at 1 MiB, 39.5 ns at 4 MiB: x5.7), and why the reach
    // is unknown
    let f = example("vm-x86_64-standard.json");
    let c = compare(&inputs_with_default_labels(vec![f.clone()]), None, true).unwrap();
    let t = table(&c, TLB_ID);
    let base = t.rows.iter().find(|r| r.label == "base pages").unwrap();
    let text = &base.cells[0].text;
    assert!(
        text.starts_with(
            "knee 4 MiB x5.7 (also 64 KiB x4.2, 1 MiB x1.6, 16 MiB x2.5, 64 MiB x1.9, \
             1 GiB x1.3, 1.88 GiB x1.4)"
        ),
        "{text}"
    );
    assert!(
        text.ends_with(
            "; TLB reach unknown: cpuid describes no TLB (no leaf 2 TLB descriptor, no leaf \
             0x18, no 0x80000005/6 TLB fields: a hypervisor may hide them)"
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
