//! Snapshot tests (insta) of the human summary's CPU, NUMA and pages sections on real captures.

use crate::topology_support;

use hwsurvey_probe::probe_text;
use topology_support::*;

#[test]
fn summary_ultrasparc_t1() {
    let Some(c) = extract("sparc64-ultrasparc-t1-offline") else {
        return;
    };
    let m = probe(&c.root);
    insta::assert_snapshot!(probe_text::topology_summary(&m));
}

#[test]
fn summary_biglittle() {
    let Some(c) = extract("aarch64-biglittle-a510-a710-a715-x3") else {
        return;
    };
    let m = probe(&c.root);
    insta::assert_snapshot!(probe_text::topology_summary(&m));
}

#[test]
fn summary_opteron_bulldozer() {
    let Some(c) = extract("x86_64-amd-opteron-bulldozer-4s-8numa") else {
        return;
    };
    let m = probe(&c.root);
    insta::assert_snapshot!(probe_text::topology_summary(&m));
}
