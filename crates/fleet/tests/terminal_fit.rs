//! What a person reads of a fleet: its terminal tables at a narrow width, on the real x86_64
//! example result of reports/examples/ made into five hosts, and the machine identity written
//! as the compare report writes it. (The printed HTML: the CLI's tests/fleet.rs.)

use std::path::Path;

use hwsurvey_fleet::{analyse, collect, load_all, Fleet, Options};
use hwsurvey_testkit::fleet_sample::{example, scale, with_host};

/// Five x86 hosts a few percent apart, one of them 30 % slower.
fn five_hosts(dir: &Path) -> Fleet {
    let base = example("x86_64-standard.json");
    for (i, f) in [1.0, 1.01, 0.99, 0.7, 1.02].iter().enumerate() {
        let host = format!("node{}", i + 1);
        let file = scale(with_host(base.clone(), &host), None, *f);
        file.write_atomic(&dir.join(&host).join("result.json"))
            .unwrap();
    }
    analyse(
        load_all(collect(&[dir.to_path_buf()], &[]).unwrap().sources),
        &Options::default(),
    )
}

/// The fleet's terminal tables are fitted by the compare report's fitter: at 60 columns every
/// line fits and every word of the natural-width tables is still whole (a column too narrow
/// for a word goes to a group of its own). Fleet's own copy of a fitter (tabled's wrap) broke
/// host names and figures across lines to meet the width.
#[test]
fn narrow_terminal_tables_fit_and_keep_every_word_whole() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = five_hosts(dir.path());
    let natural = hwsurvey_fleet::render::terminal(&fleet, None);
    let narrow = hwsurvey_fleet::render::terminal(&fleet, Some(60));
    let table_words = |text: &str| -> std::collections::BTreeSet<String> {
        text.lines()
            .filter(|l| l.starts_with('│'))
            .flat_map(|l| l.split(|c: char| c == '│' || c.is_whitespace()))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    for l in narrow
        .lines()
        .filter(|l| l.starts_with(['│', '┌', '├', '└']))
    {
        assert!(
            l.chars().count() <= 60,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    let whole = table_words(&natural);
    let broken: Vec<String> = table_words(&narrow)
        .into_iter()
        .filter(|w| !whole.contains(w))
        .collect();
    assert!(
        broken.is_empty(),
        "words broken at 60 columns: {broken:?}\n{narrow}"
    );
}

/// One fact, one answer: a group's identity writes the CPUs as the compare report's machine
/// line does, sockets x cores per socket x threads per core (it wrote the totals, `2 x 8 x 16
/// (sockets x cores x threads)`, beside compare's `2 sockets x 4 cores x 2 threads` for the
/// same x86 guest), from the example result files of both guests.
#[test]
fn identity_writes_the_cpus_as_compare_does() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../reports/examples");
    for (name, cpus) in [
        (
            "guest-x86-2s4n-smt-standard.json",
            "2 sockets x 4 cores x 2 threads",
        ),
        (
            "guest-arm64-2n-clusters-standard.json",
            "2 sockets x 4 cores x 1 thread",
        ),
        ("vm-x86_64-standard.json", "1 socket x 2 cores x 1 thread"),
    ] {
        let file = hwsurvey_result::load(&dir.join(name)).unwrap();
        let text = hwsurvey_fleet::facts::identity(&file).to_string();
        assert!(text.contains(&format!(", {cpus}, ")), "{name}: {text}");
        let inputs = hwsurvey_report::inputs_with_default_labels(vec![file]);
        let c = hwsurvey_report::compare(&inputs, None, true).unwrap();
        let line = &c
            .tables
            .iter()
            .find(|t| t.id == hwsurvey_report::headline::MACHINES_ID)
            .unwrap()
            .rows[0]
            .cells[0]
            .text;
        assert!(line.contains(cpus), "{name}: compare says {line}");
    }
}

/// Every line of the terminal report fits its width, prose too: to a pipe or file (`None`) at
/// 80 columns, as on an 80-column terminal; and the fleet table comes before the rules'
/// paragraph, so that it is on an 80x24 first screen. The shipped fleet run folder printed 10
/// lines wider than 80 to a pipe (the summary, the rules in one 1,057-character line, each
/// group's identity and note, the details), and its rules filled the first screen.
#[test]
fn every_line_fits_and_the_table_is_on_the_first_screen() {
    let dir =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../reports/fleet/examples");
    let fleet = analyse(
        load_all(collect(&[dir], &[]).unwrap().sources),
        &Options::default(),
    );
    for (width, text) in [
        (80, hwsurvey_fleet::render::terminal(&fleet, None)),
        (80, hwsurvey_fleet::render::terminal(&fleet, Some(80))),
        (60, hwsurvey_fleet::render::terminal(&fleet, Some(60))),
    ] {
        let over: Vec<&str> = text.lines().filter(|l| l.chars().count() > width).collect();
        assert!(over.is_empty(), "{width} columns: {over:#?}");
    }
    let text = hwsurvey_fleet::render::terminal(&fleet, None);
    let lines: Vec<&str> = text.lines().collect();
    let table_end = lines.iter().position(|l| l.starts_with('└')).unwrap();
    assert!(
        table_end < 24,
        "the fleet table ends on line {}:\n{text}",
        table_end + 1
    );
    let rules = lines
        .iter()
        .position(|l| l.starts_with("outlier rule:"))
        .unwrap();
    assert!(rules > table_end, "{text}");
    // the rules are still said whole, wrapped
    assert!(text.contains("(--fail-pct)"), "{text}");
}
