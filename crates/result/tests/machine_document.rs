//! The machine of a result file is typed ([`hwsurvey_machine::Machine`]): every result file
//! this repository ships loads into it, whatever the schema (1: the tagged machine document,
//! 2: the plain one), and is written back as the same data; a machine document written
//! before the probe read a value reads that value as unknown, with the reason its field's
//! default gives.

use std::path::{Path, PathBuf};

use hwsurvey_model::Probed;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `*.json` under `dir` whose `schema` is `hwsurvey-result`.
fn result_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            result_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            let text = std::fs::read_to_string(&p).unwrap();
            let is_result = serde_json::from_str::<serde_json::Value>(&text)
                .is_ok_and(|v| v["schema"] == hwsurvey_result::RESULT_SCHEMA);
            if is_result {
                out.push(p);
            }
        }
    }
}

#[test]
fn every_shipped_result_file_loads_its_machine_typed_and_writes_it_back() {
    let mut files = Vec::new();
    for dir in ["reports", "fleet"] {
        if repo().join(dir).is_dir() {
            result_files(&repo().join(dir), &mut files);
        }
    }
    files.sort();
    // reports/examples (3 + 3 of schema 1), reports/hardware (2), reports/fleet/examples (3)
    assert!(files.len() >= 11, "{files:?}");
    let tmp = tempfile::tempdir().unwrap();
    for (k, p) in files.iter().enumerate() {
        let f = hwsurvey_result::load(p).unwrap_or_else(|e| panic!("{e}"));
        let raw: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        // the typed machine holds the file's own values (MemTotal: tagged in schema 1,
        // plain in schema 2)
        assert_eq!(
            f.machine.cpu.identity.model_name.as_deref(),
            raw["machine"]["cpu"]["identity"]["model_name"].as_str(),
            "{}",
            p.display()
        );
        let mem_total = [
            "/machine/memory/meminfo/known/mem_total_bytes",
            "/machine/memory/meminfo/mem_total_bytes",
        ]
        .iter()
        .find_map(|ptr| raw.pointer(ptr).and_then(serde_json::Value::as_u64));
        assert_eq!(
            f.machine.memory.meminfo.known().map(|i| i.mem_total_bytes),
            mem_total,
            "{}",
            p.display()
        );
        // written as schema 2 and read back: the same machine, written the same once more
        // (the machine member alone: serde_json reads some floats of a test's details one
        // bit off, so a whole file written twice may differ in a last digit there)
        let out = tmp.path().join(format!("{k}.json"));
        f.write_atomic(&out).unwrap();
        let back = hwsurvey_result::load(&out).unwrap();
        assert_eq!(back.machine, f.machine, "{}", p.display());
        let again = tmp.path().join(format!("{k}-again.json"));
        back.write_atomic(&again).unwrap();
        let read = |p: &Path| -> serde_json::Value {
            serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
        };
        let (written, rewritten) = (read(&out), read(&again));
        assert_eq!(
            serde_json::to_string(&written["machine"]).unwrap(),
            serde_json::to_string(&rewritten["machine"]).unwrap(),
            "{}",
            p.display()
        );
        // the machine on disk is the machine document of schema 2
        assert_eq!(written["machine"], f.machine.document(), "{}", p.display());
    }
}

/// The x86_64 example of schema 1 was written before the probe read the platform, the
/// clocksource, the firmware, the TLBs and the nominal clock: they read as unknown, each with
/// its field's reason, and the values it does hold read as they are.
#[test]
fn values_an_older_machine_document_lacks_read_as_unknown() {
    let p = repo().join("reports/examples/v1/x86_64-standard.json");
    let raw: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    for absent in ["virtualization", "clocksource", "host_id"] {
        assert!(raw["machine"]["os"].get(absent).is_none(), "{absent}");
    }
    assert!(raw["machine"]["cpu"].get("tlb").is_none());
    assert!(raw["machine"].get("firmware").is_none());
    let f = hwsurvey_result::load(&p).unwrap();
    let m = &f.machine;
    let why = |p: Option<&hwsurvey_model::Unknown>| p.map(|u| u.to_string());
    assert_eq!(
        m.os.virtualization,
        hwsurvey_machine::os::virtualization_not_probed()
    );
    assert_eq!(
        why(m.os.virtualization.why_unknown()).as_deref(),
        Some("not probed by the hwsurvey that wrote this document")
    );
    assert_eq!(
        why(m.os.clocksource.why_unknown()).as_deref(),
        Some("not probed by the hwsurvey that wrote this document")
    );
    assert_eq!(
        why(m.firmware.why_unknown()).as_deref(),
        Some("not probed by the hwsurvey that wrote this document")
    );
    assert_eq!(
        why(m.cpu.tlb.why_unknown()).as_deref(),
        Some("not recorded (the document predates the TLB geometry)")
    );
    assert_eq!(
        why(m.cpu.nominal_clock.why_unknown()).as_deref(),
        Some("not recorded (the document predates the nominal clock)")
    );
    assert!(m.os.host_id.is_empty());
    // what the document holds, typed
    assert_eq!(m.cpu.identity.model_name.as_deref(), Some("AMD EPYC"));
    assert_eq!(
        m.cpu.online.known().map(|s| s.to_list_string()).as_deref(),
        Some("0-1")
    );
    assert_eq!(m.cpu.topology.cores, Probed::Known(2));
    assert_eq!(
        m.memory.meminfo.known().map(|i| i.mem_total_bytes),
        raw["machine"]["memory"]["meminfo"]["known"]["mem_total_bytes"].as_u64()
    );
    // written as schema 2, the reasons travel in the machine document's "unknown" map
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("v2.json");
    f.write_atomic(&out).unwrap();
    let written: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert!(written["machine"]["os"]["virtualization"].is_null());
    assert_eq!(
        written["machine"]["unknown"]["/os/virtualization"]["detail"],
        "not probed by the hwsurvey that wrote this document"
    );
    assert_eq!(hwsurvey_result::load(&out).unwrap().machine, f.machine);
}
