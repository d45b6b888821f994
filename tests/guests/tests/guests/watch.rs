//! The hardware watch in a guest: the host injects, through qemu's monitor, a
//! machine check and a correctable and an uncorrectable AER error in the middle of a measured
//! run ([`hwsurvey_guests::ExpectHardwareErrors`]); the run's file must hold each against the
//! point it came in, qualify must fail the run naming the CPU bank and the PCIe device, and
//! compare must mark the point.
//!
//! Timing: the run's profile has points of a few seconds (cpu.scaling, two 0.5 s samples a
//! point); once the file holds its first test the guest waits 0.5 s (inside the second point),
//! stops the run (SIGSTOP), records how many tests the file holds, and prints the marker on
//! the console; the host injects; once the guest's kernel has logged the machine check and the
//! uncorrectable error, the guest injects the correctable AER error qemu cannot deliver
//! (through the kernel's `aer_inject`, whose hooks on the port's bus would hide an error qemu
//! raises after them; the definition's comment says why qemu cannot), waits until the kernel
//! has logged it, and lets the run go on (SIGCONT). The errors are then in
//! the point that was running: index = the tests recorded at the stop.

use hwsurvey_guests::{CommandOutput, ExpectHardwareErrors, Guest, GuestRun, Injection};

use super::exited;

/// The console line that makes the host inject.
pub(super) const MARKER: &str = "HWSURVEY-INJECT";

/// The run's profile: cpu.scaling's integer kernel, two 0.5 s samples a point.
const PROFILE: [&str; 21] = [
    "format_version = 1",
    "id = \"inject\"",
    "version = 1",
    "description = \"cpu.scaling with points of seconds (hardware errors injected into one)\"",
    "[run]",
    "placement = \"compact\"",
    "sample_min_s = 0.5",
    "sample_min_clock_ticks = 20",
    "warmup_s = 0.0",
    "samples_min = 2",
    "samples_max = 2",
    "target_cv = 0.05",
    "memory_fraction = 0.25",
    "memory_llc_multiple = 1.0",
    "memory_min_working_set_bytes = 4194304",
    "memory_max_working_set_bytes = 8388608",
    "oversubscription_factor = 2",
    "[families.\"cpu.scaling\"]",
    "[families.\"cpu.scaling\".params]",
    "kernels = [\"integer\"]",
    "iterations_per_rep = 100000",
];

/// The 32 bytes of the kernel's `struct aer_error_inj` (drivers/pci/pcie/aer_inject.c: bus,
/// dev, fn as u8, then u32 uncor_status, cor_status, header_log0-3, domain; little-endian)
/// for a correctable Receiver Error (bit 0) on `device` (`0000:01:00.0`), as `printf` octal
/// escapes.
fn aer_inject_bytes(device: &str) -> String {
    let parts: Vec<u32> = device
        .split([':', '.'])
        .map(|p| u32::from_str_radix(p, 16).unwrap_or(0))
        .collect();
    let (domain, bus, dev, func) = match parts[..] {
        [d, b, v, f] => (d, b, v, f),
        _ => (0, 0, 0, 0),
    };
    let mut bytes = vec![bus as u8, dev as u8, func as u8, 0];
    for v in [0u32, 1, 0, 0, 0, 0, domain] {
        bytes.extend(v.to_le_bytes());
    }
    bytes.iter().map(|b| format!("\\{b:03o}")).collect()
}

