//! SMBIOS/DMI: the raw table (`/sys/firmware/dmi/tables/DMI`) with any entry point version,
//! the entry point itself, and saved `dmidecode` text never make the decoders panic.
#![no_main]

use hwsurvey_probe::memory::dmidecode::parse_dmidecode_text;
use hwsurvey_probe::memory::smbios::{parse_entry_point, parse_structures};
use hwsurvey_probe::memory::SmbiosSource;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (version, table) = match data.split_first() {
        Some((&v, rest)) => (Some((2 + (v >> 6), v & 0x3f)), rest),
        None => (None, data),
    };
    let _ = parse_structures(table, version, SmbiosSource::DmiTable);
    let _ = parse_structures(data, None, SmbiosSource::DmiEntries);
    let _ = parse_entry_point(data);
    let _ = parse_dmidecode_text(&String::from_utf8_lossy(data));
});
