//! Hardware-error lines of the kernel log: which of the records read from `/dev/kmsg` (or
//! `dmesg` text) during a point speak of a machine check, a memory error, a PCIe error or
//! another hardware error, and what they name.
//!
//! Records (Documentation/ABI/testing/dev-kmsg) are `<prio>,<seq>,<usec>,<flags>;<text>`,
//! followed by continuation lines that start with a space (` SUBSYSTEM=pci`, dropped); `dmesg`
//! lines are `[<seconds>] <text>`. The formats read (arch/x86/kernel/cpu/mce/core.c,
//! drivers/edac/edac_mc.c, drivers/edac/mce_amd.c, drivers/pci/pcie/aer.c):
//!
//! - `mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 1: b200000000000000` (and
//!   `... Machine Check Exception: 5 Bank 4: ...` for an exception): the CPU, the bank and
//!   MCi_STATUS, whose bit 61 (UC) tells uncorrected from corrected and bit 57 (PCC) a fatal
//!   one (Intel SDM vol. 3B 16.3.2.2); `mce: [Hardware Error]: Machine check events logged`
//!   when `/dev/mcelog` or a decoder takes the record; `mce: Uncorrected hardware memory error
//!   ...`;
//! - AMD's decoder: `[Hardware Error]: CPU:0 (17:31:0) MC27_STATUS[Over|CE|...]: 0x...`;
//! - `EDAC MC0: 1 CE memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (...)`, `... UE ...`;
//! - `pcieport 0000:00:1c.0: AER: Corrected error received: 0000:01:00.0`,
//!   `AER: Uncorrected (Non-Fatal) error received: ...`, `AER: Uncorrected (Fatal) ...`,
//!   `AER: Correctable error message received from ...` (6.x), and the detail lines
//!   (`PCIe Bus Error: severity=Corrected, ...`).
//!
//! Any other line holding `[Hardware Error]`, `mce:`, `EDAC` (with CE, UE or "error") or
//! `AER:` is kept as an `other` hardware-error line.

use serde::{Deserialize, Serialize};

/// What a hardware-error line is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogKind {
    /// A machine check (`mce:`, AMD's `MCn_STATUS`): a CPU bank logged an error.
    MachineCheck,
    /// A memory error reported by an EDAC driver.
    Memory,
    /// A PCIe error reported by AER.
    Pcie,
    /// Another `[Hardware Error]` line.
    Other,
}

impl LogKind {
    /// In words: `machine check`, `memory error`, `PCIe error`, `hardware error`.
    pub fn words(self) -> &'static str {
        match self {
            LogKind::MachineCheck => "machine check",
            LogKind::Memory => "memory error",
            LogKind::Pcie => "PCIe error",
            LogKind::Other => "hardware error",
        }
    }
}

/// How bad a line says the error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogSeverity {
    /// The line does not say (a detail line, `Machine check events logged`).
    Unknown,
    /// Corrected (MCi_STATUS UC clear, EDAC CE, AER correctable).
    Corrected,
    /// Uncorrected (UC set, EDAC UE, AER non-fatal).
    Uncorrected,
    /// Uncorrected and fatal (PCC set, AER fatal).
    Fatal,
}

/// One hardware-error line of the kernel log, with what it names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEvent {
    /// What it is about.
    pub kind: LogKind,
    /// How bad.
    pub severity: LogSeverity,
    /// The CPU of a machine check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<u32>,
    /// The bank of a machine check (MCi).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank: Option<u32>,
    /// The PCI function an AER line names (the error's source where it says, else the
    /// reporting port): `0000:01:00.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The memory controller (`MC0`) and DIMM an EDAC line names, `MC0 CPU_SrcID#0_...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// The line's text (without the record header), at most [`MAX_TEXT_CHARS`] characters.
    pub text: String,
    /// `family id` of the point during which it was read; `None` between points, and in a
    /// point's own list (the point is its owner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
}

