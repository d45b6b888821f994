//! A run shortened by `hwsurvey run --max-time` says so in every report format, and compares
//! as any run of its profile: its samples were fewer and shorter, which is
//! how its points were measured, not what they are. It was "not comparable: time-limited
//! run", every ratio `!`, even beside a copy of itself.

use hwsurvey_report::headline::{not_comparable, HEADLINE_ID};
use hwsurvey_report::{compare, default_label, render, Format, Input};
use hwsurvey_result::TimeLimit;
use hwsurvey_testkit::report_sample::three;

#[test]
fn a_time_limited_input_is_flagged_in_every_format_and_compares() {
    let mut files = three();
    files[1].time_limit = Some(TimeLimit {
        max_time_s: 600.0,
        estimated_full_s: 1500.0,
        estimated_s: 590.0,
        shortened: vec!["samples_max 7 -> 3".into(), "samples_min 3 -> 2".into()],
        dropped_points: 0,
    });
    assert!(
        not_comparable(&files[1]).is_empty(),
        "{:?}",
        not_comparable(&files[1])
    );
    let label = default_label(&files[1]);
    let inputs: Vec<Input> = files
        .into_iter()
        .map(|file| Input {
            label: default_label(&file),
            file,
        })
        .collect();
    let c = compare(&inputs, None, false).unwrap();
    let flag = format!(
        "{label}: time-limited run (--max-time 600 s (full plan estimated 1500 s): \
         samples_max 7 -> 3, samples_min 3 -> 2): its points were measured with fewer or \
         shorter samples and compare as any run's, within wider noise"
    );
    assert!(c.flags.contains(&flag), "{:?}", c.flags);
    assert!(
        !c.flags.iter().any(|f| f.contains("not comparable")),
        "{:?}",
        c.flags
    );
    // its column is not marked not comparable, and no ratio of it is `!`
    let h = c.tables.iter().find(|t| t.id == HEADLINE_ID).unwrap();
    assert!(!h.columns[1].contains('!'), "{:?}", h.columns);
    let ratios: Vec<&str> = h
        .rows
        .iter()
        .filter_map(|r| r.cells[1].note.as_deref())
        .collect();
    assert!(!ratios.is_empty());
    assert!(ratios.iter().all(|n| !n.ends_with('!')), "{ratios:?}");
    for format in [
        Format::Terminal,
        Format::Markdown,
        Format::Csv,
        Format::Json,
        Format::Html,
    ] {
        // HTML keeps a hyphenated word whole in a span (render::html_words): read it without
        let text = render(&c, format, &[])
            .replace("<span class=\"w\">", "")
            .replace("</span>", "");
        assert!(
            text.contains("time-limited run (--max-time 600 s"),
            "{format:?}: {}",
            &text[..text.len().min(2000)]
        );
    }
}
