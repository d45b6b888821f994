//! `targets/e2k-unknown-linux-gnu.json` is checked against the target-spec JSON schema that the
//! pinned Debian rustc prints (`RUSTC_BOOTSTRAP=1 /usr/bin/rustc -Z unstable-options
//! --print target-spec-json-schema`). Upstream rustc cannot load the file itself (it has no
//! E2K backend and crashes creating the LLVM target machine), so the schema is the check.
//!
//! The schema uses a small part of JSON Schema 2020-12 (type, enum, const, anyOf, oneOf, $ref,
//! properties, required, additionalProperties, items, prefixItems, min/maxItems,
//! minimum/maximum, format uintN); the validator below implements exactly that part and
//! fails on any other keyword it meets, so it cannot pass by ignoring a rule.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value};

const RUSTC: &str = "/usr/bin/rustc";

fn schema_from_rustc() -> Option<Value> {
    if !Path::new(RUSTC).exists() {
        println!(
            "SKIPPED: {RUSTC} (Debian rustc-web) is absent, so the target-spec JSON schema \
             cannot be printed; install rustc-web (scripts/test does) to run this check"
        );
        return None;
    }
    let out = Command::new(RUSTC)
        .args([
            "-Z",
            "unstable-options",
            "--print",
            "target-spec-json-schema",
        ])
        .env("RUSTC_BOOTSTRAP", "1")
        .env("RUSTC_ICE", "0")
        .output()
        .expect("run /usr/bin/rustc");
    assert!(
        out.status.success(),
        "{RUSTC} --print target-spec-json-schema failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("schema is JSON"))
}

struct Validator<'a> {
    root: &'a Value,
}

impl Validator<'_> {
    fn resolve<'s>(&'s self, reference: &str) -> &'s Value {
        let name = reference
            .strip_prefix("#/$defs/")
            .unwrap_or_else(|| panic!("unsupported $ref {reference}"));
        &self.root["$defs"][name]
    }

    fn type_ok(kind: &str, v: &Value) -> bool {
        match kind {
            "null" => v.is_null(),
            "boolean" => v.is_boolean(),
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "array" => v.is_array(),
            "object" => v.is_object(),
            other => panic!("unsupported type {other}"),
        }
    }

    /// Errors of `v` against `schema`, each prefixed with the JSON path.
    fn validate(&self, schema: &Value, v: &Value, path: &str) -> Vec<String> {
        let mut errors = Vec::new();
        let Some(schema) = schema.as_object() else {
            match schema {
                Value::Bool(true) => return errors,
                Value::Bool(false) => return vec![format!("{path}: not allowed")],
                other => panic!("unsupported schema {other}"),
            }
        };
        for (keyword, rule) in schema {
            match keyword.as_str() {
                "$schema" | "title" | "description" | "$defs" => {}
                "$ref" => {
                    errors.extend(self.validate(self.resolve(rule.as_str().unwrap()), v, path))
                }
                "type" => {
                    let kinds: Vec<&str> = match rule {
                        Value::String(s) => vec![s.as_str()],
                        Value::Array(a) => a.iter().map(|k| k.as_str().unwrap()).collect(),
                        _ => panic!("bad type {rule}"),
                    };
                    if !kinds.iter().any(|k| Self::type_ok(k, v)) {
                        errors.push(format!("{path}: expected type {kinds:?}, got {v}"));
                    }
                }
                "enum" => {
                    if !rule.as_array().unwrap().contains(v) {
                        errors.push(format!("{path}: {v} is not one of {rule}"));
                    }
                }
                "const" => {
                    if rule != v {
                        errors.push(format!("{path}: expected {rule}, got {v}"));
                    }
                }
                "anyOf" => {
                    let options = rule.as_array().unwrap();
                    if !options.iter().any(|o| self.validate(o, v, path).is_empty()) {
                        errors.push(format!("{path}: {v} matches none of anyOf"));
                    }
                }
                "oneOf" => {
                    let n = rule
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|o| self.validate(o, v, path).is_empty())
                        .count();
                    if n != 1 {
                        errors.push(format!(
                            "{path}: {v} matches {n} of oneOf, expected exactly 1"
                        ));
                    }
                }
                "format" => {
                    let max = match rule.as_str().unwrap() {
                        "uint8" => u64::from(u8::MAX),
                        "uint16" => u64::from(u16::MAX),
                        "uint32" => u64::from(u32::MAX),
                        "uint64" => u64::MAX,
                        other => panic!("unsupported format {other}"),
                    };
                    if let Some(n) = v.as_number() {
                        if n.as_u64().is_none_or(|n| n > max) {
                            errors.push(format!("{path}: {v} is not a {rule}"));
                        }
                    }
                }
                "minimum" | "maximum" => {
                    if let (Some(n), Some(bound)) = (v.as_f64(), rule.as_f64()) {
                        let bad = if keyword == "minimum" {
                            n < bound
                        } else {
                            n > bound
                        };
                        if bad {
                            errors.push(format!("{path}: {v} is outside {keyword} {rule}"));
                        }
                    }
                }
                "properties" | "additionalProperties" | "required" => {
                    if let Some(object) = v.as_object() {
                        errors.extend(self.validate_object(schema, keyword, object, path));
                    }
                }
                "items" | "prefixItems" | "minItems" | "maxItems" => {
                    if let Some(items) = v.as_array() {
                        errors.extend(self.validate_array(keyword, rule, items, path));
                    }
                }
                "pattern" => {
                    if v.is_string() {
                        panic!("{path}: keyword `pattern` is not implemented; avoid this key in the JSON");
                    }
                }
                other => panic!("{path}: unsupported schema keyword {other}"),
            }
        }
        errors
    }

    fn validate_object(
        &self,
        schema: &Map<String, Value>,
        keyword: &str,
        object: &Map<String, Value>,
        path: &str,
    ) -> Vec<String> {
        let mut errors = Vec::new();
        let properties = schema.get("properties").and_then(Value::as_object);
        match keyword {
            "properties" => {
                for (key, value) in object {
                    if let Some(sub) = properties.and_then(|p| p.get(key)) {
                        errors.extend(self.validate(sub, value, &format!("{path}/{key}")));
                    }
                }
            }
            "additionalProperties" => {
                for (key, value) in object {
                    if properties.is_none_or(|p| !p.contains_key(key)) {
                        let extra = &schema["additionalProperties"];
                        errors.extend(
                            self.validate(extra, value, &format!("{path}/{key}"))
                                .into_iter()
                                .map(|e| format!("{e} (unknown key {key:?})")),
                        );
                    }
                }
            }
            _ => {
                for key in schema["required"].as_array().unwrap() {
                    let key = key.as_str().unwrap();
                    if !object.contains_key(key) {
                        errors.push(format!("{path}: missing required key {key:?}"));
                    }
                }
            }
        }
        errors
    }

    fn validate_array(
        &self,
        keyword: &str,
        rule: &Value,
        items: &[Value],
        path: &str,
    ) -> Vec<String> {
        let mut errors = Vec::new();
        match keyword {
            "items" => {
                for (i, item) in items.iter().enumerate() {
                    errors.extend(self.validate(rule, item, &format!("{path}/{i}")));
                }
            }
            "prefixItems" => {
                for (i, (sub, item)) in rule.as_array().unwrap().iter().zip(items).enumerate() {
                    errors.extend(self.validate(sub, item, &format!("{path}/{i}")));
                }
            }
            "minItems" if (items.len() as u64) < rule.as_u64().unwrap() => {
                errors.push(format!("{path}: fewer than {rule} items"));
            }
            "maxItems" if (items.len() as u64) > rule.as_u64().unwrap() => {
                errors.push(format!("{path}: more than {rule} items"));
            }
            _ => {}
        }
        errors
    }
}

