//! Output fits the terminal (issue 18): with stdout on a pseudo-terminal 80 or 120 columns
//! wide, `probe` (this machine and a 128-CPU capture), `run --plan-only`, `compare` of the
//! shipped example results and `qualify` print no line wider than it, while the same commands
//! into a pipe print in full (the widest compare line is far wider than 120 columns).

use std::io::Read;
use std::path::PathBuf;
use std::process::Stdio;

use nix::pty::{openpty, Winsize};

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
    let mut master = std::fs::File::from(pty.master);
    let reader = std::thread::spawn(move || {
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
    });
    let out = child.wait_with_output().expect("wait for hwsurvey");
    let text = reader.join().expect("terminal reader");
    let text = String::from_utf8_lossy(&text).replace("\r\n", "\n");
    // qualify's 1 and 2 are findings (under qemu-user: binary.arch fails, the binary is not
    // the kernel's architecture); every other command here must succeed
    // fleet's 1 and 2 are verdicts too (the qemu-user examples fail binary.arch)
    let worst = if matches!(args.first(), Some(&"qualify") | Some(&"fleet")) {
        2
    } else {
        0
    };
    assert!(
        out.status.code().is_some_and(|c| c <= worst),
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
    let terminal = on_terminal(&args, 80);
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
