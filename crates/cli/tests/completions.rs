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
    assert!(top.contains("Examples:"), "the top page has no examples");
}
