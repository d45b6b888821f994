//! Energy per point, end to end: the engine's run loop over a synthetic root with RAPL
//! counters (package-0 wrapping around during the point, a DRAM zone) writes joules and mean
//! watts into each point's record; the file loads back; compare shows GB/s per W beside the
//! scaling tables, and "no energy counters" with the reason for a run without counters.

use hwsurvey_probe::run_env::ReadRunEnv as _;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hwsurvey_engine::family::{DynFamily, Family};
use hwsurvey_engine::plan::{FamilyPlan, FamilyPoints, Plan, PlanInput, Point, RunOptions};
use hwsurvey_engine::profile::{CheckedParams, Checker, Profile, ProfileError};
use hwsurvey_engine::run::{run_with_cancel, RunRequest, Silent};
use hwsurvey_engine::runner::RunContext;
use hwsurvey_engine::{Measurement, Metric, PointOutcome};
use hwsurvey_model::Unknown;
use hwsurvey_probe::run_env::RunEnv;
use hwsurvey_probe::SysRoot;
use hwsurvey_report::{compare, render, Format, Input};
use hwsurvey_result::{RunEnergy, Tool};

/// package-0 counts up to max_energy_range_uj 262143328850 and wraps; dram does not.
fn write(root: &Path, path: &str, text: &str) {
    let p = root.join(path.trim_start_matches('/'));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

const PKG: &str = "/sys/class/powercap/intel-rapl:0";
const DRAM: &str = "/sys/class/powercap/intel-rapl:0:0";

fn rapl_root(root: &Path) {
    write(root, &format!("{PKG}/name"), "package-0");
    write(root, &format!("{PKG}/energy_uj"), "262141328850");
    write(root, &format!("{PKG}/max_energy_range_uj"), "262143328850");
    write(root, &format!("{DRAM}/name"), "dram");
    write(root, &format!("{DRAM}/energy_uj"), "1000000");
    write(root, &format!("{DRAM}/max_energy_range_uj"), "65712999613");
}

/// A bandwidth "family" that burns 5 J of package energy (across the wrap) and 1 J of DRAM
/// energy per point, as the counters of its root say, and reports 10 GB/s.
struct Burn {
    root: std::path::PathBuf,
}

#[derive(serde::Deserialize)]
struct NoParams {}

impl CheckedParams for NoParams {
    fn check(&self, _: &Checker<'_>) -> Result<(), ProfileError> {
        Ok(())
    }
}

impl Family for Burn {
    type Params = NoParams;
    type PointParams = NoParams;
    fn id(&self) -> &'static str {
        "mem.bandwidth"
    }
    fn describe(&self) -> &'static str {
        "moves the energy counters"
    }
    fn plan(&self, _: NoParams, _: &PlanInput<'_>) -> Result<FamilyPoints, ProfileError> {
        Ok(FamilyPoints::default())
    }
    fn run_point(&self, _: NoParams, _: &Point, _: &RunContext<'_>) -> PointOutcome {
        let read = |p: &str| -> u64 {
            std::fs::read_to_string(self.root.join(p.trim_start_matches('/')))
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        };
        let pkg = read(&format!("{PKG}/energy_uj"));
        let dram = read(&format!("{DRAM}/energy_uj"));
        let wrapped = (pkg + 5_000_000) % 262_143_328_850;
        write(
            &self.root,
            &format!("{PKG}/energy_uj"),
            &wrapped.to_string(),
        );
        write(
            &self.root,
            &format!("{DRAM}/energy_uj"),
            &(dram + 1_000_000).to_string(),
        );
        std::thread::sleep(Duration::from_millis(50));
        PointOutcome::Measured(Measurement {
            metrics: vec![Metric::throughput(
                "bandwidth_bytes_per_s",
                vec![10e9, 10e9, 10e9],
            )],
            pins: vec![],
            details: Default::default(),
        })
    }
}

