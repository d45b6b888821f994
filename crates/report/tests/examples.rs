//! Snapshots of every format (terminal, Markdown, CSV, JSON, HTML with its inline SVG plots)
//! over the three result files checked in under reports/examples/: this machine's standard run
//! (x86_64) and the quick runs of the aarch64 and sparc64 dist binaries under qemu-user. The
//! files are fixed inputs (their timestamps and figures are part of them); the comparison is
//! built exactly as `scripts/examples` builds it (in that order, labels by default, `--force`
//! because standard and quick are different profiles).
//!
//! Regenerate (new runs, then the reports and these snapshots):
//!
//!     CARGO_TARGET_DIR=... scripts/examples        # or scripts/examples --render-only
//!     cargo insta test -p hwsurvey-report --test examples --accept
//!     # without cargo-insta: INSTA_UPDATE=always cargo test -p hwsurvey-report --test examples

use std::path::PathBuf;

use hwsurvey_report::{
    compare, inputs_with_default_labels, plot, render, Comparison, Format, Input,
};

const FILES: [&str; 3] = [
    "x86_64-standard.json",
    "aarch64-qemu-quick.json",
    "sparc64-qemu-quick.json",
];

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../reports/examples/v1")
}

fn inputs() -> Vec<Input> {
    let files = FILES
        .iter()
        .map(|name| {
            let path = examples_dir().join(name);
            hwsurvey_result::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        })
        .collect();
    inputs_with_default_labels(files)
}

fn comparison() -> Comparison {
    compare(&inputs(), None, true).unwrap()
}

#[test]
fn examples_every_format_snapshot() {
    let c = comparison();
    let plots = plot::all_plots(&c);
    insta::assert_snapshot!("examples_terminal", render(&c, Format::Terminal, &plots));
    insta::assert_snapshot!("examples_markdown", render(&c, Format::Markdown, &plots));
    insta::assert_snapshot!("examples_csv", render(&c, Format::Csv, &plots));
    insta::assert_snapshot!("examples_json", render(&c, Format::Json, &plots));
    insta::assert_snapshot!("examples_html", render(&c, Format::Html, &plots));
}
