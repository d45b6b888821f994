//! Issue 47: fleet names a host by what the hardware watch saw during its run.

use std::path::Path;

use hwsurvey_fleet::{analyse, collect, load_all, Fleet, Options};
use hwsurvey_result::ResultFile;
use hwsurvey_testkit::fleet_sample::{example, scale, with_host};

fn write(dir: &Path, host: &str, file: &ResultFile) {
    file.write_atomic(&dir.join(host).join("result.json"))
        .unwrap();
}

fn fleet_of(dir: &Path) -> Fleet {
    analyse(
        load_all(collect(&[dir.to_path_buf()], &[]).unwrap().sources),
        &Options::default(),
    )
}

/// Five hosts a few percent apart.
fn five_hosts(dir: &Path) {
    let base = example("x86_64-standard.json");
    for (i, f) in [1.0, 1.01, 0.99, 0.98, 1.02].iter().enumerate() {
        let host = format!("node{}", i + 1);
        write(dir, &host, &scale(with_host(base.clone(), &host), None, *f));
    }
}

/// Issue 47: a host whose run saw corrected errors on one DIMM during mem.bandwidth, and
/// throttled during cpu.scaling, is named by it: `cause: hardware watch: 2,314 corrected
/// errors on DIMM B2 (mc0/dimm3) during mem.bandwidth`, slower figures or not.
#[test]
fn a_host_is_named_by_what_the_hardware_watch_saw() {
    use hwsurvey_machine::watch::{EdacDelta, ThrottleDelta, ThrottleKind, WatchDelta};
    let dir = tempfile::tempdir().unwrap();
    five_hosts(dir.path());
    let mut file = with_host(example("x86_64-standard.json"), "node2");
    let triad = file
        .tests
        .iter_mut()
        .find(|t| t.point.family == "mem.bandwidth" && t.point.id.starts_with("stream.triad"))
        .unwrap();
    triad.watch = Some(WatchDelta {
        seconds: 1.5,
        edac: vec![EdacDelta {
            dimm: "mc0/dimm3".into(),
            slot: Some("B2".into()),
            label: Some("CPU_SrcID#0_MC#0_Chan#1_DIMM#0".into()),
            corrected: 2314,
            uncorrected: 0,
        }],
        ..WatchDelta::default()
    });
    let scaling = file
        .tests
        .iter_mut()
        .find(|t| t.point.family == "cpu.scaling")
        .unwrap();
    scaling.watch = Some(WatchDelta {
        seconds: 1.0,
        throttle: vec![ThrottleDelta {
            kind: ThrottleKind::Package,
            cpu: 0,
            package: Some(0),
            events: 3,
        }],
        ..WatchDelta::default()
    });
    write(dir.path(), "node2", &file);
    let fleet = fleet_of(dir.path());
    let host = fleet.hosts.iter().find(|h| h.name == "node2").unwrap();
    assert_eq!(
        host.hardware,
        [
            "2,314 corrected errors on DIMM B2 (mc0/dimm3) during mem.bandwidth",
            "throttled during cpu.scaling (1 of its points; package 0: 3 events)",
        ]
    );
    let text = hwsurvey_testkit::fleet_sample::unwrapped(&hwsurvey_fleet::render::terminal(
        &fleet,
        Some(80),
    ));
    assert!(
        text.contains("node2:\n  cause: hardware watch: 2,314 corrected errors on DIMM B2"),
        "{text}"
    );
    // the other hosts saw nothing
    assert!(fleet
        .hosts
        .iter()
        .filter(|h| h.name != "node2")
        .all(|h| h.hardware.is_empty()));
}
