//! `hwsurvey qualify RESULT.json` gives one verdict a team can sign: none for an
//! emulated machine (one line why, exit 5), "incomplete" (exit 4), never "pass", when rules
//! could not be evaluated, a virtual machine's naming the rules it could not check; on the
//! example result files of reports/examples/.

use std::path::Path;

use assert_cmd::Command;

/// `qualify RESULT.json`: (exit code, terminal stdout, JSON report).
fn qualify_result(rel: &str) -> (Option<i32>, String, serde_json::Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    let run = |json: bool| {
        let mut c = Command::cargo_bin("hwsurvey").unwrap();
        c.arg("qualify").arg(&path);
        if json {
            c.arg("--json");
        }
        c.output().unwrap()
    };
    let text = run(false);
    let json = run(true);
    assert_eq!(text.status.code(), json.status.code());
    (
        text.status.code(),
        String::from_utf8_lossy(&text.stdout).into_owned(),
        serde_json::from_slice(&json.stdout).unwrap(),
    )
}

/// The x86 and arm64 TCG guests' results of reports/examples: no hardware verdict, one line
/// why, exit 5, whatever the findings (the TCG guest's pass and not-evaluated findings exited
/// 0 and never said it was emulated). --strict does not make it a verdict.
#[test]
fn an_emulated_result_gets_no_hardware_verdict() {
    for rel in [
        "reports/examples/guest-x86-2s4n-smt-standard.json",
        "reports/examples/guest-arm64-2n-clusters-standard.json",
    ] {
        let (code, text, v) = qualify_result(rel);
        assert_eq!(code, Some(5), "{rel}: {text}");
        let line = "verdict: none (emulated): full-system emulation: figures measure the \
                    emulator; no hardware verdict is given for an emulated machine (the \
                    findings describe what the emulator presents)";
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("verdict: "))
                .collect::<Vec<_>>(),
            [line],
            "{rel}: {text}"
        );
        assert_eq!(v["verdict"], "emulated", "{rel}");
        assert_eq!(v["verdict_line"], line, "{rel}");
        assert_eq!(
            v["platform"]["emulation"][0], "full-system emulation: figures measure the emulator",
            "{rel}"
        );
        let strict = Command::cargo_bin("hwsurvey")
            .unwrap()
            .args(["qualify", "--strict"])
            .arg(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../..")
                    .join(rel),
            )
            .output()
            .unwrap();
        assert_eq!(strict.status.code(), Some(5), "{rel}");
    }
}

/// The KVM VM's result of reports/examples: nothing warned or failed, but 11 rules about the
/// machine could not be evaluated in the VM (its memory population, PCIe links and hardware
/// watch among them): incomplete, exit 4, the rules named as what this virtual machine could
/// not check (it exited 0, a pass).
#[test]
fn a_virtual_machines_verdict_is_incomplete_and_names_what_it_could_not_check() {
    let (code, text, v) = qualify_result("reports/examples/vm-x86_64-standard.json");
    assert_eq!(code, Some(4), "{text}");
    let line = "verdict: incomplete, not a pass: this virtual machine (KVM) could not check 11 \
                rules: cpu.governor, memory.balance, memory.channels, memory.mixed, \
                memory.speed, memory.interleave, memory.triad_share, memory.edac, \
                io.pcie_link, io.pcie_uplink, watch.link; none warned or failed";
    assert!(text.contains(&format!("\n{line}\n")), "{text}");
    assert_eq!(v["verdict"], "incomplete");
    assert_eq!(v["not_evaluated"].as_array().unwrap().len(), 11);
    assert_eq!(v["platform"]["virtual_machine"], "virtual machine (KVM)");
}
