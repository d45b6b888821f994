use super::*;

fn unit(dimm: &str, slot: Option<&str>, label: &str) -> EdacUnit {
    EdacUnit {
        slot: DimmSlot {
            dimm: dimm.into(),
            label: Some(label.into()),
            location: None,
            slot: slot.map(str::to_string),
            slot_note: String::new(),
        },
        ce_path: format!("/sys/devices/system/edac/mc/{dimm}/dimm_ce_count"),
        ue_path: Some(format!("/sys/devices/system/edac/mc/{dimm}/dimm_ue_count")),
    }
}

fn stats(total: u64) -> Result<AerStats, String> {
    Ok(AerStats {
        kinds: vec![("RxErr".into(), total)],
        total,
    })
}

fn plan() -> WatchPlan {
    WatchPlan {
        edac: vec![
            unit("mc0/dimm0", Some("DIMM_A0"), "N0 DIMM_A0"),
            unit("mc0/dimm1", None, "CPU_SrcID#0_MC#0_Chan#1_DIMM#0"),
        ],
        aer: vec![AerFunction {
            device: "0000:00:01.0".into(),
            name: Some("PCI bridge".into()),
            dir: "/sys/bus/pci/devices/0000:00:01.0".into(),
            files: AerSeverity::ALL.to_vec(),
        }],
        links: vec![LinkWatch {
            device: "0000:00:01.0".into(),
            name: None,
            dir: "/sys/bus/pci/devices/0000:00:01.0".into(),
            max: Some(LinkState {
                speed_mt_per_s: 8000,
                width: 8,
            }),
        }],
        throttle: vec![ThrottleCounter {
            kind: ThrottleKind::Package,
            cpu: 0,
            package: Some(0),
            path: "/sys/devices/system/cpu/cpu0/thermal_throttle/package_throttle_count".into(),
        }],
        cpufreq: vec![],
        sources: vec![],
    }
}

fn reading(
    ce0: u64,
    ue0: u64,
    ce1: Result<u64, String>,
    cor: u64,
    nf: u64,
    link: LinkState,
    thr: u64,
) -> WatchReading {
    WatchReading {
        edac: vec![(Ok(ce0), Some(Ok(ue0))), (ce1, Some(Ok(0)))],
        aer: vec![vec![stats(cor), stats(nf), stats(0)]],
        links: vec![Ok(link)],
        throttle: vec![Ok(thr)],
    }
}

const G3X8: LinkState = LinkState {
    speed_mt_per_s: 8000,
    width: 8,
};
const G1X8: LinkState = LinkState {
    speed_mt_per_s: 2500,
    width: 8,
};

#[test]
fn only_what_moved_is_kept_and_named() {
    let p = plan();
    let before = reading(5, 0, Ok(1), 2, 0, G3X8, 10);
    let after = reading(2319, 1, Ok(1), 3, 1, G1X8, 13);
    let d = delta(&p, &before, &after, 1.5, vec![], MAX_POINT_LOG_EVENTS);
    assert_eq!(d.seconds, 1.5);
    assert_eq!(
        d.edac,
        [EdacDelta {
            dimm: "mc0/dimm0".into(),
            slot: Some("DIMM_A0".into()),
            label: Some("N0 DIMM_A0".into()),
            corrected: 2314,
            uncorrected: 1,
        }]
    );
    assert_eq!(
        (d.aer[0].correctable, d.aer[0].nonfatal, d.aer[0].fatal),
        (1, 1, 0)
    );
    assert_eq!(d.aer[0].kinds, ["RxErr +1", "RxErr +1"]);
    assert_eq!(d.links[0].before, "8 GT/s x8");
    assert_eq!(d.links[0].after, "2.5 GT/s x8");
    assert!(d.links[0].below_max);
    assert_eq!(d.throttle[0].events, 3);
    assert_eq!(d.throttle[0].words(), "package 0 (CPU 0): 3 events");
    assert_eq!(d.marks(), [THROTTLED_MARK, ERRORS_MARK, LINK_MARK]);
    assert_eq!(
        d.failures(),
        [
            "1 uncorrected memory error on DIMM_A0 (mc0/dimm0)",
            "1 uncorrectable non-fatal AER error on 0000:00:01.0 (PCI bridge)",
        ]
    );
    assert_eq!(
        d.corrected(),
        [
            ("DIMM_A0 (mc0/dimm0)".to_string(), 2314),
            ("0000:00:01.0 (PCI bridge)".to_string(), 1)
        ]
    );
    assert!(d.problems.is_empty(), "{:?}", d.problems);
}

