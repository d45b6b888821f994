//! arm64: emulation (QEMU TCG) or virtualisation (KVM, hvf)? QEMU's `virt` board and its
//! device tree look the same under both; these signals tell them apart:
//!
//! - **MIDR_EL1 implementer 0x00** ("reserved for software use", Arm ARM D23.2 MIDR_EL1):
//!   QEMU's `max` CPU under TCG (implementer 0, part 0x051 'Q'). No silicon uses it, and a KVM
//!   guest reads the host's MIDR. Source: `/sys/devices/system/cpu/cpu0/regs/identification/
//!   midr_el1`, else the `CPU implementer` / `CPU part` lines of `/proc/cpuinfo`.
//! - **The generic timer's frequency** (CNTFRQ_EL0, read live with `mrs`; EL0 may read it
//!   whenever the kernel lets EL0 read the virtual counter, as Linux does for its vDSO). QEMU
//!   TCG programs 62.5 MHz (a 16 ns tick, `GTIMER_SCALE`) for every CPU model before QEMU 9.0
//!   and for the older models since (1 GHz for `max` and the Armv8.6+ models from 9.0 on);
//!   a KVM guest reads the frequency the host's firmware programmed (25 MHz Ampere Altra,
//!   100 MHz Kunpeng 920, 24 MHz Apple silicon under hvf, 1 GHz on Armv8.6+ silicon, where
//!   FEAT_ECV mandates it). No file holds it: a snapshot keeps it in its live facts.
//!   62.5 MHz on a machine that otherwise shows QEMU is emulation; a frequency neither 62.5 MHz
//!   nor 1 GHz is one TCG never programs, so the guest is virtualised; 1 GHz decides nothing.
//! - **SMBIOS Type 1 product name** of the virt board (`/sys/class/dmi/id/product_name`, only
//!   when it boots through UEFI firmware): QEMU writes `KVM Virtual Machine` under KVM and
//!   `QEMU Virtual Machine` otherwise (TCG, or hvf/WHPX: not decisive on its own).
//!
//! Where none decides, the verdict is [`Platform::EmulationNotExcluded`]: the figures may
//! measure the emulator, and reports keep them out of wins and losses.

use super::{Platform, VirtInputs};
use crate::cpu::midr::Midr;

/// QEMU TCG's generic timer frequency before QEMU 9.0 (and for pre-Armv8.6 CPU models since),
/// Hz: one tick per 16 ns.
pub const TCG_TIMER_HZ: u64 = 62_500_000;

/// The generic timer frequency QEMU 9.0+ TCG gives `max` and Armv8.6+ models, and that
/// FEAT_ECV mandates on Armv8.6+ silicon, Hz.
pub const ONE_GHZ: u64 = 1_000_000_000;

/// The evidence source of the live generic timer frequency.
pub const CNTFRQ_SOURCE: &str = "CNTFRQ_EL0 (generic timer frequency, read live)";

/// What the arm64 signals decide, with the evidence (source, value) each gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Decision {
    /// `Some(Emulated)` (a signal proves TCG), `Some(VirtualMachine)` (a signal proves
    /// virtualisation), `Some(EmulationNotExcluded)` (a QEMU guest no signal decides), `None`:
    /// nothing to say (no QEMU seen, and no emulated MIDR).
    pub platform: Option<Platform>,
    /// The hypervisor's name for the verdict (`QEMU TCG`, `KVM`), if a signal names it.
    pub hypervisor: Option<&'static str>,
    /// (source, value) of each signal that spoke.
    pub evidence: Vec<(String, String)>,
}

/// Whether a MIDR's implementer is 0x00, reserved for software use (QEMU TCG's `max`).
fn software_midr(m: &Midr) -> bool {
    m.implementer == 0
}

/// A frequency in people's units: `62.5 MHz`, `1 GHz`, `25 MHz`.
pub fn format_hz(hz: u64) -> String {
    if hz >= ONE_GHZ && hz.is_multiple_of(1_000_000) {
        format!("{} GHz", hz as f64 / 1e9)
    } else {
        format!("{} MHz", hz as f64 / 1e6)
    }
}

/// Decides emulation against virtualisation from the arm64 signals of `inputs`. `qemu_seen`:
/// an earlier source showed a QEMU machine (the virt board's device tree, QEMU DMI strings),
/// `vm_seen`: any source showed a hypervisor.
pub(super) fn decide(inputs: &VirtInputs, qemu_seen: bool, vm_seen: bool) -> Decision {
    let mut d = Decision::default();
    if let Some(m) = inputs.midr.as_ref().filter(|m| software_midr(m)) {
        d.evidence.push((
            inputs.midr_source.clone().unwrap_or_else(|| "MIDR_EL1".into()),
            format!(
                "implementer 0x00 part 0x{:03x} (reserved for software use: QEMU's max CPU under TCG)",
                m.part
            ),
        ));
        d.platform = Some(Platform::Emulated);
        d.hypervisor = Some("QEMU TCG");
        return d;
    }
    if !vm_seen {
        return d;
    }
    let product = inputs.dmi_product_name.as_deref().unwrap_or("").trim();
    if product == "KVM Virtual Machine" {
        d.evidence.push((
            "/sys/class/dmi/id/product_name".into(),
            "KVM Virtual Machine (QEMU's virt board under KVM)".into(),
        ));
        d.platform = Some(Platform::VirtualMachine);
        d.hypervisor = Some("KVM");
        return d;
    }
    if let Some(hz) = inputs.timer_frequency_hz {
        let what = match hz {
            TCG_TIMER_HZ if qemu_seen => {
                d.platform = Some(Platform::Emulated);
                d.hypervisor = Some("QEMU TCG");
                "QEMU TCG's timer (16 ns tick); a KVM guest reads its host's"
            }
            ONE_GHZ => "QEMU TCG's for newer CPU models and Armv8.6+ silicon's: decides nothing",
            TCG_TIMER_HZ => "QEMU TCG's, but no other source shows QEMU",
            _ => {
                d.platform = Some(Platform::VirtualMachine);
                "the host's: QEMU TCG programs only 62.5 MHz or 1 GHz"
            }
        };
        d.evidence
            .push((CNTFRQ_SOURCE.into(), format!("{} ({what})", format_hz(hz))));
        if d.platform.is_some() {
            return d;
        }
    }
    if qemu_seen {
        if product == "QEMU Virtual Machine" {
            d.evidence.push((
                "/sys/class/dmi/id/product_name".into(),
                "QEMU Virtual Machine (not KVM: TCG, hvf or WHPX)".into(),
            ));
        }
        d.platform = Some(Platform::EmulationNotExcluded);
    }
    d
}

