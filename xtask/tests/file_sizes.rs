//! No Rust source file of the workspace is over 800 lines (the project's rule: a file past it
//! is split into modules by what it holds). Walks the workspace from its root, not following
//! links, leaving out build output (`target/`) and hidden folders.

use std::path::{Path, PathBuf};

/// The most lines a Rust source file may have.
const MAX_LINES: usize = 800;

/// Every `.rs` file under `dir`, not following symbolic links, without `target/` and hidden
/// folders.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            if name != "target" && !name.starts_with('.') {
                rust_files(&e.path(), out);
            }
        } else if kind.is_file() && name.ends_with(".rs") {
            out.push(e.path());
        }
    }
}

#[test]
fn no_rust_source_file_is_over_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    // the walk sees the workspace: the binary's main and this file among hundreds
    assert!(
        files.len() > 100,
        "{} files found under {}",
        files.len(),
        root.display()
    );
    assert!(files.iter().any(|f| f.ends_with("crates/cli/src/main.rs")));
    assert!(files
        .iter()
        .any(|f| f.ends_with("xtask/tests/file_sizes.rs")));
    let mut over: Vec<(usize, String)> = files
        .iter()
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).ok()?.lines().count();
            let shown = f.strip_prefix(&root).unwrap_or(f).display().to_string();
            (lines > MAX_LINES).then_some((lines, shown))
        })
        .collect();
    over.sort();
    assert!(
        over.is_empty(),
        "Rust files over {MAX_LINES} lines (split them into modules by what they hold):\n{}",
        over.iter()
            .map(|(n, f)| format!("  {f}: {n} lines"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
