//! A type error in a result file quotes the bad value bounded and escaped (the mutation
//! campaign found a 1 MiB `outcome` with ESC, BEL and NUL quoted whole: a 1 MB error of
//! several lines with raw control characters). A string over the 64 KiB a result file's
//! strings may hold is refused before the types are read (its own bounded error); a type
//! error quotes a value of up to that length.

#[test]
fn an_unknown_variant_of_a_megabyte_is_one_short_escaped_line() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../reports/examples/v1/x86_64-standard.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    // 45 KB, under the string bound: the type error is the one to say
    let hostile = "evil\u{1b}[2J\u{7}\0\n".repeat(1 << 12);
    let json = serde_json::to_string(&hostile).unwrap();
    let bad = text.replacen(
        "\"outcome\": \"measured\"",
        &format!("\"outcome\": {json}"),
        1,
    );
    assert_ne!(bad, text);
    let e = hwsurvey_result::parse("r.json", bad.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(e.len() < 600, "{} bytes", e.len());
    assert!(
        !e.contains('\n') && !e.contains('\u{1b}') && !e.contains('\0'),
        "{e}"
    );
    assert!(
        e.contains("tests[0].outcome") && e.contains("unknown variant"),
        "{e}"
    );
    assert!(e.contains("evil\\u{1b}[2J"), "{e}");
    // a megabyte of it: refused by the string bound, as short and escaped
    let bad = text.replacen(
        "\"outcome\": \"measured\"",
        &format!(
            "\"outcome\": {}",
            serde_json::to_string(&"evil\u{1b}[2J\u{7}\0\n".repeat(1 << 17)).unwrap()
        ),
        1,
    );
    let e = hwsurvey_result::parse("r.json", bad.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(e.len() < 600 && !e.contains('\u{1b}'), "{e}");
    assert!(
        e.contains("at tests[0].outcome")
            && e.contains("(1441792 bytes) is longer than the 65536 bytes"),
        "{e}"
    );
}

/// `clocksource_changes` the engine never writes are refused with the field and the value
/// (a new user's edits, 2026-12-04): `tsc-early` to `tsc` (one counter), empty names, a NUL,
/// an empty `seen_after`; a real change loads.
#[test]
fn clocksource_changes_that_are_no_change_or_no_name_are_refused() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../reports/examples/v1/x86_64-standard.json"
    );
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let load = |doc: &serde_json::Value, changes: serde_json::Value| {
        let mut doc = doc.clone();
        doc["clocksource_changes"] = changes;
        hwsurvey_result::parse("r.json", doc.to_string().as_bytes()).map(|f| f.clocksource_changes)
    };
    let change = |from: &str, to: &str, after: &str| serde_json::json!([{ "from": from, "to": to, "seen_after": after }]);
    let ok = load(&doc, change("tsc", "hpet", "cpu.scaling integer/threads=2")).unwrap();
    assert_eq!((ok[0].from.as_str(), ok[0].to.as_str()), ("tsc", "hpet"));
    for (changes, want) in [
        (
            change("tsc-early", "tsc", "x y"),
            "at clocksource_changes[0]: from \"tsc-early\" to \"tsc\" is no change of counter",
        ),
        (
            change("", "hpet", "x y"),
            "at clocksource_changes[0].from: \"\" is not a clocksource name",
        ),
        (
            change("tsc", "hpet\u{0}", "x y"),
            "at clocksource_changes[0].to: \"hpet\\0\" is not a clocksource name",
        ),
        (
            change("tsc", "hpet", " "),
            "at clocksource_changes[0].seen_after: expected the family and id of a point",
        ),
    ] {
        let e = load(&doc, changes).unwrap_err().to_string();
        assert!(
            e.starts_with("r.json: ") && e.contains(want),
            "{e}\nwant {want}"
        );
    }
    doc["clocksource_changes"] = serde_json::json!([]);
    assert!(load(&doc, serde_json::json!([])).unwrap().is_empty());
}

/// A bad key of the file's top-level `"unknown"` map (a version 2 file's reasons of its
/// environment) is said in one bounded line: a 10 MB key was repeated whole, and `fleet`
/// printed it into a 10 MB line of every format.
#[test]
fn a_bad_key_of_the_unknown_map_is_one_short_line() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../reports/examples/vm-x86_64-standard.json"
    );
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let key = format!("/environment/{}", "k\u{1b}".repeat(1 << 18));
    doc["unknown"]
        .as_object_mut()
        .unwrap()
        .insert(key, serde_json::json!({"reason": "missing", "path": "/x"}));
    let e = hwsurvey_result::parse("r.json", &serde_json::to_vec(&doc).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.len() < 600, "{} bytes", e.len());
    assert!(!e.contains('\n') && !e.contains('\u{1b}'), "{e}");
    assert!(e.starts_with("r.json: ") && e.contains("unknown"), "{e}");
}
