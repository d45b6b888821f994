//! The fleet's terminal tables at a narrow width, on the real x86_64 example result of
//! reports/examples/ made into five hosts.

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
