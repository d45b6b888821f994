//! The qualification a run stores is loaded typed with the file (`ResultFile::qualification`,
//! `hwsurvey_result::qualification`): the findings of a real run read back as rule, verdict,
//! evidence and fix, and a value no hwsurvey writes is refused naming its field, as any other
//! field of the file is (it was untyped JSON, read again by qualify, compare and fleet, each
//! its own way: fleet took an unknown verdict for no finding).

use hwsurvey_result::qualification::{RuleKind, Verdict};

const EXAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../reports/examples/v1/x86_64-standard.json"
);

/// The example run (the 2-vCPU VM's standard profile, 2026-11-29) stored 18 findings of the
/// built-in rules: hugetlb pools empty (warn), no DMI for the memory rules (not evaluated).
#[test]
fn a_runs_findings_load_typed() {
    let file = hwsurvey_result::load(std::path::Path::new(EXAMPLE)).unwrap();
    let q = file.qualification.expect("the example stores findings");
    assert_eq!(q.rules.source, "profiles/qualify.toml (built in)");
    assert_eq!(q.rules.fnv1a64, "170700508f2c6644");
    assert_eq!(q.evaluated_at, "2026-11-29T23:35:39Z");
    assert_eq!(q.findings.len(), 18);
    let hugetlb = q
        .findings
        .iter()
        .find(|f| f.rule == "pages.hugetlb")
        .unwrap();
    assert_eq!(hugetlb.verdict, Verdict::Warn);
    assert_eq!(
        hugetlb.summary,
        "hugetlb pools are empty: the hugetlb page mode will be skipped"
    );
    // written before findings carried a kind: the default until a reader takes the rule's
    assert_eq!(hugetlb.kind, RuleKind::Machine);
    let not_evaluated = q
        .findings
        .iter()
        .filter(|f| f.verdict == Verdict::NotEvaluated)
        .count();
    assert_eq!(not_evaluated, 8);
}

/// A verdict no hwsurvey writes, a finding without its rule id: the file is refused in one
/// line naming the field.
#[test]
fn a_stored_finding_of_the_wrong_shape_names_its_field() {
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(EXAMPLE).unwrap()).unwrap();
    doc["qualification"]["findings"][13]["verdict"] = "maybe".into();
    let e = hwsurvey_result::parse("r.json", doc.to_string().as_bytes())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("r.json")
            && e.contains("at qualification.findings[13].verdict")
            && e.contains("unknown variant `maybe`"),
        "{e}"
    );
    doc["qualification"]["findings"][13]["verdict"] = "warn".into();
    doc["qualification"]["findings"][2]
        .as_object_mut()
        .unwrap()
        .remove("rule");
    let e = hwsurvey_result::parse("r.json", doc.to_string().as_bytes())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("at qualification.findings[2]") && e.contains("missing field `rule`"),
        "{e}"
    );
}
