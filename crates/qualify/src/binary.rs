//! The ELF identity of a binary (class, machine, endianness) from its header, with goblin.

use crate::facts::BinaryFacts;

/// A file that is not an ELF binary we can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: not an ELF file: {reason}")]
pub struct BinaryError {
    /// The file.
    pub path: String,
    /// What was wrong.
    pub reason: String,
}

/// Parses the ELF header at the start of `bytes` (64 bytes suffice). Pure.
pub fn parse_elf_header(path: &str, bytes: &[u8]) -> Result<BinaryFacts, BinaryError> {
    let header = goblin::elf::Elf::parse_header(bytes).map_err(|e| BinaryError {
        path: path.to_string(),
        reason: e.to_string(),
    })?;
    let class_bits = match header.e_ident[goblin::elf::header::EI_CLASS] {
        goblin::elf::header::ELFCLASS32 => 32,
        goblin::elf::header::ELFCLASS64 => 64,
        other => {
            return Err(BinaryError {
                path: path.to_string(),
                reason: format!("ELF class byte {other}, expected 1 or 2"),
            })
        }
    };
    Ok(BinaryFacts {
        path: path.to_string(),
        class_bits,
        machine: header.e_machine,
        little_endian: header.e_ident[goblin::elf::header::EI_DATA]
            == goblin::elf::header::ELFDATA2LSB,
    })
}

/// Reads the header of the ELF file at `path` (the first 64 bytes only).
pub fn read_elf_header(path: &std::path::Path) -> Result<BinaryFacts, BinaryError> {
    use std::io::Read;
    let shown = path.display().to_string();
    let mut buf = Vec::with_capacity(64);
    std::fs::File::open(path)
        .and_then(|f| f.take(64).read_to_end(&mut buf))
        .map_err(|e| BinaryError {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
    parse_elf_header(&shown, &buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(class: u8, data: u8, machine: u16) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = class;
        h[5] = data;
        h[6] = 1;
        let m = if data == 1 {
            machine.to_le_bytes()
        } else {
            machine.to_be_bytes()
        };
        h[16] = if data == 1 { 2 } else { 0 };
        h[17] = if data == 1 { 0 } else { 2 };
        h[18..20].copy_from_slice(&m);
        if data == 1 {
            h[20] = 1
        } else {
            h[23] = 1
        }
        h
    }

    #[test]
    fn classes_and_machines() {
        let b = parse_elf_header("x", &header(1, 1, 3)).unwrap();
        assert_eq!((b.class_bits, b.machine, b.little_endian), (32, 3, true));
        let b = parse_elf_header("x", &header(2, 2, 43)).unwrap();
        assert_eq!((b.class_bits, b.machine, b.little_endian), (64, 43, false));
        let e = parse_elf_header("notes.txt", b"hello world").unwrap_err();
        assert!(e.to_string().starts_with("notes.txt: not an ELF file"));
    }

    #[test]
    fn reads_this_test_binary() {
        let exe = std::env::current_exe().unwrap();
        let b = read_elf_header(&exe).unwrap();
        assert_eq!(b.class_bits as usize, 8 * std::mem::size_of::<usize>());
        assert_eq!(b.little_endian, cfg!(target_endian = "little"));
    }
}
