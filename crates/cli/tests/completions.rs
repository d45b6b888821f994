//! `hwsurvey completions SHELL` and `hwsurvey man`: generated from the clap definitions, so
//! every subcommand and option is in them; bash accepts the script. Every path a `--help`
//! names exists or is a placeholder ([`help_paths`]).

use std::collections::BTreeSet;

fn hwsurvey(args: &[&str]) -> std::process::Output {
    let out = hwsurvey_testkit::target_command(&assert_cmd::cargo::cargo_bin("hwsurvey"))
        .args(args)
        .output()
        .expect("run hwsurvey");
    assert!(
        out.status.success(),
        "hwsurvey {args:?}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

const SUBCOMMANDS: [&str; 9] = [
    "probe",
    "snapshot",
    "run",
    "compare",
    "qualify",
    "fleet",
    "elf",
    "completions",
    "man",
];

#[test]
fn bash_completion_names_every_subcommand_and_bash_accepts_it() {
    let script = String::from_utf8(hwsurvey(&["completions", "bash"]).stdout).unwrap();
    assert!(script.contains("_hwsurvey()"), "{script:.200}");
    for sub in SUBCOMMANDS {
        assert!(
            script.contains(&format!("hwsurvey__subcmd__{sub}")),
            "no completion for {sub}"
        );
    }
    for option in [
        "--plan-only",
        "--storage-dir",
        "--baseline",
        "--destructive",
    ] {
        assert!(script.contains(option), "no completion for {option}");
    }
    if !hwsurvey_testkit::tool("bash") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hwsurvey.bash");
    std::fs::write(&path, &script).unwrap();
    // source it and ask bash for the completion function: a syntax error fails here
    let check = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("source {} && complete -p hwsurvey", path.display()))
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "bash: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(String::from_utf8_lossy(&check.stdout).contains("_hwsurvey"));
}

#[test]
fn zsh_and_fish_completions_name_every_subcommand() {
    for shell in ["zsh", "fish"] {
        let script = String::from_utf8(hwsurvey(&["completions", shell]).stdout).unwrap();
        for sub in SUBCOMMANDS {
            assert!(script.contains(sub), "{shell}: no {sub}");
        }
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error_naming_the_choices() {
    let out = hwsurvey_testkit::target_command(&assert_cmd::cargo::cargo_bin("hwsurvey"))
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tcsh") && err.contains("bash"), "{err}");
}

#[test]
fn man_writes_one_page_per_subcommand_with_its_options() {
    let dir = tempfile::tempdir().unwrap();
    let man_dir = dir.path().join("man1");
    let d = man_dir.to_str().unwrap();
    hwsurvey(&["man", "--dir", d]);
    let pages: BTreeSet<String> = std::fs::read_dir(&man_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut want: BTreeSet<String> = SUBCOMMANDS
        .iter()
        .map(|s| format!("hwsurvey-{s}.1"))
        .collect();
    want.insert("hwsurvey.1".into());
    assert_eq!(pages, want);
    let run = std::fs::read_to_string(man_dir.join("hwsurvey-run.1")).unwrap();
    assert!(run.contains(".TH hwsurvey-run 1"), "{run:.300}");
    // roff escapes the hyphens of options
    assert!(
        run.contains("\\-\\-plan\\-only"),
        "no --plan-only in the run page"
    );
    let top = String::from_utf8(hwsurvey(&["man"]).stdout).unwrap();
    assert!(top.contains(".TH hwsurvey 1"), "{top:.300}");
    assert!(top.contains(".SH EXAMPLES"), "the top page has no examples");
}

/// Every page has an EXIT STATUS section, and its examples are printed as
/// written (no-fill), so `man` neither reflows nor hyphenates them ("ma‐ chine").
#[test]
fn man_pages_state_exit_status_and_keep_examples_verbatim() {
    let dir = tempfile::tempdir().unwrap();
    let man_dir = dir.path().join("man1");
    hwsurvey(&["man", "--dir", man_dir.to_str().unwrap()]);
    let mut names: Vec<String> = SUBCOMMANDS
        .iter()
        .map(|s| format!("hwsurvey-{s}"))
        .collect();
    names.push("hwsurvey".into());
    for name in &names {
        let page = std::fs::read_to_string(man_dir.join(format!("{name}.1"))).unwrap();
        assert!(
            page.contains(".SH \"EXIT STATUS\""),
            "{name}.1 has no EXIT STATUS section:\n{page}"
        );
        let examples = page
            .split(".SH EXAMPLES\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{name}.1 has no EXAMPLES section:\n{page}"));
        assert!(
            examples.starts_with(".nf\n"),
            "{name}.1: examples are filled:\n{examples}"
        );
        assert!(!page.contains(".SH EXTRA"), "{name}.1 still has EXTRA");
    }
    // rendered as a reader sees it, 80 columns: each example line whole on one line
    if !hwsurvey_testkit::tool("groff") {
        return;
    }
    let page = man_dir.join("hwsurvey.1");
    let out = std::process::Command::new("groff")
        .args(["-man", "-Tutf8", "-P", "-cbou", "-rLL=80n"])
        .arg(&page)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    for example in [
        "hwsurvey probe                     # what this machine is: CPUs, caches, NUMA, DIMMs",
        "hwsurvey completions bash > /etc/bash_completion.d/hwsurvey",
    ] {
        assert!(
            text.lines().any(|l| l.trim() == example),
            "{example:?} not on one line of the rendered page:\n{text}"
        );
    }
    assert!(text.contains("EXIT STATUS"), "{text}");
}

/// `--help` of every command states its exit codes, as `run --help` does.
#[test]
fn help_of_every_command_states_exit_codes() {
    for sub in SUBCOMMANDS {
        let help = String::from_utf8(hwsurvey(&[sub, "--help"]).stdout).unwrap();
        let status = help
            .split_once("Exit status")
            .or_else(|| help.split_once("Exit codes"))
            .unwrap_or_else(|| panic!("hwsurvey {sub} --help states no exit codes:\n{help}"))
            .1;
        assert!(
            status.contains("\n  0 ") && (status.contains("\n  2 ") || status.contains("\n  3 ")),
            "hwsurvey {sub} --help: no codes listed:\n{help}"
        );
    }
}

#[test]
fn man_replaces_a_symlink_under_a_page_name_and_leaves_its_target_alone() {
    let dir = tempfile::tempdir().unwrap();
    let man_dir = dir.path().join("man1");
    std::fs::create_dir(&man_dir).unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "not a manual page\n").unwrap();
    let link = man_dir.join("hwsurvey-run.1");
    std::os::unix::fs::symlink("../victim.txt", &link).unwrap();
    hwsurvey(&["man", "--dir", man_dir.to_str().unwrap()]);
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "not a manual page\n",
        "the symlink's target was written"
    );
    let md = std::fs::symlink_metadata(&link).unwrap();
    assert!(
        md.file_type().is_file(),
        "the link was not replaced: {md:?}"
    );
    let run = std::fs::read_to_string(&link).unwrap();
    assert!(run.contains(".TH hwsurvey-run 1"), "{run:.300}");
    // no temporary file is left behind
    let left: Vec<String> = std::fs::read_dir(&man_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Every path a `--help` names exists or is clearly a placeholder (`hwsurvey
/// --help` showed `hwsurvey fleet reports/fleet/run-1/`, a folder that never existed).
///
/// The rule, path by path, over the help of `hwsurvey` and of every subcommand (`--help`, the
/// long form with its examples):
/// - a path whose first component is an entry of the repository's root (`reports/`,
///   `profiles/`, `scripts/`, ...) is one of the repository's own: it exists;
/// - a kernel interface (`/proc/...`, `/sys/...`, `/dev/...`): its first two components exist
///   here (`/sys/firmware/dmi` may not, in a VM; `/sys/firmware` does);
/// - any other absolute or home path is where a user installs or keeps things (`/etc/`,
///   `/usr/local/`, `/mnt/`, `~/`), or written as a placeholder (a component in capitals:
///   `RUN_DIR`, `DIR`, `/dev/X`);
/// - any other relative path is one the example itself names for its output (`plots/`,
///   `hwsurvey-snapshot/` unpacked by the `tar` above it), as bare file names are (`a.json`).
mod help_paths {
    use std::path::PathBuf;

    fn repo() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    fn help(args: &[&str]) -> String {
        let out = hwsurvey_testkit::target_command(&assert_cmd::cargo::cargo_bin("hwsurvey"))
            .args(args)
            .env_remove("COLUMNS")
            .output()
            .expect("run hwsurvey");
        assert!(out.status.success(), "hwsurvey {args:?}: {:?}", out.status);
        String::from_utf8(out.stdout).expect("help is UTF-8")
    }

    /// The subcommands `hwsurvey --help` lists under "Commands:".
    fn subcommands(top: &str) -> Vec<String> {
        top.lines()
            .skip_while(|l| !l.starts_with("Commands:"))
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .filter_map(|l| l.split_whitespace().next())
            .filter(|c| *c != "help")
            .map(str::to_string)
            .collect()
    }

    /// The words of `text` that name a path: a `/` inside, not an option (`--storage-dir`), a
    /// URL, a ratio (`0/1/2`), a unit (`I/O`, `ops/s`) or a list of alternatives in parentheses.
    fn paths(text: &str) -> Vec<String> {
        text.split_whitespace()
            .map(|w| {
                w.trim_matches(|c: char| {
                    matches!(
                        c,
                        '(' | ')' | ',' | ';' | ':' | '`' | '"' | '\'' | '[' | ']'
                    )
                })
                .trim_end_matches('.')
                .trim_start_matches("./")
            })
            .filter(|w| w.contains('/') && *w != "/" && !w.starts_with('-') && !w.contains("://"))
            .filter(|w| {
                // `I/O`, `ops/s`, `GB/s`, `0/1/2`, `.html/.htm`: not paths
                let parts: Vec<&str> = w.split('/').collect();
                let unit = |p: &&str| {
                    !p.is_empty()
                        && p.len() <= 4
                        && (p.chars().all(|c| c.is_ascii_digit())
                            || matches!(*p, "I" | "O" | "s" | "ops" | "GB" | "MB" | "htm"))
                };
                let units = parts.len() >= 2 && parts.iter().all(unit);
                !units && !w.starts_with('.')
            })
            .map(str::to_string)
            .collect()
    }

    /// Why `path` breaks the rule of the module text, or `None`.
    fn fault(path: &str, roots: &[String]) -> Option<String> {
        let first = path.split('/').next().unwrap_or_default();
        if roots.iter().any(|r| r == first) {
            // a glob (`reports/examples/*.json`) or a name made at run time
            // (`reports/<hostname>-...json`): the part before it exists
            let fixed = path.find(['*', '<']).map_or(path, |i| &path[..i]);
            return (!repo().join(fixed).exists())
                .then(|| format!("{path}: not in the repository"));
        }
        let placeholder = path
            .split('/')
            .any(|c| c.chars().any(|ch| ch.is_ascii_uppercase()) && c == c.to_ascii_uppercase());
        if let Some(rest) = path.strip_prefix('/') {
            let mut comps = rest.split('/');
            let top = comps.next().unwrap_or_default();
            if matches!(top, "proc" | "sys" | "dev") {
                let two: PathBuf = ["/", top, comps.next().unwrap_or_default()]
                    .iter()
                    .collect();
                return (!placeholder && !two.exists())
                    .then(|| format!("{path}: {} does not exist here", two.display()));
            }
            let kept = ["/etc/", "/usr/local/", "/mnt/"]
                .iter()
                .any(|p| path.starts_with(p));
            return (!kept && !placeholder).then(|| {
                format!("{path}: neither a place a user keeps things nor a placeholder (DIR)")
            });
        }
        // `~/...` and relative paths the example names for its own output
        None
    }

    #[test]
    fn every_path_in_help_exists_or_is_a_placeholder() {
        let roots: Vec<String> = std::fs::read_dir(repo())
            .expect("the repository's root")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.') && n != "target")
            .collect();
        assert!(roots.iter().any(|r| r == "reports"), "{roots:?}");
        let top = help(&["--help"]);
        let subs = subcommands(&top);
        assert!(subs.len() >= 9, "{subs:?}\n{top}");
        let mut texts = vec![("hwsurvey --help".to_string(), top.clone())];
        for s in &subs {
            texts.push((format!("hwsurvey {s} --help"), help(&[s, "--help"])));
        }
        let mut faults = Vec::new();
        let mut checked = 0;
        for (what, text) in &texts {
            for p in paths(text) {
                checked += 1;
                if let Some(f) = fault(&p, &roots) {
                    faults.push(format!("{what}: {f}"));
                }
            }
        }
        assert!(faults.is_empty(), "{}", faults.join("\n"));
        // the repository paths the help names are checked, not skipped
        assert!(checked > 10, "{checked} paths");
        assert!(
            texts
                .iter()
                .any(|(_, t)| t.contains("reports/fleet/examples/")),
            "the fleet example names the shipped fleet folder"
        );
        // the rule catches the path
        assert!(fault("reports/fleet/run-1/", &roots).is_some());
        assert!(fault("/shared/run-id", &roots).is_some());
        assert!(fault("RUN_DIR/", &roots).is_none());
    }
}
