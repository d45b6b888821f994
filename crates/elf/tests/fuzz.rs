//! Property tests: no byte string makes the parser panic, and every error is one line.

use hwsurvey_elf::inspect;
use proptest::prelude::*;

fn one_line_error(bytes: &[u8]) {
    if let Err(e) = inspect(bytes) {
        let text = e.to_string();
        assert!(!text.contains('\n'), "multi-line error: {text}");
        assert!(!text.is_empty());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        one_line_error(&bytes);
    }

    #[test]
    fn random_bytes_after_an_elf_identification_never_panic(
        class in 0u8..4, data in 0u8..4,
        rest in proptest::collection::vec(any::<u8>(), 0..4096),
    ) {
        let mut bytes = vec![0x7f, b'E', b'L', b'F', class, data, 1, 0];
        bytes.extend_from_slice(&rest);
        one_line_error(&bytes);
    }
}

/// This test binary's bytes, read once (it is large, and under qemu-user reading is slow).
fn this_binary() -> &'static [u8] {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES.get_or_init(|| std::fs::read(std::env::current_exe().unwrap()).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A real ELF file (this test binary) cut anywhere is an error, never a panic.
    #[test]
    fn truncated_real_binary_is_an_error(cut in 0.0f64..1.0) {
        let bytes = this_binary();
        let len = (bytes.len() as f64 * cut) as usize;
        prop_assert!(inspect(&bytes[..len]).is_err());
        one_line_error(&bytes[..len]);
    }

    /// A real ELF file with a few header bytes overwritten never panics.
    #[test]
    fn corrupted_real_header_never_panics(edits in proptest::collection::vec((0usize..256, any::<u8>()), 1..8)) {
        let mut bytes = this_binary()[..64 * 1024].to_vec();
        for (at, value) in edits {
            if let Some(b) = bytes.get_mut(at) {
                *b = value;
            }
        }
        one_line_error(&bytes);
    }
}