#[test]
fn unreadable_and_reset_counters_are_problems_never_zero_errors() {
    let p = plan();
    let before = reading(
        9,
        0,
        Err("/sys/.../mc0/dimm1/dimm_ce_count: permission denied".into()),
        0,
        0,
        G3X8,
        10,
    );
    let after = reading(3, 0, Ok(4), 0, 0, G3X8, 10);
    let d = delta(&p, &before, &after, 1.0, vec![], MAX_POINT_LOG_EVENTS);
    assert!(d.edac.is_empty());
    assert_eq!(
        d.problems,
        [
            "/sys/.../mc0/dimm1/dimm_ce_count: permission denied",
            "/sys/devices/system/edac/mc/mc0/dimm0/dimm_ce_count: went from 9 to 3 (counters reset, or the driver reloaded)",
        ]
    );
    assert!(d.marks().is_empty());
}

#[test]
fn machine_checks_fail_and_log_lines_are_bounded() {
    let p = plan();
    let r = reading(0, 0, Ok(0), 0, 0, G3X8, 0);
    let mut log: Vec<LogEvent> = kmsg::events(
        "mce: [Hardware Error]: Machine check events logged\n\
         mce: [Hardware Error]: CPU 1: Machine Check: 0 Bank 4: 9000000000000000\n\
         pcieport 0000:00:01.0: AER: Corrected error received: 0000:00:01.0\n",
    );
    for _ in 0..40 {
        log.push(kmsg::classify("mce: [Hardware Error]: TSC 0").unwrap());
    }
    let d = delta(&p, &r, &r, 1.0, log, MAX_POINT_LOG_EVENTS);
    assert_eq!(d.kernel_log.len(), MAX_POINT_LOG_EVENTS);
    assert_eq!(d.kernel_log_more, 11);
    assert!(d.has_errors());
    // a machine check fails the run whatever its status says, once (the `events logged` line
    // says it again)
    assert_eq!(
        d.failures(),
        ["machine check on CPU 1 bank 4 (corrected): mce: [Hardware Error]: CPU 1: Machine Check: 0 Bank 4: 9000000000000000"]
    );
    // a corrected AER line of a device whose counters did not move counts once
    assert_eq!(d.corrected(), [("0000:00:01.0".to_string(), 1)]);
}

#[test]
fn clock_drop_needs_two_reliable_readings_on_one_cpu() {
    let r = |cpu, hz, reliable| ClockReading {
        cpu,
        clock_hz: hz,
        seconds: 1.0,
        method: "asm_add_chain_x86_64".into(),
        reliable,
    };
    let mut c = ClockWatch {
        start: Some(r(0, 3.0e9, true)),
        end: Some(r(0, 2.7e9, true)),
        problems: vec![],
        not_a_clock: None,
    };
    assert!((c.drop_pct().unwrap() - 10.0).abs() < 1e-9);
    c.not_a_clock = Some("full-system emulation (QEMU TCG)".into());
    assert_eq!(c.drop_pct(), None);
    c.not_a_clock = None;
    c.end = Some(r(1, 2.7e9, true));
    assert_eq!(c.drop_pct(), None);
    c.end = Some(r(0, 2.7e9, false));
    assert_eq!(c.drop_pct(), None);
}