#[cfg(test)]
mod tests {
    use super::super::{classify, Platform, VirtInputs};
    use super::*;

    /// The inputs the guest `tests/guests/machines/arm64-2n-clusters.toml` gives (qemu 7.2
    /// `-M virt -cpu cortex-a57`, booted without firmware: no DMI), as its result file
    /// `reports/examples/guest-arm64-2n-clusters-standard.json` recorded them, with the timer
    /// `timer_hz`.
    fn virt_board(midr_raw: u64, timer_hz: Option<u64>) -> VirtInputs {
        VirtInputs {
            dt_compatible: Some("linux,dummy-virt\0".into()),
            midr: Some(Midr::from_raw(midr_raw)),
            midr_source: Some("/proc/cpuinfo CPU implementer, CPU part".into()),
            timer_frequency_hz: timer_hz,
            ..Default::default()
        }
    }

    const CORTEX_A57_R1P0: u64 = 0x411f_d070;

    #[test]
    fn tcg_timer_on_the_virt_board_is_emulation() {
        let v = classify(&virt_board(CORTEX_A57_R1P0, Some(TCG_TIMER_HZ)));
        assert_eq!(v.platform, Platform::Emulated, "{v:?}");
        assert_eq!(v.summary(), "full-system emulation (QEMU TCG)");
        let timer = v
            .evidence
            .iter()
            .find(|e| e.source == CNTFRQ_SOURCE)
            .unwrap();
        assert!(timer.value.starts_with("62.5 MHz (QEMU TCG's"), "{timer:?}");
    }

    #[test]
    fn virt_board_without_a_deciding_signal_does_not_exclude_emulation() {
        // no timer recorded (the arm64 example as its run of 2026-12-02 wrote it) or a 1 GHz
        // one, and a Cortex-A57 that KVM on an A57 host would show too
        for timer in [None, Some(ONE_GHZ)] {
            let v = classify(&virt_board(CORTEX_A57_R1P0, timer));
            assert_eq!(
                v.platform,
                Platform::EmulationNotExcluded,
                "{timer:?}: {v:?}"
            );
            assert_eq!(
                v.summary(),
                "virtual machine, emulation not excluded (QEMU virt board)"
            );
        }
    }

    #[test]
    fn a_host_timer_or_kvm_product_name_is_virtualisation() {
        // Neoverse N1 host at 25 MHz (Ampere Altra) under KVM
        let v = classify(&virt_board(0x413f_d0c1, Some(25_000_000)));
        assert_eq!(v.platform, Platform::VirtualMachine, "{v:?}");
        assert!(v.evidence.iter().any(|e| e.value.starts_with("25 MHz")));
        // booted through UEFI: QEMU's SMBIOS names KVM
        let v = classify(&VirtInputs {
            dmi_sys_vendor: Some("QEMU".into()),
            dmi_product_name: Some("KVM Virtual Machine".into()),
            ..virt_board(0x413f_d0c1, Some(ONE_GHZ))
        });
        assert_eq!(v.platform, Platform::VirtualMachine, "{v:?}");
        assert_eq!(v.summary(), "virtual machine (KVM, QEMU virt board)");
    }

    #[test]
    fn qemu_max_cpu_is_emulation_at_any_timer() {
        // QEMU's `max`: implementer 0x00, part 0x051
        let v = classify(&virt_board(0x000f_0510, Some(ONE_GHZ)));
        assert_eq!(v.platform, Platform::Emulated, "{v:?}");
        assert!(v
            .evidence
            .iter()
            .any(|e| e.value.contains("reserved for software use")));
    }

    #[test]
    fn tcg_timer_frequency_alone_is_not_emulation() {
        // no QEMU source, no hypervisor: a board whose firmware programmed 62.5 MHz
        let v = classify(&VirtInputs {
            dt_compatible: Some("hisilicon,hi1620\0".into()),
            midr: Some(Midr::from_raw(0x481f_d010)),
            timer_frequency_hz: Some(TCG_TIMER_HZ),
            ..Default::default()
        });
        assert_eq!(v.platform, Platform::NoHypervisorSeen, "{v:?}");
    }

    #[test]
    fn frequencies_in_people_units() {
        assert_eq!(format_hz(62_500_000), "62.5 MHz");
        assert_eq!(format_hz(1_000_000_000), "1 GHz");
        assert_eq!(format_hz(25_000_000), "25 MHz");
    }
}
