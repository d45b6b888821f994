//! Snapshots of every format over three synthetic result files (x86_64, aarch64, sparc64),
//! escaping, noise verdicts, profile-version refusal and missing-test reasons.

use hwsurvey_report::{
    compare, default_label, distinct_labels, inputs_with_default_labels, label_candidates, plot,
    render, CompareError, Format, Input,
};
use hwsurvey_testkit::report_sample::{result, three, Spec};

fn inputs(files: Vec<hwsurvey_result::ResultFile>) -> Vec<Input> {
    inputs_with_default_labels(files)
}

#[test]
fn every_format_snapshot() {
    let c = compare(&inputs(three()), None, false).unwrap();
    let plots = plot::scaling_plots(&c, 3);
    assert_eq!(
        plots.len(),
        1,
        "one scaling plot: mem.bandwidth stream.triad"
    );
    insta::assert_snapshot!("terminal", render(&c, Format::Terminal, &plots));
    insta::assert_snapshot!("markdown", render(&c, Format::Markdown, &plots));
    insta::assert_snapshot!("csv", render(&c, Format::Csv, &plots));
    insta::assert_snapshot!("json", render(&c, Format::Json, &plots));
    insta::assert_snapshot!("html", render(&c, Format::Html, &plots));
}

#[test]
fn missing_tests_say_why() {
    let c = compare(&inputs(three()), None, false).unwrap();
    let lat = c
        .tables
        .iter()
        .find(|t| t.id == "family:mem.latency")
        .unwrap();
    let row = lat
        .rows
        .iter()
        .find(|r| r.label == "chase.random/ws=256MiB/pages=hugetlb")
        .unwrap();
    assert_eq!(
        row.cells[1].missing.as_deref(),
        Some("skipped: hugetlb pool empty (nr_hugepages = 0)")
    );
    let raid = c
        .tables
        .iter()
        .find(|t| t.id == "family:raid.parity")
        .unwrap();
    assert_eq!(
        raid.rows[0].cells[2].missing.as_deref(),
        Some("skipped: unsupported: no vector RAID-6 kernel for sparc64")
    );
}

#[test]
fn noise_is_not_a_win() {
    let spec = |host: &str, bw: f64, spread: f64| Spec {
        hostname: host.into(),
        arch: "x86_64".into(),
        kernel: "6.1".into(),
        cpus: 2,
        triad_one_thread: bw,
        spread,
        profile_version: 1,
        hugetlb_skipped: false,
    };
    // 3% apart with +-10% spread: within noise
    let c = compare(
        &inputs(vec![
            result(&spec("a", 10e9, 0.1)),
            result(&spec("b", 10.3e9, 0.1)),
        ]),
        None,
        false,
    )
    .unwrap();
    let bw = c
        .tables
        .iter()
        .find(|t| t.id == "family:mem.bandwidth")
        .unwrap();
    assert_eq!(bw.rows[0].cells[2].note.as_deref(), Some("within noise"));
    // 30% apart with +-1% spread: a win
    let c = compare(
        &inputs(vec![
            result(&spec("a", 10e9, 0.01)),
            result(&spec("b", 13e9, 0.01)),
        ]),
        None,
        false,
    )
    .unwrap();
    let bw = c
        .tables
        .iter()
        .find(|t| t.id == "family:mem.bandwidth")
        .unwrap();
    assert_eq!(bw.rows[0].cells[2].note.as_deref(), Some("+30% better"));
}

#[test]
fn different_profile_versions_refused_unless_forced() {
    let mut files = three();
    files[2].profile.version = 2;
    let e = compare(&inputs(files.clone()), None, false).unwrap_err();
    assert!(matches!(e, CompareError::ProfileMismatch(_)));
    assert!(e.to_string().contains("t2000: standard v2"), "{e}");
    let c = compare(&inputs(files), None, true).unwrap();
    for t in c.tables.iter().filter(|t| t.id != "glance") {
        assert!(
            t.notes
                .iter()
                .any(|n| n.starts_with("DIFFERENT PROFILE VERSIONS")
                    || (t.id == "headline" && n.contains("] DIFFERENT PROFILE VERSIONS"))),
            "{}",
            t.id
        );
    }
    // people read it once: a footnote of the headline, not under every table
    for text in [
        render(&c, Format::Terminal, &[]),
        render(&c, Format::Markdown, &[]),
    ] {
        assert_eq!(
            text.matches("DIFFERENT PROFILE VERSIONS").count(),
            1,
            "{text}"
        );
    }
}

