//! `hwsurvey compare` as printed reports and plots: the HTML report whole, one PNG per page,
//! the example report on its pages, the format from the output extension, plots left out.

use super::*;

/// Width and height of a PNG from its IHDR chunk.
fn png_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[1..4], b"PNG", "{}", path.display());
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (be(16), be(20))
}

#[test]
fn html_report_printed_whole_one_png_per_page() {
    // every command scripts/html-to-pdf-png and this test call (each prints its SKIPPED line)
    let tools = [
        "chromium",
        "pdftoppm",
        "pdfinfo",
        "pdftotext",
        "convert-im6.q16",
    ];
    if !tools.iter().all(|t| tool(t)) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let files = write_three(dir.path());
    let html = dir.path().join("report.html");
    hwsurvey()
        .arg("compare")
        .args(&files)
        .args(["--format", "html", "-o"])
        .arg(&html)
        .assert()
        .success();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/html-to-pdf-png");
    let pdf = dir.path().join("out/report.pdf");
    let prefix = dir.path().join("out/report-page");
    let out = std::process::Command::new(script)
        .arg(&html)
        .arg(&pdf)
        .arg(&prefix)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = std::process::Command::new("pdfinfo")
        .arg(&pdf)
        .output()
        .unwrap();
    let pages: usize = String::from_utf8(info.stdout)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Pages:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap();
    // page 1 the headline alone, then findings, plots and the detail tables: several pages
    assert!(pages >= 3, "{pages} pages");
    let mut pngs: Vec<PathBuf> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    pngs.sort();
    assert_eq!(pngs.len(), pages, "one PNG per printed page");
    assert!(pngs[0].ends_with("report-page-01.png"), "{pngs:?}");
    for p in &pngs {
        // A4 at 96 dpi: 210 mm x 297 mm
        assert_eq!(png_size(p), (794, 1123), "{}", p.display());
    }
    // the end of the report is on the last page: nothing was cut
    let last = std::process::Command::new("pdftotext")
        .args(["-f", &pages.to_string(), "-l", &pages.to_string()])
        .arg(&pdf)
        .arg("-")
        .output()
        .unwrap();
    let text = String::from_utf8(last.stdout).unwrap();
    // the report's last words, the last footnote under the last table (Normalised views):
    // where the page breaks before it moves with every row added above, the end must print
    assert!(text.contains("no all-core point measured"), "{text}");
}

