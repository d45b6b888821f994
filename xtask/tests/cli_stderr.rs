//! The CLI writes to stderr only through its escaping writer (`errln!` and `write_stderr` in
//! crates/cli/src/main.rs: control and bidi characters escaped, lines fitted to the terminal):
//! an `eprintln!` or `eprint!` would print a host name or CPU model holding ESC or U+202E raw.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
    {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn the_cli_writes_stderr_only_through_its_escaping_writer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/cli/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 10,
        "{} files under {}",
        files.len(),
        src.display()
    );
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if code.contains("eprintln!") || code.contains("eprint!") {
                found.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "write stderr with errln! (crates/cli/src/main.rs), not:\n{}",
        found.join("\n")
    );
}
