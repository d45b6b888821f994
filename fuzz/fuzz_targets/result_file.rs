//! Result files: `hwsurvey_result::parse` (what `load` runs after reading) never panics, and
//! its error is one line of bounded length.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = hwsurvey_result::parse("fuzz.json", data) {
        let text = e.to_string();
        assert!(!text.contains('\n'), "an error of several lines: {text}");
        assert!(text.len() < 2000, "an error of {} bytes", text.len());
    }
});
