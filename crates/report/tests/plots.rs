//! Plots over the three result files checked in under reports/examples (x86_64 standard run,
//! aarch64 and sparc64 quick runs under qemu-user): colours readable on white with distinct
//! markers, one heading per plot, whole-number ticks on count axes, descriptive file names.

use std::path::PathBuf;

use hwsurvey_report::plot::{self, colour, count_ticks, file_name, log2_ticks, plot_files};
use hwsurvey_report::{compare, inputs_with_default_labels, render, Comparison, Format, Input};

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

/// Tick labels under the x axis (centred, between the plotting area and the axis title).
fn x_tick_labels(svg: &str) -> Vec<String> {
    texts(svg)
        .into_iter()
        .filter(|(anchor, y, _)| anchor == "middle" && *y > 250.0 && *y < 345.0)
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
    // the sparc64 line (third) was yellow: now black squares on a dotted line
    let c = examples();
    let plots = plot::all_plots(&c);
    let (_, svg) = plots
        .iter()
        .find(|(t, _)| t == "sync.contention: mutex vs threads")
        .unwrap();
    assert!(svg.contains("<circle") && svg.contains("fill=\"#0072B2\""));
    assert!(svg.contains("<polygon") && svg.contains("fill=\"#D55E00\""));
    assert!(svg.contains("<rect") && svg.contains("fill=\"#000000\""));
    assert_eq!(colour(2), plotters::style::RGBColor(0, 0, 0));
}

#[test]
fn each_plot_has_one_heading() {
    let c = examples();
    let plots = plot::all_plots(&c);
    assert_eq!(plots.len(), 24);
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
    let plots = plot::all_plots(&c);
    let mut thread_plots = 0;
    for (title, svg) in &plots {
        let labels = x_tick_labels(svg);
        assert!(!labels.is_empty(), "{title}: no x tick labels found");
        if title.ends_with(" vs threads") {
            thread_plots += 1;
            for l in &labels {
                assert!(
                    l.parse::<u32>().is_ok(),
                    "{title}: tick {l:?} is no whole thread count"
                );
            }
        }
        if title.contains("vs clients") {
            assert_eq!(labels, ["1", "2", "4", "8", "16"], "{title}");
        }
    }
    assert_eq!(thread_plots, 10);
    // the x86_64 run has 4 thread counts at most on 2 CPUs: 0 1 2 3 4, no 0.5 steps
    let (_, mutex) = plots
        .iter()
        .find(|(t, _)| t == "sync.contention: mutex vs threads")
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
    // every plot, also those the report leaves out (at most 3 thread-scaling plots per family
    // there), which left_out_of_report names so that the report can say where they are
    let left_out = plot::left_out_of_report(&c);
    assert_eq!(names.len(), plot::all_plots(&c).len() + left_out.len());
    assert_eq!(left_out.len(), 25, "{left_out:?}");
    assert!(left_out.contains(&"mem.bandwidth: stream.scale vs threads".to_string()));
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
