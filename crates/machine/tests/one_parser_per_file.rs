//! One parser per kernel file: the table in this crate's documentation (`src/lib.rs`, "One
//! parser per kernel file") names each file's parser here and its reader in `hwsurvey_probe`.
//! This test reads the table and the workspace's sources (each file's code before its
//! `#[cfg(test)]` module) and fails when a file gets a second parser: a parser defined twice
//! or outside its module, a reader missing from its module, a `parse_*` function in the
//! probe, a text that only a parser of the file holds (its keys, its separators) in another
//! source file, or a path of the table written out in the probe instead of read by its reader.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The crates folder of the workspace.
fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `(path relative to crates/, code)` of every library source file of the workspace (each
/// crate's `src/`, testkit and `tests.rs` modules left out), cut at its first `#[cfg(test)]`
/// and without comment lines.
fn sources() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for krate in std::fs::read_dir(crates_dir()).unwrap() {
        let src = krate.unwrap().path().join("src");
        if !src.is_dir() || src.starts_with(crates_dir().join("testkit")) {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for f in files.into_iter().filter(|f| !f.ends_with("tests.rs")) {
            let text = std::fs::read_to_string(&f).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            let code: String = code
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .map(|l| format!("{l}\n"))
                .collect();
            let rel = f.strip_prefix(crates_dir()).unwrap().display().to_string();
            out.push((rel, code));
        }
    }
    out
}

/// One row of the table: the kernel file, its parser and its reader (paths as written).
struct Row {
    file: String,
    parser: String,
    reader: String,
}

/// The rows of the table in `src/lib.rs`.
fn table() -> Vec<Row> {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let section = lib
        .split("//! ## One parser per kernel file")
        .nth(1)
        .expect("src/lib.rs has the section \"One parser per kernel file\"");
    section
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("//!"))
        .filter_map(|l| {
            let cells: Vec<&str> = l
                .trim_start_matches("//!")
                .split('|')
                .map(str::trim)
                .collect();
            (cells.len() == 5 && cells[2].starts_with('`')).then(|| Row {
                file: cells[1].to_string(),
                parser: cells[2].trim_matches('`').to_string(),
                reader: cells[3].trim_matches('`').to_string(),
            })
        })
        .collect()
}

/// The files of `sources` that define function `path`'s last segment (`fn NAME(` or
/// `fn NAME<`).
fn definitions(sources: &[(String, String)], path: &str) -> BTreeSet<String> {
    let name = path.rsplit("::").next().unwrap();
    sources
        .iter()
        .filter(|(_, code)| {
            code.contains(&format!("fn {name}(")) || code.contains(&format!("fn {name}<"))
        })
        .map(|(f, _)| f.clone())
        .collect()
}

/// The source file a module path of `krate` names (`os::cgroup::parse_proc_cgroup` ->
/// `machine/src/os/cgroup.rs`; a function defined in an `impl` is looked up by its type's
/// module: `cgroup::Cgroups::cpu_files` -> `probe/src/cgroup.rs`).
fn module_file(krate: &str, path: &str) -> String {
    let modules: Vec<&str> = path
        .split("::")
        .take_while(|s| s.chars().next().is_some_and(|c| c.is_ascii_lowercase()))
        .collect();
    let modules = &modules[..modules.len() - usize::from(!path.contains(char::is_uppercase))];
    format!("{krate}/src/{}.rs", modules.join("/"))
}

#[test]
fn each_kernel_file_has_one_parser_here_and_one_reader_in_the_probe() {
    let sources = sources();
    let rows = table();
    assert!(rows.len() >= 10, "the table holds {} rows", rows.len());
    let mut wrong = Vec::new();
    for r in &rows {
        let want = module_file("machine", &r.parser);
        let found = definitions(&sources, &r.parser);
        if found != BTreeSet::from([want.clone()]) {
            wrong.push(format!(
                "{}: parser {} defined in {found:?}, not only {want}",
                r.file, r.parser
            ));
        }
        let want = module_file("probe", &r.reader);
        if !definitions(&sources, &r.reader).contains(&want) {
            wrong.push(format!(
                "{}: reader {} is not defined in {want}",
                r.file, r.reader
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_probe_holds_no_text_parser() {
    let parsers: Vec<String> = sources()
        .into_iter()
        .filter(|(f, code)| f.starts_with("probe/") && code.contains("fn parse_"))
        .map(|(f, _)| f)
        .collect();
    assert!(
        parsers.is_empty(),
        "parse_* functions in the probe: {parsers:?}"
    );
}

/// Texts that only a parser of one file holds: the keys it looks up, its separators. Each
/// stands in the parser's source file alone (labels and messages quote them inside longer
/// strings, which do not count).
#[test]
fn what_only_a_parser_of_the_file_holds_stands_in_that_parser_alone() {
    let markers: &[(&str, &str)] = &[
        ("machine/src/os/cgroup.rs", "splitn(3, ':')"),
        ("machine/src/os/cgroup.rs", "\"cgroup2\""),
        ("machine/src/process.rs", "\"Cpus_allowed_list\""),
        ("machine/src/process.rs", "\"VmSize\""),
        ("machine/src/process.rs", "\"Uid\""),
        ("machine/src/memory/meminfo.rs", "\"MemAvailable\""),
        ("machine/src/pages.rs", "\"HugePages_Total\""),
        ("machine/src/pages.rs", "\"Hugepagesize\""),
        ("machine/src/smaps.rs", "\"KernelPageSize\""),
        ("machine/src/mounts.rs", "*f == \"-\""),
        ("machine/src/dmi.rs", "\"not specified\""),
        ("machine/src/dmidecode.rs", "\"DMI type \""),
        ("probe/src/cgroup.rs", "/cpu.max\""),
        ("probe/src/cgroup.rs", "/memory.max\""),
    ];
    let sources = sources();
    let mut wrong = Vec::new();
    for (home, marker) in markers {
        let files: Vec<&String> = sources
            .iter()
            .filter(|(_, code)| code.contains(marker))
            .map(|(f, _)| f)
            .collect();
        if files != [home] {
            wrong.push(format!("{marker} stands in {files:?}, not only in {home}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The probe reads each kernel file of the table through its one reader, which names the path
/// by this crate's constant: no path of the table is written out in the probe's sources.
#[test]
fn the_probe_writes_no_path_of_the_table_out() {
    let sources = sources();
    let mut wrong = Vec::new();
    for r in table() {
        for path in r.file.split('`').filter(|p| p.starts_with("/proc/")) {
            let quoted = format!("\"{path}\"");
            for (f, code) in &sources {
                if f.starts_with("probe/") && code.contains(&quoted) {
                    wrong.push(format!("{f} writes {quoted}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
