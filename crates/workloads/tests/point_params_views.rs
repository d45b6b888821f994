//! The report's typed views of point params (`hwsurvey_report::point_params`) read every point
//! each family plans: a key renamed in a family's `PointParams` fails here, where the report
//! would otherwise stop finding its headline figure without a word.

use hwsurvey_engine::env::RunEnv;
use hwsurvey_engine::{build_plan, Plan, RunOptions};
use hwsurvey_probe::run_env::ReadRunEnv as _;
use hwsurvey_probe::{probe_machine, SysRoot};
use hwsurvey_report::point_params::{
    C2cLatency, CpuScaling, MemBandwidth, MemLatency, PointSelect, RaidParity, StorageIops, View,
};
use hwsurvey_workloads::families;

/// The plan of profile `name` for this machine, with one storage directory so that
/// storage.iops plans its points.
fn plan(name: &str, storage: &std::path::Path) -> Plan {
    let root = SysRoot::live();
    let machine = probe_machine(&root);
    let env = RunEnv::read(&root);
    let options = RunOptions {
        storage_dirs: vec![storage.to_path_buf()],
        ..RunOptions::default()
    };
    let profile = families::load_profile(name).unwrap();
    build_plan(
        &profile,
        &families::registry(),
        &machine,
        &env,
        &options,
        &[],
    )
    .unwrap()
}

/// Every planned point of `V::FAMILY` (and every skipped one that has params) reads as `V`;
/// returns how many points were read.
fn reads_all<V: View>(plan: &Plan) -> usize {
    let mut read = 0;
    for f in plan.families.iter().filter(|f| f.family == V::FAMILY) {
        let planned = f.points.iter().map(|p| (&p.id, &p.params));
        let skipped = f
            .skipped
            .iter()
            .filter(|s| !s.params.is_null())
            .map(|s| (&s.id, &s.params));
        for (id, params) in planned.chain(skipped) {
            assert!(
                V::read(params).is_some(),
                "{} {id}: params {params} do not read as the report's view",
                V::FAMILY
            );
            read += 1;
        }
    }
    read
}

#[test]
fn every_family_point_reads_as_the_reports_view() {
    let dir = tempfile::tempdir().unwrap();
    for profile in ["quick", "standard"] {
        let plan = plan(profile, dir.path());
        let counts = [
            (CpuScaling::FAMILY, reads_all::<CpuScaling>(&plan)),
            (MemBandwidth::FAMILY, reads_all::<MemBandwidth>(&plan)),
            (MemLatency::FAMILY, reads_all::<MemLatency>(&plan)),
            (C2cLatency::FAMILY, reads_all::<C2cLatency>(&plan)),
            (PointSelect::FAMILY, reads_all::<PointSelect>(&plan)),
            (StorageIops::FAMILY, reads_all::<StorageIops>(&plan)),
            (RaidParity::FAMILY, reads_all::<RaidParity>(&plan)),
        ];
        // each view met real points where its family planned any (raid.parity plans none
        // where no RAID-6 path runs, c2c.latency none on one CPU)
        for (family, n) in counts {
            let planned = plan
                .families
                .iter()
                .any(|f| f.family == family && !f.points.is_empty());
            assert!(
                n > 0 || !planned,
                "{profile}: no {family} point in the plan to read"
            );
        }
        for family in [CpuScaling::FAMILY, MemBandwidth::FAMILY, MemLatency::FAMILY] {
            assert!(
                counts.iter().any(|(f, n)| *f == family && *n > 0),
                "{profile}: no {family} point"
            );
        }
    }
}

/// The views read the fields the headline needs from points as the families write them.
#[test]
fn the_views_hold_the_families_values() {
    let dir = tempfile::tempdir().unwrap();
    let plan = plan("quick", dir.path());
    let points = |family: &'static str| {
        plan.families
            .iter()
            .filter(move |f| f.family == family)
            .flat_map(|f| f.points.iter())
    };
    assert!(points(MemBandwidth::FAMILY)
        .filter_map(|p| MemBandwidth::read(&p.params))
        .any(|v| v.test == "stream" && v.kernel.as_deref() == Some("triad")));
    assert!(points(MemLatency::FAMILY)
        .filter_map(|p| MemLatency::read(&p.params))
        .any(|v| v.full_random() && v.page_mode.label() == "base" && v.working_set_bytes > 0));
    assert!(points(PointSelect::FAMILY)
        .filter_map(|p| PointSelect::read(&p.params))
        .any(|v| v.test == "closed" && v.clients.is_some_and(|c| c > 0)));
    if points(RaidParity::FAMILY).next().is_some() {
        assert!(points(RaidParity::FAMILY)
            .filter_map(|p| RaidParity::read(&p.params))
            .any(|v| v.op == "gen" && v.path == "best" && v.data_blocks >= 2));
    }
    if points(StorageIops::FAMILY).next().is_some() {
        assert!(points(StorageIops::FAMILY)
            .filter_map(|p| StorageIops::read(&p.params))
            .any(|v| v.pattern == "randread_4k" && v.targets.len() == 1));
    }
}
