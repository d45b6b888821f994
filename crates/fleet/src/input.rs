//! The inputs of a fleet: result files and failure markers found under the paths given
//! ([`collect`]), loaded in parallel ([`load_all`]); a file that cannot be read is its host's
//! failure with the loader's one-line error, never a reason to drop the other hosts.

use std::path::{Path, PathBuf};

use hwsurvey_result::ResultFile;

/// One result file to read, and the host its folder names.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// The file.
    pub path: PathBuf,
    /// `<host>` of `DIR/.../<host>/<file>.json` (the layout `reports/fleet/<run-id>/<host>/`),
    /// when the file sits in a sub-folder of the directory given; `None` for files given by
    /// name or directly in the directory.
    pub folder_host: Option<String>,
}

/// A command-line input that cannot be used at all (missing path, unreadable directory, a
/// directory without any `.json`): an input error, unlike a bad result file.
#[derive(Debug, Clone, PartialEq)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

/// Name of a host's failure marker: a text file that the fleet playbook (fleet/) writes into
/// `<run-id>/<host>/` when the host failed before or during its run (unreachable, no binary
/// for its architecture, the run refused or killed, disk full), holding the reason in one or a
/// few lines. [`load_all`] makes it a failed entry of that host with the reason.
pub const FAILURE_MARKER: &str = "hwsurvey-failed.txt";

/// Whether `path` is a failure marker ([`FAILURE_MARKER`]).
pub fn is_failure_marker(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == FAILURE_MARKER)
}

/// Whether a directory walk of [`collect`] reads a file of this path as an input: a `*.json`
/// or a [`FAILURE_MARKER`]. An output under such a name inside a folder the fleet scans is
/// refused ([`hwsurvey_model::files::check_output_reading`]): the next fleet would read it as a
/// host's result.
pub fn is_input_name(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "json") || is_failure_marker(path)
}

/// What [`collect`] found: the files to read, and what it skipped, one line each
/// (`skipped DIR/x: symlink`), for the report.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Collected {
    /// The result files and failure markers to read, in order.
    pub sources: Vec<Source>,
    /// What was skipped and why.
    pub skipped: Vec<String>,
}

/// Whether the JSON file `path` is a fleet's own report (`hwsurvey fleet --json`), not a
/// result file: it begins with `{"files": N, "groups":` (the report's first two fields; a
/// result file begins with `"schema"`), white space aside. Only its first 256 bytes are read.
pub fn is_fleet_report(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    if f.take(256).read_to_end(&mut head).is_err() {
        return false;
    }
    let compact: String = String::from_utf8_lossy(&head)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    compact
        .strip_prefix("{\"files\":")
        .map(|rest| rest.trim_start_matches(|c: char| c.is_ascii_digit()))
        .is_some_and(|rest| rest.starts_with(",\"groups\":"))
}

