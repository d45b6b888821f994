//! Energy per point, end to end: the engine's run loop over a synthetic root with RAPL
//! counters (package-0 wrapping around during the point, a DRAM zone) writes joules and mean
//! watts into each point's record; the file loads back; compare shows GB/s per W in a column
//! beside each figure of the family table (the machine table names the counters), and for a
//! run without counters no column and why, once.

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

use hwsurvey_testkit::powercap::{self, DRAM_MAX_UJ, PACKAGE_MAX_UJ};

/// package-0 counts up to max_energy_range_uj 262143328850 and is 2 J short of it: it wraps
/// during the first point; dram does not.
const ZONES: [powercap::Zone; 2] = [
    ("intel-rapl:0", "package-0", 262_141_328_850, PACKAGE_MAX_UJ),
    ("intel-rapl:0:0", "dram", 1_000_000, DRAM_MAX_UJ),
];

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
        powercap::add_energy_uj(&self.root, "intel-rapl:0", 5_000_000, PACKAGE_MAX_UJ);
        powercap::add_energy_uj(&self.root, "intel-rapl:0:0", 1_000_000, DRAM_MAX_UJ);
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
    powercap::write_zones(dir.path(), &ZONES);
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
        clock: None,
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
    assert!(!c.tables.iter().any(|t| t.id.starts_with("energy:")));
    let table = c
        .tables
        .iter()
        .find(|t| t.id == "family:mem.bandwidth")
        .expect("family table");
    // a per-watt column beside the figures for the run with counters, none for the other,
    // then the relative column
    assert_eq!(table.columns, ["rapl", "vm", "rapl per W", "vm vs rapl"]);
    assert_eq!(
        table
            .rows
            .iter()
            .map(|r| r.label.as_str())
            .collect::<Vec<_>>(),
        ["stream.triad/threads=1", "stream.copy/threads=1"]
    );
    for row in &table.rows {
        let t = file.tests.iter().find(|t| t.point.id == row.label).unwrap();
        let e = t.energy.as_ref().unwrap();
        let watts = e.total_mean_watts().unwrap();
        let cell = &row.cells[2];
        assert_eq!(cell.unit.as_deref(), Some("bytes_per_j"));
        let expected = row.cells[0].value.unwrap() / watts;
        let got = cell.value.unwrap();
        assert!(
            (got - expected).abs() / expected < 1e-9,
            "{got} vs {expected}"
        );
        assert!(cell.text.ends_with("B/s/W"), "{}", cell.text);
        assert_eq!(cell.note, Some(format!("{watts:.1} W")));
    }
    // why the other run has none, once, under the table; its counters named for the first
    let notes: Vec<&String> = table
        .notes
        .iter()
        .filter(|n| n.starts_with("vm:") || n.starts_with("rapl per W:"))
        .collect();
    assert_eq!(
        notes,
        [
            "rapl per W: package-0 (/sys/class/powercap/intel-rapl:0/energy_uj), dram \
             (/sys/class/powercap/intel-rapl:0:0/energy_uj)",
            "vm: no per-watt column: no energy counters: neither \
             /sys/class/powercap/intel-rapl:* nor ..."
        ]
    );
    // the machine table names each run's counters or says why it has none
    let machine = c.tables.iter().find(|t| t.id == "machine").unwrap();
    let row = machine
        .rows
        .iter()
        .find(|r| r.label == "energy counters")
        .unwrap();
    assert_eq!(row.cells[0].text, "package-0 + dram (RAPL)");
    assert!(
        row.cells[1]
            .missing
            .as_deref()
            .is_some_and(|m| m.starts_with("no energy counters: ")),
        "{:?}",
        row.cells[1]
    );
    // CSV: the per-watt cells in their own unit
    let csv = render(&c, Format::Csv, &[]);
    assert!(
        csv.lines().any(|l| l
            .starts_with("family:mem.bandwidth,stream.triad/threads=1,bytes_per_j,rapl per W,")),
        "{csv}"
    );
    // on an 80-column terminal the family table keeps the per-watt column beside the
    // figures, every line within 80 columns
    let screen = hwsurvey_report::terminal::screen(
        &c,
        &hwsurvey_report::terminal::Screen {
            width: Some(80),
            details: true,
            ..Default::default()
        },
    );
    assert!(
        screen.lines().all(|l| console::measure_text_width(l) <= 80),
        "{screen}"
    );
    let header = screen
        .lines()
        .skip_while(|l| *l != "mem.bandwidth")
        .nth(2)
        .unwrap_or_default();
    assert!(
        header.contains("rapl") && header.contains("rapl per W") && header.contains("vm"),
        "{screen}"
    );
    assert!(screen.contains("B/s/W"), "{screen}");
}

/// Files written before energy was read (the schema-1 x86_64 example of reports/examples/v1)
/// still load, get no per-watt column, and the machine table says why.
#[test]
fn old_files_load_without_energy_and_get_no_per_watt_column() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/examples/v1/x86_64-standard.json");
    let file = hwsurvey_result::load(&path).unwrap();
    assert!(file.energy.is_none());
    assert!(file.tests.iter().all(|t| t.energy.is_none()));
    assert!(file.tests.iter().any(|t| t.point.family == "mem.bandwidth"));
    let inputs = vec![Input {
        label: "old".into(),
        file,
    }];
    let c = compare(&inputs, None, false).unwrap();
    let family = c
        .tables
        .iter()
        .find(|t| t.id == "family:mem.bandwidth")
        .unwrap();
    assert!(!family.columns.iter().any(|c| c.ends_with(" per W")));
    let machine = c.tables.iter().find(|t| t.id == "machine").unwrap();
    let row = machine
        .rows
        .iter()
        .find(|r| r.label == "energy counters")
        .unwrap();
    assert_eq!(
        row.cells[0].missing.as_deref(),
        Some(
            "no energy readings in this file (written before hwsurvey read energy counters, \
             or by another build)"
        )
    );
}
