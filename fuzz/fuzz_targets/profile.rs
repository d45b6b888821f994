//! Profiles (`profiles/*.toml`): parsing and every family's parameter checks never panic, and a
//! refused profile is a bounded error.
#![no_main]

use hwsurvey_workloads::families::{check_profile, ids};
use hwsurvey_engine::profile::Profile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let families = ids();
    match Profile::parse("fuzz.toml", text, &families) {
        Ok(p) => {
            if let Err(e) = check_profile(&p) {
                let _ = e.to_string();
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