/// The result files of `inputs`: a file named on the command line is taken as given (a
/// symlink too: the user named it); a directory is walked recursively for `*.json` files and
/// [`FAILURE_MARKER`] files (sorted by path). One rule inside a directory: a symlink, to a
/// folder or to a file, is never followed, and is listed as skipped (`skipped DIR/x:
/// symlink`); so is a fleet's own report ([`is_fleet_report`]) and any file that is one of
/// `outputs` (the report being written), so a fleet never reads its own output as a host,
/// and a `*.json` or marker that is no regular file (a FIFO would block the read).
///
/// Err: a path that does not exist, a directory that cannot be read, or no file at all.
pub fn collect(inputs: &[PathBuf], outputs: &[PathBuf]) -> Result<Collected, InputError> {
    let mut out = Collected::default();
    for input in inputs {
        let meta = std::fs::metadata(input)
            .map_err(|e| InputError(format!("{}: {e}", input.display())))?;
        if meta.is_dir() {
            let mut files = Vec::new();
            walk(input, &mut files, &mut out.skipped)?;
            files.sort();
            let mut found = 0;
            for path in files {
                if outputs
                    .iter()
                    .any(|o| hwsurvey_model::files::output::same_file(o, &path).is_some())
                {
                    out.skipped.push(format!(
                        "skipped {}: the report this fleet writes",
                        path.display()
                    ));
                    continue;
                }
                if !is_failure_marker(&path) && is_fleet_report(&path) {
                    out.skipped.push(format!(
                        "skipped {}: a fleet report, not a result file",
                        path.display()
                    ));
                    continue;
                }
                let folder_host = path
                    .parent()
                    .filter(|p| *p != input.as_path())
                    .and_then(|p| p.file_name())
                    .map(|n| n.to_string_lossy().into_owned());
                out.sources.push(Source { path, folder_host });
                found += 1;
            }
            if found == 0 {
                return Err(InputError(format!(
                    "{}: no .json result file (nor {FAILURE_MARKER}) in this directory or below{}",
                    input.display(),
                    if out.skipped.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", out.skipped.join("; "))
                    }
                )));
            }
        } else {
            out.sources.push(Source {
                path: input.clone(),
                folder_host: None,
            });
        }
    }
    if out.sources.is_empty() {
        return Err(InputError("no result file given".into()));
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, skipped: &mut Vec<String>) -> Result<(), InputError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| InputError(format!("{}: {e}", dir.display())))?;
    let mut entries: Vec<_> = entries
        .collect::<Result<_, _>>()
        .map_err(|e| InputError(format!("{}: {e}", dir.display())))?;
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| InputError(format!("{}: {e}", path.display())))?;
        let wanted = is_input_name(&path);
        if kind.is_symlink() {
            skipped.push(format!("skipped {}: symlink", path.display()));
        } else if kind.is_dir() {
            walk(&path, out, skipped)?;
        } else if wanted && !kind.is_file() {
            // a FIFO or a device under a result's name would block the read, or never end
            skipped.push(format!("skipped {}: not a regular file", path.display()));
        } else if wanted {
            out.push(path);
        }
    }
    Ok(())
}

/// A source and what loading it gave: the file, or the loader's one-line error.
pub type Loaded = (Source, Result<ResultFile, String>);

/// Bytes of result files loaded at once by [`load_all`], at most: 64 MiB, the size of the
/// largest result file the loader reads ([`hwsurvey_result::MAX_RESULT_BYTES`]). Loading
/// takes up to about 17 times a file's size in memory (66 MB of one-key objects: 1.1 GB;
/// the 1 MB example runs: about 20 MB), so however many CPUs load, the files loading at
/// once hold about 1.1 GB at most; a file larger than the budget loads alone.
pub const LOADING_BUDGET_BYTES: u64 = hwsurvey_result::MAX_RESULT_BYTES;

/// A loaded file larger than this (8 MiB) has the memory its loading freed given back to the
/// system at once ([`hwsurvey_model::memory::give_back_freed`]).
const GIVE_BACK_BYTES: u64 = 8 << 20;

/// Loads every source ([`hwsurvey_result::load`]: size, JSON, schema and values checked),
/// on up to `available_parallelism` threads, as many files at once as fit in
/// [`LOADING_BUDGET_BYTES`] by their size; the order of `sources` is kept. A failure marker
/// ([`FAILURE_MARKER`]) loads as `Err("<path>: host failed: <its text on one line>")`.
pub fn load_all(sources: Vec<Source>) -> Vec<Loaded> {
    let results = load_each_with(&sources, |_, loaded| loaded);
    sources.into_iter().zip(results).collect()
}

/// Loads every source as [`load_all`] does and gives `then` each source with what loading
/// it gave, on the loading thread (so a file can be reduced to what is kept of it before the
/// next one loads); the results of `then` in the order of `sources`.
pub(crate) fn load_each_with<T: Send>(
    sources: &[Source],
    then: impl Fn(&Source, Result<ResultFile, String>) -> T + Sync,
) -> Vec<T> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let results = load_each(sources, LOADING_BUDGET_BYTES, threads, |src| {
        let loaded = if is_failure_marker(&src.path) {
            Err(marker_reason(&src.path))
        } else {
            hwsurvey_result::load(&src.path).map_err(|e| e.to_string())
        };
        let kept = then(src, loaded);
        // what a large file took goes back to the system, not to this thread's arena
        if std::fs::metadata(&src.path).is_ok_and(|m| m.len() > GIVE_BACK_BYTES) {
            hwsurvey_model::memory::give_back_freed();
        }
        Ok(kept)
    });
    results
        .into_iter()
        .zip(sources)
        .map(|(r, src)| match r {
            Ok(t) => t,
            // the load or `then` panicked: what loading gave, as an error
            Err(e) => then(src, Err(e)),
        })
        .collect()
}

