//! The verdict of a whole [`Report`]: what a team signs, and the exit status it gives.
//!
//! "pass" means every rule about the machine was evaluated and none warned or failed. A rule
//! that could not be evaluated (its input unknown: no DMI in a virtual machine, no EDAC driver)
//! makes the verdict "incomplete", never "pass", and the verdict names those rules (on a
//! virtual machine: the rules it could not check there). An emulated machine (QEMU TCG, a
//! virtual machine whose probe could not exclude emulation, a result measured by a binary under
//! qemu-user: [`hwsurvey_result::provenance::emulation`]) gets no hardware verdict at all,
//! with one line why: its CPUs, memory and figures are the emulator's. Preconditions of the
//! profile ([`crate::RuleKind::Precondition`]) never decide it.

use serde::{Deserialize, Serialize};

use crate::{Report, Verdict};

/// Exit status of a pass: every rule about the machine evaluated, none warned or failed.
pub const EXIT_PASS: u8 = 0;
/// Exit status of a warning (no failure).
pub const EXIT_WARN: u8 = 1;
/// Exit status of a failure (with `--strict`: of a warning or an incomplete verdict too).
pub const EXIT_FAIL: u8 = 2;
/// Exit status of an incomplete verdict: nothing warned or failed, but rules about the machine
/// could not be evaluated.
pub const EXIT_INCOMPLETE: u8 = 4;
/// Exit status of an emulated machine: no hardware verdict is given.
pub const EXIT_EMULATED: u8 = 5;

/// What the qualified machine runs on, as far as a verdict is concerned. Source: the probe's
/// `os.virtualization` (and, for a result file, `os.binary_vs_kernel`), read through
/// [`hwsurvey_result::provenance`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Platform {
    /// `virtual machine (KVM)`, `logical partition (pHyp)`; `None` on a machine with no
    /// hypervisor seen, an emulated one, or where the probe could not tell.
    #[serde(default)]
    pub virtual_machine: Option<String>,
    /// Why the machine's facts and figures are an emulator's, one line each
    /// (`full-system emulation: figures measure the emulator`); empty when not emulated.
    #[serde(default)]
    pub emulation: Vec<String>,
}

impl Platform {
    /// The platform of a probed machine (live or a snapshot): its `os.virtualization`. The
    /// binary running the probe is not the machine: under qemu-user, `binary.arch` fails
    /// instead.
    pub fn of_machine(m: &hwsurvey_machine::Machine) -> Platform {
        let Some(virt) = m.os.virtualization.known() else {
            return Platform::default();
        };
        Platform {
            virtual_machine: hwsurvey_result::provenance::platform_virtual_machine(virt),
            emulation: hwsurvey_result::provenance::platform_emulation(virt)
                .map(str::to_string)
                .into_iter()
                .collect(),
        }
    }

    /// The platform a result file's run measured: its machine's `os.virtualization` and
    /// whether the binary ran under qemu-user ([`hwsurvey_result::provenance::emulation`]).
    pub fn of_result(f: &hwsurvey_result::ResultFile) -> Platform {
        Platform {
            virtual_machine: hwsurvey_result::provenance::virtual_machine(f),
            emulation: hwsurvey_result::provenance::emulation(f),
        }
    }
}

/// The verdict of a whole report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overall {
    /// Every rule about the machine evaluated; none warned or failed.
    Pass,
    /// Nothing warned or failed, but rules about the machine were not evaluated.
    Incomplete,
    /// A rule warned, none failed.
    Warn,
    /// A rule failed.
    Fail,
    /// An emulated machine: no hardware verdict.
    Emulated,
}

impl Overall {
    /// `pass`, `incomplete`, `warn`, `fail`, `emulated`.
    pub fn word(self) -> &'static str {
        match self {
            Overall::Pass => "pass",
            Overall::Incomplete => "incomplete",
            Overall::Warn => "warn",
            Overall::Fail => "fail",
            Overall::Emulated => "emulated",
        }
    }

    /// The exit status: [`EXIT_PASS`], [`EXIT_WARN`], [`EXIT_FAIL`], [`EXIT_INCOMPLETE`],
    /// [`EXIT_EMULATED`]. With `strict` a warning and an incomplete verdict are failures: only
    /// a pass exits 0 (an emulated machine still exits [`EXIT_EMULATED`]: it has no verdict
    /// to be strict about).
    pub fn exit_code(self, strict: bool) -> u8 {
        match (self, strict) {
            (Overall::Pass, _) => EXIT_PASS,
            (Overall::Emulated, _) => EXIT_EMULATED,
            (Overall::Fail, _) | (Overall::Warn | Overall::Incomplete, true) => EXIT_FAIL,
            (Overall::Warn, false) => EXIT_WARN,
            (Overall::Incomplete, false) => EXIT_INCOMPLETE,
        }
    }
}

impl Report {
    /// The verdict ([`Overall`]): emulated when [`Report::platform`] says so, else the worst
    /// finding about the machine; incomplete, never pass, when a rule about the machine was
    /// not evaluated.
    pub fn overall(&self) -> Overall {
        if !self.platform.emulation.is_empty() {
            return Overall::Emulated;
        }
        if self.count(Verdict::Fail) > 0 {
            Overall::Fail
        } else if self.count(Verdict::Warn) > 0 {
            Overall::Warn
        } else if self.count(Verdict::NotEvaluated) > 0 {
            Overall::Incomplete
        } else {
            Overall::Pass
        }
    }

    /// Ids of the rules about the machine that were not evaluated, in report order, each once.
    pub fn not_evaluated(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = Vec::new();
        for f in self.machine_findings() {
            if f.verdict == Verdict::NotEvaluated && !ids.contains(&f.rule.as_str()) {
                ids.push(&f.rule);
            }
        }
        ids
    }

    /// The verdict in one line, beginning `verdict: `: why an emulated machine has none; what a
    /// pass means; the rules not evaluated (on a virtual machine, the rules it could not
    /// check there), named.
    pub fn verdict_line(&self) -> String {
        let missing = self.not_evaluated();
        let unchecked = if missing.is_empty() {
            String::new()
        } else {
            let rules = hwsurvey_model::units::plural(missing.len() as u64, "rule");
            let place = match &self.platform.virtual_machine {
                Some(vm) => format!("this {vm} could not check {rules}"),
                None => format!("{rules} not evaluated"),
            };
            format!("{place}: {}", missing.join(", "))
        };
        let overall = self.overall();
        match overall {
            Overall::Emulated => format!(
                "verdict: none (emulated): {}; no hardware verdict is given for an emulated \
                 machine (the findings describe what the emulator presents)",
                self.platform.emulation.join("; ")
            ),
            Overall::Pass => {
                "verdict: pass: every rule about the machine was evaluated; none warned or failed"
                    .to_string()
            }
            Overall::Incomplete => {
                format!("verdict: incomplete, not a pass: {unchecked}; none warned or failed")
            }
            Overall::Warn | Overall::Fail => {
                let mut parts = Vec::new();
                for (verdict, what) in [(Verdict::Fail, "failure"), (Verdict::Warn, "warning")] {
                    let n = self.count(verdict);
                    if n > 0 {
                        parts.push(hwsurvey_model::units::plural(n as u64, what));
                    }
                }
                if !unchecked.is_empty() {
                    parts.push(unchecked);
                }
                format!("verdict: {}: {}", overall.word(), parts.join("; "))
            }
        }
    }
}
