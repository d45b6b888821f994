//! `hwsurvey fleet` on fleets built in a temporary folder from reports/examples/: the
//! defective host (30 % slow) named with its cause and failed (exit 2), a corrupt file listed
//! as failed (exit 2), a missing input (exit 3), the rule's parameters printed, the JSON and Markdown forms, the
//! HTML report printed with every word whole.

use std::path::Path;

use hwsurvey_testkit::fleet_sample::{every_rule_evaluated, example, scale, set_thp, with_host};
use hwsurvey_testkit::hwsurvey;

fn fleet_dir(dir: &Path) {
    fleet_dir_named(dir, |n| format!("node{n}"));
}

/// Five hosts of the x86_64 example in `dir` (every rule evaluated, so that a host can pass),
/// host `n` (1 to 5) named `name(n)`; the fourth 30 % slower on memory bandwidth, with THP off.
fn fleet_dir_named(dir: &Path, name: impl Fn(usize) -> String) {
    let base = every_rule_evaluated(example("x86_64-standard.json"));
    for (i, f) in [1.0, 1.01, 0.99, 0.7, 1.02].iter().enumerate() {
        let host = name(i + 1);
        let mut file = with_host(base.clone(), &host);
        file = if *f == 0.7 {
            set_thp(scale(file, Some("mem.bandwidth"), 0.7), "never")
        } else {
            scale(file, None, *f)
        };
        file.write_atomic(&dir.join(&host).join("result.json"))
            .unwrap();
    }
}

#[test]
fn the_defective_host_is_named_with_its_cause() {
    let dir = tempfile::tempdir().unwrap();
    fleet_dir(dir.path());
    let out = hwsurvey()
        .arg("fleet")
        .arg(dir.path())
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    let text = hwsurvey_testkit::fleet_sample::unwrapped(&String::from_utf8_lossy(&out.stdout));
    // node4's STREAM Triad 30 % below its group's: it fails (--fail-pct 20), exit 2
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("5 hosts from 5 result files in 1 group: 1 stood out or drifted, 1 failed; verdicts: 1 fail, 4 pass (exit 2)"),
        "{text}"
    );
    assert!(
        text.contains("\n  verdict: fail: STREAM Triad, all threads -30.0 % from the group median, worse by --fail-pct 20 % or more; configuration differs from the group's majority (THP)\n"),
        "{text}"
    );
    // into a pipe the tables fit 80 columns (the fleet table was 150 wide), node4's row first
    // line holding its verdict
    for l in text.lines().filter(|l| l.starts_with(['┌', '│', '├', '└'])) {
        assert!(console::measure_text_width(l) <= 80, "{l}\n{text}");
    }
    assert!(
        text.lines()
            .any(|l| l.starts_with("│ node4 ") && l.contains(" fail ")),
        "{text}"
    );
    assert!(
        text.contains("(k = 3) and more than 5 % from the median"),
        "{text}"
    );
    assert!(
        text.contains("node4:\n  outlier: STREAM Triad, all threads -30.0 %"),
        "{text}"
    );
    assert!(
        text.contains("  cause: THP is never (the group's majority: madvise)"),
        "{text}"
    );
    // no other host has a detail block of outliers
    assert_eq!(text.matches("  outlier: ").count(), 1, "{text}");
    // the options are stated as given
    let out = hwsurvey()
        .args(["fleet", "--k", "4", "--min-diff-pct", "35"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = hwsurvey_testkit::fleet_sample::unwrapped(&String::from_utf8_lossy(&out.stdout));
    assert!(text.contains("(k = 4) and more than 35 %"), "{text}");
    assert!(!text.contains("  outlier: "), "{text}");
    // node4's figure no longer stands out, its configuration still does (THP never where
    // the other four run madvise): exit 1, the rule stated
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "node4:\n  stands out: its configuration differs from the group's majority (THP)\n  cause: THP is never (the group's majority: madvise)"
        ),
        "{text}"
    );
    assert!(text.contains("1 stood out or drifted, 0 failed"), "{text}");
    assert!(
        text.contains("configuration rule: a host whose configuration (memory size, DIMMs, DIMM speed, memory channels, PCIe links below max, THP, governor, CPUs online, cgroup CPU quota, cgroup memory limit, cgroup cpuset, hugetlb pools, SMT, numa_balancing, clocksource, BIOS, microcode; not the kernel) differs from the value held by more than half of its group (3 or more hosts) stands out with that cause, whatever its figures"),
        "{text}"
    );
}

