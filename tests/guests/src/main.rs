//! `guest NAME [--out DIR] [--console] [--timeout S] [--inject MARKER=HMP;HMP...] -- COMMAND...
//! [-- COMMAND...]`: boots the guest
//! `tests/guests/machines/NAME.toml` under qemu-system, runs each COMMAND in it (in `/out`,
//! inside the definition's cgroup; `hwsurvey` is the static dist binary), prints each
//! command's stdout to stdout and stderr to stderr, and brings back the files they wrote to
//! `DIR/guest/out` (default DIR: `target/guests/runs/NAME`). `--timeout S` replaces the
//! definition's `timeout_s` (a standard-profile run takes longer than the tests' commands).
//! `--inject MARKER=CMD;CMD` sends each CMD to qemu's monitor when a console line ends with
//! MARKER (a command prints it with `echo MARKER > /dev/console`): `mce ...`,
//! `pcie_aer_inject_error ...`; the answers are printed.
//! Prints the boot and command
//! times to stderr. Exit status: the first failing command's, 0 when all succeed, 2 on a bad
//! invocation, 1 when the guest could not be run (the console log's path is in the message).
//! `guest --serve NAME` boots NAME as an SSH host instead (dropbear, Python; a forwarded port
//! of 127.0.0.1) and prints the ssh command; the guest stays up until this is stopped.
//! Called by `scripts/guest`.

use std::path::PathBuf;
use std::process::ExitCode;

use hwsurvey_guests::{run, Guest, RunOptions};

const USAGE: &str =
    "usage: scripts/guest NAME [--out DIR] [--console] [--timeout SECONDS] [--inject MARKER=HMP;HMP...] -- COMMAND... [-- COMMAND...]\n\
                     NAME: one of tests/guests/machines/*.toml";

/// `guest --serve NAME`: boots NAME as an SSH host (tests/guests/src/serve.rs) with a key pair
/// made in its run folder, prints the ssh command, and keeps it up until qemu ends or the
/// process is stopped (Ctrl-C kills qemu with it).
fn serve(name: &str) -> ExitCode {
    use hwsurvey_guests::serve::{free_port, run_dir, ssh_keypair, ServeOptions, Serving};
    let result = (|| -> anyhow::Result<()> {
        let guest = Guest::load(name)?;
        let dir = run_dir(name);
        let keys_dir = dir.with_extension("keys");
        std::fs::create_dir_all(&keys_dir)?;
        let keys = ssh_keypair(&keys_dir)?;
        let opts = ServeOptions {
            authorized_key: keys.public_line.clone(),
            port: free_port()?,
            out_dir: dir,
            files: vec![],
            die_during: None,
        };
        let mut g = Serving::start(&guest, &opts)?;
        let boot = g.wait_ready()?;
        eprintln!(
            "guest: {name}: up after {:.1} s; console: {}\n  ssh -i {} -p {} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null root@127.0.0.1",
            boot.as_secs_f64(),
            g.console_log.display(),
            keys.private_key.display(),
            g.port
        );
        while g.exited().is_none() {
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        Ok(())
    })();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("guest: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, name] = &args[..] {
        if flag == "--serve" {
            return serve(name);
        }
    }
    let Some(sep) = args.iter().position(|a| a == "--") else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let mut opts = RunOptions::default();
    let mut name = None;
    let mut timeout_s = None;
    let mut it = args[..sep].iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => match it.next() {
                Some(d) => opts.out_dir = Some(PathBuf::from(d)),
                None => {
                    eprintln!("guest: --out needs a folder\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--console" => opts.echo_console = true,
            "--inject" => match it.next().and_then(|v| v.split_once('=')) {
                Some((marker, cmds)) if !marker.is_empty() && !cmds.is_empty() => {
                    opts.injections.push(hwsurvey_guests::Injection {
                        marker: marker.to_owned(),
                        commands: cmds.split(';').map(|c| c.trim().to_owned()).collect(),
                    });
                }
                _ => {
                    eprintln!("guest: --inject needs MARKER=COMMAND[;COMMAND...]\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--timeout" => match it.next().map(|s| s.parse::<u64>()) {
                Some(Ok(s)) if s > 0 => timeout_s = Some(s),
                other => {
                    eprintln!(
                        "guest: --timeout needs a number of seconds > 0, got {:?}\n{USAGE}",
                        other.map(|r| r.map_err(|e| e.to_string()))
                    );
                    return ExitCode::from(2);
                }
            },
            _ if name.is_none() && !a.starts_with('-') => name = Some(a.clone()),
            _ => {
                eprintln!("guest: unexpected argument {a:?}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(name) = name else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let commands: Vec<Vec<String>> = args[sep + 1..]
        .split(|a| a == "--")
        .map(<[String]>::to_vec)
        .collect();
    if commands.iter().any(Vec::is_empty) {
        eprintln!("guest: empty command\n{USAGE}");
        return ExitCode::from(2);
    }
    let mut guest = match Guest::load(&name) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("guest: error: {e:#}");
            return ExitCode::from(2);
        }
    };
    if let Some(s) = timeout_s {
        guest.timeout_s = s;
    }
    let result = match run(&guest, &commands, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("guest: error: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    for (c, a) in &result.monitor {
        eprintln!("guest: qemu monitor: {c}: {a}");
    }
    let mut first_failure = 0;
    for out in &result.outputs {
        print!("{}", out.stdout);
        eprint!("{}", out.stderr);
        if out.status != 0 {
            eprintln!(
                "guest: {:?} exited with status {}",
                out.argv.join(" "),
                out.status
            );
            if first_failure == 0 {
                first_failure = out.status;
            }
        }
    }
    eprintln!(
        "guest: {}: boot {:.1} s, commands {:.1} s; files: {}; console: {}",
        guest.name,
        result.boot.as_secs_f64(),
        result.commands.as_secs_f64(),
        result.files_dir.display(),
        result.console_log.display()
    );
    ExitCode::from(u8::try_from(first_failure.clamp(0, 255)).unwrap_or(1))
}
