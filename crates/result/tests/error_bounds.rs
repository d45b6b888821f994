//! A type error in a result file quotes the bad value bounded and escaped (the mutation
//! campaign found a 1 MiB `outcome` with ESC, BEL and NUL quoted whole: a 1 MB error of
//! several lines with raw control characters).

#[test]
fn an_unknown_variant_of_a_megabyte_is_one_short_escaped_line() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../reports/examples/v1/x86_64-standard.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let hostile = "evil\u{1b}[2J\u{7}\0\n".repeat(1 << 17);
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
}
