//! The watch rules on their own: what each says without a result file, for a
//! file written before the watch, with sources the run could not watch, and for each kind of
//! event; a corrected error below the rate is information, above it a warning; a retrained
//! link and a clock that fell warn; under emulation the clock is never judged.

use hwsurvey_machine::watch::{
    ClockReading, ClockWatch, LinkChange, RunWatch, SourceState, WatchDelta, WatchSource,
};
use hwsurvey_model::{Probed, Unknown};
use hwsurvey_qualify::facts::{Facts, ResultFacts, WatchFacts};
use hwsurvey_qualify::{rules, Verdict};

use super::params;

/// Every source watched, except those named in `missing` (with a reason).
fn sources(missing: &[WatchSource]) -> Vec<SourceState> {
    WatchSource::ALL
        .iter()
        .map(|&source| SourceState {
            source,
            watched: usize::from(!missing.contains(&source)),
            what: source.words().into(),
            unavailable: missing.contains(&source).then(|| Unknown::Other {
                detail: format!("no {} in this VM", source.words()),
            }),
        })
        .collect()
}

fn facts(run: RunWatch, points: Vec<(&str, WatchDelta)>) -> Facts {
    Facts {
        result: Probed::Known(ResultFacts {
            path: "r.json".into(),
            triad_peak_bytes_per_s: None,
            page_modes: vec![],
            clocksource_changes: vec![],
            watch: Some(WatchFacts {
                run,
                points: points
                    .into_iter()
                    .map(|(p, d)| (p.to_string(), d))
                    .collect(),
            }),
        }),
        ..Facts::default()
    }
}

fn clock(start_ghz: f64, end_ghz: f64) -> ClockWatch {
    let r = |ghz: f64| ClockReading {
        cpu: 0,
        clock_hz: ghz * 1e9,
        seconds: 1.0,
        method: "asm_add_chain_x86_64".into(),
        reliable: true,
    };
    ClockWatch {
        start: Some(r(start_ghz)),
        end: Some(r(end_ghz)),
        problems: vec![],
        not_a_clock: None,
    }
}

#[test]
fn without_a_watch_nothing_is_evaluated_and_says_why() {
    for id in [
        "watch.errors",
        "watch.corrected",
        "watch.link",
        "watch.throttle",
    ] {
        let rule = hwsurvey_qualify::rule(id).unwrap();
        let live = (rule.check)(&Facts::default(), &params(id));
        assert_eq!(live[0].verdict, Verdict::NotEvaluated, "{id}");
        assert!(
            live[0].summary.contains("no result file"),
            "{}",
            live[0].summary
        );
        let mut old = facts(RunWatch::default(), vec![]);
        if let Probed::Known(r) = &mut old.result {
            r.watch = None;
        }
        let out = (rule.check)(&old, &params(id));
        assert_eq!(
            out[0].summary,
            "not evaluated: r.json holds no hardware watch (written before hwsurvey watched the hardware)",
            "{id}"
        );
    }
}

#[test]
fn a_vm_with_only_the_kernel_log_passes_naming_what_it_could_not_see() {
    let run = RunWatch {
        sources: sources(&[
            WatchSource::Edac,
            WatchSource::Aer,
            WatchSource::Link,
            WatchSource::ThermalThrottle,
            WatchSource::Cpufreq,
        ]),
        clock: clock(3.0, 2.99),
        ..RunWatch::default()
    };
    let f = facts(
        run.clone(),
        vec![("cpu.scaling integer/threads=1", WatchDelta::default())],
    );
    let e = rules::watch_errors(&f, &params("watch.errors"));
    assert_eq!(e[0].verdict, Verdict::Pass);
    assert_eq!(
        e[0].summary,
        "no uncorrected error or machine check during the run; not watched: EDAC (no EDAC in \
         this VM); PCIe AER (no PCIe AER in this VM)"
    );
    assert_eq!(
        verdicts(&rules::watch_link(&f, &params("watch.link"))),
        [Verdict::NotEvaluated]
    );
    // no counter, but the clock held: nothing stands out
    assert!(rules::watch_throttle(&f, &params("watch.throttle")).is_empty());
    // nothing that sees errors: not evaluated
    let mut none = run;
    none.sources = sources(&WatchSource::ALL);
    let f = facts(none, vec![]);
    assert_eq!(
        verdicts(&rules::watch_errors(&f, &params("watch.errors"))),
        [Verdict::NotEvaluated]
    );
}

fn verdicts(f: &[hwsurvey_qualify::Finding]) -> Vec<Verdict> {
    f.iter().map(|f| f.verdict).collect()
}

#[test]
fn a_clock_that_fell_warns_and_under_emulation_is_not_judged() {
    let run = RunWatch {
        sources: sources(&[WatchSource::ThermalThrottle]),
        clock: clock(4.03, 3.70),
        ..RunWatch::default()
    };
    let f = facts(run.clone(), vec![]);
    let t = rules::watch_throttle(&f, &params("watch.throttle"));
    assert_eq!(t[0].verdict, Verdict::Warn);
    assert_eq!(
        t[0].summary,
        "the clock fell during the run (throttling, or in a VM the host's load): the clock \
         measured on CPU 0 fell 8.2 % from the run's start to its end (4.03 GHz to 3.70 GHz, \
         above 5 %)"
    );
    let mut emulated = run;
    emulated.clock.not_a_clock = Some(
        "full-system emulation (QEMU TCG): the chain times the emulator's pace, not a CPU's clock"
            .into(),
    );
    let t = rules::watch_throttle(&facts(emulated, vec![]), &params("watch.throttle"));
    assert_eq!(t[0].verdict, Verdict::NotEvaluated);
    assert!(
        t[0].summary.contains("the emulator's pace"),
        "{}",
        t[0].summary
    );
}

#[test]
fn corrected_errors_below_the_rate_inform_and_a_retrained_link_warns() {
    let run = RunWatch {
        sources: sources(&[]),
        totals: Some(WatchDelta {
            seconds: 86_400.0,
            ..WatchDelta::default()
        }),
        ..RunWatch::default()
    };
    let point = WatchDelta {
        seconds: 2.0,
        aer: vec![hwsurvey_machine::watch::AerDelta {
            device: "0000:3b:00.0".into(),
            name: Some("Non-Volatile memory controller".into()),
            correctable: 3,
            nonfatal: 0,
            fatal: 0,
            kinds: vec!["RxErr +3".into()],
        }],
        links: vec![LinkChange {
            device: "0000:3a:00.0".into(),
            name: Some("root port".into()),
            before: "16 GT/s x4".into(),
            after: "8 GT/s x4".into(),
            max: Some("16 GT/s x4".into()),
            below_max: true,
        }],
        ..WatchDelta::default()
    };
    let f = facts(run, vec![("storage.iops all/qd=32", point)]);
    // 3 in a day of run time: at or below 10 per day
    let c = rules::watch_corrected(&f, &params("watch.corrected"));
    assert_eq!(c[0].verdict, Verdict::Info);
    assert!(
        c[0].summary.contains("3 corrected errors on 0000:3b:00.0 (Non-Volatile memory controller) (3 during storage.iops all/qd=32"),
        "{}",
        c[0].summary
    );
    let l = rules::watch_link(&f, &params("watch.link"));
    assert_eq!(l[0].verdict, Verdict::Warn);
    assert_eq!(
        l[0].summary,
        "a PCIe link retrained during the run: 0000:3a:00.0 (root port) retrained from 16 GT/s \
         x4 to 8 GT/s x4, below its maximum 16 GT/s x4 during storage.iops all/qd=32"
    );
}