fn point(id: &str) -> Point {
    serde_json::from_value(serde_json::json!({
        "family": "mem.bandwidth", "id": id, "threads": 1, "placement": "compact",
        "cpus": [0], "params": {}, "memory_bytes": 0, "estimated_s": 0.05
    }))
    .unwrap()
}

#[test]
fn energy_per_point_through_the_engine_renders_per_watt_in_compare() {
    let dir = tempfile::tempdir().unwrap();
    rapl_root(dir.path());
    let root = SysRoot::new(dir.path());
    let text = "format_version = 1\nid = \"quick\"\nversion = 1\ndescription = \"d\"\n[run]\nplacement = \"compact\"\nsample_min_s = 0.2\nsample_min_clock_ticks = 20\nwarmup_s = 0.1\nsamples_min = 3\nsamples_max = 5\ntarget_cv = 0.03\nmemory_fraction = 0.5\nmemory_llc_multiple = 4.0\nmemory_min_working_set_bytes = 1048576\noversubscription_factor = 2\n";
    let profile = Profile::parse("t.toml", text, &[]).unwrap();
    let machine = hwsurvey_probe::probe_machine(&root);
    let env = RunEnv::read(&root);
    let plan = Plan {
        profile_id: "quick".into(),
        profile_version: 1,
        usable_cpus: 1,
        thread_counts: vec![1],
        landmarks: vec![],
        llc_total_bytes: None,
        memory_working_set_bytes: 1 << 20,
        memory_cap_bytes: None,
        memory_cap_source: None,
        cpu_quota: None,
        fixed_work: None,
        families: vec![FamilyPlan {
            family: "mem.bandwidth".into(),
            budget_s: 1.0,
            estimated_s: 0.1,
            points: vec![
                point("stream.triad/threads=1"),
                point("stream.copy/threads=1"),
            ],
            skipped: vec![],
        }],
    };
    let out = dir.path().join("r.json");
    let burn = Burn {
        root: dir.path().to_path_buf(),
    };
    let families: [&dyn DynFamily; 1] = [&burn];
    let req = RunRequest {
        profile: &profile,
        plan: &plan,
        families: &families,
        machine: &machine,
        env: &env,
        options: &RunOptions::default(),
        output: &out,
        root: &root,
        tool: Tool::this_build(),
        time_limit: None,
        qualifier: None,
    };
    run_with_cancel(&req, &mut Silent, &AtomicBool::new(false)).unwrap();

    // the file on disk: the counters once, each point's energy
    let file = hwsurvey_result::load(&out).unwrap();
    let run = file.energy.clone().expect("energy section");
    assert_eq!(run.unavailable, None);
    assert_eq!(
        run.counters
            .iter()
            .map(|c| (c.domain.as_str(), c.source.as_str()))
            .collect::<Vec<_>>(),
        [
            ("package-0", "/sys/class/powercap/intel-rapl:0/energy_uj"),
            ("dram", "/sys/class/powercap/intel-rapl:0:0/energy_uj")
        ]
    );
    assert_eq!(file.tests.len(), 2);
    for (i, t) in file.tests.iter().enumerate() {
        let e = t.energy.as_ref().expect("energy per point");
        let joules: Vec<(&str, f64)> = e
            .domains
            .iter()
            .map(|d| (d.domain.as_str(), (d.joules * 1e6).round() / 1e6))
            .collect();
        assert_eq!(joules, [("package-0", 5.0), ("dram", 1.0)], "point {i}");
        // the first point's package counter wrapped (262141328850 + 5 J past 262143328850)
        assert_eq!(e.domains[0].wrapped, i == 0);
        assert!(
            e.seconds >= 0.05 && e.seconds <= t.duration_s + 1e-6,
            "{e:?}"
        );
        let w = e.total_mean_watts().unwrap();
        assert!((w - 6.0 / e.seconds).abs() < 1e-9);
    }

    // an edited figure is refused, naming the file and the field
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    doc["tests"][0]["energy"]["domains"][0]["joules"] = serde_json::json!(-5.0);
    let edited = dir.path().join("edited.json");
    std::fs::write(&edited, doc.to_string()).unwrap();
    let err = hwsurvey_result::load(&edited).unwrap_err().to_string();
    assert!(
        err.contains("edited.json")
            && err.contains("tests[0].energy.domains[0].joules")
            && err.contains("-5"),
        "{err}"
    );

    // a second run where the kernel exposes no counters (this VM), same points
    let mut bare = file.clone();
    bare.environment.hostname = hwsurvey_model::Probed::Known("vm".into());
    bare.energy = Some(RunEnergy {
        counters: vec![],
        unavailable: Some(Unknown::Other {
            detail: "no energy counters: neither /sys/class/powercap/intel-rapl:* nor ...".into(),
        }),
    });
    for t in &mut bare.tests {
        t.energy = None;
    }
    let inputs = vec![
        Input {
            label: "rapl".into(),
            file: file.clone(),
        },
        Input {
            label: "vm".into(),
            file: bare,
        },
    ];
    let c = compare(&inputs, None, false).unwrap();
    let table = c
        .tables
        .iter()
        .find(|t| t.id == "energy:mem.bandwidth")
        .expect("per-watt table");
    // it sits right after the family's scaling tables, before the next family's
    let pos = c.tables.iter().position(|t| t.id == table.id).unwrap();
    assert!(c.tables[..pos]
        .iter()
        .any(|t| t.id == "family:mem.bandwidth"));
    assert_eq!(table.columns, ["rapl", "vm"]);
    assert_eq!(
        table
            .rows
            .iter()
            .map(|r| r.label.as_str())
            .collect::<Vec<_>>(),
        ["stream.triad/threads=1", "stream.copy/threads=1"]
    );
    let row = &table.rows[0];
    assert_eq!(row.unit.as_deref(), Some("bytes_per_j"));
    let e = file.tests[0].energy.as_ref().unwrap();
    let expected = 10e9 / e.total_mean_watts().unwrap();
    let got = row.cells[0].value.unwrap();
    assert!(
        (got - expected).abs() / expected < 1e-9,
        "{got} vs {expected}"
    );
    assert!(
        row.cells[0].text.ends_with("B/s per W"),
        "{}",
        row.cells[0].text
    );
    assert!(
        row.cells[0].note.as_deref().unwrap().contains("6.0 J over"),
        "{:?}",
        row.cells[0].note
    );
    // a machine without counters: each cell points at the one note that says why
    assert_eq!(
        row.cells[1].missing.as_deref(),
        Some("no energy counters (the note under the table says why)")
    );
    let why: Vec<&String> = table
        .notes
        .iter()
        .filter(|n| n.starts_with("vm: energy unknown"))
        .collect();
    assert_eq!(
        why,
        ["vm: energy unknown: no energy counters: neither /sys/class/powercap/intel-rapl:* nor ..."]
    );
    let text = render(&c, Format::Terminal, &[]);
    assert!(
        text.contains("mem.bandwidth: performance per watt"),
        "{text}"
    );
    assert!(text.contains("B/s per W"), "{text}");
}

/// Files written before energy was read still load, and get no per-watt table.
#[test]
fn old_files_load_without_energy_and_get_no_per_watt_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/examples/vm-x86_64-standard.json");
    let file = hwsurvey_result::load(&path).unwrap();
    assert!(file.energy.is_none());
    assert!(file.tests.iter().all(|t| t.energy.is_none()));
    assert!(file.tests.iter().any(|t| t.point.family == "mem.bandwidth"));
    let inputs = vec![Input {
        label: "old".into(),
        file,
    }];
    assert_eq!(
        hwsurvey_report::energy::energy_table(&inputs, "mem.bandwidth", &[]),
        None
    );
    let c = compare(&inputs, None, false).unwrap();
    assert!(!c.tables.iter().any(|t| t.id.starts_with("energy:")));
}