fn e2k_json() -> Value {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../targets/e2k-unknown-linux-gnu.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn e2k_target_json_matches_the_pinned_rustc_schema() {
    let Some(schema) = schema_from_rustc() else {
        return;
    };
    let validator = Validator { root: &schema };
    let spec = e2k_json();
    let errors = validator.validate(&schema, &spec, "");
    assert!(
        errors.is_empty(),
        "targets/e2k-unknown-linux-gnu.json: {errors:#?}"
    );
    // the facts the descriptor and the ELF check rely on
    assert_eq!(spec["target-endian"], "little");
    assert_eq!(spec["target-pointer-width"], 64);
    assert_eq!(spec["os"], "linux");
    assert_eq!(spec["env"], "gnu");
    assert_eq!(spec["linker"], "lcc");
    assert!(spec["data-layout"]
        .as_str()
        .unwrap()
        .starts_with("e-m:e-p:64:64"));
}

#[test]
fn the_validator_rejects_what_the_schema_forbids() {
    let Some(schema) = schema_from_rustc() else {
        return;
    };
    let validator = Validator { root: &schema };
    let mut bad = e2k_json();
    let object = bad.as_object_mut().unwrap();
    object.insert("target-endian".into(), "middle".into());
    object.insert("target-pointer-width".into(), "64".into());
    object.insert("no-such-option".into(), true.into());
    object.remove("data-layout");
    let errors = validator.validate(&schema, &bad, "");
    let text = errors.join("\n");
    assert!(text.contains("/target-endian"), "{text}");
    assert!(
        text.contains("/target-pointer-width: expected type"),
        "{text}"
    );
    assert!(text.contains("unknown key \"no-such-option\""), "{text}");
    assert!(
        text.contains("missing required key \"data-layout\""),
        "{text}"
    );
    assert_eq!(errors.len(), 4, "{text}");
}