#[test]
fn json_and_markdown_hold_the_same_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    fleet_dir(dir.path());
    let out = hwsurvey()
        .arg("fleet")
        .arg(dir.path())
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["options"]["k"], 3.0);
    assert_eq!(v["options"]["min_diff_pct"], 5.0);
    let hosts = v["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 5);
    let node4 = hosts.iter().find(|h| h["name"] == "node4").unwrap();
    assert_eq!(node4["verdict"], "fail");
    assert_eq!(node4["outliers"][0]["figure"], "stream.triad.all");
    assert_eq!(node4["causes"][0]["fact"], "THP");
    assert_eq!(node4["causes"][0]["configuration"], true);
    assert!(v["rules"]["outlier"]
        .as_str()
        .unwrap()
        .contains("(k = 3) and more than 5 % from the median"));
    assert!(v["rules"]["configuration"]
        .as_str()
        .unwrap()
        .starts_with("configuration rule: a host whose configuration (memory size, DIMMs,"));
    let md = dir.path().join("fleet.md");
    let out = hwsurvey()
        .arg("fleet")
        .arg(dir.path())
        .args(["--format", "markdown", "-o"])
        .arg(&md)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.starts_with("# hwsurvey fleet\n"), "{text}");
    assert!(text.contains("| node4 | G1 | fail |"), "{text}");
    assert!(text.contains("| node1 | G1 | pass |"), "{text}");
}

#[test]
fn a_corrupt_file_fails_its_host_only_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    fleet_dir(dir.path());
    let cut = dir.path().join("node2/result.json");
    let text = std::fs::read_to_string(&cut).unwrap();
    std::fs::write(&cut, &text.as_bytes()[..text.len() / 3]).unwrap();
    let out = hwsurvey().arg("fleet").arg(dir.path()).output().unwrap();
    let stdout = hwsurvey_testkit::fleet_sample::unwrapped(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "node2:\n  failed: {}: truncated JSON at line",
            cut.display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 stood out or drifted, 2 failed; verdicts: 2 fail, 3 pass (exit 2)"),
        "{stdout}"
    );
}

