//! Kind 3 of the mutation campaign: ELF files with header and program-header fields at edge
//! values, cut or flipped, through the ELF reader, the target checks and `binary.arch`.

use super::*;
use crate::captures::load_capture;

struct Binary {
    name: String,
    bytes: Vec<u8>,
    /// Only the header is there (a prefix of a large binary): `inspect` is not asked.
    header_only: bool,
}

fn binaries() -> Vec<Arc<Binary>> {
    let mut out = Vec::new();
    for p in [
        "/usr/bin/true",
        "/usr/aarch64-linux-gnu/lib/libc.so.6",
        "/usr/sparc64-linux-gnu/lib/libc.so.6",
    ] {
        match std::fs::read(p) {
            Ok(bytes) => out.push(Arc::new(Binary {
                name: p.into(),
                bytes,
                header_only: false,
            })),
            Err(e) => println!("SKIPPED: {p}: {e} (a cross C library missing: fewer ELF sources)"),
        }
    }
    let exe = env!("CARGO_BIN_EXE_hwsurvey");
    let mut head = std::fs::read(exe).unwrap_or_else(|e| panic!("{exe}: {e}"));
    head.truncate(64 << 10);
    out.push(Arc::new(Binary {
        name: format!("{exe} (first 64 KiB)"),
        bytes: head,
        header_only: true,
    }));
    out
}

/// Writes `value` as a `width`-byte field at `at`, in the file's byte order.
fn put(bytes: &mut [u8], at: usize, width: usize, value: u64) {
    let big = bytes.get(5) == Some(&2);
    for i in 0..width {
        let shift = if big { 8 * (width - 1 - i) } else { 8 * i };
        if let Some(b) = bytes.get_mut(at + i) {
            *b = (value >> shift) as u8;
        }
    }
}

fn get(bytes: &[u8], at: usize, width: usize) -> u64 {
    let big = bytes.get(5) == Some(&2);
    (0..width).fold(0, |acc, i| {
        let b = *bytes.get(at + i).unwrap_or(&0) as u64;
        if big {
            (acc << 8) | b
        } else {
            acc | (b << (8 * i))
        }
    })
}

/// ELF header fields: (name, offset in ELF32, width in ELF32, offset in ELF64, width in ELF64).
const FIELDS: &[(&str, usize, usize, usize, usize)] = &[
    ("EI_CLASS", 4, 1, 4, 1),
    ("EI_DATA", 5, 1, 5, 1),
    ("EI_VERSION", 6, 1, 6, 1),
    ("EI_OSABI", 7, 1, 7, 1),
    ("e_type", 16, 2, 16, 2),
    ("e_machine", 18, 2, 18, 2),
    ("e_version", 20, 4, 20, 4),
    ("e_entry", 24, 4, 24, 8),
    ("e_phoff", 28, 4, 32, 8),
    ("e_shoff", 32, 4, 40, 8),
    ("e_flags", 36, 4, 48, 4),
    ("e_ehsize", 40, 2, 52, 2),
    ("e_phentsize", 42, 2, 54, 2),
    ("e_phnum", 44, 2, 56, 2),
    ("e_shentsize", 46, 2, 58, 2),
    ("e_shnum", 48, 2, 60, 2),
    ("e_shstrndx", 50, 2, 62, 2),
];

/// Program-header fields of ELF64 (offset within the entry, width).
const PH64: &[(&str, usize, usize)] = &[
    ("p_type", 0, 4),
    ("p_offset", 8, 8),
    ("p_filesz", 32, 8),
    ("p_memsz", 40, 8),
    ("p_align", 48, 8),
];

fn edge_value(rng: &mut Rng, width: usize) -> u64 {
    let max = if width >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * width)) - 1
    };
    match rng.below(9) {
        0 => 0,
        1 => max,
        2 => max / 2,
        3 => max / 2 + 1,
        4 => 1,
        5 => rng.next() & max,
        6 => *rng.pick(&[2u64, 3, 43, 62, 183, 175, 0x9026, 0xffff]) & max,
        7 => 0x7fff_ffff & max,
        _ => 64,
    }
}

fn mutate_elf(rng: &mut Rng, bytes: &mut Vec<u8>) -> String {
    let elf64 = bytes.get(4) == Some(&2);
    match rng.below(10) {
        0..=4 => {
            let (name, o32, w32, o64, w64) = *rng.pick(FIELDS);
            let (at, w) = if elf64 { (o64, w64) } else { (o32, w32) };
            let v = edge_value(rng, w);
            put(bytes, at, w, v);
            format!("{name} = {v:#x}")
        }
        5 if elf64 => {
            let phoff = get(bytes, 32, 8) as usize;
            let phnum = get(bytes, 56, 2) as usize;
            if phnum == 0 || phoff >= bytes.len() {
                return "no program header to change".into();
            }
            let i = rng.below(phnum);
            let (name, off, w) = *rng.pick(PH64);
            let v = edge_value(rng, w);
            put(bytes, phoff + 56 * i + off, w, v);
            format!("program header {i} {name} = {v:#x}")
        }
        6 => {
            let at = rng.below(bytes.len().max(1));
            bytes.truncate(at);
            format!("cut at byte {at}")
        }
        _ => {
            let n = 1 + rng.below(8);
            let span = bytes.len().clamp(1, 4096);
            for _ in 0..n {
                let at = rng.below(span);
                if let Some(b) = bytes.get_mut(at) {
                    *b ^= 1 << rng.below(8);
                }
            }
            format!("{n} bits flipped in the first {span} bytes")
        }
    }
}