/// The guest's commands: a clean run of the profile, the run the errors are injected into
/// (its stop, the marker, the correctable AER error through aer_inject, the wait for the
/// kernel's lines, the rest), qualify of it, and compare of the two.
pub(super) fn commands(e: &ExpectHardwareErrors) -> [String; 3] {
    let lines: Vec<String> = PROFILE
        .iter()
        .map(|l| format!("'{}'", l.replace('\'', "")))
        .collect();
    let script = format!(
        "P=/tmp/inject.toml; printf '%s\\n' {lines} > $P; \
         hwsurvey run --profile $P -o clean.json > clean.out 2>&1; echo $? > clean.status; \
         C=/sys/devices/system/machinecheck/machinecheck0/check_interval; \
         [ -w $C ] && echo 1 > $C; \
         hwsurvey run --profile $P -o inject.json > inject.out 2>&1 & p=$!; \
         i=0; while [ $i -lt 1200 ] && ! grep -q '\"outcome\"' inject.json 2>/dev/null; \
         do usleep 100000; i=$((i+1)); done; \
         usleep 500000; kill -STOP $p; \
         grep -c '\"outcome\"' inject.json > inject.stopped; \
         echo {MARKER} > /dev/console; \
         i=0; while [ $i -lt 300 ]; do dmesg > inject.dmesg; \
         grep -q 'Machine Check' inject.dmesg && grep -q 'AER: Uncorrect' inject.dmesg && break; \
         usleep 200000; i=$((i+1)); done; \
         printf '{aer}' > /dev/aer_inject || echo 'aer_inject failed' > inject.aer; \
         i=0; while [ $i -lt 100 ]; do dmesg > inject.dmesg; \
         grep -q 'AER: Correct' inject.dmesg && break; \
         usleep 200000; i=$((i+1)); done; \
         kill -CONT $p; wait $p; echo $? > inject.status",
        lines = lines.join(" "),
        aer = aer_inject_bytes(&e.device)
    );
    [
        format!("sh -c {script}"),
        "hwsurvey qualify inject.json --format json".to_owned(),
        "hwsurvey compare clean.json inject.json --details".to_owned(),
    ]
}

/// What the host sends when the marker comes: the machine check (`mce cpu bank status
/// mcg_status addr misc`), then a correctable Receiver Error and an uncorrectable Completion
/// Timeout (non-fatal by its default severity) on the port (`pcie_aer_inject_error`).
pub(super) fn injections(e: &ExpectHardwareErrors) -> Vec<Injection> {
    vec![Injection {
        marker: MARKER.to_owned(),
        commands: vec![
            format!("mce {} {} {} {} 0 0", e.cpu, e.bank, e.status, e.mcg_status),
            format!("pcie_aer_inject_error -c {} 0x1", e.port),
            format!("pcie_aer_inject_error {} 0x4000", e.port),
        ],
    }]
}

fn file_text(r: &GuestRun, name: &str) -> Option<String> {
    std::fs::read_to_string(r.files_dir.join(name)).ok()
}