#[test]
fn input_errors_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let out = hwsurvey()
        .arg("fleet")
        .arg(dir.path().join("missing"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("missing: No such file or directory"), "{err}");
    let out = hwsurvey().arg("fleet").output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let out = hwsurvey()
        .args(["fleet", "--k", "-1"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn the_terminal_table_fits_a_narrow_terminal() {
    let dir = tempfile::tempdir().unwrap();
    fleet_dir(dir.path());
    let text = hwsurvey_fleet::render::terminal(
        &hwsurvey_fleet::analyse(
            hwsurvey_fleet::load_all(
                hwsurvey_fleet::collect(&[dir.path().to_path_buf()], &[])
                    .unwrap()
                    .sources,
            ),
            &hwsurvey_fleet::Options::default(),
        ),
        Some(80),
    );
    for l in text.lines().filter(|l| l.starts_with(['┌', '│', '├', '└'])) {
        assert!(console::measure_text_width(l) <= 80, "{l}");
    }
}

#[test]
fn html_is_one_page_with_the_table_verdicts_and_causes() {
    let dir = tempfile::tempdir().unwrap();
    fleet_dir(dir.path());
    // a host that never ran (the playbook's failure marker), its name needing escaping
    let marker = dir
        .path()
        .join("rack<9>&co")
        .join(hwsurvey_fleet::FAILURE_MARKER);
    std::fs::create_dir_all(marker.parent().unwrap()).unwrap();
    std::fs::write(
        &marker,
        "Unreachable host: unreachable: Connection refused\n",
    )
    .unwrap();
    let html = dir.path().join("fleet.html");
    let out = hwsurvey()
        .arg("fleet")
        .arg(dir.path())
        .args(["--format", "html", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{:?}", out);
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.starts_with("<!DOCTYPE html>\n"), "{text}");
    assert!(text.ends_with("</body></html>\n"), "{text}");
    // the compare report's style sheet, nothing loaded from elsewhere
    assert!(text.contains(hwsurvey_report::render::CSS), "{text}");
    for outside in ["<script", "<link", "src=", "http://", "https://"] {
        assert!(!text.contains(outside), "{outside}: {text}");
    }
    assert!(
        text.contains(
            "<h1>hwsurvey fleet</h1>\n<p class=\"flag\">6 hosts from 6 result files in 1 group: 1 stood out or drifted, 2 failed; verdicts: 2 fail, 4 pass (exit 2)</p>"
        ),
        "{text}"
    );
    // the fleet table: one row per host, the verdict cell styled by verdict
    assert_eq!(
        text.matches("</td><td>G1</td><td class=\"pass\">pass</td>")
            .count(),
        4,
        "{text}"
    );
    assert!(
        text.contains("<tr><td>node1</td><td>G1</td><td class=\"pass\">pass</td><td>1</td><td>-</td><td>-</td></tr>"),
        "{text}"
    );
    assert!(
        text.contains(
            "<tr><td>node4</td><td>G1</td><td class=\"fail\">fail</td><td>1</td><td class=\"worse\">STREAM Triad, all threads -30.0 % ("
        ),
        "{text}"
    );
    assert!(
        text.contains("<td class=\"flag\">THP never (group: madvise)</td></tr>"),
        "{text}"
    );
    assert!(
        text.contains(
            "<tr><td>rack&lt;9&gt;&amp;co</td><td>-</td><td class=\"fail\">fail (1 failure)</td><td>0</td>"
        ),
        "{text}"
    );
    // findings and failures, styled by verdict
    // the cell as the report lays it out (html_cell: escaped, a break opportunity after each
    // `/` of the long path, the hyphenated file name kept whole)
    let failure = hwsurvey_report::render::html_cell(&format!(
        "{}: host failed: Unreachable host: unreachable: Connection refused",
        marker.display()
    ));
    assert!(failure.contains("/<wbr>"), "{failure}");
    assert!(
        text.contains(&format!(
            "<tr><td>rack&lt;9&gt;&amp;co</td><td>run</td><td class=\"fail\">fail</td><td>{failure}</td></tr>"
        )),
        "{text}"
    );
    assert!(
        text.contains("<tr><td>node4</td><td>pages.hugetlb</td><td class=\"warn\">warn</td>"),
        "{text}"
    );
    // the details of the flagged host and its group's medians
    assert!(
        text.contains(
            "<h3>node4</h3>\n<ul>\n<li class=\"flag\">outlier: STREAM Triad, all threads -30.0 %"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "<li class=\"flag\">cause: THP is never (the group&#39;s majority: madvise)</li>"
        ),
        "{text}"
    );
    assert!(text.contains("<h2>Group G1 (5 hosts)</h2>"), "{text}");
    assert!(
        text.contains("<td>STREAM Triad, all threads</td><td class=\"num\">5</td>"),
        "{text}"
    );
}

#[test]
fn html_writes_control_and_bidi_characters_of_a_cpu_model_visibly() {
    let dir = tempfile::tempdir().unwrap();
    let mut file = with_host(example("x86_64-standard.json"), "node1");
    let model = "AMD\u{1b}[31m EPYC\u{7}\u{0}\r\u{202e}x\u{2066}y\u{85}";
    file.machine.cpu.identity.model_name = Some(model.into());
    file.write_atomic(&dir.path().join("node1/result.json"))
        .unwrap();
    let html = dir.path().join("fleet.html");
    let out = hwsurvey()
        .arg("fleet")
        .arg(dir.path())
        .args(["--format", "html", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    // one host of the example as run: a verdict (incomplete: rules not evaluated), no error
    assert!(
        out.status
            .code()
            .is_some_and(|c| matches!(c, 0..=2 | 4 | 5)),
        "{out:?}"
    );
    let text = std::fs::read_to_string(&html).unwrap();
    let raw: Vec<char> = text
        .chars()
        .filter(|&c| hwsurvey_model::text::is_unsafe(c) && c != '\n')
        .collect();
    assert!(raw.is_empty(), "raw characters {raw:?} in the page");
    assert!(
        text.contains(r"AMD\u{1b}[31m EPYC\u{7}\0\r\u{202e}x\u{2066}y\u{85}"),
        "{text}"
    );
}

/// `hwsurvey fleet DIR` (terminal, wide): exit code and stdout.
fn fleet_of(dir: &Path) -> (Option<i32>, String) {
    let out = hwsurvey()
        .arg("fleet")
        .arg(dir)
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    (
        out.status.code(),
        hwsurvey_testkit::fleet_sample::unwrapped(&String::from_utf8_lossy(&out.stdout)),
    )
}

/// The issue's reproduction: two machines that both call themselves `localhost` (different CPU
/// models) were "1 host, 2 runs pooled". They are two hosts now, and the report says why.
#[test]
fn machines_sharing_a_host_name_are_not_pooled_and_the_report_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let a = with_host(example("x86_64-standard.json"), "localhost");
    let mut b = a.clone();
    b.machine.cpu.identity.model_name = Some("Intel Xeon Gold 6130".into());
    a.write_atomic(&dir.path().join("a.json")).unwrap();
    b.write_atomic(&dir.path().join("b.json")).unwrap();
    let (_, text) = fleet_of(dir.path());
    assert!(
        text.contains("2 hosts from 2 result files in 2 groups"),
        "{text}"
    );
    assert!(
        text.contains(
            "note: localhost: runs of 2 machines under one host name, not pooled (CPU model and topology differ: x86_64 AMD EPYC, 1 package, 2 threads vs x86_64 Intel Xeon Gold 6130, 1 package, 2 threads); shown as localhost, localhost [machine 2]"
        ),
        "{text}"
    );
}

/// The machine identity kept by the probe (hashed /etc/machine-id here) decides before the
/// hardware: the same CPU under one name is two machines when their machine-ids differ, and
/// one machine (its runs pooled) when they agree.
#[test]
fn the_machine_id_tells_alike_machines_under_one_name_apart() {
    let dir = tempfile::tempdir().unwrap();
    let base = with_host(
        every_rule_evaluated(example("x86_64-standard.json")),
        "localhost",
    );
    for (file, id) in [("a.json", "1111"), ("b.json", "2222"), ("c.json", "1111")] {
        let mut f = base.clone();
        f.machine.os.host_id = hwsurvey_probe::os::host_id::HostId {
            machine_id: Some(id.into()),
            ..Default::default()
        };
        f.write_atomic(&dir.path().join(file)).unwrap();
    }
    let (_, text) = fleet_of(dir.path());
    assert!(
        text.contains("2 hosts from 3 result files in 1 group"),
        "{text}"
    );
    assert!(
        text.contains(
            "note: localhost: runs of 2 machines under one host name, not pooled (/etc/machine-id differs); shown as localhost, localhost [machine 2]"
        ),
        "{text}"
    );
    // localhost pooled its two runs (a and c), the other machine has one
    assert!(text.contains("localhost:\n  2 runs pooled"), "{text}");
    assert!(
        text.contains("│ localhost [machine 2] │ G1    │ pass    │ 1    │"),
        "{text}"
    );
}

/// One rule for symlinks inside a folder: never followed, folder or file, and each one named
/// in the report (a symlinked host folder was skipped silently, a symlinked file pointing
/// outside the folder was read).
#[test]
fn symlinks_in_the_folder_are_skipped_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet");
    fleet_dir(&fleet);
    let outside = dir.path().join("outside");
    with_host(example("x86_64-standard.json"), "node9")
        .write_atomic(&outside.join("node9/result.json"))
        .unwrap();
    std::os::unix::fs::symlink(outside.join("node9"), fleet.join("node9")).unwrap();
    std::os::unix::fs::symlink(outside.join("node9/result.json"), fleet.join("node8.json"))
        .unwrap();
    let (_, text) = fleet_of(&fleet);
    assert!(
        text.contains("5 hosts from 5 result files in 1 group"),
        "{text}"
    );
    for link in ["node8.json", "node9"] {
        assert!(
            text.contains(&format!(
                "note: skipped {}: symlink",
                fleet.join(link).display()
            )),
            "{link}: {text}"
        );
    }
    assert!(!text.contains("node9 "), "{text}");
}

/// `fleet F --json -o F/x.json` made the next `fleet F` report a failed host "x"; then the
/// report was skipped as "the report this fleet writes" and written over whatever was there.
/// An output inside a scanned folder under a result's name is refused now, with or without
/// --force (exit 3, nothing written); a fleet report put there otherwise (`--json > F/x.json`)
/// is still never read as a host.
#[test]
fn the_fleets_own_report_in_the_folder_is_not_a_host() {
    let dir = tempfile::tempdir().unwrap();
    fleet_dir(dir.path());
    let report = dir.path().join("x.json");
    for force in [false, true] {
        let mut cmd = hwsurvey();
        cmd.arg("fleet")
            .arg(dir.path())
            .arg("--json")
            .arg("-o")
            .arg(&report);
        if force {
            cmd.arg("--force");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(&format!(
                "{}: is inside {}, which this command reads, under a name it reads as a host's result file or failure marker; refusing to write there, even with --force",
                report.display(),
                dir.path().display()
            )),
            "{out:?}"
        );
        assert!(!report.exists());
    }
    let out = hwsurvey()
        .arg("fleet")
        .arg(dir.path())
        .arg("--json")
        .output()
        .unwrap();
    std::fs::write(&report, &out.stdout).unwrap();
    let (code, text) = fleet_of(dir.path());
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("5 hosts from 5 result files in 1 group: 1 stood out or drifted, 1 failed"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "note: skipped {}: a fleet report, not a result file",
            report.display()
        )),
        "{text}"
    );
}

/// The reproduction: `fleet F -o F/web/a.json --force`, `a.json` being a host's
/// result, was skipped as "the report this fleet writes" and overwritten, and the next fleet
/// marked the host failed. Refused now, as compare refuses an input, the file untouched; so is
/// `-o F/node1/result.json` named by the file itself among the inputs.
#[test]
fn fleet_never_writes_over_one_of_its_inputs_even_with_force() {
    let dir = tempfile::tempdir().unwrap();
    fleet_dir(dir.path());
    let input = dir.path().join("node1/result.json");
    let before = std::fs::read(&input).unwrap();
    for args in [
        vec![dir.path().to_path_buf()],
        vec![input.clone(), dir.path().join("node2/result.json")],
    ] {
        for format in ["markdown", "json", "html", "terminal"] {
            let out = hwsurvey()
                .arg("fleet")
                .args(&args)
                .args(["--format", format, "--force", "-o"])
                .arg(&input)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(3), "{format}: {err}");
            assert!(err.contains("even with --force"), "{format}: {err}");
            assert_eq!(
                std::fs::read(&input).unwrap(),
                before,
                "{format}: written over"
            );
        }
    }
    // node1's file untouched: only the planted outlier fails, every other host passes
    let (code, text) = fleet_of(dir.path());
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("1 failed; verdicts: 1 fail, 4 pass"),
        "{text}"
    );
}

