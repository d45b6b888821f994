//! Snapshots of every format (terminal, Markdown, CSV, JSON, HTML with its inline SVG plots)
//! over the three result files checked in under reports/examples/: the standard profile on this
//! machine (x86_64, 1 package x 2 cores), in the x86-2s4n-smt guest (2 packages x 4 cores x 2
//! threads, 4 NUMA nodes) and in the arm64-2n-clusters guest (2 packages x 2 clusters x 2
//! cores), the guests under qemu-system TCG. The files are fixed inputs (their timestamps and
//! figures are part of them); the comparison is built exactly as `scripts/examples` builds it
//! (in that order, labels by default).
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
    "vm-x86_64-standard.json",
    "guest-x86-2s4n-smt-standard.json",
    "guest-arm64-2n-clusters-standard.json",
];

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../reports/examples")
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