#[test]
fn hostile_hostname_is_escaped_in_html() {
    let mut files = three();
    files[0].environment.hostname =
        hwsurvey_model::Probed::Known("<script>alert(1)</script>".into());
    let c = compare(&inputs(files), None, false).unwrap();
    let html = render(&c, Format::Html, &plot::scaling_plots(&c, 3));
    assert!(!html.contains("<script>"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    let md = render(&c, Format::Markdown, &[]);
    assert!(!md.contains("<script>"));
}

#[test]
fn baseline_must_be_a_label() {
    let e = compare(&inputs(three()), Some("nope"), false).unwrap_err();
    assert!(e
        .to_string()
        .starts_with("--baseline \"nope\" is not one of the column labels"));
    let c = compare(&inputs(three()), Some("tx2"), false).unwrap();
    let bw = c
        .tables
        .iter()
        .find(|t| t.id == "family:mem.bandwidth")
        .unwrap();
    assert_eq!(bw.columns[3], "xeon vs tx2");
}

#[test]
fn same_default_labels_are_told_apart_and_noted() {
    let files = vec![
        result(&three_spec(0)),
        result(&three_spec(0)),
        three().remove(1),
    ];
    // a default label is the hostname
    assert_eq!(default_label(&files[0]), "xeon");
    assert_eq!(default_label(&files[2]), "tx2");
    let candidates: Vec<Vec<String>> = files.iter().map(label_candidates).collect();
    assert_eq!(
        candidates[0],
        ["xeon", "xeon x86_64", "xeon x86_64 6.1.0-18-amd64"]
    );
    let names = |a: &str, b: &str, c: &str| -> Vec<(String, String)> {
        [a, b, c]
            .iter()
            .map(|p| {
                let path = std::path::Path::new(p);
                let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
                (stem, p.to_string())
            })
            .collect()
    };
    // same host, arch and kernel: the file name; the other column keeps its hostname
    let (labels, note) =
        distinct_labels(&candidates, &names("before.json", "after.json", "tx2.json"));
    assert_eq!(
        labels,
        [
            "xeon x86_64 6.1.0-18-amd64 (before)",
            "xeon x86_64 6.1.0-18-amd64 (after)",
            "tx2",
        ]
    );
    assert_eq!(
        note.as_deref(),
        Some("columns \"xeon x86_64 6.1.0-18-amd64 (before)\", \"xeon x86_64 6.1.0-18-amd64 (after)\" have the same hostname, arch and kernel: told apart by file name; name them with --label")
    );
    // same file name in two directories: the paths; the same path twice: the column number
    let (labels, _) = distinct_labels(&candidates, &names("a/r.json", "b/r.json", "tx2.json"));
    assert_eq!(labels[0], "xeon x86_64 6.1.0-18-amd64 (a/r.json)");
    assert_eq!(labels[1], "xeon x86_64 6.1.0-18-amd64 (b/r.json)");
    let (labels, _) = distinct_labels(&candidates, &names("r.json", "r.json", "tx2.json"));
    assert_eq!(labels[0], "xeon x86_64 6.1.0-18-amd64 (column 1)");
    assert_eq!(labels[1], "xeon x86_64 6.1.0-18-amd64 (column 2)");
    // distinct hostnames stay as they are, without a note
    let (labels, note) =
        distinct_labels(&candidates[1..], &names("a.json", "b.json", "c.json")[1..]);
    assert_eq!(labels, ["xeon", "tx2"]);
    assert_eq!(note, None);
    // one host, two architectures (a binary under qemu-user): the arch tells them apart
    let mut arm = result(&three_spec(0));
    arm.environment.arch = "aarch64".into();
    let two = [label_candidates(&files[0]), label_candidates(&arm)];
    let (labels, note) = distinct_labels(&two, &names("a.json", "b.json", "c.json")[..2]);
    assert_eq!(labels, ["xeon x86_64", "xeon aarch64"]);
    assert_eq!(note, None);
    // the note reaches the report
    let inputs: Vec<Input> = labels_and(
        files,
        &candidates,
        &names("before.json", "after.json", "tx2.json"),
    );
    let mut c = compare(&inputs, None, false).unwrap();
    c.add_note("columns ... told apart by file name".into());
    let md = render(&c, Format::Markdown, &[]);
    assert!(md.contains("| property | xeon x86_64 6.1.0-18-amd64 (before) | xeon x86_64 6.1.0-18-amd64 (after) |"), "{md}");
    assert!(md.contains("told apart by file name"));
}

fn three_spec(k: usize) -> Spec {
    let f = &three()[k];
    Spec {
        hostname: f.environment.hostname.known().cloned().unwrap(),
        arch: f.environment.arch.clone(),
        kernel: f.environment.kernel_release.known().cloned().unwrap(),
        cpus: 4,
        triad_one_thread: 10e9,
        spread: 0.02,
        profile_version: 1,
        hugetlb_skipped: false,
    }
}

fn labels_and(
    files: Vec<hwsurvey_result::ResultFile>,
    candidates: &[Vec<String>],
    names: &[(String, String)],
) -> Vec<Input> {
    let (labels, _) = distinct_labels(candidates, names);
    labels
        .into_iter()
        .zip(files)
        .map(|(label, file)| Input { label, file })
        .collect()
}

/// Compare's JSON and CSV carry each measured cell's median, min, max, CV and the
/// 95 % interval as numbers, the same as the result file's summary of that test.
#[test]
fn measured_cells_carry_the_summary_as_numbers_in_json_and_csv() {
    let files = three();
    let c = compare(&inputs(files.clone()), None, false).unwrap();
    let table = c
        .tables
        .iter()
        .find(|t| t.id == "family:mem.bandwidth")
        .unwrap();
    let row = table
        .rows
        .iter()
        .find(|r| r.label.starts_with("stream.triad/"))
        .unwrap();
    let test = files[0]
        .tests
        .iter()
        .find(|t| t.point.family == "mem.bandwidth" && t.point.id == row.label)
        .unwrap();
    let summary = test.metrics[0].summary.as_ref().unwrap();
    let stats = row.cells[0]
        .stats
        .as_ref()
        .expect("a measured cell has stats");
    assert_eq!(stats.n, summary.n);
    assert_eq!(stats.median, summary.median);
    assert_eq!(stats.min, summary.min);
    assert_eq!(stats.max, summary.max);
    assert_eq!(stats.cv, summary.cv);
    assert_eq!(stats.ci95_low, summary.median_ci95_low);
    assert_eq!(stats.ci95_high, summary.median_ci95_high);
    assert!(stats.min <= stats.median && stats.median <= stats.max);
    // a relative ("vs") cell has none
    assert!(row.cells.last().unwrap().stats.is_none());

    let json: serde_json::Value = serde_json::from_str(&render(&c, Format::Json, &[])).unwrap();
    let j = json["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "family:mem.bandwidth")
        .unwrap()["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == row.label.as_str())
        .unwrap()["cells"][0]["stats"]
        .clone();
    assert_eq!(j["min"].as_f64(), Some(summary.min));
    assert_eq!(j["n"].as_u64(), Some(summary.n as u64));

    let csv = render(&c, Format::Csv, &[]);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let line = csv
        .lines()
        .find(|l| l.starts_with(&format!("family:mem.bandwidth,{},", row.label)))
        .unwrap();
    let fields: Vec<&str> = line.split(',').collect();
    let field = |name: &str| fields[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(field("n"), summary.n.to_string());
    assert_eq!(field("max").parse::<f64>().unwrap(), summary.max);
    assert_eq!(
        field("ci95_low").parse::<f64>().unwrap(),
        summary.median_ci95_low
    );
}
