//! `memory.interleave` over the dmidecode captures in ../shared/fixtures (facts from its
//! README.md) and over facts written by hand.

use hwsurvey_model::Probed;
use hwsurvey_probe::{memory, SysRoot};
use hwsurvey_qualify::facts::InterleaveFacts;
use hwsurvey_qualify::machine::fill_memory;
use hwsurvey_qualify::{qualify, rules, Facts, Finding, RuleSet, Verdict};
use hwsurvey_testkit::fixtures;

fn dmidecode_facts(rel: &str) -> Option<Facts> {
    let fx = fixtures()?;
    let text = std::fs::read_to_string(fx.join(rel)).unwrap();
    let empty = tempfile::tempdir().unwrap();
    let mem = memory::probe_with_dmidecode_text(&SysRoot::new(empty.path()), &text);
    let mut f = Facts::default();
    fill_memory(&mut f, &mem);
    Some(f)
}

fn interleave(f: &Facts) -> Finding {
    let r = qualify("m", f, &RuleSet::builtin());
    let found: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|x| x.rule == "memory.interleave")
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

#[test]
fn oracle_x5_2_sixteen_dimms_each_on_a_range_of_its_own_warn() {
    let Some(f) = dmidecode_facts("x86_64-oracle-x5-2-2s-dmidecode-24slots/dmidecode.txt") else {
        return;
    };
    let i = interleave(&f);
    assert_eq!(i.verdict, Verdict::Warn);
    assert_eq!(
        i.summary,
        "memory is not interleaved: 16 of 16 populated DIMMs each answer an address range of \
         their own (Interleave Position 0), so a thread's memory sits on one DIMM's channel, \
         not across the populated channels (the Type 17 locators do not say which channel \
         each DIMM is on)"
    );
    assert!(i.fix.is_some());
    let ev: Vec<(&str, &str)> = i
        .evidence
        .iter()
        .map(|e| (e.source.as_str(), e.value.as_str()))
        .collect();
    assert_eq!(ev.len(), 17, "{ev:?}");
    assert!(ev.contains(&(
        "SMBIOS Type 20",
        "D11 (/SYS/MB/P0): 0x00000000000-0x007FFFFFFFF (32 GiB), Interleave Position 0 (not interleaved)"
    )));
    assert!(ev.contains(&(
        "SMBIOS Type 20",
        "D4 (/SYS/MB/P1): 0x07800000000-0x07FFFFFFFFF (32 GiB), Interleave Position 0 (not interleaved)"
    )), "{ev:?}");
}

#[test]
fn dell_r640_type19_only_not_evaluated_with_the_reason() {
    let Some(f) = dmidecode_facts("x86_64-dell-r640-2s-dmidecode-24slots/dmidecode.txt") else {
        return;
    };
    let i = interleave(&f);
    assert_eq!(i.verdict, Verdict::NotEvaluated);
    assert_eq!(
        i.summary,
        "not evaluated: the firmware gives 2 Type 19 range(s) (96 GiB, partition width 2) but \
         no Type 20 Memory Device Mapped Address records: which DIMM answers which addresses, \
         and whether they interleave, is not stated"
    );
}

fn facts(i: InterleaveFacts) -> Facts {
    let mut f = Facts::default();
    f.memory.interleave = Probed::Known(i);
    f
}

#[test]
fn interleave_narrower_than_the_populated_channels_warns_and_full_width_passes() {
    let six: Vec<String> = ["A1", "A2", "A3", "A4", "A5", "A6"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let base = InterleaveFacts {
        interleaved: six.clone(),
        ways: 2,
        state: "interleaved 2-way (6 populated DIMM(s))".into(),
        populated_channels: vec![("A".into(), 6)],
        ..InterleaveFacts::default()
    };
    let p = RuleSet::builtin().params("memory.interleave").unwrap();
    let w = rules::memory_interleave(&facts(base.clone()), &p);
    assert_eq!(w[0].verdict, Verdict::Warn);
    assert_eq!(
        w[0].summary,
        "memory interleaves 2-way, fewer than the 6 populated channels of a socket (A: 6 \
         populated channels)"
    );
    let full = InterleaveFacts {
        ways: 6,
        state: "interleaved 6-way (6 populated DIMM(s))".into(),
        ..base
    };
    let ok = rules::memory_interleave(&facts(full), &p);
    assert_eq!(ok[0].verdict, Verdict::Pass);
    assert_eq!(
        ok[0].summary,
        "interleaved 6-way (6 populated DIMM(s)) (A: 6 populated channels)"
    );
    // without the probe's facts: not evaluated, saying what is missing
    let none = rules::memory_interleave(&Facts::default(), &p);
    assert_eq!(none[0].verdict, Verdict::NotEvaluated);
    assert!(none[0]
        .summary
        .contains("SMBIOS Type 19/20 interleave not given"));
}
