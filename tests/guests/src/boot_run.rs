//! One run of a guest: qemu started on the definition's kernel and initramfs, the console
//! read line by line (the markers of the init, the host's injections), the deadlines (the
//! boot's, the guest's `timeout_s`, the power-off after the output), and the output brought
//! back.

use super::*;

/// Boots `guest`, runs `commands` in `/out` (one after the other, inside the cgroup), and
/// brings back their outputs and the files under `/out`. Fails when qemu cannot start, when
/// the guest does not finish within its timeout, or when its output cannot be decoded; the
/// console log stays in the run folder in every case.
pub fn run(guest: &Guest, commands: &[Vec<String>], opts: &RunOptions) -> Result<GuestRun> {
    for boot in 1..=BOOTS {
        match run_once(guest, commands, opts)? {
            Booted::Ran(r) => return Ok(r),
            Booted::Hung { console_log } => {
                let kept = keep_log(guest, &console_log, "hung", boot);
                let what = format!(
                    "{}: the kernel did not reach the init within {} s (boot {boot} of {BOOTS}; \
                     console log: {})",
                    guest.name,
                    opts.boot_deadline_s.unwrap_or(BOOT_DEADLINE_S),
                    kept.display()
                );
                if boot == BOOTS {
                    bail!("{what}");
                }
                eprintln!("guest {what}: booting again");
            }
            Booted::TimedOut {
                console_log,
                what,
                kernel_stall,
            } => {
                // a guest kernel that stalled is the emulator's fault, booted again as a hung
                // boot is; a command that hung while the guest still ran fails
                if !kernel_stall || boot == BOOTS {
                    bail!("{what}");
                }
                let kept = keep_log(guest, &console_log, "stalled", boot);
                eprintln!(
                    "guest {what}\nguest {}: the guest kernel stalled (console log kept: {}): \
                     booting again ({boot} of {BOOTS})",
                    guest.name,
                    kept.display()
                );
            }
        }
    }
    unreachable!("the last boot returns or fails")
}

/// Moves a failed boot's console log beside the run folder, which the next boot empties, as
/// `NAME.WHY-BOOT.log`; returns its new path.
fn keep_log(guest: &Guest, console_log: &Path, why: &str, boot: usize) -> PathBuf {
    let kept = console_log
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."))
        .join(format!("{}.{why}-{boot}.log", guest.name));
    let _ = fs::rename(console_log, &kept);
    kept
}

/// Seconds within which a guest's kernel must reach its init (the [`READY_MARKER`]): boots take
/// 3-20 s, 60 s on a busy host. A kernel that does not is hung, and is booted again (up to
/// [`BOOTS`] times) instead of waiting out the guest's timeout: on 2026-12-04 the 16-vCPU
/// x86-2s4n-smt kernel locked up 3 s into its boot (every CPU's `migration/N` stopper thread
/// "stuck for 547 s", soft lockups), on an idle host, after 6 boots that had taken 6-11 s.
pub const BOOT_DEADLINE_S: u64 = 180;

/// Boots of one run, at most, when the kernel hangs before the init ([`BOOT_DEADLINE_S`]).
pub const BOOTS: usize = 3;

/// One boot's end.
pub(crate) enum Booted {
    /// The init ran the commands.
    Ran(GuestRun),
    /// The kernel did not reach the init within [`BOOT_DEADLINE_S`]; its console log.
    Hung { console_log: PathBuf },
    /// The guest did not power off within its `timeout_s`: its console log, what it was doing
    /// ([`Stuck`]), and whether the guest kernel itself stalled.
    TimedOut {
        console_log: PathBuf,
        what: String,
        kernel_stall: bool,
    },
}

/// Seconds a guest has to power off once it printed its output ([`END_MARKER`]): it syncs and
/// powers off in under a second; past this, qemu is stopped and the output used, the console
/// log saying so.
pub const POWER_OFF_S: u64 = 30;

