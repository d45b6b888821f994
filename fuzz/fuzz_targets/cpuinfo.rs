//! /proc/cpuinfo of every architecture (x86, aarch64, sparc64, ppc64, s390x, e2k): the parser
//! and the architecture detection never panic.
#![no_main]

use hwsurvey_probe::cpu::cpuinfo::{
    detect_arch, parse_cpuinfo, parse_e2k_cache_line, parse_cache_size_bytes,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let info = parse_cpuinfo(&text);
    let _ = format!("{info:?}");
    let _ = detect_arch(&text);
    for line in text.lines().take(64) {
        let _ = parse_cache_size_bytes(line);
        let _ = parse_e2k_cache_line(line);
    }
});
