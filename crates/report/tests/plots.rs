//! Plots over the three result files checked in under reports/examples (x86_64 standard run,
//! aarch64 and sparc64 quick runs under qemu-user): colours readable on white with distinct
//! markers, one heading per plot, whole-number ticks on count axes, descriptive file names.

use std::path::PathBuf;

use hwsurvey_report::plot::{self, colour, count_ticks, file_name, log2_ticks, plot_files};
use hwsurvey_report::{compare, inputs_with_default_labels, render, Comparison, Format, Input};

/// The report's figures over these files: per family its thread scaling, then per view of
/// the scaling tables.
const FIGURES: [&str; 10] = [
    "mem.bandwidth vs threads",
    "raid.parity vs threads",
    "cpu.scaling vs threads",
    "sync.contention vs threads",
    "mem.bandwidth read bandwidth vs block size",
    "mem.bandwidth write bandwidth vs block size",
    "mem.latency latency vs working set",
    "mem.loaded_latency latency vs delivered bandwidth",
    "service.point_select throughput vs clients",
    "service.point_select p99 latency vs clients",
];

fn examples() -> Comparison {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../reports/examples/v1");
    let inputs: Vec<Input> = inputs_with_default_labels(
        [
            "x86_64-standard.json",
            "aarch64-qemu-quick.json",
            "sparc64-qemu-quick.json",
        ]
        .iter()
        .map(|n| hwsurvey_result::load(&dir.join(n)).unwrap())
        .collect(),
    );
    compare(&inputs, None, true).unwrap()
}

/// `(text-anchor, y, text)` of every `<text>` element of a plotters SVG.
fn texts(svg: &str) -> Vec<(String, f64, String)> {
    svg.split("<text ")
        .skip(1)
        .filter_map(|t| {
            let (attrs, rest) = t.split_once('>')?;
            let body = rest.split("</text>").next()?.trim().to_string();
            let attr = |name: &str| {
                attrs
                    .split(&format!("{name}=\""))
                    .nth(1)
                    .and_then(|a| a.split('"').next())
                    .map(str::to_string)
            };
            let y = attr("y")?.parse().ok()?;
            Some((attr("text-anchor").unwrap_or_default(), y, body))
        })
        .collect()
}

/// Tick labels under the x axis of a standalone file: centred, in its lowest 40 px (the
/// title, centred too, is at the top; the file is taller where its axis titles take two
/// lines).
fn x_tick_labels(svg: &str) -> Vec<String> {
    let height: f64 = svg
        .split("height=\"")
        .nth(1)
        .and_then(|h| h.split('"').next())
        .and_then(|h| h.parse().ok())
        .unwrap_or(360.0);
    texts(svg)
        .into_iter()
        .filter(|(anchor, y, _)| anchor == "middle" && *y > height - 40.0 && *y <= height)
        .map(|(_, _, t)| t)
        .collect()
}