impl LogEvent {
    /// Whether this line is one event to count (not a detail line of another): a machine
    /// check's `CPU n ... Bank m` or `events logged` line, an EDAC CE/UE line, an AER
    /// `error received` line.
    pub fn is_event(&self) -> bool {
        match self.kind {
            LogKind::MachineCheck => {
                self.bank.is_some()
                    || self.text.contains("events logged")
                    || self.text.contains("hardware memory error")
            }
            LogKind::Memory => self.severity != LogSeverity::Unknown,
            LogKind::Pcie => self.text.contains("received"),
            LogKind::Other => false,
        }
    }

    /// What it names, for people: `CPU 0 bank 4`, `0000:01:00.0`, `MC0 ...`; `None` when
    /// the line names nothing.
    pub fn subject(&self) -> Option<String> {
        match (self.cpu, self.bank) {
            (Some(c), Some(b)) => return Some(format!("CPU {c} bank {b}")),
            (None, Some(b)) => return Some(format!("bank {b}")),
            _ => {}
        }
        self.device.clone().or_else(|| self.memory.clone())
    }
}

/// Longest text kept of one line, characters.
pub const MAX_TEXT_CHARS: usize = 240;

/// The text of a `/dev/kmsg` record or a `dmesg` line: the header (`6,312,276695,-;`,
/// `[    0.276695] `) removed; `None` for a continuation line (` SUBSYSTEM=...`) or an empty one.
pub fn record_text(line: &str) -> Option<&str> {
    if line.starts_with(' ') && line.trim_start().contains('=') {
        return None;
    }
    let line = line.trim_end_matches(['\n', '\r']);
    let text = match line.split_once(';') {
        Some((head, rest))
            if head.split(',').count() >= 4
                && head
                    .split(',')
                    .take(3)
                    .all(|f| f.chars().all(|c| c.is_ascii_digit())) =>
        {
            rest
        }
        _ => match line.trim_start().strip_prefix('[') {
            Some(r) => match r.split_once(']') {
                Some((ts, rest)) if ts.trim().chars().all(|c| c.is_ascii_digit() || c == '.') => {
                    rest.trim_start()
                }
                _ => line,
            },
            None => line,
        },
    };
    (!text.trim().is_empty()).then_some(text)
}