/// The shipped example, three machines of the standard profile (this VM, the x86-2s4n-smt and
/// arm64-2n-clusters guests: 2, 16 and 8 CPUs), prints to at most 12 A4 pages in Chromium
/// (19 pages before the small multiples and the one-line detail rows, 10 after, 11
/// with the notes printed in full and the clock.source row), and page 1 holds the headline: its title, every row label and the footnotes of what a
/// machine does not have.
#[test]
fn example_report_prints_to_12_pages_with_the_headline_on_page_1_and_every_word_whole() {
    let tools = [
        "chromium",
        "pdftoppm",
        "pdfinfo",
        "pdftotext",
        "convert-im6.q16",
    ];
    if !tools.iter().all(|t| tool(t)) {
        return;
    }
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/examples");
    let files: Vec<PathBuf> = [
        "vm-x86_64-standard.json",
        "guest-x86-2s4n-smt-standard.json",
        "guest-arm64-2n-clusters-standard.json",
    ]
    .iter()
    .map(|f| examples.join(f))
    .collect();
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("report.html");
    hwsurvey()
        .arg("compare")
        .args(&files)
        .args(["--format", "html", "-o"])
        .arg(&html)
        .assert()
        .success();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/html-to-pdf-png");
    let pdf = dir.path().join("report.pdf");
    let out = std::process::Command::new(script)
        .arg(&html)
        .arg(&pdf)
        .arg(dir.path().join("page"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = std::process::Command::new("pdfinfo")
        .arg(&pdf)
        .output()
        .unwrap();
    let pages: usize = String::from_utf8(info.stdout)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Pages:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap();
    assert!(pages <= 12, "{pages} pages");
    let first = std::process::Command::new("pdftotext")
        .args(["-f", "1", "-l", "1"])
        .arg(&pdf)
        .arg("-")
        .output()
        .unwrap();
    let text = String::from_utf8(first.stdout).unwrap();
    // the row labels of the headline, as the report builds them from these files
    let inputs = hwsurvey_report::inputs_with_default_labels(
        files
            .iter()
            .map(|p| hwsurvey_result::load(p).unwrap())
            .collect(),
    );
    let c = hwsurvey_report::compare(&inputs, None, false).unwrap();
    let headline = c.tables.iter().find(|t| t.id == "headline").unwrap();
    assert!(headline.rows.len() >= 20, "{} rows", headline.rows.len());
    assert!(text.contains("Headline"), "{text}");
    for r in &headline.rows {
        assert!(
            text.contains(&r.label),
            "page 1 lacks {:?}:\n{text}",
            r.label
        );
    }
    // every footnote of the headline is on page 1 too (its start: long ones wrap)
    for n in &headline.notes {
        let start: String = n.chars().take(30).collect();
        assert!(text.contains(&start), "page 1 lacks {start:?}:\n{text}");
    }
    // page 1 says when each run and the report were made, by which hwsurvey and
    // profile, numbers its pages, and gives one verdict sentence per machine
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("Report written 20"), "{flat}");
    assert!(
        flat.contains(&format!("hwsurvey {}", env!("CARGO_PKG_VERSION"))),
        "{flat}"
    );
    assert!(flat.contains(&format!("page 1 of {pages}")), "{flat}");
    for (k, p) in files.iter().enumerate() {
        let f = hwsurvey_result::load(p).unwrap();
        let day = &f.started_at[..10];
        let letter = (b'A' + k as u8) as char;
        assert!(
            flat.contains(&format!("{letter} {}: run {day}", inputs[k].label)),
            "page 1 lacks the run line of {letter}: {flat}"
        );
        assert!(
            flat.contains(&format!("profile {} v{}", f.profile.id, f.profile.version)),
            "{flat}"
        );
    }
    let verdict = |letter: &str| {
        flat.split(&format!(" {letter}: "))
            .nth(1)
            .and_then(|rest| rest.split(". ").next())
            .unwrap_or_else(|| panic!("no verdict sentence for {letter}: {flat}"))
            .to_string()
    };
    assert!(verdict("A").contains("the baseline"), "{}", verdict("A"));
    let b = verdict("B");
    assert!(
        b.contains(
            "2 sockets of 4 cores x 2 threads, emulated: figures measure qemu, not the hardware"
        ),
        "{b}"
    );
    // the arm64 guest, re-run since the probe tells QEMU TCG on arm64 (its generic timer at
    // 62.5 MHz): emulated as the x86 guest is, no longer "emulation not excluded"
    let c_ = verdict("C");
    assert!(
        c_.contains(
            "2 sockets of 4 cores x 1 thread, emulated: figures measure qemu, not the hardware"
        ),
        "{c_}"
    );
    // lscpu's way on the machine line, and footnotes in people's units
    assert!(flat.contains("2 sockets x 4 cores x 2 threads"), "{flat}");
    let raw_ns = flat.split(' ').collect::<Vec<_>>().windows(2).any(|w| {
        w[1].starts_with("ns") && w[0].len() >= 4 && w[0].bytes().all(|b| b.is_ascii_digit())
    });
    assert!(
        !raw_ns,
        "a duration of 1000 ns or more in raw ns on page 1: {flat}"
    );
    // every page: no word of the report cut at the page's edge or broken across lines (the
    // TLB reach table, kept on one line, ran off the page: its last column cut and the
    // whole report printed smaller; a loaded-latency figure cut its y axis title)
    let all = std::process::Command::new("pdftotext")
        .arg("-layout")
        .arg(&pdf)
        .arg("-")
        .output()
        .unwrap();
    let page = std::fs::read_to_string(&html).unwrap();
    // both emulated columns are greyed (class nc), the arm64 one as the x86 one
    let triad = page
        .split("<tr><th>STREAM Triad peak @N</th>")
        .nth(1)
        .and_then(|r| r.split("</tr>").next())
        .unwrap_or_else(|| panic!("no STREAM Triad row in the headline"));
    let classes: Vec<&str> = triad
        .split("<td class=\"")
        .skip(1)
        .filter_map(|c| c.split('"').next())
        .collect();
    assert_eq!(classes, ["num", "num nc", "num nc"], "{triad}");
    let (lost, split) =
        hwsurvey_testkit::printed::lost_or_split(&page, &String::from_utf8_lossy(&all.stdout));
    assert!(lost.is_empty(), "words of the report not printed: {lost:?}");
    assert!(split.is_empty(), "words broken in print: {split:?}");
}

/// `-o report.md` without `--format` writes Markdown (the extension decides; terminal text
/// with box drawing in a .md file was the old result), `--format` still wins, and `--plots`
/// naming a file says so instead of "cannot create: File exists".
#[test]
fn format_from_the_output_extension_and_plots_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_three(dir.path());
    for (name, starts) in [
        ("r.md", "# hwsurvey comparison"),
        ("r.html", "<!DOCTYPE html>"),
        ("r.json", "{"),
    ] {
        let out = dir.path().join(name);
        hwsurvey()
            .arg("compare")
            .args(&files)
            .arg("-o")
            .arg(&out)
            .assert()
            .success();
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(
            text.starts_with(starts),
            "{name}: {}",
            &text[..text.len().min(80)]
        );
    }
    let forced = dir.path().join("forced.md");
    hwsurvey()
        .arg("compare")
        .args(&files)
        .args(["--format", "csv", "-o"])
        .arg(&forced)
        .assert()
        .success();
    assert!(!std::fs::read_to_string(&forced).unwrap().starts_with('#'));
    let png = dir.path().join("x.png");
    std::fs::write(&png, b"\x89PNG").unwrap();
    let assert = hwsurvey()
        .arg("compare")
        .args(&files)
        .arg("--plots")
        .arg(&png)
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert_eq!(
        err,
        format!(
            "hwsurvey: error: --plots {}: exists and is not a directory\n",
            png.display()
        )
    );
}

/// The report keeps 4 thread-scaling plots per family (the panels of its figure) and names the others: where they are
/// with --plots DIR (every plot written there), how to get them without.
#[test]
fn plots_left_out_of_the_report_are_named_with_where_they_are() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reports/examples/v1/x86_64-standard.json");
    let dir = tempfile::tempdir().unwrap();
    let plots = dir.path().join("plots");
    let out = dir.path().join("r.md");
    let assert = hwsurvey()
        .arg("compare")
        .arg(&example)
        .arg("--plots")
        .arg(&plots)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        err.contains(&format!(
            "the report shows 4 thread-scaling plots per family; 23 more are in {}: mem.bandwidth: read/block=16KiB vs threads;",
            plots.display()
        )),
        "{err}"
    );
    assert!(plots
        .join("mem.bandwidth-stream.scale-vs-threads.svg")
        .is_file());
    // a second report, without --plots (r.md exists: replacing it would need --force)
    let assert = hwsurvey()
        .arg("compare")
        .arg(&example)
        .arg("-o")
        .arg(dir.path().join("r2.md"))
        .assert()
        .success();
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        err.contains("23 more are written by --plots DIR: "),
        "{err}"
    );
}
