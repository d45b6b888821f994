//! The inputs of a comparison: loaded result files with their column labels, the labels a
//! user did not give (host, CPU model, kernel: as short as still tells them apart), and why
//! results cannot be compared.

use hwsurvey_model::text::{one_line, quote, shorten};
use hwsurvey_result::ResultFile;
use serde_json::Value;

/// One result file with its column label.
#[derive(Debug, Clone)]
pub struct Input {
    /// Column label.
    pub label: String,
    /// The loaded file.
    pub file: ResultFile,
}

/// Why results cannot be compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    /// No inputs.
    #[error("no result files to compare")]
    Empty,
    /// Different profiles or profile versions, without --force.
    #[error("results come from different profile versions or settings ({0}); compare them anyway with --mixed-profiles, and every table is flagged")]
    ProfileMismatch(String),
    /// --baseline names no column.
    #[error("--baseline {} is not one of the column labels ({})", quote(.0), shorten(.1, 1000))]
    NoSuchBaseline(String, String),
    /// Two columns with one label.
    #[error("two results have the label {}; give distinct labels with --label", quote(.0))]
    DuplicateLabel(String),
}

/// Longest hostname, CPU model or kernel release in a default label, characters.
const MAX_LABEL_PART_CHARS: usize = 48;

/// The default labels of a result file, shortest first: its hostname, then hostname and arch,
/// then hostname, arch and kernel release (a hostname the file does not know: its CPU model,
/// else `unknown-host`, with the arch). Each part is shown on one line with control
/// characters escaped and at most 48 characters ([`hwsurvey_model::text::one_line`]).
/// [`distinct_labels`] takes the first that no other column shares.
pub fn label_candidates(f: &ResultFile) -> Vec<String> {
    let part = |s: &str| one_line(s, MAX_LABEL_PART_CHARS).into_owned();
    let arch = part(&f.environment.arch);
    let mut out = Vec::new();
    match f.environment.hostname.known() {
        Some(host) => {
            let host = part(host);
            out.push(host.clone());
            out.push(format!("{host} {arch}"));
        }
        None => {
            let model = f
                .machine
                .cpu
                .identity
                .model_name
                .as_deref()
                .unwrap_or("unknown-host");
            out.push(format!("{} {arch}", part(model)));
        }
    }
    if let Some(kernel) = f.environment.kernel_release.known() {
        let longest = out.last().cloned().unwrap_or_default();
        out.push(format!("{longest} {}", part(kernel)));
    }
    out
}

/// The default column label of one result file: the first of [`label_candidates`] (its
/// hostname). Several files: [`distinct_labels`].
pub fn default_label(f: &ResultFile) -> String {
    label_candidates(f).swap_remove(0)
}

/// Column labels without duplicates. Each file starts at its first candidate
/// (`candidates[k]`, from [`label_candidates`]: hostname, + arch, + kernel); files sharing a
/// label take their next candidate until none is shared or none is left. Labels still shared
/// then get `" (<names[k].0>)"` with the file name stem, then `" (<names[k].1>)"` with the path
/// as given, then `" (column N)"`. `names[k]` = (file name stem, path) of file k. Returns the
/// labels and, when a file name or column number was needed, a note saying which columns
/// share hostname, arch and kernel and how they are told apart.
pub fn distinct_labels(
    candidates: &[Vec<String>],
    names: &[(String, String)],
) -> (Vec<String>, Option<String>) {
    let shared =
        |labels: &[String], k: usize| labels.iter().filter(|l| **l == labels[k]).count() > 1;
    let mut level = vec![0usize; candidates.len()];
    let mut labels: Vec<String> = candidates
        .iter()
        .map(|c| c.first().cloned().unwrap_or_default())
        .collect();
    loop {
        let dup: Vec<usize> = (0..labels.len()).filter(|&k| shared(&labels, k)).collect();
        let mut advanced = false;
        for &k in &dup {
            if let Some(next) = candidates[k].get(level[k] + 1) {
                level[k] += 1;
                labels[k] = next.clone();
                advanced = true;
            }
        }
        if !advanced {
            break;
        }
    }
    let longest = labels.clone();
    let mut changed: Vec<usize> = Vec::new();
    let steps: [&dyn Fn(usize) -> String; 3] = [
        &|k| {
            let stem = names.get(k).map(|n| n.0.as_str()).unwrap_or("");
            format!("{} ({stem})", longest[k])
        },
        &|k| {
            let path = names.get(k).map(|n| n.1.as_str()).unwrap_or("");
            format!("{} ({path})", longest[k])
        },
        &|k| format!("{} (column {})", longest[k], k + 1),
    ];
    for step in steps {
        let dup: Vec<usize> = (0..labels.len()).filter(|&k| shared(&labels, k)).collect();
        if dup.is_empty() {
            break;
        }
        for &k in &dup {
            labels[k] = step(k);
            if !changed.contains(&k) {
                changed.push(k);
            }
        }
    }
    if changed.is_empty() {
        return (labels, None);
    }
    changed.sort_unstable();
    let cols: Vec<String> = changed
        .iter()
        .map(|&k| format!("\"{}\"", labels[k]))
        .collect();
    let note = format!(
        "columns {} have the same hostname, arch and kernel: told apart by file name; name them with --label",
        cols.join(", ")
    );
    (labels, Some(note))
}

/// [`Input`]s of `files` with their default labels ([`distinct_labels`]; files that share
/// hostname, arch and kernel are told apart by column number).
pub fn inputs_with_default_labels(files: Vec<ResultFile>) -> Vec<Input> {
    let candidates: Vec<Vec<String>> = files.iter().map(label_candidates).collect();
    let (labels, _) = distinct_labels(&candidates, &[]);
    labels
        .into_iter()
        .zip(files)
        .map(|(label, file)| Input { label, file })
        .collect()
}

/// What hwsurvey's own output `text` is, when it is one and not a result file: the JSON of
/// `compare --format json` (`platforms`, `baseline`, `tables`), of `qualify --json`
/// (`subject`, `findings`) or of `probe --json` (`cpu`, `numa`, `memory`, `os`), recognised
/// by its keys, not its file name. `None` for a result file (it has `tests`) and for
/// anything else, which stays an error of the loader.
pub fn own_report_kind(text: &str) -> Option<&'static str> {
    let v: Value = serde_json::from_str(text).ok()?;
    let o = v.as_object()?;
    let has = |keys: &[&str]| keys.iter().all(|k| o.contains_key(*k));
    if o.contains_key("tests") {
        return None;
    }
    if has(&["platforms", "baseline", "tables"]) {
        Some("comparison (compare --format json)")
    } else if has(&["subject", "findings"]) {
        Some("qualification report (qualify --json)")
    } else if has(&["cpu", "numa", "memory", "os"]) {
        Some("machine document (probe --json)")
    } else {
        None
    }
}
