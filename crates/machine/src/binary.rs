//! The running binary's ELF identity (class, `e_machine`, byte order) and how it sits on the
//! kernel's machine: native, compat mode, or emulated. Pure: the bytes come from
//! `/proc/self/exe` (read by `hwsurvey_probe::os`) or from a snapshot's live facts
//! (`hwsurvey_probe::live::LiveFacts::binary`); names and compat pairs come from the one ELF machine
//! table, [`hwsurvey_elf::MACHINES`].

use hwsurvey_elf::MachineInfo;
use serde::{Deserialize, Serialize};

/// ELF header facts of the running binary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinaryElf {
    /// 32 or 64.
    pub class_bits: u8,
    /// `e_machine` (62 x86_64, 3 i386, 183 aarch64, 43 SPARCV9, 175 EM_MCST_ELBRUS).
    pub e_machine: u16,
    /// The name of `e_machine` in hwsurvey's one table (`hwsurvey_elf::MACHINES`: `x86_64`,
    /// `SPARCV9`), or `unknown machine N`.
    pub machine_name: String,
    /// `little` or `big`.
    pub endianness: String,
}

/// The running binary against the kernel's machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinaryVsKernel {
    /// The kernel's machine (`x86_64`).
    pub kernel_machine: String,
    /// Word size the kernel machine implies, when known.
    pub kernel_bits: Option<u8>,
    /// The binary's class.
    pub binary_bits: u8,
    /// The binary's `e_machine`.
    pub binary_e_machine: u16,
    /// True when the binary is the kernel's native machine and class.
    pub native: bool,
    /// What is off, in words (`None` when native).
    pub finding: Option<String>,
}

/// Compares a binary with the kernel machine (pure).
pub fn compare_binary(kernel_machine: &str, b: &BinaryElf) -> BinaryVsKernel {
    let native = MachineInfo::for_kernel(kernel_machine);
    let kernel_bits = native.map(|m| m.bits);
    let finding = match native {
        None => Some(format!(
            "kernel machine {kernel_machine:?} is not one hwsurvey knows; cannot compare"
        )),
        Some(m) if m.is_native(b.class_bits, b.e_machine) => None,
        Some(m) if m.runs_in_compat(b.class_bits, b.e_machine) => Some(format!(
            "32-bit {} binary on a 64-bit {kernel_machine} kernel (compat mode)",
            b.machine_name
        )),
        Some(_) => Some(format!(
            "{}-bit {} binary on a {kernel_machine} kernel (emulated, e.g. qemu-user/binfmt)",
            b.class_bits, b.machine_name
        )),
    };
    BinaryVsKernel {
        kernel_machine: kernel_machine.to_string(),
        kernel_bits,
        binary_bits: b.class_bits,
        binary_e_machine: b.e_machine,
        native: finding.is_none(),
        finding,
    }
}

/// Reads the first bytes of an ELF file (at least the 52/64-byte header) with
/// [`hwsurvey_elf::parse_header`], the one ELF header reader.
///
/// # Errors
/// The one-line [`hwsurvey_elf::FormatError`] text when the bytes are not an ELF header.
pub fn parse_elf_header(bytes: &[u8]) -> Result<BinaryElf, String> {
    let h = hwsurvey_elf::parse_header(bytes).map_err(|e| e.to_string())?;
    Ok(BinaryElf {
        class_bits: h.class_bits(),
        e_machine: h.machine.number(),
        machine_name: h
            .machine
            .name()
            .map_or_else(|| h.machine.to_string(), str::to_string),
        endianness: match h.endianness {
            hwsurvey_elf::Endianness::Little => "little",
            hwsurvey_elf::Endianness::Big => "big",
        }
        .to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_findings() {
        let b = |bits, m: u16, name: &str| BinaryElf {
            class_bits: bits,
            e_machine: m,
            machine_name: name.into(),
            endianness: "little".into(),
        };
        assert!(compare_binary("x86_64", &b(64, 62, "X86_64")).native);
        let f = compare_binary("x86_64", &b(32, 3, "386"));
        assert!(!f.native);
        assert!(f
            .finding
            .unwrap()
            .contains("32-bit 386 binary on a 64-bit x86_64 kernel"));
        let f = compare_binary("x86_64", &b(64, 183, "AARCH64"));
        assert!(f.finding.unwrap().contains("emulated"));
        assert!(compare_binary("sparc64", &b(64, 43, "SPARCV9")).native);
        assert_eq!(
            compare_binary("sparc64", &b(64, 43, "SPARCV9")).kernel_bits,
            Some(64)
        );
        // compat pairs come from the one table: SPARC32PLUS on sparc64, arm on aarch64
        let f = compare_binary("sparc64", &b(32, 18, "SPARC32PLUS"));
        assert!(f.finding.unwrap().contains("(compat mode)"));
        let f = compare_binary("aarch64", &b(32, 40, "arm"));
        assert!(f.finding.unwrap().contains("(compat mode)"));
        assert!(compare_binary("vax", &b(32, 75, "VAX"))
            .kernel_bits
            .is_none());
    }

    #[test]
    fn header_of_this_test_binary() {
        let bytes = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let b = parse_elf_header(&bytes[..64]).unwrap();
        assert_eq!(b.class_bits as usize, 8 * std::mem::size_of::<usize>());
        let expected = if cfg!(target_arch = "x86_64") {
            (62, "x86_64")
        } else if cfg!(target_arch = "aarch64") {
            (183, "aarch64")
        } else if cfg!(target_arch = "sparc64") {
            (43, "SPARCV9")
        } else {
            (b.e_machine, b.machine_name.as_str())
        };
        assert_eq!((b.e_machine, b.machine_name.as_str()), expected);
        assert_eq!(
            parse_elf_header(b"hello world").unwrap_err(),
            "not an ELF file: expected magic 7f 45 4c 46, found 68 65 6c 6c"
        );
    }
}