/// Checks the commands of [`commands`] (the first at `at`). Returns the failures.
pub(super) fn check(
    guest: &Guest,
    e: &ExpectHardwareErrors,
    r: &GuestRun,
    at: usize,
) -> Vec<String> {
    let mut failures = Vec::new();
    let name = &guest.name;
    println!("guest {name}: monitor: {:?}", r.monitor);
    if r.monitor.len() != 3
        || r.monitor
            .iter()
            .any(|(_, a)| a.to_lowercase().contains("error"))
    {
        failures.push(format!(
            "the host's injection: expected 3 monitor commands answered without an error, got {:?}",
            r.monitor
        ));
    }
    let script: &CommandOutput = &r.outputs[at];
    if script.status != 0 {
        failures.push(format!("injection run {}", exited(script)));
        return failures;
    }
    let stopped: Option<usize> = file_text(r, "inject.stopped").and_then(|t| t.trim().parse().ok());
    let dmesg = file_text(r, "inject.dmesg").unwrap_or_default();
    let hw: Vec<&str> = dmesg
        .lines()
        .filter(|l| l.contains("mce:") || l.contains("AER") || l.contains("Hardware Error"))
        .collect();
    println!(
        "guest {name}: stopped after {stopped:?} tests; kernel lines:\n{}",
        hw.join("\n")
    );
    for f in ["clean", "inject"] {
        let status = file_text(r, &format!("{f}.status")).unwrap_or_default();
        if status.trim() != "0" {
            failures.push(format!(
                "{f} run exited {status:?}: {}",
                file_text(r, &format!("{f}.out")).unwrap_or_default()
            ));
        }
    }
    let file = match hwsurvey_result::load(&r.files_dir.join("inject.json")) {
        Ok(f) => f,
        Err(err) => {
            failures.push(format!("inject.json: {err}"));
            return failures;
        }
    };
    let Some(n) = stopped.filter(|n| *n < file.tests.len()) else {
        failures.push(format!(
            "the run was stopped after {stopped:?} tests of {}",
            file.tests.len()
        ));
        return failures;
    };
    // the point that ran when the errors came holds them; no other point does
    let point = &file.tests[n];
    let words = format!("{} {}", point.point.family, point.point.id);
    let Some(w) = point.watch.as_ref() else {
        failures.push(format!("{words}: no watch in its record"));
        return failures;
    };
    println!(
        "guest {name}: {words}: watch {}",
        serde_json::to_string(w).unwrap_or_default()
    );
    let aer = w.aer.iter().find(|a| a.device == e.device);
    match aer {
        Some(a) if a.correctable >= 1 && a.nonfatal >= 1 => {}
        other => failures.push(format!(
            "{words}: expected a correctable and a non-fatal AER count on {}, got {other:?} (all: {:?})",
            e.device, w.aer
        )),
    }
    let mce = w
        .kernel_log
        .iter()
        .find(|l| l.kind == hwsurvey_probe::watch::LogKind::MachineCheck && l.bank.is_some());
    match mce {
        Some(m) if m.cpu == Some(e.cpu) && m.bank == Some(e.bank) => {}
        other => failures.push(format!(
            "{words}: expected the machine check of CPU {} bank {} in its kernel log lines, got {other:?} \
             (all: {:?})",
            e.cpu, e.bank, w.kernel_log
        )),
    }
    for (k, t) in file.tests.iter().enumerate().filter(|(k, _)| *k != n) {
        if let Some(m) = t
            .watch
            .as_ref()
            .map(|w| w.marks())
            .filter(|m| !m.is_empty())
        {
            failures.push(format!(
                "test {k} ({} {}) is marked {m:?}: the errors came during test {n}",
                t.point.family, t.point.id
            ));
        }
    }
    // qualify fails the run naming the bank, the device and the point: the finding fails;
    // the verdict of a machine under full-system emulation is no hardware verdict (exit 5),
    // whatever its findings, else a failure (exit 2)
    let q = &r.outputs[at + 1];
    if q.status != 2 && q.status != 5 {
        failures.push(format!(
            "qualify inject.json: expected exit 2 (fail) or 5 (emulated: no hardware verdict), {}",
            exited(q)
        ));
    }
    let summary = serde_json::from_str::<serde_json::Value>(&q.stdout)
        .ok()
        .and_then(|v| {
            v["findings"]
                .as_array()?
                .iter()
                .find(|f| f["rule"] == "watch.errors")
                .map(|f| {
                    (
                        f["verdict"].as_str().unwrap_or("").to_owned(),
                        f["summary"].as_str().unwrap_or("").to_owned(),
                    )
                })
        });
    match summary {
        Some((v, s))
            if v == "fail"
                && s.contains(&format!("CPU {} bank {}", e.cpu, e.bank))
                && s.contains(&e.device)
                && s.contains(&words) => {}
        other => failures.push(format!(
            "qualify's watch.errors: expected a failure naming CPU {} bank {}, {} and {words}, got {other:?}",
            e.cpu, e.bank, e.device
        )),
    }
    // compare marks the point, no win or loss
    let c = &r.outputs[at + 2];
    let row = c
        .stdout
        .lines()
        .find(|l| l.contains(&format!(" {} ", point.point.id)) && l.contains("during this point"));
    if c.status != 0 || row.is_none() {
        failures.push(format!(
            "compare clean.json inject.json --details: no row of {} marked \"... during this point\" ({}):\n{}",
            point.point.id,
            c.status,
            c.stdout
        ));
    }
    failures
}
