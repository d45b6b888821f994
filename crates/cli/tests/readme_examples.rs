//! Every `hwsurvey ...` example line of README.md's "Everyday use" runs, in README order after
//! the snapshot that later lines read, in a scratch directory holding the files the lines name:
//!
//! - `host.tar.gz` and `hwsurvey-snapshot/`: made by the README's own `snapshot` line and its
//!   `tar -xzf host.tar.gz` line (unpacked here as tar does, into the scratch directory; the
//!   line is checked to be that);
//! - `quick.json`: made by the README's own `run --profile quick -o quick.json` line;
//! - `reports/examples/*.json` and `reports/fleet/examples/`: the example result files and
//!   fleet run folder shipped in the checkout, the glob expanded there as a shell does;
//! - `dmidecode.txt`: the Dell R640 capture's saved `dmidecode -t memory` text
//!   (`../shared/fixtures`; where it is missing and HWSURVEY_WITHOUT_SHARED=1, those two lines
//!   print SKIPPED), in place of the
//!   README's `dmidecode -t memory > dmidecode.txt` (root and DMI, which a VM has not). It is
//!   another machine's (2 sockets, 96 GiB), which probe and qualify refuse: those lines run
//!   with `--dmidecode-other-machine` (tests/dmidecode.rs holds the refusal).
//!
//! What is run differs from the line only where running it as written is not a test:
//! - `run` lines that would measure for minutes (`--max-time 10m`, the standard families, the
//!   storage directory) get `--plan-only`: the same flags parsed and planned against this
//!   machine; a `--storage-dir` becomes a directory of the scratch directory (on a disk);
//! - the shell around a command (`> /etc/bash_completion.d/...`, `&& mandb -q`, `| man -l -`)
//!   is not run; the hwsurvey part is, with `man --dir` writing into the scratch directory;
//! - `hwsurvey run --help` runs `--help` of every command `hwsurvey --help` lists, as its
//!   comment says each has them.
//!
//! `hwsurvey elf target/dist/...` runs from the checkout when `cargo xtask dist` has made that
//! file (else SKIPPED: in scripts/test the native tests come before the dist stage, which checks
//! every dist binary with `hwsurvey elf`). The lines that are not `hwsurvey` commands are run
//! elsewhere: `cargo xtask dist` by scripts/test's dist stage, the fleet playbook line by
//! tests/fleet_ansible.rs. Natively only: under qemu-user the quick run would take minutes. A README example line
//! this test does not know fails it, so a new example gets run too.

use hwsurvey_testkit::hwsurvey;
use std::path::{Path, PathBuf};

fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The example lines of the "Everyday use" section: indented lines starting with `hwsurvey `,
/// without their `# comment`.
fn example_lines(readme: &str) -> Vec<String> {
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Everyday use"))
        .expect("README.md has a section \"## Everyday use\"");
    section
        .lines()
        .filter_map(|l| l.strip_prefix("    "))
        .map(str::trim_start)
        .filter(|l| l.starts_with("hwsurvey "))
        .map(|l| match l.find(" #") {
            Some(i) => l[..i].trim_end().to_string(),
            None => l.trim_end().to_string(),
        })
        .collect()
}