#[test]
fn mutated_elf_files() {
    let start = Instant::now();
    let sources = binaries();
    // the facts of a real machine to qualify the binaries on (the firecracker x86_64 guest),
    // else this machine
    let machine = match hwsurvey_testkit::fixtures()
        .and_then(|f| load_capture(&f, "x86_64-firecracker-guest-epyc-2vcpu-thp-mthp"))
    {
        Some(c) => probe_machine(&SysRoot::new(&c.root)),
        None => probe_machine(&SysRoot::live()),
    };
    let machine = Arc::new(machine);
    let targets = Arc::new(
        hwsurvey_elf::TargetDescriptor::load_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../targets"),
        )
        .expect("targets/*.toml"),
    );
    let seed = seed();
    let cases = cases(50);
    let mut failures = Vec::new();
    let mut parsed = 0;
    for &index in &cases {
        let mut rng = Rng::for_case(seed, "elf", index);
        let src = sources[rng.below(sources.len())].clone();
        let mut bytes = src.bytes.clone();
        let mut what = vec![format!("from {}", src.name)];
        for _ in 0..1 + rng.below(3) {
            what.push(mutate_elf(&mut rng, &mut bytes));
        }
        let what = what.join("; ");
        let bytes = Arc::new(bytes);
        let work = {
            let (bytes, machine, targets) = (bytes.clone(), machine.clone(), targets.clone());
            let header_only = src.header_only;
            move || check_elf(&bytes, header_only, &machine, &targets)
        };
        match bounded(work) {
            Ok(_) => {
                if hwsurvey_elf::parse_header(&bytes).is_ok() {
                    parsed += 1;
                }
            }
            Err(findings) => failures.push(fail("elf", index, &what, &findings, |d| {
                std::fs::write(d.join("binary.elf"), &*bytes).unwrap();
            })),
        }
    }
    println!(
        "ELF files: {} mutated inputs (seed {seed:#x}), {parsed} headers still read, in {:.1} s",
        cases.len(),
        start.elapsed().as_secs_f64()
    );
    report("elf", cases.len(), &failures);
}

fn check_elf(
    bytes: &[u8],
    header_only: bool,
    machine: &Machine,
    targets: &[hwsurvey_elf::TargetDescriptor],
) -> Result<(), String> {
    let mut out = Vec::new();
    match hwsurvey_elf::parse_header(bytes) {
        Err(e) => check_error_line("parse_header", &e.to_string(), &mut out),
        Ok(h) => {
            // what the header says is what the bytes hold
            if h.machine.0 as u64 != get(bytes, 18, 2) {
                out.push(format!(
                    "parse_header: e_machine {} but the bytes hold {}",
                    h.machine.0,
                    get(bytes, 18, 2)
                ));
            }
            if h.class_bits() != if bytes[4] == 2 { 64 } else { 32 } {
                out.push(format!(
                    "parse_header: {}-bit, EI_CLASS {}",
                    h.class_bits(),
                    bytes[4]
                ));
            }
        }
    }
    if header_only {
        return if out.is_empty() {
            Ok(())
        } else {
            Err(out.join("\n"))
        };
    }
    match hwsurvey_qualify::binary::parse_elf_header("a.out", bytes) {
        Err(e) => check_error_line("qualify ELF reader", &e.to_string(), &mut out),
        Ok(b) => {
            if let Ok(info) = hwsurvey_elf::inspect(bytes) {
                for s in info.needed.iter().chain(info.interpreter.iter()) {
                    if s.len() > 4096 {
                        out.push(format!("inspect: a string of {} bytes", s.len()));
                    }
                }
                for t in targets {
                    for m in hwsurvey_elf::check(&info, t) {
                        check_error_line("target check", &m.to_string(), &mut out);
                    }
                }
            }
            let mut facts = from_machine(machine);
            facts.binary = Probed::Known(b.clone());
            facts.target =
                hwsurvey_qualify::machine::target_facts(&facts.binary, &facts.os.kernel_machine);
            let report = qualify("a.out", &facts, &RuleSet::builtin());
            for (name, text) in qualify_texts(&report) {
                if text.len() > MIB {
                    out.push(format!("{name}: {} bytes", text.len()));
                }
                if name != "qualify json" {
                    let raw = raw_controls(&text);
                    if !raw.is_empty() {
                        out.push(format!("{name}: raw control characters {raw:?}"));
                    }
                }
            }
            // binary.arch passes only for a binary the kernel's machine runs
            let passed = report
                .findings
                .iter()
                .any(|f| f.rule == "binary.arch" && f.verdict == Verdict::Pass);
            let kernel = machine
                .os
                .kernel
                .machine
                .known()
                .cloned()
                .unwrap_or_default();
            let runs = hwsurvey_elf::MachineInfo::for_kernel(&kernel).is_some_and(|k| {
                k.is_native(b.class_bits, b.machine) || k.runs_in_compat(b.class_bits, b.machine)
            });
            if passed && !runs {
                out.push(format!(
                    "binary.arch passes a {}-bit e_machine {} binary on a {kernel} kernel",
                    b.class_bits, b.machine
                ));
            }
        }
    }
    if out.is_empty() {
        Ok(())
    } else {
        Err(out.join("\n"))
    }
}
