//! Result files of schema version 2: plain values with `null` for unknown, as `hwsurvey probe
//! --json` prints them, and the reader that turns them back into the tagged form the rest of
//! hwsurvey holds in memory (`{"known": v}` / `{"unknown": reason}`, version 1's form); the
//! machine document is read by [`hwsurvey_machine::Machine::from_document`] as the typed
//! file is built.
//!
//! Version 2 on disk:
//! - `machine` is a whole machine document of its own ([`hwsurvey_machine::Machine::document`]:
//!   its own `schema_version` 2 and its own `"unknown"` map);
//! - `environment`, `load_before` and `load_after` hold plain values, and their reasons are
//!   in the file's top-level `"unknown"` map, keyed by JSON Pointer from the top of the file
//!   (`"/environment/cgroup_memory_limit_bytes"`).
//!
//! Everything else (plan, tests, skips) has no probed values and is the same in both versions.

use hwsurvey_model::probed::{from_plain, to_plain_at, UNKNOWN_MAP};
use serde_json::Value;

/// The top-level members of a result file that hold probed values, besides `machine`.
const PROBED_MEMBERS: [&str; 3] = ["environment", "load_before", "load_after"];

/// The version 2 form of a result file serialized in memory (tagged, see the module docs).
pub(crate) fn to_file_form(mut file: Value) -> Value {
    let Some(top) = file.as_object_mut() else {
        return file;
    };
    top.insert("schema_version".into(), crate::RESULT_SCHEMA_VERSION.into());
    if let Some(m) = top.get("machine") {
        let doc = hwsurvey_machine::Machine::document_of(m);
        top.insert("machine".into(), doc);
    }
    let mut reasons = serde_json::Map::new();
    for key in PROBED_MEMBERS {
        if let Some(v) = top.get(key) {
            let plain = to_plain_at(v, &format!("/{key}"), &mut reasons);
            top.insert(key.into(), plain);
        }
    }
    top.insert(UNKNOWN_MAP.into(), Value::Object(reasons));
    file
}

/// The in-memory (tagged) form of a version 2 result file's JSON, but for `machine`: the
/// reasons of the top-level map put back in place. Plain known values of `environment` and
/// the load snapshots stay plain; their typed fields read them as known. The machine document
/// stays as it is on disk (plain, with its own `"unknown"` map): [`crate::ResultFile`]'s
/// `machine` field decodes it straight into [`hwsurvey_machine::Machine`] through
/// [`hwsurvey_machine::Machine::from_document`].
///
/// # Errors
/// One line naming the `unknown` map and what is wrong.
pub(crate) fn from_file_form(file: Value) -> Result<Value, String> {
    from_plain(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version 1 file (the x86_64 example, a real run) written again is a version 2 file:
    /// plain values in the machine document and the environment, and it loads back into the
    /// same data.
    #[test]
    fn version_1_example_written_as_version_2_loads_back_the_same() {
        let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../reports/examples/v1/x86_64-standard.json");
        let v1 = crate::load(&example).unwrap();
        assert_eq!(v1.schema_version, 1);
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("v2.json");
        v1.write_atomic(&path).unwrap();
        let raw: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(raw["schema_version"], 2);
        assert_eq!(raw["machine"]["schema_version"], 2);
        assert!(raw["machine"]["cpu"]["online"].is_string());
        assert!(raw["environment"]["hostname"].is_string());
        assert!(raw["machine"]["unknown"]
            .as_object()
            .is_some_and(|m| !m.is_empty()));
        let v2 = crate::load(&path).unwrap();
        assert_eq!(v2.schema_version, 2);
        assert_eq!(v2.environment, v1.environment);
        assert_eq!(v2.tests, v1.tests);
        assert_eq!(v2.load_before, v1.load_before);
        // the machine reads back as the typed machine of the v1 document, and is written as
        // the machine document of schema 2
        assert_eq!(v2.machine, v1.machine);
        assert_eq!(v1.machine.schema_version, 2);
        assert_eq!(raw["machine"], v1.machine.document());
        // a value of the wrong type is named by its path in the file, with serde's message
        let mut bad = raw.clone();
        bad["environment"]["hostname"] = serde_json::json!(5);
        let e = crate::parse("bad.json", &serde_json::to_vec(&bad).unwrap()).unwrap_err();
        assert!(
            e.to_string()
                .contains("at environment.hostname: invalid type: integer `5`, expected a string"),
            "{e}"
        );
        // a reason that names no null is an error naming the member and the pointer
        let mut bad = raw.clone();
        bad["machine"]["unknown"]["/cpu/online"] =
            serde_json::json!({"reason": "other", "detail": "x"});
        let e = crate::parse("bad.json", &serde_json::to_vec(&bad).unwrap()).unwrap_err();
        assert!(
            e.to_string()
                .contains("machine: \"unknown\" names \"/cpu/online\", which holds a value"),
            "{e}"
        );
    }

    #[test]
    fn environment_reasons_go_to_the_top_map_and_back() {
        let file = serde_json::json!({
            "schema": "hwsurvey-result",
            "environment": {"cgroup_memory_limit_bytes": {"unknown": {"reason": "missing", "path": "/sys/fs/cgroup/memory.max"}},
                            "thp": {"known": "always"}},
            "load_before": {"load1": {"known": 0.5}},
            "tests": [{"details": {"known": 3}}],
        });
        let plain = to_file_form(file.clone());
        assert!(plain["environment"]["cgroup_memory_limit_bytes"].is_null());
        assert_eq!(plain["environment"]["thp"], "always");
        assert_eq!(plain["load_before"]["load1"], 0.5);
        assert_eq!(
            plain["unknown"]["/environment/cgroup_memory_limit_bytes"]["path"],
            "/sys/fs/cgroup/memory.max"
        );
        // members without probed values are left as they are
        assert_eq!(plain["tests"], file["tests"]);
        let back = from_file_form(plain).unwrap();
        assert_eq!(
            back["environment"]["cgroup_memory_limit_bytes"],
            file["environment"]["cgroup_memory_limit_bytes"]
        );
        assert!(back.get("unknown").is_none());
    }
}
