//! A host whose machine document cannot be read fails alone, with the field's path.

use hwsurvey_fleet::{analyse, collect, load_all, Options};
use hwsurvey_testkit::fleet_sample::{example, with_host};

/// A machine document with a value of the wrong type fails its host with the field's path (a
/// new user's `mem_total_bytes: null` got serde's message alone).
#[test]
fn a_machine_document_of_the_wrong_shape_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let base = example("x86_64-standard.json");
    for host in ["a", "b", "c"] {
        let p = dir.path().join(host).join("result.json");
        with_host(base.clone(), host).write_atomic(&p).unwrap();
        if host == "c" {
            // as on disk (result schema 2, the plain machine document), without a reason
            let mut doc: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
            doc["machine"]["memory"]["meminfo"]["mem_total_bytes"] = serde_json::Value::Null;
            std::fs::write(&p, serde_json::to_vec(&doc).unwrap()).unwrap();
        }
    }
    let f = analyse(
        load_all(collect(&[dir.path().to_path_buf()], &[]).unwrap().sources),
        &Options::default(),
    );
    let c = f.hosts.iter().find(|h| h.name == "c").unwrap();
    let why = c.failures.join("; ");
    assert!(
        why.contains("machine document at memory.meminfo") && why.contains("null"),
        "{why}"
    );
}