/// WCAG 2.1 relative luminance of an sRGB colour.
fn luminance(r: u8, g: u8, b: u8) -> f64 {
    let lin = |c: u8| {
        let c = c as f64 / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

#[test]
fn line_colours_readable_on_white_with_distinct_markers() {
    for k in 0..6 {
        let c = colour(k);
        // WCAG 2.1 non-text contrast for graphical objects: at least 3:1 against white
        let contrast = 1.05 / (luminance(c.0, c.1, c.2) + 0.05);
        assert!(contrast >= 3.0, "colour {k} {c:?}: contrast {contrast:.2}");
    }
    // the sparc64 line (third) was yellow: now black squares on a dotted line, in the
    // report's figure and in the standalone file
    let c = examples();
    let plots = plot::all_plots(&c);
    let (_, figure) = plots
        .iter()
        .find(|(t, _)| t == "sync.contention vs threads")
        .unwrap();
    let files = plot_files(&c);
    let (_, file) = files
        .iter()
        .find(|(n, _)| n == "sync.contention-mutex-vs-threads.svg")
        .unwrap();
    for svg in [figure, file] {
        assert!(svg.contains("<circle") && svg.contains("fill=\"#0072B2\""));
        assert!(svg.contains("<polygon") && svg.contains("fill=\"#D55E00\""));
        assert!(svg.contains("<rect") && svg.contains("fill=\"#000000\""));
    }
    assert_eq!(colour(2), plotters::style::RGBColor(0, 0, 0));
}

#[test]
fn each_plot_has_one_heading() {
    let c = examples();
    let plots = plot::all_plots(&c);
    let titles: Vec<&str> = plots.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(titles, FIGURES, "{titles:?}");
    let html = render(&c, Format::Html, &plots);
    for (title, svg) in &plots {
        let escaped = hwsurvey_report::render::html_escape(title);
        assert!(
            !svg.contains(&escaped),
            "{title}: the SVG has its own caption"
        );
        // one caption in the plots' grid (a scaling table has its own heading among the
        // detail tables)
        assert_eq!(
            html.matches(&format!("<figcaption>{escaped}</figcaption>"))
                .count(),
            1,
            "{title}: one caption in the HTML report"
        );
    }
}

#[test]
fn count_axes_have_whole_number_ticks() {
    assert_eq!(count_ticks(2.0), [0.0, 1.0, 2.0]);
    assert_eq!(count_ticks(1.0), [0.0, 1.0]);
    assert_eq!(count_ticks(3.0), [0.0, 1.0, 2.0, 3.0]);
    let many = count_ticks(128.0);
    assert_eq!(many.first(), Some(&0.0));
    assert_eq!(many.last(), Some(&128.0));
    assert!(many.len() <= 17 && many.iter().all(|t| t.fract() == 0.0));
    assert_eq!(log2_ticks(-0.25, 4.25), [0.0, 1.0, 2.0, 3.0, 4.0]);
    let c = examples();
    // the standalone files (one plot each, 640 x 360)
    let plots = plot_files(&c);
    let mut thread_plots = 0;
    for (title, svg) in &plots {
        let labels = x_tick_labels(svg);
        assert!(!labels.is_empty(), "{title}: no x tick labels found");
        if title.ends_with("-vs-threads.svg") {
            thread_plots += 1;
            for l in &labels {
                assert!(
                    l.parse::<u32>().is_ok(),
                    "{title}: tick {l:?} is no whole thread count"
                );
            }
        }
        if title.contains("-vs-clients-") {
            assert_eq!(labels, ["1", "2", "4", "8", "16"], "{title}");
        }
    }
    assert_eq!(thread_plots, 35);
    // the x86_64 run has 4 thread counts at most on 2 CPUs: 0 1 2 3 4, no 0.5 steps
    let (_, mutex) = plots
        .iter()
        .find(|(t, _)| t == "sync.contention-mutex-vs-threads.svg")
        .unwrap();
    assert_eq!(x_tick_labels(mutex), ["0", "1", "2", "3", "4"]);
}

#[test]
fn plot_files_named_by_family_and_view() {
    assert_eq!(
        file_name("mem.bandwidth: stream.triad vs threads"),
        "mem.bandwidth-stream.triad-vs-threads"
    );
    let c = examples();
    let files = plot_files(&c);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    // every plot, also the thread-scaling series the report leaves out (it draws at most 4
    // per family, as the panels of one figure: 4 of mem.bandwidth's 23, 4 of raid.parity's 8,
    // both of cpu.scaling and of sync.contention), which left_out_of_report names so that the
    // report can say where they are; and one file per scaling table (14)
    let left_out = plot::left_out_of_report(&c);
    let threads = names
        .iter()
        .filter(|n| n.ends_with("-vs-threads.svg"))
        .count();
    assert_eq!(threads, 35);
    assert_eq!(names.len(), threads + 14);
    assert_eq!(left_out.len(), 35 - 12, "{left_out:?}");
    assert!(left_out.contains(&"mem.bandwidth: read/block=1KiB vs threads".to_string()));
    assert!(!left_out.contains(&"mem.bandwidth: stream.scale vs threads".to_string()));
    assert!(names.contains(&"mem.bandwidth-stream.scale-vs-threads.svg"));
    for expected in [
        "sync.contention-mutex-vs-threads.svg",
        // the bandwidth headline, run on all three, before block sizes one run had
        "mem.bandwidth-stream.triad-vs-threads.svg",
        "mem.latency-latency-vs-working-set-full_random-thp.svg",
        "mem.bandwidth-read-bandwidth-vs-block-size-threads-2.svg",
        "service.point_select-throughput-vs-clients-pages-base.svg",
        "mem.loaded_latency-latency-vs-delivered-bandwidth-read-load.svg",
    ] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    // stable across runs, and a standalone file says what it shows
    assert_eq!(
        plot_files(&c)
            .iter()
            .map(|(n, _)| n.clone())
            .collect::<Vec<_>>(),
        names
    );
    let (_, svg) = files
        .iter()
        .find(|(n, _)| n == "sync.contention-mutex-vs-threads.svg")
        .unwrap();
    assert!(svg.contains("sync.contention: mutex vs threads"));
}

/// The report's figures are small multiples: one legend and one pair of axis titles above
/// the panels, a panel per series group or scaling table with its own title, the panels on
/// the same axes (the same tick labels in each) unless one's values are more than ten times
/// another's, which the axis title then says.
#[test]
fn figures_are_small_multiples_with_one_legend() {
    let c = examples();
    let plots = plot::all_plots(&c);
    for (title, panels, y_ticks) in [
        (
            "mem.bandwidth vs threads",
            &["stream.triad", "stream.add", "stream.copy", "stream.scale"][..],
            // the quick qemu-user runs lie far below the standard one: a log axis
            &["100M", "500M", "2G"][..],
        ),
        (
            "sync.contention vs threads",
            &["atomic_increment", "mutex"][..],
            &["1M", "5M", "20M"][..],
        ),
        (
            "mem.latency latency vs working set",
            &[
                "full_random, base",
                "page_local, base",
                "full_random, thp",
                "page_local, thp",
            ][..],
            &["1", "5", "20", "100", "500"][..],
        ),
    ] {
        let (_, svg) = plots.iter().find(|(t, _)| t == title).unwrap();
        let texts: Vec<String> = texts(svg).into_iter().map(|(_, _, t)| t).collect();
        let found: Vec<&String> = texts
            .iter()
            .filter(|t| panels.contains(&t.as_str()))
            .collect();
        assert_eq!(found, panels, "{title}: {texts:?}");
        // the legend once: each platform's label one time, after the axis titles
        assert!(texts[0].starts_with("x: "), "{title}: {texts:?}");
        assert_eq!(texts[1..=c.platforms.len()], c.platforms[..], "{title}");
        for label in &c.platforms {
            assert_eq!(texts.iter().filter(|t| *t == label).count(), 1, "{title}");
        }
        // each panel's title followed by the same y tick labels
        assert!(!texts[0].ends_with(", own scale per panel"), "{title}");
        for p in panels {
            let at = texts.iter().position(|t| t == p).unwrap();
            assert_eq!(
                texts[at + 1..=at + y_ticks.len()],
                y_ticks[..],
                "{title}: {p}"
            );
        }
    }
}

/// The three examples (a VM and two qemu TCG guests, up to 30x apart) on a shared
/// linear axis left two lines flat on zero and the loaded-latency curves a spike at x = 0.
/// Where the lines of a figure lie more than 10x apart, its axis is logarithmic and says so:
/// bandwidth and RAID-6 y, loaded latency's delivered-bandwidth x (the examples' own lines
/// top out 8x apart, the VM's 23.4 GB/s against the x86 guest's 2.9 GB/s, so that guest's
/// loaded-latency figures are cut to a tenth here: 28x); and no point is dropped to get
/// there (every series keeps a drawn line).
#[test]
fn figures_of_machines_far_apart_use_log_axes_and_say_so() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../reports/examples");
    let inputs: Vec<Input> = inputs_with_default_labels(
        [
            "vm-x86_64-standard.json",
            "guest-x86-2s4n-smt-standard.json",
            "guest-arm64-2n-clusters-standard.json",
        ]
        .iter()
        .map(|n| hwsurvey_result::load(&dir.join(n)).unwrap())
        .enumerate()
        .map(|(k, f)| match k {
            1 => hwsurvey_testkit::fleet_sample::scale(f, Some("mem.loaded_latency"), 0.1),
            _ => f,
        })
        .collect(),
    );
    let c = compare(&inputs, None, true).unwrap();
    let figures = plot::report_figures(&c);
    let axis_titles = |title: &str| {
        let svg = &figures
            .iter()
            .find(|(t, _)| t == title)
            .unwrap_or_else(|| panic!("no figure {title:?}"))
            .1;
        texts(svg)
            .into_iter()
            .map(|t| t.2)
            .find(|t| t.starts_with("x: "))
            .unwrap_or_else(|| panic!("{title}: no axis titles"))
    };
    for title in ["mem.bandwidth vs threads", "raid.parity vs threads"] {
        let axes = axis_titles(title);
        let y = axes.split("   y: ").nth(1).unwrap();
        assert!(y.contains("log scale"), "{title}: {axes}");
    }
    let loaded = axis_titles("mem.loaded_latency latency vs delivered bandwidth");
    let x = loaded.split("   y: ").next().unwrap();
    assert!(x.contains("log scale"), "{loaded}");
    // the standalone files of `compare --plots DIR` are drawn the same way (they drew STREAM
    // Triad's A at 46 GB/s and C at 1.40 GB/s on a linear axis, C flat on zero), with their
    // title above the axis titles
    let files = plot_files(&c);
    let file_axes = |name: &str| {
        let svg = &files
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no plot file {name}"))
            .1;
        let texts: Vec<String> = texts(svg).into_iter().map(|t| t.2).collect();
        let at = texts
            .iter()
            .position(|t| t.starts_with("x: "))
            .unwrap_or_else(|| panic!("{name}: no axis titles in {texts:?}"));
        assert!(at > 0, "{name}: no title above the axis titles: {texts:?}");
        texts[at].clone()
    };
    for name in [
        "mem.bandwidth-stream.triad-vs-threads.svg",
        // 4+2: the VM's 149 GB/s against the guests' 6.6 GB/s (18+2 lies 9.5x apart: linear)
        "raid.parity-gen.best-4-2-vs-threads.svg",
    ] {
        let axes = file_axes(name);
        let y = axes.split("   y: ").nth(1).unwrap();
        assert!(y.contains("log scale"), "{name}: {axes}");
    }
    let name = "mem.loaded_latency-latency-vs-delivered-bandwidth-read-load.svg";
    let axes = file_axes(name);
    let x = axes.split("   y: ").next().unwrap();
    assert!(x.contains("log scale"), "{name}: {axes}");
    // a rate on a log axis ticks in decimal steps (0.2, 0.5, 1, 2 GB/s), not at powers of
    // two of bytes/s (0.134, 0.268, 0.537 GB/s)
    let svg = &files.iter().find(|(n, _)| n == name).unwrap().1;
    let ticks = x_tick_labels(svg);
    assert!(ticks.len() >= 3, "{name}: {ticks:?}");
    for t in &ticks {
        let v: f64 = t.parse().unwrap_or_else(|_| panic!("{name}: tick {t:?}"));
        let mantissa = v / 10f64.powf(v.log10().floor());
        assert!(
            [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6),
            "{name}: tick {t} is no 1, 2 or 5 x 10^k: {ticks:?}"
        );
    }
    // lines within 10x of each other keep a linear axis (sync.contention's mutex, for one)
    let linear = files
        .iter()
        .filter(|(n, _)| !file_axes(n).contains("log scale"))
        .count();
    assert!(linear > 0, "every plot file on log axes");
    assert!(!file_axes("sync.contention-mutex-vs-threads.svg").contains("log scale"));
}
