//! Output fits the terminal: with stdout on a pseudo-terminal 80 or 120 columns
//! wide, `probe` (this machine and a 128-CPU capture), `run --plan-only`, `compare` of the
//! shipped example results and `qualify` print no line wider than it, while the same commands
//! into a pipe print in full (the widest compare line is far wider than 120 columns).

use std::io::Read;
use std::path::PathBuf;
use std::process::Stdio;

use nix::pty::{openpty, Winsize};

/// Reads everything written to the terminal whose master side is `master`, on a thread, until
/// every slave descriptor is closed (Linux then answers EIO).
fn read_terminal(master: std::os::fd::OwnedFd) -> std::thread::JoinHandle<Vec<u8>> {
    let mut master = std::fs::File::from(master);
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut chunk = [0u8; 65536];
        loop {
            match master.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => all.extend_from_slice(&chunk[..n]),
                // Linux: EIO once every slave descriptor is closed
                Err(e) if e.raw_os_error() == Some(nix::errno::Errno::EIO as i32) => break,
                Err(e) => panic!("reading the terminal: {e}"),
            }
        }
        all
    })
}

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("hwsurvey")
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs hwsurvey with `args`, stdout on a pseudo-terminal `cols` wide (stderr piped), and
/// returns what the terminal received, with the terminal's "\r\n" turned back into "\n".
fn on_terminal(args: &[&str], cols: u16) -> String {
    let size = Winsize {
        ws_row: 50,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let pty = openpty(Some(&size), None).expect("openpty");
    let mut cmd = hwsurvey_testkit::target_command(&bin());
    cmd.args(args)
        .env_remove("COLUMNS")
        .stdin(Stdio::null())
        .stdout(Stdio::from(pty.slave))
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("spawn hwsurvey");
    // the child holds the only other copy of the terminal's slave side
    drop(cmd);
    let reader = read_terminal(pty.master);
    let out = child.wait_with_output().expect("wait for hwsurvey");
    let text = reader.join().expect("terminal reader");
    let text = String::from_utf8_lossy(&text).replace("\r\n", "\n");
    // qualify's 1 and 2 are findings (under qemu-user: binary.arch fails, the binary is not
    // the kernel's architecture); every other command here must succeed
    // fleet's 1 and 2 are verdicts too (the qemu-user examples fail binary.arch)
    // and 4 (incomplete: rules not evaluated) and 5 (emulated: no hardware verdict)
    let verdict = matches!(args.first(), Some(&"qualify") | Some(&"fleet"));
    assert!(
        out.status
            .code()
            .is_some_and(|c| c == 0 || (verdict && matches!(c, 1 | 2 | 4 | 5))),
        "hwsurvey {args:?}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.trim().is_empty(), "hwsurvey {args:?} printed nothing");
    text
}

fn piped(args: &[&str]) -> String {
    let out = hwsurvey_testkit::target_command(&bin())
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .expect("run hwsurvey");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Terminal columns of `line`: box-drawing and the ellipsis are one column each (no wide
/// characters in these outputs); colour and bold escapes (`ESC [ ... m`, clap's help on a
/// terminal) take none.
fn columns(line: &str) -> usize {
    let mut n = 0;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            n += 1;
        }
    }
    n
}

fn widest(text: &str) -> (usize, String) {
    text.lines()
        .map(|l| (columns(l), l.to_string()))
        .max_by_key(|(w, _)| *w)
        .unwrap_or_default()
}

fn assert_fits(args: &[&str]) {
    for cols in [80u16, 120] {
        let text = on_terminal(args, cols);
        let (w, line) = widest(&text);
        assert!(
            w <= usize::from(cols),
            "hwsurvey {args:?} in {cols} columns printed a {w}-column line:\n{line}"
        );
    }
}

#[test]
fn probe_of_this_machine_fits() {
    assert_fits(&["probe"]);
}

#[test]
fn probe_of_a_128_cpu_capture_fits() {
    let Some(fixtures) = hwsurvey_testkit::fixtures() else {
        return;
    };
    let archive = fixtures
        .join("aarch64-hisilicon-kunpeng920-2s-4numa-clusters/128arm-2pa2n8cluster4co.tar.bz2");
    let (_dir, root) = hwsurvey_testkit::extract(&archive);
    let root = root.to_str().expect("UTF-8 temporary path");
    assert_fits(&["probe", "--root", root]);
}

#[test]
fn plan_fits() {
    assert_fits(&["run", "--plan-only"]);
}

#[test]
fn qualify_fits() {
    assert_fits(&["qualify"]);
}

#[test]
fn fleet_of_the_examples_fits() {
    let examples = repo().join("reports/examples/v1");
    let files: Vec<String> = [
        "x86_64-standard.json",
        "aarch64-qemu-quick.json",
        "sparc64-qemu-quick.json",
    ]
    .iter()
    .map(|f| examples.join(f).to_string_lossy().into_owned())
    .collect();
    let mut args = vec!["fleet"];
    args.extend(files.iter().map(String::as_str));
    assert_fits(&args);
}

#[test]
fn compare_of_the_examples_fits_and_a_pipe_gets_it_whole() {
    let examples = repo().join("reports/examples/v1");
    let files: Vec<String> = ["aarch64-qemu-quick.json", "sparc64-qemu-quick.json"]
        .iter()
        .map(|f| examples.join(f).to_string_lossy().into_owned())
        .collect();
    let mut args = vec!["compare"];
    args.extend(files.iter().map(String::as_str));
    let (natural, _) = widest(&piped(&args));
    assert!(natural > 120, "piped compare is {natural} columns at most");
    assert_fits(&args);
    // the wrapped table keeps the figures: the pipe's and the terminal's digits agree in count
    let digits = |s: &str| s.chars().filter(char::is_ascii_digit).count();
    // (with --details: the terminal shows the machines and the headline only by default)
    let mut details = args.clone();
    details.push("--details");
    let terminal = on_terminal(&details, 80);
    assert!(
        digits(&terminal) * 10 >= digits(&piped(&args)) * 9,
        "the 80-column compare lost figures"
    );
}

#[test]
fn help_of_every_command_fits() {
    for sub in [
        "probe",
        "snapshot",
        "run",
        "compare",
        "qualify",
        "fleet",
        "elf",
        "completions",
        "man",
    ] {
        assert_fits(&[sub, "--help"]);
    }
    assert_fits(&["--help"]);
}

/// A word of `text` without the prose punctuation around it (`(echo`, `online)`,
/// `control,`); `None` for a box-drawing border.
fn word(w: &str) -> Option<String> {
    let w = w.trim_matches(['(', ')', ',', ';', '`', ':']);
    (!w.is_empty() && !w.chars().all(|c| "┌┐└┘├┤┬┴┼│─".contains(c))).then(|| w.to_string())
}

/// Every word the terminal shows is a word of the full (piped) output: nothing was broken
/// inside a word, a path or an option name, except a path wider than the whole terminal,
/// which may break after a `/`.
fn assert_no_word_split(args: &[&str], terminal: &str) {
    no_word_split(args, terminal, false)
}

/// [`assert_no_word_split`]; with `cells`, a word of a table cell wider than its column may
/// also break after a `/` (`c2c, package/` `other_node`).
fn no_word_split(args: &[&str], terminal: &str, cells: bool) {
    let whole: std::collections::BTreeSet<String> =
        piped(args).split_whitespace().filter_map(word).collect();
    // the lines only a terminal gets: the hint to --details and the heading of the notes
    let mut hint = false;
    let kept: Vec<&str> = terminal
        .lines()
        .filter(|l| {
            hint = (hint && l.starts_with("    ")) || l.contains(" detail tables (");
            !hint && *l != "Notes in full"
        })
        .collect();
    let shown: Vec<String> = kept
        .join("\n")
        .split_whitespace()
        .filter_map(word)
        .collect();
    // a path segment run of a whole word (`package/`, `other_node` of `package/other_node`)
    let segment = |w: &str| {
        whole.iter().any(|full| {
            full.match_indices(w).any(|(i, _)| {
                (i == 0 || full[..i].ends_with('/'))
                    && (w.ends_with('/') || i + w.len() == full.len())
            })
        })
    };
    let mut split = Vec::new();
    let mut i = 0;
    while i < shown.len() {
        let mut w = shown[i].clone();
        // a path wider than the terminal, continued on the next line after its `/`
        while !cells && !whole.contains(&w) && w.ends_with('/') && i + 1 < shown.len() {
            i += 1;
            w.push_str(&shown[i]);
        }
        if cells && !whole.contains(&shown[i]) && segment(&shown[i]) {
            i += 1;
            continue;
        }
        if !whole.contains(&w) && w != "\\" {
            split.push(w);
        } else if !cells && w != shown[i] && w.chars().count() <= 76 {
            split.push(format!("{w} (a path that fits)"));
        }
        i += 1;
    }
    assert!(
        split.is_empty(),
        "hwsurvey {args:?} at 80 columns broke words: {split:?}\n{terminal}"
    );
}

/// The shell commands of qualify's `fix:` lines in the full output: from `echo` or
/// `cpupower` to the end of the clause (`,` `)` or a following `(`), as a reader copies them.
fn fix_commands(full: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in full.lines() {
        let Some((_, fix)) = line.split_once("fix: ") else {
            continue;
        };
        let ws: Vec<&str> = fix.split(' ').collect();
        let Some(start) = ws
            .iter()
            .position(|w| ["echo", "cpupower"].contains(&w.trim_start_matches('(')))
        else {
            continue;
        };
        let mut cmd = Vec::new();
        for (i, w) in ws[start..].iter().enumerate() {
            if i > 0 && w.starts_with('(') {
                break;
            }
            let w = if i == 0 { w.trim_start_matches('(') } else { w };
            let end = w.ends_with(',') || w.ends_with(')');
            cmd.push(w.trim_end_matches([',', ')']));
            if end {
                break;
            }
        }
        // a fix of several commands (`echo 128 > ...; echo 1 > ...`): each is one command,
        // printed whole on its own line
        out.extend(cmd.join(" ").split("; ").map(str::to_owned));
    }
    out
}

/// At 80 columns qualify splits no path or word, and prints each fix's
/// command whole on its own line(s) (main split `.../hugepages-` / `2048kB/nr_hugepages`),
/// so a copy of it runs; probe splits no option of the kernel command line.
#[test]
fn qualify_prints_every_fix_command_whole_and_probe_splits_no_option() {
    let Some(fixtures) = hwsurvey_testkit::fixtures() else {
        return;
    };
    let mut commands = 0;
    for archive in [
        "x86_64-intel-raptorlake-hybrid-pe-cores/20em64t-hybrid-1p6c2t+2ca4co1t.tar.bz2",
        "s390x-z196-lpar-offline-books/s390-lpar.tar.gz",
        "x86_64-firecracker-guest-epyc-2vcpu-thp-mthp/firecracker-guest-capture.tar.gz",
    ] {
        let archive = fixtures.join(archive);
        let root = archive.to_str().expect("UTF-8 path");
        let args = ["qualify", "--root", root];
        let terminal = on_terminal(&args, 80);
        assert_no_word_split(&args, &terminal);
        // a command continued with " \" reads back as one line
        let mut joined: Vec<String> = vec![String::new()];
        for l in terminal.lines() {
            let last = joined.last_mut().unwrap();
            let more = l.ends_with(" \\");
            last.push_str(l.trim().trim_end_matches(" \\"));
            if more {
                last.push(' ');
            } else {
                joined.push(String::new());
            }
        }
        for cmd in fix_commands(&piped(&args)) {
            commands += 1;
            assert!(
                joined.iter().any(|l| l == &cmd
                    || l.contains(&format!("fix: {cmd}"))
                    || l.contains(&format!("({cmd})"))),
                "{cmd:?} is not whole on a line of its own at 80 columns:\n{terminal}"
            );
        }
        let probe = ["probe", "--root", root];
        assert_no_word_split(&probe, &on_terminal(&probe, 80));
    }
    assert!(
        commands >= 3,
        "only {commands} fix commands in the captures"
    );
}

/// The three example results of reports/examples (a bare VM, then the x86 and arm64 guests),
/// as paths.
fn three_examples() -> Vec<String> {
    let ex = repo().join("reports/examples");
    [
        "vm-x86_64-standard.json",
        "guest-x86-2s4n-smt-standard.json",
        "guest-arm64-2n-clusters-standard.json",
    ]
    .iter()
    .map(|f| ex.join(f).to_string_lossy().into_owned())
    .collect()
}

/// `compare` of the three example machines, and of five (the two
/// older example results in reports/examples/v1 added), on an 80-column terminal: the
/// machines and the headline within the first 40 lines (main printed a 17-line note on the
/// plots first, then over 2,000 lines), no line over 80 columns, no cell broken inside a word
/// (`stream.tria|d`), each note on one line under its table or in full at the end (never
/// cut); the detail tables only with --details, and then fitted the same way.
#[test]
fn compare_at_80_columns_puts_machines_and_headline_first_and_breaks_no_word() {
    let ex = repo().join("reports/examples");
    let three = three_examples();
    let mut five = three.clone();
    for f in ["v1/x86_64-standard.json", "v1/aarch64-qemu-quick.json"] {
        five.push(ex.join(f).to_string_lossy().into_owned());
    }
    for (files, extra) in [(three, None), (five, Some("--mixed-profiles"))] {
        let mut args: Vec<&str> = vec!["compare"];
        args.extend(files.iter().map(String::as_str));
        args.extend(extra);
        let text = on_terminal(&args, 80);
        let (w, line) = widest(&text);
        assert!(w <= 80, "{args:?}: a {w}-column line:\n{line}");
        let lines: Vec<&str> = text.lines().collect();
        // 40 lines for the tables on top, and beside them the lines of the reasons why columns
        // are not comparable, printed whole before the headline's figures (four of the five
        // machines: 8 lines at 80 columns)
        let reasons = {
            let mut n = 0;
            let mut inside = false;
            for l in &lines {
                inside = l.contains(": not comparable: ") || (inside && l.starts_with("      "));
                n += usize::from(inside);
            }
            n
        };
        let first = &lines[..lines.len().min(40 + reasons)];
        for k in 0..files.len() {
            let letter = char::from(b'A' + k as u8);
            assert!(
                // one machine a few lines, no box (the box took 16 lines)
                first.iter().any(|l| l.starts_with(&format!("{letter} "))),
                "machine {letter} not in the first 40 lines:\n{text}"
            );
        }
        let headline = first.iter().position(|l| *l == "Headline");
        assert!(
            headline.is_some_and(|h| first[h..].iter().any(|l| l.contains("int 1 thread"))),
            "no headline figures in the first 40 lines:\n{text}"
        );
        no_word_split(&args, &text, true);
        // a note is one line under its table, or in full after "Notes in full"
        let end = lines
            .iter()
            .position(|l| *l == "Notes in full")
            .unwrap_or(lines.len());
        for (i, l) in lines[..end].iter().enumerate() {
            // why a column is not comparable is printed whole above the headline's table, the
            // key to + - ~ ! whole under it
            if l.starts_with("note: ")
                && !l.contains(": not comparable: ")
                && !l.contains("each figure with its ratio to")
            {
                assert!(
                    !lines[i + 1].starts_with("      ") && !l.ends_with('…'),
                    "a note over two lines, or cut, under its table:\n{l}\n{}",
                    lines[i + 1]
                );
            }
        }
        // every note of the full output is there, whole
        let joined = text.replace("\n      ", " ");
        let full = piped(&args).replace("\n      ", " ");
        for note in full.lines().filter(|l| l.starts_with("note: [")) {
            let number = note.split(']').next().unwrap_or_default();
            if joined.contains(&format!("{number}]")) {
                assert!(
                    joined.lines().any(|l| l == note),
                    "{note:?} not whole at 80 columns:\n{text}"
                );
            }
        }
        // the detail tables: not on the first screen, all with --details, fitted the same way
        assert!(lines.len() < 200, "{} lines:\n{text}", lines.len());
        assert!(
            !text.contains("stream.triad"),
            "detail rows without --details"
        );
        args.push("--details");
        let details = on_terminal(&args, 80);
        let (w, line) = widest(&details);
        assert!(w <= 80, "--details: a {w}-column line:\n{line}");
        assert!(details.contains("stream.triad"), "{details}");
        assert!(details.lines().count() > 3 * lines.len());
        args.pop();
        no_word_split(&args, &details, true);
    }
}

/// Why a column is not comparable is read before its figures: `compare` of the arm64 guest's
/// run alone on an 80x24 terminal showed "STREAM Triad peak 664 MB/s" and twenty more figures
/// with only "A ! [2]" above them, the reason ("figures measure the emulator") 40 lines down.
/// Now it is between the headline's title and its table, whole, once, on a terminal and to a
/// pipe; with three machines every not-comparable column's reason is there before the figures.
#[test]
fn why_a_column_is_not_comparable_comes_before_its_figures() {
    let ex = repo().join("reports/examples");
    let arm = ex.join("guest-arm64-2n-clusters-standard.json");
    let arm = arm.to_string_lossy();
    let args = ["compare", arm.as_ref()];
    for (how, text) in [("terminal", on_terminal(&args, 80)), ("pipe", piped(&args))] {
        let lines: Vec<&str> = text.lines().collect();
        let reason = lines
            .iter()
            .position(|l| l.contains("A: not comparable:"))
            .unwrap_or_else(|| panic!("{how}: no reason:\n{text}"));
        let headline = lines.iter().position(|l| *l == "Headline");
        let figure = lines.iter().position(|l| l.contains("STREAM Triad peak"));
        assert!(
            headline.is_some_and(|h| h < reason) && figure.is_some_and(|f| reason < f),
            "{how}: the reason is not between the headline's title and its figures:\n{text}"
        );
        let joined = text.replace("\n      ", " ");
        assert!(
            joined.contains(
                "note: [2] A: not comparable: full-system emulation: figures measure the emulator"
            ),
            "{how}:\n{text}"
        );
        assert_eq!(
            joined.matches("A: not comparable:").count(),
            1,
            "{how}: the reason printed more than once:\n{text}"
        );
        if how == "terminal" {
            assert!(reason < 24, "{how}: the reason on line {reason}:\n{text}");
        }
    }
    let three = three_examples();
    let mut args = vec!["compare"];
    args.extend(three.iter().map(String::as_str));
    let text = on_terminal(&args, 80);
    let figure = text.find("int 1 thread").expect("no headline figures");
    for column in ["B", "C"] {
        let reason = text
            .find(&format!("{column}: not comparable:"))
            .unwrap_or_else(|| panic!("no reason for {column}:\n{text}"));
        assert!(
            reason < figure,
            "{column}'s reason after the figures:\n{text}"
        );
    }
    assert!(
        !text.contains("A: not comparable"),
        "the bare-VM baseline A called not comparable:\n{text}"
    );
}

/// What an 80x24 terminal shows of `hwsurvey ARGS`: stdout and stderr both on it, as a shell
/// runs a command (stderr's notes come first when they are printed first), "\r\n" made "\n".
fn on_screen(args: &[&str]) -> String {
    let size = Winsize {
        ws_row: 24,
        ws_col: 80,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let pty = openpty(Some(&size), None).expect("openpty");
    let err = pty.slave.try_clone().expect("dup the terminal");
    let mut cmd = hwsurvey_testkit::target_command(&bin());
    cmd.args(args)
        .env_remove("COLUMNS")
        .stdin(Stdio::null())
        .stdout(Stdio::from(pty.slave))
        .stderr(Stdio::from(err));
    let mut child = cmd.spawn().expect("spawn hwsurvey");
    drop(cmd);
    let reader = read_terminal(pty.master);
    let status = child.wait().expect("wait for hwsurvey");
    assert!(status.success(), "hwsurvey {args:?}: {status:?}");
    let text = reader.join().expect("terminal reader");
    String::from_utf8_lossy(&text).replace("\r\n", "\n")
}

/// On an 80x24 terminal the first screen of `compare reports/examples/*.json`
/// (the shell's order: the arm64 guest, the x86 guest, then the VM, the baseline) held no
/// figure: the machine table took 16 lines and its notes more, and the key to `+ - ~ !` came
/// at the very end. Now, stderr included as the terminal shows it: the three machines and the
/// headline's first figures (a row with a value in every column) are on the first 24 lines,
/// and the key is the first note under the headline table, whole.
#[test]
fn the_first_80x24_screen_of_compare_holds_a_figure_and_the_key_under_the_headline() {
    let ex = repo().join("reports/examples");
    let mut files: Vec<String> = std::fs::read_dir(&ex)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files.len(), 3, "{files:?}");
    let mut args = vec!["compare"];
    args.extend(files.iter().map(String::as_str));
    let text = on_screen(&args);
    let lines: Vec<&str> = text.lines().collect();
    let (w, line) = widest(&text);
    assert!(w <= 80, "a {w}-column line:\n{line}");
    let screen = &lines[..lines.len().min(24)];
    for letter in ["A", "B", "C"] {
        assert!(
            screen.iter().any(|l| l.starts_with(&format!("{letter} "))),
            "machine {letter} not on the first screen:\n{}",
            screen.join("\n")
        );
    }
    let figure = screen.iter().position(|l| {
        l.starts_with("│ int 1 thread")
            && l.split('│')
                .filter(|c| c.trim().ends_with('G') || c.contains("x "))
                .count()
                >= 3
    });
    assert!(
        figure.is_some(),
        "no figure on the first 24 lines:\n{}",
        screen.join("\n")
    );
    // the key: the first line after the headline table's bottom border
    let headline = lines.iter().position(|l| *l == "Headline").unwrap();
    let bottom = headline
        + lines[headline..]
            .iter()
            .position(|l| l.starts_with('└'))
            .unwrap();
    let key = lines[bottom + 1];
    assert!(
        key.starts_with("note: [")
            && key.contains("each figure with its ratio to C (the baseline): + better, - worse, ~"),
        "not the key under the headline: {key}\n{text}"
    );
    let joined = text.replace("\n      ", " ");
    assert!(
        joined.contains("! not comparable (never a win or a loss); value = median of the samples"),
        "the key not whole:\n{text}"
    );
}

/// `compare reports/examples/*.json | less` on a terminal (stdout a pipe,
/// stderr the terminal) began with a 1,000-character note listing 23 plots on stderr. On a
/// terminal's stderr that list is not printed (the report names the plots left out in one
/// line); to a log (stderr not a terminal) it still is.
#[test]
fn a_pipe_beside_a_terminal_gets_no_plot_list_on_the_screen() {
    let size = Winsize {
        ws_row: 24,
        ws_col: 80,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let three = three_examples();
    let pty = openpty(Some(&size), None).expect("openpty");
    let mut cmd = hwsurvey_testkit::target_command(&bin());
    cmd.arg("compare")
        .args(&three)
        .env_remove("COLUMNS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(pty.slave));
    let child = cmd.spawn().expect("spawn hwsurvey");
    drop(cmd);
    let reader = read_terminal(pty.master);
    let out = child.wait_with_output().expect("wait for hwsurvey");
    assert!(out.status.success());
    let screen = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    assert!(
        !screen.contains("vs threads"),
        "the plot list on the terminal:\n{screen}"
    );
    let piped = String::from_utf8_lossy(&out.stdout);
    assert!(
        piped.contains("23 more are written by --plots DIR"),
        "{piped}"
    );
    // to a log, the list
    let out = hwsurvey_testkit::target_command(&bin())
        .arg("compare")
        .args(&three)
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("mem.bandwidth: read/block=16KiB vs threads")
    );
}
