//! `hwsurvey completions SHELL` and `hwsurvey man` (issue 18): generated from the clap
//! definitions, so every subcommand and option is in them; bash accepts the script.

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

/// Issue 33 item 11: every page has an EXIT STATUS section, and its examples are printed as
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

/// Issue 33 item 11: `--help` of every command states its exit codes, as `run --help` does.
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
