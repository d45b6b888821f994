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
//!     cargo insta test -p hwsurvey-report --test it --accept -- examples::
//!     # without cargo-insta: INSTA_UPDATE=always cargo test -p hwsurvey-report --test it -- examples::

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

/// The three examples come from one clean build (issue 49: they came from three builds, two
/// of them "-dirty"): one `git_revision`, twelve hex digits, no "-dirty" (`scripts/examples`
/// builds every binary before any run and checks this before rendering).
#[test]
fn examples_name_one_clean_build() {
    let revisions: Vec<String> = FILES
        .iter()
        .map(|name| {
            let path = examples_dir().join(name);
            let file =
                hwsurvey_result::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            file.tool.git_revision
        })
        .collect();
    assert!(
        revisions.iter().all(|r| r == &revisions[0]),
        "{FILES:?}: {revisions:?}"
    );
    let r = &revisions[0];
    assert!(
        r.len() == 12 && r.chars().all(|c| c.is_ascii_hexdigit()),
        "{r}: a clean build's revision is 12 hex digits"
    );
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

/// Where the lines of a figure lie more than ten times apart (the VM against the qemu TCG
/// guests: cpu.scaling's integer throughput, the write bandwidth's cache-resident blocks),
/// the y axis is logarithmic and its title says so (on a shared linear axis the
/// guests' lines lay flat on zero).
#[test]
fn examples_figures_share_y_unless_ten_times_apart() {
    let c = comparison();
    let plots = plot::all_plots(&c);
    let axis_title = |title: &str| {
        let (_, svg) = plots.iter().find(|(t, _)| t == title).unwrap();
        let start = svg.find("x: ").unwrap();
        svg[start..].split('<').next().unwrap().trim().to_string()
    };
    assert_eq!(
        axis_title("cpu.scaling vs threads"),
        "x: threads   y: throughput (ops/s, log scale)"
    );
    let write = axis_title("mem.bandwidth write bandwidth vs block size");
    assert!(
        write.starts_with("x: block size per thread (log scale)   y: bandwidth (")
            && write.ends_with(", log scale)"),
        "{write}"
    );
}

/// The printed report (HTML) leaves out the scaling tables that only repeat rows of their
/// family table, and loses nothing by it: every value of such a table is in the report; a
/// table with figures of its own (a load level's delivered bandwidth) stays. Missing reasons
/// of the detail tables are footnotes written once, not text repeated in dozens of cells.
#[test]
fn examples_html_prints_no_table_twice_and_loses_no_value() {
    let c = comparison();
    let html = render(&c, Format::Html, &[]);
    let repeated: Vec<&hwsurvey_report::Table> = c
        .tables
        .iter()
        .filter(|t| hwsurvey_report::render::repeats_family_rows(&c, t))
        .collect();
    // 12 block-size tables, 10 page modes of the latency curves, 2 of point-select throughput
    assert_eq!(repeated.len(), 24);
    for t in &repeated {
        let heading = format!(
            "<h2>{}</h2>",
            hwsurvey_report::render::html_escape(&t.title)
        );
        assert!(!html.contains(&heading), "{heading}");
        for r in &t.rows {
            for cell in r.cells.iter().filter(|c| c.value.is_some()) {
                let shown = hwsurvey_report::render::figure_html(&cell.display());
                assert!(html.contains(&shown), "{}: {shown}", t.title);
            }
        }
    }
    for kept in [
        "mem.loaded_latency latency vs delivered bandwidth (read load)",
        "service.point_select p99 latency vs clients (pages=thp)",
    ] {
        assert!(html.contains(&format!("<h2>{kept}</h2>")), "{kept}");
    }
    assert!(!html.contains("— not run"));
    assert!(!html.contains("— no pair to compare"));
    assert_eq!(
        html.matches("] not run: not in this run&#39;s plan<")
            .count(),
        1
    );
    // a finding the same on every machine is written once, across their columns
    assert!(html.contains(
        "<tr><th>profile</th><td class=\"all\" colspan=\"3\">standard v2 <span class=\"note\">(all 3)</span></td></tr>"
    ));
}

/// The normalised views divide all-core figures only ("best per core" was an
/// L1-resident 1 KiB block read, or a 1-thread result, divided by every core): per machine
/// the best STREAM kernel at one thread per core (2 threads on the 2-core VM, the 8/cores rung
/// of the 8-core x86 guest with SMT, 8 threads on the 8-core arm64 guest), over its cores.
#[test]
fn examples_normalised_views_are_all_core_and_past_the_caches() {
    let c = comparison();
    let table = |id: &str| c.tables.iter().find(|t| t.id == id).unwrap();
    let bandwidth = table("family:mem.bandwidth");
    let value = |label: &str, k: usize| {
        bandwidth
            .rows
            .iter()
            .find(|r| r.label == label)
            .unwrap_or_else(|| panic!("{label}"))
            .cells[k]
            .value
            .unwrap()
    };
    let best_stream = |rung: &str, k: usize| {
        ["copy", "scale", "add", "triad"]
            .iter()
            .map(|kernel| value(&format!("stream.{kernel}/threads={rung}"), k))
            .fold(0.0, f64::max)
    };
    let per_core = table("normalised")
        .rows
        .iter()
        .find(|r| r.label == "mem.bandwidth all-core best per core")
        .unwrap();
    let expected = [
        best_stream("2", 0) / 2.0,
        best_stream("8/cores", 1) / 8.0,
        best_stream("8", 2) / 8.0,
    ];
    for (k, want) in expected.iter().enumerate() {
        assert_eq!(per_core.cells[k].value, Some(*want), "column {k}");
    }
    // the 1 KiB block read at one thread (L1-resident, 83.6 GB/s on the VM) is no longer the
    // VM's figure: STREAM Add at 2 threads over 2 cores, 44.5 GB/s per core
    assert!(value("read/block=1KiB/threads=1", 0) > 1.5 * expected[0]);
    // families without thread rungs have no normalised row
    let labels: Vec<&str> = table("normalised")
        .rows
        .iter()
        .map(|r| r.label.as_str())
        .collect();
    assert!(
        !labels
            .iter()
            .any(|l| l.starts_with("storage.iops") || l.starts_with("service.point_select")),
        "{labels:?}"
    );
}

/// The scaling summary and the A/B views come after the findings and before the detail
/// tables, and say what the family tables' medians say: the x86 guest's integer score (7.52G
/// ops/s at 1 thread) peaks at all 16 threads (16 vCPUs on 2 host cores under TCG) with
/// 17.1G, 14% efficient (the figure compared), and the knee is at 2; THP over base pages at
/// 256 MiB is the ratio of the two full-random medians (the VM's 179 ns over 229 ns).
#[test]
fn examples_scaling_summary_and_ab_views_read_the_family_tables() {
    let c = comparison();
    let ids: Vec<&str> = c.tables.iter().map(|t| t.id.as_str()).collect();
    let at = |id: &str| ids.iter().position(|i| *i == id).unwrap();
    assert_eq!(at("scaling-summary"), at("qualify") + 1);
    assert_eq!(at("ab"), at("qualify") + 2);
    assert!(at("ab") < at("family:mem.bandwidth"));
    let row = |table: &str, label: &str| {
        c.tables[at(table)]
            .rows
            .iter()
            .find(|r| r.label == label)
            .unwrap_or_else(|| panic!("{table}: {label}"))
            .clone()
    };
    let int = row("scaling-summary", "cpu.scaling integer");
    // The peak is at all threads: one efficiency, no peak beside it.
    assert_eq!(int.cells[1].text, "17.1G ops/s @16, 14% @16, knee 2");
    assert_eq!(
        int.cells[1].value,
        row("family:cpu.scaling", "integer/threads=16").cells[1].value
    );
    assert_eq!(
        row("scaling-summary", "mem.bandwidth stream.triad").cells[0].text,
        "37.9 GB/s @2, 91% @2, knee 2"
    );
    let ratio = row("ab", "full_random THP/base ws=256MiB");
    for k in 0..3 {
        let thp = row("family:mem.latency", "full_random/thp/ws=256MiB").cells[k]
            .value
            .unwrap();
        let base = row("family:mem.latency", "full_random/base/ws=256MiB").cells[k]
            .value
            .unwrap();
        assert_eq!(ratio.cells[k].value, Some(thp / base), "column {k}");
    }
    assert_eq!(ratio.cells[0].text, "0.78x");
}

/// An unmet precondition of the profile (the VM's empty hugetlb pools) is said as such on the
/// headline, apart from the findings about the machine, and marked in the findings table.
#[test]
fn examples_preconditions_apart_from_findings() {
    let c = comparison();
    let table = |id: &str| c.tables.iter().find(|t| t.id == id).unwrap();
    let row = |id: &str, label: &str| {
        table(id)
            .rows
            .iter()
            .find(|r| r.label == label)
            .unwrap_or_else(|| panic!("{id}: {label}"))
            .cells
            .iter()
            .map(|c| c.text.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        row("headline", "findings"),
        ["0 fail, 0 warn", "0 fail, 0 warn", "0 fail, 0 warn"]
    );
    // the VM's pools are empty; the x86 guest's (64 x 2 MiB) and the arm64 guest's (24 x 2
    // MiB, 4 x 32 MiB) are below what the plan needs (128 x 2 MiB, 8 x 32 MiB)
    assert_eq!(
        row("headline", "unmet preconditions"),
        ["pages.hugetlb", "pages.hugetlb", "pages.hugetlb"]
    );
    assert_eq!(
        row("qualify", "pages.hugetlb (precondition)"),
        ["warn", "warn", "warn"]
    );
    assert_eq!(row("qualify", "cpu.online"), ["pass", "pass", "pass"]);
}

/// The detail tables judge as the headline does (breaker, 2026-12-03): the x86 guest is
/// full-system emulation, "not comparable" in the headline, so its ratios to the VM are never
/// a win or a loss in the family tables either; so is the arm64 guest (qemu TCG too, told by
/// its generic timer's 62.5 MHz), whose c2c latency across packages is a ratio marked `!`
/// (264 ns against the VM's 132 ns: 2.00x), never a win or a loss.
#[test]
fn examples_detail_tables_follow_the_headline_on_comparability_and_noise() {
    let c = comparison();
    let table = |id: &str| c.tables.iter().find(|t| t.id == id).unwrap();
    let row = |t: &str, label: &str| {
        table(t)
            .rows
            .iter()
            .find(|r| r.label == label)
            .unwrap_or_else(|| panic!("{t}: {label}"))
            .clone()
    };
    let copy = row("family:mem.bandwidth", "stream.copy/threads=1");
    // Columns: vm, x86-2s4n-smt, arm64-2n-clusters, then x86 vs vm, arm64 vs vm.
    // 2.71 GB/s and 4.32 GB/s against the VM's 19.7 GB/s
    assert_eq!(copy.cells[3].text, "0.14x");
    assert_eq!(copy.cells[3].note.as_deref(), Some("not comparable"));
    assert_eq!(copy.cells[4].text, "0.22x");
    assert_eq!(copy.cells[4].note.as_deref(), Some("not comparable"));
    let headline = table(hwsurvey_report::headline::HEADLINE_ID);
    let c2c = headline
        .rows
        .iter()
        .find(|r| r.label == "c2c, package")
        .unwrap();
    assert_eq!(c2c.cells[2].note.as_deref(), Some("2.00x !"));
}