/// `load` of every source, in order, on up to `threads` threads, as many at once as fit in
/// `budget` bytes by their size on disk (a file larger than the budget alone); a load that
/// panics gives `Err`.
fn load_each<T: Send>(
    sources: &[Source],
    budget: u64,
    threads: usize,
    load: impl Fn(&Source) -> Result<T, String> + Sync,
) -> Vec<Result<T, String>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Condvar, Mutex};
    let next = AtomicUsize::new(0);
    // bytes of the files being loaded, and the wait for some to finish
    let loading = Mutex::new(0u64);
    let finished = Condvar::new();
    let results: Mutex<Vec<Option<Result<T, String>>>> =
        Mutex::new((0..sources.len()).map(|_| None).collect());
    let load_one = |src: &Source| {
        let size = std::fs::metadata(&src.path)
            .map(|m| m.len())
            .unwrap_or(0)
            .min(budget);
        {
            let mut held = loading.lock().unwrap_or_else(|e| e.into_inner());
            while *held > 0 && *held + size > budget {
                held = finished.wait(held).unwrap_or_else(|e| e.into_inner());
            }
            *held += size;
        }
        // given back however the load ends (a panic included)
        struct Release<'a>(&'a Mutex<u64>, &'a Condvar, u64);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                *self.0.lock().unwrap_or_else(|e| e.into_inner()) -= self.2;
                self.1.notify_all();
            }
        }
        let _release = Release(&loading, &finished, size);
        load(src)
    };
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, sources.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(src) = sources.get(i) else { break };
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| load_one(src)))
                    .unwrap_or_else(|_| Err(format!("{}: loading panicked", src.path.display())));
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not loaded".into())))
        .collect()
}

/// Bytes of a failure marker read at most: its reason is shown in 500 characters.
const MARKER_BYTES: u64 = 64 << 10;

/// The failure a marker records: `<path>: host failed: <text>` (text on one line, at most 500
/// characters, from its first [`MARKER_BYTES`]; `no reason recorded` when empty), or the error
/// reading it.
fn marker_reason(path: &Path) -> String {
    use std::io::Read;
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(MARKER_BYTES).read_to_end(&mut bytes));
    match read.map(|_| bytes) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let text = if text.is_empty() {
                "no reason recorded".into()
            } else {
                hwsurvey_model::text::one_line(&text, 500).into_owned()
            };
            format!("{}: host failed: {text}", path.display())
        }
        Err(e) => format!(
            "{}: host failed (its failure marker unreadable: {e})",
            path.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// However many threads load, the files loading at once fit in the budget: 8 files of
    /// 30 bytes on 8 threads with a budget of 60 bytes load 2 at a time at most; one larger
    /// than the budget loads alone; the order is kept.
    #[test]
    fn files_load_at_once_only_as_far_as_the_budget_goes() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let mut sources: Vec<Source> = (0..8)
            .map(|i| {
                let path = dir.path().join(format!("{i}.json"));
                std::fs::write(&path, [b' '; 30]).unwrap();
                Source {
                    path,
                    folder_host: None,
                }
            })
            .collect();
        let big = dir.path().join("big.json");
        std::fs::write(&big, [b' '; 100]).unwrap();
        sources.push(Source {
            path: big,
            folder_host: None,
        });
        let now = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let big_alone = AtomicUsize::new(1);
        let got = load_each(&sources, 60, 8, |src| {
            let n = now.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(n, Ordering::SeqCst);
            if src.path.ends_with("big.json") && n != 1 {
                big_alone.store(0, Ordering::SeqCst);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            now.fetch_sub(1, Ordering::SeqCst);
            Ok(src.path.file_name().unwrap().to_string_lossy().into_owned())
        });
        assert!(
            most.load(Ordering::SeqCst) <= 2,
            "{}",
            most.load(Ordering::SeqCst)
        );
        assert_eq!(big_alone.load(Ordering::SeqCst), 1);
        let names: Vec<String> = got.into_iter().map(Result::unwrap).collect();
        assert_eq!(names[0], "0.json");
        assert_eq!(names[8], "big.json");
    }
}
