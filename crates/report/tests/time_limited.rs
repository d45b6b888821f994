//! A run shortened by `hwsurvey run --max-time` is flagged as time-limited, not comparable
//! to full runs, in every report format.

use hwsurvey_report::{compare, default_label, render, Format, Input};
use hwsurvey_result::TimeLimit;
use hwsurvey_testkit::report_sample::three;

#[test]
fn a_time_limited_input_is_flagged_in_every_format() {
    let mut files = three();
    files[1].time_limit = Some(TimeLimit {
        max_time_s: 600.0,
        estimated_full_s: 1500.0,
        estimated_s: 590.0,
        shortened: vec!["samples_max 7 -> 3".into(), "samples_min 3 -> 2".into()],
        dropped_points: 0,
    });
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
        "{label}: TIME-LIMITED run, not comparable to full runs (--max-time 600 s (full plan \
         estimated 1500 s): samples_max 7 -> 3, samples_min 3 -> 2)"
    );
    assert!(c.flags.contains(&flag), "{:?}", c.flags);
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
            text.contains("TIME-LIMITED run, not comparable to full runs"),
            "{format:?}: {}",
            &text[..text.len().min(2000)]
        );
    }
}