/// A decimal number right after `key` in `text` (`"Bank "` in `... Bank 4: ...`).
fn number_after(text: &str, key: &str) -> Option<u32> {
    let rest = &text[text.find(key)? + key.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The first PCI address (`0000:01:00.0`) in `text`, or after `key` when given.
fn pci_address(text: &str, key: Option<&str>) -> Option<String> {
    let from = match key {
        Some(k) => &text[text.find(k)? + k.len()..],
        None => text,
    };
    from.split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .map(|w| w.trim_end_matches(':'))
        .find(|w| crate::io::is_pci_address(w))
        .map(str::to_string)
}

/// Severity from MCi_STATUS: PCC (bit 57) fatal, UC (bit 61) uncorrected, else corrected.
fn mce_status_severity(status: u64) -> LogSeverity {
    if status & (1 << 57) != 0 {
        LogSeverity::Fatal
    } else if status & (1 << 61) != 0 {
        LogSeverity::Uncorrected
    } else {
        LogSeverity::Corrected
    }
}

/// The hardware-error event of one record's text ([`record_text`]), or `None` for any other
/// line.
pub fn classify(text: &str) -> Option<LogEvent> {
    let text = text.trim();
    let event = |kind, severity| LogEvent {
        kind,
        severity,
        cpu: None,
        bank: None,
        device: None,
        memory: None,
        text: text.chars().take(MAX_TEXT_CHARS).collect(),
        point: None,
    };
    if text.contains("mce:") || text.contains("Machine Check") || text.contains("_STATUS[") {
        let mut e = event(LogKind::MachineCheck, LogSeverity::Unknown);
        if let Some(pos) = text.find("Machine Check") {
            e.cpu = number_after(&text[..pos], "CPU ");
            e.bank = number_after(text, "Bank ");
            let status = text
                .rsplit(": ")
                .next()
                .and_then(|s| u64::from_str_radix(s.trim(), 16).ok());
            if let (Some(s), Some(_)) = (status, e.bank) {
                e.severity = mce_status_severity(s);
            }
        } else if let Some(pos) = text.find("_STATUS[") {
            // AMD: CPU:0 (17:31:0) MC27_STATUS[Over|CE|MiscV|...]: 0x...
            e.cpu = number_after(text, "CPU:");
            let mc = text[..pos]
                .rsplit(|c: char| !c.is_ascii_alphanumeric())
                .next();
            e.bank = mc
                .and_then(|w| w.strip_prefix("MC"))
                .and_then(|n| n.parse().ok());
            let flags = &text[pos..];
            e.severity = if flags.contains("|PCC") || flags.contains("[PCC") {
                LogSeverity::Fatal
            } else if flags.contains("|UE|") || flags.contains("[UE|") {
                LogSeverity::Uncorrected
            } else if flags.contains("|CE|") || flags.contains("[CE|") {
                LogSeverity::Corrected
            } else {
                LogSeverity::Unknown
            };
        } else if text.contains("Uncorrected hardware memory error") {
            e.severity = LogSeverity::Uncorrected;
        } else if !text.contains("[Hardware Error]") && !text.contains("Machine check") {
            // `mce:` lines about set-up (CMCI storm, thermal monitoring) are no error
            return None;
        }
        return Some(e);
    }
    if let Some(pos) = text.find("EDAC ") {
        let rest = &text[pos..];
        let ce = rest.contains(" CE ") || rest.contains("Corrected");
        let ue = rest.contains(" UE ") || rest.contains("Uncorrected");
        if !(ce || ue || rest.to_ascii_lowercase().contains("error")) {
            return None;
        }
        let mut e = event(
            LogKind::Memory,
            if ue {
                LogSeverity::Uncorrected
            } else if ce {
                LogSeverity::Corrected
            } else {
                LogSeverity::Unknown
            },
        );
        let mc = rest
            .split_whitespace()
            .nth(1)
            .map(|w| w.trim_end_matches(':'))
            .filter(|w| w.starts_with("MC"));
        let dimm = rest
            .find(" on ")
            .map(|p| &rest[p + 4..])
            .map(|s| s.split(" (").next().unwrap_or(s).trim());
        e.memory = match (mc, dimm) {
            (Some(m), Some(d)) => Some(format!("{m} {d}")),
            (Some(m), None) => Some(m.to_string()),
            (None, Some(d)) => Some(d.to_string()),
            (None, None) => None,
        };
        return Some(e);
    }
    if text.contains("AER:") || text.contains("PCIe Bus Error") {
        let lower = text.to_ascii_lowercase();
        if !lower.contains("error") {
            // `AER: enabled with IRQ 24`: set-up, no error
            return None;
        }
        let severity = if lower.contains("fatal") && !lower.contains("non-fatal") {
            LogSeverity::Fatal
        } else if lower.contains("uncorrect") || lower.contains("non-fatal") {
            LogSeverity::Uncorrected
        } else if lower.contains("correct") {
            LogSeverity::Corrected
        } else {
            LogSeverity::Unknown
        };
        let mut e = event(LogKind::Pcie, severity);
        e.device = pci_address(text, Some("received: "))
            .or_else(|| pci_address(text, Some("received from ")))
            .or_else(|| pci_address(text, None));
        return Some(e);
    }
    if text.contains("[Hardware Error]") {
        return Some(event(LogKind::Other, LogSeverity::Unknown));
    }
    None
}

/// The hardware-error events of kernel log text (records or `dmesg` lines), in order.
pub fn events(text: &str) -> Vec<LogEvent> {
    text.lines()
        .filter_map(record_text)
        .filter_map(classify)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_checks_name_the_cpu_and_bank_and_decode_the_status() {
        let e = events(
            "2,1205,98765432,-;mce: [Hardware Error]: CPU 1: Machine Check: 0 Bank 4: \
             bd000000000000c0\n\
             2,1206,98765433,-;mce: [Hardware Error]: TSC 0 ADDR 1234 MISC 8c\n\
             4,1207,98765434,-;mce: [Hardware Error]: Machine check events logged\n\
             6,1208,98765435,-;random: crng init done\n\
              SUBSYSTEM=cpu\n",
        );
        assert_eq!(e.len(), 3);
        assert_eq!((e[0].cpu, e[0].bank), (Some(1), Some(4)));
        assert_eq!(e[0].severity, LogSeverity::Uncorrected);
        assert!(e[0].is_event());
        assert_eq!(e[0].subject().as_deref(), Some("CPU 1 bank 4"));
        assert!(!e[1].is_event());
        assert!(e[2].is_event());
        // corrected: UC clear; fatal: PCC set
        let c = classify("mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 1: 9000000000000000")
            .unwrap();
        assert_eq!(c.severity, LogSeverity::Corrected);
        let f = classify(
            "[  12.5] mce: [Hardware Error]: CPU 3: Machine Check Exception: 5 Bank 0: \
             b200000000000000",
        )
        .unwrap();
        assert_eq!((f.cpu, f.bank), (Some(3), Some(0)));
        let p = classify("mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 2: fa00000000000000")
            .unwrap();
        assert_eq!(p.severity, LogSeverity::Fatal);
        // AMD's decoder
        let a = classify(
            "[Hardware Error]: CPU:0 (17:31:0) MC27_STATUS[Over|CE|MiscV|AddrV|-|-|SyndV|CECC|-|-|-]: 0xdc2040000000011b",
        )
        .unwrap();
        assert_eq!(
            (a.cpu, a.bank, a.severity),
            (Some(0), Some(27), LogSeverity::Corrected)
        );
        // set-up lines are no error
        assert!(classify("mce: CPU0: Thermal monitoring enabled (TM1)").is_none());
    }

    #[test]
    fn edac_and_aer_lines_name_the_dimm_and_device() {
        let m = classify(
            "EDAC MC0: 1 CE memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x1234)",
        )
        .unwrap();
        assert_eq!(m.kind, LogKind::Memory);
        assert_eq!(m.severity, LogSeverity::Corrected);
        assert_eq!(
            m.memory.as_deref(),
            Some("MC0 CPU_SrcID#0_MC#0_Chan#1_DIMM#0")
        );
        let u = classify("EDAC MC1: 1 UE on N1 DIMM_I0 (node:1 card:0 module:0 page:0x0)").unwrap();
        assert_eq!(u.severity, LogSeverity::Uncorrected);
        assert_eq!(u.memory.as_deref(), Some("MC1 N1 DIMM_I0"));
        assert!(classify(
            "EDAC MC0: Giving out device to module ie31200_edac controller IE31200: DEV 0000:00:00.0 (INTERRUPT)"
        )
        .is_none());
        let r =
            classify("pcieport 0000:00:1c.0: AER: Corrected error received: 0000:01:00.0").unwrap();
        assert_eq!(
            (r.kind, r.severity),
            (LogKind::Pcie, LogSeverity::Corrected)
        );
        assert_eq!(r.device.as_deref(), Some("0000:01:00.0"));
        assert!(r.is_event());
        let n = classify(
            "pcieport 0000:00:1c.0: AER: Uncorrected (Non-Fatal) error received: 0000:00:1c.0",
        )
        .unwrap();
        assert_eq!(n.severity, LogSeverity::Uncorrected);
        let f = classify(
            "pcieport 0000:00:01.0: AER: Uncorrectable (Fatal) error message received from 0000:02:00.0",
        )
        .unwrap();
        assert_eq!(
            (f.severity, f.device.as_deref()),
            (LogSeverity::Fatal, Some("0000:02:00.0"))
        );
        let d = classify(
            "pcieport 0000:00:1c.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
        )
        .unwrap();
        assert_eq!(d.device.as_deref(), Some("0000:00:1c.0"));
        assert!(!d.is_event());
    }
}