/// One boot of [`run`].
pub(crate) fn run_once(
    guest: &Guest,
    commands: &[Vec<String>],
    opts: &RunOptions,
) -> Result<Booted> {
    qemu_available(&guest.qemu)?;
    let out_dir = opts.out_dir.clone().unwrap_or_else(|| {
        workspace_root()
            .join("target/guests/runs")
            .join(&guest.name)
    });
    let _ = fs::remove_dir_all(&out_dir);
    fs::create_dir_all(&out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;
    let kernel = kernel_image(guest.debian_arch())?;
    let initrd = out_dir.join("initramfs.cpio");
    build_initramfs(guest, commands, &initrd)?;
    let console_log = out_dir.join("console.log");

    let mut cmd = Command::new(&guest.qemu);
    if !guest.drives.is_empty() {
        fs::create_dir_all(out_dir.join("drives"))?;
    }
    for d in &guest.drives {
        let img = out_dir.join(format!("drives/{}.img", d.id));
        fs::File::create(&img)
            .and_then(|f| f.set_len(d.size_mib << 20))
            .with_context(|| format!("cannot create {}", img.display()))?;
        cmd.arg("-drive").arg(format!(
            "file={},if=none,id={},format=raw",
            img.display(),
            d.id
        ));
    }
    let monitor_socket = out_dir.join("monitor.sock");
    if !opts.injections.is_empty() {
        let _ = fs::remove_file(&monitor_socket);
        cmd.arg("-monitor").arg(format!(
            "unix:{},server=on,wait=off",
            monitor_socket.display()
        ));
    }
    cmd.args(guest.qemu_args())
        .arg("-kernel")
        .arg(&kernel)
        .arg("-initrd")
        .arg(&initrd)
        .arg("-append")
        .arg(guest.cmdline())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let host_before = host_cpu_busy_s();
    let children_before = reaped_children_cpu_s();
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", guest.qemu))?;
    let stdout = child.stdout.take().context("qemu's stdout")?;
    let mut stderr = child.stderr.take().context("qemu's stderr")?;
    let (tx, rx) = mpsc::channel::<(Instant, String)>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).split(b'\n') {
            let Ok(line) = line else { break };
            let text = String::from_utf8_lossy(&line)
                .trim_end_matches('\r')
                .to_owned();
            if tx.send((Instant::now(), text)).is_err() {
                break;
            }
        }
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });

    let deadline = start + Duration::from_secs(guest.timeout_s);
    let boot_deadline = start
        + Duration::from_secs(
            opts.boot_deadline_s
                .unwrap_or(BOOT_DEADLINE_S)
                .min(guest.timeout_s),
        );
    let mut log = fs::File::create(&console_log)?;
    let mut lines = Vec::new();
    let mut ready_at = None;
    let mut timed_out = false;
    let mut hung = false;
    // the output's end seen: the guest then has POWER_OFF_S to power off
    let mut output_at: Option<Instant> = None;
    let mut no_power_off = false;
    // the latest command marker: its command and when it came
    let mut command_at: Option<(usize, Instant)> = None;
    let mut injected: Vec<(String, String)> = Vec::new();
    let mut pending: Vec<&Injection> = opts.injections.iter().collect();
    loop {
        let now = Instant::now();
        if ready_at.is_none() && now >= boot_deadline {
            hung = true;
            let _ = child.kill();
            break;
        }
        if let Some(at) = output_at.filter(|at| now >= *at + Duration::from_secs(POWER_OFF_S)) {
            // the output is whole; a guest kernel that cannot power off is not the test's
            // subject, but it is said
            no_power_off = true;
            let _ = child.kill();
            writeln!(
                log,
                "--- the guest printed its output but did not power off within {POWER_OFF_S} s \
                 ({:.0} s after qemu's start): qemu stopped",
                (at - start).as_secs_f64()
            )?;
            break;
        }
        if now >= deadline {
            timed_out = true;
            let _ = child.kill();
            break;
        }
        let until = match (ready_at, output_at) {
            (None, _) => boot_deadline,
            (Some(_), Some(at)) => deadline.min(at + Duration::from_secs(POWER_OFF_S)),
            (Some(_), None) => deadline,
        };
        match rx.recv_timeout(until.saturating_duration_since(now)) {
            Ok((at, line)) => {
                writeln!(log, "{line}")?;
                if opts.echo_console {
                    eprintln!("{line}");
                }
                if ready_at.is_none() && line.trim_end().ends_with(READY_MARKER) {
                    ready_at = Some(at);
                }
                if output_at.is_none() && line.trim_end().ends_with(END_MARKER) {
                    output_at = Some(at);
                }
                if let Some(i) = command_marker(&line) {
                    command_at = Some((i, at));
                }
                if let Some(k) = pending
                    .iter()
                    .position(|i| line.trim_end().ends_with(i.marker.as_str()))
                {
                    let inj = pending.remove(k);
                    let answers =
                        monitor_commands(&monitor_socket, &inj.commands).unwrap_or_else(|e| {
                            vec![(inj.commands.join("; "), format!("error: {e:#}"))]
                        });
                    for (c, a) in &answers {
                        writeln!(log, "--- qemu monitor: {c}\n{a}")?;
                    }
                    injected.extend(answers);
                }
                lines.push(line);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let status = child.wait()?;
    let end = Instant::now();
    let host_busy_elsewhere = match (
        host_before,
        host_cpu_busy_s(),
        children_before,
        reaped_children_cpu_s(),
    ) {
        (Some((b0, cpus)), Some((b1, _)), Some(c0), Some(c1)) if cpus > 0 => {
            let span = (end - start).as_secs_f64() * cpus as f64;
            Some((((b1 - b0) - (c1 - c0)) / span).clamp(0.0, 1.0))
        }
        _ => None,
    };
    let _ = reader.join();
    let qemu_stderr = err_reader.join().unwrap_or_default();
    if !qemu_stderr.trim().is_empty() {
        writeln!(log, "--- qemu stderr ---\n{qemu_stderr}")?;
    }
    if hung {
        return Ok(Booted::Hung { console_log });
    }
    let where_log = format!("console log: {}", console_log.display());
    if no_power_off {
        eprintln!(
            "guest {}: printed its output but did not power off within {POWER_OFF_S} s: qemu \
             stopped; {where_log}",
            guest.name
        );
    }
    if timed_out {
        let stuck = Stuck::read(
            guest,
            commands,
            &lines,
            command_at.map(|(i, at)| (i, deadline.saturating_duration_since(at))),
        );
        return Ok(Booted::TimedOut {
            console_log,
            what: format!(
                "{}: no power-off within {} s; {}; {where_log}",
                guest.name, guest.timeout_s, stuck.words
            ),
            kernel_stall: stuck.kernel_stall,
        });
    }
    let Some(ready_at) = ready_at else {
        bail!(
            "{}: the guest's init never started (qemu {status}); {where_log}",
            guest.name
        );
    };
    let begin = lines
        .iter()
        .position(|l| l.trim_end().ends_with(BEGIN_MARKER));
    let finish = lines
        .iter()
        .position(|l| l.trim_end().ends_with(END_MARKER));
    let (Some(begin), Some(finish)) = (begin, finish) else {
        bail!(
            "{}: the guest printed no output between {BEGIN_MARKER} and {END_MARKER} (qemu {status}); {where_log}",
            guest.name
        );
    };
    let b64: String = lines[begin + 1..finish]
        .iter()
        .flat_map(|l| l.trim().chars())
        .collect();
    let tgz = base64::engine::general_purpose::STANDARD
        .decode(b64.as_bytes())
        .with_context(|| {
            format!(
                "{}: the guest's output is not base64; {where_log}",
                guest.name
            )
        })?;
    let unpacked = out_dir.join("guest");
    tar::Archive::new(flate2::read::GzDecoder::new(&tgz[..]))
        .unpack(&unpacked)
        .with_context(|| {
            format!(
                "{}: cannot unpack the guest's output; {where_log}",
                guest.name
            )
        })?;
    let mut outputs = Vec::new();
    for (i, argv) in commands.iter().enumerate() {
        let read = |ext: &str| {
            let p = unpacked.join(format!("res/{i}.{ext}"));
            fs::read(&p)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .with_context(|| format!("{}: {} missing; {where_log}", guest.name, p.display()))
        };
        let status_text = read("status")?;
        let status = status_text.trim().parse::<i32>().with_context(|| {
            format!(
                "{}: exit status of command {i} is {status_text:?}; {where_log}",
                guest.name
            )
        })?;
        outputs.push(CommandOutput {
            argv: argv.clone(),
            stdout: read("stdout")?,
            stderr: read("stderr")?,
            status,
        });
    }
    Ok(Booted::Ran(GuestRun {
        boot: ready_at - start,
        commands: end - ready_at,
        outputs,
        files_dir: unpacked.join("out"),
        console_log,
        host_busy_elsewhere,
        monitor: injected,
    }))
}