/// How one README line is run: argument lists (after `hwsurvey`), and the exit codes that
/// mean it worked (`qualify` and `fleet` report verdicts with 1, 2, 4 and 5).
struct Plan {
    runs: Vec<Vec<String>>,
    ok: &'static [i32],
    needs_shared: bool,
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// `args` with `--dmidecode-other-machine` after a `--dmidecode dmidecode.txt`: the test's
/// text is the Dell R640's, not this machine's (see the module docs).
fn other_machine(mut args: Vec<String>) -> Vec<String> {
    if args.iter().any(|a| a == "--dmidecode") {
        args.push("--dmidecode-other-machine".into());
    }
    args
}

/// The plan of README line `line` (without `hwsurvey `), or `None` for a line this test does
/// not know.
fn plan_for(line: &str, scratch: &Path) -> Option<Plan> {
    let args = line.strip_prefix("hwsurvey ")?;
    let plain = |runs: Vec<Vec<String>>| Plan {
        runs,
        ok: &[0],
        needs_shared: false,
    };
    // the shell around the command is not run (see the module docs)
    let command = args
        .split(['>', '|'])
        .next()
        .unwrap_or(args)
        .split("&&")
        .next()
        .unwrap_or(args)
        .trim();
    let mut w: Vec<String> = words(command).iter().flat_map(|a| glob(a)).collect();
    let plan = match w.first().map(String::as_str)? {
        _ if w.iter().any(|a| a == "--help") => plain(
            subcommands()
                .into_iter()
                .map(|c| vec![c, "--help".into()])
                .collect(),
        ),
        "probe" | "snapshot" | "compare" | "completions" => Plan {
            needs_shared: command.contains("dmidecode.txt"),
            ..plain(vec![other_machine(w)])
        },
        "run" => {
            let measures_long =
                !command.contains("--plan-only") && !command.contains("--profile quick");
            // the storage directory: one of the scratch directory, on a disk
            for k in 1..w.len() {
                if w[k - 1] == "--storage-dir" {
                    w[k] = scratch.join("storage").display().to_string();
                }
            }
            if measures_long {
                w.push("--plan-only".into());
            }
            plain(vec![w])
        }
        "qualify" | "fleet" => Plan {
            runs: vec![other_machine(w)],
            ok: &[0, 1, 2, 4, 5],
            needs_shared: command.contains("dmidecode.txt"),
        },
        "man" => {
            if let Some(i) = w.iter().position(|a| a == "--dir") {
                w[i + 1] = scratch.join("man1").display().to_string();
            }
            plain(vec![w])
        }
        // the file `cargo xtask dist` makes, read from the checkout as the README runs it
        "elf" => plain(vec![w]),
        _ => return None,
    };
    Some(plan)
}

/// The checkout's root.
fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// An argument with a `*` in its path (`reports/examples/*.json`,
/// `reports/hardware/*/standard.json`: one `*` a component, in any component) expanded
/// against the checkout as a shell in its root does, into absolute paths in name order; any
/// other argument as it is.
fn glob(arg: &str) -> Vec<String> {
    if !arg.contains('*') {
        return vec![arg.to_string()];
    }
    let mut found = vec![checkout()];
    for part in Path::new(arg).components() {
        let part = part.as_os_str().to_str().unwrap_or_default();
        found = match part.split_once('*') {
            None => found
                .into_iter()
                .map(|d| d.join(part))
                .filter(|p| p.exists())
                .collect(),
            Some((before, after)) => found
                .into_iter()
                .flat_map(|dir| {
                    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
                        .into_iter()
                        .flatten()
                        .map(|e| e.unwrap().path())
                        .filter(|p| {
                            p.file_name()
                                .and_then(|n| n.to_str())
                                .is_some_and(|n| n.starts_with(before) && n.ends_with(after))
                        })
                        .collect();
                    names.sort();
                    names
                })
                .collect(),
        };
    }
    let out: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
    assert!(!out.is_empty(), "{arg}: matches no file of the checkout");
    out
}

/// Every argument of a plan's runs, joined (to look for a path in them).
fn args_of(plan: &Plan) -> String {
    plan.runs
        .iter()
        .flatten()
        .cloned()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The subcommands `hwsurvey --help` lists (but `help`).
fn subcommands() -> Vec<String> {
    let out = hwsurvey().arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let list: Vec<String> = text
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect();
    assert!(
        list.len() >= 8,
        "hwsurvey --help lists its commands:\n{text}"
    );
    list
}

#[test]
fn every_readme_example_runs() {
    // The lines are the same on every architecture; under qemu-user the quick run alone would
    // take minutes of emulation (their parsing is covered there by the --help examples test).
    if !hwsurvey_testkit::target_runner().is_empty() {
        println!(
            "SKIPPED: README examples run natively only, not under a target runner (qemu-user)"
        );
        return;
    }
    let readme = readme();
    let lines = example_lines(&readme);
    assert!(
        lines.len() >= 15,
        "expected the README's example lines, found {}: {lines:?}",
        lines.len()
    );
    // under the target folder, on a disk: a tmpfs TMPDIR would refuse the --storage-dir line
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let scratch = tmp.path();
    for d in ["storage", "man1"] {
        std::fs::create_dir_all(scratch.join(d)).unwrap();
    }
    // the README unpacks the snapshot with tar as a new user would, into the folder the
    // later lines read
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Everyday use"))
        .unwrap();
    assert!(
        section.contains("\n    tar -xzf host.tar.gz "),
        "the README unpacks host.tar.gz with tar -xzf"
    );
    let fixtures: Option<PathBuf> = hwsurvey_testkit::fixtures();
    if let Some(f) = &fixtures {
        std::os::unix::fs::symlink(
            f.join("x86_64-dell-r640-2s-dmidecode-24slots/dmidecode.txt"),
            scratch.join("dmidecode.txt"),
        )
        .unwrap();
    }
    // the snapshot line first: the probe, run and qualify lines read what it writes
    let mut ordered: Vec<&String> = lines.iter().filter(|l| l.contains(" snapshot ")).collect();
    assert_eq!(ordered.len(), 1, "one snapshot example line: {lines:?}");
    ordered.extend(lines.iter().filter(|l| !l.contains(" snapshot ")));
    let mut unknown = Vec::new();
    let mut failures = Vec::new();
    let mut ran = 0;
    for line in ordered {
        let Some(plan) = plan_for(line, scratch) else {
            unknown.push(line.clone());
            continue;
        };
        if plan.needs_shared && fixtures.is_none() {
            println!("SKIPPED: ../shared not found: {line}");
            continue;
        }
        // `hwsurvey elf target/dist/...` reads the dist binary from the checkout
        let cwd = if args_of(&plan).contains("target/dist/") {
            let root = checkout();
            let file = plan.runs[0]
                .iter()
                .find(|a| a.starts_with("target/dist/"))
                .unwrap();
            if !root.join(file).is_file() {
                println!(
                    "SKIPPED: {file} not built yet (`cargo xtask dist`; scripts/test's dist stage, after \
                     the native tests, checks each dist binary with `hwsurvey elf`): {line}"
                );
                continue;
            }
            root
        } else if args_of(&plan).contains(" reports/fleet/") {
            // the example fleet shipped in the checkout
            checkout()
        } else {
            scratch.to_path_buf()
        };
        for args in &plan.runs {
            let out = hwsurvey()
                .args(args)
                .current_dir(&cwd)
                .env("COLUMNS", "100")
                .output()
                .unwrap();
            ran += 1;
            let code = out.status.code().unwrap_or(-1);
            println!(
                "README: {line}\n  ran: hwsurvey {} -> exit {code}",
                args.join(" ")
            );
            if !plan.ok.contains(&code) {
                failures.push(format!(
                    "{line}\n  ran: hwsurvey {}\n  exit {code} (expected one of {:?})\n  stderr: {}",
                    args.join(" "),
                    plan.ok,
                    String::from_utf8_lossy(&out.stderr).trim_end()
                ));
            } else if out.stdout.is_empty() && !args.contains(&"-o".to_string()) && args[0] != "man"
            {
                failures.push(format!(
                    "{line}\n  ran: hwsurvey {}: printed nothing",
                    args.join(" ")
                ));
            }
        }
        if line.contains(" snapshot ") {
            // `tar -xzf host.tar.gz` in the scratch directory
            hwsurvey_testkit::unpack(&scratch.join("host.tar.gz"), scratch);
            assert!(
                scratch.join("hwsurvey-snapshot/proc/cpuinfo").is_file(),
                "host.tar.gz does not unpack into hwsurvey-snapshot/"
            );
        }
    }
    assert!(
        unknown.is_empty(),
        "README example lines this test does not run: {unknown:#?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {ran} runs failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    // what the lines wrote
    for f in [
        "host.tar.gz",
        "quick.json",
        "report.html",
        "man1/hwsurvey.1",
    ] {
        assert!(
            scratch.join(f).is_file(),
            "{f} missing after the README's examples"
        );
    }
    assert!(
        std::fs::read_dir(scratch.join("plots")).unwrap().count() > 0,
        "compare --plots plots/ wrote no plot"
    );
}

/// The test's own reading of the README: the section's lines, comments cut.
#[test]
fn example_lines_are_read_from_the_everyday_use_section() {
    let text = "# x\n\n## Everyday use\n\n    hwsurvey probe [--json]   # one\n    cargo xtask dist\n    hwsurvey run --plan-only\n\n## Next\n\n    hwsurvey qualify\n";
    assert_eq!(
        example_lines(text),
        ["hwsurvey probe [--json]", "hwsurvey run --plan-only"]
    );
}