/// A FIFO under a result's name (`node7.json`) or a marker's (`node6/hwsurvey-failed.txt`)
/// is skipped and named, not read: on the release build a FIFO planted in the folder made
/// `fleet` wait for ever on its read.
#[test]
fn a_fifo_in_the_folder_is_skipped_and_named() {
    let dir = tempfile::tempdir().unwrap();
    fleet_dir(dir.path());
    std::fs::create_dir(dir.path().join("node6")).unwrap();
    let fifos = [
        dir.path().join("node7.json"),
        dir.path().join("node6/hwsurvey-failed.txt"),
    ];
    for f in &fifos {
        // mkfifo(1), as the other FIFO tests: a nix call would make this suite target-dependent
        // (scripts/cross-suites), while what it tests is fleet's reading of a folder
        let made = std::process::Command::new("mkfifo")
            .arg(f)
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo {}", f.display());
    }
    let mut child = hwsurvey()
        .arg("fleet")
        .arg(dir.path())
        .env("COLUMNS", "200")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("fleet still reading after 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let text = hwsurvey_testkit::fleet_sample::unwrapped(&String::from_utf8_lossy(&out.stdout));
    assert!(text.contains("5 hosts from 5 result files"), "{text}");
    for f in &fifos {
        assert!(
            text.contains(&format!(
                "note: skipped {}: not a regular file",
                f.display()
            )),
            "{text}"
        );
    }
}

/// Fleet's printed report: its tables laid out as compare's ([`html_cell`]:
/// breaks at spaces and after a long path's `/`, never inside a word). The findings table
/// printed a host name `node2.rack12.datacenter-frankfurt.example.com` as `node2.rack12.d` /
/// `atacenter-` / `frankfurt.exampl` / `e.com` (`overflow-wrap: anywhere` let the browser
/// narrow its column below the name). Five hosts of the x86_64 example under such names, one
/// of them 30 % slower with THP off: every word of the page is printed, none broken.
///
/// [`html_cell`]: hwsurvey_report::render::html_cell
#[test]
fn printed_fleet_report_breaks_no_host_name_and_cuts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    fleet_dir_named(&dir.path().join("fleet"), |n| {
        format!("node{n}.rack12.datacenter-frankfurt.example.com")
    });
    let html = dir.path().join("fleet.html");
    let out = hwsurvey()
        .arg("fleet")
        .arg(dir.path().join("fleet"))
        .args(["--format", "html", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let Some(printed) = hwsurvey_testkit::printed::print(&html, &dir.path().join("fleet.pdf"))
    else {
        return;
    };
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("node4.rack12.datacenter-frankfurt.example.com"));
    let (lost, split) = hwsurvey_testkit::printed::lost_or_split(&page, &printed);
    assert!(lost.is_empty(), "not printed: {lost:?}\n{printed}");
    assert!(split.is_empty(), "broken in print: {split:?}\n{printed}");
}

/// Host folder names and CPU models holding ESC, OSC, BEL, CR, U+202E and U+2066
/// were written raw by `fleet --format markdown -o out.md` (8 ESC, 3 BEL, 2 CR, 5 bidi) and by
/// `--json -o` (the bidi characters), as the playbook's fleet.md; each format written to a
/// file follows its escaping rule now, as on a terminal.
#[test]
fn every_format_written_with_o_escapes_control_and_bidi_characters() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let hostile = [
        "esc\u{1b}[31mred\u{1b}]0;title\u{7}",
        "cr\rover",
        "bidi\u{202e}txt.exe\u{2066}x\u{2069}",
    ];
    for (i, name) in hostile.iter().enumerate() {
        let mut f = with_host(example("x86_64-standard.json"), "h");
        f.machine.cpu.identity.model_name = Some(format!("AMD EPYC {name} {i}"));
        f.write_atomic(&run.join(name).join("result.json")).unwrap();
    }
    for (file, format) in [
        ("fleet.md", "markdown"),
        ("fleet.json", "json"),
        ("fleet.html", "html"),
        ("fleet.txt", "terminal"),
    ] {
        let out = dir.path().join(file);
        let done = hwsurvey()
            .arg("fleet")
            .arg(&run)
            .args(["--format", format, "-o"])
            .arg(&out)
            .output()
            .unwrap();
        // any verdict's exit status (0-2, 4 incomplete, 5 emulated), not 3: written
        assert!(
            matches!(done.status.code(), Some(0..=2 | 4 | 5)),
            "{done:?}"
        );
        let text = std::fs::read_to_string(&out).unwrap();
        let keep = if format == "terminal" || format == "html" {
            "\n\t"
        } else {
            "\n"
        };
        let raw: Vec<char> = text
            .chars()
            .filter(|c| hwsurvey_model::text::is_unsafe(*c) && !keep.contains(*c))
            .collect();
        assert!(raw.is_empty(), "{file}: raw {raw:?}");
        assert!(text.contains("u{1b}[31mred"), "{file}: {text}");
    }
}
