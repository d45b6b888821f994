//! Binary and OS rules: `binary.arch` (compat mode or another machine's binary, from the
//! one ELF machine table), `os.kernel_min`.

use hwsurvey_model::Probed;

use crate::config::parse_version;
use crate::facts::Facts;
use crate::{Finding, Params, RuleFinding, Verdict};

/// Name of an ELF machine number, for messages: its name in the one table
/// ([`hwsurvey_elf::MACHINES`]: `x86_64`, `SPARCV9`), or `unknown machine N`.
pub fn elf_machine_name(machine: u16) -> String {
    let m = hwsurvey_elf::Machine(machine);
    m.name().map_or_else(|| m.to_string(), str::to_string)
}

/// `binary.arch`: the binary is 32-bit on a 64-bit kernel (compat mode), or for another machine.
pub fn binary_arch(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "binary.arch";
    let bin = need!(f.binary, ID);
    let kmach = need!(f.os.kernel_machine, ID);
    let Some(native) = hwsurvey_elf::MachineInfo::for_kernel(kmach) else {
        return vec![Finding::not_evaluated(
            ID,
            format!("unknown kernel machine {kmach:?}"),
        )];
    };
    let bits = native.bits;
    let evidence = format!(
        "ELF{} {} {}",
        bin.class_bits,
        elf_machine_name(bin.machine),
        if bin.little_endian { "LSB" } else { "MSB" }
    );
    if native.is_native(bin.class_bits, bin.machine) {
        return vec![];
    }
    let compat = native.runs_in_compat(bin.class_bits, bin.machine);
    let summary = if compat {
        format!(
            "{} is a {}-bit {} binary on a {}-bit {kmach} kernel (compat mode: fewer registers, 32-bit pointers, other numbers)",
            bin.path,
            bin.class_bits,
            elf_machine_name(bin.machine),
            bits
        )
    } else {
        format!(
            "{} is built for {} ({}-bit), the kernel is {kmach}: it runs only under emulation, if at all",
            bin.path,
            elf_machine_name(bin.machine),
            bin.class_bits
        )
    };
    vec![Finding::new(ID, Verdict::Fail, summary)
        .with(format!("ELF header of {}", bin.path), evidence)
        .with("uname -m", kmach.clone())
        .fix(format!(
            "build for the native {}-bit target of {kmach}",
            bits
        ))]
}

/// `os.kernel_min`: kernel release older than the minimum. The minimum is the target
/// descriptor's `min_kernel` ([`Facts::target`]: the binary's target, rustc's platform-support
/// figure for its triple) unless the rules file sets `min_kernel` to a version explicitly; the
/// evidence names which. Pass findings carry the evidence too.
pub fn os_kernel_min(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "os.kernel_min";
    let release = need!(f.os.kernel_release, ID);
    let setting = p.str("min_kernel").unwrap_or("target");
    let (min_text, source, source_value) = if setting == "target" {
        let t = need!(f.target, ID);
        (
            t.min_kernel.clone(),
            format!("min_kernel of {} (chosen by {})", t.descriptor, t.chosen_by),
            format!("{} ({})", t.min_kernel, t.min_kernel_source),
        )
    } else {
        (
            setting.to_string(),
            "rules file: rules.\"os.kernel_min\".min_kernel (overrides the target descriptor)"
                .to_string(),
            setting.to_string(),
        )
    };
    let numeric: String = release
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let (Some(have), Some(min)) = (
        parse_version(numeric.trim_end_matches('.')),
        parse_version(&min_text),
    ) else {
        return vec![Finding::not_evaluated(
            ID,
            format!("kernel release {release:?} does not start with a version"),
        )];
    };
    let finding = if have < min {
        Finding::new(
            ID,
            Verdict::Fail,
            format!("kernel {release} is older than the minimum {min_text}"),
        )
        .fix(format!("run a kernel {min_text} or newer"))
    } else {
        Finding::new(
            ID,
            Verdict::Pass,
            "the kernel is at least the target's minimum version",
        )
    };
    vec![finding
        .with("/proc/sys/kernel/osrelease", release.clone())
        .with(source, source_value)]
}

/// `clock.source`: the kernel times with a device register (HPET, ACPI PM timer, PIT) or the
/// tick counter instead of a CPU counter ([`hwsurvey_machine::clocksource::kind`]): every clock
/// read then costs microseconds (a tick counter cannot time microseconds at all), and every
/// timed figure carries it. The usual cause is the kernel's watchdog marking the TSC unstable,
/// or `clocksource=` on the command line. With a result file, a clocksource the kernel changed
/// during the run warns too. A name hwsurvey does not know is reported, not judged.
pub fn clock_source(f: &Facts, _: &Params) -> Vec<Finding> {
    use hwsurvey_machine::clocksource::{kind, ClockKind};
    const ID: &str = "clock.source";
    const CURRENT: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
    const AVAILABLE: &str = "/sys/devices/system/clocksource/clocksource0/available_clocksource";
    let mut out = Vec::new();
    if let Probed::Known(r) = &f.result {
        for (from, to, after) in &r.clocksource_changes {
            out.push(
                Finding::new(
                    ID,
                    Verdict::Warn,
                    format!(
                        "the kernel changed the clocksource from {from} to {to} during the run \
                         (first read after {after}): figures timed before and after read \
                         different clocks"
                    ),
                )
                .with(
                    format!("{}: clocksource_changes", r.path),
                    format!("{from} -> {to}"),
                )
                .fix(
                    "find why the kernel left the first clocksource (dmesg: \"Marking \
                     clocksource ... as unstable\") and run again",
                ),
            );
        }
    }
    let c = need!(f.os.clocksource, ID);
    let available = match &c.available {
        Probed::Known(a) => a.join(" "),
        Probed::Unknown(u) => format!("unknown ({u})"),
    };
    let tsc = c
        .available
        .known()
        .is_some_and(|a| a.iter().any(|n| n == "tsc"));
    let what = match kind(&c.current) {
        ClockKind::CpuCounter => return out,
        ClockKind::DeviceRegister => {
            "every clock read is a device register access \
             (microseconds), so latencies and open-loop rates measure the clock too (2-vCPU \
             guest: critical rate 30 k/s with hpet, 1.4 M/s with the TSC)"
        }
        ClockKind::Tick => {
            "the tick counter: its resolution is 1-10 ms, so no latency of \
             microseconds can be timed with it"
        }
        ClockKind::Unknown => {
            out.push(
                Finding::new(
                    ID,
                    Verdict::Info,
                    format!(
                        "clocksource {}: not one hwsurvey knows as a CPU counter or a device \
                         register, so the cost of a clock read is not judged",
                        c.current
                    ),
                )
                .with(CURRENT, c.current.clone())
                .with(AVAILABLE, available),
            );
            return out;
        }
    };
    let finding = Finding::new(
        ID,
        Verdict::Warn,
        format!("clocksource {}: {what}", c.current),
    )
    .with(CURRENT, c.current.clone())
    .with(AVAILABLE, available);
    out.push(if tsc {
        finding.fix(
            "find why the kernel left the TSC (dmesg: \"Marking clocksource 'tsc' as unstable\", \
             or clocksource= in /proc/cmdline), then echo tsc > \
             /sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
    } else {
        finding.fix(
            "no CPU counter is available to the kernel: check tsc= and clocksource= in \
             /proc/cmdline, and the hypervisor's clock (kvm-clock, hyperv_clocksource_tsc_page)",
        )
    });
    out
}
