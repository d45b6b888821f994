//! The kernel's CPU list and mask grammars (`0-3,8`, `0-7:2/4`, `ff,00000001`): no panic, a
//! bounded error, and a parsed set that prints as a list reading back to the same set.
#![no_main]

use hwsurvey_model::{CpuSet, NodeSet};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match CpuSet::parse_list(text) {
        Ok(set) => {
            let again = CpuSet::parse_list(&set.to_list_string()).expect("a printed list parses");
            assert_eq!(again, set, "round trip of {text:?}");
        }
        Err(e) => assert!(
            e.to_string().len() < 400,
            "unbounded error for {} bytes",
            text.len()
        ),
    }
    if let Ok(set) = CpuSet::parse_mask(text) {
        let again = CpuSet::parse_list(&set.to_list_string()).expect("a printed list parses");
        assert_eq!(again, set);
    }
    let _ = NodeSet::parse_list(text);
});
