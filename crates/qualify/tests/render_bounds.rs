//! Terminal and Markdown findings are bounded and escaped: a 1 MiB evidence value with ESC,
//! BEL and U+FFFE (from a damaged capture or result file) made `qualify` print 2 MB raw.

use hwsurvey_qualify::render::{render, Format, SHOWN_CHARS};
use hwsurvey_qualify::{Finding, Report, RuleFinding, Verdict};

#[test]
fn a_megabyte_evidence_value_is_shown_bounded_and_escaped() {
    let value = "walt\u{1b}[2J\u{7}\u{fffe},".repeat(1 << 16);
    let report = Report {
        subject: "capture\u{1b}]0;x\u{7}".into(),
        findings: vec![
            Finding::new("os.governor", Verdict::Warn, format!("governor {value}"))
                .with(
                    "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
                    value.clone(),
                )
                .fix(value.clone()),
        ],
        origin: None,
        platform: Default::default(),
    };
    for format in [Format::Terminal, Format::Markdown] {
        let text = render(&report, format);
        assert!(
            text.len() < 6 * SHOWN_CHARS + 2000,
            "{format:?}: {} bytes",
            text.len()
        );
        let raw: Vec<char> = text
            .chars()
            .filter(|c| hwsurvey_model::text::is_unsafe(*c) && *c != '\n')
            .collect();
        assert!(raw.is_empty(), "{format:?}: raw {raw:?}");
        assert!(text.contains(&format!("({} bytes)", value.len())), "{text}");
        // escaped as `\u{1b}` (Markdown doubles the backslash)
        assert!(
            text.contains("u{1b}[2J") && text.contains("u{fffe}"),
            "{text}"
        );
    }
}
